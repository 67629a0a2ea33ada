// abft CUDA backend: bit flips in device memory. cuRAND (Philox4x32-10, host API) draws the
// words on the handle's stream, one thread maps them to positions (the mapping shared with
// the CPU backend), flips the bits and records the old and new words; the records are
// copied back to the host. A firing touches at most 64 elements, so one thread is enough:
// the cost is the launch and the copy, not the work.
#include <cuda_runtime.h>
#include <curand.h>

#include <cstring>
#include <new>

#include "abft_inject_kernels.h"

namespace {

struct inject_state {
    curandGenerator_t gen;
    uint32_t *d_words;          // ABFT_INJECT_WORDS_PER_ELEM * ABFT_INJECT_KMAX words
    abft_inject_rec_t *d_rec;   // ABFT_INJECT_KMAX records
};

// Words are generated in multiples of 4 (one Philox block) so the count never matters to
// the generator; the mapping reads only the first 3 * nelems.
constexpr int kWordsCap = ((ABFT_INJECT_WORDS_PER_ELEM * ABFT_INJECT_KMAX + 3) / 4) * 4;

abft_status_t from_cuda(cudaError_t e) {
    return e == cudaSuccess ? ABFT_STATUS_SUCCESS
                            : (e == cudaErrorMemoryAllocation ? ABFT_STATUS_ALLOC_FAILED
                                                              : ABFT_STATUS_CUDA_ERROR);
}
abft_status_t from_curand(curandStatus_t e) {
    if (e == CURAND_STATUS_SUCCESS) return ABFT_STATUS_SUCCESS;
    if (e == CURAND_STATUS_ALLOCATION_FAILED) return ABFT_STATUS_ALLOC_FAILED;
    return ABFT_STATUS_CURAND_ERROR;
}

#define INJ_CUDA(expr)                                               \
    do {                                                             \
        abft_status_t inj_st_ = from_cuda(expr);                     \
        if (inj_st_ != ABFT_STATUS_SUCCESS) return inj_st_;          \
    } while (0)
#define INJ_CURAND(expr)                                             \
    do {                                                             \
        abft_status_t inj_st_ = from_curand(expr);                   \
        if (inj_st_ != ABFT_STATUS_SUCCESS) return inj_st_;          \
    } while (0)

template <typename W>
__global__ void flip_kernel(W *p, int64_t rows, int64_t ld, int64_t row, int64_t col,
                            int64_t ncand, int32_t bit_lo, int32_t bit_hi, int32_t width,
                            int32_t nelems, const uint32_t *words, abft_inject_rec_t *rec) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    int64_t taken[ABFT_INJECT_KMAX];
    const int32_t nbits = (int32_t)(8 * sizeof(W));
    for (int e = 0; e < nelems; ++e) {
        int64_t i, j;
        int32_t bit;
        abft_inject_map(words, e, taken, ncand, bit_lo, bit_hi, width, nbits, &taken[e], &bit);
        abft_inject_pos(taken[e], rows, row, col, &i, &j);
        W *q = p + i + j * ld;
        W o = *q;
        W n = o ^ (W)abft_inject_mask(bit, width);
        *q = n;
        rec[e].row = i;
        rec[e].col = j;
        rec[e].bit = bit;
        rec[e].width = width;
        rec[e].old_bits = (uint64_t)o;
        rec[e].new_bits = (uint64_t)n;
    }
}

abft_status_t state_create(cudaStream_t stream, inject_state **out) {
    inject_state *s = new (std::nothrow) inject_state();
    if (s == nullptr) return ABFT_STATUS_ALLOC_FAILED;
    s->gen = nullptr;
    s->d_words = nullptr;
    s->d_rec = nullptr;
    abft_status_t st = from_curand(curandCreateGenerator(&s->gen, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    if (st == ABFT_STATUS_SUCCESS)
        st = from_cuda(cudaMalloc(reinterpret_cast<void **>(&s->d_words),
                                  kWordsCap * sizeof(uint32_t)));
    if (st == ABFT_STATUS_SUCCESS)
        st = from_cuda(cudaMalloc(reinterpret_cast<void **>(&s->d_rec),
                                  ABFT_INJECT_KMAX * sizeof(abft_inject_rec_t)));
    if (st != ABFT_STATUS_SUCCESS) {
        abft_cuda_inject_release(s);
        return st;
    }
    (void)stream;
    *out = s;
    return ABFT_STATUS_SUCCESS;
}

}  // namespace

extern "C" void abft_cuda_inject_release(void *state) {
    inject_state *s = static_cast<inject_state *>(state);
    if (s == nullptr) return;
    // Release paths cannot report; the handle is being torn down anyway.
    if (s->gen != nullptr) (void)curandDestroyGenerator(s->gen);
    if (s->d_words != nullptr) (void)cudaFree(s->d_words);
    if (s->d_rec != nullptr) (void)cudaFree(s->d_rec);
    delete s;
}

extern "C" abft_status_t abft_cuda_inject(const abft_kctx_t *ctx, const abft_inject_args_t *a) {
    cudaStream_t stream = static_cast<cudaStream_t>(ctx->stream);
    inject_state *s = static_cast<inject_state *>(*a->state);
    if (s == nullptr) {
        abft_status_t st = state_create(stream, &s);
        if (st != ABFT_STATUS_SUCCESS) return st;
        *a->state = s;
    }
    // Reseeding Philox is cheap (no state setup kernel), so every firing gets its own
    // stream from its own seed and offset 0: a firing replays from its seed alone.
    INJ_CURAND(curandSetStream(s->gen, stream));
    INJ_CURAND(curandSetPseudoRandomGeneratorSeed(s->gen, a->seed));
    INJ_CURAND(curandSetGeneratorOffset(s->gen, 0));
    INJ_CURAND(curandGenerate(s->gen, s->d_words, kWordsCap));
    int64_t ncand = abft_inject_ncand(a->rows, a->cols, a->row, a->col);
    if (a->prec == ABFT_PREC_D)
        flip_kernel<unsigned long long><<<1, 32, 0, stream>>>(
            static_cast<unsigned long long *>(a->ptr), a->rows, a->ld, a->row, a->col, ncand,
            a->bit_lo, a->bit_hi, a->width, a->nelems, s->d_words, s->d_rec);
    else
        flip_kernel<uint32_t><<<1, 32, 0, stream>>>(
            static_cast<uint32_t *>(a->ptr), a->rows, a->ld, a->row, a->col, ncand, a->bit_lo,
            a->bit_hi, a->width, a->nelems, s->d_words, s->d_rec);
    INJ_CUDA(cudaGetLastError());
    INJ_CUDA(cudaMemcpyAsync(a->rec, s->d_rec, (size_t)a->nelems * sizeof(abft_inject_rec_t),
                             cudaMemcpyDeviceToHost, stream));
    INJ_CUDA(cudaStreamSynchronize(stream));
    return ABFT_STATUS_SUCCESS;
}

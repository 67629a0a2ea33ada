/* The bit-flip injector on the CUDA backend (cuRAND draws on the handle's stream): the
 * flipped bits in device memory are the recorded ones, a seed replays, and a small GEMM
 * campaign on the GPU has no SDC, miscorrection or false positive. Exits 77 without a GPU. */
#include <string.h>

#include <cuda_runtime.h>

#include "testutil.h"

static void test_direct(abft_handle_t h, tu_rng_t *r) {
    const int64_t m = 300, n = 70, ld = 301;
    size_t bytes = sizeof(double) * (size_t)(ld * n);
    double *A = tu_alloc_d(ld * n), *B = tu_alloc_d(ld * n), *dA = NULL;
    TU_CHECK(cudaMalloc((void **)&dA, bytes) == cudaSuccess, "cudaMalloc");
    abft_flip_t f[ABFT_INJECT_MAX_ELEMS], g[ABFT_INJECT_MAX_ELEMS];
    for (int it = 0; it < 50; ++it) {
        abft_fault_spec_t s = abft_fault_spec_default();
        s.bit_class = (int32_t)tu_int(r, 0, 4);
        s.width = (int32_t)tu_int(r, 1, 2);
        s.nelems = (int32_t)tu_int(r, 1, 8);
        uint64_t seed = tu_next(r);
        tu_fill_d(r, TU_UNIFORM, m, n, A, ld);
        cudaMemcpy(dA, A, bytes, cudaMemcpyHostToDevice);
        int64_t nf = 0, ng = 0;
        TU_CHECK_STATUS(abft_dinject(h, &s, seed, m, n, dA, ld, f, &nf), ABFT_STATUS_SUCCESS);
        cudaMemcpy(B, dA, bytes, cudaMemcpyDeviceToHost);
        int64_t ndiff = 0;
        for (int64_t t = 0; t < ld * n; ++t) ndiff += memcmp(&A[t], &B[t], 8) != 0;
        TU_CHECK(ndiff == nf, "seed %llu: %lld changed, %lld recorded", (unsigned long long)seed,
                 (long long)ndiff, (long long)nf);
        for (int64_t e = 0; e < nf; ++e) {
            int64_t t = f[e].row + f[e].col * ld;
            uint64_t a, b;
            memcpy(&a, &A[t], 8);
            memcpy(&b, &B[t], 8);
            uint64_t mask = (f[e].width == 2 ? 3ull : 1ull) << f[e].bit;
            TU_CHECK((a ^ b) == mask && f[e].old_bits == a && f[e].new_bits == b,
                     "seed %llu: flip %lld at [%lld, %lld] bit %d not as recorded",
                     (unsigned long long)seed, (long long)e, (long long)f[e].row,
                     (long long)f[e].col, f[e].bit);
        }
        cudaMemcpy(dA, A, bytes, cudaMemcpyHostToDevice);
        TU_CHECK_STATUS(abft_dinject(h, &s, seed, m, n, dA, ld, g, &ng), ABFT_STATUS_SUCCESS);
        TU_CHECK(ng == nf && memcmp(f, g, sizeof(abft_flip_t) * (size_t)nf) == 0,
                 "seed %llu: replay on the GPU flipped different bits", (unsigned long long)seed);
    }
    cudaFree(dA);
    free(A);
    free(B);
}

int main(void) {
    tu_require_gpu();
    uint64_t seed = tu_seed("test_inject_gpu");
    tu_rng_t r;
    tu_rng_init(&r, seed);
    abft_handle_t h = NULL;
    TU_CHECK_STATUS(abft_create(&h, ABFT_BACKEND_CUDA), ABFT_STATUS_SUCCESS);
    if (h != NULL) test_direct(h, &r);
    abft_destroy(h);
    for (int p = 0; p < 2; ++p) {
        abft_campaign_config_t c = abft_campaign_config_default();
        c.backend = ABFT_BACKEND_CUDA;
        c.precision = p ? 's' : 'd';
        c.m = c.n = c.k = 256;
        c.trials = 300;
        c.controls = 100;
        c.seed = seed + (uint64_t)p;
        abft_campaign_summary_t s;
        TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_SUCCESS);
        printf("gpu campaign %c: masked %lld undetected %lld corrected %lld uncorrectable %lld "
               "gray %lld sdc %lld miscorrected %lld fp %lld (+%lld golden) error %lld\n",
               c.precision, (long long)s.count[0], (long long)s.count[ABFT_OUTCOME_UNDETECTED],
               (long long)s.count[1], (long long)s.count[2], (long long)s.count[3],
               (long long)s.count[4], (long long)s.count[5], (long long)s.count[6],
               (long long)s.golden_detections, (long long)s.count[9]);
        TU_CHECK(s.count[ABFT_OUTCOME_SDC] + s.count[ABFT_OUTCOME_MISCORRECTED] +
                         s.count[ABFT_OUTCOME_FALSE_POSITIVE] + s.golden_detections +
                         s.count[ABFT_OUTCOME_ERROR] + s.control_errors == 0,
                 "GPU campaign %c (seed %llu) has failures", c.precision,
                 (unsigned long long)c.seed);
    }
    return tu_finish("test_inject_gpu");
}

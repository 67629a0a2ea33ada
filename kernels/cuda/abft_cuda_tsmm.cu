/* abft CUDA backend: tall-and-skinny products and the fused dual pass. Chooses the launch
 * shape from the tuning table (abft_cuda_tuning.h) and the sizes, instantiates the kernels
 * of abft_cuda_tsmm.cuh for {double, float} x c-bucket {2, 4, 8, 16} x {plain, with |A|},
 * and for c-bucket 2 their implicit-weight instances (V = [1, l+1] from the index). */
#include <cuda_runtime.h>
#include <stdint.h>

#include "abft_cuda_common.cuh"
#include "abft_cuda_tsmm.cuh"
#include "abft_cuda_tuning.h"

using namespace abft_cuda;

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

int c_bucket(int64_t c) { return c <= 2 ? 2 : c <= 4 ? 4 : c <= 8 ? 8 : 16; }

/* Wide loads need the base pointer and every column start aligned to the vector size. */
int wide_ok(const void *A, int64_t lda, size_t elem, int vbytes) {
    return ((uintptr_t)A % (uintptr_t)vbytes) == 0 && ((size_t)lda * elem) % (size_t)vbytes == 0;
}

/* How many slices of a long dimension of `len` to cut so that tiles x slices fills the
 * device (blocks_per_sm on each SM), never slices thinner than min_split (or `align`). */
int64_t choose_slices(int64_t tiles, int64_t len, int64_t align, int sms, int bps,
                      int min_split, int64_t *chunk, bool one_wave = false) {
    int64_t target = (int64_t)sms * (bps > 0 ? bps : 1);
    int64_t S = tiles >= target ? 1 : ceil_div(target, tiles > 0 ? tiles : 1);
    /* one_wave: bps is the kernel's real occupancy, so never pass target blocks (the ceiling
     * above can: 16 row tiles x 17 slices = 272 blocks on 264 slots, a second wave of 8). */
    if (one_wave && tiles < target) S = target / (tiles > 0 ? tiles : 1);
    int64_t min_slice = min_split > align ? min_split : align;
    int64_t smax = len / min_slice;
    if (smax < 1) smax = 1;
    if (S > smax) S = smax;
    if (S > 65535) S = 65535;
    int64_t ch = len > 0 ? round_up(ceil_div(len, S), align) : align;
    S = len > 0 ? ceil_div(len, ch) : 1;
    *chunk = ch;
    return S;
}

abft_status_t launch_reduce(const abft_kctx_t *ctx, bool pdl, const reduce_job &a,
                            const reduce_job *b) {
    int64_t na = ceil_div(a.len * a.c * (a.abs ? 2 : 1), NT);
    int64_t nb = b ? ceil_div(b->len * b->c * (b->abs ? 2 : 1), NT) : 0;
    reduce_job bb = b ? *b : a;
    if (na + nb == 0) return ABFT_STATUS_SUCCESS;
    return abft_cuda_launch(ctx, pdl, reduce_kernel, dim3((unsigned)(na + nb)), NT, 0, a, bb, na);
}

template <typename T, int CB, bool ABS>
abft_status_t run_tsmm(const abft_kctx_t *ctx, const abft_tsmm_args_t *a) {
    int sms = 1;
    const abft_cuda_tune_t *tune = abft_cuda_tune_get(ctx->device, &sms);
    const int nacc = CB * (ABS ? 2 : 1);
    tsmm_params p;
    p.A = a->A;
    p.m = a->rows;
    p.n = a->cols;
    p.lda = a->lda;
    p.X = a->X;
    p.ldx = a->ldx;
    p.Xa = ABS ? a->Xabs : NULL;
    p.ldxa = a->ldxabs;
    p.implicit = a->X == NULL;
    p.c = (int)a->c;
    p.Y = a->Y;
    p.ldy = a->ldy;
    p.Ya = a->Yabs;
    p.ldya = a->ldyabs;
    p.part = NULL;
    const int pr = sizeof(T) == 8 ? 0 : 1;
    /* Implicit weights V = [1, l+1] with |V| = V: the rows kernel computes them from the
     * column index (tsmm_n_kernel<..., WS_IMPLICIT>), the cols kernel from the row index
     * (tsmm_t_kernel<..., WS_IMPLICIT>). */
    const double bytes = (double)a->rows * (double)a->cols * (double)sizeof(T);
    bool impl = false, xglobal = false, xasync = false, r2 = false, c2 = false;
    if constexpr (CB == 2) {
        impl = p.implicit && (!ABS || p.Xa == NULL);
        /* fp32, explicit weights, |A|: 2 rows per thread with asynchronous staging where A
         * is over 64 MiB and at most 1.5 GiB. Fewer registers per thread buy a fourth block
         * per SM; measured, that reads faster only within this size range, and faster than
         * global weights at 2 rows (bench/NOTES-encode.md v10). */
        r2 = sizeof(T) == 4 && ABS && !impl && a->trans == 0 && bytes > 64.0 * (1 << 20) &&
             bytes <= 1.5 * (1 << 30);
        /* An explicit X of c = 2: the rows kernel reads it from global memory (WS_GLOBAL:
         * two weights per column, cached, no staging barrier), except fp32 with |A|, where
         * the weights of 4 columns in registers next to 16 accumulators and 4 float4 loads
         * spill at the 80-register bound (3 blocks/SM), and at 2 rows per thread (r2), where
         * asynchronous staging reads faster (bench/NOTES-encode.md). */
        xglobal = a->trans == 0 && !p.implicit && a->c == 2 && (sizeof(T) == 8 || !ABS);
    }
    int64_t out_len, tile_outs, S; /* outputs in all, and per tile (blockIdx.x) */
    dim3 grid;
    size_t smem;
    if (a->trans == 0) {
        if (a->rows == 0) return ABFT_STATUS_SUCCESS;
        const int R = r2 ? 2 : rows_per_thread<T, CB, ABS, 1>::value;
        const abft_cuda_kshape_t sh = abft_cuda_tune_shape(tune, 0, pr, bytes);
        int lanes = sh.lanes;
        /* The table's fp64 lanes (8 at small/medium sizes) are measured on the implicit-weight
         * path; with explicit X every block re-stages X for its columns (c*8 bytes per column
         * against lanes*R*8 of A), which at 8 lanes is a large share of the traffic: explicit
         * weights keep at least 16. */
        if (sizeof(T) == 8 && !impl && lanes < 16) lanes = 16;
        if (lanes < 8) lanes = 8;
        if (lanes > NT) lanes = NT;
        const int G = NT / lanes;
        const int64_t TR = (int64_t)lanes * R;
        const int64_t tiles = ceil_div(a->rows, TR);
        int64_t chunk;
        S = choose_slices(tiles, a->cols, (int64_t)G * UNR, sms, sh.bps, tune->min_split, &chunk);
        /* Staged weights by asynchronous copies into two buffers where two stages of G·UNR
         * columns fit (so the stage stays a multiple of G·UNR: the same order, the same bits
         * as the synchronous staging): the next stage lands while this one is summed instead
         * of the block waiting on it. fp32 c = 2 with |A| only at 2 rows per thread: with 4,
         * at its 80-register bound (3 blocks per SM), the async instance spills in the loop.
         * At 2 rows the two stages always fit (lanes >= 8: G·UNR·nacc·8 <= 4096 bytes). */
        xasync = !impl && !xglobal && 2 * G * UNR * nacc * 8 <= ABFT_CUDA_SMEM_BYTES &&
                 (!(sizeof(T) == 4 && ABS && CB == 2) || r2);
        int64_t ks = ABFT_CUDA_SMEM_BYTES / (8 * nacc * (xasync ? 2 : 1));
        ks = ks / (G * UNR) * (G * UNR);
        if (ks < G * UNR) ks = G * UNR;
        /* Nothing staged (implicit or global weights): one stage per slice, at most 2^30
         * columns (a multiple of G·UNR, so each group sums the same columns in the same
         * order as with any stage length). */
        if (impl || xglobal) ks = ((int64_t)1 << 30) / (G * UNR) * (G * UNR);
        if (ks > chunk) ks = chunk;
        p.lanes = lanes;
        p.chunk = chunk;
        p.stage = (int)ks;
        p.vec_ok = wide_ok(a->A, a->lda, sizeof(T), (int)(R * sizeof(T)));
        const int QBM = ABFT_CUDA_SMEM_BYTES / (8 * NT * R);
        const int QB = QBM < nacc ? QBM : nacc;
        size_t s1 = impl || xglobal ? 0 : (size_t)ks * nacc * 8 * (xasync ? 2 : 1);
        size_t s2 = (size_t)QB * NT * R * 8;
        smem = s1 > s2 ? s1 : s2;
        grid = dim3((unsigned)tiles, (unsigned)S, 1);
        out_len = a->rows;
        tile_outs = TR;
    } else {
        if (a->cols == 0) return ABFT_STATUS_SUCCESS;
        /* fp32, explicit weights, |A| (the full checksums' second read of B): 2 rows per
         * lane, 64 registers and 4 blocks per SM where 4 rows took 80 and 3; the extra block
         * per SM keeps more loads in flight at every size (bench/NOTES-encode.md v10). */
        c2 = sizeof(T) == 4 && ABS && CB == 2 && !impl;
        const int R = c2 ? 2 : vec_width<T>::value;
        const abft_cuda_kshape_t sh = abft_cuda_tune_shape(tune, 1, pr, bytes);
        int lanes = sh.lanes;
        if (lanes < 1) lanes = 1;
        if (lanes > 32) lanes = 32;
        /* Each block re-reads X for its rows: keep those reads (c*8 bytes per row per block of
         * NT/lanes columns) under a quarter of A's bytes, or wide c (16) spends more time
         * reading X than A (bench/NOTES-encode.md v2). */
        if (a->X != NULL)
            while (lanes > 1 && (int64_t)a->c * 8 * 4 * lanes > (int64_t)NT * (int64_t)sizeof(T))
                lanes /= 2;
        while (lanes > 1 && (int64_t)UNR * lanes * R * nacc * 8 > ABFT_CUDA_SMEM_BYTES) lanes /= 2;
        const int NC = NT / lanes;
        const int64_t step = (int64_t)UNR * lanes * R;
        /* Weights not computed from the index are staged; by asynchronous copies into two
         * buffers (the next stage lands while this one is summed, instead of every block
         * waiting at each stage) where two stages of `step` rows fit in the budget, so the
         * launch shape, and the bits, stay those of the synchronous staging. At 2 rows per
         * lane (c2) they always fit (lanes <= 32: step·nacc·8 <= 8192 bytes). */
        xasync = !impl && 2 * step * nacc * 8 <= ABFT_CUDA_SMEM_BYTES;
        const int64_t tiles = ceil_div(a->cols, NC);
        int64_t chunk;
        S = choose_slices(tiles, a->rows, step, sms, sh.bps, tune->min_split, &chunk);
        int64_t rs = ABFT_CUDA_SMEM_BYTES / (8 * nacc * (xasync ? 2 : 1));
        rs = rs / step * step;
        if (rs < step) rs = step;
        /* Implicit weights stage nothing: one stage per slice (a multiple of step, so each
         * lane sums the same rows in the same order as with any stage length). */
        if (impl) rs = ((int64_t)1 << 30) / step * step;
        if (rs > chunk) rs = chunk;
        p.lanes = lanes;
        p.chunk = chunk;
        p.stage = (int)rs;
        p.vec_ok = wide_ok(a->A, a->lda, sizeof(T), (int)(R * sizeof(T)));
        smem = impl ? 0 : (size_t)rs * nacc * 8 * (xasync ? 2 : 1);
        grid = dim3((unsigned)tiles, (unsigned)S, 1);
        out_len = a->cols;
        tile_outs = NC;
    }
    if (grid.x > 0x7fffffffu) return ABFT_STATUS_NOT_SUPPORTED;
    /* Split: the last block of each tile adds its partials (split_finish) when that is a
     * small job, else a second launch adds them all. */
    p.count = NULL;
    const bool fuse = S > 1 && tile_outs * a->c * (ABS ? 2 : 1) * S <= FUSE_LOADS;
    if (S > 1) {
        void *scr = NULL;
        ABFT_TRY_STATUS(abft_cuda_scratch_counted(
            ctx, fuse ? (size_t)grid.x : 0, (size_t)S * a->c * (ABS ? 2 : 1) * out_len * 8,
            fuse ? &p.count : NULL, &scr));
        p.part = (double *)scr;
    }
    void (*kern)(const tsmm_params) = NULL;
    if (a->trans == 0 && impl) {
        if constexpr (CB == 2) kern = tsmm_n_kernel<T, 2, ABS, WS_IMPLICIT>;
    } else if (a->trans == 0 && r2) {
        if constexpr (CB == 2 && sizeof(T) == 4 && ABS)
            if (xasync) kern = tsmm_n_kernel<T, 2, true, WS_ASYNC, 2>;
    } else if (a->trans == 0 && xglobal) {
        if constexpr (CB == 2 && (sizeof(T) == 8 || !ABS)) kern = tsmm_n_kernel<T, 2, ABS, WS_GLOBAL>;
    } else if (a->trans == 0 && xasync) {
        if constexpr (!(sizeof(T) == 4 && ABS && CB == 2)) kern = tsmm_n_kernel<T, CB, ABS, WS_ASYNC>;
    } else if (a->trans == 0) {
        kern = tsmm_n_kernel<T, CB, ABS>;
    } else if (impl) {
        if constexpr (CB == 2) kern = tsmm_t_kernel<T, 2, ABS, WS_IMPLICIT>;
    } else if (c2) {
        if constexpr (CB == 2 && sizeof(T) == 4 && ABS)
            if (xasync) kern = tsmm_t_kernel<T, 2, true, WS_ASYNC, 2>;
    } else if constexpr (!(CB == 2 && sizeof(T) == 4 && ABS)) {
        /* (fp32 c = 2 with |A| is implicit or c2: no 4-row instance of the cols kernel) */
        if (xasync)
            kern = tsmm_t_kernel<T, CB, ABS, WS_ASYNC>;
        else
            kern = tsmm_t_kernel<T, CB, ABS>;
    }
    if (kern == NULL) return ABFT_STATUS_INTERNAL_ERROR; /* a case without its instance */
    const bool pdl = bytes <= ABFT_CUDA_PDL_MAX_BYTES;
    ABFT_TRY_STATUS(abft_cuda_launch(ctx, pdl, kern, grid, NT, smem, p));
    if (S > 1 && !fuse) {
        const reduce_job j = tsmm_job(p, (int)S, out_len, ABS);
        ABFT_TRY_STATUS(launch_reduce(ctx, pdl, j, NULL));
    }
    return ABFT_STATUS_SUCCESS;
}

template <typename T, int CB, bool ABS>
abft_status_t run_dual(const abft_kctx_t *ctx, const abft_dual_args_t *a) {
    int sms = 1;
    const abft_cuda_tune_t *tune = abft_cuda_tune_get(ctx->device, &sms);
    constexpr int R = rows_per_thread<T, CB, ABS, 2>::value;
    constexpr int nacc = CB * (ABS ? 2 : 1);
    dual_params p;
    p.M = a->M;
    p.m = a->rows;
    p.n = a->cols;
    p.ldm = a->ldm;
    p.X = a->X;
    p.ldx = a->ldx;
    p.Xa = ABS ? a->Xabs : NULL;
    p.ldxa = a->ldxabs;
    p.implicit_x = a->X == NULL;
    p.c1 = (int)a->c1;
    p.Z = a->Z;
    p.ldz = a->ldz;
    p.Za = ABS ? a->Zabs : NULL;
    p.ldza = a->ldzabs;
    p.implicit_z = a->Z == NULL;
    p.c2 = (int)a->c2;
    p.P = a->P;
    p.ldp = a->ldp;
    p.Pa = a->Pabs;
    p.ldpa = a->ldpabs;
    p.Q = a->Q;
    p.ldq = a->ldq;
    p.Qa = a->Qabs;
    p.ldqa = a->ldqabs;
    p.part_p = p.part_q = NULL;
    const int64_t TR = (int64_t)NT * R;
    /* With no rows, one (empty) row tile still writes Q = 0. */
    const int64_t tiles = a->rows > 0 ? ceil_div(a->rows, TR) : 1;
    int64_t chunk;
    const double bytes = (double)a->rows * (double)a->cols * (double)sizeof(T);
    const abft_cuda_kshape_t sh = abft_cuda_tune_shape(tune, 2, sizeof(T) == 8 ? 0 : 1, bytes);
    /* Implicit weights V = [1, l+1] with |V| = V on a side: computed from the index
     * (dual_kernel<..., IMPL>, c-bucket 2 only). */
    int impl = 0;
    void (*kern)(const dual_params) = dual_kernel<T, CB, ABS>;
    if constexpr (CB == 2) {
        if (p.implicit_x && p.Xa == NULL) impl |= DUAL_IMPL_X;
        if (p.implicit_z && p.Za == NULL) impl |= DUAL_IMPL_Z;
        if (impl == DUAL_IMPL_X) kern = dual_kernel<T, 2, ABS, DUAL_IMPL_X>;
        if (impl == DUAL_IMPL_Z) kern = dual_kernel<T, 2, ABS, DUAL_IMPL_Z>;
        if (impl == (DUAL_IMPL_X | DUAL_IMPL_Z))
            kern = dual_kernel<T, 2, ABS, DUAL_IMPL_X | DUAL_IMPL_Z>;
    }
    /* A table bps of at most 4 asks for one wave: it is capped at the instance's occupancy
     * (blocks per SM with the most dynamic shared memory a launch asks for, asked once per
     * instance: fp32 explicit 2, fp32 implicit 3, fp64 4) and the split must then not
     * spill into a second wave. Larger values ask for several waves. */
    static int occ_cache[4] = {0, 0, 0, 0};
    if (occ_cache[impl] == 0) {
        int o = 0;
        ABFT_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o, kern, NT,
                                                                    ABFT_CUDA_SMEM_BYTES));
        occ_cache[impl] = o > 0 ? o : 1;
    }
    const bool one_wave = sh.bps <= 4;
    const int bps = one_wave && sh.bps > occ_cache[impl] ? occ_cache[impl] : sh.bps;
    const int64_t S = choose_slices(tiles, a->cols, UNR, sms, bps, tune->dual_min_split,
                                    &chunk, one_wave);
    int64_t ks = ABFT_CUDA_SMEM_BYTES / (8 * nacc * (1 + NT / 32));
    ks = ks / UNR * UNR;
    if (ks < UNR) ks = UNR;
    if (ks > chunk) ks = chunk;
    p.chunk = chunk;
    p.stage = (int)ks;
    p.vec_ok = wide_ok(a->M, a->ldm, sizeof(T), (int)(R * sizeof(T)));
    const size_t smem = (size_t)ks * nacc * (1 + NT / 32) * 8;
    const size_t bytes_p = S > 1 ? (size_t)S * a->c1 * (ABS ? 2 : 1) * a->rows * 8 : 0;
    const size_t bytes_p_al = (bytes_p + 255) / 256 * 256;
    const size_t bytes_q = tiles > 1 ? (size_t)tiles * a->c2 * (ABS ? 2 : 1) * a->cols * 8 : 0;
    if (bytes_p + bytes_q > 0) {
        void *scr = NULL;
        ABFT_TRY_STATUS(abft_cuda_scratch(ctx, bytes_p_al + bytes_q, &scr));
        if (bytes_p) p.part_p = (double *)scr;
        if (bytes_q) p.part_q = (double *)((char *)scr + bytes_p_al);
    }
    if (tiles > 0x7fffffff) return ABFT_STATUS_NOT_SUPPORTED;
    dim3 grid((unsigned)tiles, (unsigned)S, 1);
    const bool pdl = bytes <= ABFT_CUDA_PDL_MAX_BYTES;
    ABFT_TRY_STATUS(abft_cuda_launch(ctx, pdl, kern, grid, NT, smem, p));
    reduce_job jp = {p.part_p, (int)S, a->rows, (int)a->c1, ABS ? 1 : 0,
                     a->P, a->ldp, a->Pabs, a->ldpabs};
    reduce_job jq = {p.part_q, (int)tiles, a->cols, (int)a->c2, ABS ? 1 : 0,
                     a->Q, a->ldq, a->Qabs, a->ldqabs};
    /* the split sides' partials, both in one launch when both are split */
    if (S > 1 || tiles > 1)
        ABFT_TRY_STATUS(launch_reduce(ctx, pdl, S > 1 ? jp : jq, S > 1 && tiles > 1 ? &jq : NULL));
    return ABFT_STATUS_SUCCESS;
}

/* One switch per entry point: the whole set of instantiations is listed here. */
template <typename T>
abft_status_t tsmm_bucket(const abft_kctx_t *ctx, const abft_tsmm_args_t *a) {
    const bool abs = a->Yabs != NULL;
    switch (c_bucket(a->c)) {
    case 2: return abs ? run_tsmm<T, 2, true>(ctx, a) : run_tsmm<T, 2, false>(ctx, a);
    case 4: return abs ? run_tsmm<T, 4, true>(ctx, a) : run_tsmm<T, 4, false>(ctx, a);
    case 8: return abs ? run_tsmm<T, 8, true>(ctx, a) : run_tsmm<T, 8, false>(ctx, a);
    default: return abs ? run_tsmm<T, 16, true>(ctx, a) : run_tsmm<T, 16, false>(ctx, a);
    }
}

template <typename T>
abft_status_t dual_bucket(const abft_kctx_t *ctx, const abft_dual_args_t *a) {
    const bool abs = a->Pabs != NULL || a->Qabs != NULL;
    const int64_t c = a->c1 > a->c2 ? a->c1 : a->c2;
    switch (c_bucket(c)) {
    case 2: return abs ? run_dual<T, 2, true>(ctx, a) : run_dual<T, 2, false>(ctx, a);
    case 4: return abs ? run_dual<T, 4, true>(ctx, a) : run_dual<T, 4, false>(ctx, a);
    case 8: return abs ? run_dual<T, 8, true>(ctx, a) : run_dual<T, 8, false>(ctx, a);
    default: return abs ? run_dual<T, 16, true>(ctx, a) : run_dual<T, 16, false>(ctx, a);
    }
}

} /* namespace */

extern "C" abft_status_t abft_cuda_tsmm(const abft_kctx_t *ctx, const abft_tsmm_args_t *a) {
    if (a->c < 1 || a->c > 16) return ABFT_STATUS_INVALID_VALUE;
    if (a->comp && a->prec == ABFT_PREC_D) return abft_cuda_tsmm_dot2(ctx, a);
    if (a->prec == ABFT_PREC_D) return tsmm_bucket<double>(ctx, a);
    return tsmm_bucket<float>(ctx, a);
}

extern "C" abft_status_t abft_cuda_dual(const abft_kctx_t *ctx, const abft_dual_args_t *a) {
    if (a->c1 < 1 || a->c1 > 16 || a->c2 < 1 || a->c2 > 16) return ABFT_STATUS_INVALID_VALUE;
    if (a->rows == 0 && a->cols == 0) return ABFT_STATUS_SUCCESS;
    if (a->comp && a->prec == ABFT_PREC_D) return abft_cuda_dual_dot2(ctx, a);
    if (a->prec == ABFT_PREC_D) return dual_bucket<double>(ctx, a);
    return dual_bucket<float>(ctx, a);
}

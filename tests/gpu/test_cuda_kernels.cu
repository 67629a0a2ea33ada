/* GPU test of the CUDA backend's kernels against the CPU oracle (kernels/cpu):
 * abft_cuda_tsmm (both trans, c = 1..16, implicit weights, abs companions; implicit =
 * explicit [1, l+1] bit for bit where the launch shapes agree), abft_cuda_dual
 * (explicit or implicit weights on either side; implicit = explicit [1, l+1] bit for bit),
 * abft_cuda_compare (bit-exact flags, ratio and list), abft_cuda_gemm (and the restore of a
 * borrowed handle's stream and pointer mode), abft_cuda_blas_math, the public
 * encode API on a CUDA handle, and one product of more than 2^31 elements.
 *
 * Sizes 0, 1, 7, tile-ragged and large; lda > m; odd lda (no 16-byte alignment); a base
 * pointer moved by one element. Outputs are poisoned before each run and their padding is
 * checked afterwards. Tolerance: both sides accumulate in fp64 in different orders, so
 * |gpu - cpu| <= 2 (len + 2) 2^-53 (|A| |X|)_i.
 * ABFT_TEST_SMALL=1 drops the large cases (for compute-sanitizer runs). */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abft/abft.h"
#include "cuda/abft_cuda_tuning.h"
#include "abft_kernels.h"
#include "testutil.h"

static const double SENT = -3.25e300; /* poison: never a plausible result */
static const int64_t EXTRAS[4] = {0, 1, 3, 16};
static const double FRACS[4] = {0.0, 0.001, 0.05, 0.6};
static int g_small = 0;

#define CU(x)                                                                          \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static void *dmalloc(size_t bytes) {
    void *p = NULL;
    CU(cudaMalloc(&p, bytes > 0 ? bytes : 16));
    return p;
}
static void *dup_to_dev(const void *h, size_t bytes) {
    void *d = dmalloc(bytes);
    if (bytes) CU(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    return d;
}
static void to_host(void *h, const void *d, size_t bytes) {
    if (bytes) CU(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
}
static double *poisoned(int64_t count) {
    double *p = tu_alloc_d(count > 0 ? count : 1);
    for (int64_t i = 0; i < count; ++i) p[i] = SENT;
    return p;
}

/* Check a rows x cols result (ld) against the reference with per-entry tolerance
 * tol_scale * scale[i] (scale NULL: tol_scale * |ref|), and that the padding kept SENT. */
static int check_block(const char *what, const double *got, const double *ref,
                       const double *scale, int64_t rows, int64_t cols, int64_t ld,
                       int64_t ldref, double tol_scale) {
    int bad = 0;
    for (int64_t q = 0; q < cols; ++q) {
        for (int64_t i = 0; i < ld; ++i) {
            double g = got[i + q * ld];
            if (i >= rows) {
                if (g != SENT && bad < 3) {
                    ++bad;
                    TU_CHECK(g == SENT, "%s: padding (%lld,%lld) overwritten: %g", what,
                             (long long)i, (long long)q, g);
                }
                continue;
            }
            double r = ref[i + q * ldref];
            double s = scale ? scale[i + q * ldref] : fabs(r);
            double tol = tol_scale * s + 1e-300;
            if (!(fabs(g - r) <= tol) && bad < 3) {
                ++bad;
                TU_CHECK(fabs(g - r) <= tol, "%s: (%lld,%lld) gpu %.17g cpu %.17g tol %.3g", what,
                         (long long)i, (long long)q, g, r, tol);
            }
        }
    }
    return bad;
}

typedef struct {
    abft_kctx_t ctx;
    abft_buffer_t scratch;
    cudaStream_t stream;
} gpuctx_t;

static void gpu_open(gpuctx_t *g, int own_stream) {
    memset(g, 0, sizeof *g);
    g->ctx.scratch = &g->scratch;
    abft_status_t st = abft_cuda_context_create(&g->ctx);
    if (st != ABFT_STATUS_SUCCESS) {
        fprintf(stderr, "context_create: %s\n", abft_status_name(st));
        exit(1);
    }
    if (own_stream) {
        CU(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
        g->ctx.stream = g->stream;
    }
}
static void gpu_close(gpuctx_t *g) {
    if (g->scratch.ptr) abft_cuda_free(&g->ctx, g->scratch.ptr);
    TU_CHECK_STATUS(abft_cuda_context_destroy(&g->ctx, 1, 1), ABFT_STATUS_SUCCESS);
    if (g->stream) CU(cudaStreamDestroy(g->stream));
}

/* Host matrix of `prec` with leading dimension ld, `off` leading elements before it. */
static void *host_matrix(tu_rng_t *rng, abft_prec_t prec, int64_t rows, int64_t cols, int64_t ld,
                         int64_t off, size_t *bytes) {
    size_t es = prec == ABFT_PREC_D ? 8 : 4;
    int64_t count = ld * (cols > 0 ? cols : 0) + off + 1;
    *bytes = (size_t)count * es;
    tu_kind_t kind = (tu_kind_t)tu_int(rng, 0, 2);
    if (prec == ABFT_PREC_D) {
        double *A = tu_alloc_d(count);
        for (int64_t i = 0; i < count; ++i) A[i] = 7.0; /* padding and the offset cell */
        if (rows > 0 && cols > 0) tu_fill_d(rng, kind, rows, cols, A + off, ld);
        return A;
    }
    float *A = tu_alloc_s(count);
    for (int64_t i = 0; i < count; ++i) A[i] = 7.0f;
    if (rows > 0 && cols > 0) tu_fill_s(rng, kind, rows, cols, A + off, ld);
    return A;
}

static double *host_small(tu_rng_t *rng, int64_t rows, int64_t cols, int64_t ld, int positive) {
    double *X = tu_alloc_d(ld * cols + 1);
    for (int64_t i = 0; i < ld * cols + 1; ++i) X[i] = 5.0;
    if (rows > 0 && cols > 0)
        tu_fill_d(rng, positive ? TU_POSITIVE : TU_UNIFORM, rows, cols, X, ld);
    return X;
}

static int n_tsmm_cases = 0;

static void tsmm_case(tu_rng_t *rng, gpuctx_t *g, abft_prec_t prec, int trans, int64_t m,
                      int64_t n, int64_t c, int implicit, int want_abs, int xabs_explicit,
                      int64_t lda_extra, int64_t off) {
    ++n_tsmm_cases;
    char what[200];
    snprintf(what, sizeof what,
             "tsmm %c trans=%d m=%lld n=%lld c=%lld impl=%d abs=%d xabs=%d lda+%lld off=%lld",
             prec == ABFT_PREC_D ? 'd' : 's', trans, (long long)m, (long long)n, (long long)c,
             implicit, want_abs, xabs_explicit, (long long)lda_extra, (long long)off);
    const int64_t lda = (m > 1 ? m : 1) + lda_extra;
    size_t abytes;
    void *A = host_matrix(rng, prec, m, n, lda, off, &abytes);
    const size_t es = prec == ABFT_PREC_D ? 8 : 4;
    const int64_t xrows = trans ? m : n, yrows = trans ? n : m;
    const int64_t ldx = xrows + 1, ldy = yrows + 2;
    double *X = implicit ? NULL : host_small(rng, xrows, c, ldx, 0);
    double *Xa = (want_abs && xabs_explicit) ? host_small(rng, xrows, c, ldx, 1) : NULL;
    /* reference and scale on the CPU */
    double *Yr = tu_alloc_d(ldy * c + 1), *Yar = tu_alloc_d(ldy * c + 1);
    double *Sc = tu_alloc_d(ldy * c + 1), *dummy = tu_alloc_d(ldy * c + 1);
    abft_kctx_t cpu = {NULL, NULL, NULL, NULL, -1};
    const char *Ah = (const char *)A + off * es;
    abft_tsmm_args_t ra = {prec, trans, m, n, c, Ah, lda, X, ldx, Xa, ldx, Yr, ldy,
                           want_abs ? Yar : NULL, ldy, 0};
    TU_CHECK_STATUS(abft_cpu_tsmm(&cpu, &ra), ABFT_STATUS_SUCCESS);
    abft_tsmm_args_t sa = {prec, trans, m, n, c, Ah, lda, X, ldx, NULL, 0, dummy, ldy, Sc, ldy, 0};
    TU_CHECK_STATUS(abft_cpu_tsmm(&cpu, &sa), ABFT_STATUS_SUCCESS);
    /* GPU */
    void *dA = dup_to_dev(A, abytes);
    double *dX = X ? (double *)dup_to_dev(X, (size_t)(ldx * c + 1) * 8) : NULL;
    double *dXa = Xa ? (double *)dup_to_dev(Xa, (size_t)(ldx * c + 1) * 8) : NULL;
    double *Y = poisoned(ldy * c), *Ya = poisoned(ldy * c);
    double *dY = (double *)dup_to_dev(Y, (size_t)(ldy * c) * 8);
    double *dYa = (double *)dup_to_dev(Ya, (size_t)(ldy * c) * 8);
    abft_tsmm_args_t ga = {prec, trans, m, n, c, (const char *)dA + off * es, lda, dX, ldx,
                           dXa, ldx, dY, ldy, want_abs ? dYa : NULL, ldy, 0};
    TU_CHECK_STATUS(abft_cuda_tsmm(&g->ctx, &ga), ABFT_STATUS_SUCCESS);
    CU(cudaStreamSynchronize(g->stream));
    CU(cudaGetLastError());
    to_host(Y, dY, (size_t)(ldy * c) * 8);
    to_host(Ya, dYa, (size_t)(ldy * c) * 8);
    const int64_t len = trans ? m : n;
    const double tol = 2.0 * (double)(len + 2) * 0x1p-53;
    int bad = check_block(what, Y, Yr, Sc, yrows, c, ldy, ldy, tol);
    if (want_abs)
        bad += check_block(what, Ya, Yar, NULL, yrows, c, ldy, ldy, tol);
    else
        for (int64_t i = 0; i < ldy * c; ++i)
            if (Ya[i] != SENT) {
                TU_CHECK(Ya[i] == SENT, "%s: Yabs written though not asked", what);
                break;
            }
    (void)bad;
    cudaFree(dA);
    cudaFree(dX);
    cudaFree(dXa);
    cudaFree(dY);
    cudaFree(dYa);
    free(A);
    free(X);
    free(Xa);
    free(Yr);
    free(Yar);
    free(Sc);
    free(dummy);
    free(Y);
    free(Ya);
}

static void test_tsmm(tu_rng_t *rng, gpuctx_t *g) {
    static const int64_t sizes[][2] = {{0, 0},    {0, 5},      {5, 0},     {1, 1},     {7, 7},
                                       {7, 1},    {1, 7},      {33, 65},   {513, 77},  {77, 513},
                                       {1000, 999}, {2053, 1031}, {4099, 129}, {129, 4099},
                                       {30000, 700}, {700, 30000}};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    static const int64_t cs[] = {2, 1, 3, 16, 5, 8, 4, 9, 2, 12};
    int k = 0;
    for (int s = 0; s < nsizes; ++s) {
        int64_t m = sizes[s][0], n = sizes[s][1];
        if (g_small && m * n > 300000) continue;
        for (int p = 0; p < 2; ++p)
            for (int t = 0; t < 2; ++t) {
                int64_t c = cs[k++ % 10];
                int implicit = c == 2 && tu_int(rng, 0, 1);
                int want_abs = (int)tu_int(rng, 0, 1);
                int xabs = !implicit && want_abs && tu_int(rng, 0, 1);
                int64_t extra = EXTRAS[tu_int(rng, 0, 3)];
                int64_t off = tu_int(rng, 0, 1);
                tsmm_case(rng, g, p ? ABFT_PREC_S : ABFT_PREC_D, t, m, n, c, implicit,
                          want_abs, xabs, extra, off);
            }
    }
    /* every c in 1..16 on a ragged size, both precisions and directions, with and without
     * the abs companion, aligned and not */
    for (int64_t c = 1; c <= 16; ++c)
        for (int p = 0; p < 2; ++p)
            for (int t = 0; t < 2; ++t)
                tsmm_case(rng, g, p ? ABFT_PREC_S : ABFT_PREC_D, t, 517, 261, c, 0, (int)(c & 1),
                          (int)((c >> 1) & 1), c % 3 == 0 ? 1 : 0, (c >> 2) & 1);
    /* the implicit checksum weights in every alignment case */
    for (int p = 0; p < 2; ++p)
        for (int t = 0; t < 2; ++t)
            for (int a = 0; a < 4; ++a)
                tsmm_case(rng, g, p ? ABFT_PREC_S : ABFT_PREC_D, t, 1531, 389, 2, 1, a & 1, 0,
                          a & 2 ? 1 : 0, a == 3 ? 1 : 0);
    printf("tsmm: %d cases\n", n_tsmm_cases);
}

/* |op(A)|·[1, l+1] (len x 2, len = m for trans = 0, n for trans = 1) on the host: the
 * scale of the fp64 accumulation bound. */
static double *abs_times_v(abft_prec_t prec, int trans, const void *A, int64_t m, int64_t n,
                           int64_t lda) {
    const int64_t len = trans ? n : m;
    double *S = tu_alloc_d(len * 2 + 1);
    for (int64_t i = 0; i < len; ++i) S[i] = S[i + len] = 0.0;
    for (int64_t l = 0; l < n; ++l)
        for (int64_t i = 0; i < m; ++i) {
            double a = prec == ABFT_PREC_D ? ((const double *)A)[i + l * lda]
                                           : (double)((const float *)A)[i + l * lda];
            const int64_t o = trans ? l : i, w = trans ? i : l; /* output, weight index */
            S[o] += fabs(a);
            S[o + len] += fabs(a) * (double)(w + 1);
        }
    return S;
}

/* Two device results of len x 2 (ld = len) that must agree: bit for bit (bits), or else
 * within the fp64 accumulation bound 2(n+2)·2^-53·S over a sum of n terms. */
static void check_same(const char *what, const char *out, const double *dY, const double *dZ,
                       int64_t len, const double *S, int64_t n, int bits) {
    double *Y = tu_alloc_d(len * 2 + 1), *Z = tu_alloc_d(len * 2 + 1);
    to_host(Y, dY, (size_t)len * 2 * 8);
    to_host(Z, dZ, (size_t)len * 2 * 8);
    if (bits) {
        TU_CHECK(memcmp(Y, Z, (size_t)len * 2 * 8) == 0, "%s %s: differ in bits", what, out);
    } else {
        double worst = 0.0;
        for (int64_t t = 0; t < len * 2; ++t) {
            double e = fabs(Y[t] - Z[t]) / (2.0 * (double)(n + 2) * 0x1p-53 * S[t] + 1e-300);
            if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
        }
        TU_CHECK(worst <= 1.0, "%s %s: differ by %g of the bound", what, out, worst);
    }
    free(Y);
    free(Z);
}

/* A device tsmm result against the CPU oracle: h is the call with host copies of A, X and
 * Xabs (its Y and Yabs are not used; Yabs != NULL asks for the abs companion), dY and dYa
 * the device outputs at h's ldy and ldyabs. Within the fp64 accumulation bound
 * 2(len+2)·2^-53 of |op(A)|·|X| for Y and of the reference itself for Yabs. */
static void check_vs_cpu(const char *what, const abft_tsmm_args_t *h, const double *dY,
                         const double *dYa) {
    const int64_t yrows = h->trans ? h->cols : h->rows, len = h->trans ? h->rows : h->cols;
    const int64_t ny = h->ldy * h->c, na = h->ldyabs * h->c;
    double *Yr = tu_alloc_d(ny + 1), *Sc = tu_alloc_d(ny + 1), *Y = tu_alloc_d(ny + 1);
    double *Yar = tu_alloc_d(na + 1), *Ya = tu_alloc_d(na + 1), *dummy = tu_alloc_d(ny + 1);
    abft_kctx_t cpu = {NULL, NULL, NULL, NULL, -1};
    abft_tsmm_args_t ra = *h, sa = *h;
    ra.Y = Yr;
    ra.Yabs = h->Yabs != NULL ? Yar : NULL;
    TU_CHECK_STATUS(abft_cpu_tsmm(&cpu, &ra), ABFT_STATUS_SUCCESS);
    sa.Xabs = NULL; /* |op(A)|·|X| */
    sa.ldxabs = 0;
    sa.Y = dummy;
    sa.Yabs = Sc;
    sa.ldyabs = h->ldy;
    TU_CHECK_STATUS(abft_cpu_tsmm(&cpu, &sa), ABFT_STATUS_SUCCESS);
    const double tol = 2.0 * (double)(len + 2) * 0x1p-53;
    if (ny > 0) {
        to_host(Y, dY, (size_t)ny * 8);
        check_block(what, Y, Yr, Sc, yrows, h->c, h->ldy, h->ldy, tol);
    }
    if (h->Yabs != NULL && na > 0) {
        to_host(Ya, dYa, (size_t)na * 8);
        check_block(what, Ya, Yar, NULL, yrows, h->c, h->ldyabs, h->ldyabs, tol);
    }
    free(Yr);
    free(Sc);
    free(Y);
    free(Yar);
    free(Ya);
    free(dummy);
}

/* The split of the long dimension across blocks is added by the last block of each tile
 * inside the kernel (split_finish, arrival counters in the scratch) where that block's share
 * is small, else by a separate reduce launch; both add the partials in slice order. Each case
 * runs three times into poisoned outputs: the first against the CPU oracle (within the fp64
 * accumulation bound), the next two bit for bit against the first (each run finds the
 * counters the one before left at zero, or its outputs stay poisoned), with implicit and
 * explicit weights, |A| or not; sizes whose tiles are fewer than the device's block slots
 * (so the long dimension is split), ragged tiles, odd lda. */
static void test_tsmm_fused_bits(tu_rng_t *rng, gpuctx_t *g) {
    static const int64_t sizes[][3] = {{2048, 2048, 0}, {8192, 4096, 0}, {4099, 2053, 1},
                                       {700, 30000, 3}, {30000, 700, 0}, {129, 70001, 1}};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    int cases = 0;
    for (int s = 0; s < nsizes; ++s) {
        const int64_t m = sizes[s][0], n = sizes[s][1], lda = m + sizes[s][2];
        if (g_small && m * n > 3000000) continue;
        for (int t = 0; t < 2; ++t)
            for (int p = 0; p < 2; ++p)
                for (int v = 0; v < 4; ++v) { /* bit 0: |A|; bit 1: explicit X */
                    const abft_prec_t prec = p ? ABFT_PREC_S : ABFT_PREC_D;
                    size_t abytes;
                    void *A = host_matrix(rng, prec, m, n, lda, 0, &abytes);
                    const int64_t xlen = t ? m : n, ylen = t ? n : m;
                    double *X = host_small(rng, xlen, 2, xlen, 0);
                    void *dA = dup_to_dev(A, abytes);
                    double *dX = (double *)dup_to_dev(X, (size_t)xlen * 2 * 8);
                    double *hz = poisoned(ylen * 4);
                    double *dZ = (double *)dup_to_dev(hz, (size_t)ylen * 4 * 8);
                    free(hz);
                    abft_tsmm_args_t a = {prec, t, m, n, 2, dA, lda, (v & 2) ? dX : NULL,
                                          xlen, NULL, 0, dZ, ylen, (v & 1) ? dZ + 2 * ylen : NULL,
                                          ylen, 0};
                    TU_CHECK_STATUS(abft_cuda_tsmm(&g->ctx, &a), ABFT_STATUS_SUCCESS);
                    CU(cudaStreamSynchronize(g->stream));
                    CU(cudaGetLastError());
                    char what[160];
                    snprintf(what, sizeof what,
                             "tsmm %c trans=%d m=%lld n=%lld lda+%lld %s%s: split reduction",
                             p ? 's' : 'd', t, (long long)m, (long long)n,
                             (long long)sizes[s][2], (v & 2) ? "explicit X" : "implicit V",
                             (v & 1) ? " with |A|" : "");
                    abft_tsmm_args_t h = a;
                    h.A = A;
                    h.X = (v & 2) ? X : NULL;
                    check_vs_cpu(what, &h, a.Y, a.Yabs);
                    for (int rep = 0; rep < 2; ++rep) {
                        double *hp = poisoned(ylen * 4);
                        double *dY = (double *)dup_to_dev(hp, (size_t)ylen * 4 * 8);
                        free(hp);
                        a.Y = dY;
                        a.Yabs = (v & 1) ? dY + 2 * ylen : NULL;
                        TU_CHECK_STATUS(abft_cuda_tsmm(&g->ctx, &a), ABFT_STATUS_SUCCESS);
                        CU(cudaStreamSynchronize(g->stream));
                        CU(cudaGetLastError());
                        check_same(what, "op(A)·X", dY, dZ, ylen, NULL, 0, 1);
                        if (v & 1) check_same(what, "|op(A)|·|X|", dY + 2 * ylen, dZ + 2 * ylen,
                                              ylen, NULL, 0, 1);
                        cudaFree(dY);
                    }
                    ++cases;
                    free(A);
                    free(X);
                    cudaFree(dA);
                    cudaFree(dX);
                    cudaFree(dZ);
                }
    }
    printf("tsmm split reduction: oracle, then the same bits twice: %d cases\n", cases);
}

/* Explicit weights, each source the sizes choose: X read from global memory (rows kernel,
 * c = 2: global_weights), staged by asynchronous copies one stage ahead (the other explicit
 * cases of both kernels, fp32 c = 2 with |A| at 2 rows per thread), or staged while the block
 * waits (the rows kernel's fp32 c = 2 with |A| outside that size range), against the CPU
 * oracle within the fp64 accumulation bound. X with an odd ld (its second column
 * misaligned), c = 1, 2, 3, A·X alone, |A|·|X| (|X| taken from the staged X) and |A|·Xa, an
 * implicit X with an explicit Xa, sizes with a split of the long dimension, ragged tiles and
 * stages, odd lda, a base moved by one element, 0 and 1. */
static void test_tsmm_weights(tu_rng_t *rng, gpuctx_t *g) {
    /* m, n, lda - m, offset of the base in elements */
    static const int64_t sizes[][4] = {{1531, 389, 0, 0}, {4099, 2053, 1, 0}, {700, 30000, 0, 0},
                                       {8192, 4096, 0, 0}, {300, 9001, 1, 0}, {65537, 33, 1, 1},
                                       {2053, 1031, 2, 1}, {7, 3, 1, 1},     {1, 1, 0, 0},
                                       {0, 5, 0, 0},      {37, 0, 0, 0}};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    int cases = 0;
    for (int s = 0; s < nsizes; ++s) {
        const int64_t m = sizes[s][0], n = sizes[s][1], lda = (m > 1 ? m : 1) + sizes[s][2];
        const int64_t off = sizes[s][3];
        if (g_small && m * n > 3000000) continue;
        for (int t = 0; t < 2; ++t)
            for (int p = 0; p < 2; ++p)
                for (int v = 0; v < 7; ++v) {
                    /* 0 A·X; 1 with |A|·|X|; 2 with |A|·Xa; 3 c = 3 with |A|·Xa; 4 implicit
                     * X with |A|·Xa; 5 c = 3 with |A|·|X|; 6 c = 1 */
                    const int64_t c = v == 3 || v == 5 ? 3 : v == 6 ? 1 : 2;
                    const int yabs = v >= 1 && v <= 5;
                    const abft_prec_t prec = p ? ABFT_PREC_S : ABFT_PREC_D;
                    const size_t es = p ? 4 : 8;
                    const int64_t xlen = t ? m : n, ylen = t ? n : m;
                    size_t abytes;
                    void *A = host_matrix(rng, prec, m, n, lda, off, &abytes);
                    const int64_t ldx = xlen + 3;
                    double *X = host_small(rng, xlen, c, ldx, 0);
                    double *Xa = host_small(rng, xlen, c, ldx, 1);
                    void *dA = dup_to_dev(A, abytes);
                    const char *dAo = (const char *)dA + off * es;
                    double *dX = (double *)dup_to_dev(X, (size_t)(ldx * c + 1) * 8);
                    double *dXa = (double *)dup_to_dev(Xa, (size_t)(ldx * c + 1) * 8);
                    double *hp = poisoned(ylen * 8);
                    double *dY = (double *)dup_to_dev(hp, (size_t)(ylen * 8) * 8);
                    free(hp);
                    abft_tsmm_args_t a = {prec, t, m, n, c, dAo, lda,
                                          v == 4 ? NULL : dX, ldx,
                                          v >= 2 && v <= 4 ? dXa : NULL, ldx,
                                          dY, ylen,
                                          yabs ? dY + 4 * ylen : NULL, ylen, 0};
                    TU_CHECK_STATUS(abft_cuda_tsmm(&g->ctx, &a), ABFT_STATUS_SUCCESS);
                    CU(cudaStreamSynchronize(g->stream));
                    CU(cudaGetLastError());
                    char what[200];
                    snprintf(what, sizeof what,
                             "tsmm %c %s m=%lld n=%lld c=%lld lda+%lld off=%lld %s%s: explicit "
                             "weights",
                             p ? 's' : 'd', t ? "cols" : "rows", (long long)m, (long long)n,
                             (long long)c, (long long)sizes[s][2], (long long)off,
                             v == 4 ? "implicit X " : "",
                             !yabs ? "" : v == 1 || v == 5 ? "with |A|·|X|" : "with |A|·Xa");
                    abft_tsmm_args_t h = a;
                    h.A = (const char *)A + off * es;
                    h.X = v == 4 ? NULL : X;
                    h.Xabs = v >= 2 && v <= 4 ? Xa : NULL;
                    check_vs_cpu(what, &h, a.Y, a.Yabs);
                    ++cases;
                    free(A);
                    free(X);
                    free(Xa);
                    cudaFree(dA);
                    cudaFree(dX);
                    cudaFree(dXa);
                    cudaFree(dY);
                }
    }
    printf("tsmm explicit weights against the oracle: %d cases\n", cases);
}

/* Implicit weights (computed from the column index by the rows kernel, from the row index
 * by the cols kernel) and the same weights given explicitly, X = [1, l+1] with |X| taken
 * from X, on fresh random A: both paths run the same fp64 operations in the same order
 * (the weight 1 as an addition is fma(x, 1, s)), so where they also run the same launch
 * shape they give the same bits. Sizes with a split of the long dimension across blocks
 * (cols: the weight of row i is i + 1 of the matrix passed, in whichever slice it is),
 * ragged tiles, odd lda, a base moved by one element (the scalar loads), 0 and 1. */
static void test_tsmm_implicit_bits(tu_rng_t *rng, gpuctx_t *g) {
    /* m, n, lda - m, offset of the base in elements */
    static const int64_t sizes[][4] = {{1531, 389, 0, 0},  {4099, 2053, 1, 0},
                                       {30000, 700, 3, 0}, {700, 30000, 0, 0},
                                       {8192, 4096, 0, 0}, {65537, 33, 1, 1},
                                       {2053, 1031, 2, 1}, {7, 3, 1, 1},
                                       {1, 1, 0, 0},       {0, 5, 0, 0}};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    int cases = 0;
    for (int s = 0; s < nsizes; ++s) {
        const int64_t m = sizes[s][0], n = sizes[s][1], lda = (m > 1 ? m : 1) + sizes[s][2];
        const int64_t off = sizes[s][3];
        if (g_small && m * n > 3000000) continue;
        for (int t = 0; t < 2; ++t)
            for (int p = 0; p < 2; ++p)
                for (int ab = 0; ab < 2; ++ab) {
                    const abft_prec_t prec = p ? ABFT_PREC_S : ABFT_PREC_D;
                    const size_t es = p ? 4 : 8;
                    size_t abytes;
                    void *A = host_matrix(rng, prec, m, n, lda, off, &abytes);
                    const int64_t xlen = t ? m : n, ylen = t ? n : m, ldx = xlen + 1;
                    double *X = tu_alloc_d(ldx * 2);
                    for (int64_t l = 0; l < xlen; ++l) {
                        X[l] = 1.0;
                        X[l + ldx] = (double)(l + 1);
                    }
                    void *dA = dup_to_dev(A, abytes);
                    const char *dAo = (const char *)dA + off * es;
                    double *dX = (double *)dup_to_dev(X, (size_t)(ldx * 2) * 8);
                    double *dY = (double *)dmalloc((size_t)ylen * 2 * 8);
                    double *dYa = (double *)dmalloc((size_t)ylen * 2 * 8);
                    double *dZ = (double *)dmalloc((size_t)ylen * 2 * 8);
                    double *dZa = (double *)dmalloc((size_t)ylen * 2 * 8);
                    abft_tsmm_args_t ia = {prec, t, m, n, 2, dAo, lda, NULL, 0, NULL, 0,
                                           dY, ylen, ab ? dYa : NULL, ylen, 0};
                    abft_tsmm_args_t ea = {prec, t, m, n, 2, dAo, lda, dX, ldx, NULL, 0,
                                           dZ, ylen, ab ? dZa : NULL, ylen, 0};
                    TU_CHECK_STATUS(abft_cuda_tsmm(&g->ctx, &ia), ABFT_STATUS_SUCCESS);
                    TU_CHECK_STATUS(abft_cuda_tsmm(&g->ctx, &ea), ABFT_STATUS_SUCCESS);
                    CU(cudaStreamSynchronize(g->stream));
                    CU(cudaGetLastError());
                    /* Same launch shape, so the same bits: rows fp32, and cols (the lanes cap
                     * for an explicit X, c·32·lanes <= 256·sizeof(T), leaves the table's
                     * lanes at c = 2 in the size classes of these sizes, all <= 1 GB:
                     * <= 16 fp32, <= 32 fp64; the large class's fp32 32 would not be
                     * left). Rows fp64: the explicit path
                     * keeps more lanes than the implicit one (the tuning rule of fb2e813),
                     * so the sums run in another order: equal to within the fp64
                     * accumulation bound 2(len+2)·2^-53·(|op(A)|·V). So are the fp32 cases
                     * with |A| where the explicit path runs 2 rows per thread (per lane)
                     * against the implicit path's 4: the cols kernel at every size, the
                     * rows kernel for A of 64 MiB to 1.5 GiB (another split of the long
                     * dimension; run_tsmm's r2 and c2). */
                    const double abytes_all = (double)m * (double)n * (double)es;
                    const int rows2 = p != 0 && ab &&
                                      (t == 1 || (abytes_all > 64.0 * (1 << 20) &&
                                                  abytes_all <= 1.5 * (1 << 30)));
                    const int bits = (t == 1 || p != 0) && !rows2;
                    double *S = abs_times_v(prec, t, (const char *)A + off * es, m, n, lda);
                    char what[160];
                    snprintf(what, sizeof what,
                             "tsmm %c trans=%d m=%lld n=%lld lda+%lld off=%lld: implicit and "
                             "explicit",
                             p ? 's' : 'd', t, (long long)m, (long long)n,
                             (long long)sizes[s][2], (long long)off);
                    check_same(what, "op(A)·[1, l+1]", dY, dZ, ylen, S, t ? m : n, bits);
                    if (ab)
                        check_same(what, "|op(A)|·[1, l+1]", dYa, dZa, ylen, S, t ? m : n,
                                   bits);
                    free(S);
                    ++cases;
                    free(A);
                    free(X);
                    cudaFree(dA);
                    cudaFree(dX);
                    cudaFree(dY);
                    cudaFree(dYa);
                    cudaFree(dZ);
                    cudaFree(dZa);
                }
    }
    printf("tsmm implicit = explicit: %d cases\n", cases);
}

/* Cols kernel with the implicit weights (computed from the row index) against the CPU
 * oracle on fresh random A: sizes 0 and 1, no tile multiples, many slices of the rows across
 * blocks (65537 x 33), lda > m (random extra, odd ones included), aligned base and a base
 * moved by one element, both precisions, with and without |A|. */
static void test_tsmm_cols_implicit(tu_rng_t *rng, gpuctx_t *g) {
    static const int64_t sizes[][2] = {{0, 5},      {5, 0},      {1, 1},     {1, 7},
                                       {7, 1},      {3, 1000},   {513, 77},  {1000, 999},
                                       {2053, 1031}, {4099, 129}, {129, 4099}, {65537, 33},
                                       {30000, 700}};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    const int before = n_tsmm_cases;
    for (int s = 0; s < nsizes; ++s) {
        const int64_t m = sizes[s][0], n = sizes[s][1];
        if (g_small && m * n > 300000) continue;
        for (int p = 0; p < 2; ++p)
            for (int a = 0; a < 4; ++a)
                tsmm_case(rng, g, p ? ABFT_PREC_S : ABFT_PREC_D, 1, m, n, 2, 1, a & 1, 0,
                          EXTRAS[tu_int(rng, 0, 3)], a >> 1);
    }
    printf("tsmm cols implicit vs cpu: %d cases\n", n_tsmm_cases - before);
}

/* implicit: bit 1 X == NULL (P side, c1 = 2), bit 2 Z == NULL (Q side, c2 = 2). */
static void dual_case(tu_rng_t *rng, gpuctx_t *g, abft_prec_t prec, int64_t m, int64_t n,
                      int64_t c1, int64_t c2, int implicit, int pabs, int qabs, int64_t extra,
                      int64_t off) {
    char what[200];
    snprintf(what, sizeof what, "dual %c m=%lld n=%lld c1=%lld c2=%lld impl=%d pabs=%d qabs=%d lda+%lld off=%lld",
             prec == ABFT_PREC_D ? 'd' : 's', (long long)m, (long long)n, (long long)c1,
             (long long)c2, implicit, pabs, qabs, (long long)extra, (long long)off);
    const int64_t ldm = (m > 1 ? m : 1) + extra;
    size_t abytes;
    void *M = host_matrix(rng, prec, m, n, ldm, off, &abytes);
    const size_t es = prec == ABFT_PREC_D ? 8 : 4;
    const int64_t ldx = n + 3, ldz = m + 1, ldp = m + 2, ldq = n + 1;
    double *X = (implicit & 1) ? NULL : host_small(rng, n, c1, ldx, 0);
    double *Z = (implicit & 2) ? NULL : host_small(rng, m, c2, ldz, 0);
    const char *Mh = (const char *)M + off * es;
    abft_kctx_t cpu = {NULL, NULL, NULL, NULL, -1};
    double *Pr = tu_alloc_d(ldp * c1 + 1), *Par = tu_alloc_d(ldp * c1 + 1);
    double *Qr = tu_alloc_d(ldq * c2 + 1), *Qar = tu_alloc_d(ldq * c2 + 1);
    abft_dual_args_t ra = {prec, m, n, Mh, ldm, c1, X, ldx, NULL, 0, Pr, ldp, Par, ldp,
                           c2, Z, ldz, NULL, 0, Qr, ldq, Qar, ldq, 0};
    TU_CHECK_STATUS(abft_cpu_dual(&cpu, &ra), ABFT_STATUS_SUCCESS);
    void *dM = dup_to_dev(M, abytes);
    double *dX = X ? (double *)dup_to_dev(X, (size_t)(ldx * c1 + 1) * 8) : NULL;
    double *dZ = Z ? (double *)dup_to_dev(Z, (size_t)(ldz * c2 + 1) * 8) : NULL;
    double *P = poisoned(ldp * c1), *Pa = poisoned(ldp * c1);
    double *Q = poisoned(ldq * c2), *Qa = poisoned(ldq * c2);
    double *dP = (double *)dup_to_dev(P, (size_t)(ldp * c1) * 8);
    double *dPa = (double *)dup_to_dev(Pa, (size_t)(ldp * c1) * 8);
    double *dQ = (double *)dup_to_dev(Q, (size_t)(ldq * c2) * 8);
    double *dQa = (double *)dup_to_dev(Qa, (size_t)(ldq * c2) * 8);
    abft_dual_args_t ga = {prec, m, n, (const char *)dM + off * es, ldm, c1, dX, ldx, NULL, 0,
                           dP, ldp, pabs ? dPa : NULL, ldp, c2, dZ, ldz, NULL, 0, dQ, ldq,
                           qabs ? dQa : NULL, ldq, 0};
    TU_CHECK_STATUS(abft_cuda_dual(&g->ctx, &ga), ABFT_STATUS_SUCCESS);
    CU(cudaStreamSynchronize(g->stream));
    to_host(P, dP, (size_t)(ldp * c1) * 8);
    to_host(Pa, dPa, (size_t)(ldp * c1) * 8);
    to_host(Q, dQ, (size_t)(ldq * c2) * 8);
    to_host(Qa, dQa, (size_t)(ldq * c2) * 8);
    /* |M||X| and |M|^T|Z| are the CPU's abs outputs (Xabs = |X|): the tolerance scale. */
    check_block(what, P, Pr, Par, m, c1, ldp, ldp, 2.0 * (double)(n + 2) * 0x1p-53);
    check_block(what, Q, Qr, Qar, n, c2, ldq, ldq, 2.0 * (double)(m + 2) * 0x1p-53);
    if (pabs) check_block(what, Pa, Par, NULL, m, c1, ldp, ldp, 2.0 * (double)(n + 2) * 0x1p-53);
    if (qabs) check_block(what, Qa, Qar, NULL, n, c2, ldq, ldq, 2.0 * (double)(m + 2) * 0x1p-53);
    if (!pabs)
        for (int64_t i = 0; i < ldp * c1; ++i)
            if (Pa[i] != SENT) {
                TU_CHECK(Pa[i] == SENT, "%s: Pabs written though not asked", what);
                break;
            }
    cudaFree(dM);
    cudaFree(dX);
    cudaFree(dZ);
    cudaFree(dP);
    cudaFree(dPa);
    cudaFree(dQ);
    cudaFree(dQa);
    free(M);
    free(X);
    free(Z);
    free(Pr);
    free(Par);
    free(Qr);
    free(Qar);
    free(P);
    free(Pa);
    free(Q);
    free(Qa);
}

static void test_dual(tu_rng_t *rng, gpuctx_t *g) {
    static const int64_t sizes[][2] = {{0, 5},     {5, 0},      {1, 1},     {7, 7},
                                       {33, 65},   {513, 77},   {77, 513},  {1000, 999},
                                       {3001, 2999}, {30000, 700}, {700, 30000}};
    int cases = 0;
    for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); ++s) {
        int64_t m = sizes[s][0], n = sizes[s][1];
        if (g_small && m * n > 300000) continue;
        for (int p = 0; p < 2; ++p)
            for (int v = 0; v < 4; ++v) {
                /* both sides implicit, X only, Z only (the other side c <= 2: the implicit
                 * kernel instances), neither */
                const int implicit = 3 - v;
                const int64_t cx = implicit == 0 ? 16 : 2;
                int64_t c1 = (implicit & 1) ? 2 : tu_int(rng, 1, cx);
                int64_t c2 = (implicit & 2) ? 2 : tu_int(rng, 1, cx);
                dual_case(rng, g, p ? ABFT_PREC_S : ABFT_PREC_D, m, n, c1, c2, implicit,
                          (int)tu_int(rng, 0, 1), (int)tu_int(rng, 0, 1),
                          EXTRAS[tu_int(rng, 0, 3)], tu_int(rng, 0, 1));
                ++cases;
            }
    }
    for (int64_t c = 1; c <= 16; c += 3)
        for (int p = 0; p < 2; ++p) {
            dual_case(rng, g, p ? ABFT_PREC_S : ABFT_PREC_D, 700, 333, c, 17 - c, 0, 1, 1, 1, 1);
            ++cases;
        }
    printf("dual: %d cases\n", cases);
}

/* Dual kernel: implicit weights on one or both sides (computed from the indices) and the
 * same weights given explicitly, X = [1, l+1] and Z = [1, i+1], run the same launch shape
 * and the same fp64 operations: the same bits for P, Q and the abs companions, both
 * precisions (sizes with a split in both directions, ragged rows, odd ldm, misaligned M). */
static void test_dual_implicit_bits(tu_rng_t *rng, gpuctx_t *g) {
    /* The table's bps is capped at each instance's occupancy (fp32: 3 blocks per SM for
     * the implicit kernels, 2 for the explicit ones), which splits the columns differently;
     * the same bits need the same launch shape: pin bps = 2 for this test. */
    abft_cuda_tune_override(0, 0, 2);
    static const int64_t sizes[][4] = {{1531, 389, 0, 0},  {4099, 2053, 1, 1},
                                       {30000, 700, 3, 0}, {700, 30000, 0, 1},
                                       {8192, 4096, 0, 0}, {1, 1, 0, 0}};
    int cases = 0;
    for (int s = 0; s < 6; ++s) {
        const int64_t m = sizes[s][0], n = sizes[s][1], ldm = m + sizes[s][2];
        const int64_t off = sizes[s][3];
        if (g_small && m * n > 3000000) continue;
        for (int p = 0; p < 2; ++p)
            for (int impl = 1; impl <= 3; ++impl) {
                const abft_prec_t prec = p ? ABFT_PREC_S : ABFT_PREC_D;
                const size_t es = p ? 4 : 8;
                const int ab = (int)tu_int(rng, 0, 1);
                size_t abytes;
                void *M = host_matrix(rng, prec, m, n, ldm, off, &abytes);
                double *X = tu_alloc_d(n * 2), *Z = tu_alloc_d(m * 2);
                for (int64_t l = 0; l < n; ++l) X[l] = 1.0, X[l + n] = (double)(l + 1);
                for (int64_t i = 0; i < m; ++i) Z[i] = 1.0, Z[i + m] = (double)(i + 1);
                void *dM = dup_to_dev(M, abytes);
                const char *dMo = (const char *)dM + off * es;
                double *dX = (double *)dup_to_dev(X, (size_t)n * 16);
                double *dZ = (double *)dup_to_dev(Z, (size_t)m * 16);
                double *o[8];
                for (int k = 0; k < 8; ++k)
                    o[k] = (double *)dmalloc((size_t)(k & 2 ? n : m) * 16);
                /* o[0..3]: P, Pa, Q, Qa of the implicit run; o[4..7]: of the explicit run */
                abft_dual_args_t ia = {prec, m, n, dMo, ldm, 2, (impl & 1) ? NULL : dX, n,
                                       NULL, 0, o[0], m, ab ? o[1] : NULL, m,
                                       2, (impl & 2) ? NULL : dZ, m, NULL, 0, o[2], n,
                                       ab ? o[3] : NULL, n, 0};
                abft_dual_args_t ea = {prec, m, n, dMo, ldm, 2, dX, n, NULL, 0, o[4], m,
                                       ab ? o[5] : NULL, m, 2, dZ, m, NULL, 0, o[6], n,
                                       ab ? o[7] : NULL, n, 0};
                TU_CHECK_STATUS(abft_cuda_dual(&g->ctx, &ia), ABFT_STATUS_SUCCESS);
                TU_CHECK_STATUS(abft_cuda_dual(&g->ctx, &ea), ABFT_STATUS_SUCCESS);
                CU(cudaStreamSynchronize(g->stream));
                CU(cudaGetLastError());
                char what[120];
                snprintf(what, sizeof what,
                         "dual %c m=%lld n=%lld impl=%d: implicit and explicit", p ? 's' : 'd',
                         (long long)m, (long long)n, impl);
                check_same(what, "P", o[0], o[4], m, NULL, n, 1);
                check_same(what, "Q", o[2], o[6], n, NULL, m, 1);
                if (ab) {
                    check_same(what, "Pabs", o[1], o[5], m, NULL, n, 1);
                    check_same(what, "Qabs", o[3], o[7], n, NULL, m, 1);
                }
                ++cases;
                for (int k = 0; k < 8; ++k) cudaFree(o[k]);
                cudaFree(dM);
                cudaFree(dX);
                cudaFree(dZ);
                free(M);
                free(X);
                free(Z);
            }
    }
    abft_cuda_tune_override(0, 0, 0);
    printf("dual implicit = explicit bits: %d cases\n", cases);
}

/* ---- compare ----------------------------------------------------------------------------- */
static void compare_case(tu_rng_t *rng, gpuctx_t *g, int64_t n, int use_p, int64_t max_list,
                         double frac_bad, int with_nan) {
    char what[160];
    snprintf(what, sizeof what, "compare n=%lld use_p=%d max_list=%lld bad=%.3f nan=%d",
             (long long)n, use_p, (long long)max_list, frac_bad, with_nan);
    const int64_t ld = n + 3, cnt = ld * 2 + 1;
    double *R = tu_alloc_d(cnt), *Ra = tu_alloc_d(cnt), *S = tu_alloc_d(cnt),
           *Sa = tu_alloc_d(cnt), *P = tu_alloc_d(cnt), *Pa = tu_alloc_d(cnt);
    const double alpha = tu_range(rng, -2, 2), beta = use_p ? tu_range(rng, -2, 2) : 0.0;
    for (int64_t i = 0; i < cnt; ++i) {
        S[i] = tu_range(rng, -1, 1);
        P[i] = tu_range(rng, -1, 1);
        Sa[i] = fabs(S[i]) + tu_range(rng, 0, 1);
        Pa[i] = fabs(P[i]) + tu_range(rng, 0, 1);
        Ra[i] = tu_range(rng, 0.5, 2);
        double noise = tu_range(rng, -1e-14, 1e-14);
        if (tu_uniform(rng) < frac_bad) noise = tu_range(rng, -1, 1);
        R[i] = alpha * S[i] + beta * P[i] + noise;
        if (tu_uniform(rng) < 0.02) R[i] = alpha * S[i] + beta * P[i]; /* d == 0 cases */
    }
    if (with_nan && n > 3) {
        R[n / 2] = NAN;
        Sa[ld + n / 3] = INFINITY;
    }
    const double coef_s = 1e-13, coef_r = 1e-13, floor_ = 1e-300;
    int64_t nf_c = -1, nf_g = -2;
    double mr_c = -1, mr_g = -2;
    int64_t *list_c = (int64_t *)calloc((size_t)(max_list + 1), 8);
    int64_t *list_g = (int64_t *)calloc((size_t)(max_list + 1), 8);
    abft_kctx_t cpu = {NULL, NULL, NULL, NULL, -1};
    abft_compare_args_t ca = {n, R, ld, Ra, ld, S, ld, Sa, ld, use_p ? P : NULL, ld, Pa, ld,
                              alpha, beta, coef_s, coef_r, floor_, max_list, list_c, &nf_c,
                              &mr_c};
    TU_CHECK_STATUS(abft_cpu_compare(&cpu, &ca, 1), ABFT_STATUS_SUCCESS);
    double *dR = (double *)dup_to_dev(R, (size_t)cnt * 8), *dRa = (double *)dup_to_dev(Ra, (size_t)cnt * 8);
    double *dS = (double *)dup_to_dev(S, (size_t)cnt * 8), *dSa = (double *)dup_to_dev(Sa, (size_t)cnt * 8);
    double *dP = (double *)dup_to_dev(P, (size_t)cnt * 8), *dPa = (double *)dup_to_dev(Pa, (size_t)cnt * 8);
    abft_compare_args_t ga = {n, dR, ld, dRa, ld, dS, ld, dSa, ld, use_p ? dP : NULL, ld, dPa, ld,
                              alpha, beta, coef_s, coef_r, floor_, max_list,
                              max_list ? list_g : NULL, &nf_g, &mr_g};
    TU_CHECK_STATUS(abft_cuda_compare(&g->ctx, &ga, 1), ABFT_STATUS_SUCCESS);
    TU_CHECK(nf_g == nf_c, "%s: nflagged gpu %lld cpu %lld", what, (long long)nf_g, (long long)nf_c);
    TU_CHECK(mr_g == mr_c || (isinf(mr_g) && isinf(mr_c)), "%s: max_ratio gpu %.17g cpu %.17g",
             what, mr_g, mr_c);
    int64_t nl = nf_c < max_list ? nf_c : max_list;
    for (int64_t i = 0; i < nl; ++i)
        if (list_g[i] != list_c[i]) {
            TU_CHECK(list_g[i] == list_c[i], "%s: list[%lld] gpu %lld cpu %lld", what,
                     (long long)i, (long long)list_g[i], (long long)list_c[i]);
            break;
        }
    TU_CHECK(list_g[max_list] == 0, "%s: list written past max_list", what);
    /* Two jobs in one call (the full checksums' sides): this one again, and its first
     * n/2 + 1 entries with a shorter list, each against its own CPU result. */
    const int64_t n2 = n > 0 ? n / 2 + 1 : 0, ml2 = max_list / 2 + 1;
    int64_t nf_c2 = -1, nf_g1 = -2, nf_g2 = -2;
    double mr_c2 = -1, mr_g1 = -2, mr_g2 = -2;
    int64_t *list_c2 = (int64_t *)calloc((size_t)(ml2 + 1), 8);
    int64_t *list_g1 = (int64_t *)calloc((size_t)(max_list + 1), 8);
    int64_t *list_g2 = (int64_t *)calloc((size_t)(ml2 + 1), 8);
    abft_compare_args_t cb = ca;
    cb.n = n2, cb.max_list = ml2, cb.list = list_c2, cb.nflagged = &nf_c2, cb.max_ratio = &mr_c2;
    TU_CHECK_STATUS(abft_cpu_compare(&cpu, &cb, 1), ABFT_STATUS_SUCCESS);
    abft_compare_args_t jobs[2] = {ga, ga};
    jobs[0].list = max_list ? list_g1 : NULL, jobs[0].nflagged = &nf_g1, jobs[0].max_ratio = &mr_g1;
    jobs[1].n = n2, jobs[1].max_list = ml2, jobs[1].list = list_g2, jobs[1].nflagged = &nf_g2;
    jobs[1].max_ratio = &mr_g2;
    TU_CHECK_STATUS(abft_cuda_compare(&g->ctx, jobs, 2), ABFT_STATUS_SUCCESS);
    TU_CHECK(nf_g1 == nf_c && nf_g2 == nf_c2, "%s: two jobs: nflagged gpu %lld %lld cpu %lld %lld",
             what, (long long)nf_g1, (long long)nf_g2, (long long)nf_c, (long long)nf_c2);
    TU_CHECK((mr_g1 == mr_c || (isinf(mr_g1) && isinf(mr_c))) &&
                 (mr_g2 == mr_c2 || (isinf(mr_g2) && isinf(mr_c2))),
             "%s: two jobs: max_ratio gpu %.17g %.17g cpu %.17g %.17g", what, mr_g1, mr_g2, mr_c,
             mr_c2);
    const int64_t nl2 = nf_c2 < ml2 ? nf_c2 : ml2;
    TU_CHECK(memcmp(list_g1, list_c, (size_t)nl * 8) == 0 &&
                 memcmp(list_g2, list_c2, (size_t)nl2 * 8) == 0 && list_g1[max_list] == 0 &&
                 list_g2[ml2] == 0,
             "%s: two jobs: lists differ from the CPU's or run past max_list", what);
    free(list_c2);
    free(list_g1);
    free(list_g2);
    cudaFree(dR);
    cudaFree(dRa);
    cudaFree(dS);
    cudaFree(dSa);
    cudaFree(dP);
    cudaFree(dPa);
    free(R);
    free(Ra);
    free(S);
    free(Sa);
    free(P);
    free(Pa);
    free(list_c);
    free(list_g);
}

static void test_compare(tu_rng_t *rng, gpuctx_t *g) {
    static const int64_t ns[] = {0, 1, 5, 2047, 2048, 2049, 100003};
    int cases = 0;
    for (int k = 0; k < (int)(sizeof ns / sizeof ns[0]); ++k) {
        int64_t n = ns[k];
        if (g_small && n > 5000) continue;
        const int64_t lists[] = {0, 1, 7, n};
        for (int l = 0; l < 4; ++l)
            for (int up = 0; up < 2; ++up) {
                double frac = FRACS[(l + up) % 4];
                compare_case(rng, g, n, up, lists[l], frac, (l + k) % 3 == 0);
                ++cases;
            }
    }
    printf("compare: %d cases\n", cases);
}

/* ---- gemm and unit roundoff ------------------------------------------------------------- */
static void gemm_case(tu_rng_t *rng, gpuctx_t *g, abft_prec_t prec, int ta, int tb, int64_t m,
                      int64_t n, int64_t k) {
    const size_t es = prec == ABFT_PREC_D ? 8 : 4;
    int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    int64_t lda = (ar > 1 ? ar : 1) + 1, ldb = (br > 1 ? br : 1) + 2, ldc = (m > 1 ? m : 1) + 1;
    size_t ab, bb, cb;
    void *A = host_matrix(rng, prec, ar, ac, lda, 0, &ab);
    void *B = host_matrix(rng, prec, br, bc, ldb, 0, &bb);
    void *C = host_matrix(rng, prec, m, n, ldc, 0, &cb);
    void *Cr = malloc(cb);
    memcpy(Cr, C, cb);
    double alpha = 1.5, beta = -0.5;
    abft_kctx_t cpu = {NULL, NULL, NULL, NULL, -1};
    abft_gemm_args_t ra = {prec, ta, tb, m, n, k, alpha, beta, A, lda, B, ldb, Cr, ldc};
    TU_CHECK_STATUS(abft_cpu_gemm(&cpu, &ra), ABFT_STATUS_SUCCESS);
    void *dA = dup_to_dev(A, ab), *dB = dup_to_dev(B, bb), *dC = dup_to_dev(C, cb);
    /* A borrowed handle's stream and pointer mode must come back as they were. */
    cublasHandle_t h = (cublasHandle_t)g->ctx.blas;
    cudaStream_t other;
    CU(cudaStreamCreate(&other));
    cublasSetStream(h, other);
    cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
    abft_gemm_args_t ga = {prec, ta, tb, m, n, k, alpha, beta, dA, lda, dB, ldb, dC, ldc};
    TU_CHECK_STATUS(abft_cuda_gemm(&g->ctx, &ga), ABFT_STATUS_SUCCESS);
    CU(cudaStreamSynchronize(g->stream));
    cudaStream_t s_after;
    cublasPointerMode_t pm_after;
    cublasGetStream(h, &s_after);
    cublasGetPointerMode(h, &pm_after);
    TU_CHECK(s_after == other, "gemm did not restore the cuBLAS stream");
    TU_CHECK(pm_after == CUBLAS_POINTER_MODE_DEVICE, "gemm did not restore the pointer mode");
    cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
    cublasSetStream(h, NULL);
    CU(cudaStreamDestroy(other));
    void *Cg = malloc(cb);
    to_host(Cg, dC, cb);
    const double u = prec == ABFT_PREC_D ? 0x1p-53 : 0x1p-24;
    int bad = 0;
    for (int64_t j = 0; j < n && bad < 3; ++j)
        for (int64_t i = 0; i < ldc && bad < 3; ++i) {
            double gv, rv, c0;
            if (prec == ABFT_PREC_D) {
                gv = ((double *)Cg)[i + j * ldc];
                rv = ((double *)Cr)[i + j * ldc];
                c0 = ((double *)C)[i + j * ldc];
            } else {
                gv = ((float *)Cg)[i + j * ldc];
                rv = ((float *)Cr)[i + j * ldc];
                c0 = ((float *)C)[i + j * ldc];
            }
            if (i >= m) {
                if (gv != c0) {
                    ++bad;
                    TU_CHECK(gv == c0, "gemm: padding of C changed");
                }
                continue;
            }
            double sc = fabs(beta * c0);
            for (int64_t l = 0; l < k; ++l) {
                int64_t ia = ta ? l + i * lda : i + l * lda, ib = tb ? j + l * ldb : l + j * ldb;
                double av = prec == ABFT_PREC_D ? ((double *)A)[ia] : ((float *)A)[ia];
                double bv = prec == ABFT_PREC_D ? ((double *)B)[ib] : ((float *)B)[ib];
                sc += fabs(alpha * av * bv);
            }
            double tol = 4.0 * (double)(k + 3) * u * sc + 1e-300;
            if (!(fabs(gv - rv) <= tol)) {
                ++bad;
                TU_CHECK(fabs(gv - rv) <= tol, "gemm %c %d%d m=%lld n=%lld k=%lld (%lld,%lld): %g vs %g",
                         prec == ABFT_PREC_D ? 'd' : 's', ta, tb, (long long)m, (long long)n,
                         (long long)k, (long long)i, (long long)j, gv, rv);
            }
        }
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    free(A);
    free(B);
    free(C);
    free(Cr);
    free(Cg);
    (void)es;
}

static void test_gemm(tu_rng_t *rng, gpuctx_t *g) {
    static const int64_t dims[][3] = {{0, 3, 4}, {3, 0, 4}, {5, 3, 0}, {1, 1, 1},
                                      {5, 3, 4}, {64, 33, 17}, {257, 130, 99}};
    for (int d = 0; d < (int)(sizeof dims / sizeof dims[0]); ++d)
        for (int p = 0; p < 2; ++p)
            for (int t = 0; t < 4; ++t)
                gemm_case(rng, g, p ? ABFT_PREC_S : ABFT_PREC_D, t & 1, t >> 1, dims[d][0],
                          dims[d][1], dims[d][2]);
    cublasHandle_t h = (cublasHandle_t)g->ctx.blas;
    abft_math_t mm = ABFT_MATH_HANDLE;
    TU_CHECK(abft_cuda_blas_math(h, ABFT_PREC_D, &mm) == ABFT_STATUS_SUCCESS &&
                 mm == ABFT_MATH_IEEE, "fp64 default");
    TU_CHECK(abft_cuda_blas_math(h, ABFT_PREC_S, &mm) == ABFT_STATUS_SUCCESS &&
                 mm == ABFT_MATH_IEEE, "fp32 default");
    cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
    TU_CHECK(abft_cuda_blas_math(h, ABFT_PREC_S, &mm) == ABFT_STATUS_SUCCESS &&
                 mm == ABFT_MATH_TF32, "fp32 tf32");
    TU_CHECK(abft_cuda_blas_math(h, ABFT_PREC_D, &mm) == ABFT_STATUS_SUCCESS &&
                 mm == ABFT_MATH_IEEE, "fp64 under tf32");
    cublasSetMathMode(h, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH);
    TU_CHECK(abft_cuda_blas_math(h, ABFT_PREC_D, &mm) == ABFT_STATUS_NOT_SUPPORTED,
             "fp64 emulation refused");
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    printf("gemm: done\n");
}

/* ---- public API on a CUDA handle ---------------------------------------------------------- */
static void test_public(tu_rng_t *rng) {
    abft_handle_t hg = NULL, hc = NULL;
    TU_CHECK_STATUS(abft_create(&hg, ABFT_BACKEND_CUDA), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_create(&hc, ABFT_BACKEND_CPU), ABFT_STATUS_SUCCESS);
    if (!hg || !hc) return;
    const int64_t m = 1203, n = 777, lda = m + 5;
    double *A = tu_alloc_d(lda * n);
    float *As = tu_alloc_s(lda * n);
    tu_fill_d(rng, TU_UNIFORM, m, n, A, lda);
    tu_fill_s(rng, TU_WIDE, m, n, As, lda);
    double *dA = (double *)dup_to_dev(A, (size_t)(lda * n) * 8);
    float *dAs = (float *)dup_to_dev(As, (size_t)(lda * n) * 4);
    double *Rc = tu_alloc_d(m * 2), *Rac = tu_alloc_d(m * 2), *Rg = tu_alloc_d(m * 2),
           *Rag = tu_alloc_d(m * 2);
    double *dR = (double *)dmalloc((size_t)m * 16), *dRa = (double *)dmalloc((size_t)m * 16);
    /* rows, fp64, with bound */
    TU_CHECK_STATUS(abft_dchecksum_rows(hc, m, n, A, lda, Rc, m, Rac, m), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_dchecksum_rows(hg, m, n, dA, lda, dR, m, dRa, m), ABFT_STATUS_SUCCESS);
    to_host(Rg, dR, (size_t)m * 16);
    to_host(Rag, dRa, (size_t)m * 16);
    check_block("public dchecksum_rows", Rg, Rc, Rac, m, 2, m, m, 2.0 * (n + 2) * 0x1p-53);
    check_block("public dchecksum_rows abs", Rag, Rac, NULL, m, 2, m, m, 2.0 * (n + 2) * 0x1p-53);
    /* cols, fp32 */
    double *Kc = tu_alloc_d(n * 2), *Kac = tu_alloc_d(n * 2), *Kg = tu_alloc_d(n * 2);
    double *dK = (double *)dmalloc((size_t)n * 16);
    TU_CHECK_STATUS(abft_schecksum_cols(hc, m, n, As, lda, Kc, n, Kac, n), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_schecksum_cols(hg, m, n, dAs, lda, dK, n, NULL, 0), ABFT_STATUS_SUCCESS);
    to_host(Kg, dK, (size_t)n * 16);
    check_block("public schecksum_cols", Kg, Kc, Kac, n, 2, n, n, 2.0 * (m + 2) * 0x1p-53);
    /* dual fp64 with explicit weights */
    const int64_t c1 = 3, c2 = 5;
    double *X = tu_alloc_d(n * c1), *Z = tu_alloc_d(m * c2);
    tu_fill_d(rng, TU_UNIFORM, n, c1, X, n);
    tu_fill_d(rng, TU_UNIFORM, m, c2, Z, m);
    double *Pc = tu_alloc_d(m * c1), *Qc = tu_alloc_d(n * c2), *Pg = tu_alloc_d(m * c1),
           *Qg = tu_alloc_d(n * c2);
    double *dX = (double *)dup_to_dev(X, (size_t)(n * c1) * 8),
           *dZ = (double *)dup_to_dev(Z, (size_t)(m * c2) * 8);
    double *dP = (double *)dmalloc((size_t)(m * c1) * 8), *dQ = (double *)dmalloc((size_t)(n * c2) * 8);
    TU_CHECK_STATUS(abft_ddual(hc, m, n, A, lda, c1, X, n, Pc, m, c2, Z, m, Qc, n),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_ddual(hg, m, n, dA, lda, c1, dX, n, dP, m, c2, dZ, m, dQ, n),
                    ABFT_STATUS_SUCCESS);
    to_host(Pg, dP, (size_t)(m * c1) * 8);
    to_host(Qg, dQ, (size_t)(n * c2) * 8);
    /* tolerance scale |A||X|, |A|^T|Z| from the CPU oracle's abs outputs */
    double *Pac = tu_alloc_d(m * c1), *Qac = tu_alloc_d(n * c2);
    abft_kctx_t cpu = {NULL, NULL, NULL, NULL, -1};
    abft_dual_args_t sa = {ABFT_PREC_D, m, n, A, lda, c1, X, n, NULL, 0, NULL, m, Pac, m,
                           c2, Z, m, NULL, 0, NULL, n, Qac, n, 0};
    double *Ptmp = tu_alloc_d(m * c1), *Qtmp = tu_alloc_d(n * c2);
    sa.P = Ptmp;
    sa.Q = Qtmp;
    TU_CHECK_STATUS(abft_cpu_dual(&cpu, &sa), ABFT_STATUS_SUCCESS);
    check_block("public ddual P", Pg, Pc, Pac, m, c1, m, m, 2.0 * (n + 2) * 0x1p-53);
    check_block("public ddual Q", Qg, Qc, Qac, n, c2, n, n, 2.0 * (m + 2) * 0x1p-53);
    free(Pac);
    free(Qac);
    free(Ptmp);
    free(Qtmp);
    abft_destroy(hg);
    abft_destroy(hc);
    cudaFree(dA);
    cudaFree(dAs);
    cudaFree(dR);
    cudaFree(dRa);
    cudaFree(dK);
    cudaFree(dX);
    cudaFree(dZ);
    cudaFree(dP);
    cudaFree(dQ);
    free(A);
    free(As);
    free(Rc);
    free(Rac);
    free(Rg);
    free(Rag);
    free(Kc);
    free(Kac);
    free(Kg);
    free(X);
    free(Z);
    free(Pc);
    free(Qc);
    free(Pg);
    free(Qg);
    printf("public API: done\n");
}

/* ---- programmatic dependent launch (abft_cuda_common.cuh) -------------------------------
 * The pass kernels may be scheduled while the kernel before them on the stream still runs.
 * Here that kernel lets dependents launch at its first instruction, spins about 20 ms, and
 * only then writes the matrix: the rows pass, the cols pass, the dual pass (with its
 * separate reduce launch) and the compare queued behind it must each see the written values. The values are
 * small integers, so every sum is exact in any order and compared for equality. */
__global__ void late_writer(double *A, int64_t m, int64_t n, int64_t ld, long long cycles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
    for (int64_t e = threadIdx.x; e < m * n; e += blockDim.x) {
        const int64_t i = e % m, j = e / m;
        A[i + j * ld] = (double)((3 * i + j) % 7 + 1);
    }
}

int abft_cuda_pdl_ok(int device); /* kernels/cuda/abft_cuda_common.cuh */

/* Zero the m x n matrix A, then queue late_writer over it on the stream (about 20 ms). */
static void queue_late_write(gpuctx_t *g, double *A, int64_t m, int64_t n, int64_t ld, int khz) {
    CU(cudaMemsetAsync(A, 0, sizeof(double) * (size_t)(ld * n), g->stream));
    late_writer<<<1, 256, 0, g->stream>>>(A, m, n, ld, (long long)(20.0 * (double)khz));
    CU(cudaGetLastError());
}

static void test_pdl(gpuctx_t *g) {
    int dev = 0, khz = 0, major = 0;
    CU(cudaGetDevice(&dev));
    CU(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
    CU(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    /* PDL is taken exactly where the device has it and runs code built for sm_90+ (this
     * file and the library come from the same architecture list) */
    cudaFuncAttributes fa;
    CU(cudaFuncGetAttributes(&fa, late_writer));
    const int want = major >= 9 && fa.ptxVersion >= 90;
    TU_CHECK(abft_cuda_pdl_ok(g->ctx.device) == want, "pdl: taken %d, expected %d (cc %d, ptx %d)",
             abft_cuda_pdl_ok(g->ctx.device), want, major, fa.ptxVersion);
    const int64_t m = 3001, n = 300, ld = m + 5;
    double *dA = NULL, *dY = NULL, *dT = NULL, *dP = NULL, *dQ = NULL;
    CU(cudaMalloc((void **)&dA, sizeof(double) * (size_t)(ld * n)));
    CU(cudaMalloc((void **)&dY, sizeof(double) * (size_t)(m * 2)));
    CU(cudaMalloc((void **)&dT, sizeof(double) * (size_t)(n * 2)));
    CU(cudaMalloc((void **)&dP, sizeof(double) * (size_t)(m * 2)));
    CU(cudaMalloc((void **)&dQ, sizeof(double) * (size_t)(n * 2)));
    /* expected: Y = A·V (m x 2), T = A^T·V (n x 2), V = [1, l+1] */
    double *eY = tu_alloc_d(m * 2), *eT = tu_alloc_d(n * 2);
    for (int64_t i = 0; i < m; ++i) eY[i] = eY[i + m] = 0.0;
    for (int64_t j = 0; j < n; ++j) eT[j] = eT[j + n] = 0.0;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
            const double a = (double)((3 * i + j) % 7 + 1);
            eY[i] += a, eY[i + m] += a * (double)(j + 1);
            eT[j] += a, eT[j + n] += a * (double)(i + 1);
        }
    double *hY = tu_alloc_d(m * 2), *hT = tu_alloc_d(n * 2), *hP = tu_alloc_d(m * 2),
           *hQ = tu_alloc_d(n * 2);
    for (int round = 0; round < 2; ++round) {
        queue_late_write(g, dA, m, n, ld, khz);
        abft_tsmm_args_t r = {ABFT_PREC_D, 0, m, n, 2, dA, ld, NULL, 0, NULL, 0, dY, m, NULL, 0, 0};
        TU_CHECK_STATUS(abft_cuda_tsmm(&g->ctx, &r), ABFT_STATUS_SUCCESS);
        if (round == 1) queue_late_write(g, dA, m, n, ld, khz); /* cols pass right behind */
        abft_tsmm_args_t t = {ABFT_PREC_D, 1, m, n, 2, dA, ld, NULL, 0, NULL, 0, dT, n, NULL, 0, 0};
        TU_CHECK_STATUS(abft_cuda_tsmm(&g->ctx, &t), ABFT_STATUS_SUCCESS);
        if (round == 1) queue_late_write(g, dA, m, n, ld, khz); /* dual pass right behind */
        abft_dual_args_t d = {ABFT_PREC_D, m, n, dA, ld, 2, NULL, 0, NULL, 0, dP, m, NULL, 0,
                              2, NULL, 0, NULL, 0, dQ, n, NULL, 0, 0};
        TU_CHECK_STATUS(abft_cuda_dual(&g->ctx, &d), ABFT_STATUS_SUCCESS);
        CU(cudaStreamSynchronize(g->stream));
        CU(cudaMemcpy(hY, dY, sizeof(double) * (size_t)(m * 2), cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(hT, dT, sizeof(double) * (size_t)(n * 2), cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(hP, dP, sizeof(double) * (size_t)(m * 2), cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(hQ, dQ, sizeof(double) * (size_t)(n * 2), cudaMemcpyDeviceToHost));
        int64_t bad = 0;
        for (int64_t e = 0; e < m * 2; ++e) bad += (hY[e] != eY[e]) + (hP[e] != eY[e]);
        for (int64_t e = 0; e < n * 2; ++e) bad += (hT[e] != eT[e]) + (hQ[e] != eT[e]);
        TU_CHECK(bad == 0, "pdl round %d (cc %d): %lld sums differ from the written matrix's "
                 "(a pass read it before the kernel before it had written it)", round, major,
                 (long long)bad);
    }
    /* The compare behind the writer: R (m x 2) written late must equal S, uploaded before. */
    {
        double *hS = tu_alloc_d(m * 2), *ones = tu_alloc_d(m * 2);
        for (int64_t e = 0; e < m * 2; ++e) {
            hS[e] = (double)((3 * (e % m) + e / m) % 7 + 1);
            ones[e] = 1.0;
        }
        double *dS = (double *)dup_to_dev(hS, sizeof(double) * (size_t)(m * 2));
        double *dO = (double *)dup_to_dev(ones, sizeof(double) * (size_t)(m * 2));
        queue_late_write(g, dY, m, 2, m, khz);
        int64_t nf = -1;
        double mr = -1.0;
        abft_compare_args_t ca = {m, dY, m, dO, m, dS, m, dO, m, NULL, 0, NULL, 0,
                                  1.0, 0.0, 0.0, 0.0, 0.5, 0, NULL, &nf, &mr};
        TU_CHECK_STATUS(abft_cuda_compare(&g->ctx, &ca, 1), ABFT_STATUS_SUCCESS);
        TU_CHECK(nf == 0 && mr == 0.0, "pdl: compare behind the writer flagged %lld rows "
                 "(max ratio %g): it read R before it was written", (long long)nf, mr);
        cudaFree(dS);
        cudaFree(dO);
        free(hS);
        free(ones);
    }
    printf("pdl (%s, cc %d, ptx %d): passes and the compare behind an early-triggering writer "
           "see its data\n", want ? "on" : "off", major, fa.ptxVersion);
    free(eY);
    free(eT);
    free(hY);
    free(hT);
    free(hP);
    free(hQ);
    cudaFree(dA);
    cudaFree(dY);
    cudaFree(dT);
    cudaFree(dP);
    cudaFree(dQ);
}

/* ---- the GEMM gate (abft_cuda_gate.cu) ------------------------------------------------------
 * Behind a 40 ms kernel on the stream: from the second call of a signature on (the first
 * takes the host path), screen + gemm_gated return to the host long before that kernel ends
 * (no round trip); on the host path (a signature's first call) gemm_gated waits for it.
 * Finite screens run the GEMM; a NaN screened holds it back with C untouched, and gate_result
 * reports the count either way. */
__global__ void spin_kernel(long long cycles) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void test_gate(tu_rng_t *rng, gpuctx_t *g) {
    int dev = 0, khz = 0;
    CU(cudaGetDevice(&dev));
    CU(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
    const double spin_ms = 40.0;
    const long long cycles = (long long)(spin_ms * (double)khz);
    const int64_t m = 97, n = 65, k = 33, sn = 50;
    double *A = host_small(rng, m, k, m, 0), *B = host_small(rng, k, n, k, 0);
    double *S = host_small(rng, sn, 2, sn, 0);
    double *dA = (double *)dup_to_dev(A, (size_t)m * k * 8), *dB = (double *)dup_to_dev(B, (size_t)k * n * 8);
    double *dS = (double *)dup_to_dev(S, (size_t)sn * 16);
    double *dC = (double *)dmalloc((size_t)7 * m * n * 8); /* 7 C's: see the cases below */
    double *C = tu_alloc_d(m * n), *Cref = tu_alloc_d(m * n);
    abft_kctx_t cpu = {NULL, NULL, NULL, NULL, -1};
    for (int64_t i = 0; i < m * n; ++i) Cref[i] = 0.0;
    abft_gemm_args_t ra = {ABFT_PREC_D, 0, 0, m, n, k, 1.0, 0.0, A, m, B, k, Cref, m};
    TU_CHECK_STATUS(abft_cpu_gemm(&cpu, &ra), ABFT_STATUS_SUCCESS);
    abft_gemm_args_t ga = {ABFT_PREC_D, 0, 0, m, n, k, 1.0, 0.0, dA, m, dB, k, dC, m};
    const double nan = NAN;
    /* case: 0 device path, finite; 1 device path, a NaN; 2 host path, finite; 3 host, NaN.
     * A signature's first call takes the host path: in cases 0 and 1 every call writes C 0
     * (one signature), in cases 2 and 3 each call a C of its own, 1 + 3 (c - 2) + rep (a
     * new signature each time). */
    for (int c = 0; c < 4; ++c) {
        const int device_path = c < 2, poison = c & 1;
        CU(cudaMemcpy(dS + 17, poison ? &nan : &S[17], 8, cudaMemcpyHostToDevice));
        CU(cudaMemset(dC, 0x7f, (size_t)7 * m * n * 8));
        /* a first call takes the host path, the second builds the graph (capture,
         * instantiation, the private cuBLAS handle): time the third */
        for (int rep = 0; rep < 3; ++rep) {
            ga.C = dC + (device_path ? 0 : 1 + 3 * (c - 2) + rep) * m * n;
            CU(cudaDeviceSynchronize());
            spin_kernel<<<1, 1, 0, g->stream>>>(cycles);
            CU(cudaGetLastError());
            const double t0 = now_ms();
            TU_CHECK_STATUS(abft_cuda_screen(&g->ctx, dS, sn, sn), ABFT_STATUS_SUCCESS);
            TU_CHECK_STATUS(abft_cuda_gemm_gated(&g->ctx, &ga), ABFT_STATUS_SUCCESS);
            const double t1 = now_ms() - t0;
            int64_t held = -1;
            TU_CHECK_STATUS(abft_cuda_gate_result(&g->ctx, &held), ABFT_STATUS_SUCCESS);
            TU_CHECK(held == (poison ? 1 : 0), "gate case %d: count %lld", c, (long long)held);
            /* of C 0's signature, new in case 0 only: case 1 finds its graph */
            const int host_path = !device_path || (c == 0 && rep == 0);
            if (host_path && (rep == 0 || rep == 2))
                TU_CHECK(t1 > 0.5 * spin_ms, "gate case %d call %d: host path returned in %.1f ms",
                         c, rep, t1);
            if (!host_path && (rep == 2 || c == 1))
                TU_CHECK(t1 < 0.5 * spin_ms, "gate case %d call %d: the host waited %.1f ms", c,
                         rep, t1);
            if (rep == 2) printf("gate case %d: host returned after %.2f ms (spin %.0f ms)\n", c, t1, spin_ms);
        }
        for (int rep = 0; rep < (device_path ? 1 : 3); ++rep) {
            to_host(C, dC + (device_path ? 0 : 1 + 3 * (c - 2) + rep) * m * n,
                    (size_t)m * n * 8);
            int bad = 0;
            for (int64_t i = 0; i < m * n && !bad; ++i) {
                if (poison) {
                    uint64_t bits;
                    memcpy(&bits, &C[i], 8);
                    bad = bits != 0x7f7f7f7f7f7f7f7full;
                } else {
                    bad = !(fabs(C[i] - Cref[i]) <= 1e-12 * (1.0 + fabs(Cref[i])));
                }
            }
            TU_CHECK(!bad, "gate case %d call %d: C %s", c, rep,
                     poison ? "changed although held" : "wrong");
        }
    }
    CU(cudaFree(dA));
    CU(cudaFree(dB));
    CU(cudaFree(dS));
    CU(cudaFree(dC));
    free(A), free(B), free(S), free(C), free(Cref);
    printf("gate: device and host paths checked\n");
}

/* ---- more than 2^31 elements ---------------------------------------------------------------- */
__host__ __device__ static inline float big_val(uint64_t i, uint64_t j) {
    uint64_t z = i * 0x9E3779B97F4A7C15ull ^ (j + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull;
    z ^= z >> 31;
    z *= 0x94D049BB133111EBull;
    z ^= z >> 29;
    return (float)((int)(z % 17u) - 8); /* integers: every sum below is exact in fp64 */
}

__global__ void big_fill(float *A, int64_t m, int64_t n, int64_t lda) {
    int64_t total = m * n;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        int64_t j = e / m, i = e - j * m;
        A[i + j * lda] = big_val((uint64_t)i, (uint64_t)j);
    }
}

static void test_big(gpuctx_t *g) {
    const int64_t m = (1 << 20) + 7, n = 2049, lda = m + 1; /* m*n > 2^31 */
    float *dA = NULL;
    size_t bytes = (size_t)lda * n * 4;
    if (cudaMalloc(&dA, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        printf("big: not enough device memory, skipped\n");
        return;
    }
    big_fill<<<4096, 256>>>(dA, m, n, lda);
    CU(cudaGetLastError());
    CU(cudaDeviceSynchronize());
    double *dR = (double *)dmalloc((size_t)m * 16), *dK = (double *)dmalloc((size_t)n * 16);
    abft_tsmm_args_t ra = {ABFT_PREC_S, 0, m, n, 2, dA, lda, NULL, 0, NULL, 0, dR, m, NULL, 0, 0};
    abft_tsmm_args_t ka = {ABFT_PREC_S, 1, m, n, 2, dA, lda, NULL, 0, NULL, 0, dK, n, NULL, 0, 0};
    TU_CHECK_STATUS(abft_cuda_tsmm(&g->ctx, &ra), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_cuda_tsmm(&g->ctx, &ka), ABFT_STATUS_SUCCESS);
    CU(cudaStreamSynchronize(g->stream));
    double *R = tu_alloc_d(m * 2), *K = tu_alloc_d(n * 2);
    to_host(R, dR, (size_t)m * 16);
    to_host(K, dK, (size_t)n * 16);
    double *Rr = (double *)calloc((size_t)m * 2, 8), *Kr = (double *)calloc((size_t)n * 2, 8);
    for (int64_t j = 0; j < n; ++j) {
        double k0 = 0, k1 = 0;
        for (int64_t i = 0; i < m; ++i) {
            double v = big_val((uint64_t)i, (uint64_t)j);
            Rr[i] += v;
            Rr[m + i] += v * (double)(j + 1);
            k0 += v;
            k1 += v * (double)(i + 1);
        }
        Kr[j] = k0;
        Kr[n + j] = k1;
    }
    int bad = 0;
    for (int64_t i = 0; i < 2 * m && bad < 3; ++i)
        if (R[i] != Rr[i]) {
            ++bad;
            TU_CHECK(R[i] == Rr[i], "big rows: entry %lld gpu %.17g exact %.17g", (long long)i,
                     R[i], Rr[i]);
        }
    for (int64_t i = 0; i < 2 * n && bad < 6; ++i)
        if (K[i] != Kr[i]) {
            ++bad;
            TU_CHECK(K[i] == Kr[i], "big cols: entry %lld gpu %.17g exact %.17g", (long long)i,
                     K[i], Kr[i]);
        }
    printf("big (%lld x %lld fp32, %.2f G elements): done\n", (long long)m, (long long)n,
           (double)m * n / 1e9);
    cudaFree(dA);
    cudaFree(dR);
    cudaFree(dK);
    free(R);
    free(K);
    free(Rr);
    free(Kr);
}

int main(void) {
    tu_require_gpu();
    const char *sm = getenv("ABFT_TEST_SMALL");
    g_small = sm != NULL && sm[0] != '\0' && sm[0] != '0';
    tu_rng_t rng;
    tu_rng_init(&rng, tu_seed("test_cuda_kernels"));
    gpuctx_t g0, g1;
    gpu_open(&g0, 0); /* legacy default stream */
    gpu_open(&g1, 1); /* a non-blocking stream of its own */
    test_tsmm(&rng, &g1);
    test_tsmm_implicit_bits(&rng, &g1);
    test_tsmm_fused_bits(&rng, &g1);
    test_tsmm_weights(&rng, &g1);
    test_tsmm_cols_implicit(&rng, &g1);
    test_dual(&rng, &g0);
    test_dual(&rng, &g1);
    test_dual_implicit_bits(&rng, &g1);
    test_compare(&rng, &g1);
    test_gemm(&rng, &g1);
    test_gate(&rng, &g1);
    test_pdl(&g1);
    test_public(&rng);
    if (!g_small) test_big(&g1);
    gpu_close(&g0);
    gpu_close(&g1);
    return tu_finish("test_cuda_kernels");
}

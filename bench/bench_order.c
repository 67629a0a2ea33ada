/* bench_order: the tight bound mode against the accumulation order of cuBLAS's SGEMM (or
 * DGEMM, with the last argument d).
 *
 * The tight mode (docs/bound.md, items 3, 3b and 5) assumes the GEMM sums each element's k
 * products in blocks of consecutive terms, each from zero and in order, or in one of the
 * lane orders its backend lists (on the CUDA backend, 4 slices taking the k-tiles of 8 in
 * turn, the split-k this program found in cuBLAS's fp32 GEMM).
 * This program builds fp32 (or fp64) data that tell that order from others: rows of A hold a
 * pair (+1, -1) at l = 63, 64 of every 64 terms, against rows of B that repeat (l = 64q equals
 * l = 64q - 1, times 1 + mismatch·U(0, 1)), and between the pairs small terms eps·U(0, 1).
 * Summed in order, each pair cancels and the small terms survive; summed in slices that
 * take every other tile of k, the +1 terms gather in one slice and the -1 terms in another,
 * both grow to about k/85, and the small terms vanish in them. It runs plain cublasSgemm and
 * the protected abft_sgemm (2 calls: the first on the host path, the second through the
 * device-side gate's graph) and prints the largest error over 8 rows against an
 * extended-precision reference, the report, and whether C equals cuBLAS's bitwise.
 *
 *   bench_order [k (16384)] [mode: 0 worst case, 1 probabilistic, 2 tight (2)]
 *               [eps exponent e: eps = 2^-e (20)] [mismatch exponent: 2^-e, 0 for none (0)]
 *               [period T (0)] [SM count target S (0: cuBLAS's default)] [s|d: fp32 or fp64
 *               data (s)]
 *
 * With a period T > 0 the data are instead signs that alternate every T terms of l: A's
 * entries +-(0.5 + 0.5·U(0, 1)), the sign flipping after each T, B's 0.5 + 0.5·U(0, 1). In
 * order a row's partial sums stay within about T; a sum split into slices that take every
 * other tile of T terms gathers one sign per slice. With S > 0 the cuBLAS handle (the plain
 * call's, lent to the library with abft_set_cublas_handle) gets cublasSetSmCountTarget(S),
 * which steers cuBLAS's choice of kernel, split-k among it.
 *
 * m = n = 1024. Exit status 0 when every call succeeded (a flagged clean product is a
 * measurement here, printed, not a failure). */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abft/abft.h"

#define OK(x)                                                                              \
    do {                                                                                   \
        if (!(x)) {                                                                        \
            fprintf(stderr, "bench_order: %s failed (line %d)\n", #x, __LINE__);           \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

static unsigned long long rng = 88172645463325252ull;
static double urand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1p-53;
}

int main(int argc, char **argv) {
    const long m = 1024, n = 1024, k = argc > 1 ? atol(argv[1]) : 16384;
    const int mode = argc > 2 ? atoi(argv[2]) : 2;
    const double eps = ldexp(1.0, -(argc > 3 ? atoi(argv[3]) : 20));
    const int me = argc > 4 ? atoi(argv[4]) : 0;
    const double mis = me > 0 ? ldexp(1.0, -me) : 0.0;
    const long T = argc > 5 ? atol(argv[5]) : 0;
    const int sm = argc > 6 ? atoi(argv[6]) : 0;
    const int dp = argc > 7 && argv[7][0] == 'd'; /* fp64 data (else fp32) */
    const size_t es = dp ? sizeof(double) : sizeof(float);
    const int R = 8; /* rows against the reference */
    if (k < 1 || k > 65536 || mode < 0 || mode > 2 || T < 0) {
        fprintf(stderr, "usage: bench_order [k 1..65536] [mode 0|1|2] [eps exp] [mismatch exp] "
                        "[period T >= 0] [SM count target] [s|d]\n");
        return 2;
    }
    /* the data as doubles (rounded to fp32 first for fp32), and as stored */
    double *A = malloc(sizeof(double) * m * k), *B = malloc(sizeof(double) * k * n);
    double *C = malloc(sizeof(double) * m * n), *Cp = malloc(sizeof(double) * m * n);
    double *ref = malloc(sizeof(double) * R * n);
    long most = m * k > k * n ? m * k : k * n;
    most = most > m * n ? most : m * n;
    void *hs = malloc(es * (size_t)most); /* the largest of A, B and C as stored */
    OK(A && B && C && Cp && ref && hs);
#define STORE(x) (dp ? (double)(x) : (double)(float)(x))
    for (long l = 0; l < k; ++l)
        for (long i = 0; i < m; ++i)
            A[i + l * m] = T > 0 ? STORE(((l / T) % 2 ? -1.0 : 1.0) * (0.5 + 0.5 * urand()))
                         : l % 64 == 63 ? 1.0
                         : (l % 64 == 0 && l > 0) ? -1.0
                                                  : STORE(eps * urand());
    for (long j = 0; j < n; ++j)
        for (long l = 0; l < k; ++l)
            B[l + j * k] = (T == 0 && l % 64 == 0 && l > 0)
                               ? STORE(B[l - 1 + j * k] * (1.0 + mis * urand()))
                               : STORE(0.5 + 0.5 * urand());
#undef STORE
    void *dA = NULL, *dB = NULL, *dC = NULL;
    OK(cudaMalloc(&dA, es * m * k) == cudaSuccess);
    OK(cudaMalloc(&dB, es * k * n) == cudaSuccess);
    OK(cudaMalloc(&dC, es * m * n) == cudaSuccess);
    /* host -> device through hs in the stored type, and back */
#define PUT(dst, src, cnt)                                                                     \
    do {                                                                                       \
        for (long x = 0; x < (cnt); ++x)                                                       \
            if (dp) ((double *)hs)[x] = (src)[x];                                              \
            else ((float *)hs)[x] = (float)(src)[x];                                           \
        OK(cudaMemcpy((dst), hs, es * (cnt), cudaMemcpyHostToDevice) == cudaSuccess);         \
    } while (0)
#define GET(dst, src, cnt)                                                                     \
    do {                                                                                       \
        OK(cudaMemcpy(hs, (src), es * (cnt), cudaMemcpyDeviceToHost) == cudaSuccess);         \
        for (long x = 0; x < (cnt); ++x)                                                       \
            (dst)[x] = dp ? ((double *)hs)[x] : (double)((float *)hs)[x];                      \
    } while (0)
    PUT(dA, A, m * k);
    PUT(dB, B, k * n);
    cublasHandle_t cb;
    OK(cublasCreate(&cb) == CUBLAS_STATUS_SUCCESS);
    if (sm > 0) OK(cublasSetSmCountTarget(cb, sm) == CUBLAS_STATUS_SUCCESS);
    const float one = 1.0f, zero = 0.0f;
    const double oned = 1.0, zerod = 0.0;
    OK((dp ? cublasDgemm(cb, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &oned, (const double *)dA, m,
                         (const double *)dB, k, &zerod, (double *)dC, m)
           : cublasSgemm(cb, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, (const float *)dA, m,
                         (const float *)dB, k, &zero, (float *)dC, m)) == CUBLAS_STATUS_SUCCESS);
    GET(Cp, dC, m * n);
    double err = 0.0, mag = 0.0;
    for (int i = 0; i < R; ++i)
        for (long j = 0; j < n; ++j) {
            long double s = 0;
            for (long l = 0; l < k; ++l) s += (long double)A[i + l * m] * B[l + j * k];
            ref[i + j * R] = (double)s;
            err = fmax(err, fabs(Cp[i + j * m] - (double)s));
            mag = fmax(mag, fabs((double)s));
        }
    if (sm > 0) printf("cuBLAS SM count target %d\n", sm);
    if (T > 0)
        printf("bench_order: %s, m = n = 1024, k = %ld, signs alternating every %ld terms, "
               "mode %d\n", dp ? "fp64" : "fp32", k, T, mode);
    else
        printf("bench_order: %s, m = n = 1024, k = %ld, pairs, eps 2^-%d, mismatch %g, mode %d\n",
               dp ? "fp64" : "fp32", k, argc > 3 ? atoi(argv[3]) : 20, mis, mode);
    printf("cublas%sgemm: largest |error| over %d rows %.3g (largest |C| %.3g)\n", dp ? "D" : "S",
           R, err, mag);
    abft_handle_t h;
    OK(abft_create(&h, ABFT_BACKEND_CUDA) == ABFT_STATUS_SUCCESS);
    if (sm > 0) OK(abft_set_cublas_handle(h, cb) == ABFT_STATUS_SUCCESS);
    OK(abft_set_bound_mode(h, mode == 2 ? ABFT_BOUND_TIGHT
                              : mode == 1 ? ABFT_BOUND_PROBABILISTIC : ABFT_BOUND_WORST_CASE,
                           mode == 1 ? 4.0 : 1.0) == ABFT_STATUS_SUCCESS);
    for (int call = 0; call < 2; ++call) {
        abft_report_t rep;
        OK(cudaMemset(dC, 0, es * m * n) == cudaSuccess);
        OK((dp ? abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0, (const double *)dA, m,
                            (const double *)dB, k, 0.0, (double *)dC, m, &rep)
               : abft_sgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0f, (const float *)dA, m,
                            (const float *)dB, k, 0.0f, (float *)dC, m, &rep)) ==
           ABFT_STATUS_SUCCESS);
        GET(C, dC, m * n);
        long ndiff = 0;
        double e = 0.0;
        for (long x = 0; x < m * n; ++x) ndiff += C[x] != Cp[x];
        for (int i = 0; i < R; ++i)
            for (long j = 0; j < n; ++j) e = fmax(e, fabs(C[i + j * m] - ref[i + j * R]));
        printf("abft_%sgemm call %d: detected %lld, recomputed %lld, uncorrectable %lld, "
               "max_ratio %.4g; %ld elements differ from cuBLAS's; largest |error| over %d "
               "rows %.3g\n", dp ? "d" : "s", call, (long long)rep.detected,
               (long long)rep.recomputed, (long long)rep.uncorrectable, rep.max_ratio, ndiff, R,
               e);
    }
#undef PUT
#undef GET
    abft_destroy(h);
    cublasDestroy(cb);
    cudaFree(dA), cudaFree(dB), cudaFree(dC);
    free(A), free(B), free(C), free(Cp), free(ref), free(hs);
    return 0;
}

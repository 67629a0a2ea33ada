/* libabft_blas.so: the table of types (abft_blas_type_t), included by the drop-in
 * (abft_blas.c) and by its CUDA module (abft_blas_cuda.c): each gets the table with the
 * protected operations of the libabft objects linked into it. Private; included once per
 * file, which then uses the table. */
#ifndef ABFT_BLAS_TYPES_H
#define ABFT_BLAS_TYPES_H

#include <math.h>
#include <stddef.h>

#include "abft_blas_internal.h"

#define ABFT_BLAS_REAL_TYPE(P, T)                                                            \
    static inline int P##_is_zero(const void *s) { return *(const T *)s == (T)0; }                 \
    static inline int P##_is_one(const void *s) { return *(const T *)s == (T)1; }                  \
    static inline int P##_is_finite(const void *s) { return isfinite(*(const T *)s); }             \
    static inline void P##_scale(int m, int n, const void *beta, void *C, int ldc) {                \
        const T b = *(const T *)beta;                                                        \
        for (int j = 0; j < n; ++j) {                                                        \
            T *c = (T *)C + (size_t)j * (size_t)ldc;                                         \
            if (b == (T)0)                                                                   \
                for (int i = 0; i < m; ++i) c[i] = (T)0;                                     \
            else                                                                             \
                for (int i = 0; i < m; ++i) c[i] = b * c[i];                                 \
        }                                                                                    \
    }                                                                                        \
    static inline abft_status_t P##_gemm(abft_handle_t h, abft_operation_t ta, abft_operation_t tb, \
                                  int64_t m, int64_t n, int64_t k, const void *alpha,        \
                                  const void *A, int64_t lda, const void *B, int64_t ldb,    \
                                  const void *beta, void *C, int64_t ldc,                    \
                                  abft_report_t *rep) {                                      \
        return abft_##P##gemm(h, ta, tb, m, n, k, *(const T *)alpha, (const T *)A, lda,      \
                              (const T *)B, ldb, *(const T *)beta, (T *)C, ldc, rep);        \
    }                                                                                        \
    static inline abft_status_t P##_getrf(abft_handle_t h, int64_t m, int64_t n, void *A,           \
                                   int64_t lda, int64_t *ipiv, int64_t *info,                \
                                   abft_report_t *rep) {                                     \
        return abft_##P##getrf(h, m, n, (T *)A, lda, ipiv, info, rep);                       \
    }                                                                                        \
    static inline abft_status_t P##_getrs(abft_handle_t h, abft_operation_t tr, int64_t n,          \
                                   int64_t nrhs, const void *A, int64_t lda,                 \
                                   const int64_t *ipiv, void *B, int64_t ldb,                \
                                   abft_report_t *rep) {                                     \
        return abft_##P##getrs(h, tr, n, nrhs, (const T *)A, lda, ipiv, (T *)B, ldb, rep);   \
    }                                                                                        \
    typedef void (*P##_cblas_gemm_t)(int, int, int, int, int, int, T, const T *, int,        \
                                     const T *, int, T, T *, int);                           \
    static inline void P##_cblas_gemm_call(void *fn, int layout, int ta, int tb, int m, int n,      \
                                    int k, const void *alpha, const void *A, int lda,        \
                                    const void *B, int ldb, const void *beta, void *C,       \
                                    int ldc) {                                               \
        ((P##_cblas_gemm_t)fn)(layout, ta, tb, m, n, k, *(const T *)alpha, (const T *)A,     \
                               lda, (const T *)B, ldb, *(const T *)beta, (T *)C, ldc);       \
    }

ABFT_BLAS_REAL_TYPE(d, double)
ABFT_BLAS_REAL_TYPE(s, float)

static const double d_one = 1.0;
static const float s_one = 1.0f;

static const abft_blas_type_t abft_blas_types[2] = {
    {'d', sizeof(double), "DGEMM ", "DGETRF", "DGETRS", "DGESV ", "DTRSM ", "DSYRK ",
     "dgemm_", "dgetrf_", "dgetrs_", "cblas_dgemm", "dtrsm_", "dsyrk_", "dgesv_", &d_one,
     d_is_zero, d_is_one, d_is_finite, d_scale, d_gemm, d_getrf, d_getrs, d_cblas_gemm_call},
    {'s', sizeof(float), "SGEMM ", "SGETRF", "SGETRS", "SGESV ", "STRSM ", "SSYRK ",
     "sgemm_", "sgetrf_", "sgetrs_", "cblas_sgemm", "strsm_", "ssyrk_", "sgesv_", &s_one,
     s_is_zero, s_is_one, s_is_finite, s_scale, s_gemm, s_getrf, s_getrs, s_cblas_gemm_call},
};

#endif /* ABFT_BLAS_TYPES_H */

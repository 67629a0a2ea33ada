/* abft: private kernel signatures of the LU protocols (verify/abft_getrf*.c, abft_lu*.c),
 * implemented by kernels/cpu/abft_cpu_lu.c and kernels/cuda/abft_cuda_lu.cu.
 *
 * Same contract as abft_kernels.h: valid arguments, every size >= 0, leading dimensions
 * >= rows; pointers in the backend's memory unless said otherwise. */
#ifndef ABFT_LU_KERNELS_H
#define ABFT_LU_KERNELS_H

#include <stdint.h>

#include "abft_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Triangular tall-and-skinny product with one of the two factors stored in one LU array
 * (A, rows x cols stored, lda):
 *   uplo = 0: T = U, T(i, j) = A(i, j) for j >= i, 0 below the diagonal;
 *   uplo = 1: T = L, T(i, j) = A(i, j) for j < i, 1 on the diagonal (when j < cols),
 *             0 above.
 *   trans = 0: Y = T·X,   X cols x 2, Y rows x 2;  Yabs = |T|·Xabs
 *   trans = 1: Y = T^T·X, X rows x 2, Y cols x 2;  Yabs = |T|^T·Xabs
 * X == NULL means the implicit weights [1, j + 1 + woff] (j the row index of X); Xabs ==
 * NULL means |X| (or the weights). Yabs may be NULL. c is always 2. fp64 accumulation. */
typedef struct abft_lu_tri_args {
    abft_prec_t prec;
    int uplo;
    int trans;
    int64_t rows, cols;
    const void *A;
    int64_t lda;
    const double *X;
    int64_t ldx;
    const double *Xabs;
    int64_t ldxabs;
    int64_t woff;
    double *Y;
    int64_t ldy;
    double *Yabs;
    int64_t ldyabs;
} abft_lu_tri_args_t;

/* LU with partial pivoting of the m x n matrix A in place (LAPACK getrf semantics).
 * ipiv (backend memory, int64, 1-based, min(m, n) entries) gets the pivots plus ipiv_off
 * (a panel's local pivots made global).
 * dinfo == NULL: *info (host) as LAPACK's; hpiv (host, may be NULL) gets the same values as
 *   ipiv, fetched with the info in one transfer (the CUDA version synchronises).
 * dinfo != NULL (backend memory, one int64): nothing synchronises, *info and hpiv are not
 *   used (hpiv must be NULL). The info is accumulated on the backend: when *dinfo == 0 and
 *   LAPACK's info is > 0, *dinfo = info + ipiv_off (the first zero pivot over a sequence of
 *   panels factored in column order); an info < 0 (an argument error) sets *dinfo = -1. */
typedef struct abft_lu_getrf_args {
    abft_prec_t prec;
    int64_t m, n;
    void *A;
    int64_t lda;
    int64_t *ipiv;
    int64_t *info;
    int64_t *hpiv;
    int64_t ipiv_off;
    int64_t *dinfo;
} abft_lu_getrf_args_t;

/* Row interchanges of a matrix with `cols` columns (elements of the given precision, or
 * fp64 when fp64 = 1): for i = k1 .. k2-1 in order, swap row i with row
 * ipiv[i] - 1 - ipiv_off (any row of the matrix: repeats and p = i allowed).
 * Columns skip0 <= j < skip1 are left alone (skip1 <= skip0: none skipped; a panel's own
 * columns, so that its left and right sides are one call). When X2 != NULL, the same
 * interchanges on the fp64 matrix X2 (cols2 columns, ldx2) as well (the checksum columns).
 * dev_ipiv = 0: ipiv is HOST memory; the GPU version composes the swaps into one gather on
 *   the host and copies it from pageable memory (which synchronises).
 * dev_ipiv = 1: ipiv is BACKEND memory; the GPU version composes the swaps on the device
 *   (one block) into a list of (destination row, source row) and exchanges the rows in
 *   place, each block owning whole columns; nothing synchronises.
 * (A column's swaps are a dependent chain: one thread per column is latency-bound.) */
typedef struct abft_lu_laswp_args {
    abft_prec_t prec;
    int fp64; /* 1: the matrix is fp64 whatever prec says (the checksum columns) */
    int64_t cols;
    void *A;
    int64_t lda;
    int64_t k1, k2;
    const int64_t *ipiv;
    int64_t ipiv_off;
    int dev_ipiv;
    int64_t skip0, skip1;
    double *X2;
    int64_t cols2, ldx2;
} abft_lu_laswp_args_t;

/* B = op(T)^-1·B, T the unit-lower L (uplo = 1) or the upper U (uplo = 0) of an LU array
 * A (m x m, precision prec), B m x n of the same precision. */
typedef struct abft_lu_trsm_args {
    abft_prec_t prec;
    int uplo;
    int trans;
    int64_t m, n;
    const void *A;
    int64_t lda;
    void *B;
    int64_t ldb;
} abft_lu_trsm_args_t;

/* Y(i, :) = X(perm[i], :) for i < rows, c columns of fp64 (perm int64 in backend memory). */
typedef struct abft_lu_gather_args {
    int64_t rows, c;
    const int64_t *perm;
    const double *X;
    int64_t ldx;
    double *Y;
    int64_t ldy;
} abft_lu_gather_args_t;

/* Y += alpha·X, rows x c fp64; and, when X2 != NULL, Y2 += alpha2·X2 (same rows and c) in
 * the same pass. */
typedef struct abft_lu_axpy_args {
    int64_t rows, c;
    double alpha;
    const double *X;
    int64_t ldx;
    double *Y;
    int64_t ldy;
    double alpha2;
    const double *X2;
    int64_t ldx2;
    double *Y2;
    int64_t ldy2;
} abft_lu_axpy_args_t;

/* Single-element access of a data matrix (host value as double); for corrections. */
typedef struct abft_lu_elem_args {
    abft_prec_t prec;
    void *A;
    int64_t lda;
    int64_t i, j;
} abft_lu_elem_args_t;

/* ---- CPU backend --------------------------------------------------------------------- */
abft_status_t abft_cpu_lu_tri(const abft_kctx_t *ctx, const abft_lu_tri_args_t *a);
abft_status_t abft_cpu_lu_getrf(const abft_kctx_t *ctx, const abft_lu_getrf_args_t *a);
abft_status_t abft_cpu_lu_laswp(const abft_kctx_t *ctx, const abft_lu_laswp_args_t *a);
abft_status_t abft_cpu_lu_trsm(const abft_kctx_t *ctx, const abft_lu_trsm_args_t *a);
abft_status_t abft_cpu_lu_gather(const abft_kctx_t *ctx, const abft_lu_gather_args_t *a);
abft_status_t abft_cpu_lu_axpy(const abft_kctx_t *ctx, const abft_lu_axpy_args_t *a);
abft_status_t abft_cpu_lu_get(const abft_kctx_t *ctx, const abft_lu_elem_args_t *a, double *v);
abft_status_t abft_cpu_lu_set(const abft_kctx_t *ctx, const abft_lu_elem_args_t *a, double v);

/* ---- CUDA backend (ABFT_HAVE_CUDA) --------------------------------------------------- */
abft_status_t abft_cuda_lu_tri(const abft_kctx_t *ctx, const abft_lu_tri_args_t *a);
abft_status_t abft_cuda_lu_getrf(const abft_kctx_t *ctx, const abft_lu_getrf_args_t *a);
abft_status_t abft_cuda_lu_laswp(const abft_kctx_t *ctx, const abft_lu_laswp_args_t *a);
abft_status_t abft_cuda_lu_trsm(const abft_kctx_t *ctx, const abft_lu_trsm_args_t *a);
abft_status_t abft_cuda_lu_gather(const abft_kctx_t *ctx, const abft_lu_gather_args_t *a);
abft_status_t abft_cuda_lu_axpy(const abft_kctx_t *ctx, const abft_lu_axpy_args_t *a);
abft_status_t abft_cuda_lu_get(const abft_kctx_t *ctx, const abft_lu_elem_args_t *a, double *v);
abft_status_t abft_cuda_lu_set(const abft_kctx_t *ctx, const abft_lu_elem_args_t *a, double v);
/* The arithmetic cuSOLVER's getrf runs in for data of precision prec under the math mode of
 * the cuSOLVER handle `solver` (its own setting, cusolverDnSetMathMode: not the cuBLAS
 * handle's); NOT_SUPPORTED for FP64 emulation, which the bound does not model. */
abft_status_t abft_cuda_solver_arith(void *solver, abft_prec_t prec, abft_arith_t *a);

#ifdef __cplusplus
}
#endif
#endif /* ABFT_LU_KERNELS_H */

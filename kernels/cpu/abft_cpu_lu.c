/* abft CPU backend, LU kernels: triangular tall-and-skinny products over an LU array,
 * LAPACK getrf and BLAS trsm through the Fortran interface (LP64), row interchanges, and
 * small fp64 helpers. The reference the CUDA versions are tested against. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abft_lu_kernels.h"
#include "abft_cpu_host_blas.h" /* the Fortran LAPACK/BLAS routines (LP64) */

static int fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

static inline double elem(abft_prec_t prec, const void *A, int64_t lda, int64_t i, int64_t j) {
    return prec == ABFT_PREC_D ? ((const double *)A)[i + j * lda]
                               : (double)((const float *)A)[i + j * lda];
}

static inline double wgt(const double *X, int64_t ldx, int64_t woff, int64_t l, int q) {
    if (X != NULL) return X[l + q * ldx];
    return q == 0 ? 1.0 : (double)(l + 1 + woff);
}
static inline double wgt_abs(const double *X, int64_t ldx, const double *Xa, int64_t ldxa,
                             int64_t woff, int64_t l, int q) {
    if (Xa != NULL) return Xa[l + q * ldxa];
    return fabs(wgt(X, ldx, woff, l, q));
}

/* Is (i, j) inside the triangle (the stored part; the unit diagonal of L is separate). */
static inline int in_tri(int uplo, int64_t i, int64_t j) { return uplo == 0 ? j >= i : j < i; }

abft_status_t abft_cpu_lu_tri(const abft_kctx_t *ctx, const abft_lu_tri_args_t *a) {
    (void)ctx;
    const int want_abs = a->Yabs != NULL;
    const int64_t ny = a->trans ? a->cols : a->rows;
    if (!a->trans) {
        /* Y(i) = sum_j T(i, j) X(j): rows in parallel, contiguous reads down columns. */
#pragma omp parallel for schedule(dynamic, 1)
        for (int64_t i0 = 0; i0 < ny; i0 += 128) {
            int64_t i1 = i0 + 128 < ny ? i0 + 128 : ny;
            double acc[2][128], acca[2][128];
            for (int64_t i = i0; i < i1; ++i) {
                for (int q = 0; q < 2; ++q) {
                    /* the unit diagonal of L */
                    int diag = a->uplo == 1 && i < a->cols;
                    acc[q][i - i0] = diag ? wgt(a->X, a->ldx, a->woff, i, q) : 0.0;
                    acca[q][i - i0] =
                        diag && want_abs ? wgt_abs(a->X, a->ldx, a->Xabs, a->ldxabs, a->woff, i, q)
                                         : 0.0;
                }
            }
            /* columns that meet rows i0..i1-1 inside the triangle */
            int64_t j0 = a->uplo == 0 ? i0 : 0;
            int64_t j1 = a->uplo == 0 ? a->cols : (i1 - 1 < a->cols ? i1 - 1 : a->cols);
            for (int64_t j = j0; j < j1; ++j) {
                double x0 = wgt(a->X, a->ldx, a->woff, j, 0), x1 = wgt(a->X, a->ldx, a->woff, j, 1);
                double xa0 = 0, xa1 = 0;
                if (want_abs) {
                    xa0 = wgt_abs(a->X, a->ldx, a->Xabs, a->ldxabs, a->woff, j, 0);
                    xa1 = wgt_abs(a->X, a->ldx, a->Xabs, a->ldxabs, a->woff, j, 1);
                }
                for (int64_t i = i0; i < i1; ++i) {
                    if (!in_tri(a->uplo, i, j)) continue;
                    double v = elem(a->prec, a->A, a->lda, i, j);
                    acc[0][i - i0] += v * x0;
                    acc[1][i - i0] += v * x1;
                    if (want_abs) {
                        double av = fabs(v);
                        acca[0][i - i0] += av * xa0;
                        acca[1][i - i0] += av * xa1;
                    }
                }
            }
            for (int64_t i = i0; i < i1; ++i)
                for (int q = 0; q < 2; ++q) {
                    a->Y[i + q * a->ldy] = acc[q][i - i0];
                    if (want_abs) a->Yabs[i + q * a->ldyabs] = acca[q][i - i0];
                }
        }
    } else {
        /* Y(j) = sum_i T(i, j) X(i): a dot product down each column. */
#pragma omp parallel for schedule(dynamic, 16)
        for (int64_t j = 0; j < ny; ++j) {
            double acc[2] = {0, 0}, acca[2] = {0, 0};
            if (a->uplo == 1 && j < a->rows) {
                for (int q = 0; q < 2; ++q) {
                    acc[q] = wgt(a->X, a->ldx, a->woff, j, q);
                    if (want_abs) acca[q] = wgt_abs(a->X, a->ldx, a->Xabs, a->ldxabs, a->woff, j, q);
                }
            }
            int64_t r0 = a->uplo == 0 ? 0 : j + 1;
            int64_t r1 = a->uplo == 0 ? (j + 1 < a->rows ? j + 1 : a->rows) : a->rows;
            for (int64_t i = r0; i < r1; ++i) {
                double v = elem(a->prec, a->A, a->lda, i, j);
                for (int q = 0; q < 2; ++q) {
                    acc[q] += v * wgt(a->X, a->ldx, a->woff, i, q);
                    if (want_abs)
                        acca[q] += fabs(v) * wgt_abs(a->X, a->ldx, a->Xabs, a->ldxabs, a->woff, i, q);
                }
            }
            for (int q = 0; q < 2; ++q) {
                a->Y[j + q * a->ldy] = acc[q];
                if (want_abs) a->Yabs[j + q * a->ldyabs] = acca[q];
            }
        }
    }
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_cpu_lu_getrf(const abft_kctx_t *ctx, const abft_lu_getrf_args_t *a) {
    (void)ctx;
    if (a->dinfo == NULL) *a->info = 0;
    int64_t k = a->m < a->n ? a->m : a->n;
    if (k == 0) return ABFT_STATUS_SUCCESS;
    if (!fits_int(a->m) || !fits_int(a->n) || !fits_int(a->lda)) return ABFT_STATUS_NOT_SUPPORTED;
    int m = (int)a->m, n = (int)a->n, lda = (int)a->lda, info = 0;
    int *ip = (int *)malloc((size_t)k * sizeof(int));
    if (ip == NULL) return ABFT_STATUS_ALLOC_FAILED;
    if (a->prec == ABFT_PREC_D)
        ABFT_HOST_BLAS(dgetrf, (&m, &n, (double *)a->A, &lda, ip, &info));
    else
        ABFT_HOST_BLAS(sgetrf, (&m, &n, (float *)a->A, &lda, ip, &info));
    for (int64_t i = 0; i < k; ++i) a->ipiv[i] = ip[i] + a->ipiv_off;
    if (a->hpiv != NULL && a->dinfo == NULL)
        for (int64_t i = 0; i < k; ++i) a->hpiv[i] = ip[i] + a->ipiv_off;
    free(ip);
    if (a->dinfo != NULL) {
        /* accumulated as the CUDA version does on the device */
        if (info < 0) *a->dinfo = -1;
        else if (info > 0 && *a->dinfo == 0) *a->dinfo = info + a->ipiv_off;
        return ABFT_STATUS_SUCCESS;
    }
    if (info < 0) return ABFT_STATUS_EXECUTION_FAILED;
    *a->info = info;
    return ABFT_STATUS_SUCCESS;
}

/* The interchanges k1..k2-1 on columns j0..j1-1 of a matrix of es-byte elements. */
static void swap_cols(char *base, size_t es, int64_t lda, int64_t j0, int64_t j1, int64_t k1,
                      int64_t k2, const int64_t *ipiv, int64_t off) {
    /* column by column: each column's swaps are a sequential chain */
    for (int64_t j = j0; j < j1; ++j) {
        char *col = base + (size_t)(j * lda) * es;
        for (int64_t i = k1; i < k2; ++i) {
            int64_t p = ipiv[i] - 1 - off;
            if (p == i) continue;
            char tmp[8];
            memcpy(tmp, col + (size_t)i * es, es);
            memcpy(col + (size_t)i * es, col + (size_t)p * es, es);
            memcpy(col + (size_t)p * es, tmp, es);
        }
    }
}

abft_status_t abft_cpu_lu_laswp(const abft_kctx_t *ctx, const abft_lu_laswp_args_t *a) {
    (void)ctx; /* backend memory is host memory: dev_ipiv changes nothing here */
    size_t es = (a->fp64 || a->prec == ABFT_PREC_D) ? sizeof(double) : sizeof(float);
    int64_t s0 = a->cols, s1 = a->cols; /* the skipped range, clipped */
    if (a->skip1 > a->skip0) {
        s0 = a->skip0 < a->cols ? a->skip0 : a->cols;
        s1 = a->skip1 < a->cols ? a->skip1 : a->cols;
    }
    swap_cols((char *)a->A, es, a->lda, 0, s0, a->k1, a->k2, a->ipiv, a->ipiv_off);
    swap_cols((char *)a->A, es, a->lda, s1, a->cols, a->k1, a->k2, a->ipiv, a->ipiv_off);
    if (a->X2 != NULL)
        swap_cols((char *)a->X2, sizeof(double), a->ldx2, 0, a->cols2, a->k1, a->k2, a->ipiv,
                  a->ipiv_off);
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_cpu_lu_trsm(const abft_kctx_t *ctx, const abft_lu_trsm_args_t *a) {
    (void)ctx;
    if (a->m == 0 || a->n == 0) return ABFT_STATUS_SUCCESS;
    if (!fits_int(a->m) || !fits_int(a->n) || !fits_int(a->lda) || !fits_int(a->ldb))
        return ABFT_STATUS_NOT_SUPPORTED;
    int m = (int)a->m, n = (int)a->n, lda = (int)a->lda, ldb = (int)a->ldb;
    char side = 'L', uplo = a->uplo ? 'L' : 'U', tr = a->trans ? 'T' : 'N';
    char diag = a->uplo ? 'U' : 'N';
    if (a->prec == ABFT_PREC_D) {
        double one = 1.0;
        ABFT_HOST_BLAS(dtrsm, (&side, &uplo, &tr, &diag, &m, &n, &one, (const double *)a->A,
                               &lda, (double *)a->B, &ldb));
    } else {
        float one = 1.0f;
        ABFT_HOST_BLAS(strsm, (&side, &uplo, &tr, &diag, &m, &n, &one, (const float *)a->A,
                               &lda, (float *)a->B, &ldb));
    }
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_cpu_lu_gather(const abft_kctx_t *ctx, const abft_lu_gather_args_t *a) {
    (void)ctx;
    for (int64_t q = 0; q < a->c; ++q)
        for (int64_t i = 0; i < a->rows; ++i)
            a->Y[i + q * a->ldy] = a->X[a->perm[i] + q * a->ldx];
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_cpu_lu_axpy(const abft_kctx_t *ctx, const abft_lu_axpy_args_t *a) {
    (void)ctx;
    for (int64_t q = 0; q < a->c; ++q)
        for (int64_t i = 0; i < a->rows; ++i)
            a->Y[i + q * a->ldy] += a->alpha * a->X[i + q * a->ldx];
    if (a->X2 != NULL)
        for (int64_t q = 0; q < a->c; ++q)
            for (int64_t i = 0; i < a->rows; ++i)
                a->Y2[i + q * a->ldy2] += a->alpha2 * a->X2[i + q * a->ldx2];
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_cpu_lu_get(const abft_kctx_t *ctx, const abft_lu_elem_args_t *a, double *v) {
    (void)ctx;
    *v = elem(a->prec, a->A, a->lda, a->i, a->j);
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_cpu_lu_set(const abft_kctx_t *ctx, const abft_lu_elem_args_t *a, double v) {
    (void)ctx;
    if (a->prec == ABFT_PREC_D)
        ((double *)a->A)[a->i + a->j * a->lda] = v;
    else
        ((float *)a->A)[a->i + a->j * a->lda] = (float)v;
    return ABFT_STATUS_SUCCESS;
}

/* abft: internals shared by the LU protocols (offline, split, online, solve). Private. */
#ifndef ABFT_LU_INTERNAL_H
#define ABFT_LU_INTERNAL_H

#include "abft_bound.h"
#include "abft_internal.h"
#include "abft_lu_kernels.h"

/* The LU kernels of the handle's backend are part of its ops table (core/). */
typedef abft_backend_ops_t abft_lu_ops_t;
static inline const abft_lu_ops_t *abft_lu_ops(abft_handle_t h) { return h->ops; }

/* Encoded state of one LU: the checksums of A and the workspace of the check. */
struct abft_lu_plan {
    abft_handle_t h;
    abft_prec_t prec;
    int64_t m, n, k; /* k = min(m, n) */
    int encoded;
    int pivoted;     /* the library factored with partial pivoting itself (|L| <= 1 holds) */
    void *mem;       /* one backend allocation holding everything below */
    double *X, *Xa;  /* A·V, |A|·V (m x 2 each, ld m), original row order */
    double *PX, *PXa;/* the same, permuted */
    double *Y, *Ya;  /* U·V, |U|·V (k x 2, ld k) */
    double *Z, *Za;  /* L·(U·V), |L|·(|U|·V) (m x 2, ld m) */
    double *S;       /* 8 doubles of scratch (the checksums' own checksum) */
    int64_t *perm;   /* m row indices (backend memory) */
    void *A0;        /* recovery copy of A (m x n, ld m, backend memory) or NULL */
    double sig[4], siga[4]; /* X^T·V and |X|^T·V at encode time (host): the checksums'
                               own checksum, which tells a corrupted checksum from data */
    abft_arith_t arith;     /* the factorization's arithmetic (abft_lu_arith), set by the
                               caller of abft_lu_verify */
};

abft_status_t abft_lu_plan_init(abft_handle_t h, abft_prec_t prec, int64_t m, int64_t n,
                                struct abft_lu_plan *p);
void abft_lu_plan_fini(struct abft_lu_plan *p);
/* A·V, |A|·V, the finiteness test (NON_FINITE_INPUT), the checksums' checksum, the
 * ABFT_SITE_CHECKSUM hook. */
abft_status_t abft_lu_encode(struct abft_lu_plan *p, const void *A, int64_t lda);
/* The offline check of the factors in A against the plan, with location, correction and
 * re-verification; ipiv is host memory (1-based, k entries). Accumulates into report
 * (which the caller zeroed). */
/* Has X (= A·V as encoded) changed since encoding, beyond the rounding of its own checksum
 * X^T·V? (One tsmm of m x 2 and a copy of 8 numbers.) */
abft_status_t abft_lu_x_changed(struct abft_lu_plan *p, int *changed);
abft_status_t abft_lu_verify(struct abft_lu_plan *p, void *A, int64_t lda, const int64_t *ipiv,
                             abft_report_t *report);
/* abft_lu_verify, and when it corrected or recomputed anything (the factors changed after
 * the getrf computed *info), *info again from the returned factors: i + 1 for the first
 * exactly zero U(i, i), else 0 (LAPACK's info). *info is left alone otherwise. */
abft_status_t abft_lu_verify_info(struct abft_lu_plan *p, void *A, int64_t lda,
                                  const int64_t *ipiv, abft_report_t *report, int64_t *info);
/* INVALID_VALUE when two outputs of an LU call overlap (pos: the positions of A, ipiv, info
 * and the report in the public call, for abft_last_invalid_argument): A (m x n, lda, element size es),
 * ipiv (min(m, n) entries of ipiv_es bytes), info, report (NULL: absent). */
abft_status_t abft_lu_check_outputs(int64_t m, int64_t n, const void *A, int64_t lda, size_t es,
                                    const void *ipiv, size_t ipiv_es, const int64_t *info,
                                    const abft_report_t *report, const int pos[4]);
/* Number of rows of the n x 2 fp64 array X (backend memory) holding a NaN or Inf. */
static inline abft_status_t abft_lu_nonfinite_rows(abft_handle_t h, int64_t n, const double *X,
                                                   int64_t ldx, int64_t *count) {
    return abft_count_nonfinite(h, X, n, ldx, count);
}
/* Record a fault in the report (bounded list). */
static inline void abft_lu_add_fault(abft_report_t *r, int64_t row, int64_t col, double delta,
                                     double ratio, abft_action_t action, abft_factor_t factor) {
    abft_report_add_fault(r, row, col, delta, ratio, action, factor, 0);
}

/* The arithmetic of a protected LU call (docs/lu.md, "Arithmetic"): the handle's BLAS
 * (trsm, gemm: abft_bound_arith, on the CUDA backend the cuBLAS handle's math mode) and,
 * with solver = 1, its LAPACK getrf (CUDA: the cuSOLVER handle's own math mode), the
 * coarser of the two in every field. NOT_SUPPORTED for an arithmetic the bound does not
 * model (FP64 emulation). */
abft_status_t abft_lu_arith(abft_handle_t h, abft_prec_t prec, int solver, abft_arith_t *a);
/* The u a report states for arithmetic a: the input rounding of tensor-core modes when
 * there is one, else the unit roundoff. */
static inline double abft_lu_report_u(const abft_arith_t *a) {
    return a->u_in > 0.0 ? a->u_in : a->u;
}

/* The bytes spanned by a rows x cols column-major matrix (ld, element size es); 0 when
 * empty. */
static inline size_t abft_lu_span(int64_t rows, int64_t cols, int64_t ld, size_t es) {
    if (rows <= 0 || cols <= 0) return 0;
    return ((size_t)(cols - 1) * (size_t)ld + (size_t)rows) * es;
}
/* Do [p, p + pb) and [q, q + qb) overlap? (Spans of memory, not elements; empty spans
 * overlap nothing.) */
static inline int abft_lu_overlap(const void *p, size_t pb, const void *q, size_t qb) {
    if (p == NULL || q == NULL || pb == 0 || qb == 0) return 0;
    uintptr_t p0 = (uintptr_t)p, q0 = (uintptr_t)q;
    return p0 < q0 + qb && q0 < p0 + pb;
}

#endif /* ABFT_LU_INTERNAL_H */

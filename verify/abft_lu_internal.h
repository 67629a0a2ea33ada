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
    void *mem;       /* one backend allocation holding everything below */
    double *X, *Xa;  /* A·V, |A|·V (m x 2 each, ld m), original row order */
    double *PX, *PXa;/* the same, permuted */
    double *Y, *Ya;  /* U·V, |U|·V (k x 2, ld k) */
    double *Z, *Za;  /* L·(U·V), |L|·(|U|·V) (m x 2, ld m) */
    int64_t *perm;   /* m row indices (backend memory) */
    void *A0;        /* recovery copy of A (m x n, ld m, backend memory) or NULL */
    double sig[4], siga[4]; /* X^T·V and |X|^T·V at encode time (host): the checksums'
                               own checksum, which tells a corrupted checksum from data */
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
abft_status_t abft_lu_verify(struct abft_lu_plan *p, void *A, int64_t lda, const int64_t *ipiv,
                             abft_report_t *report);
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

static inline double abft_lu_unit_roundoff(abft_prec_t prec) {
    return prec == ABFT_PREC_D ? 0x1.0p-53 : 0x1.0p-24;
}
/* Half the spacing of the subnormals: the absolute error of an underflowing operation. */
static inline double abft_lu_eta(abft_prec_t prec) {
    return prec == ABFT_PREC_D ? 0x1.0p-1074 : 0x1.0p-149;
}

#endif /* ABFT_LU_INTERNAL_H */

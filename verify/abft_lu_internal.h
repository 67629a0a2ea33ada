/* abft: internals shared by the LU protocols (offline, split, online, solve). Private. */
#ifndef ABFT_LU_INTERNAL_H
#define ABFT_LU_INTERNAL_H

#include "abft_internal.h"
#include "abft_lu_kernels.h"

/* The LU kernels of one backend. The handle's ops table (core/) knows nothing of them, so
 * the LU layer picks its own table from h->backend. */
typedef struct abft_lu_ops {
    abft_status_t (*tri)(const abft_kctx_t *, const abft_lu_tri_args_t *);
    abft_status_t (*getrf)(const abft_kctx_t *, const abft_lu_getrf_args_t *);
    abft_status_t (*laswp)(const abft_kctx_t *, const abft_lu_laswp_args_t *);
    abft_status_t (*trsm)(const abft_kctx_t *, const abft_lu_trsm_args_t *);
    abft_status_t (*gather)(const abft_kctx_t *, const abft_lu_gather_args_t *);
    abft_status_t (*axpy)(const abft_kctx_t *, const abft_lu_axpy_args_t *);
    abft_status_t (*get)(const abft_kctx_t *, const abft_lu_elem_args_t *, double *);
    abft_status_t (*set)(const abft_kctx_t *, const abft_lu_elem_args_t *, double);
} abft_lu_ops_t;

const abft_lu_ops_t *abft_lu_ops(abft_handle_t h);

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
/* Number of rows of the n x 2 fp64 array X (backend memory) holding a NaN or Inf. The
 * comparison kernel passes an entry whose bound is Inf (|d| <= Inf), so every bound
 * companion is screened with this before it is trusted. */
abft_status_t abft_lu_nonfinite_rows(abft_handle_t h, int64_t n, const double *X, int64_t ldx,
                                     int64_t *count);
/* Record a fault in the report (bounded list). */
void abft_lu_add_fault(abft_report_t *r, int64_t row, int64_t col, double delta, double ratio,
                       abft_action_t action, abft_factor_t factor);

static inline double abft_lu_unit_roundoff(abft_prec_t prec) {
    return prec == ABFT_PREC_D ? 0x1.0p-53 : 0x1.0p-24;
}
/* Half the spacing of the subnormals: the absolute error of an underflowing operation. */
static inline double abft_lu_eta(abft_prec_t prec) {
    return prec == ABFT_PREC_D ? 0x1.0p-1074 : 0x1.0p-149;
}

#endif /* ABFT_LU_INTERNAL_H */

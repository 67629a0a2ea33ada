/* abft: handle internals and helpers shared by the backend-neutral layers. Private. */
#ifndef ABFT_INTERNAL_H
#define ABFT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "abft/abft.h"
#include "abft_kernels.h"
#include "abft_lu_kernels.h"

/* One guard clause: return `status` when `cond` holds. */
#define ABFT_RETURN_IF(cond, status) \
    do {                             \
        if (cond) return (status);   \
    } while (0)
/* The argument a public call rejected with INVALID_VALUE: its 1-based position in the call's
 * parameter list (0: no single argument), kept per thread for abft_last_invalid_argument. */
void abft_set_bad_arg(int pos);
/* Reject argument `pos` of the public call when `cond` holds. */
#define ABFT_ARG_IF(cond, pos)                           \
    do {                                                 \
        if (cond) {                                      \
            abft_set_bad_arg(pos);                       \
            return ABFT_STATUS_INVALID_VALUE;            \
        }                                                \
    } while (0)
/* Propagate a non-success status. */
#define ABFT_TRY(expr)                                        \
    do {                                                      \
        abft_status_t abft_try_st_ = (expr);                  \
        if (abft_try_st_ != ABFT_STATUS_SUCCESS) return abft_try_st_; \
    } while (0)

/* The kernels a backend provides (kernels/abft_kernels.h), chosen once at handle creation. */
typedef struct abft_backend_ops {
    abft_status_t (*tsmm)(const abft_kctx_t *, const abft_tsmm_args_t *);
    abft_status_t (*dual)(const abft_kctx_t *, const abft_dual_args_t *);
    abft_status_t (*compare)(const abft_kctx_t *, const abft_compare_args_t *, int njobs);
    abft_status_t (*gemm)(const abft_kctx_t *, const abft_gemm_args_t *);
    abft_status_t (*alloc)(const abft_kctx_t *, size_t, void **);
    abft_status_t (*free)(const abft_kctx_t *, void *);
    abft_status_t (*copy)(const abft_kctx_t *, const abft_copy_args_t *);
    abft_status_t (*sync)(const abft_kctx_t *);
    abft_status_t (*order)(const abft_kctx_t *waiter, const abft_kctx_t *signaler);
    /* LU kernels (kernels/abft_lu_kernels.h) */
    abft_status_t (*lu_tri)(const abft_kctx_t *, const abft_lu_tri_args_t *);
    abft_status_t (*lu_getrf)(const abft_kctx_t *, const abft_lu_getrf_args_t *);
    abft_status_t (*lu_laswp)(const abft_kctx_t *, const abft_lu_laswp_args_t *);
    abft_status_t (*lu_trsm)(const abft_kctx_t *, const abft_lu_trsm_args_t *);
    abft_status_t (*lu_gather)(const abft_kctx_t *, const abft_lu_gather_args_t *);
    abft_status_t (*lu_axpy)(const abft_kctx_t *, const abft_lu_axpy_args_t *);
    abft_status_t (*lu_get)(const abft_kctx_t *, const abft_lu_elem_args_t *, double *);
    abft_status_t (*lu_set)(const abft_kctx_t *, const abft_lu_elem_args_t *, double);
    /* The device-side gate of the protected GEMM (kernels/abft_kernels.h); NULL where the
     * host decides (the CPU backend) */
    abft_status_t (*screen)(const abft_kctx_t *, const double *, int64_t, int64_t);
    abft_status_t (*gemm_gated)(const abft_kctx_t *, const abft_gemm_args_t *);
    abft_status_t (*gate_result)(const abft_kctx_t *, int64_t *);
    abft_status_t (*gate_reset)(const abft_kctx_t *);
    /* The tight pass (ABFT_BOUND_TIGHT), and whether it can bound n columns of inner
     * dimension k at all (NULL: always; 0: every row of the pass gets the worst case) */
    abft_status_t (*tight)(const abft_kctx_t *, const abft_tight_args_t *);
    int (*tight_fits)(const abft_kctx_t *, int64_t n, int64_t k, double u);
} abft_backend_ops_t;

struct abft_context {
    uint32_t magic; /* ABFT_HANDLE_MAGIC while alive */
    abft_backend_t backend;
    const abft_backend_ops_t *ops;
    abft_kctx_t kctx;
    abft_buffer_t scratch; /* kernel scratch (kctx.scratch points here) */
    abft_buffer_t work;    /* protocol workspace (checksums of a protected call) */
    void *own_blas, *own_solver; /* the handle's own cuBLAS/cuSOLVER handles */
    abft_kctx_t aux;             /* second context for overlapped work (abft_aux_context) */
    abft_buffer_t aux_scratch;   /* its kernel scratch */
    int aux_ready;
    /* options */
    abft_checksum_kind_t kind;
    abft_bound_mode_t bound_mode;
    double bound_factor;
    int recompute;
    int lu_recovery; /* keep a copy of A in protected LU (abft_set_lu_recovery) */
    int rnd;           /* a third, detection-only row checksum with seeded random weights */
    uint64_t rnd_seed; /* (abft_set_random_checksum) */
    abft_buffer_t rnd_w;       /* its weights in backend memory, for rnd_w_seed and rnd_w_n */
    uint64_t rnd_w_seed;
    int64_t rnd_w_n;           /* -1: none uploaded */
    abft_hook_fn hook;
    void *hook_user;
};

#define ABFT_HANDLE_MAGIC 0xabf7c0deu

static inline int abft_handle_ok(abft_handle_t h) { return h != NULL && h->magic == ABFT_HANDLE_MAGIC; }

/* Ensure `buf` holds at least `bytes` of backend memory (contents are not preserved). */
abft_status_t abft_buffer_reserve(abft_handle_t h, abft_buffer_t *buf, size_t bytes);
void abft_buffer_release(abft_handle_t h, abft_buffer_t *buf);

/* The handle's second execution context, created on first use (CUDA: a high-priority
 * stream with its own cuBLAS/cuSOLVER handles and scratch; CPU: the main context with its
 * own scratch, so work "on" it runs in call order). Work on it is ordered against the main
 * context only through ops->order; the caller joins it back before returning. */
abft_status_t abft_aux_context(abft_handle_t h, const abft_kctx_t **aux);

/* Where a protected GEMM is split along k: while a hook is set (the mid-GEMM site) it runs
 * as two calls, the first over k / 2 terms, the second over the rest onto its result; 0
 * where it runs whole. The protocol, its tight pass and the campaign read it here. */
static inline int64_t abft_gemm_ksplit(abft_handle_t h, int64_t k) {
    return h->hook != NULL && k >= 2 ? k / 2 : 0;
}

/* Call the hook if one is set. */
abft_status_t abft_call_hook(abft_handle_t h, abft_hook_site_t site, int which, abft_prec_t prec,
                             void *ptr, int64_t rows, int64_t cols, int64_t ld);

/* Argument checks shared by every entry point: a rows x cols matrix with leading dimension
 * ld must have rows, cols >= 0, ld >= max(1, rows), and a non-NULL pointer when non-empty. */
static inline int abft_bad_matrix(int64_t rows, int64_t cols, const void *p, int64_t ld) {
    if (rows < 0 || cols < 0) return 1;
    if (ld < (rows > 1 ? rows : 1)) return 1;
    if (rows > 0 && cols > 0 && p == NULL) return 1;
    return 0;
}
static inline int abft_bad_op(int op) { return op != ABFT_OP_N && op != ABFT_OP_T; }
/* Which argument of a rows x cols matrix (rows, cols >= 0 checked by the caller) is bad: the
 * leading dimension's position pos_ld, the pointer's pos_p, or 0 when the matrix is valid. */
static inline int abft_matrix_bad_arg(int64_t rows, int64_t cols, const void *p, int64_t ld,
                                      int pos_p, int pos_ld) {
    if (ld < (rows > 1 ? rows : 1)) return pos_ld;
    if (rows > 0 && cols > 0 && p == NULL) return pos_p;
    return 0;
}

/* Copy a rows x cols block of data of precision prec (column-major, leading dimension ld, in
 * backend memory) to (dir 0) or from (dir 1) the host as doubles (rows x cols, leading
 * dimension rows); synchronous. fp32 data go through a temporary of floats. */
abft_status_t abft_copy_doubles(abft_handle_t h, abft_prec_t prec, int dir, void *dev, int64_t ld,
                                int64_t rows, int64_t cols, double *host);

/* Record a fault in the report's bounded list (counts are the caller's). */
void abft_report_add_fault(abft_report_t *r, int64_t row, int64_t col, double delta,
                           double ratio, abft_action_t action, abft_factor_t factor, int side);

/* Number of entries of the n x 2 fp64 array X (backend memory) that are NaN or Inf: the
 * compare kernel with R = S = X and a zero bound (x - x is NaN exactly then). */
abft_status_t abft_count_nonfinite(abft_handle_t h, const double *X, int64_t n, int64_t ld,
                                   int64_t *count);

#endif /* ABFT_INTERNAL_H */

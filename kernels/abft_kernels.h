/* abft: the kernel signatures, declared once, implemented by kernels/cpu (always built,
 * the oracle) and kernels/cuda (when CUDA is built).
 *
 * Private header: never installed. Kernels know nothing above them: they get a small
 * execution context, plain argument structs, and return a status. Argument checking is
 * done by the layers above (encode/, verify/); kernels may assume valid arguments, except
 * that they must handle every size >= 0 (including 0) and any leading dimension >= rows. */
#ifndef ABFT_KERNELS_H
#define ABFT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "abft/abft_status.h"
#include "abft/abft_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Precision of the data matrix. Checksums, small operands and outputs are always fp64. */
typedef enum abft_prec { ABFT_PREC_D = 0, ABFT_PREC_S = 1 } abft_prec_t;

/* The arithmetic a BLAS/LAPACK call ran in, as the bound module (verify/abft_bound.c)
 * models it: every input is first changed by a relative amount of at most u_in (0 when the
 * inputs are used as they are; tensor-core modes shorten fp32 inputs), every product and
 * addition is then rounded with unit roundoff u, and an operation whose result is subnormal
 * may lose up to eta (absolute). */
typedef struct abft_arith {
    double u_in, u, eta;
} abft_arith_t;

/* Growable scratch memory of the backend (device memory for CUDA), owned by the handle. */
typedef struct abft_buffer {
    void *ptr;
    size_t bytes;
    size_t zeroed; /* CUDA scratch: bytes at the front that kernels keep at zero between
                    * launches (arrival counters), not handed out as scratch */
    void *host;    /* CUDA scratch: pinned host staging for small results (NULL until used;
                    * freed by abft_cuda_context_destroy) */
    size_t host_bytes;
} abft_buffer_t;

/* Execution context handed to every kernel. */
typedef struct abft_kctx {
    void *stream;           /* cudaStream_t (CUDA) or NULL (CPU) */
    void *blas;             /* cublasHandle_t (CUDA) or NULL (CPU) */
    void *solver;           /* cusolverDnHandle_t (CUDA) or NULL (CPU) */
    abft_buffer_t *scratch; /* kernels may grow it (the backend's alloc) */
    int device;             /* CUDA device ordinal, -1 on the CPU */
    void *gate;             /* CUDA: the state of the device-side GEMM gate (abft_cuda_gate.cu) */
} abft_kctx_t;

/* Y = op(A)·X and optionally Yabs = |op(A)|·Xabs, one read of A.
 * A is stored rows x cols (lda >= max(1, rows)).
 * trans = 0: X is cols x c, Y is rows x c.   trans = 1: X is rows x c, Y is cols x c.
 * X == NULL means the implicit checksum weights V = [1, j+1] (c must be 2).
 * Yabs == NULL: no absolute companion. Xabs == NULL with Yabs != NULL: use |X| (or V).
 * 1 <= c <= 16. Y and Yabs are overwritten (not accumulated). */
typedef struct abft_tsmm_args {
    abft_prec_t prec;
    int trans;
    int64_t rows, cols;
    int64_t c;
    const void *A;
    int64_t lda;
    const double *X;
    int64_t ldx;
    const double *Xabs;
    int64_t ldxabs;
    double *Y;
    int64_t ldy;
    double *Yabs;
    int64_t ldyabs;
    int comp; /* fp64 data: Y in compensated (Dot2) sums, within u·|Y| + gamma^2·(|op(A)|·|X|);
               * the CPU backend always sums so; the CUDA backend where comp is set (c <= 4),
               * else in plain fp64 sums. Yabs is a plain sum either way. */
} abft_tsmm_args_t;

/* Fused dual pass over one read of M (rows x cols):
 *   P = M·X (X cols x c1, P rows x c1),  Pabs = |M|·Xabs   (when Pabs != NULL)
 *   Q = M^T·Z (Z rows x c2, Q cols x c2), Qabs = |M|^T·Zabs (when Qabs != NULL)
 * X == NULL / Z == NULL mean the implicit weights (c1 / c2 must be 2); Xabs/Zabs == NULL
 * mean |X| / |Z|. 1 <= c1, c2 <= 16. */
typedef struct abft_dual_args {
    abft_prec_t prec;
    int64_t rows, cols;
    const void *M;
    int64_t ldm;
    int64_t c1;
    const double *X;
    int64_t ldx;
    const double *Xabs;
    int64_t ldxabs;
    double *P;
    int64_t ldp;
    double *Pabs;
    int64_t ldpabs;
    int64_t c2;
    const double *Z;
    int64_t ldz;
    const double *Zabs;
    int64_t ldzabs;
    double *Q;
    int64_t ldq;
    double *Qabs;
    int64_t ldqabs;
    int comp; /* as abft_tsmm_args_t's, for P and Q (c1, c2 <= 4 where set on CUDA) */
} abft_dual_args_t;

/* Checksum comparison of n entries, each with two checksum columns (e and w).
 *   expected s = alpha·S + beta·P               (P ignored when beta == 0 or P == NULL)
 *   bound    t = coef_s·(|alpha|·Sa + |beta|·Pa) + coef_r·Ra + abs_floor
 *   residual d = R - s;  entry i is flagged when !(|d| <= t) or t = +Inf in either column
 *   (an infinite bound verifies nothing: it comes from an Inf or an overflow in C or the
 *   encodings).
 * Each of R, Ra, S, Sa, P, Pa is n x 2 with its own leading dimension (in backend memory).
 * Output (host memory): *nflagged, *max_ratio (max over entries and columns of |d|/t, with
 * 0/0 = 0, and NaN ratios or infinite bounds reported as +Inf), and the first max_list flagged indices in
 * ascending order in list[] (host memory, may be NULL when max_list == 0).
 * The compare op takes njobs (1 or 2) of these at once: independent jobs, one
 * synchronisation for all (the full checksums' row and column sides). */
typedef struct abft_compare_args {
    int64_t n;
    const double *R;
    int64_t ldr;
    const double *Ra;
    int64_t ldra;
    const double *S;
    int64_t lds;
    const double *Sa;
    int64_t ldsa;
    const double *P;
    int64_t ldp;
    const double *Pa;
    int64_t ldpa;
    double alpha, beta;
    double coef_s, coef_r, abs_floor;
    int64_t max_list;
    int64_t *list;
    int64_t *nflagged;
    double *max_ratio;
    /* The tight bound (ABFT_BOUND_TIGHT; T == NULL otherwise): T is n x 2 (backend memory),
     * the part of each entry's bound computed from the inputs by the tight pass. Where
     * T >= 0 the bound is
     *   t = T + tcoef_s·|alpha|·Sa + tcoef_p·|beta|·Pa + tcoef_r·Ra
     *         + tcoef_x·(|R| + |alpha·S| + |beta·P|) + abs_floor
     * and where T < 0 (the pass found the entry's data outside the tight model) the
     * worst-case bound above. The tight bound is never looser than the worst case: where
     * it is the larger, the worst case's is used. tscale multiplies T (the random
     * checksum's weights lie in [1, 2): 2 times the e column's part; ldt = 0 reads
     * column 0 for both weight columns); it must be set where T != NULL. */
    const double *T;
    int64_t ldt;
    double tcoef_s, tcoef_p, tcoef_r, tcoef_x;
    double tscale;
} abft_compare_args_t;

/* The tight pass (ABFT_BOUND_TIGHT, docs/bound.md "Tight mode"): for each row i of
 * C = op(A)·op(B) (m x n, inner dimension k) and each checksum column q of V = [1, j+1],
 *   T(i, q) = lambda·|alpha|·sqrt(u^2·Vg(i, q) + u_chk^2·Vc(i, q))·(1 + pad)
 * Vg: the variance proxy of the GEMM's rounding errors along row i weighted by V (the
 * sketched squares of the partial sums, weighted by the column-class sizes of op(B), the
 * short nodes of blocked sums, the final roundings); Vc: that of the rounding of Yb
 * (= op(B)·V as the encoding stored it, k x 2). T(i, q) = -1 where row i and op(B) meet
 * the along-l guard (few distinct or near-constant values on both sides of a 16-term
 * window): the compare then uses the worst case. *nrisky (may be NULL) counts those rows.
 * The column side runs the same pass on C^T = op(B)^T·op(A)^T. */
/* A lane order of the tight pass: S lanes (at most ABFT_TIGHT_MAXLANES), each taking tiles
 * of b consecutive terms of k in turn. */
enum { ABFT_TIGHT_MAXORD = 2, ABFT_TIGHT_MAXLANES = 16 };
typedef struct abft_tight_order {
    int S, b;
} abft_tight_order_t;
typedef struct abft_tight_args {
    abft_prec_t prec;
    int transa, transb;
    int64_t m, n, k;
    const void *A;
    int64_t lda;
    const void *B;
    int64_t ldb;
    const double *Yb;
    int64_t ldyb;
    double alpha;
    double u, u_chk, lambda;
    double *T;
    int64_t ldt;
    int64_t *nrisky;
    int64_t ksplit; /* > 0: the GEMM runs as two calls split at ksplit along k (the second
                     * with beta = 1), whose second half sums from ksplit afresh */
    int nord;       /* the lane orders bounded beside the natural one (kernels/abft_tight_common.h) */
    abft_tight_order_t ord[ABFT_TIGHT_MAXORD];
    int filter;     /* 1: the filter only (docs/bound.md, "Two stages"): the natural order's
                     * sketched squares (no class weights, no windows, no lane orders, no
                     * guards), the short nodes with class weights 1, the final roundings and
                     * the encoding's rounding, so that T (always >= 0, 0 where it is not
                     * finite) stays below the full pass's; the CUDA backend computes it in
                     * fp32 arithmetic (an estimate: the protocol only accepts rows within
                     * it, and takes the larger of it and the full pass's) */
} abft_tight_args_t;

/* C = alpha·op(A)·op(B) + beta·C through the backend's BLAS (cuBLAS / host BLAS). */
typedef struct abft_gemm_args {
    abft_prec_t prec;
    int transa, transb;
    int64_t m, n, k;
    double alpha, beta; /* converted to float for ABFT_PREC_S */
    const void *A;
    int64_t lda;
    const void *B;
    int64_t ldb;
    void *C;
    int64_t ldc;
} abft_gemm_args_t;

/* Memory transfers between host memory and the backend's memory. Strided copy of a
 * rows x cols block of elem-byte elements (column-major with leading dimensions in
 * elements). dir = 0: backend -> host, dir = 1: host -> backend, both synchronous;
 * dir = 2: backend -> backend (`host` is then the destination, in backend memory), ordered
 * on the stream like a kernel (not synchronous). */
typedef struct abft_copy_args {
    int dir;
    size_t elem;
    int64_t rows, cols;
    void *host;
    int64_t ldh;
    void *dev;
    int64_t ldd;
} abft_copy_args_t;

/* ---- CPU backend (kernels/cpu) --------------------------------------------------------- */
abft_status_t abft_cpu_tsmm(const abft_kctx_t *ctx, const abft_tsmm_args_t *a);
abft_status_t abft_cpu_dual(const abft_kctx_t *ctx, const abft_dual_args_t *a);
abft_status_t abft_cpu_compare(const abft_kctx_t *ctx, const abft_compare_args_t *a, int njobs);
abft_status_t abft_cpu_tight(const abft_kctx_t *ctx, const abft_tight_args_t *a);
abft_status_t abft_cpu_gemm(const abft_kctx_t *ctx, const abft_gemm_args_t *a);
abft_status_t abft_cpu_alloc(const abft_kctx_t *ctx, size_t bytes, void **ptr);
abft_status_t abft_cpu_free(const abft_kctx_t *ctx, void *ptr);
abft_status_t abft_cpu_copy(const abft_kctx_t *ctx, const abft_copy_args_t *a);
abft_status_t abft_cpu_sync(const abft_kctx_t *ctx);
/* Everything runs in call order on the CPU: nothing to order. */
abft_status_t abft_cpu_order(const abft_kctx_t *waiter, const abft_kctx_t *signaler);

/* ---- CUDA backend (kernels/cuda), present when ABFT_HAVE_CUDA ------------------------- */
/* Device presence: 1 when at least one usable GPU is visible, 0 otherwise (never fails). */
int abft_cuda_device_present(void);
abft_status_t abft_cuda_context_create(abft_kctx_t *ctx);  /* device, cuBLAS/cuSOLVER */
abft_status_t abft_cuda_context_destroy(abft_kctx_t *ctx, int own_blas, int own_solver);
abft_status_t abft_cuda_tsmm(const abft_kctx_t *ctx, const abft_tsmm_args_t *a);
abft_status_t abft_cuda_dual(const abft_kctx_t *ctx, const abft_dual_args_t *a);
abft_status_t abft_cuda_compare(const abft_kctx_t *ctx, const abft_compare_args_t *a, int njobs);
/* The tight pass. *nrisky is set to -1 (not counted). */
abft_status_t abft_cuda_tight(const abft_kctx_t *ctx, const abft_tight_args_t *a);
/* Does the tight pass's shared memory hold its tables for n columns of op(B) and inner
 * dimension k on this device (abft_tight_tables_fit)? 0: every row gets the worst case. */
int abft_cuda_tight_fits(const abft_kctx_t *ctx, int64_t n, int64_t k, double u);
/* tsmm and dual with comp set for fp64 data (abft_cuda_dot2.cu): the compensated sums,
 * merged over threads and chunks in a tree, so within u·|Y| + gamma_(2L)^2·(|op(A)|·|X|)
 * for sums of L terms. */
abft_status_t abft_cuda_tsmm_dot2(const abft_kctx_t *ctx, const abft_tsmm_args_t *a);
abft_status_t abft_cuda_dual_dot2(const abft_kctx_t *ctx, const abft_dual_args_t *a);
abft_status_t abft_cuda_gemm(const abft_kctx_t *ctx, const abft_gemm_args_t *a);
abft_status_t abft_cuda_alloc(const abft_kctx_t *ctx, size_t bytes, void **ptr);
abft_status_t abft_cuda_free(const abft_kctx_t *ctx, void *ptr);
abft_status_t abft_cuda_copy(const abft_kctx_t *ctx, const abft_copy_args_t *a);
abft_status_t abft_cuda_sync(const abft_kctx_t *ctx);
/* The work queued on waiter's stream from now on starts after all work queued so far on
 * signaler's stream (an event recorded on one, waited for by the other). */
abft_status_t abft_cuda_order(const abft_kctx_t *waiter, const abft_kctx_t *signaler);
/* A second execution context on the current device for work that overlaps the main one:
 * a non-blocking stream of the highest priority, with its own cuBLAS and cuSOLVER handles
 * (a handle used from two streams at once would share its workspace). aux->scratch is left
 * to the caller. Destroy releases all three. */
abft_status_t abft_cuda_aux_create(abft_kctx_t *aux);
abft_status_t abft_cuda_aux_destroy(abft_kctx_t *aux);
/* The GEMM held back on the device while an input is not finite (abft_cuda_gate.cu).
 * screen: count the rows of the n x 2 array X (leading dimension ld, device memory) with a
 * NaN or an Inf into the context's counter, on the stream. gemm_gated: the GEMM, run only
 * when the counter is zero; the counter is read and reset by the same operation (on the
 * device where a CUDA graph with a conditional node can be built, else after a round trip).
 * gate_result: after synchronising the stream, the count that the last gemm_gated read
 * (> 0: the GEMM did not run). gate_reset: after a failed call, let the stream drain and
 * zero the counter (no count of it may reach a later call's gate). gate_create/destroy: the
 * state, made with the context. */
abft_status_t abft_cuda_gate_create(abft_kctx_t *ctx);
abft_status_t abft_cuda_gate_destroy(abft_kctx_t *ctx);
abft_status_t abft_cuda_screen(const abft_kctx_t *ctx, const double *X, int64_t n, int64_t ld);
abft_status_t abft_cuda_gemm_gated(const abft_kctx_t *ctx, const abft_gemm_args_t *a);
abft_status_t abft_cuda_gate_result(const abft_kctx_t *ctx, int64_t *held);
abft_status_t abft_cuda_gate_reset(const abft_kctx_t *ctx);
/* Which arithmetic cuBLAS runs a GEMM (and the trsm/getrf built on it) in for data of
 * precision prec under the math mode of the cuBLAS handle `blas`: ABFT_MATH_IEEE, _TF32 or
 * _BF16X9; NOT_SUPPORTED for a mode the bound does not model (FP64 fixed-point emulation). */
abft_status_t abft_cuda_blas_math(void *blas, abft_prec_t prec, abft_math_t *math);

#ifdef __cplusplus
}
#endif
#endif /* ABFT_KERNELS_H */

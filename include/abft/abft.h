/* abft: algorithm-based fault tolerance for dense linear algebra on GPUs.
 *
 * Umbrella header. Conventions (docs/api.md has the long form):
 *  - column-major storage, leading dimensions, 64-bit sizes and indices;
 *  - pointers given to a CUDA handle are device pointers, to a CPU handle host pointers;
 *    abft_report_t is always host memory;
 *  - every call returns abft_status_t; a detected fault is a result (in the report), not
 *    an error; an error found before any output is written leaves every output untouched
 *    (docs/api.md: errors after a multiplication started, and when the report is written);
 *  - CUDA-backend calls are ordered on the handle's stream; calls that return a report
 *    synchronize with that stream before returning, the pure encoding calls do not;
 *  - checksums are V = [e, w] with e_j = 1 and w_j = j + 1 (j 0-based): A·V is m x 2;
 *    checksums and the small operands of the tall-and-skinny products are always fp64,
 *    also for fp32 data (fp64 accumulation makes the fp32 bounds tight). */
#ifndef ABFT_H
#define ABFT_H

#include <stddef.h>
#include <stdint.h>

#include "abft/abft_status.h"
#include "abft/abft_types.h"
#include "abft/abft_version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ------------------------------------------------------------------------- */

/* ABFT_VERSION_NUMBER of the library actually linked (major*10000 + minor*100 + patch). */
ABFT_API unsigned abft_version_number(void);
/* "major.minor.patch" of the library actually linked. */
ABFT_API const char *abft_version_string(void);

/* ---- handle -------------------------------------------------------------------------- */

/* Creates a handle on the requested backend. AUTO picks CUDA when this build has it and a
 * GPU is present, else CPU. CUDA on a build or machine without it: NOT_SUPPORTED.
 * The CUDA backend uses the current device, the default stream, and creates its own
 * cuBLAS/cuSOLVER handles lazily (or uses borrowed ones). */
ABFT_API abft_status_t abft_create(abft_handle_t *handle, abft_backend_t backend);
/* Releases everything the handle owns; borrowed handles are left alone. NULL is a no-op. */
ABFT_API abft_status_t abft_destroy(abft_handle_t handle);
/* The backend the handle actually runs on (never AUTO). */
ABFT_API abft_status_t abft_get_backend(abft_handle_t handle, abft_backend_t *backend);
/* 1 when this build contains the CUDA backend. */
ABFT_API int abft_cuda_built(void);

/* Stream (a cudaStream_t passed as void* so this header needs no CUDA headers). CPU handles
 * accept only NULL. */
ABFT_API abft_status_t abft_set_stream(abft_handle_t handle, void *stream);
ABFT_API abft_status_t abft_get_stream(abft_handle_t handle, void **stream);

/* Borrow a caller's cublasHandle_t / cusolverDnHandle_t (as void*); NULL returns to the
 * handle's own. Where they differ from what it needs (the abft handle's stream, host
 * pointer mode), the library sets the stream and pointer mode for its calls and restores
 * them before returning; the math mode and the other settings are read, never changed.
 * cuBLAS resets a handle's workspace (cublasSetWorkspace) whenever its stream is set: give
 * both handles the same stream to keep one. GEMMs captured into the library's graphs run
 * on a private cuBLAS handle with the borrowed one's settings (docs/api.md). */
ABFT_API abft_status_t abft_set_cublas_handle(abft_handle_t handle, void *cublas_handle);
ABFT_API abft_status_t abft_set_cusolver_handle(abft_handle_t handle, void *cusolver_handle);

/* Options. */
ABFT_API abft_status_t abft_set_checksum_kind(abft_handle_t handle, abft_checksum_kind_t kind);
ABFT_API abft_status_t abft_get_checksum_kind(abft_handle_t handle, abft_checksum_kind_t *kind);
/* factor > 0 scales the bound (1 is the derivation as written; the probabilistic mode's
 * default factor is 4; the tight mode's scales its lambda; see docs/bound.md). */
ABFT_API abft_status_t abft_set_bound_mode(abft_handle_t handle, abft_bound_mode_t mode, double factor);
ABFT_API abft_status_t abft_get_bound_mode(abft_handle_t handle, abft_bound_mode_t *mode, double *factor);
/* Whether protected calls may recompute uncorrectable rows (only when beta = 0); default 1. */
ABFT_API abft_status_t abft_set_recompute(abft_handle_t handle, int enable);
/* A third row checksum for protected GEMMs (abft_dgemm/abft_sgemm and plans created after
 * the call), detection only: two columns of pseudo-random weights in [1, 2) drawn from
 * `seed`, checked beside the fixed weights [1, j+1]. It sees the faults of A or B after
 * encoding that the fixed weights cannot (a row change orthogonal to both, as a stencil row
 * (1, -2, 1) gives), with the probability docs/bound.md states; a row it flags is recomputed
 * where possible or reported, never corrected on its evidence. It costs one more pass over
 * A, B and C (and the old C with beta != 0). Default off (enable 0). */
ABFT_API abft_status_t abft_set_random_checksum(abft_handle_t handle, int enable, uint64_t seed);
ABFT_API abft_status_t abft_get_random_checksum(abft_handle_t handle, int *enable,
                                                uint64_t *seed);

/* Fault-injection hook (see abft_types.h); fn = NULL removes it. */
ABFT_API abft_status_t abft_set_hook(abft_handle_t handle, abft_hook_fn fn, void *user);

/* ---- checksum encoding --------------------------------------------------------------- */

/* Row checksums of the m x n matrix A: R = A·V (m x 2, ldr >= max(1,m)), and when Rabs is
 * not NULL, Rabs = |A|·V (m x 2) from the same read of A. */
ABFT_API abft_status_t abft_dchecksum_rows(abft_handle_t handle, int64_t m, int64_t n, const double *A,
                                  int64_t lda, double *R, int64_t ldr, double *Rabs,
                                  int64_t ldrabs);
ABFT_API abft_status_t abft_schecksum_rows(abft_handle_t handle, int64_t m, int64_t n, const float *A,
                                  int64_t lda, double *R, int64_t ldr, double *Rabs,
                                  int64_t ldrabs);

/* Column checksums of the m x n matrix A, returned transposed: K = A^T·V = (V^T·A)^T,
 * n x 2 with ldk >= max(1,n); Kabs = |A|^T·V likewise when not NULL. */
ABFT_API abft_status_t abft_dchecksum_cols(abft_handle_t handle, int64_t m, int64_t n, const double *A,
                                  int64_t lda, double *K, int64_t ldk, double *Kabs,
                                  int64_t ldkabs);
ABFT_API abft_status_t abft_schecksum_cols(abft_handle_t handle, int64_t m, int64_t n, const float *A,
                                  int64_t lda, double *K, int64_t ldk, double *Kabs,
                                  int64_t ldkabs);

/* Tall-and-skinny product Y = op(A)·X, A stored m x n with lda >= max(1,m).
 *   trans = N: X is n x c, Y is m x c;  trans = T: X is m x c, Y is n x c (the long-K
 *   reduction A^T·X). 1 <= c <= 16.
 * When Yabs is not NULL it also gets Yabs = |op(A)|·Xabs from the same read of A, where
 * Xabs (same shape as X, entries >= 0) defaults to |X| when NULL. Yabs must not alias Y. */
ABFT_API abft_status_t abft_dtsmm(abft_handle_t handle, abft_operation_t trans, int64_t m, int64_t n,
                         int64_t c, const double *A, int64_t lda, const double *X, int64_t ldx,
                         double *Y, int64_t ldy, const double *Xabs, int64_t ldxabs,
                         double *Yabs, int64_t ldyabs);
ABFT_API abft_status_t abft_ststmm(abft_handle_t handle, abft_operation_t trans, int64_t m, int64_t n,
                          int64_t c, const float *A, int64_t lda, const double *X, int64_t ldx,
                          double *Y, int64_t ldy, const double *Xabs, int64_t ldxabs,
                          double *Yabs, int64_t ldyabs);

/* Fused dual pass over one read of the m x n matrix M:
 *   P = M·X   (X n x c1, P m x c1)  and  Q = M^T·Z  (Z m x c2, Q n x c2),
 * 1 <= c1, c2 <= 16. */
ABFT_API abft_status_t abft_ddual(abft_handle_t handle, int64_t m, int64_t n, const double *M,
                         int64_t ldm, int64_t c1, const double *X, int64_t ldx, double *P,
                         int64_t ldp, int64_t c2, const double *Z, int64_t ldz, double *Q,
                         int64_t ldq);
ABFT_API abft_status_t abft_sdual(abft_handle_t handle, int64_t m, int64_t n, const float *M,
                         int64_t ldm, int64_t c1, const double *X, int64_t ldx, double *P,
                         int64_t ldp, int64_t c2, const double *Z, int64_t ldz, double *Q,
                         int64_t ldq);

/* ---- protected GEMM ------------------------------------------------------------------ */

/* C = alpha·op(A)·op(B) + beta·C with cublasDgemm's argument order (op(A) m x k, op(B)
 * k x n, C m x n), protected by checksums: encode, multiply, verify against the bound,
 * locate, correct single errors per row (per column too with FULL checksums) where the
 * element recomputed from A and B confirms the value (beta = 0), re-verify, recompute what
 * may be recomputed, report the rest. alpha, beta are host values.
 * report (host memory) may be NULL. NaN/Inf in A, B or (when beta != 0) C: status
 * NON_FINITE_INPUT, report->nonfinite_input = 1, C untouched. */
ABFT_API abft_status_t abft_dgemm(abft_handle_t handle, abft_operation_t transa, abft_operation_t transb,
                         int64_t m, int64_t n, int64_t k, double alpha, const double *A,
                         int64_t lda, const double *B, int64_t ldb, double beta, double *C,
                         int64_t ldc, abft_report_t *report);
ABFT_API abft_status_t abft_sgemm(abft_handle_t handle, abft_operation_t transa, abft_operation_t transb,
                         int64_t m, int64_t n, int64_t k, float alpha, const float *A,
                         int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                         int64_t ldc, abft_report_t *report);

/* Split form, for a GEMM the caller runs itself (on its own cuBLAS handle and stream):
 *   abft_gemm_plan_create(...same shape/ops/alpha/beta..., &plan)
 *   abft_dgemm_encode(handle, plan, A, lda, B, ldb, C, ldc)   (C read only when beta != 0)
 *   ... the caller's GEMM writes C ...
 *   abft_dgemm_verify(handle, plan, A, lda, B, ldb, C, ldc, report)
 * The plan owns the encoded checksums (memory of the handle's backend). A, B are needed
 * again in verify only for recomputation and, in the tight bound mode, for the bound of an
 * entry the compare flags (without them that entry's bound is looser, docs/api.md). */
typedef struct abft_gemm_plan *abft_gemm_plan_t;
ABFT_API abft_status_t abft_gemm_plan_create(abft_handle_t handle, char precision,
                                    abft_operation_t transa, abft_operation_t transb, int64_t m,
                                    int64_t n, int64_t k, double alpha, double beta,
                                    abft_gemm_plan_t *plan);
ABFT_API abft_status_t abft_gemm_plan_destroy(abft_gemm_plan_t plan);
/* The arithmetic of the caller's GEMM, which the bound must model (docs/bound.md): declared
 * (ABFT_MATH_IEEE, _TF32, _BF16X9; TF32 and BF16X9 for 's' plans only), or read from the
 * math mode of the caller's own cuBLAS handle at encode and at verify
 * (abft_gemm_plan_set_cublas_math; NULL returns to ABFT_MATH_HANDLE; NOT_SUPPORTED without
 * the CUDA backend). Default ABFT_MATH_HANDLE: the library handle's arithmetic. A mode the
 * bound does not model (FP64 fixed-point emulation) makes encode and verify return
 * NOT_SUPPORTED with nothing written. */
ABFT_API abft_status_t abft_gemm_plan_set_math(abft_gemm_plan_t plan, abft_math_t math);
ABFT_API abft_status_t abft_gemm_plan_set_cublas_math(abft_gemm_plan_t plan, void *cublas_handle);
ABFT_API abft_status_t abft_dgemm_encode(abft_handle_t handle, abft_gemm_plan_t plan, const double *A,
                                int64_t lda, const double *B, int64_t ldb, const double *C,
                                int64_t ldc);
ABFT_API abft_status_t abft_dgemm_verify(abft_handle_t handle, abft_gemm_plan_t plan, const double *A,
                                int64_t lda, const double *B, int64_t ldb, double *C,
                                int64_t ldc, abft_report_t *report);
ABFT_API abft_status_t abft_sgemm_encode(abft_handle_t handle, abft_gemm_plan_t plan, const float *A,
                                int64_t lda, const float *B, int64_t ldb, const float *C,
                                int64_t ldc);
ABFT_API abft_status_t abft_sgemm_verify(abft_handle_t handle, abft_gemm_plan_t plan, const float *A,
                                int64_t lda, const float *B, int64_t ldb, float *C,
                                int64_t ldc, abft_report_t *report);

#ifdef __cplusplus
}
#endif

#include "abft/abft_lu.h"
#include "abft/abft_inject.h"

#endif /* ABFT_H */

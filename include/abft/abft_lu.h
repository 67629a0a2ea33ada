/* abft: protected LU factorization and solve (see abft.h for the conventions, docs/lu.md
 * for the bound and the location logic).
 *
 * Pivots. Every pivot array of this header is int64_t, 1-based, LAPACK style (row i was
 * interchanged with row ipiv[i] - 1), length min(m, n), and lives in the memory of the
 * handle's backend (device memory for a CUDA handle, like cuSOLVER's devIpiv). The only
 * exception is the split form's verify, which also accepts the 32-bit pivots that
 * cusolverDnDgetrf and LP64 LAPACK write (ipiv_bits = 32).
 *
 * info (host memory, may be NULL): 0, or i + 1 when U(i, i) is exactly zero (LAPACK's
 * info > 0); the status is then ABFT_STATUS_SINGULAR and the factors are returned, checked
 * and corrected like any others. The info is that of the factors returned: when the check
 * corrected or recomputed an element, it is taken again from their diagonal (a fault can
 * make a zero pivot nonzero for the factorization, and its correction restore the zero). */
#ifndef ABFT_LU_H
#define ABFT_LU_H

#include <stdint.h>

#include "abft/abft_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Recovery copy (default 0: off). With enable = 1 every protected LU of this handle (offline,
 * online, and split-form plans created afterwards) keeps a copy of A from the encode (m·n
 * more backend memory, one more read and write of A). When the checksums flag a row of the
 * factors but cannot locate one element in it (an error too small for the two checksum
 * ratios to single out its column, docs/lu.md), the row of the fault in L and U is
 * recomputed from the copy, P·A = L·U row r:  L(r, :) = a·U11^-1,
 * U(r, r:) = a(r:) - L(r, :)·U(:, r:), and the whole check is run again; it is kept only if
 * the check passes (report->recomputed, ABFT_ACTION_RECOMPUTED), otherwise reverted and
 * reported uncorrectable. r is the first flagged row, or a row above it whose column of L
 * carries the residual down to it (a small error of U that only the rows below show). */
ABFT_API abft_status_t abft_set_lu_recovery(abft_handle_t handle, int enable);

/* Offline protected LU: P·A = L·U in place (L unit lower, U upper, LAPACK layout), A m x n.
 * Before the factorization A·V and |A|·V are encoded (one read of A); after it the check
 * L·(U·V) = P·(A·V) is made against the bound of docs/lu.md (one read of the factors).
 * One corrupted element of L or U is located (the residual pattern tells the factors
 * apart), corrected and re-verified. A fault that struck during the factorization and
 * spread is reported (report->spread = 1, report->uncorrectable > 0): the factors are then
 * not trustworthy and the caller should refactor. A corrupted checksum is reported as a
 * checksum fault, the factors intact. Hooks: ABFT_SITE_CHECKSUM (the encoded A·V, m x 2
 * fp64), ABFT_SITE_AFTER_LU (the factors). report (host memory) may be NULL. NaN/Inf in A:
 * ABFT_STATUS_NON_FINITE_INPUT, A untouched. Synchronizes with the handle's stream. */
ABFT_API abft_status_t abft_dgetrf(abft_handle_t handle, int64_t m, int64_t n, double *A,
                                   int64_t lda, int64_t *ipiv, int64_t *info,
                                   abft_report_t *report);
ABFT_API abft_status_t abft_sgetrf(abft_handle_t handle, int64_t m, int64_t n, float *A,
                                   int64_t lda, int64_t *ipiv, int64_t *info,
                                   abft_report_t *report);

/* Options of the online factorization; a NULL pointer or 0 fields mean the defaults. */
typedef struct abft_lu_options {
    int64_t nb;          /* panel width (default 64 on the CPU; on the GPU 256 up to
                            min(m, n) = 8192, 512 above) */
    int64_t check_every; /* verify the trailing matrix after every check_every-th panel
                            (default 1: after each panel) */
    int64_t panel_nb;    /* panels wider than this are factored recursively (halves, as
                            LAPACK's getrf2), narrower ones by the backend's getrf (default
                            nb, no recursion, except 128 on the GPU above min(m, n) = 8192) */
    int64_t lookahead;   /* 1: factor the next panel while the rest of the trailing matrix
                            is updated and checked (CUDA: on a second stream, see docs/lu.md),
                            -1: never; 0 (default): on for the GPU when no hook is set, off
                            on the CPU. With a hook set, look-ahead overlaps only the check:
                            the hook still sees A between two panels. */
} abft_lu_options_t;

/* Online protected LU ("checksums inside the factorization"): a blocked right-looking LU
 * (panel getrf, laswp, trsm, gemm trailing update) that carries the two checksum columns
 * A·V through the same row swaps and trailing updates, verifies the trailing matrix after
 * the panels (options->check_every), and corrects one error per row of the trailing matrix
 * before it can spread. The hook is called at ABFT_SITE_LU_PANEL with the whole matrix
 * (which = index of the panel just finished) before each check, and at ABFT_SITE_AFTER_LU.
 * The final factors get the offline check as well (L is only covered there). Without
 * faults the pivots and factors are those of the backend's getrf to rounding (identical to
 * reference LAPACK dgetrf with nb = 64). Arguments and results as abft_dgetrf. */
ABFT_API abft_status_t abft_dgetrf_online(abft_handle_t handle, int64_t m, int64_t n, double *A,
                                          int64_t lda, int64_t *ipiv,
                                          const abft_lu_options_t *options, int64_t *info,
                                          abft_report_t *report);
ABFT_API abft_status_t abft_sgetrf_online(abft_handle_t handle, int64_t m, int64_t n, float *A,
                                          int64_t lda, int64_t *ipiv,
                                          const abft_lu_options_t *options, int64_t *info,
                                          abft_report_t *report);

/* Split form, for a factorization the caller runs itself (its own cuSOLVER/LAPACK call):
 *   abft_lu_plan_create(handle, 'd' or 's', m, n, &plan)
 *   abft_dgetrf_encode(handle, plan, A, lda)           before the factorization
 *   ... the caller's getrf factors A in place ...
 *   abft_dgetrf_verify(handle, plan, A, lda, ipiv, 32 or 64, report)
 * ipiv_bits: 32 for int pivots (cusolverDnDgetrf, LP64 LAPACK), 64 for int64_t. The plan
 * owns the encoded checksums (backend memory); it is bound to the handle that created it
 * and may be encoded and verified again. Verify corrects A in place like abft_dgetrf; it
 * returns ABFT_STATUS_SINGULAR (report written) when it corrected or recomputed an element
 * and the returned U has an exactly zero diagonal entry (the info of the caller's getrf
 * predates the correction), otherwise SUCCESS: without a correction the caller's info
 * stands. */
typedef struct abft_lu_plan *abft_lu_plan_t;
ABFT_API abft_status_t abft_lu_plan_create(abft_handle_t handle, char precision, int64_t m,
                                           int64_t n, abft_lu_plan_t *plan);
ABFT_API abft_status_t abft_lu_plan_destroy(abft_lu_plan_t plan);
ABFT_API abft_status_t abft_dgetrf_encode(abft_handle_t handle, abft_lu_plan_t plan,
                                          const double *A, int64_t lda);
ABFT_API abft_status_t abft_sgetrf_encode(abft_handle_t handle, abft_lu_plan_t plan,
                                          const float *A, int64_t lda);
ABFT_API abft_status_t abft_dgetrf_verify(abft_handle_t handle, abft_lu_plan_t plan, double *A,
                                          int64_t lda, const void *ipiv, int ipiv_bits,
                                          abft_report_t *report);
ABFT_API abft_status_t abft_sgetrf_verify(abft_handle_t handle, abft_lu_plan_t plan, float *A,
                                          int64_t lda, const void *ipiv, int ipiv_bits,
                                          abft_report_t *report);

/* Protected solve with the factors of abft_?getrf (n x n, ipiv int64_t in backend memory):
 * op(A)·X = B, B n x nrhs overwritten by X. Each triangular solve is checked with the
 * column checksums of its factor, V^T·T·y = V^T·b, against a bound (docs/lu.md); a flagged
 * right-hand side is reported (report->uncorrectable, faults[].col = its index; B holds the
 * suspect solution). The factors are trusted (verify them with the getrf calls). A NaN or
 * Inf in B: ABFT_STATUS_NON_FINITE_INPUT, B untouched, report->nonfinite_input = 1 (the
 * factors are not scanned: a NaN/Inf there shows as flagged right-hand sides). nrhs = 0
 * returns at once, ipiv not read (as LAPACK's getrs). */
ABFT_API abft_status_t abft_dgetrs(abft_handle_t handle, abft_operation_t trans, int64_t n,
                                   int64_t nrhs, const double *A, int64_t lda,
                                   const int64_t *ipiv, double *B, int64_t ldb,
                                   abft_report_t *report);
ABFT_API abft_status_t abft_sgetrs(abft_handle_t handle, abft_operation_t trans, int64_t n,
                                   int64_t nrhs, const float *A, int64_t lda,
                                   const int64_t *ipiv, float *B, int64_t ldb,
                                   abft_report_t *report);

#ifdef __cplusplus
}
#endif
#endif /* ABFT_LU_H */

/* libabft_blas.so: declarations shared by the drop-in library's sources (docs/dropin.md).
 * Private header, never installed. */
#ifndef ABFT_BLAS_INTERNAL_H
#define ABFT_BLAS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "abft/abft.h"
#include "abft/abft_inject.h"

/* Fortran signatures of the intercepted routines with their scalars and arrays as void *,
 * so that one generic wrapper per operation serves every type. The trailing size_t are the
 * hidden lengths of the character arguments (gfortran's convention). */
typedef void (*abft_blas_gemm_fn)(const char *ta, const char *tb, const int *m, const int *n,
                                  const int *k, const void *alpha, const void *A,
                                  const int *lda, const void *B, const int *ldb,
                                  const void *beta, void *C, const int *ldc, size_t lta,
                                  size_t ltb);
typedef void (*abft_blas_getrf_fn)(const int *m, const int *n, void *A, const int *lda,
                                   int *ipiv, int *info);
typedef void (*abft_blas_getrs_fn)(const char *trans, const int *n, const int *nrhs,
                                   const void *A, const int *lda, const int *ipiv, void *B,
                                   const int *ldb, int *info, size_t ltrans);
typedef void (*abft_blas_gesv_fn)(const int *n, const int *nrhs, void *A, const int *lda,
                                  int *ipiv, void *B, const int *ldb, int *info);
typedef void (*abft_blas_trsm_fn)(const char *side, const char *uplo, const char *transa,
                                  const char *diag, const int *m, const int *n,
                                  const void *alpha, const void *A, const int *lda, void *B,
                                  const int *ldb, size_t ls, size_t lu, size_t lt, size_t ld);
typedef void (*abft_blas_syrk_fn)(const char *uplo, const char *trans, const int *n,
                                  const int *k, const void *alpha, const void *A,
                                  const int *lda, const void *beta, void *C, const int *ldc,
                                  size_t lu, size_t lt);

/* One entry per type: what the generic wrappers need to know about it. Adding a type
 * (complex, later) is one entry of the table in abft_blas.c plus its exported symbols. */
typedef struct abft_blas_type {
    char prec;                  /* 'd', 's' */
    size_t size;                /* bytes per element */
    const char *name_gemm;      /* the routine names handed to xerbla_ ("DGEMM ", ...) */
    const char *name_getrf;
    const char *name_getrs;
    const char *name_gesv;
    const char *name_trsm;
    const char *name_syrk;
    const char *sym_gemm;       /* the symbols looked up after this library ("dgemm_") */
    const char *sym_getrf;
    const char *sym_getrs;
    const char *sym_cblas_gemm; /* "cblas_dgemm" */
    const char *sym_trsm;       /* also what the CPU backend calls ("dtrsm_") */
    const char *sym_syrk;
    const char *sym_gesv;
    const void *one;            /* the scalar 1 */
    int (*is_zero)(const void *scalar);
    int (*is_one)(const void *scalar);
    int (*is_finite)(const void *scalar);
    /* C = beta·C (beta = 0: C = 0, not read), m x n: the reference's alpha = 0 / k = 0 case */
    void (*scale)(int m, int n, const void *beta, void *C, int ldc);
    /* the protected operations of libabft, scalars passed by address */
    abft_status_t (*gemm)(abft_handle_t h, abft_operation_t ta, abft_operation_t tb, int64_t m,
                          int64_t n, int64_t k, const void *alpha, const void *A, int64_t lda,
                          const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc,
                          abft_report_t *rep);
    abft_status_t (*getrf)(abft_handle_t h, int64_t m, int64_t n, void *A, int64_t lda,
                           int64_t *ipiv, int64_t *info, abft_report_t *rep);
    abft_status_t (*getrs)(abft_handle_t h, abft_operation_t trans, int64_t n, int64_t nrhs,
                           const void *A, int64_t lda, const int64_t *ipiv, void *B,
                           int64_t ldb, abft_report_t *rep);
    /* calls the real CBLAS gemm fn (the type's own signature: scalars by value) */
    void (*cblas_gemm_call)(void *fn, int layout, int ta, int tb, int m, int n, int k,
                            const void *alpha, const void *A, int lda, const void *B, int ldb,
                            const void *beta, void *C, int ldc);
} abft_blas_type_t;

/* ---- the checks of SYRK and TRSM (abft_blas_l3.c) ---------------------------------------- */

/* One SYRK check, C = alpha·M·M^T + beta·C on the uplo triangle, M = op(A) n x k. The caller
 * sets the call's fields; abft_blas_syrk_before points the sums into ws
 * (abft_blas_syrk_ws(n, k) bytes) and fills the encodings of A and (beta != 0) the old C. */
typedef struct abft_blas_syrk {
    char prec; /* 'd', 's' */
    int upper, trans; /* trans: M = A^T (A is k x n) */
    int64_t n, k;
    const void *A;
    int64_t lda;
    double alpha, beta;
    double *Y, *Ya, *S, *Sa, *P, *Pa, *a1, *R, *Ra; /* the sums (abft_blas_l3.c) */
    double ysum[2];
} abft_blas_syrk_t;
size_t abft_blas_syrk_ws(int64_t n, int64_t k);
/* Before the call: 0 when A or (beta != 0) the triangle of C holds NaN or Inf, or an encoding
 * overflows fp64 (the call is then not checked). */
int abft_blas_syrk_before(abft_blas_syrk_t *c, void *ws, const void *C, int64_t ldc);
/* After the call: the row checksums of the result against the GEMM bound of the handle h
 * (its bound mode); rep as libabft's: rows checked, flagged rows detected and
 * uncorrectable, one fault per flagged row (col -1). */
void abft_blas_syrk_after(abft_handle_t h, const abft_blas_syrk_t *c, const void *C,
                          int64_t ldc, abft_report_t *rep);
/* The uplo triangle of the n x n matrix C into buf (its columns' parts in turn) and back;
 * C = beta·C on the triangle (beta = 0: C = 0, not read). */
void abft_blas_tri_save(char prec, int upper, int64_t n, const void *C, int64_t ldc, void *buf);
void abft_blas_tri_load(char prec, int upper, int64_t n, void *C, int64_t ldc, const void *buf);
void abft_blas_tri_scale(char prec, int upper, int64_t n, const void *beta, void *C,
                         int64_t ldc);

/* One TRSM check: op(A)·X = B (left, A m x m) or X·op(A) = B (right, A n x n), B m x n.
 * abft_blas_trsm_encode points the sums into ws (abft_blas_trsm_ws bytes) and encodes the
 * triangle: 0 when it holds NaN or Inf, or a zero on a non-unit diagonal. */
typedef struct abft_blas_trsm {
    char prec;
    int left, upper, trans, unit;
    int64_t m, n;
    const void *A;
    int64_t lda;
    double *K, *Ka, *dg, *Bs, *Bsa, *Ys, *Ysa;
    double dsum[2], dmax;
} abft_blas_trsm_t;
size_t abft_blas_trsm_ws(int64_t m, int64_t n, int left);
int abft_blas_trsm_encode(abft_blas_trsm_t *c, void *ws);
/* B = fl(alpha·B) in the data precision (alpha != 1) and the right-hand sides' sums: 0 when
 * B then holds NaN or Inf (B is scaled all the same: the solve with alpha = 1 that follows
 * is the call's). */
int abft_blas_trsm_rhs(abft_blas_trsm_t *c, void *B, int64_t ldb, const void *alpha);
/* After the solve with alpha = 1: each right-hand side against the triangular solve's bound
 * (abft_bound_trs); rep as above, one fault per flagged right-hand side (left: col j; right:
 * row i). */
void abft_blas_trsm_after(abft_handle_t h, const abft_blas_trsm_t *c, const void *X,
                          int64_t ldx, abft_report_t *rep);

/* ---- threads of the checksum passes (abft_blas_pool.c) ------------------------------------ */

/* The threads a pass of the calling thread may use: its OpenMP setting (OMP_NUM_THREADS,
 * omp_set_num_threads), 1 inside a parallel region. */
int abft_blas_pool_threads(void);
/* fn(ctx, i) for every i in [0, n), on up to `threads` threads of a pool whose workers
 * sleep between jobs (the caller among them); returns when all are done. */
void abft_blas_parallel(int64_t n, int threads, void (*fn)(void *ctx, int64_t item), void *ctx);

/* The checksum passes in plain fp64 sums (abft_blas_kernels.c): for the worst-case and
 * probabilistic bounds only. */
void abft_blas_kernels_plain(int on);

/* ---- packed images (abft_blas_pack.c) ----------------------------------------------------- */

/* Bytes [off, off + len) of the packed image of a rows-row column-major matrix of es-byte
 * elements with leading dimension ld >= rows (its columns one after the other, without the
 * padding): pack copies them from the matrix into buf, unpack from buf into the matrix. A
 * range may begin and end inside a column; the padding is never touched. */
void abft_blas_pack_bytes(void *buf, const void *mat, int64_t ld, int64_t rows, size_t es,
                          size_t off, size_t len);
void abft_blas_unpack_bytes(void *mat, int64_t ld, const void *buf, int64_t rows, size_t es,
                            size_t off, size_t len);

/* ---- staging to the GPU (the CUDA module, abft_blas_cuda.c) ----------------------------- */

#define ABFT_BLAS_STAGE_MAX_LANES 16

/* One transfer lane: a host thread's two pinned buffers (double buffering), its stream and
 * the events that tell when a buffer is free again. CUDA objects as void *. */
typedef struct abft_blas_lane {
    void *pinned[2];
    void *stream;
    void *ev[2];
} abft_blas_lane_t;

/* Per-thread staging state: device buffers for the operands (kept between calls, grown when
 * too small) and the transfer lanes. lanes and chunk are set by the caller before a call
 * (ABFT_BLAS_STAGE_THREADS, ABFT_BLAS_STAGE_CHUNK); the lanes are made on first use with
 * that chunk and kept. */
typedef struct abft_blas_stage {
    void *dev[3];
    size_t bytes[3];
    int lanes;    /* host threads moving one operand (1 = the calling thread alone) */
    size_t chunk; /* bytes of each pinned buffer */
    int made;     /* lanes made: 0 none yet, > 0 that many, -1 pinned memory refused
                   * (the transfers then go through pageable copies) */
    size_t made_chunk;
    abft_blas_lane_t lane[ABFT_BLAS_STAGE_MAX_LANES];
} abft_blas_stage_t;

/* ---- the CUDA module (libabft_blas_cuda.so, abft_blas_cuda.c) ---------------------------
 *
 * The drop-in links no CUDA library: its CUDA backend is a module of its own, a second copy
 * of the libabft objects built with the CUDA backend plus the staging below, linked with
 * the CUDA libraries and loaded with dlopen the first time a call is to run on the GPU
 * (docs/dropin.md, "What a process pays for the preload"). Handles made by the module are
 * used only through its table. */

/* The libabft functions the drop-in calls on a handle: those of its own objects for CPU
 * handles (abft_blas.c), the module's for CUDA handles. */
typedef struct abft_blas_lib {
    __typeof__(abft_create) *create;
    __typeof__(abft_destroy) *destroy;
    __typeof__(abft_set_checksum_kind) *set_checksum_kind;
    __typeof__(abft_set_random_checksum) *set_random_checksum;
    __typeof__(abft_set_bound_mode) *set_bound_mode;
    __typeof__(abft_set_recompute) *set_recompute;
    __typeof__(abft_set_lu_recovery) *set_lu_recovery;
    __typeof__(abft_injector_create) *injector_create;
    __typeof__(abft_injector_destroy) *injector_destroy;
    __typeof__(abft_injector_set_spec) *injector_set_spec;
    __typeof__(abft_injector_set_targets) *injector_set_targets;
    __typeof__(abft_injector_arm) *injector_arm;
    __typeof__(abft_injector_attach) *injector_attach;
    __typeof__(abft_injector_detach) *injector_detach;
    __typeof__(abft_injector_flips) *injector_flips;
} abft_blas_lib_t;

#define ABFT_BLAS_CUDA_API_VERSION 1
#define ABFT_BLAS_CUDA_MODULE_ENTRY "abft_blas_cuda_module"

typedef struct abft_blas_cuda_api {
    int version; /* ABFT_BLAS_CUDA_API_VERSION */
    abft_blas_lib_t lib;
    /* 1 when a GPU is present */
    int (*present)(void);
    /* Stage A, B and (beta != 0) C to the GPU and run the protected GEMM of type prec
     * ('d', 's') on the CUDA handle h, which checks (and corrects) it there. The host C is
     * not written: the result stays on the device until gemm_result copies it (so a
     * staged call that fails, or that a recomputation repeats, still finds the old C on the
     * host). */
    abft_status_t (*gemm)(abft_blas_stage_t *st, char prec, abft_handle_t h,
                          abft_operation_t ta, abft_operation_t tb, int64_t m, int64_t n,
                          int64_t k, const void *alpha, const void *A, int64_t lda,
                          const void *B, int64_t ldb, const void *beta, const void *C,
                          int64_t ldc, abft_report_t *rep);
    /* Copies the result of this thread's last successful gemm (m x n) into the host C.
     * *written: 0 when the copy did not begin (C untouched), 1 when it did (on an error C
     * may then be partly written). */
    abft_status_t (*gemm_result)(abft_blas_stage_t *st, char prec, abft_handle_t h, int64_t m,
                                 int64_t n, void *C, int64_t ldc, int *written);
    /* Stage the operands of a factorization or solve to the GPU, run it on h (checked there)
     * and copy the result back: ipiv and A (getrf), B (getrs). *written: 1 once the copy back
     * began. On an error status with *written = 0 the host arrays are untouched (the call
     * can run elsewhere); with *written = 1 they may be partly written. */
    abft_status_t (*getrf)(abft_blas_stage_t *st, char prec, abft_handle_t h, int64_t m,
                           int64_t n, void *A, int64_t lda, int64_t *ipiv, int64_t *info,
                           abft_report_t *rep, int *written);
    abft_status_t (*getrs)(abft_blas_stage_t *st, char prec, abft_handle_t h,
                           abft_operation_t trans, int64_t n, int64_t nrhs, const void *A,
                           int64_t lda, const int64_t *ipiv, void *B, int64_t ldb,
                           abft_report_t *rep, int *written);
    /* Frees the device buffers and the lanes (the pinned buffers, streams and events). */
    void (*release)(abft_blas_stage_t *st);
} abft_blas_cuda_api_t;

/* The module's one exported function: its table for the drop-in's ABFT_BLAS_CUDA_API_VERSION
 * (NULL for another version). hb: the host routines the module's own CPU code is to call,
 * the drop-in's (its objects never call the symbols the drop-in exports). */
typedef const abft_blas_cuda_api_t *(*abft_blas_cuda_module_fn)(int version,
                                                                const void *host_blas);

#endif /* ABFT_BLAS_INTERNAL_H */

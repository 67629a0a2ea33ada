/* abft: public types (handle, enums, options, report). */
#ifndef ABFT_TYPES_H
#define ABFT_TYPES_H

#include <stdint.h>

#include "abft/abft_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque handle: owns the backend, the stream, borrowed or owned cuBLAS/cuSOLVER handles,
 * workspace and options. One handle per thread. */
typedef struct abft_context *abft_handle_t;

typedef enum abft_backend {
    ABFT_BACKEND_AUTO = 0, /* the GPU when one is present and the CUDA backend is built, else CPU */
    ABFT_BACKEND_CPU = 1,  /* host pointers, host BLAS/LAPACK */
    ABFT_BACKEND_CUDA = 2  /* device pointers, cuBLAS/cuSOLVER, the handle's stream */
} abft_backend_t;

/* Same values as cublasOperation_t's N and T. */
typedef enum abft_operation { ABFT_OP_N = 0, ABFT_OP_T = 1 } abft_operation_t;

typedef enum abft_checksum_kind {
    ABFT_CHECKSUM_ROW = 0, /* C·V: one error per row located, corrected where the element can be
                            * recomputed (beta = 0, A and B at hand), else reported (default) */
    ABFT_CHECKSUM_FULL = 1 /* C·V and V^T·C: several errors per row located (by their columns),
                            * corrected under the same condition */
} abft_checksum_kind_t;

typedef enum abft_bound_mode {
    ABFT_BOUND_WORST_CASE = 0,   /* rigorous: gamma_k = k·u/(1-k·u); zero false positives */
    ABFT_BOUND_PROBABILISTIC = 1, /* gamma_k ~ factor·sqrt(k)·u: tighter, see docs/bound.md */
    ABFT_BOUND_TIGHT = 2 /* GEMM checksums: a sketched second-moment bound with a stated
                          * false-alarm probability, guarded (docs/bound.md, "Tight mode");
                          * both backends, fp64 and fp32 (on the GPU, shapes whose tables
                          * exceed its shared memory get the worst case); LU and getrs use
                          * the worst case */
} abft_bound_mode_t;

/* The arithmetic a GEMM the caller runs itself (the split form) was computed in; the bound
 * depends on it (docs/bound.md). */
typedef enum abft_math {
    ABFT_MATH_HANDLE = 0, /* as the library handle's BLAS computes (CUDA: the math mode of the
                             handle's cuBLAS handle, read at encode and at verify); default */
    ABFT_MATH_IEEE = 1,   /* IEEE arithmetic of the data precision (fp64 or fp32) */
    ABFT_MATH_TF32 = 2,   /* fp32 data through TF32 tensor cores (fp32 plans only) */
    ABFT_MATH_BF16X9 = 3  /* fp32 data through BF16x9 emulation (fp32 plans only) */
} abft_math_t;

/* What a protected operation did with a flagged element or row/column. */
typedef enum abft_action {
    ABFT_ACTION_NONE = 0,
    ABFT_ACTION_CORRECTED = 1,     /* located, corrected, re-verified */
    ABFT_ACTION_UNCORRECTABLE = 2, /* detected, not located or not confirmed: data untouched */
    ABFT_ACTION_RECOMPUTED = 3,    /* the row or column was recomputed and re-verified */
    ABFT_ACTION_CHECKSUM_FAULT = 4 /* the checksum, not the data, was wrong: data intact */
} abft_action_t;

/* Which factor of an LU a fault was found in. */
typedef enum abft_factor {
    ABFT_FACTOR_NONE = 0, /* GEMM output or unknown */
    ABFT_FACTOR_L = 1,
    ABFT_FACTOR_U = 2
} abft_factor_t;

#define ABFT_REPORT_MAX_FAULTS 16

/* One detected fault. row/col are 0-based indices into the result; -1 when not located. */
typedef struct abft_fault {
    int64_t row;
    int64_t col;
    double delta;     /* the located error (observed - expected), from the unweighted residual */
    double ratio;     /* |residual| / bound of the checksum that flagged it */
    int32_t action;   /* abft_action_t */
    int32_t factor;   /* abft_factor_t (LU); ABFT_FACTOR_NONE for GEMM */
    int32_t side;     /* 0: found through a row checksum, 1: through a column checksum */
    int32_t reserved;
} abft_fault_t;

/* What a protected call checked, detected, located and did. Zeroed by every call that
 * fills it. The counts count flagged rows/columns (a "detection" is one flagged
 * checksum entry), corrected elements, and so on. */
typedef struct abft_report {
    int64_t checked;         /* checksum entries compared (rows, plus columns for FULL) */
    int64_t detected;        /* entries whose residual exceeded the bound */
    int64_t corrected;       /* elements corrected and re-verified */
    int64_t uncorrectable;   /* flagged entries left as they were (data untouched) */
    int64_t recomputed;      /* rows or columns recomputed from the inputs and re-verified */
    int64_t checksum_faults; /* flagged entries explained by a corrupted checksum */
    int32_t nonfinite_input; /* 1 when an input held NaN or Inf (status NON_FINITE_INPUT) */
    int32_t spread;          /* LU: 1 when a fault spread during the factorization */
    double max_ratio;        /* largest |residual| / bound over every compared entry (before
                                correction); < 1 means everything passed. When the compare
                                flagged entries, it is taken over those entries against the
                                full bound (with the host's amplified-underflow allowance,
                                docs/bound.md); every other entry is below 1 */
    double unit_roundoff;    /* u of the arithmetic the bound assumed for the operation */
    int64_t nfaults;         /* entries stored in faults[] (at most ABFT_REPORT_MAX_FAULTS) */
    abft_fault_t faults[ABFT_REPORT_MAX_FAULTS];
    int64_t worst_case_rows; /* of the checked entries, those compared against the worst-case
                                bound although the handle's bound mode asked for the tight one
                                (ABFT_BOUND_TIGHT): rows (and columns for FULL) the tight pass
                                sent to the worst case (its guards, its tables too large for
                                the device), every entry where the mode does not apply (an
                                arithmetic that shortens the inputs, LU and getrs); 0 in the
                                other modes. The sensitivity the call delivered on those
                                entries is the worst case's (docs/bound.md) */
} abft_report_t;

/* Hook called by protected operations at the named points so a fault injector can corrupt
 * data in flight. ptr points to the array (device memory on the CUDA backend), with rows x
 * cols elements of the given precision ('d' or 's') and leading dimension ld. Returning a
 * non-success status aborts the operation with that status. */
typedef enum abft_hook_site {
    ABFT_SITE_AFTER_ENCODE = 0,  /* the inputs A and B, after their checksums are encoded */
    ABFT_SITE_MID_GEMM = 1,      /* C between the two halves of a k-split GEMM */
    ABFT_SITE_AFTER_GEMM = 2,    /* C after the GEMM, before verification */
    ABFT_SITE_CHECKSUM = 3,      /* the encoded checksums (always fp64); GEMM: which 0 the
                                    row checksums' S, 1 the columns' T (full checksums), 2
                                    the random checksum's Sr (abft_set_random_checksum) */
    ABFT_SITE_LU_PANEL = 4,      /* the matrix between LU panels */
    ABFT_SITE_AFTER_LU = 5,      /* the factors after the factorization */
    ABFT_SITE_COUNT = 6
} abft_hook_site_t;

typedef abft_status_t (*abft_hook_fn)(void *user, abft_hook_site_t site, int which, char precision,
                                      void *ptr, int64_t rows, int64_t cols, int64_t ld);

/* Names of the enum values, for logs and reports. Each returns a static
 * lower-case string, the enumerator's suffix ("cuda", "full", "worst_case", "corrected",
 * "after_gemm", ...; abft_factor_name gives "none", "L", "U", abft_operation_name "N", "T"),
 * and "unknown" for a value outside the enum. The report's int32_t fields (faults[].action,
 * faults[].factor) may be passed as they are. */
ABFT_API const char *abft_backend_name(abft_backend_t backend);
ABFT_API const char *abft_operation_name(abft_operation_t op);
ABFT_API const char *abft_checksum_kind_name(abft_checksum_kind_t kind);
ABFT_API const char *abft_bound_mode_name(abft_bound_mode_t mode);
ABFT_API const char *abft_action_name(abft_action_t action);
ABFT_API const char *abft_factor_name(abft_factor_t factor);
ABFT_API const char *abft_hook_site_name(abft_hook_site_t site);
ABFT_API const char *abft_math_name(abft_math_t math);

#ifdef __cplusplus
}
#endif
#endif /* ABFT_TYPES_H */

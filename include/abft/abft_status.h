/* abft: status codes.
 *
 * The list below is the single source of the enum, of abft_status_name() and of
 * abft_status_string(). Values are fixed: new codes are appended, never renumbered. */
#ifndef ABFT_STATUS_H
#define ABFT_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the public entry points (the library is built with hidden visibility). */
#if defined(__GNUC__)
#define ABFT_API __attribute__((visibility("default")))
#else
#define ABFT_API
#endif

/* X(name, value, message) */
#define ABFT_STATUS_LIST(X)                                                                  \
    X(ABFT_STATUS_SUCCESS, 0, "success")                                                      \
    X(ABFT_STATUS_NOT_INITIALIZED, 1, "the handle is NULL or was not created")                \
    X(ABFT_STATUS_INVALID_VALUE, 2, "an argument is out of range (size, leading dimension, " \
                                     "NULL pointer, option or enum value)")                   \
    X(ABFT_STATUS_ALLOC_FAILED, 3, "host or device memory could not be allocated")            \
    X(ABFT_STATUS_NOT_SUPPORTED, 4, "the operation is not supported by this build or backend")\
    X(ABFT_STATUS_NON_FINITE_INPUT, 5, "an input holds NaN or Inf; nothing was computed or "  \
                                       "corrected and the outputs are untouched")             \
    X(ABFT_STATUS_CUDA_ERROR, 6, "a CUDA runtime call or kernel launch failed")               \
    X(ABFT_STATUS_CUBLAS_ERROR, 7, "a cuBLAS call failed")                                    \
    X(ABFT_STATUS_CUSOLVER_ERROR, 8, "a cuSOLVER call failed")                                \
    X(ABFT_STATUS_CURAND_ERROR, 9, "a cuRAND call failed")                                    \
    X(ABFT_STATUS_EXECUTION_FAILED, 10, "a host BLAS/LAPACK routine reported an error")       \
    X(ABFT_STATUS_SINGULAR, 11, "the matrix is exactly singular (a zero pivot, as LAPACK "    \
                                 "info > 0); the factors are still returned")                 \
    X(ABFT_STATUS_INTERNAL_ERROR, 12, "an internal invariant failed (a bug in abft)")

typedef enum abft_status {
#define ABFT_X_ENUM(name, value, msg) name = value,
    ABFT_STATUS_LIST(ABFT_X_ENUM)
#undef ABFT_X_ENUM
} abft_status_t;

/* "ABFT_STATUS_SUCCESS", ...; "ABFT_STATUS_<unknown>" for a value not in the list. */
ABFT_API const char *abft_status_name(abft_status_t status);
/* A one-line English description of the status. */
ABFT_API const char *abft_status_string(abft_status_t status);
/* Which argument the most recent call on this thread that returned ABFT_STATUS_INVALID_VALUE
 * rejected: its 1-based position in that function's parameter list (as cuBLAS and xerbla
 * number them: abft_dgemm's lda is 9), or 0 when no single argument was at fault. Kept per
 * thread; covers the functions of abft.h and abft_lu.h (docs/api.md). */
ABFT_API int abft_last_invalid_argument(void);

#ifdef __cplusplus
}
#endif
#endif /* ABFT_STATUS_H */

/* abft CPU backend: the host BLAS/LAPACK routines it calls (Fortran interface, LP64).
 *
 * Private header. By default every entry of abft_cpu_host_blas is NULL and the backend
 * calls the Fortran symbols (dgemm_, ...) directly. A library that itself exports those
 * symbols and contains the backend's objects (the drop-in libabft_blas.so of blas/) sets the
 * entries, once, before it creates its first handle, to the routines that come after it in
 * the search order: the backend's own calls then never come back into that library.
 * Entries are set together (all or none) and never changed afterwards. */
#ifndef ABFT_CPU_HOST_BLAS_H
#define ABFT_CPU_HOST_BLAS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Fortran BLAS/LAPACK with 32-bit integers (declared here: no cblas/lapacke dependency).
 * The hidden lengths of the character arguments are left out: the routines read one
 * character of each. A file that defines some of these symbols itself, with the hidden
 * lengths, defines ABFT_CPU_HOST_BLAS_NO_DECLS to leave the declarations out. */
#ifndef ABFT_CPU_HOST_BLAS_NO_DECLS
void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *A, const int *lda, const double *B,
            const int *ldb, const double *beta, double *C, const int *ldc);
void sgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const float *alpha, const float *A, const int *lda, const float *B, const int *ldb,
            const float *beta, float *C, const int *ldc);
void dgetrf_(const int *m, const int *n, double *A, const int *lda, int *ipiv, int *info);
void sgetrf_(const int *m, const int *n, float *A, const int *lda, int *ipiv, int *info);
void dtrsm_(const char *side, const char *uplo, const char *transa, const char *diag,
            const int *m, const int *n, const double *alpha, const double *A, const int *lda,
            double *B, const int *ldb);
void strsm_(const char *side, const char *uplo, const char *transa, const char *diag,
            const int *m, const int *n, const float *alpha, const float *A, const int *lda,
            float *B, const int *ldb);
#endif

typedef struct abft_cpu_host_blas {
    void (*dgemm)(const char *, const char *, const int *, const int *, const int *,
                  const double *, const double *, const int *, const double *, const int *,
                  const double *, double *, const int *);
    void (*sgemm)(const char *, const char *, const int *, const int *, const int *,
                  const float *, const float *, const int *, const float *, const int *,
                  const float *, float *, const int *);
    void (*dgetrf)(const int *, const int *, double *, const int *, int *, int *);
    void (*sgetrf)(const int *, const int *, float *, const int *, int *, int *);
    void (*dtrsm)(const char *, const char *, const char *, const char *, const int *,
                  const int *, const double *, const double *, const int *, double *,
                  const int *);
    void (*strsm)(const char *, const char *, const char *, const char *, const int *,
                  const int *, const float *, const float *, const int *, float *,
                  const int *);
} abft_cpu_host_blas_t;

/* Defined in abft_cpu_blas.c; hidden (never exported from a shared library). */
extern abft_cpu_host_blas_t abft_cpu_host_blas;

/* ABFT_HOST_BLAS(dgemm, (args)): the routine set in abft_cpu_host_blas, else dgemm_. */
#define ABFT_HOST_BLAS(name, args)                                                          \
    (abft_cpu_host_blas.name != NULL ? abft_cpu_host_blas.name args : name##_ args)

#ifdef __cplusplus
}
#endif
#endif /* ABFT_CPU_HOST_BLAS_H */

/* libabft_blas_host.so: no code of its own. It links the BLAS and LAPACK libabft was built
 * with, so that libabft_blas.so, which links neither, can load them at its first call where
 * the program has none of its own in the global search order (docs/dropin.md, "What a
 * process pays for the preload"); libabft_blas.so then finds the routines with dlsym on
 * this module's handle. */
typedef int abft_blas_host_nonempty; /* ISO C: a translation unit declares something */

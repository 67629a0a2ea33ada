/* libabft_blas.so: the CPU backend's checksum-pass entry points (abft_cpu_tsmm,
 * abft_cpu_dual, abft_cpu_compare of kernels/abft_kernels.h) for the drop-in's copy of the
 * library objects, in place of kernels/cpu/abft_cpu_tsmm.c (docs/dropin.md, "Overhead").
 *
 * The products over the rows (trans = 0, up to 4 checksum columns: every pass of a GEMM with
 * untransposed operands) go to abft_blas_tsmm.c, compiled for the baseline instruction set
 * and, where the compiler can, for x86-64-v3 (AVX2, FMA) and x86-64-v4 (AVX-512); the
 * variant is chosen once, from what the CPU supports (ABFT_BLAS_ISA=base, v3 or v4 forces one
 * the CPU supports, for tests and measurements). Everything else goes to the reference
 * kernel, compiled into this library under other names (abft_blas_tsmm_ref, ...). Every
 * variant gives the reference's results bit for bit (test_dropin_tsmm) unless the drop-in
 * has asked for plain sums (abft_blas_kernels_plain), which it does for the bound modes it
 * offers: the products are then summed in plain fp64, as the CUDA backend sums them outside
 * the tight mode and as the worst-case and probabilistic bounds take them (docs/bound.md:
 * the checksums' gamma_n(2^-53) terms); each result is then the reference's running sum
 * without its correction term, within gamma_n(2^-53)·(|A|·|X|) of it. */
#include <stdlib.h>
#include <string.h>

#include "abft_kernels.h"

abft_status_t abft_blas_tsmm_ref(const abft_kctx_t *ctx, const abft_tsmm_args_t *a);
abft_status_t abft_blas_compare_ref(const abft_kctx_t *ctx, const abft_compare_args_t *a,
                                    int njobs);
int abft_blas_tsmm_rows_base(const abft_tsmm_args_t *a, int plain);
#if ABFT_BLAS_TSMM_V3
int abft_blas_tsmm_rows_v3(const abft_tsmm_args_t *a, int plain);
#endif
#if ABFT_BLAS_TSMM_V4
int abft_blas_tsmm_rows_v4(const abft_tsmm_args_t *a, int plain);
#endif

typedef int (*rows_fn)(const abft_tsmm_args_t *a, int plain);

/* Plain fp64 sums: set by the drop-in for bound modes whose bounds take the checksums' sums
 * as plain ones (the worst case and the probabilistic mode; never for the tight mode, whose
 * CPU bound takes them compensated) */
static int plain;
void abft_blas_kernels_plain(int on) { __atomic_store_n(&plain, on, __ATOMIC_RELEASE); }

/* The best variant this CPU runs, or the one ABFT_BLAS_ISA names where the CPU runs it. */
static rows_fn choose(void) {
    rows_fn best = abft_blas_tsmm_rows_base;
    const char *want = getenv("ABFT_BLAS_ISA");
    if (want != NULL && strcmp(want, "base") == 0) return best;
#if defined(__x86_64__) && (ABFT_BLAS_TSMM_V3 || ABFT_BLAS_TSMM_V4)
    __builtin_cpu_init();
    const int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                   __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
    const int v4 = v3 && __builtin_cpu_supports("avx512f") &&
                   __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                   __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd");
#if ABFT_BLAS_TSMM_V3
    if (v3) best = abft_blas_tsmm_rows_v3;
    if (want != NULL && strcmp(want, "v3") == 0) return best;
#endif
#if ABFT_BLAS_TSMM_V4
    if (v4) best = abft_blas_tsmm_rows_v4;
#endif
    (void)v4;
#endif
    return best;
}

static rows_fn rows_impl(void) {
    static rows_fn impl; /* set once; a race sets the same value */
    rows_fn f = __atomic_load_n(&impl, __ATOMIC_ACQUIRE);
    if (f == NULL) {
        f = choose();
        __atomic_store_n(&impl, f, __ATOMIC_RELEASE);
    }
    return f;
}

abft_status_t abft_cpu_tsmm(const abft_kctx_t *ctx, const abft_tsmm_args_t *a) {
    if (rows_impl()(a, __atomic_load_n(&plain, __ATOMIC_ACQUIRE)))
        return ABFT_STATUS_SUCCESS;
    return abft_blas_tsmm_ref(ctx, a);
}

/* As the reference: the two halves as two products (only the GPU fuses them). */
abft_status_t abft_cpu_dual(const abft_kctx_t *ctx, const abft_dual_args_t *a) {
    abft_tsmm_args_t n = {a->prec, 0, a->rows, a->cols, a->c1, a->M, a->ldm, a->X, a->ldx,
                          a->Xabs, a->ldxabs, a->P, a->ldp, a->Pabs, a->ldpabs, a->comp};
    abft_status_t st = abft_cpu_tsmm(ctx, &n);
    if (st != ABFT_STATUS_SUCCESS) return st;
    abft_tsmm_args_t t = {a->prec, 1, a->rows, a->cols, a->c2, a->M, a->ldm, a->Z, a->ldz,
                          a->Zabs, a->ldzabs, a->Q, a->ldq, a->Qabs, a->ldqabs, a->comp};
    return abft_cpu_tsmm(ctx, &t);
}

abft_status_t abft_cpu_compare(const abft_kctx_t *ctx, const abft_compare_args_t *a, int njobs) {
    return abft_blas_compare_ref(ctx, a, njobs);
}

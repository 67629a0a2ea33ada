/* abft bound module: one model of the arithmetic, every bound derived from it. */
#include "abft_bound.h"

#include <math.h>

static const double U_FP64 = 0x1p-53;

abft_arith_t abft_arith_native(abft_prec_t prec) {
    abft_arith_t a;
    a.u_in = 0.0;
    a.u = prec == ABFT_PREC_D ? 0x1p-53 : 0x1p-24;
    a.eta = prec == ABFT_PREC_D ? 0x1p-1074 : 0x1p-149;
    return a;
}

abft_arith_t abft_arith_checksum(void) { return abft_arith_native(ABFT_PREC_D); }

abft_status_t abft_arith_of(abft_math_t math, abft_prec_t prec, abft_arith_t *a) {
    abft_arith_t r = abft_arith_native(prec);
    switch (math) {
    case ABFT_MATH_IEEE:
        break;
    case ABFT_MATH_TF32: /* 10 fraction bits in (rounded or truncated), exact products, fp32
                          * sums that may truncate and align with few guard bits */
        ABFT_RETURN_IF(prec != ABFT_PREC_S, ABFT_STATUS_INVALID_VALUE);
        r.u_in = 0x1p-10, r.u = 0x1p-22;
        break;
    case ABFT_MATH_BF16X9: /* fp32-level accuracy documented; 2 bits of margin */
        ABFT_RETURN_IF(prec != ABFT_PREC_S, ABFT_STATUS_INVALID_VALUE);
        r.u = 0x1p-22;
        break;
    default:
        return ABFT_STATUS_INVALID_VALUE;
    }
    *a = r;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_bound_arith_cublas(void *cublas_handle, abft_prec_t prec, abft_arith_t *a) {
#if ABFT_HAVE_CUDA
    abft_math_t math = ABFT_MATH_IEEE;
    ABFT_TRY(abft_cuda_blas_math(cublas_handle, prec, &math));
    return abft_arith_of(math, prec, a);
#else
    (void)cublas_handle, (void)prec, (void)a;
    return ABFT_STATUS_NOT_SUPPORTED;
#endif
}

abft_status_t abft_bound_arith(abft_handle_t h, abft_prec_t prec, abft_arith_t *a) {
    if (h->backend == ABFT_BACKEND_CUDA) return abft_bound_arith_cublas(h->kctx.blas, prec, a);
    return abft_arith_of(ABFT_MATH_IEEE, prec, a);
}

double abft_gamma(abft_handle_t h, double n, double u) {
    if (!(n > 0.0) || !(u > 0.0)) return 0.0;
    if (h->bound_mode == ABFT_BOUND_PROBABILISTIC) return h->bound_factor * sqrt(n) * u;
    double nu = n * u, g;
    if (nu < 0.5) {
        g = nu / (1.0 - nu);
    } else {
        /* (1 + u)^n - 1, with a relative margin far above the rounding of expm1/log1p */
        g = expm1(n * log1p(u)) * (1.0 + 0x1p-40);
    }
    return h->bound_factor * g;
}

double abft_bound_dot(abft_handle_t h, const abft_arith_t *a, double n) {
    double in = a->u_in * (2.0 + a->u_in); /* (1 + u_in)^2 - 1 */
    return in + (1.0 + in) * abft_gamma(h, n, a->u);
}

/* ---- GEMM ---------------------------------------------------------------------------- */

void abft_bound_gemm(abft_handle_t h, const abft_arith_t *g, double alpha, double beta,
                     int64_t inner, int64_t k, int64_t out, abft_gemm_bound_t *b) {
    double kd = (double)k;
    double gi = abft_gamma(h, (double)inner, U_FP64);
    double gk = abft_gamma(h, kd, U_FP64);
    double go = abft_gamma(h, (double)out, U_FP64);
    double gg = abft_bound_dot(h, g, kd + 3.0); /* the GEMM (+ alpha, beta, and a k split) */
    double g3 = abft_gamma(h, 3.0, U_FP64);     /* alpha·S + beta·P in the compare */
    /* The absolute-value products are computed in floating point, so they may come out
     * below their exact values by a factor (1 - gamma): divide by it. */
    double shrink_s = 1.0 - U_FP64 * (double)(inner + k + 2);
    double shrink_r = 1.0 - U_FP64 * (double)(out + 1);
    double pad = 1.0 + 8.0 * U_FP64; /* the rounding of |R - s| and of the bound itself */
    b->coef_s = (gg + gk * (1.0 + gi) + gi + g3) / shrink_s * pad;
    b->coef_r = go * (1.0 + go) / shrink_r * pad;
    /* Gradual underflow, not amplified: each product of the GEMM (scaled by alpha when
     * alpha is applied last), the beta·C term, and each fp64 operation of the checksums may
     * lose up to one subnormal spacing; the weights sum to at most (out+1)(out+2)/2. */
    double wmax = (double)(out + 1) * (double)(out + 2);
    b->abs_floor = ((kd + 3.0) * g->eta * (fabs(alpha) + fabs(beta) + 1.0) +
                    4.0 * (double)(inner + k + out + 3) * 0x1p-1074) * wmax;
    /* Amplified: fl(alpha·b) loses up to eta when it underflows, and that loss is then
     * multiplied by the other operand's element (factor 2: the rounding of those products
     * and sums, and of the norms the host computes). */
    b->eta_amp = 2.0 * g->eta * pad;
    b->wsum[0] = (double)out;
    b->wsum[1] = (double)out * ((double)out + 1.0) / 2.0;
    if (isnan(b->coef_s) || isnan(b->coef_r)) b->coef_s = b->coef_r = INFINITY;
}

double abft_bound_gemm_amp(const abft_gemm_bound_t *b, int q, double l1, double ysum) {
    return b->eta_amp * (b->wsum[q] * l1 + ysum);
}

/* Protected LU and solve on the CPU backend: soundness with subnormal intermediates, and the
 * error contract of every LU/getrs entry point (and of the tall-and-skinny encoders).
 *
 * Gradual underflow (docs/lu.md, "Gradual underflow"): clean graded and tiny-scaled
 * matrices, fp64 and fp32, whose multipliers or solutions are subnormal, factored offline,
 * online and in the split form, then solved (n = 1 and larger, both transposes), are never
 * flagged: a BLAS that divides by a pivot (or multiplies by its reciprocal) turns the
 * subnormal rounding loss of the quotient into an error of |pivot| times that loss, which an
 * absolute underflow floor does not cover. 4000 clean fp32 n = 1 solves with subnormal
 * solutions.
 *
 * Error contract (docs/api.md, "Errors leave outputs untouched"): on an error status A, ipiv,
 * info, B and the report are byte for byte as they were; NON_FINITE_INPUT writes the report
 * with nonfinite_input = 1 and leaves info alone; a bad pivot is refused before the report
 * is written; overlapping outputs, or an output overlapping an input, are INVALID_VALUE. */
#include <math.h>
#include <string.h>

#include "testutil.h"

void dgetrf_(const int *m, const int *n, double *A, const int *lda, int *ipiv, int *info);

static const char *NAME = "test_lu_contract";

/* ---- gradual underflow ------------------------------------------------------------------ */

enum { G_ROWS, G_BIGPIVOT, G_TINY, G_ROWCOL, G_NKINDS };
static const char *gname[] = {"rows graded", "big pivot row", "tiny-scaled", "rows+cols graded"};

/* A graded m x n matrix (ld m) in fp64; fp32 = 1 scales for the fp32 range. Uniform
 * entries in [-1, 1] scaled by powers of two (exact), so the fp32 copy is the same matrix
 * except where the scaled values fall below the fp32 subnormals. */
static void graded(tu_rng_t *r, int kind, int fp32, int64_t m, int64_t n, double *A) {
    tu_fill_d(r, TU_UNIFORM, m, n, A, m);
    const double top = fp32 ? 140.0 : 1065.0; /* deepest exponent reached */
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double e = 0.0;
            switch (kind) {
            case G_ROWS: e = -top * (double)i / (double)(m > 1 ? m - 1 : 1); break;
            case G_BIGPIVOT: /* row 0 huge, the others tiny and graded: subnormal multipliers
                                times a pivot of 2^400 (fp32: 2^50) */
                e = i == 0 ? (fp32 ? 50.0 : 400.0)
                           : -(fp32 ? 80.0 : 620.0) - (fp32 ? 2.0 : 10.0) * (double)i;
                break;
            case G_TINY: e = -(fp32 ? 135.0 : 1060.0); break;
            case G_ROWCOL:
                e = -0.5 * top * ((double)i / (double)(m > 1 ? m - 1 : 1) +
                                  (double)j / (double)(n > 1 ? n - 1 : 1));
                break;
            }
            A[i + j * m] = ldexp(A[i + j * m], (int)floor(e));
        }
}

static int g_runs = 0, g_flagged = 0, g_broken = 0, g_wrong = 0, g_wrong_flagged = 0;

/* Whether the LAPACK's factors are an LU factorization of A (n x n, ld n) with the error an
 * IEEE-conforming LU can have, in any order of operations: finite, and for every (i, j)
 *   |P·A - L·U|_ij <= gamma_{n+1}·(|L|·|U|)_ij + (n + 1)·eta·(1 + max_k |U_kj|),
 * gamma_{n+1} = (n+1)u / (1 - (n+1)u) (the update's products and sums, and a multiplier
 * computed as a quotient or as a product with a reciprocal), and eta the smallest subnormal,
 * which every product or multiplier that underflows may lose (a multiplier's loss is
 * multiplied by a U entry). Computed in long double (64-bit significand, wide exponent), so
 * the residual of fp64 factors is exact to far below either term.
 * 1: such a factorization (the check must not flag it); 0: finite but not (the LAPACK is
 * wrong: OpenBLAS 0.3.26's getrf leaves the multipliers of a subnormal pivot unscaled, a
 * residual of 84 to 14000 subnormal steps at n = 2..6); -1: non-finite (must be flagged). */
static int lapack_factored(int fp32, int64_t n, const double *A, const double *F,
                           const float *Fs, const int64_t *ip) {
    for (int64_t i = 0; i < n * n; ++i)
        if (!isfinite(fp32 ? (double)Fs[i] : F[i])) return -1;
    const long double u = fp32 ? 0x1p-24L : 0x1p-53L, eta = fp32 ? 0x1p-149L : 0x1p-1074L;
    const long double g = (n + 1) * u / (1.0L - (n + 1) * u);
    long double *PA = (long double *)malloc((size_t)(n * n) * sizeof(long double));
    for (int64_t i = 0; i < n * n; ++i) PA[i] = fp32 ? (long double)(float)A[i] : A[i];
    for (int64_t i = 0; i < n; ++i) {
        int64_t r = ip[i] - 1;
        if (r != i)
            for (int64_t j = 0; j < n; ++j) {
                long double t = PA[i + j * n];
                PA[i + j * n] = PA[r + j * n], PA[r + j * n] = t;
            }
    }
    int ok = 1;
    for (int64_t j = 0; j < n && ok; ++j) {
        long double umax = 0;
        for (int64_t k = 0; k <= j; ++k) {
            long double x = fabsl(fp32 ? (long double)Fs[k + j * n] : F[k + j * n]);
            if (x > umax) umax = x;
        }
        for (int64_t i = 0; i < n; ++i) {
            long double lu = 0, alu = 0;
            for (int64_t k = 0; k <= (i < j ? i : j); ++k) {
                long double l = k == i ? 1.0L : (fp32 ? (long double)Fs[i + k * n] : F[i + k * n]);
                long double uu = fp32 ? (long double)Fs[k + j * n] : F[k + j * n];
                lu += l * uu, alu += fabsl(l * uu);
            }
            if (!(fabsl(PA[i + j * n] - lu) <= g * alu + (n + 1) * eta * (1.0L + umax))) ok = 0;
        }
    }
    free(PA);
    return ok;
}

/* A clean call: no flag. Unless the LAPACK itself returned non-finite factors (OpenBLAS
 * 0.3.21's getrf multiplies by the reciprocal of a subnormal pivot, which overflows) or the
 * solution overflowed: those are no factorization of A (no solution), and the check must say
 * so. finite: 1, -1 (non-finite), or 0: finite factors that are not an LU factorization of A
 * within an IEEE LU's error (lapack_factored); the check may flag those or not, since the
 * error a wrong LAPACK leaves can be anywhere from below to far above the bound. */
static void expect_clean(const char *what, int kind, int fp32, int64_t n, abft_status_t st,
                         const abft_report_t *rep, int finite) {
    if (finite == 0) {
        ++g_wrong;
        if (rep->detected > 0) ++g_wrong_flagged;
        TU_CHECK(st == ABFT_STATUS_SUCCESS || st == ABFT_STATUS_SINGULAR,
                 "%s %s %s n %lld: status %s", what, gname[kind], fp32 ? "fp32" : "fp64",
                 (long long)n, abft_status_name(st));
        return;
    }
    if (finite < 0) {
        ++g_broken;
        TU_CHECK(rep->detected > 0, "%s %s %s n %lld: non-finite result not flagged", what,
                 gname[kind], fp32 ? "fp32" : "fp64", (long long)n);
        return;
    }
    ++g_runs;
    TU_CHECK(st == ABFT_STATUS_SUCCESS || st == ABFT_STATUS_SINGULAR,
             "%s %s %s n %lld: status %s", what, gname[kind], fp32 ? "fp32" : "fp64",
             (long long)n, abft_status_name(st));
    if (rep->detected != 0) ++g_flagged;
    TU_CHECK(rep->detected == 0 && rep->max_ratio < 1.0,
             "%s %s %s n %lld: clean call flagged (detected %lld, max_ratio %g)", what,
             gname[kind], fp32 ? "fp32" : "fp64", (long long)n, (long long)rep->detected,
             rep->max_ratio);
}

/* Factor A (n x n) offline, online (look-ahead off and on) and in the split form; then solve
 * with the offline factors when U is nonsingular and finite. */
static void graded_one(abft_handle_t h, tu_rng_t *r, int kind, int fp32, int64_t n) {
    double *A = tu_alloc_d(n * n), *F = tu_alloc_d(n * n), *B = tu_alloc_d(n * 3);
    float *As = tu_alloc_s(n * n), *Fs = tu_alloc_s(n * n), *Bs = tu_alloc_s(n * 3);
    int64_t *ip = (int64_t *)malloc((size_t)n * sizeof(int64_t)), info = 0;
    graded(r, kind, fp32, n, n, A);
    for (int64_t i = 0; i < n * n; ++i) As[i] = (float)A[i];
    abft_report_t rep;
    abft_status_t st;
    /* online first (the factors of the offline call are kept for the solve) */
    for (int la = -1; la <= 1; la += 2) {
        abft_lu_options_t opt = {4, 1, 0, la};
        if (fp32) {
            memcpy(Fs, As, (size_t)(n * n) * sizeof(float));
            st = abft_sgetrf_online(h, n, n, Fs, n, ip, &opt, &info, &rep);
        } else {
            memcpy(F, A, (size_t)(n * n) * sizeof(double));
            st = abft_dgetrf_online(h, n, n, F, n, ip, &opt, &info, &rep);
        }
        expect_clean(la > 0 ? "online (look-ahead)" : "online", kind, fp32, n, st, &rep,
                     lapack_factored(fp32, n, A, F, Fs, ip));
    }
    {   /* split form */
        abft_lu_plan_t plan = NULL;
        TU_CHECK_STATUS(abft_lu_plan_create(h, fp32 ? 's' : 'd', n, n, &plan), ABFT_STATUS_SUCCESS);
        int *ip32 = (int *)malloc((size_t)n * sizeof(int));
        int in = (int)n, inf = 0;
        if (fp32) {
            memcpy(Fs, As, (size_t)(n * n) * sizeof(float));
            TU_CHECK_STATUS(abft_sgetrf_encode(h, plan, Fs, n), ABFT_STATUS_SUCCESS);
            extern void sgetrf_(const int *, const int *, float *, const int *, int *, int *);
            sgetrf_(&in, &in, Fs, &in, ip32, &inf);
            st = abft_sgetrf_verify(h, plan, Fs, n, ip32, 32, &rep);
        } else {
            memcpy(F, A, (size_t)(n * n) * sizeof(double));
            TU_CHECK_STATUS(abft_dgetrf_encode(h, plan, F, n), ABFT_STATUS_SUCCESS);
            extern void dgetrf_(const int *, const int *, double *, const int *, int *, int *);
            dgetrf_(&in, &in, F, &in, ip32, &inf);
            st = abft_dgetrf_verify(h, plan, F, n, ip32, 32, &rep);
        }
        for (int64_t i = 0; i < n; ++i) ip[i] = ip32[i];
        expect_clean("split", kind, fp32, n, st, &rep, lapack_factored(fp32, n, A, F, Fs, ip));
        free(ip32);
        abft_lu_plan_destroy(plan);
    }
    if (fp32) {
        memcpy(Fs, As, (size_t)(n * n) * sizeof(float));
        st = abft_sgetrf(h, n, n, Fs, n, ip, &info, &rep);
    } else {
        memcpy(F, A, (size_t)(n * n) * sizeof(double));
        st = abft_dgetrf(h, n, n, F, n, ip, &info, &rep);
    }
    expect_clean("offline", kind, fp32, n, st, &rep, lapack_factored(fp32, n, A, F, Fs, ip));
    int solvable = st == ABFT_STATUS_SUCCESS && info == 0;
    for (int64_t i = 0; i < n && solvable; ++i) {
        double d = fp32 ? (double)Fs[i + i * n] : F[i + i * n];
        if (!(d != 0.0) || !isfinite(d)) solvable = 0;
    }
    if (solvable) {
        for (int tr = 0; tr < 2; ++tr) {
            /* right-hand sides op(A)·x: x uniform, x tiny (subnormal solutions), x = e_1 */
            double *x = tu_alloc_d(n * 3);
            tu_fill_d(r, TU_UNIFORM, n, 3, x, n);
            for (int64_t i = 0; i < n; ++i) {
                x[i + n] = ldexp(x[i + n], fp32 ? -140 : -1060);
                x[i + 2 * n] = i == 0 ? 1.0 : 0.0;
            }
            for (int64_t c = 0; c < 3; ++c)
                for (int64_t i = 0; i < n; ++i) {
                    double acc = 0.0;
                    for (int64_t j = 0; j < n; ++j)
                        acc += (tr ? A[j + i * n] : A[i + j * n]) * x[j + c * n];
                    B[i + c * n] = acc;
                }
            free(x);
            if (fp32) {
                for (int64_t i = 0; i < n * 3; ++i) Bs[i] = (float)B[i];
                st = abft_sgetrs(h, tr ? ABFT_OP_T : ABFT_OP_N, n, 3, Fs, n, ip, Bs, n, &rep);
            } else {
                st = abft_dgetrs(h, tr ? ABFT_OP_T : ABFT_OP_N, n, 3, F, n, ip, B, n, &rep);
            }
            /* graded matrices are far from well conditioned: a solution may overflow, and
             * a non-finite solution must be flagged */
            int fin = 1;
            for (int64_t i = 0; i < n * 3; ++i)
                if (!isfinite(fp32 ? (double)Bs[i] : B[i])) fin = 0;
            expect_clean(tr ? "getrs T" : "getrs N", kind, fp32, n, st, &rep, fin ? 1 : -1);
        }
    }
    free(A), free(F), free(B), free(As), free(Fs), free(Bs), free(ip);
}

static void test_graded(abft_handle_t h, tu_rng_t *r) {
    const int64_t sizes[] = {1, 2, 3, 5, 8, 13, 24, 40};
    for (int fp32 = 0; fp32 < 2; ++fp32)
        for (int kind = 0; kind < G_NKINDS; ++kind)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
                for (int rep = 0; rep < 3; ++rep) graded_one(h, r, kind, fp32, sizes[s]);
    printf("%s: graded and tiny-scaled: %d clean calls, %d flagged; %d with non-finite results "
           "(factors from the LAPACK, or an overflowed solution: all flagged); %d with finite "
           "factors that are no LU of A within an IEEE LU's error (the LAPACK's; not judged; %d "
           "flagged)\n", NAME, g_runs, g_flagged, g_broken, g_wrong, g_wrong_flagged);
    /* most calls must be judged, whatever the LAPACK: 1536 calls in all */
    TU_CHECK(g_runs >= 500, "only %d clean calls judged", g_runs);
}

/* The case the reports counted: 4000 clean fp32 1 x 1 solves a·x = b whose quotient is
 * subnormal (or underflows to zero): the loss, up to half a subnormal step, times |a|. */
static void test_n1_solves(abft_handle_t h, tu_rng_t *r) {
    int flagged = 0;
    double worst = 0.0;
    float wa = 0, wb = 0, wx = 0;
    for (int t = 0; t < 4000; ++t) {
        float a = (float)ldexp(tu_range(r, 1.0, 2.0), (int)tu_int(r, -20, 100));
        if (tu_next(r) & 1) a = -a;
        float b = (float)ldexp(tu_range(r, -2.0, 2.0), (int)tu_int(r, -149, -60));
        float F = a, B = b;
        int64_t ip = 0, info = -7;
        abft_report_t rep;
        TU_CHECK_STATUS(abft_sgetrf(h, 1, 1, &F, 1, &ip, &info, &rep), ABFT_STATUS_SUCCESS);
        TU_CHECK_STATUS(abft_sgetrs(h, (t & 1) ? ABFT_OP_T : ABFT_OP_N, 1, 1, &F, 1, &ip, &B, 1,
                                    &rep),
                        ABFT_STATUS_SUCCESS);
        if (rep.detected != 0) {
            if (flagged < 3)
                fprintf(stderr, "n = 1 fp32 solve flagged: a %a b %a x %a ratio %g\n", a, b, B,
                        rep.max_ratio);
            ++flagged;
        }
        if (rep.max_ratio > worst) {
            worst = rep.max_ratio;
            wa = a, wb = b, wx = B;
        }
    }
    printf("%s: 4000 clean fp32 n = 1 solves: %d flagged, largest ratio %.6g (a %a, b %a, x %a)\n",
           NAME, flagged, worst, wa, wb, wx);
    TU_CHECK(flagged == 0, "%d of 4000 clean fp32 n = 1 solves flagged", flagged);
}

/* ---- error contract --------------------------------------------------------------------- */

#define SENT 0xA5

static void sentinel(void *p, size_t bytes) { memset(p, SENT, bytes); }
static int untouched(const void *p, size_t bytes) {
    const unsigned char *c = (const unsigned char *)p;
    for (size_t i = 0; i < bytes; ++i)
        if (c[i] != SENT) return 0;
    return 1;
}

/* NaN/Inf input: status NON_FINITE_INPUT, A and ipiv untouched, info untouched, the report
 * written with nonfinite_input = 1 (as the protected GEMM does). */
static void test_nonfinite(abft_handle_t h) {
    for (int path = 0; path < 4; ++path) {
        double A[9] = {1, 2, 3, 4, NAN, 6, 7, 8, 10}, A0[9];
        float As[9], As0[9];
        for (int i = 0; i < 9; ++i) As[i] = (float)A[i];
        memcpy(A0, A, sizeof A);
        memcpy(As0, As, sizeof As);
        int64_t ip[3], info;
        sentinel(ip, sizeof ip);
        sentinel(&info, sizeof info);
        abft_report_t rep;
        sentinel(&rep, sizeof rep);
        abft_status_t st;
        switch (path) {
        case 0: st = abft_dgetrf(h, 3, 3, A, 3, ip, &info, &rep); break;
        case 1: st = abft_sgetrf(h, 3, 3, As, 3, ip, &info, &rep); break;
        case 2: st = abft_dgetrf_online(h, 3, 3, A, 3, ip, NULL, &info, &rep); break;
        default: st = abft_sgetrf_online(h, 3, 3, As, 3, ip, NULL, &info, &rep); break;
        }
        TU_CHECK(st == ABFT_STATUS_NON_FINITE_INPUT, "path %d: status %s", path,
                 abft_status_name(st));
        TU_CHECK(memcmp(A, A0, sizeof A) == 0 && memcmp(As, As0, sizeof As) == 0,
                 "path %d: A modified", path);
        TU_CHECK(untouched(ip, sizeof ip), "path %d: ipiv written", path);
        TU_CHECK(untouched(&info, sizeof info), "path %d: info overwritten (%lld)", path,
                 (long long)info);
        TU_CHECK(rep.nonfinite_input == 1 && rep.detected == 0 && rep.checked == 0,
                 "path %d: report.nonfinite_input %d", path, (int)rep.nonfinite_input);
    }
}

/* A failed split-form encode leaves the plan as it was: after a good encode, an encode of a
 * matrix with a NaN (or an Inf) returns NON_FINITE_INPUT, and the plan still verifies the
 * factors of the first matrix (it returned INVALID_VALUE, argument 2, "not encoded", when
 * the failed encode had dropped the earlier encoding) and still corrects a fault in them
 * with the first matrix's recovery copy. 6 x 6 uniform + 4I (fixed seed 11). */
static void test_encode_keeps_plan(abft_handle_t h) {
    const uint64_t seed = 11;
    const int64_t n = 6;
    double A[36], F[36], F0[36], N[36];
    tu_rng_t r;
    tu_rng_init(&r, seed);
    tu_fill_d(&r, TU_UNIFORM, n, n, A, n);
    for (int64_t i = 0; i < n; ++i) A[i + i * n] += 4.0;
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 1), ABFT_STATUS_SUCCESS);
    abft_lu_plan_t plan = NULL;
    TU_CHECK_STATUS(abft_lu_plan_create(h, 'd', n, n, &plan), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_dgetrf_encode(h, plan, A, n), ABFT_STATUS_SUCCESS);
    memcpy(F, A, sizeof A);
    int ip[6], in = (int)n, info = 0;
    dgetrf_(&in, &in, F, &in, ip, &info);
    memcpy(F0, F, sizeof F);
    for (int bad = 0; bad < 2; ++bad) {
        memcpy(N, A, sizeof A);
        N[4 + 2 * n] = bad ? INFINITY : NAN;
        TU_CHECK_STATUS(abft_dgetrf_encode(h, plan, N, n), ABFT_STATUS_NON_FINITE_INPUT);
        abft_report_t rep;
        memcpy(F, F0, sizeof F);
        abft_status_t st = abft_dgetrf_verify(h, plan, F, n, ip, 32, &rep);
        TU_CHECK(st == ABFT_STATUS_SUCCESS && rep.detected == 0,
                 "%s encode after a good one (seed %llu): verify of the first factors %s "
                 "(argument %d), detected %lld", bad ? "Inf" : "NaN", (unsigned long long)seed,
                 abft_status_name(st), abft_last_invalid_argument(), (long long)rep.detected);
        F[1 + 3 * n] = tu_flip_d(F[1 + 3 * n], 50); /* U(1, 3) */
        st = abft_dgetrf_verify(h, plan, F, n, ip, 32, &rep);
        TU_CHECK(st == ABFT_STATUS_SUCCESS && rep.corrected == 1 &&
                     memcmp(F, F0, sizeof F) == 0,
                 "%s encode after a good one (seed %llu): a U fault not corrected with the "
                 "first encoding (%s, corrected %lld)", bad ? "Inf" : "NaN",
                 (unsigned long long)seed, abft_status_name(st), (long long)rep.corrected);
    }
    abft_lu_plan_destroy(plan);
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 0), ABFT_STATUS_SUCCESS);
}

/* getrs: a NaN or Inf in B is NON_FINITE_INPUT with B untouched and the report's
 * nonfinite_input set, both transposes, fp64 and fp32 (it used to solve and report the
 * right-hand side as detected, B overwritten); huge finite right-hand sides (|B|^T·V
 * overflows) are still solved; nrhs = 0 returns at once without reading ipiv (LAPACK). */
static void test_getrs_nonfinite(abft_handle_t h) {
    double A[16] = {4, 1, 2, 3, 1, 5, 1, 2, 2, 1, 6, 1, 3, 2, 1, 7};
    float As[16];
    int64_t ip[4], info;
    abft_report_t rep;
    TU_CHECK_STATUS(abft_dgetrf(h, 4, 4, A, 4, ip, &info, &rep), ABFT_STATUS_SUCCESS);
    for (int i = 0; i < 16; ++i) As[i] = (float)A[i];
    for (int c = 0; c < 8; ++c) {
        const int tr = c & 1, fp32 = (c >> 1) & 1, inf = c >> 2;
        double B[10] = {1, 2, 3, 4, 0, 5, 6, 7, 8, 0}, B0[10];
        float Bs[10], Bs0[10];
        B[6] = inf ? -INFINITY : NAN;
        for (int i = 0; i < 10; ++i) Bs[i] = (float)B[i];
        memcpy(B0, B, sizeof B);
        memcpy(Bs0, Bs, sizeof Bs);
        sentinel(&rep, sizeof rep);
        abft_operation_t op = tr ? ABFT_OP_T : ABFT_OP_N;
        abft_status_t st = fp32 ? abft_sgetrs(h, op, 4, 2, As, 4, ip, Bs, 5, &rep)
                                : abft_dgetrs(h, op, 4, 2, A, 4, ip, B, 5, &rep);
        TU_CHECK(st == ABFT_STATUS_NON_FINITE_INPUT && rep.nonfinite_input == 1 &&
                     rep.detected == 0 && memcmp(B, B0, sizeof B) == 0 &&
                     memcmp(Bs, Bs0, sizeof Bs) == 0,
                 "getrs %s in B (%s, trans %d): %s nonfinite_input %d detected %lld, B %s",
                 inf ? "Inf" : "NaN", fp32 ? "fp32" : "fp64", tr, abft_status_name(st),
                 (int)rep.nonfinite_input, (long long)rep.detected,
                 memcmp(B, B0, sizeof B) == 0 && memcmp(Bs, Bs0, sizeof Bs) == 0 ? "untouched"
                                                                              : "written");
    }
    double H[4] = {0x1p1020, -0x1p1020, 0x1p1020, 0x1p1020};
    abft_status_t st = abft_dgetrs(h, ABFT_OP_N, 4, 1, A, 4, ip, H, 4, &rep);
    TU_CHECK(st == ABFT_STATUS_SUCCESS && rep.nonfinite_input == 0,
             "getrs, huge finite B: %s", abft_status_name(st));
    int64_t bad[4] = {0, 0, 0, 0};
    double E[1] = {3.0};
    TU_CHECK_STATUS(abft_dgetrs(h, ABFT_OP_N, 4, 0, A, 4, bad, E, 4, &rep), ABFT_STATUS_SUCCESS);
}

/* Argument errors: nothing written (report and info filled with a sentinel beforehand). */
static void test_args_untouched(abft_handle_t h) {
    double A[16] = {4, 1, 2, 3, 1, 5, 1, 2, 2, 1, 6, 1, 3, 2, 1, 7}, A0[16];
    memcpy(A0, A, sizeof A);
    int64_t ip[4], info;
    abft_report_t rep;
    abft_lu_options_t bad_opt = {-1, 0, 0, 0};
    for (int c = 0; c < 4; ++c) {
        sentinel(ip, sizeof ip), sentinel(&info, sizeof info), sentinel(&rep, sizeof rep);
        abft_status_t st = c == 0   ? abft_dgetrf(h, 4, 4, A, 3, ip, &info, &rep)
                           : c == 1 ? abft_dgetrf(h, 4, 4, A, 4, NULL, &info, &rep)
                           : c == 2 ? abft_dgetrf_online(h, 4, 4, A, 4, ip, &bad_opt, &info, &rep)
                                    : abft_dgetrf_online(h, 4, 4, A, 2, ip, NULL, &info, &rep);
        TU_CHECK(st == ABFT_STATUS_INVALID_VALUE, "case %d: %s", c, abft_status_name(st));
        TU_CHECK(untouched(&rep, sizeof rep) && untouched(&info, sizeof info) &&
                     (c == 1 || untouched(ip, sizeof ip)) && memcmp(A, A0, sizeof A) == 0,
                 "argument error %d: an output was written", c);
    }
}

/* A pivot getrf never writes: refused before anything is written (split verify, getrs). */
static void test_bad_pivot(abft_handle_t h) {
    double A[16] = {4, 1, 2, 3, 1, 5, 1, 2, 2, 1, 6, 1, 3, 2, 1, 7}, F[16], F0[16];
    int64_t ip[4], info;
    abft_report_t rep;
    memcpy(F, A, sizeof A);
    TU_CHECK_STATUS(abft_dgetrf(h, 4, 4, F, 4, ip, &info, &rep), ABFT_STATUS_SUCCESS);
    memcpy(F0, F, sizeof F);
    int64_t bad[4] = {1, 2, 9, 4}; /* 9 > n */
    int32_t bad32[4] = {1, 0, 3, 4}; /* 0 < i + 1 */
    abft_lu_plan_t plan = NULL;
    TU_CHECK_STATUS(abft_lu_plan_create(h, 'd', 4, 4, &plan), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_dgetrf_encode(h, plan, A, 4), ABFT_STATUS_SUCCESS);
    sentinel(&rep, sizeof rep);
    TU_CHECK_STATUS(abft_dgetrf_verify(h, plan, F, 4, bad, 64, &rep), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK(untouched(&rep, sizeof rep), "split verify, bad pivot: report written");
    TU_CHECK_STATUS(abft_dgetrf_verify(h, plan, F, 4, bad32, 32, &rep), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK(untouched(&rep, sizeof rep), "split verify, bad 32-bit pivot: report written");
    TU_CHECK(memcmp(F, F0, sizeof F) == 0, "split verify, bad pivot: A modified");
    abft_lu_plan_destroy(plan);
    double B[8] = {1, 2, 3, 4, 5, 6, 7, 8}, B0[8];
    memcpy(B0, B, sizeof B);
    for (int tr = 0; tr < 2; ++tr) {
        sentinel(&rep, sizeof rep);
        TU_CHECK_STATUS(abft_dgetrs(h, tr ? ABFT_OP_T : ABFT_OP_N, 4, 2, F, 4, bad, B, 4, &rep),
                        ABFT_STATUS_INVALID_VALUE);
        TU_CHECK(untouched(&rep, sizeof rep), "getrs %d, bad pivot: report written", tr);
        TU_CHECK(memcmp(B, B0, sizeof B) == 0, "getrs %d, bad pivot: B modified", tr);
    }
}

/* Overlaps: outputs with each other, outputs with inputs. */
static void test_overlap(abft_handle_t h) {
    double buf[64];
    abft_report_t rep;
    int64_t info;
    /* getrf: ipiv inside A; info inside A */
    for (int c = 0; c < 2; ++c) {
        tu_rng_t r;
        tu_rng_init(&r, 5);
        tu_fill_d(&r, TU_UNIFORM, 4, 4, buf, 4);
        for (int i = 0; i < 4; ++i) buf[i + 4 * i] += 4.0;
        double b0[16];
        memcpy(b0, buf, sizeof b0);
        sentinel(&rep, sizeof rep);
        abft_status_t st = c == 0 ? abft_dgetrf(h, 4, 4, buf, 4, (int64_t *)(buf + 8), &info, &rep)
                                  : abft_dgetrf(h, 4, 4, buf, 4, (int64_t *)(buf + 20),
                                                (int64_t *)(buf + 15), &rep);
        TU_CHECK(st == ABFT_STATUS_INVALID_VALUE, "getrf overlap %d: %s", c, abft_status_name(st));
        TU_CHECK(memcmp(buf, b0, sizeof b0) == 0 && untouched(&rep, sizeof rep),
                 "getrf overlap %d: outputs written", c);
        st = abft_dgetrf_online(h, 4, 4, buf, 4, (int64_t *)(buf + 8), NULL, &info, &rep);
        TU_CHECK(st == ABFT_STATUS_INVALID_VALUE, "online overlap: %s", abft_status_name(st));
    }
    {   /* getrf: the report inside A */
        double big[64];
        for (int i = 0; i < 64; ++i) big[i] = (double)(i % 7) + (i % 9 == 0 ? 5.0 : 0.0);
        double b0[64];
        memcpy(b0, big, sizeof big);
        int64_t ip[6];
        abft_status_t st = abft_dgetrf(h, 6, 6, big, 6, ip, &info, (abft_report_t *)(big + 2));
        TU_CHECK(st == ABFT_STATUS_INVALID_VALUE, "report in A: %s", abft_status_name(st));
        TU_CHECK(memcmp(big, b0, sizeof big) == 0, "report in A: A modified");
    }
    {   /* getrs: B overlapping A; B overlapping ipiv */
        double F[16] = {4, 1, 2, 3, 1, 5, 1, 2, 2, 1, 6, 1, 3, 2, 1, 7};
        int64_t ip[4];
        TU_CHECK_STATUS(abft_dgetrf(h, 4, 4, F, 4, ip, &info, &rep), ABFT_STATUS_SUCCESS);
        double F0[16];
        memcpy(F0, F, sizeof F);
        sentinel(&rep, sizeof rep);
        TU_CHECK_STATUS(abft_dgetrs(h, ABFT_OP_N, 4, 1, F, 4, ip, F + 12, 4, &rep),
                        ABFT_STATUS_INVALID_VALUE);
        TU_CHECK(memcmp(F, F0, sizeof F) == 0 && untouched(&rep, sizeof rep),
                 "getrs B in A: outputs written");
        int64_t both[8] = {ip[0], ip[1], ip[2], ip[3], 0, 0, 0, 0};
        TU_CHECK_STATUS(abft_dgetrs(h, ABFT_OP_N, 4, 1, F, 4, both, (double *)(both + 2), 4, &rep),
                        ABFT_STATUS_INVALID_VALUE);
        TU_CHECK(both[0] == ip[0] && both[3] == ip[3] && untouched(&rep, sizeof rep),
                 "getrs B over ipiv: outputs written");
    }
    {   /* split verify: ipiv inside A */
        double F[16] = {4, 1, 2, 3, 1, 5, 1, 2, 2, 1, 6, 1, 3, 2, 1, 7};
        abft_lu_plan_t plan = NULL;
        TU_CHECK_STATUS(abft_lu_plan_create(h, 'd', 4, 4, &plan), ABFT_STATUS_SUCCESS);
        TU_CHECK_STATUS(abft_dgetrf_encode(h, plan, F, 4), ABFT_STATUS_SUCCESS);
        sentinel(&rep, sizeof rep);
        TU_CHECK_STATUS(abft_dgetrf_verify(h, plan, F, 4, F + 4, 64, &rep),
                        ABFT_STATUS_INVALID_VALUE);
        TU_CHECK(untouched(&rep, sizeof rep), "split verify ipiv in A: report written");
        abft_lu_plan_destroy(plan);
    }
    /* tall-and-skinny products: A 8 x 4, X 4 x 2 */
    double A[32], X[8], Xa[8];
    tu_rng_t r;
    tu_rng_init(&r, 7);
    tu_fill_d(&r, TU_UNIFORM, 8, 4, A, 8);
    tu_fill_d(&r, TU_UNIFORM, 4, 2, X, 4);
    for (int i = 0; i < 8; ++i) Xa[i] = fabs(X[i]);
    double Y[40];
    for (int c = 0; c < 6; ++c) {
        sentinel(Y, sizeof Y);
        double A0[32], X0[8];
        memcpy(A0, A, sizeof A);
        memcpy(X0, X, sizeof X);
        abft_status_t st;
        switch (c) {
        case 0: /* Yabs partly over Y */
            st = abft_dtsmm(h, ABFT_OP_N, 8, 4, 2, A, 8, X, 4, Y, 8, Xa, 4, Y + 8, 8);
            break;
        case 1: /* Y over A */
            st = abft_dtsmm(h, ABFT_OP_N, 8, 4, 2, A, 8, X, 4, A + 4, 8, NULL, 0, NULL, 0);
            break;
        case 2: /* Y over X */
            st = abft_dtsmm(h, ABFT_OP_N, 8, 4, 2, A, 8, X, 4, X, 8, NULL, 0, NULL, 0);
            break;
        case 3: /* Yabs over Xabs */
            st = abft_dtsmm(h, ABFT_OP_N, 8, 4, 2, A, 8, X, 4, Y, 8, Xa, 4, Xa, 8);
            break;
        case 4: /* checksums: Rabs partly over R */
            st = abft_dchecksum_rows(h, 8, 4, A, 8, Y, 8, Y + 3, 8);
            break;
        default: { /* dual: P over Q */
            double Z[16];
            tu_fill_d(&r, TU_UNIFORM, 8, 2, Z, 8);
            st = abft_ddual(h, 8, 4, A, 8, 2, X, 4, Y, 8, 2, Z, 8, Y + 10, 4);
            break;
        }
        }
        TU_CHECK(st == ABFT_STATUS_INVALID_VALUE, "tsmm overlap case %d: %s", c,
                 abft_status_name(st));
        TU_CHECK(memcmp(A, A0, sizeof A) == 0 && memcmp(X, X0, sizeof X) == 0 &&
                     (c == 1 || c == 2 || untouched(Y, sizeof Y)),
                 "tsmm overlap case %d: an output was written", c);
    }
    /* disjoint Y and Yabs in one buffer still work */
    TU_CHECK_STATUS(abft_dtsmm(h, ABFT_OP_N, 8, 4, 2, A, 8, X, 4, Y, 8, Xa, 4, Y + 16, 8),
                    ABFT_STATUS_SUCCESS);
}

int main(void) {
    tu_rng_t r;
    tu_rng_init(&r, tu_seed(NAME));
    abft_handle_t h;
    TU_CHECK_STATUS(abft_create(&h, ABFT_BACKEND_CPU), ABFT_STATUS_SUCCESS);
    test_nonfinite(h);
    test_encode_keeps_plan(h);
    test_getrs_nonfinite(h);
    test_args_untouched(h);
    test_bad_pivot(h);
    test_overlap(h);
    test_n1_solves(h, &r);
    test_graded(h, &r);
    abft_destroy(h);
    return tu_finish(NAME);
}

/* Offline protected LU on the CPU backend: clean factorizations never flag (many sizes,
 * shapes, scalings, ill-conditioned), the factors and pivots are LAPACK's, faults in L and
 * U are located, told apart and corrected, checksum faults are recognized, faults before
 * the factorization are reported as spread, singular matrices come back like LAPACK,
 * argument errors are refused. */
#include <math.h>
#include <string.h>

#include "testutil.h"

void dgetrf_(const int *m, const int *n, double *A, const int *lda, int *ipiv, int *info);
void sgetrf_(const int *m, const int *n, float *A, const int *lda, int *ipiv, int *info);

static const char *NAME = "test_getrf";

/* ---- matrices ---------------------------------------------------------------------------- */

enum { K_UNIFORM, K_WIDE, K_CANCEL, K_POSITIVE, K_SCALED, K_HILBERT, K_GRADED, K_NKINDS };
static const char *kind_name[] = {"uniform", "wide", "cancel", "positive",
                                  "scaled",  "hilbert", "graded"};

static void make(tu_rng_t *r, int kind, int64_t m, int64_t n, double *A, int64_t lda) {
    switch (kind) {
    case K_WIDE: tu_fill_d(r, TU_WIDE, m, n, A, lda); break;
    case K_CANCEL: tu_fill_d(r, TU_CANCEL, m, n, A, lda); break;
    case K_POSITIVE: tu_fill_d(r, TU_POSITIVE, m, n, A, lda); break;
    case K_SCALED: { /* D1·A·D2 with scales 10^U(-10, 10): badly scaled rows and columns */
        tu_fill_d(r, TU_UNIFORM, m, n, A, lda);
        double *rs = tu_alloc_d(m);
        for (int64_t i = 0; i < m; ++i) rs[i] = pow(10.0, tu_range(r, -10, 10));
        for (int64_t j = 0; j < n; ++j) {
            double cs = pow(10.0, tu_range(r, -10, 10));
            for (int64_t i = 0; i < m; ++i) A[i + j * lda] *= rs[i] * cs;
        }
        free(rs);
        break;
    }
    case K_HILBERT: /* kappa grows like e^(3.5 n): numerically singular beyond n ~ 12 */
        tu_fill_d(r, TU_UNIFORM, m, n, A, lda);
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i) A[i + j * lda] = 1.0 / (double)(i + j + 1);
        break;
    case K_GRADED: /* columns graded over 30 orders of magnitude: kappa ~ 1e30 */
        tu_fill_d(r, TU_UNIFORM, m, n, A, lda);
        for (int64_t j = 0; j < n; ++j) {
            double s = pow(10.0, -30.0 * (double)j / (double)(n > 1 ? n - 1 : 1));
            for (int64_t i = 0; i < m; ++i) A[i + j * lda] *= s;
        }
        break;
    case K_UNIFORM:
    default: tu_fill_d(r, TU_UNIFORM, m, n, A, lda); break;
    }
}

static void ref_lu(int64_t m, int64_t n, double *A, int64_t lda, int64_t *ipiv, int64_t *info) {
    int im = (int)m, in = (int)n, il = (int)lda, inf = 0;
    int64_t k = m < n ? m : n;
    int *p = (int *)malloc((size_t)(k > 0 ? k : 1) * sizeof(int));
    dgetrf_(&im, &in, A, &il, p, &inf);
    for (int64_t i = 0; i < k; ++i) ipiv[i] = p[i];
    *info = inf;
    free(p);
}

/* ---- clean factorizations ------------------------------------------------------------------ */

static void test_clean(abft_handle_t h, tu_rng_t *r) {
    const int64_t shapes[][2] = {{1, 1}, {2, 2}, {3, 3}, {7, 7},  {33, 33}, {64, 64},
                                 {100, 100}, {129, 129}, {200, 200}, {50, 20}, {20, 50},
                                 {257, 100}, {1, 9}, {9, 1}};
    int runs = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        for (int kind = 0; kind < K_NKINDS; ++kind) {
            int64_t m = shapes[s][0], n = shapes[s][1], lda = m + (kind & 1) * 3;
            int64_t k = m < n ? m : n;
            double *A = tu_alloc_d(lda * n), *R = tu_alloc_d(lda * n);
            int64_t *ip = (int64_t *)malloc((size_t)k * sizeof(int64_t));
            int64_t *rp = (int64_t *)malloc((size_t)k * sizeof(int64_t));
            make(r, kind, m, n, A, lda);
            memcpy(R, A, (size_t)(lda * n) * sizeof(double));
            int64_t info = -1, rinfo = -1;
            ref_lu(m, n, R, lda, rp, &rinfo);
            abft_report_t rep;
            abft_status_t st = abft_dgetrf(h, m, n, A, lda, ip, &info, &rep);
            abft_status_t want = rinfo > 0 ? ABFT_STATUS_SINGULAR : ABFT_STATUS_SUCCESS;
            TU_CHECK(st == want, "%s %lldx%lld: status %s, LAPACK info %lld", kind_name[kind],
                     (long long)m, (long long)n, abft_status_name(st), (long long)rinfo);
            TU_CHECK(info == rinfo, "%s %lldx%lld: info %lld vs LAPACK %lld", kind_name[kind],
                     (long long)m, (long long)n, (long long)info, (long long)rinfo);
            TU_CHECK(rep.detected == 0 && rep.max_ratio < 1.0,
                     "false positive: %s %lldx%lld detected %lld max_ratio %g", kind_name[kind],
                     (long long)m, (long long)n, (long long)rep.detected, rep.max_ratio);
            TU_CHECK(rep.checked == m, "checked %lld, want %lld", (long long)rep.checked,
                     (long long)m);
            TU_CHECK(memcmp(ip, rp, (size_t)k * sizeof(int64_t)) == 0, "%s %lldx%lld: pivots differ",
                     kind_name[kind], (long long)m, (long long)n);
            TU_CHECK(memcmp(A, R, (size_t)(lda * n) * sizeof(double)) == 0,
                     "%s %lldx%lld: factors differ from LAPACK", kind_name[kind], (long long)m,
                     (long long)n);
            free(A);
            free(R);
            free(ip);
            free(rp);
            ++runs;
        }
    }
    /* fp32 with fp64 checksums */
    for (int t = 0; t < 60; ++t) {
        int64_t m = tu_int(r, 1, 150), n = tu_int(r, 1, 150), lda = m + tu_int(r, 0, 2);
        int64_t k = m < n ? m : n;
        int kind = (int)tu_int(r, 0, K_NKINDS - 1);
        double *Ad = tu_alloc_d(lda * n);
        make(r, kind, m, n, Ad, lda);
        float *A = tu_alloc_s(lda * n), *R = tu_alloc_s(lda * n);
        for (int64_t i = 0; i < lda * n; ++i) A[i] = R[i] = (float)Ad[i];
        int64_t *ip = (int64_t *)malloc((size_t)k * sizeof(int64_t));
        int *rp = (int *)malloc((size_t)k * sizeof(int));
        int im = (int)m, in = (int)n, il = (int)lda, rinfo = 0;
        sgetrf_(&im, &in, R, &il, rp, &rinfo);
        int64_t info = -1;
        abft_report_t rep;
        abft_status_t st = abft_sgetrf(h, m, n, A, lda, ip, &info, &rep);
        TU_CHECK(st == (rinfo > 0 ? ABFT_STATUS_SINGULAR : ABFT_STATUS_SUCCESS) && info == rinfo,
                 "sgetrf %s %lldx%lld: %s info %lld (LAPACK %d)", kind_name[kind], (long long)m,
                 (long long)n, abft_status_name(st), (long long)info, rinfo);
        TU_CHECK(rep.detected == 0, "sgetrf false positive: %s %lldx%lld max_ratio %g",
                 kind_name[kind], (long long)m, (long long)n, rep.max_ratio);
        TU_CHECK(memcmp(A, R, (size_t)(lda * n) * sizeof(float)) == 0, "sgetrf factors differ");
        free(Ad);
        free(A);
        free(R);
        free(ip);
        free(rp);
        ++runs;
    }
    printf("clean: %d factorizations\n", runs);
}

/* ---- faults in L and U ------------------------------------------------------------------------ */

/* A corrected element is recomputed from the checksum of its row (verify/abft_getrf.c,
 * exact_value): a sum over the row of the factors weighted by v_q (v_0 = 1, v_1 = j + 1),
 * divided by (U·v_q)_c for an element of L (q with the larger divisor) or by 1 for U (q = 0).
 * Its forward error is within rounding of that sum: (n + k)·u·M_q / |divisor|, with M_q the
 * row's magnitude sum_j |L(r, j)|·(|U|·v_q)_j (L unit lower). Every other element must
 * come back bit for bit. Returns the error over that tolerance (<= 1 passes); -1 when any
 * other element differs. F: the corrected factors, C: the clean ones. */
static double correction_error(int64_t m, int64_t n, const double *F, const double *C,
                               int64_t lda, int64_t r, int64_t c, int inL) {
    const int64_t k = m < n ? m : n;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i)
            if ((i != r || j != c) && F[i + j * lda] != C[i + j * lda]) return -1.0;
    int q = 0;
    double div = 1.0;
    if (inL) {
        double y[2] = {0.0, 0.0};
        for (int64_t l = c; l < n; ++l) {
            y[0] += C[c + l * lda];
            y[1] += C[c + l * lda] * (double)(l + 1);
        }
        q = fabs(y[1]) > fabs(y[0]);
        div = fabs(y[q]);
    }
    double M = 0.0;
    for (int64_t j = 0; j < k && j <= r; ++j) {
        double uv = 0.0;
        for (int64_t l = j; l < n; ++l) uv += fabs(C[j + l * lda]) * (q ? (double)(l + 1) : 1.0);
        M += (j == r ? 1.0 : fabs(C[r + j * lda])) * uv;
    }
    double tol = (double)(n + k) * 0x1.0p-53 * M / div;
    return fabs(F[r + c * lda] - C[r + c * lda]) / tol;
}

/* With the recovery copy (copy = 1) a located fault is confirmed against it and corrected;
 * without it two row residuals cannot confirm a location (several errors in one row, or a
 * corrupted checksum, fit them too): the fault is reported, nothing is corrected. */
static void test_factor_faults(abft_handle_t h, tu_rng_t *r, int copy) {
    TU_CHECK_STATUS(abft_set_lu_recovery(h, copy), ABFT_STATUS_SUCCESS);
    int nl = 0, nu = 0, nl_ok = 0, nu_ok = 0, nundet = 0, nrep = 0;
    double worst = 0.0;
    for (int t = 0; t < 200; ++t) {
        int64_t n = tu_int(r, 8, 120), m = n + (t % 4 == 3 ? tu_int(r, 1, 30) : 0);
        int64_t lda = m + 1, k = m < n ? m : n;
        double *A = tu_alloc_d(lda * n), *C = tu_alloc_d(lda * n);
        make(r, t % 3 == 0 ? K_POSITIVE : K_UNIFORM, m, n, A, lda);
        memcpy(C, A, (size_t)(lda * n) * sizeof(double));
        int64_t *ip = (int64_t *)malloc((size_t)k * sizeof(int64_t));
        int64_t info;
        abft_report_t rep;
        /* clean factors for comparison */
        TU_CHECK_STATUS(abft_dgetrf(h, m, n, C, lda, ip, &info, &rep), ABFT_STATUS_SUCCESS);
        int inL = t & 1;
        tu_flip_t f = {ABFT_SITE_AFTER_LU, -1, 0, 0, (int)tu_int(r, 44, 61), 0, 0, 0};
        if (inL) {
            f.j = tu_int(r, 0, k - 1);
            f.i = tu_int(r, f.j + 1 < m ? f.j + 1 : m - 1, m - 1);
            if (f.i <= f.j) f.i = f.j + 1; /* needs m > j + 1 */
            if (f.i >= m) { inL = 0; }
        }
        if (!inL) {
            f.i = tu_int(r, 0, k - 1);
            f.j = tu_int(r, f.i, n - 1);
        }
        abft_set_hook(h, tu_flip_hook, &f);
        abft_status_t st = abft_dgetrf(h, m, n, A, lda, ip, &info, &rep);
        abft_set_hook(h, NULL, NULL);
        TU_CHECK(st == ABFT_STATUS_SUCCESS, "status %s", abft_status_name(st));
        double dlt = fabs(f.after - f.before);
        if (inL) ++nl; else ++nu;
        if (rep.detected == 0) {
            /* allowed only when the change is within rounding of the bound: the factors
             * must then be as good as the clean ones */
            ++nundet;
            TU_CHECK(tu_rel_diff(m, n, A, C, lda) < 1e-10,
                     "undetected flip changed the factors: %s (%lld,%lld) bit %d %g -> %g",
                     inL ? "L" : "U", (long long)f.i, (long long)f.j, f.bit, f.before, f.after);
            goto next;
        }
        if (!copy) {
            ++nrep;
            TU_CHECK(rep.corrected == 0 && rep.uncorrectable >= 1,
                     "no copy: flip %s (%lld,%lld) bit %d: corrected %lld uncorrectable %lld",
                     inL ? "L" : "U", (long long)f.i, (long long)f.j, f.bit,
                     (long long)rep.corrected, (long long)rep.uncorrectable);
            goto next;
        }
        TU_CHECK(rep.corrected == 1 && rep.nfaults >= 1, "flip %s (%lld,%lld) bit %d %g -> %g "
                 "(m=%lld n=%lld): detected %lld corrected %lld uncorrectable %lld spread %d",
                 inL ? "L" : "U", (long long)f.i, (long long)f.j, f.bit, f.before, f.after,
                 (long long)m, (long long)n, (long long)rep.detected, (long long)rep.corrected,
                 (long long)rep.uncorrectable, rep.spread);
        if (rep.corrected == 1) {
            const abft_fault_t *ft = &rep.faults[0];
            TU_CHECK(ft->row == f.i && ft->col == f.j, "located (%lld,%lld), flipped (%lld,%lld)",
                     (long long)ft->row, (long long)ft->col, (long long)f.i, (long long)f.j);
            TU_CHECK(ft->factor == (inL ? ABFT_FACTOR_L : ABFT_FACTOR_U),
                     "factor %d, flipped in %s", ft->factor, inL ? "L" : "U");
            TU_CHECK(ft->action == ABFT_ACTION_CORRECTED, "action %d", ft->action);
            TU_CHECK(fabs(ft->delta - (f.after - f.before)) <= 1e-6 * dlt,
                     "delta %g, true %g", ft->delta, f.after - f.before);
            double e = correction_error(m, n, A, C, lda, f.i, f.j, inL);
            TU_CHECK(e >= 0.0 && e <= 1.0, "corrected factors differ from clean: %s (%lld,%lld) "
                     "%s", inL ? "L" : "U", (long long)f.i, (long long)f.j,
                     e < 0.0 ? "elsewhere" : "beyond the rounding of its recomputation");
            if (e > worst) worst = e;
            if (inL) ++nl_ok; else ++nu_ok;
        }
    next:
        free(A);
        free(C);
        free(ip);
    }
    printf("factor faults (%s): L %d (corrected %d), U %d (corrected %d), reported %d, below "
           "bound %d; worst corrected element %.3g of its recomputation's rounding\n",
           copy ? "recovery copy" : "no copy", nl, nl_ok, nu, nu_ok, nrep, nundet, worst);
    if (copy)
        TU_CHECK(nl_ok > nl / 2 && nu_ok > nu / 2, "too few corrections: L %d/%d U %d/%d",
                 nl_ok, nl, nu_ok, nu);
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 0), ABFT_STATUS_SUCCESS);
}

/* A flip in a high exponent bit may make a checksum infinite: detected, located as the
 * largest element of the first flagged row, recomputed from the checksums, confirmed. */
static void test_huge_fault(abft_handle_t h, tu_rng_t *r) {
    int64_t n = 60;
    double *A = tu_alloc_d(n * n);
    int64_t ip[60], info;
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 1), ABFT_STATUS_SUCCESS); /* confirms the fix */
    for (int t = 0; t < 40; ++t) { /* in L, such a flip overflows the bound (|L|·|U|V = Inf) */
        make(r, K_UNIFORM, n, n, A, n);
        tu_flip_t f = {ABFT_SITE_AFTER_LU, -1, tu_int(r, 0, n - 1), tu_int(r, 0, n - 1), 62, 0, 0, 0};
        abft_report_t rep;
        abft_set_hook(h, tu_flip_hook, &f);
        TU_CHECK_STATUS(abft_dgetrf(h, n, n, A, n, ip, &info, &rep), ABFT_STATUS_SUCCESS);
        abft_set_hook(h, NULL, NULL);
        TU_CHECK(rep.detected > 0 && rep.corrected == 1 && rep.uncorrectable == 0,
                 "bit 62 flip at (%lld,%lld) %g -> %g: detected %lld corrected %lld",
                 (long long)f.i, (long long)f.j, f.before, f.after, (long long)rep.detected,
                 (long long)rep.corrected);
    }
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 0), ABFT_STATUS_SUCCESS);
    free(A);
}

/* ---- checksum faults ------------------------------------------------------------------------ */

/* Flips in the encoded checksums, bits lo_bit..61 (every fourth trial bit 62): the factors
 * stay untouched and a detection is reported as one checksum fault. With the recovery copy
 * (lo_bit low) this covers the small ones, which the checksums' own checksum cannot see. */
static void test_checksum_faults(abft_handle_t h, tu_rng_t *r, int lo_bit, int ntrials,
                                 int min_detected) {
    int ncs = 0;
    for (int t = 0; t < ntrials; ++t) {
        int64_t n = tu_int(r, 5, 100), lda = n;
        double *A = tu_alloc_d(n * n), *C = tu_alloc_d(n * n);
        make(r, K_UNIFORM, n, n, A, lda);
        memcpy(C, A, (size_t)(n * n) * sizeof(double));
        int64_t *ip = (int64_t *)malloc((size_t)n * sizeof(int64_t)), info;
        abft_report_t rep;
        TU_CHECK_STATUS(abft_dgetrf(h, n, n, C, lda, ip, &info, &rep), ABFT_STATUS_SUCCESS);
        /* every fourth: bit 62, which makes the checksum huge or NaN (its sums overflow) */
        tu_flip_t f = {ABFT_SITE_CHECKSUM, -1, tu_int(r, 0, n - 1), tu_int(r, 0, 1),
                    t % 4 == 3 ? 62 : (int)tu_int(r, lo_bit, 61), 0, 0, 0};
        abft_set_hook(h, tu_flip_hook, &f);
        TU_CHECK_STATUS(abft_dgetrf(h, n, n, A, lda, ip, &info, &rep), ABFT_STATUS_SUCCESS);
        abft_set_hook(h, NULL, NULL);
        TU_CHECK(memcmp(A, C, (size_t)(n * n) * sizeof(double)) == 0,
                 "a checksum fault changed the factors");
        if (rep.detected > 0) {
            TU_CHECK(rep.checksum_faults == 1 && rep.corrected == 0 && rep.spread == 0 &&
                         rep.uncorrectable == 0 && rep.recomputed == 0,
                     "checksum flip (%lld,%lld) bit %d: checksum_faults %lld corrected %lld "
                     "spread %d uncorrectable %lld recomputed %lld", (long long)f.i,
                     (long long)f.j, f.bit, (long long)rep.checksum_faults,
                     (long long)rep.corrected, rep.spread, (long long)rep.uncorrectable,
                     (long long)rep.recomputed);
            TU_CHECK(rep.nfaults == 1 && rep.faults[0].action == ABFT_ACTION_CHECKSUM_FAULT,
                     "fault entry action %d", rep.nfaults ? rep.faults[0].action : -1);
            ++ncs;
        }
        free(A);
        free(C);
        free(ip);
    }
    printf("checksum faults (bits %d..62) recognized: %d of %d\n", lo_bit, ncs, ntrials);
    TU_CHECK(ncs >= min_detected, "only %d checksum faults detected", ncs);
}

/* The report's max_ratio agrees with its detected count for checksum faults (docs/api.md:
 * an entry is flagged when its ratio exceeds 1, so detected > 0 exactly when max_ratio > 1).
 * One bit of the encoded checksum X = A·V (any of the 64, any row, either column) flipped
 * after encoding, fp64 and fp32, with and without the recovery copy: the factors come back
 * as the clean call's, anything detected is reported (a checksum fault, or uncorrectable),
 * and detected > 0 if and only if max_ratio > 1. (A low bit moves no row's residual past
 * its bound; X^T·V against its encode-time value finds it, and its ratio is the report's
 * max_ratio: before, such reports said detected 1 with max_ratio 0.002.) */
static void test_checksum_ratio(abft_handle_t h, tu_rng_t *r, int fp32, int ntrials) {
    int ndet = 0, ncs = 0, nunc = 0, nbad = 0;
    for (int t = 0; t < ntrials; ++t) {
        const int rec = t & 1;
        TU_CHECK_STATUS(abft_set_lu_recovery(h, rec), ABFT_STATUS_SUCCESS);
        int64_t n = tu_int(r, 2, 80), m = t % 4 == 2 ? n + tu_int(r, 1, 20) : n, lda = m;
        int64_t k = m < n ? m : n;
        int kind = (int)tu_int(r, 0, K_NKINDS - 1);
        if (kind == K_HILBERT || kind == K_GRADED) kind = K_UNIFORM; /* singular in fp32 */
        double *A = tu_alloc_d(m * n), *C = tu_alloc_d(m * n);
        float *As = tu_alloc_s(m * n), *Cs = tu_alloc_s(m * n);
        make(r, kind, m, n, A, lda);
        for (int64_t i = 0; i < m * n; ++i) As[i] = Cs[i] = (float)A[i];
        memcpy(C, A, (size_t)(m * n) * sizeof(double));
        int64_t *ip = (int64_t *)malloc((size_t)k * sizeof(int64_t)), info = 0, cinfo = 0;
        abft_report_t rep;
        abft_status_t cst = fp32 ? abft_sgetrf(h, m, n, Cs, lda, ip, &cinfo, &rep)
                                 : abft_dgetrf(h, m, n, C, lda, ip, &cinfo, &rep);
        tu_flip_t f = {ABFT_SITE_CHECKSUM, -1, tu_int(r, 0, m - 1), tu_int(r, 0, 1),
                       (int)tu_int(r, 0, 63), 0, 0, 0};
        abft_set_hook(h, tu_flip_hook, &f);
        abft_status_t st = fp32 ? abft_sgetrf(h, m, n, As, lda, ip, &info, &rep)
                                : abft_dgetrf(h, m, n, A, lda, ip, &info, &rep);
        abft_set_hook(h, NULL, NULL);
        const char *pn = fp32 ? "sgetrf" : "dgetrf";
        TU_CHECK(st == cst && info == cinfo, "%s %lldx%lld: status %s info %lld, clean %s %lld",
                 pn, (long long)m, (long long)n, abft_status_name(st), (long long)info,
                 abft_status_name(cst), (long long)cinfo);
        int same = fp32 ? memcmp(As, Cs, (size_t)(m * n) * sizeof(float)) == 0
                        : memcmp(A, C, (size_t)(m * n) * sizeof(double)) == 0;
        TU_CHECK(same, "%s %lldx%lld recovery %d: a checksum flip X(%lld,%lld) bit %d changed "
                 "the factors", pn, (long long)m, (long long)n, rec, (long long)f.i,
                 (long long)f.j, f.bit);
        TU_CHECK(rep.corrected == 0 && rep.recomputed == 0,
                 "%s: checksum flip corrected %lld recomputed %lld", pn,
                 (long long)rep.corrected, (long long)rep.recomputed);
        if (rep.detected > 0) {
            ++ndet;
            ncs += rep.checksum_faults > 0;
            nunc += rep.uncorrectable > 0;
            TU_CHECK(rep.checksum_faults + rep.uncorrectable >= 1 && rep.nfaults >= 1,
                     "%s: detected %lld but reported nothing", pn, (long long)rep.detected);
        }
        int agree = rep.detected > 0 ? rep.max_ratio > 1.0 : rep.max_ratio <= 1.0;
        if (!agree) ++nbad;
        TU_CHECK(agree, "%s %lldx%lld %s recovery %d: X(%lld,%lld) bit %d %g -> %g: detected "
                 "%lld, max_ratio %g (checksum_faults %lld uncorrectable %lld)", pn,
                 (long long)m, (long long)n, kind_name[kind], rec, (long long)f.i,
                 (long long)f.j, f.bit, f.before, f.after, (long long)rep.detected,
                 rep.max_ratio, (long long)rep.checksum_faults, (long long)rep.uncorrectable);
        free(A);
        free(C);
        free(As);
        free(Cs);
        free(ip);
    }
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 0), ABFT_STATUS_SUCCESS);
    printf("checksum flips (%s, bits 0..63): %d trials, detected %d (checksum fault %d, "
           "uncorrectable %d), detected and max_ratio disagree in %d\n",
           fp32 ? "fp32" : "fp64", ntrials, ndet, ncs, nunc, nbad);
}

/* ---- a corrupted checksum together with the data -------------------------------------- */

/* Flips at the CHECKSUM site (row xrow of X = A·V, both columns) and at AFTER_LU (the
 * elements (ui[e], uj[e]) of the factors, or a whole row negated when neg_row >= 0). */
typedef struct cs_data {
    int64_t xrow;
    int xbit;
    int nu;
    int64_t ui[2], uj[2];
    int ubit;
    int64_t neg_row;
} cs_data_t;
static abft_status_t cs_data_hook(void *user, abft_hook_site_t site, int which, char prec,
                                  void *ptr, int64_t rows, int64_t cols, int64_t ld) {
    (void)rows;
    cs_data_t *c = (cs_data_t *)user;
    if (prec != 'd') return ABFT_STATUS_SUCCESS;
    double *a = (double *)ptr;
    if (site == ABFT_SITE_CHECKSUM && which == 0) {
        a[c->xrow] = tu_flip_d(a[c->xrow], c->xbit);
        a[c->xrow + ld] = tu_flip_d(a[c->xrow + ld], c->xbit);
    } else if (site == ABFT_SITE_AFTER_LU) {
        for (int e = 0; e < c->nu; ++e)
            a[c->ui[e] + c->uj[e] * ld] = tu_flip_d(a[c->ui[e] + c->uj[e] * ld], c->ubit);
        if (c->neg_row >= 0)
            for (int64_t j = 0; j < cols; ++j) a[c->neg_row + j * ld] = -a[c->neg_row + j * ld];
    }
    return ABFT_STATUS_SUCCESS;
}

/* A checksum fault is declared only when the re-derived checksum explains the residual.
 * (1) 3 x 3, bit 40 of X(1, 0) and X(1, 1) and of U(2, 2) (row 2 is where row 1 of A lands
 * after pivoting): reported as a checksum fault, data intact (SUCCESS, checksum_faults 1,
 * uncorrectable 0, backward error ~2e10 times the bound), with and without the recovery
 * copy. (2) 1 x 3, X(0, :) and the row of U negated consistently (the check passes against
 * the corrupted checksum; X^T·V was only compared when a row was flagged): nothing was
 * detected. Both must be detected and reported uncorrectable. */
static void test_checksum_and_data(abft_handle_t h) {
    for (int rec = 0; rec < 2; ++rec) {
        TU_CHECK_STATUS(abft_set_lu_recovery(h, rec), ABFT_STATUS_SUCCESS);
        double A[9] = {2, 1, 4, 3, -1, 2, 1, 5, -3};
        int64_t ip[3], info;
        abft_report_t rep;
        cs_data_t c = {1, 40, 1, {2, 0}, {2, 0}, 40, -1};
        abft_set_hook(h, cs_data_hook, &c);
        abft_status_t st = abft_dgetrf(h, 3, 3, A, 3, ip, &info, &rep);
        abft_set_hook(h, NULL, NULL);
        TU_CHECK(st == ABFT_STATUS_SUCCESS && rep.detected > 0 && rep.checksum_faults == 0 &&
                     rep.uncorrectable > 0,
                 "X row 1 and U(2,2) flipped (recovery %d): %s detected %lld checksum faults "
                 "%lld uncorrectable %lld", rec, abft_status_name(st), (long long)rep.detected,
                 (long long)rep.checksum_faults, (long long)rep.uncorrectable);
        double B[3] = {1673411.0, -0.5, 1872122.125};
        cs_data_t c2 = {0, 63, 0, {0, 0}, {0, 0}, 0, 0};
        abft_set_hook(h, cs_data_hook, &c2);
        st = abft_dgetrf(h, 1, 3, B, 1, ip, &info, &rep);
        abft_set_hook(h, NULL, NULL);
        TU_CHECK(st == ABFT_STATUS_SUCCESS && rep.detected > 0 && rep.checksum_faults == 0 &&
                     rep.uncorrectable > 0,
                 "X row 0 and the row of U negated (recovery %d): %s detected %lld checksum "
                 "faults %lld uncorrectable %lld", rec, abft_status_name(st),
                 (long long)rep.detected, (long long)rep.checksum_faults,
                 (long long)rep.uncorrectable);
    }
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 0), ABFT_STATUS_SUCCESS);
}

/* A multiplier inflated where the row of U·V it multiplies cancels: row 0 of A is
 * 10·[1, -2, 1, 0, ...] (the pivot of column 0; its sums with weights 1 and j + 1 are both
 * exactly 0), and L(i, 0) is multiplied by 2^e after the factorization. The residual of row
 * i stays what it was (the product with 0); only the cap of |L|·(|U|·V) (docs/lu.md,
 * "Multipliers above 1") flags it. The report must say so with max_ratio > 1 (that row's
 * Za / cap), never call it a checksum fault, and with the recovery copy bring the factors
 * back (recomputed); without it report them uncorrectable. Before: max_ratio 0, and with
 * the copy "checksum fault, data intact" with L(i, 0) left at 1e90. */
typedef struct scale_hook {
    int64_t i, j;
    int e;
} scale_hook_t;
static abft_status_t scale_elem_hook(void *user, abft_hook_site_t site, int which, char prec,
                                     void *ptr, int64_t rows, int64_t cols, int64_t ld) {
    (void)which, (void)rows, (void)cols;
    const scale_hook_t *s = (const scale_hook_t *)user;
    if (site == ABFT_SITE_AFTER_LU && prec == 'd') {
        double *a = (double *)ptr + s->i + s->j * ld;
        *a = ldexp(*a, s->e);
    }
    return ABFT_STATUS_SUCCESS;
}
static void test_cancelling_multiplier(abft_handle_t h, tu_rng_t *r) {
    int nrec = 0, nunc = 0;
    for (int t = 0; t < 40; ++t) {
        const int rec = t & 1;
        TU_CHECK_STATUS(abft_set_lu_recovery(h, rec), ABFT_STATUS_SUCCESS);
        int64_t n = tu_int(r, 3, 60), m = n + (t % 3 == 0 ? tu_int(r, 1, 10) : 0);
        double *A = tu_alloc_d(m * n), *C = tu_alloc_d(m * n);
        tu_fill_d(r, TU_UNIFORM, m, n, A, m);
        for (int64_t j = 0; j < n; ++j) A[j * m] = j < 3 ? 10.0 * (j == 1 ? -2.0 : 1.0) : 0.0;
        memcpy(C, A, (size_t)(m * n) * sizeof(double));
        int64_t *ip = (int64_t *)malloc((size_t)n * sizeof(int64_t)), info;
        abft_report_t rep;
        TU_CHECK_STATUS(abft_dgetrf(h, m, n, C, m, ip, &info, &rep), ABFT_STATUS_SUCCESS);
        scale_hook_t sh = {tu_int(r, 1, m - 1), 0, (int)tu_int(r, 20, 600)};
        abft_set_hook(h, scale_elem_hook, &sh);
        TU_CHECK_STATUS(abft_dgetrf(h, m, n, A, m, ip, &info, &rep), ABFT_STATUS_SUCCESS);
        abft_set_hook(h, NULL, NULL);
        /* a recomputed row agrees with the clean one to rounding, not bit for bit */
        int same = tu_rel_diff(m, n, A, C, m) < 1e-10;
        TU_CHECK(rep.detected > 0 && rep.max_ratio > 1.0 && rep.checksum_faults == 0,
                 "%lldx%lld L(%lld,0) times 2^%d (recovery %d): detected %lld max_ratio %g "
                 "checksum_faults %lld", (long long)m, (long long)n, (long long)sh.i, sh.e, rec,
                 (long long)rep.detected, rep.max_ratio, (long long)rep.checksum_faults);
        TU_CHECK(rec ? rep.recomputed == 1 && rep.uncorrectable == 0 && same
                     : rep.uncorrectable >= 1 && rep.corrected == 0,
                 "%lldx%lld L(%lld,0) times 2^%d (recovery %d): recomputed %lld uncorrectable "
                 "%lld corrected %lld, factors %s", (long long)m, (long long)n, (long long)sh.i,
                 sh.e, rec, (long long)rep.recomputed, (long long)rep.uncorrectable,
                 (long long)rep.corrected, same ? "clean" : "not clean (beyond 1e-10)");
        if (rep.nfaults >= 1)
            TU_CHECK(rep.faults[0].ratio > 1.0, "fault ratio %g", rep.faults[0].ratio);
        nrec += rep.recomputed > 0;
        nunc += rep.uncorrectable > 0;
        free(A);
        free(C);
        free(ip);
    }
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 0), ABFT_STATUS_SUCCESS);
    printf("multiplier inflated over a cancelling row of U·V: 40 trials, recomputed %d, "
           "uncorrectable %d\n", nrec, nunc);
}

/* ---- a fault before / during the factorization (split form) ---------------------------------- */

static void test_spread(abft_handle_t h, tu_rng_t *r) {
    int nspread = 0, nfixed = 0, nreported = 0;
    for (int t = 0; t < 30; ++t) {
        int64_t n = tu_int(r, 10, 100);
        double *A = tu_alloc_d(n * n), *A0 = tu_alloc_d(n * n);
        make(r, K_UNIFORM, n, n, A, n);
        memcpy(A0, A, (size_t)(n * n) * sizeof(double));
        abft_lu_plan_t plan;
        TU_CHECK_STATUS(abft_lu_plan_create(h, 'd', n, n, &plan), ABFT_STATUS_SUCCESS);
        TU_CHECK_STATUS(abft_dgetrf_encode(h, plan, A, n), ABFT_STATUS_SUCCESS);
        int64_t i = tu_int(r, 0, n - 1), j = tu_int(r, 0, n - 1);
        A[i + j * n] += 0.5 + tu_uniform(r); /* the fault, before the caller's getrf */
        int *ip = (int *)malloc((size_t)n * sizeof(int));
        int in = (int)n, info = 0;
        dgetrf_(&in, &in, A, &in, ip, &info);
        abft_report_t rep;
        TU_CHECK_STATUS(abft_dgetrf_verify(h, plan, A, n, ip, 32, &rep), ABFT_STATUS_SUCCESS);
        TU_CHECK(rep.detected > 0, "fault before getrf at (%lld,%lld) not detected",
                 (long long)i, (long long)j);
        if (rep.spread) {
            ++nspread;
            TU_CHECK(rep.corrected == 0 && rep.recomputed == 0 && rep.uncorrectable > 0,
                     "spread but corrected");
        } else if (rep.corrected > 0 || rep.recomputed > 0) {
            /* only legitimate when the correction (or, with the recovery copy, the row
             * recomputed from it) made L·U = P·A0 hold: re-verify with the clean encoding */
            ++nfixed;
            abft_report_t rep2;
            TU_CHECK_STATUS(abft_dgetrf_encode(h, plan, A0, n), ABFT_STATUS_SUCCESS);
            TU_CHECK_STATUS(abft_dgetrf_verify(h, plan, A, n, ip, 32, &rep2), ABFT_STATUS_SUCCESS);
            TU_CHECK(rep2.detected == 0, "a 'corrected' spread fault does not verify");
        } else {
            /* reported: without the recovery copy no correction is made (docs/lu.md), and
             * with it the re-check may refuse one; either way the caller is told */
            ++nreported;
            TU_CHECK(rep.uncorrectable > 0,
                     "fault before getrf at (%lld,%lld), n %lld: detected %lld, neither spread, "
                     "resolved nor reported uncorrectable",
                     (long long)i, (long long)j, (long long)n, (long long)rep.detected);
        }
        abft_lu_plan_destroy(plan);
        free(ip);
        free(A);
        free(A0);
    }
    printf("faults before getrf: spread %d, resolved %d, reported %d\n", nspread, nfixed,
           nreported);
}

/* ---- recovery copy: every detected single fault in the factors resolved ---------------------- */

static void test_recovery(abft_handle_t h, tu_rng_t *r) {
    TU_CHECK_STATUS(abft_set_lu_recovery(NULL, 1), ABFT_STATUS_NOT_INITIALIZED);
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 2), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 1), ABFT_STATUS_SUCCESS);
    int ndet = 0, nrec = 0, ncor = 0;
    for (int t = 0; t < 300; ++t) {
        /* square, tall (m > n) and wide (m < n) */
        int64_t n = tu_int(r, 8, 120), m = n;
        if (t % 4 == 3) m = n + tu_int(r, 1, 30);
        if (t % 4 == 2) m = n - tu_int(r, 1, 7);
        int64_t lda = m + 2, k = m < n ? m : n;
        double *A = tu_alloc_d(lda * n), *C = tu_alloc_d(lda * n);
        make(r, t % 3 == 0 ? K_POSITIVE : K_UNIFORM, m, n, A, lda);
        memcpy(C, A, (size_t)(lda * n) * sizeof(double));
        int64_t *ip = (int64_t *)malloc((size_t)k * sizeof(int64_t)), info;
        abft_report_t rep;
        TU_CHECK_STATUS(abft_dgetrf(h, m, n, C, lda, ip, &info, &rep), ABFT_STATUS_SUCCESS);
        /* any mantissa or exponent bit: small, middling (the ones two checksums cannot
         * locate) and huge changes */
        tu_flip_t f = {ABFT_SITE_AFTER_LU, -1, 0, 0, (int)tu_int(r, 20, 61), 0, 0, 0};
        int inL = (t & 1) && m > 1;
        if (inL) {
            f.i = tu_int(r, 1, m - 1);
            f.j = tu_int(r, 0, (f.i < k ? f.i : k) - 1);
        } else {
            f.i = tu_int(r, 0, k - 1);
            f.j = tu_int(r, f.i, n - 1);
        }
        abft_set_hook(h, tu_flip_hook, &f);
        abft_status_t st = abft_dgetrf(h, m, n, A, lda, ip, &info, &rep);
        abft_set_hook(h, NULL, NULL);
        TU_CHECK(st == ABFT_STATUS_SUCCESS, "status %s", abft_status_name(st));
        double e = tu_rel_diff(m, n, A, C, lda);
        if (rep.detected > 0) {
            ++ndet;
            nrec += rep.recomputed > 0;
            ncor += rep.corrected > 0;
            TU_CHECK(rep.uncorrectable == 0 && rep.corrected + rep.recomputed == 1,
                     "flip %s (%lld,%lld) bit %d %g -> %g (m=%lld n=%lld): corrected %lld "
                     "recomputed %lld uncorrectable %lld", inL ? "L" : "U", (long long)f.i,
                     (long long)f.j, f.bit, f.before, f.after, (long long)m, (long long)n,
                     (long long)rep.corrected, (long long)rep.recomputed,
                     (long long)rep.uncorrectable);
            if (rep.recomputed > 0)
                TU_CHECK(rep.nfaults == 1 && rep.faults[0].action == ABFT_ACTION_RECOMPUTED &&
                             rep.faults[0].row == f.i,
                         "recomputed row %lld, flipped row %lld",
                         (long long)(rep.nfaults ? rep.faults[0].row : -1), (long long)f.i);
        }
        /* resolved or masked, the factors are the clean ones to rounding */
        TU_CHECK(e < 1e-9, "flip %s (%lld,%lld) bit %d: factors differ from clean by %g",
                 inL ? "L" : "U", (long long)f.i, (long long)f.j, f.bit, e);
        free(A);
        free(C);
        free(ip);
    }
    printf("recovery: %d detected, %d located and corrected, %d rows recomputed\n", ndet, ncor,
           nrec);
    TU_CHECK(nrec > 0 && ncor > 0, "recovery path not exercised (recomputed %d, corrected %d)",
             nrec, ncor);
    /* small checksum faults (which the checksums' own checksum cannot see) are told apart
     * from data faults by the copy */
    test_checksum_faults(h, r, 10, 60, 0);
    /* split form: a fault in A between the encode and the caller's getrf changes one row of
     * P·A, but the rows below were eliminated with it: recomputing that row alone cannot
     * repair the factors; the re-check must refuse it (or what it kept must verify) */
    test_spread(h, r);
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 0), ABFT_STATUS_SUCCESS);
}

/* A small error of U(1, 1) (= 1) with the recovery copy: row 1 of the product carries the
 * cancelled 1e6 of row 0 (U(1, 3) = 5e5 - 0.5·1e6 = 0), so its bound is ~1e9 times those of
 * the rows below; the error stays within row 1's bound and shows only in the rows below it,
 * through L(i, 1). Case 0: rows 2 and 3 flagged; recomputing row 2 moves the error into
 * U(2, 2) and on to row 3 (the re-check refuses it). Case 1: only row 3, the last, flagged;
 * recomputing it absorbs the error and passes, with row 1 still wrong. Either way the row
 * to recompute is row 1, and the factors come back as the clean ones (exact arithmetic). */
static void test_recovery_below(abft_handle_t h) {
    static const double M[2][16] = { /* 4 x 4, column-major */
        {2, 1, 0, 0, 0, 1, 0.5, 0.25, 0, 0.5, 1, 0.5, 1e6, 5e5, 0.5, 1},
        {2, 1, 0, 0, 0, 1, 0, 0.5, 0, 0.5, 1, 0.25, 1e6, 5e5, 0.5, 1}};
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 1), ABFT_STATUS_SUCCESS);
    for (int c = 0; c < 2; ++c) {
        for (int sp = 0; sp < 2; ++sp) { /* fp64, fp32 */
            double Ad[16], Cd[16];
            float As[16], Cs[16];
            int64_t ip[4], info;
            abft_report_t rep;
            for (int i = 0; i < 16; ++i) Cd[i] = Ad[i] = M[c][i];
            for (int i = 0; i < 16; ++i) Cs[i] = As[i] = (float)M[c][i];
            abft_status_t st = sp ? abft_sgetrf(h, 4, 4, Cs, 4, ip, &info, &rep)
                                  : abft_dgetrf(h, 4, 4, Cd, 4, ip, &info, &rep);
            TU_CHECK(st == ABFT_STATUS_SUCCESS && rep.detected == 0,
                     "case %d %s clean: %s, detected %lld", c, sp ? "fp32" : "fp64",
                     abft_status_name(st), (long long)rep.detected);
            TU_CHECK(ip[0] == 1 && ip[1] == 2 && ip[2] == 3 && ip[3] == 4,
                     "case %d %s: pivots %lld %lld %lld %lld", c, sp ? "fp32" : "fp64",
                     (long long)ip[0], (long long)ip[1], (long long)ip[2], (long long)ip[3]);
            /* bit 16 (fp64) or 10 (fp32) of U(1, 1): 1 -> 1 + 2^-36 (1 + 2^-13) */
            tu_flip_t f = {ABFT_SITE_AFTER_LU, -1, 1, 1, sp ? 10 : 16, 0, 0, 0};
            abft_set_hook(h, tu_flip_hook, &f);
            st = sp ? abft_sgetrf(h, 4, 4, As, 4, ip, &info, &rep)
                    : abft_dgetrf(h, 4, 4, Ad, 4, ip, &info, &rep);
            abft_set_hook(h, NULL, NULL);
            TU_CHECK(st == ABFT_STATUS_SUCCESS && f.fired && rep.detected > 0,
                     "case %d %s: %s, fired %d, detected %lld", c, sp ? "fp32" : "fp64",
                     abft_status_name(st), f.fired, (long long)rep.detected);
            TU_CHECK(rep.uncorrectable == 0 && rep.corrected == 0 && rep.recomputed == 1 &&
                         rep.spread == 0 && rep.nfaults == 1 &&
                         rep.faults[0].action == ABFT_ACTION_RECOMPUTED &&
                         rep.faults[0].row == 1,
                     "case %d %s: corrected %lld recomputed %lld uncorrectable %lld spread %d, "
                     "row %lld", c, sp ? "fp32" : "fp64", (long long)rep.corrected,
                     (long long)rep.recomputed, (long long)rep.uncorrectable, (int)rep.spread,
                     (long long)(rep.nfaults ? rep.faults[0].row : -1));
            TU_CHECK(sp ? memcmp(As, Cs, sizeof As) == 0 : memcmp(Ad, Cd, sizeof Ad) == 0,
                     "case %d %s: factors differ from the clean ones", c, sp ? "fp32" : "fp64");
        }
    }
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 0), ABFT_STATUS_SUCCESS);
}

/* An error of U whose column the ratio cannot single out, with an L candidate that fits as
 * loosely: 2 x 3, U(1, 2) = 500.5 - 0.5·1000 = 0.5 flipped in a low bit (d_w/d_e = 3, but
 * columns 2 and 1 both within the bounds), and row 0 of U·V, [1001, 3001], with almost the
 * same ratio. Both explanations fit: nothing is corrected (the L candidate was once
 * "corrected" into L(1, 0), and the re-check passed); with the recovery copy row 1 is
 * recomputed. */
static void test_ambiguous_u(abft_handle_t h) {
    static const double M[6] = {1, 0.5, 0, 1, 1000, 500.5}; /* 2 x 3, column-major */
    for (int rec = 0; rec < 2; ++rec) {
        TU_CHECK_STATUS(abft_set_lu_recovery(h, rec), ABFT_STATUS_SUCCESS);
        for (int sp = 0; sp < 2; ++sp) {
            for (int b = 0; b < 3; ++b) {
                double Ad[6];
                float As[6];
                int64_t ip[2], info;
                abft_report_t rep;
                for (int i = 0; i < 6; ++i) Ad[i] = M[i];
                for (int i = 0; i < 6; ++i) As[i] = (float)M[i];
                /* bits 14-16 (fp64), 12-14 (fp32): above the bound, below an unambiguous
                 * ratio */
                tu_flip_t f = {ABFT_SITE_AFTER_LU, -1, 1, 2, (sp ? 12 : 14) + b, 0, 0, 0};
                abft_set_hook(h, tu_flip_hook, &f);
                abft_status_t st = sp ? abft_sgetrf(h, 2, 3, As, 2, ip, &info, &rep)
                                      : abft_dgetrf(h, 2, 3, Ad, 2, ip, &info, &rep);
                abft_set_hook(h, NULL, NULL);
                double l10 = sp ? As[1] : Ad[1], u12 = sp ? As[5] : Ad[5];
                TU_CHECK(st == ABFT_STATUS_SUCCESS && f.fired && rep.detected == 1 &&
                             rep.corrected == 0,
                         "%s bit %d copy %d: %s, detected %lld, corrected %lld (%s (%lld,%lld))",
                         sp ? "fp32" : "fp64", f.bit, rec, abft_status_name(st),
                         (long long)rep.detected, (long long)rep.corrected,
                         rep.nfaults && rep.faults[0].factor == ABFT_FACTOR_L ? "L" : "U",
                         (long long)(rep.nfaults ? rep.faults[0].row : -1),
                         (long long)(rep.nfaults ? rep.faults[0].col : -1));
                if (rec) {
                    TU_CHECK(rep.recomputed == 1 && rep.uncorrectable == 0 &&
                                 rep.nfaults == 1 && rep.faults[0].row == 1,
                             "%s bit %d: recomputed %lld uncorrectable %lld", sp ? "fp32" : "fp64",
                             f.bit, (long long)rep.recomputed, (long long)rep.uncorrectable);
                    TU_CHECK(l10 == 0.5 && u12 == 0.5, "%s bit %d: L(1,0) %.17g U(1,2) %.17g",
                             sp ? "fp32" : "fp64", f.bit, l10, u12);
                } else {
                    TU_CHECK(rep.uncorrectable == 1 && rep.spread == 0,
                             "%s bit %d: uncorrectable %lld spread %d", sp ? "fp32" : "fp64",
                             f.bit, (long long)rep.uncorrectable, (int)rep.spread);
                    TU_CHECK(l10 == 0.5 && u12 == f.after, "%s bit %d: factors changed: L(1,0) "
                             "%.17g U(1,2) %.17g", sp ? "fp32" : "fp64", f.bit, l10, u12);
                }
            }
        }
    }
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 0), ABFT_STATUS_SUCCESS);
}

/* ---- singular, non-finite, arguments --------------------------------------------------------- */

static void test_singular(abft_handle_t h, tu_rng_t *r) {
    int64_t n = 40, ip[40], rp[40], info = -1, rinfo = -1;
    double *A = tu_alloc_d(n * n), *R = tu_alloc_d(n * n);
    for (int zc = 0; zc < 3; ++zc) {
        make(r, K_UNIFORM, n, n, A, n);
        int64_t col = zc == 0 ? 0 : zc == 1 ? 17 : n - 1;
        for (int64_t i = 0; i < n; ++i) A[i + col * n] = 0.0;
        memcpy(R, A, (size_t)(n * n) * sizeof(double));
        ref_lu(n, n, R, n, rp, &rinfo);
        abft_report_t rep;
        TU_CHECK_STATUS(abft_dgetrf(h, n, n, A, n, ip, &info, &rep), ABFT_STATUS_SINGULAR);
        TU_CHECK(info == rinfo && info == col + 1, "info %lld, LAPACK %lld, zero column %lld",
                 (long long)info, (long long)rinfo, (long long)col);
        TU_CHECK(rep.detected == 0, "singular: false positive");
        TU_CHECK(memcmp(A, R, (size_t)(n * n) * sizeof(double)) == 0, "singular: factors differ");
    }
    /* a fault in the factors of a singular matrix is still corrected (with the recovery
     * copy, which confirms the location) */
    make(r, K_UNIFORM, n, n, A, n);
    for (int64_t i = 0; i < n; ++i) A[i + 5 * n] = 0.0;
    tu_flip_t f = {ABFT_SITE_AFTER_LU, -1, 3, 30, 55, 0, 0, 0};
    abft_report_t rep;
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 1), ABFT_STATUS_SUCCESS);
    abft_set_hook(h, tu_flip_hook, &f);
    TU_CHECK_STATUS(abft_dgetrf(h, n, n, A, n, ip, &info, &rep), ABFT_STATUS_SINGULAR);
    abft_set_hook(h, NULL, NULL);
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 0), ABFT_STATUS_SUCCESS);
    TU_CHECK(rep.corrected == 1 && rep.faults[0].factor == ABFT_FACTOR_U,
             "singular + U fault: corrected %lld", (long long)rep.corrected);
    /* The zero pivot itself flipped (U(3, 3): 0 -> 2, bit 62) and corrected back to 0: the
     * status is that of the returned factors, offline (the getrf's info 4) and in the split
     * form, whose verify returned SUCCESS for U(3, 3) = 0 before it took the info from the
     * corrected diagonal. 8 x 8 uniform (fixed seed 5), column 3 zero. */
    {
        const uint64_t seed = 5;
        const int64_t m = 8;
        double S[64], S0[64];
        tu_rng_t rr;
        tu_rng_init(&rr, seed);
        tu_fill_d(&rr, TU_UNIFORM, m, m, S0, m);
        for (int64_t i = 0; i < m; ++i) S0[i + 3 * m] = 0.0;
        TU_CHECK_STATUS(abft_set_lu_recovery(h, 1), ABFT_STATUS_SUCCESS);
        memcpy(S, S0, sizeof S);
        tu_flip_t fz = {ABFT_SITE_AFTER_LU, -1, 3, 3, 62, 0, 0, 0};
        abft_set_hook(h, tu_flip_hook, &fz);
        abft_status_t st = abft_dgetrf(h, m, m, S, m, ip, &info, &rep);
        abft_set_hook(h, NULL, NULL);
        TU_CHECK(st == ABFT_STATUS_SINGULAR && info == 4 && S[3 + 3 * m] == 0.0 &&
                     rep.corrected == 1,
                 "offline, zero pivot flipped and corrected (seed %llu): status %s info %lld "
                 "U(3,3) %g corrected %lld",
                 (unsigned long long)seed, abft_status_name(st), (long long)info, S[3 + 3 * m],
                 (long long)rep.corrected);
        abft_lu_plan_t plan = NULL;
        TU_CHECK_STATUS(abft_lu_plan_create(h, 'd', m, m, &plan), ABFT_STATUS_SUCCESS);
        memcpy(S, S0, sizeof S);
        TU_CHECK_STATUS(abft_dgetrf_encode(h, plan, S, m), ABFT_STATUS_SUCCESS);
        int ip32[8], im = (int)m, iinfo = 0;
        dgetrf_(&im, &im, S, &im, ip32, &iinfo);
        TU_CHECK(iinfo == 4 && S[3 + 3 * m] == 0.0, "LAPACK info %d", iinfo);
        S[3 + 3 * m] = tu_flip_d(S[3 + 3 * m], 62);
        st = abft_dgetrf_verify(h, plan, S, m, ip32, 32, &rep);
        TU_CHECK(st == ABFT_STATUS_SINGULAR && S[3 + 3 * m] == 0.0 && rep.corrected == 1,
                 "split, zero pivot flipped and corrected (seed %llu): status %s U(3,3) %g "
                 "corrected %lld",
                 (unsigned long long)seed, abft_status_name(st), S[3 + 3 * m],
                 (long long)rep.corrected);
        abft_lu_plan_destroy(plan);
        TU_CHECK_STATUS(abft_set_lu_recovery(h, 0), ABFT_STATUS_SUCCESS);
    }
    free(A);
    free(R);
}

static void test_nonfinite(abft_handle_t h) {
    double A[9] = {1, 2, 3, 4, NAN, 6, 7, 8, 10}, B[9];
    memcpy(B, A, sizeof A);
    int64_t ip[3], info;
    abft_report_t rep;
    TU_CHECK_STATUS(abft_dgetrf(h, 3, 3, A, 3, ip, &info, &rep), ABFT_STATUS_NON_FINITE_INPUT);
    TU_CHECK(memcmp(A, B, sizeof A) == 0, "NaN input: A was modified");
    A[4] = INFINITY;
    TU_CHECK_STATUS(abft_dgetrf(h, 3, 3, A, 3, ip, &info, &rep), ABFT_STATUS_NON_FINITE_INPUT);
}

static void test_args(abft_handle_t h) {
    double A[16] = {4, 1, 2, 3, 1, 5, 1, 2, 2, 1, 6, 1, 3, 2, 1, 7};
    int64_t ip[4], info;
    abft_report_t rep;
    TU_CHECK_STATUS(abft_dgetrf(NULL, 4, 4, A, 4, ip, &info, &rep), ABFT_STATUS_NOT_INITIALIZED);
    TU_CHECK_STATUS(abft_dgetrf(h, -1, 4, A, 4, ip, &info, &rep), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_dgetrf(h, 4, -1, A, 4, ip, &info, &rep), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_dgetrf(h, 4, 4, A, 3, ip, &info, &rep), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_dgetrf(h, 4, 4, NULL, 4, ip, &info, &rep), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_dgetrf(h, 4, 4, A, 4, NULL, &info, &rep), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_dgetrf(h, 0, 4, A, 1, NULL, &info, &rep), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_dgetrf(h, 0, 0, NULL, 1, NULL, NULL, NULL), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_dgetrf(h, 4, 4, A, 4, ip, NULL, NULL), ABFT_STATUS_SUCCESS);
    abft_lu_plan_t plan = NULL;
    TU_CHECK_STATUS(abft_lu_plan_create(h, 'z', 4, 4, &plan), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_lu_plan_create(h, 'd', -1, 4, &plan), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_lu_plan_create(NULL, 'd', 4, 4, &plan), ABFT_STATUS_NOT_INITIALIZED);
    TU_CHECK_STATUS(abft_lu_plan_create(h, 'd', 4, 4, NULL), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_lu_plan_create(h, 'd', 4, 4, &plan), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_dgetrf_verify(h, plan, A, 4, ip, 64, &rep), ABFT_STATUS_INVALID_VALUE);
    float Af[16] = {0};
    TU_CHECK_STATUS(abft_sgetrf_encode(h, plan, Af, 4), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_dgetrf_encode(h, plan, A, 2), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_dgetrf_encode(h, plan, A, 4), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_dgetrf_verify(h, plan, A, 4, ip, 16, &rep), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_dgetrf_verify(h, plan, A, 4, NULL, 64, &rep), ABFT_STATUS_INVALID_VALUE);
    int64_t bad[4] = {0, 2, 3, 4}; /* pivot 0 is out of range */
    TU_CHECK_STATUS(abft_dgetrf_verify(h, plan, A, 4, bad, 64, &rep), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_lu_plan_destroy(plan), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_lu_plan_destroy(NULL), ABFT_STATUS_SUCCESS);
}

/* Protected solve: clean solves (N and T) pass the checks and solve; bad arguments. (The
 * check covers the solve's arithmetic; the factors are verified by getrf.) */
static void test_getrs(abft_handle_t h, tu_rng_t *r) {
    int nbad_f = 0, ndet_f = 0;
    for (int t = 0; t < 20; ++t) {
        int64_t n = tu_int(r, 1, 120), nrhs = tu_int(r, 1, 4), ldb = n + 2;
        double *A = tu_alloc_d(n * n), *F = tu_alloc_d(n * n), *X = tu_alloc_d(ldb * nrhs),
               *B = tu_alloc_d(ldb * nrhs);
        tu_fill_d(r, TU_UNIFORM, n, n, A, n);
        for (int64_t i = 0; i < n; ++i) A[i + i * n] += 2.0;
        memcpy(F, A, (size_t)(n * n) * sizeof(double));
        tu_fill_d(r, TU_UNIFORM, n, nrhs, X, ldb);
        int64_t *ip = (int64_t *)malloc((size_t)n * sizeof(int64_t)), info;
        abft_report_t rep;
        TU_CHECK_STATUS(abft_dgetrf(h, n, n, F, n, ip, &info, &rep), ABFT_STATUS_SUCCESS);
        for (int tr = 0; tr < 2; ++tr) {
            /* B = op(A)·X */
            for (int64_t q = 0; q < nrhs; ++q)
                for (int64_t i = 0; i < n; ++i) {
                    double s = 0;
                    for (int64_t j = 0; j < n; ++j)
                        s += (tr ? A[j + i * n] : A[i + j * n]) * X[j + q * ldb];
                    B[i + q * ldb] = s;
                }
            TU_CHECK_STATUS(abft_dgetrs(h, tr ? ABFT_OP_T : ABFT_OP_N, n, nrhs, F, n, ip, B, ldb, &rep),
                            ABFT_STATUS_SUCCESS);
            TU_CHECK(rep.detected == 0, "getrs n %lld trans %d: false positive, max_ratio %g",
                     (long long)n, tr, rep.max_ratio);
            double e = 0;
            for (int64_t q = 0; q < nrhs; ++q)
                for (int64_t i = 0; i < n; ++i) e = fmax(e, fabs(B[i + q * ldb] - X[i + q * ldb]));
            TU_CHECK(e < 1e-8, "getrs n %lld trans %d: error %g", (long long)n, tr, e);
        }
        TU_CHECK_STATUS(abft_dgetrs(h, 5, n, 1, F, n, ip, B, ldb, &rep), ABFT_STATUS_INVALID_VALUE);
        /* factors corrupted after getrf (one bit of the exponent or sign; every other one bit
         * 62): detected > 0 exactly when max_ratio > 1 (docs/api.md), and whatever is
         * detected is reported. getrs trusts its factors (their column checksums come from
         * them), so only a solve that overflows or turns non-finite is flagged. */
        for (int f = 0; f < 4; ++f) {
            double *G = tu_alloc_d(n * n);
            memcpy(G, F, (size_t)(n * n) * sizeof(double));
            int64_t fi = tu_int(r, 0, n - 1), fj = tu_int(r, 0, n - 1);
            int bit = f & 2 ? 62 : (int)tu_int(r, 52, 63), tr = f & 1;
            G[fi + fj * n] = tu_flip_d(G[fi + fj * n], bit);
            tu_fill_d(r, TU_UNIFORM, n, nrhs, B, ldb);
            TU_CHECK_STATUS(abft_dgetrs(h, tr ? ABFT_OP_T : ABFT_OP_N, n, nrhs, G, n, ip, B, ldb,
                                        &rep), ABFT_STATUS_SUCCESS);
            ++nbad_f;
            ndet_f += rep.detected > 0;
            TU_CHECK(rep.detected > 0 ? rep.max_ratio > 1.0 && rep.uncorrectable == rep.detected
                                      : rep.max_ratio <= 1.0,
                     "getrs n %lld trans %d, factor (%lld,%lld) bit %d: detected %lld "
                     "uncorrectable %lld max_ratio %g", (long long)n, tr, (long long)fi,
                     (long long)fj, bit, (long long)rep.detected, (long long)rep.uncorrectable,
                     rep.max_ratio);
            free(G);
        }
        free(A);
        free(F);
        free(X);
        free(B);
        free(ip);
    }
    printf("getrs with a factor bit flipped: %d solves, detected %d\n", nbad_f, ndet_f);
}

int main(void) {
    tu_rng_t r;
    tu_rng_init(&r, tu_seed(NAME));
    abft_handle_t h;
    TU_CHECK_STATUS(abft_create(&h, ABFT_BACKEND_CPU), ABFT_STATUS_SUCCESS);
    test_args(h);
    test_nonfinite(h);
    test_clean(h, &r);
    test_factor_faults(h, &r, 1);
    test_factor_faults(h, &r, 0);
    test_huge_fault(h, &r);
    test_checksum_faults(h, &r, 46, 40, 20);
    test_checksum_ratio(h, &r, 0, 256);
    test_checksum_ratio(h, &r, 1, 256);
    test_checksum_and_data(h);
    test_cancelling_multiplier(h, &r);
    test_spread(h, &r);
    test_recovery(h, &r);
    test_recovery_below(h);
    test_ambiguous_u(h);
    test_singular(h, &r);
    test_getrs(h, &r);
    abft_destroy(h);
    return tu_finish(NAME);
}

/* Online protected LU on the CPU backend: same pivots and factors as LAPACK without
 * faults (n not a multiple of nb, tall, wide, fp32), faults between panels corrected
 * before they spread (and only detected when the trailing checks are off), faults in the
 * carried checksums, in L, singular matrices, argument errors. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "abft_lu_kernels.h"
#include "testutil.h"

void dgetrf_(const int *m, const int *n, double *A, const int *lda, int *ipiv, int *info);
void sgetrf_(const int *m, const int *n, float *A, const int *lda, int *ipiv, int *info);

static const char *NAME = "test_getrf_online";

/* look-ahead option of every run (the tests run with 0, the CPU's default: off, and 1) */
static int64_t g_la = 0;

static void test_clean(abft_handle_t h, tu_rng_t *r) {
    const int64_t shapes[][3] = {{1, 1, 0},    {5, 5, 2},    {63, 63, 0},  {64, 64, 0},
                                 {65, 65, 0},  {150, 150, 0}, {257, 257, 0}, {200, 120, 0},
                                 {120, 200, 0}, {100, 100, 7}, {97, 97, 16}, {300, 300, 32}};
    int bitwise = 0, runs = 0, npiv_diff = 0, nbe = 0;
    double worst_be = 0.0, worst_diff = 0.0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        for (int kind = 0; kind < 4; ++kind) {
            int64_t m = shapes[s][0], n = shapes[s][1], lda = m + (kind == 1 ? 5 : 0);
            int64_t k = m < n ? m : n;
            abft_lu_options_t opt = {shapes[s][2], kind == 3 ? 2 : 1, kind == 2 ? 8 : 0, g_la};
            double *A = tu_alloc_d(lda * n), *R = tu_alloc_d(lda * n), *A0 = tu_alloc_d(lda * n);
            tu_fill_d(r, (tu_kind_t)kind, m, n, A, lda);
            memcpy(R, A, (size_t)(lda * n) * sizeof(double));
            memcpy(A0, A, (size_t)(lda * n) * sizeof(double));
            int *rp = (int *)malloc((size_t)k * sizeof(int));
            int im = (int)m, in = (int)n, il = (int)lda, rinfo = 0;
            dgetrf_(&im, &in, R, &il, rp, &rinfo);
            int64_t *ip = (int64_t *)malloc((size_t)k * sizeof(int64_t)), info = -1;
            abft_report_t rep;
            abft_status_t st = abft_dgetrf_online(h, m, n, A, lda, ip, &opt, &info, &rep);
            TU_CHECK(st == (rinfo > 0 ? ABFT_STATUS_SINGULAR : ABFT_STATUS_SUCCESS) && info == rinfo,
                     "%lldx%lld nb %lld: %s info %lld (LAPACK %d)", (long long)m, (long long)n,
                     (long long)opt.nb, abft_status_name(st), (long long)info, rinfo);
            TU_CHECK(rep.detected == 0 && rep.max_ratio < 1.0,
                     "false positive %lldx%lld kind %d nb %lld: detected %lld max_ratio %g",
                     (long long)m, (long long)n, kind, (long long)opt.nb, (long long)rep.detected,
                     rep.max_ratio);
            /* With LAPACK's blocking (nb 64 and no recursion below it) the operations are
             * the reference LAPACK algorithm's, so the pivots must be LAPACK's. The factors
             * are not bitwise LAPACK's where the LAPACK linked here is another
             * implementation (OpenBLAS's dgetrf orders its updates differently), and no
             * fixed relative tolerance on their difference is a derived bound: it was
             * exceeded on cancelling data, 1.03e-12 at 120 x 200 with panel_nb 8 (seed
             * 12478675339584) and 1.19e-12 at 120 x 200 with LAPACK's blocking (seed
             * 280467455035160). What holds for every blocking is backward stability,
             * |P·A - L·U| <= 4k·u·|L||U|, checked on every nonsingular run; how far the
             * factors are from LAPACK's is printed, not asserted. */
            int same_piv = 1;
            for (int64_t i = 0; i < k; ++i) same_piv &= ip[i] == rp[i];
            const int lapack_blocking = (opt.nb == 0 || opt.nb == 64) && opt.panel_nb == 0;
            TU_CHECK(same_piv || !lapack_blocking, "%lldx%lld kind %d: pivots differ from LAPACK",
                     (long long)m, (long long)n, kind);
            if (lapack_blocking && same_piv) worst_diff = fmax(worst_diff, tu_rel_diff(m, n, A, R, lda));
            if (info == 0) {
                double be = tu_lu_backward(m, n, A0, A, lda, ip, 0x1p-53);
                worst_be = fmax(worst_be, be);
                ++nbe;
                TU_CHECK(be <= 4.0, "%lldx%lld kind %d nb %lld panel_nb %lld: backward error %g "
                         "of k·u·|L||U|", (long long)m, (long long)n, kind, (long long)opt.nb,
                         (long long)opt.panel_nb, be);
            }
            npiv_diff += !same_piv;
            TU_CHECK(rep.checked >= m, "checked %lld", (long long)rep.checked);
            bitwise += memcmp(A, R, (size_t)(lda * n) * sizeof(double)) == 0;
            ++runs;
            free(A);
            free(R);
            free(A0);
            free(rp);
            free(ip);
        }
    }
    /* fp32 */
    for (int t = 0; t < 20; ++t) {
        int64_t n = tu_int(r, 1, 200), m = n, k = n;
        abft_lu_options_t opt = {tu_int(r, 0, 40), 1, 0, g_la};
        float *A = tu_alloc_s(n * n), *R = tu_alloc_s(n * n), *A0s = tu_alloc_s(n * n);
        tu_fill_s(r, TU_UNIFORM, n, n, A, n);
        memcpy(R, A, (size_t)(n * n) * sizeof(float));
        memcpy(A0s, A, (size_t)(n * n) * sizeof(float));
        int *rp = (int *)malloc((size_t)k * sizeof(int));
        int in = (int)n, rinfo = 0;
        sgetrf_(&in, &in, R, &in, rp, &rinfo);
        int64_t *ip = (int64_t *)malloc((size_t)k * sizeof(int64_t)), info;
        abft_report_t rep;
        TU_CHECK_STATUS(abft_sgetrf_online(h, m, n, A, n, ip, &opt, &info, &rep), ABFT_STATUS_SUCCESS);
        TU_CHECK(rep.detected == 0, "fp32 false positive n %lld nb %lld max_ratio %g", (long long)n,
                 (long long)opt.nb, rep.max_ratio);
        /* Pivots as sgetrf's; except that the LAPACK here may be OpenBLAS, whose own sgetrf
         * rounds differently from the reference algorithm the online LU follows, so a near
         * tie can go the other way even with nb 64 (seed 15407843035865: n 167). Then the
         * factors must be a backward-stable LU of P·A with their own pivots. */
        int same = 1;
        for (int64_t i = 0; i < k; ++i) same &= ip[i] == rp[i];
        if (!same) {
            double *A0d = tu_alloc_d(n * n), *Fd = tu_alloc_d(n * n);
            for (int64_t t = 0; t < n * n; ++t) A0d[t] = (double)A0s[t], Fd[t] = (double)A[t];
            double be = tu_lu_backward(n, n, A0d, Fd, n, ip, 0x1p-24);
            TU_CHECK(be <= 4.0, "fp32 n %lld nb %lld: pivots differ from sgetrf's and the "
                     "backward error is %g of k·u·|L||U|", (long long)n, (long long)opt.nb, be);
            free(A0d);
            free(Fd);
        }
        npiv_diff += !same;
        free(A);
        free(R);
        free(A0s);
        free(rp);
        free(ip);
    }
    printf("clean: %d fp64 + 20 fp32 factorizations, %d bitwise equal to LAPACK, %d with other "
           "valid pivots (a near tie); %d backward errors checked, worst %.3g "
           "of k·u·|L||U|; with LAPACK's blocking and pivots the factors differ from LAPACK's by "
           "at most %.3g (relative)\n", runs, bitwise, npiv_diff, nbe, worst_be, worst_diff);
}

/* A flip in the trailing matrix between panels: corrected online; with the trailing checks
 * off the final check detects what spread. */
static int g_copy = 1; /* the handle keeps a recovery copy */

static void test_between_panels(abft_handle_t h, tu_rng_t *r) {
    int corrected = 0, detected_off = 0, total = 0, next_panel = 0;
    for (int t = 0; t < 60; ++t) {
        int64_t nb = 16, n = tu_int(r, 40, 130), lda = n;
        int64_t npanels = (n + nb - 1) / nb;
        int which = (int)tu_int(r, 0, npanels - 2);
        int64_t K1 = (which + 1) * nb;
        double *A0 = tu_alloc_d(n * n), *A = tu_alloc_d(n * n), *C = tu_alloc_d(n * n);
        tu_fill_d(r, TU_UNIFORM, n, n, A0, n);
        memcpy(C, A0, (size_t)(n * n) * sizeof(double));
        int64_t *ip = (int64_t *)malloc((size_t)n * sizeof(int64_t));
        int64_t *cp = (int64_t *)malloc((size_t)n * sizeof(int64_t)), info;
        abft_report_t rep;
        abft_lu_options_t on = {nb, 1, 0, g_la}, off = {nb, 1000, 0, g_la};
        TU_CHECK_STATUS(abft_dgetrf_online(h, n, n, C, n, cp, &on, &info, &rep), ABFT_STATUS_SUCCESS);
        tu_flip_t f = {ABFT_SITE_LU_PANEL, which, tu_int(r, K1, n - 1), tu_int(r, K1, n - 1),
                    (int)tu_int(r, 50, 61), 0, 0, 0};
        for (int mode = 0; mode < 2; ++mode) {
            memcpy(A, A0, (size_t)(n * n) * sizeof(double));
            f.fired = 0;
            abft_set_hook(h, tu_flip_hook, &f);
            abft_status_t st = abft_dgetrf_online(h, n, n, A, lda, ip, mode == 0 ? &on : &off,
                                                  &info, &rep);
            abft_set_hook(h, NULL, NULL);
            TU_CHECK(st == ABFT_STATUS_SUCCESS && f.fired, "status %s fired %d",
                     abft_status_name(st), f.fired);
            if (mode == 0 && !g_copy) {
                /* without the recovery copy nothing confirms a location: reported */
                ++total;
                TU_CHECK(rep.detected > 0 && rep.corrected == 0 && rep.uncorrectable > 0,
                         "no copy: flip (%lld,%lld) bit %d: detected %lld corrected %lld "
                         "uncorrectable %lld", (long long)f.i, (long long)f.j, f.bit,
                         (long long)rep.detected, (long long)rep.corrected,
                         (long long)rep.uncorrectable);
            } else if (mode == 0) {
                ++total;
                TU_CHECK(rep.corrected == 1 && rep.uncorrectable == 0 && rep.spread == 0,
                         "online: flip (%lld,%lld) after panel %d bit %d %g -> %g: corrected %lld "
                         "uncorrectable %lld spread %d", (long long)f.i, (long long)f.j, which,
                         f.bit, f.before, f.after, (long long)rep.corrected,
                         (long long)rep.uncorrectable, rep.spread);
                if (rep.corrected == 1) {
                    ++corrected;
                    next_panel += f.j < K1 + nb; /* with look-ahead: restored, factored again */
                    TU_CHECK(rep.faults[0].row == f.i && rep.faults[0].col == f.j,
                             "located (%lld,%lld) flipped (%lld,%lld)", (long long)rep.faults[0].row,
                             (long long)rep.faults[0].col, (long long)f.i, (long long)f.j);
                    TU_CHECK(memcmp(ip, cp, (size_t)n * sizeof(int64_t)) == 0,
                             "pivots after correction differ from the clean run");
                    double e = tu_rel_diff(n, n, A, C, n);
                    TU_CHECK(e < 1e-10, "corrected factors differ from clean by %g", e);
                }
            } else {
                /* no trailing checks: the fault spreads, the final check must see it */
                TU_CHECK(rep.detected > 0, "checks off: flip (%lld,%lld) bit %d %g -> %g undetected",
                         (long long)f.i, (long long)f.j, f.bit, f.before, f.after);
                TU_CHECK(rep.spread == 1 || rep.corrected > 0 || rep.recomputed > 0 ||
                             (!g_copy && rep.uncorrectable > 0),
                         "checks off: detected but neither spread, corrected nor reported");
                if (rep.spread) {
                    TU_CHECK(rep.uncorrectable > 0, "spread without uncorrectable rows");
                }
                detected_off += rep.detected > 0;
            }
        }
        free(A0);
        free(A);
        free(C);
        free(ip);
        free(cp);
    }
    printf("between panels (%s): online corrected %d/%d (%d in the next panel); checks off: "
           "detected %d/%d\n", g_copy ? "recovery copy" : "no copy", corrected, total,
           next_panel, detected_off, total);
    if (g_copy) TU_CHECK(next_panel >= 5, "only %d flips in the next panel's columns", next_panel);
}

/* A flip in the carried checksum columns: the data is untouched. */
static void test_checksum(abft_handle_t h, tu_rng_t *r) {
    int ncs = 0;
    for (int t = 0; t < 30; ++t) {
        int64_t nb = 16, n = tu_int(r, 40, 100);
        int which = (int)tu_int(r, 1, (n + nb - 1) / nb - 1);
        double *A = tu_alloc_d(n * n), *C = tu_alloc_d(n * n);
        tu_fill_d(r, TU_UNIFORM, n, n, A, n);
        memcpy(C, A, (size_t)(n * n) * sizeof(double));
        int64_t *ip = (int64_t *)malloc((size_t)n * sizeof(int64_t)), info;
        abft_report_t rep;
        abft_lu_options_t opt = {nb, 1, 0, g_la};
        TU_CHECK_STATUS(abft_dgetrf_online(h, n, n, C, n, ip, &opt, &info, &rep), ABFT_STATUS_SUCCESS);
        tu_flip_t f = {ABFT_SITE_CHECKSUM, which, tu_int(r, which * nb, n - 1), tu_int(r, 0, 1),
                    (int)tu_int(r, 50, 61), 0, 0, 0};
        abft_set_hook(h, tu_flip_hook, &f);
        TU_CHECK_STATUS(abft_dgetrf_online(h, n, n, A, n, ip, &opt, &info, &rep), ABFT_STATUS_SUCCESS);
        abft_set_hook(h, NULL, NULL);
        TU_CHECK(f.fired, "hook did not fire");
        TU_CHECK(memcmp(A, C, (size_t)(n * n) * sizeof(double)) == 0,
                 "a checksum flip changed the factors");
        TU_CHECK(rep.corrected == 0 && rep.uncorrectable == 0,
                 "checksum flip (%lld,%lld): corrected %lld uncorrectable %lld", (long long)f.i,
                 (long long)f.j, (long long)rep.corrected, (long long)rep.uncorrectable);
        ncs += rep.checksum_faults == 1;
        free(A);
        free(C);
        free(ip);
    }
    printf("carried checksum faults recognized: %d/30\n", ncs);
    TU_CHECK(ncs >= 20, "only %d of 30 checksum flips recognized", ncs);
}

/* detected > 0 exactly when max_ratio > 1 (docs/api.md: an entry is flagged when its ratio
 * exceeds 1) for one bit (any of the 64) flipped in a checksum: the encoded X = A·V (which
 * 0, seen by the final check only) or the carried columns W after a panel (which >= 1),
 * fp64 and fp32. The factors come back as the clean call's and nothing is corrected. */
static void test_checksum_ratio(abft_handle_t h, tu_rng_t *r, int fp32, int ntrials) {
    int ndet = 0, nbad = 0, nx = 0;
    for (int t = 0; t < ntrials; ++t) {
        int64_t nb = 16, n = tu_int(r, 20, 90), npan = (n + nb - 1) / nb;
        int which = t % 2 == 0 ? 0 : (int)tu_int(r, 1, npan - 1);
        nx += which == 0;
        double *A = tu_alloc_d(n * n), *C = tu_alloc_d(n * n);
        float *As = tu_alloc_s(n * n), *Cs = tu_alloc_s(n * n);
        tu_fill_d(r, (tu_kind_t)tu_int(r, 0, 3), n, n, A, n);
        for (int64_t i = 0; i < n * n; ++i) As[i] = Cs[i] = (float)A[i];
        memcpy(C, A, (size_t)(n * n) * sizeof(double));
        int64_t *ip = (int64_t *)malloc((size_t)n * sizeof(int64_t)), info;
        abft_report_t rep;
        abft_lu_options_t opt = {nb, 1, 0, g_la};
        TU_CHECK_STATUS(fp32 ? abft_sgetrf_online(h, n, n, Cs, n, ip, &opt, &info, &rep)
                             : abft_dgetrf_online(h, n, n, C, n, ip, &opt, &info, &rep),
                        ABFT_STATUS_SUCCESS);
        tu_flip_t f = {ABFT_SITE_CHECKSUM, which,
                       which == 0 ? tu_int(r, 0, n - 1) : tu_int(r, which * nb, n - 1),
                       tu_int(r, 0, 1), (int)tu_int(r, 0, 63), 0, 0, 0};
        abft_set_hook(h, tu_flip_hook, &f);
        TU_CHECK_STATUS(fp32 ? abft_sgetrf_online(h, n, n, As, n, ip, &opt, &info, &rep)
                             : abft_dgetrf_online(h, n, n, A, n, ip, &opt, &info, &rep),
                        ABFT_STATUS_SUCCESS);
        abft_set_hook(h, NULL, NULL);
        const char *pn = fp32 ? "sgetrf_online" : "dgetrf_online";
        TU_CHECK(f.fired, "hook did not fire");
        int same = fp32 ? memcmp(As, Cs, (size_t)(n * n) * sizeof(float)) == 0
                        : memcmp(A, C, (size_t)(n * n) * sizeof(double)) == 0;
        TU_CHECK(same && rep.corrected == 0 && rep.recomputed == 0,
                 "%s n %lld: checksum flip (which %d, %lld,%lld, bit %d) changed the factors "
                 "(corrected %lld recomputed %lld)", pn, (long long)n, which, (long long)f.i,
                 (long long)f.j, f.bit, (long long)rep.corrected, (long long)rep.recomputed);
        if (rep.detected > 0) {
            ++ndet;
            TU_CHECK(rep.checksum_faults + rep.uncorrectable >= 1 && rep.nfaults >= 1,
                     "%s: detected %lld but reported nothing", pn, (long long)rep.detected);
        }
        int agree = rep.detected > 0 ? rep.max_ratio > 1.0 : rep.max_ratio <= 1.0;
        nbad += !agree;
        TU_CHECK(agree, "%s n %lld: checksum flip (which %d, %lld,%lld, bit %d %g -> %g): "
                 "detected %lld, max_ratio %g (checksum_faults %lld uncorrectable %lld)", pn,
                 (long long)n, which, (long long)f.i, (long long)f.j, f.bit, f.before, f.after,
                 (long long)rep.detected, rep.max_ratio, (long long)rep.checksum_faults,
                 (long long)rep.uncorrectable);
        free(A);
        free(C);
        free(As);
        free(Cs);
        free(ip);
    }
    printf("checksum flips (%s, bits 0..63): %d trials (%d in X, %d in W), detected %d, "
           "detected and max_ratio disagree in %d\n", fp32 ? "fp32" : "fp64", ntrials, nx,
           ntrials - nx, ndet, nbad);
}

/* A flip in L between panels: L is not in the trailing matrix; the final check corrects. */
static void test_l_between_panels(abft_handle_t h, tu_rng_t *r) {
    for (int t = 0; t < 20; ++t) {
        int64_t nb = 16, n = tu_int(r, 50, 100);
        int which = (int)tu_int(r, 0, (n + nb - 1) / nb - 2);
        int64_t K1 = (which + 1) * nb;
        double *A = tu_alloc_d(n * n), *C = tu_alloc_d(n * n);
        tu_fill_d(r, TU_UNIFORM, n, n, A, n);
        memcpy(C, A, (size_t)(n * n) * sizeof(double));
        int64_t *ip = (int64_t *)malloc((size_t)n * sizeof(int64_t)), info;
        abft_report_t rep;
        abft_lu_options_t opt = {nb, 1, 0, g_la};
        TU_CHECK_STATUS(abft_dgetrf_online(h, n, n, C, n, ip, &opt, &info, &rep), ABFT_STATUS_SUCCESS);
        int64_t j = tu_int(r, 0, K1 - 1), i = tu_int(r, K1, n - 1);
        tu_flip_t f = {ABFT_SITE_LU_PANEL, which, i, j, (int)tu_int(r, 50, 61), 0, 0, 0};
        abft_set_hook(h, tu_flip_hook, &f);
        TU_CHECK_STATUS(abft_dgetrf_online(h, n, n, A, n, ip, &opt, &info, &rep), ABFT_STATUS_SUCCESS);
        abft_set_hook(h, NULL, NULL);
        /* the later row swaps may move the element: compare with the clean factors */
        TU_CHECK(rep.corrected == 1 && rep.faults[0].factor == ABFT_FACTOR_L,
                 "L flip (%lld,%lld) after panel %d: corrected %lld factor %d", (long long)i,
                 (long long)j, which, (long long)rep.corrected,
                 rep.nfaults ? rep.faults[0].factor : -1);
        double e = tu_rel_diff(n, n, A, C, n);
        TU_CHECK(e < 1e-10, "L flip: corrected factors differ by %g", e);
        free(A);
        free(C);
        free(ip);
    }
}

/* A fault that makes the next panel singular: after panel 0 (an identity) the only nonzero
 * of column 16 below the diagonal is zeroed. With look-ahead that panel is factored with the
 * zero (info 17) before the check corrects the entry; the restore must bring the info back
 * with the panel, so the result is the clean, nonsingular factorization. */
static abft_status_t zero_hook(void *user, abft_hook_site_t site, int which, char prec, void *ptr,
                               int64_t rows, int64_t cols, int64_t ld) {
    (void)rows;
    (void)cols;
    int *fired = (int *)user;
    if (site != ABFT_SITE_LU_PANEL || which != 0 || prec != 'd' || *fired) return ABFT_STATUS_SUCCESS;
    ((double *)ptr)[20 + 16 * ld] = 0.0;
    *fired = 1;
    return ABFT_STATUS_SUCCESS;
}

static void test_singular_next_panel(abft_handle_t h, tu_rng_t *r) {
    const int64_t n = 48, nb = 16;
    double *A = tu_alloc_d(n * n), *C = tu_alloc_d(n * n);
    tu_fill_d(r, TU_UNIFORM, n, n, A, n);
    for (int64_t j = 0; j < nb; ++j)
        for (int64_t i = 0; i < n; ++i) A[i + j * n] = i == j ? 1.0 : 0.0;
    for (int64_t i = nb; i < n; ++i) A[i + nb * n] = i == 20 ? 0.75 : 0.0;
    memcpy(C, A, (size_t)(n * n) * sizeof(double));
    int64_t ip[48], cp[48], info = -1;
    abft_report_t rep;
    abft_lu_options_t opt = {nb, 1, 0, g_la};
    TU_CHECK_STATUS(abft_dgetrf_online(h, n, n, C, n, cp, &opt, &info, &rep), ABFT_STATUS_SUCCESS);
    int fired = 0;
    abft_set_hook(h, zero_hook, &fired);
    abft_status_t st = abft_dgetrf_online(h, n, n, A, n, ip, &opt, &info, &rep);
    abft_set_hook(h, NULL, NULL);
    TU_CHECK(fired && st == ABFT_STATUS_SUCCESS && info == 0 && rep.corrected == 1,
             "next panel made singular (look-ahead %lld): fired %d status %s info %lld "
             "corrected %lld", (long long)g_la, fired, abft_status_name(st), (long long)info,
             (long long)rep.corrected);
    TU_CHECK(memcmp(ip, cp, sizeof ip) == 0 && tu_rel_diff(n, n, A, C, n) < 1e-12,
             "next panel made singular: factors differ from the clean run");
    free(A);
    free(C);
}

/* A corrected fault must leave the info of the returned factors (LAPACK: the first exactly
 * zero U(i, i)). 8 x 8 uniform matrix (fixed seed 5) whose column 3 is zero (info 4); after
 * panel 0 (nb = 2) bit 62 of A(6, 3) is flipped (0 -> 2), so the panel of columns 2-3 has a
 * nonzero pivot and the backend's info is 0. A check after panel 0 corrects it in the
 * trailing matrix; with check_every 2 or 3 the first check comes later and the final check
 * corrects U(3, 3) back to 0: the call returned SUCCESS with info 0 for factors with
 * U(3, 3) = 0 before the info was taken again from the corrected diagonal. */
typedef struct zp_flip {
    int64_t r, c;
    int fired;
} zp_flip_t;
static abft_status_t zp_hook(void *user, abft_hook_site_t site, int which, char prec, void *ptr,
                             int64_t rows, int64_t cols, int64_t ld) {
    (void)rows;
    (void)cols;
    zp_flip_t *f = (zp_flip_t *)user;
    if (site != ABFT_SITE_LU_PANEL || which != 0 || prec != 'd' || f->fired)
        return ABFT_STATUS_SUCCESS;
    double *a = (double *)ptr + f->r + f->c * ld;
    *a = tu_flip_d(*a, 62);
    f->fired = 1;
    return ABFT_STATUS_SUCCESS;
}

static void test_corrected_zero_pivot(abft_handle_t h) {
    const int64_t n = 8, zc = 3;
    const uint64_t seed = 5;
    double A0[64], A[64];
    tu_rng_t rr;
    tu_rng_init(&rr, seed);
    for (int i = 0; i < 64; ++i) A0[i] = tu_range(&rr, -1, 1);
    for (int64_t i = 0; i < n; ++i) A0[i + zc * n] = 0.0;
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 1), ABFT_STATUS_SUCCESS);
    for (int64_t ce = 1; ce <= 3; ++ce)
        for (int64_t la = -1; la <= 1; la += 2) {
            abft_lu_options_t opt = {2, ce, 0, la};
            int64_t ip[8], info = -1;
            abft_report_t rep;
            memcpy(A, A0, sizeof A);
            zp_flip_t f = {6, zc, 0};
            abft_set_hook(h, zp_hook, &f);
            abft_status_t st = abft_dgetrf_online(h, n, n, A, n, ip, &opt, &info, &rep);
            abft_set_hook(h, NULL, NULL);
            int64_t z = 0;
            for (int64_t i = 0; i < n && z == 0; ++i)
                if (A[i + i * n] == 0.0) z = i + 1;
            TU_CHECK(f.fired && st == ABFT_STATUS_SINGULAR && info == 4 && z == 4 &&
                         rep.corrected >= 1 && rep.uncorrectable == 0,
                     "zero pivot restored by a correction (seed %llu, check_every %lld, "
                     "look-ahead %lld): status %s info %lld, first zero U(i,i) at %lld, "
                     "corrected %lld uncorrectable %lld",
                     (unsigned long long)seed, (long long)ce, (long long)la,
                     abft_status_name(st), (long long)info, (long long)z,
                     (long long)rep.corrected, (long long)rep.uncorrectable);
        }
}

/* ---- the LU ops the online driver uses, against plain references ------------------------ */

/* 1-based pivots + off for rows k1..k2-1 of an m-row matrix: a quarter each p = i, a repeat
 * of an earlier partner, any row (also above k1), a row >= i (as getrf makes them). */
static void random_pivots(tu_rng_t *r, int64_t m, int64_t k1, int64_t k2, int64_t off,
                          int64_t *ipiv) {
    for (int64_t i = k1; i < k2; ++i) {
        int64_t p, kind = tu_int(r, 0, 3);
        if (kind == 0) p = i;
        else if (kind == 1 && i > k1) p = ipiv[tu_int(r, k1, i - 1)] - 1 - off;
        else if (kind == 2) p = tu_int(r, 0, m - 1);
        else p = tu_int(r, i, m - 1);
        ipiv[i] = p + 1 + off;
    }
}

/* LAPACK's laswp, one column */
static void ref_swap_col(double *col, int64_t k1, int64_t k2, const int64_t *ipiv, int64_t off) {
    for (int64_t i = k1; i < k2; ++i) {
        int64_t p = ipiv[i] - 1 - off;
        double t = col[i];
        col[i] = col[p];
        col[p] = t;
    }
}

/* laswp with host and "device" pivots, skip range and X2, fp64 and fp32, m > n and m < n */
static void test_laswp_op(tu_rng_t *r) {
    abft_kctx_t cpu = {NULL, NULL, NULL, NULL, -1};
    int bad = 0, runs = 0;
    for (int t = 0; t < 300; ++t) {
        const int64_t m = tu_int(r, 1, 400), cols = tu_int(r, 1, 300), lda = m + tu_int(r, 0, 3);
        const int64_t k1 = tu_int(r, 0, m - 1), k2 = tu_int(r, k1, m < k1 + 300 ? m : k1 + 300);
        const int64_t off = tu_int(r, 0, 2) * 17, cols2 = tu_int(r, 0, 4);
        int64_t skip0 = 0, skip1 = 0;
        if (tu_int(r, 0, 1)) {
            skip0 = tu_int(r, 0, cols);
            skip1 = tu_int(r, skip0, cols + 2); /* may run past the last column */
        }
        const int dev = (int)tu_int(r, 0, 1), sp = (int)tu_int(r, 0, 1);
        int64_t *ipiv = (int64_t *)malloc((size_t)m * sizeof(int64_t));
        random_pivots(r, m, k1, k2, off, ipiv);
        double *R = tu_alloc_d(lda * cols), *X = tu_alloc_d(m * (cols2 + 1)), *RX = tu_alloc_d(m * (cols2 + 1));
        for (int64_t j = 0; j < cols; ++j)
            for (int64_t i = 0; i < lda; ++i) R[i + j * lda] = (double)(i + 1000 * j);
        for (int64_t q = 0; q < m * cols2; ++q) X[q] = RX[q] = -(double)q;
        void *A = sp ? (void *)tu_alloc_s(lda * cols) : (void *)tu_alloc_d(lda * cols);
        for (int64_t q = 0; q < lda * cols; ++q) {
            if (sp) ((float *)A)[q] = (float)R[q];
            else ((double *)A)[q] = R[q];
        }
        for (int64_t j = 0; j < cols; ++j)
            if (!(skip1 > skip0 && j >= skip0 && j < skip1)) ref_swap_col(R + j * lda, k1, k2, ipiv, off);
        for (int64_t j = 0; j < cols2; ++j) ref_swap_col(RX + j * m, k1, k2, ipiv, off);
        abft_lu_laswp_args_t a = {sp ? ABFT_PREC_S : ABFT_PREC_D, 0, cols, A, lda, k1, k2, ipiv,
                                  off, dev, skip0, skip1, cols2 > 0 ? X : NULL, cols2, m};
        TU_CHECK_STATUS(abft_cpu_lu_laswp(&cpu, &a), ABFT_STATUS_SUCCESS);
        int ok = 1;
        for (int64_t q = 0; q < lda * cols; ++q)
            ok &= (sp ? (double)((float *)A)[q] : ((double *)A)[q]) == R[q];
        for (int64_t q = 0; q < m * cols2; ++q) ok &= X[q] == RX[q];
        TU_CHECK(ok, "laswp %lldx%lld rows %lld..%lld off %lld skip %lld..%lld cols2 %lld %c dev %d",
                 (long long)m, (long long)cols, (long long)k1, (long long)k2, (long long)off,
                 (long long)skip0, (long long)skip1, (long long)cols2, sp ? 's' : 'd', dev);
        bad += !ok;
        ++runs;
        free(ipiv);
        free(R);
        free(X);
        free(RX);
        free(A);
    }
    printf("laswp op: %d/%d random pivot sets as LAPACK's laswp\n", runs - bad, runs);
}

/* getrf with ipiv_off and the info accumulated (dinfo): three panels, a zero column in the
 * second and third; the first zero pivot wins. Plus the axpy pair. */
static void test_getrf_axpy_ops(tu_rng_t *r) {
    abft_kctx_t cpu = {NULL, NULL, NULL, NULL, -1};
    const int64_t m = 90, w = 20, offs[3] = {0, 20, 40}, zero[3] = {-1, 7, 3};
    int64_t dinfo = 0;
    for (int q = 0; q < 3; ++q) {
        double *A = tu_alloc_d(m * w), *R = tu_alloc_d(m * w);
        tu_fill_d(r, TU_UNIFORM, m, w, A, m);
        if (zero[q] >= 0)
            for (int64_t i = 0; i < m; ++i) A[i + zero[q] * m] = 0.0;
        memcpy(R, A, (size_t)(m * w) * sizeof(double));
        int rp[20], im = (int)m, iw = (int)w, rinfo = 0;
        dgetrf_(&im, &iw, R, &im, rp, &rinfo);
        int64_t ipiv[20], hinfo = -7;
        abft_lu_getrf_args_t g = {ABFT_PREC_D, m, w, A, m, ipiv, &hinfo, NULL, offs[q], &dinfo};
        TU_CHECK_STATUS(abft_cpu_lu_getrf(&cpu, &g), ABFT_STATUS_SUCCESS);
        TU_CHECK(hinfo == -7, "getrf with dinfo wrote the host info");
        int same = 1;
        for (int64_t i = 0; i < w; ++i) same &= ipiv[i] == rp[i] + offs[q];
        TU_CHECK(same && memcmp(A, R, (size_t)(m * w) * sizeof(double)) == 0,
                 "getrf panel %d: pivots or factors differ from LAPACK's", q);
        TU_CHECK(rinfo == (zero[q] >= 0 ? zero[q] + 1 : 0), "LAPACK info %d", rinfo);
        free(A);
        free(R);
    }
    TU_CHECK(dinfo == 20 + 7 + 1, "accumulated info %lld, want 28", (long long)dinfo);

    double X[12], Y[12], X2[12], Y2[12], RY[12], RY2[12];
    for (int i = 0; i < 12; ++i) {
        X[i] = tu_range(r, -1, 1);
        X2[i] = tu_range(r, -1, 1);
        RY[i] = Y[i] = tu_range(r, -1, 1);
        RY2[i] = Y2[i] = tu_range(r, -1, 1);
    }
    for (int q = 0; q < 2; ++q)
        for (int i = 0; i < 5; ++i) {
            RY[i + 6 * q] += -1.0 * X[i + 6 * q];
            RY2[i + 6 * q] += 4.0 * X2[i + 6 * q];
        }
    abft_lu_axpy_args_t ax = {5, 2, -1.0, X, 6, Y, 6, 4.0, X2, 6, Y2, 6};
    TU_CHECK_STATUS(abft_cpu_lu_axpy(&cpu, &ax), ABFT_STATUS_SUCCESS);
    TU_CHECK(memcmp(Y, RY, sizeof Y) == 0 && memcmp(Y2, RY2, sizeof Y2) == 0, "axpy pair");
}

/* A flip of exponent bit 62 between panels makes an element huge (or Inf/NaN): its row's
 * bound |A22|·V overflows. The online check must still flag the row (ratio +Inf): compare
 * alone catches it now that the separate non-finite count is gone. */
static void test_overflow_between_panels(abft_handle_t h, tu_rng_t *r) {
    int seen = 0, nhuge = 0;
    for (int t = 0; t < 20; ++t) {
        int64_t nb = 16, n = tu_int(r, 40, 100);
        int which = (int)tu_int(r, 0, (n + nb - 1) / nb - 2);
        int64_t K1 = (which + 1) * nb;
        double *A = tu_alloc_d(n * n);
        tu_fill_d(r, TU_UNIFORM, n, n, A, n);
        int64_t *ip = (int64_t *)malloc((size_t)n * sizeof(int64_t)), info;
        abft_report_t rep;
        abft_lu_options_t opt = {nb, 1, 0, g_la};
        tu_flip_t f = {ABFT_SITE_LU_PANEL, which, tu_int(r, K1, n - 1), tu_int(r, K1, n - 1), 62,
                       0, 0, 0};
        abft_set_hook(h, tu_flip_hook, &f);
        abft_status_t st = abft_dgetrf_online(h, n, n, A, n, ip, &opt, &info, &rep);
        abft_set_hook(h, NULL, NULL);
        TU_CHECK(f.fired && (st == ABFT_STATUS_SUCCESS || st == ABFT_STATUS_SINGULAR),
                 "bit 62 at (%lld,%lld): fired %d status %s", (long long)f.i, (long long)f.j,
                 f.fired, abft_status_name(st));
        /* the term |a_ij|·(j + 1) of its row's bound overflows (|v| >= 2 has bit 62 set:
         * the flip makes it tiny instead; detected, finite ratio) */
        const int huge = !(fabs(f.after) * (double)(f.j + 1) <= DBL_MAX);
        TU_CHECK(rep.detected > 0 && rep.nfaults > 0 && rep.faults[0].row == f.i &&
                     (!huge || (rep.max_ratio == INFINITY && rep.faults[0].ratio == INFINITY)),
                 "bit 62 at (%lld,%lld) after panel %d, %g -> %g: detected %lld max_ratio %g "
                 "first fault row %lld", (long long)f.i, (long long)f.j, which, f.before, f.after,
                 (long long)rep.detected, rep.max_ratio,
                 (long long)(rep.nfaults ? rep.faults[0].row : -1));
        seen += huge && rep.max_ratio == INFINITY;
        nhuge += huge;
        free(A);
        free(ip);
    }
    printf("overflowed bounds between panels flagged online: %d/%d\n", seen, nhuge);
    TU_CHECK(nhuge >= 5, "only %d of 20 flips made an element huge", nhuge);
}

static void test_singular_args(abft_handle_t h, tu_rng_t *r) {
    int64_t n = 50, ip[50], info = -1;
    double *A = tu_alloc_d(n * n);
    tu_fill_d(r, TU_UNIFORM, n, n, A, n);
    for (int64_t i = 0; i < n; ++i) A[i + 20 * n] = 0.0;
    abft_report_t rep;
    abft_lu_options_t opt = {16, 1};
    TU_CHECK_STATUS(abft_dgetrf_online(h, n, n, A, n, ip, &opt, &info, &rep), ABFT_STATUS_SINGULAR);
    TU_CHECK(info == 21, "info %lld, want 21", (long long)info);
    TU_CHECK(rep.detected == 0, "singular: false positive (max_ratio %g)", rep.max_ratio);
    abft_lu_options_t bad = {-1, 1}, bad_la = {16, 1, 0, 2};
    TU_CHECK_STATUS(abft_dgetrf_online(h, n, n, A, n, ip, &bad, &info, &rep), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_dgetrf_online(h, n, n, A, n, ip, &bad_la, &info, &rep),
                    ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_dgetrf_online(NULL, n, n, A, n, ip, NULL, &info, &rep),
                    ABFT_STATUS_NOT_INITIALIZED);
    TU_CHECK_STATUS(abft_dgetrf_online(h, n, n, A, n - 1, ip, NULL, &info, &rep),
                    ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_dgetrf_online(h, n, n, A, n, NULL, NULL, &info, &rep),
                    ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_dgetrf_online(h, 0, 0, NULL, 1, NULL, NULL, NULL, NULL), ABFT_STATUS_SUCCESS);
    free(A);
}

int main(void) {
    tu_rng_t r;
    tu_rng_init(&r, tu_seed(NAME));
    abft_handle_t h;
    TU_CHECK_STATUS(abft_create(&h, ABFT_BACKEND_CPU), ABFT_STATUS_SUCCESS);
    /* corrections need the recovery copy to confirm them (docs/lu.md) */
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 1), ABFT_STATUS_SUCCESS);
    for (g_la = 0; g_la <= 1; ++g_la) {
        printf("-- look-ahead %s\n", g_la ? "on" : "default (off)");
        test_clean(h, &r);
        test_between_panels(h, &r);
        test_checksum(h, &r);
        test_checksum_ratio(h, &r, 0, 128);
        test_checksum_ratio(h, &r, 1, 128);
        test_l_between_panels(h, &r);
        test_overflow_between_panels(h, &r);
        test_singular_next_panel(h, &r);
    }
    test_corrected_zero_pivot(h);
    g_la = 0;
    TU_CHECK_STATUS(abft_set_lu_recovery(h, 0), ABFT_STATUS_SUCCESS);
    g_copy = 0;
    test_between_panels(h, &r);
    g_copy = 1;
    test_singular_args(h, &r);
    test_laswp_op(&r);
    test_getrf_axpy_ops(&r);
    abft_destroy(h);
    return tu_finish(NAME);
}

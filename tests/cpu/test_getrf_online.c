/* Online protected LU on the CPU backend: same pivots and factors as LAPACK without
 * faults (n not a multiple of nb, tall, wide, fp32), faults between panels corrected
 * before they spread (and only detected when the trailing checks are off), faults in the
 * carried checksums, in L, singular matrices, argument errors. */
#include <math.h>
#include <string.h>

#include "testutil.h"

void dgetrf_(const int *m, const int *n, double *A, const int *lda, int *ipiv, int *info);
void sgetrf_(const int *m, const int *n, float *A, const int *lda, int *ipiv, int *info);

static const char *NAME = "test_getrf_online";

static void test_clean(abft_handle_t h, tu_rng_t *r) {
    const int64_t shapes[][3] = {{1, 1, 0},    {5, 5, 2},    {63, 63, 0},  {64, 64, 0},
                                 {65, 65, 0},  {150, 150, 0}, {257, 257, 0}, {200, 120, 0},
                                 {120, 200, 0}, {100, 100, 7}, {97, 97, 16}, {300, 300, 32}};
    int bitwise = 0, runs = 0, npiv_diff = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        for (int kind = 0; kind < 4; ++kind) {
            int64_t m = shapes[s][0], n = shapes[s][1], lda = m + (kind == 1 ? 5 : 0);
            int64_t k = m < n ? m : n;
            abft_lu_options_t opt = {shapes[s][2], kind == 3 ? 2 : 1, kind == 2 ? 8 : 0};
            double *A = tu_alloc_d(lda * n), *R = tu_alloc_d(lda * n);
            tu_fill_d(r, (tu_kind_t)kind, m, n, A, lda);
            memcpy(R, A, (size_t)(lda * n) * sizeof(double));
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
            /* With LAPACK's blocking (nb 64, no recursion below it) the operations are
             * LAPACK's: same pivots. Another blocking rounds differently and may resolve a
             * near-tie of pivots the other way: then the factors are another valid LU
             * (the final check above passed the bound), not LAPACK's. */
            int same_piv = 1;
            for (int64_t i = 0; i < k; ++i) same_piv &= ip[i] == rp[i];
            int lapack_blocking = opt.nb == 0 || opt.nb == 64;
            TU_CHECK(same_piv || !lapack_blocking, "%lldx%lld kind %d: pivots differ from LAPACK",
                     (long long)m, (long long)n, kind);
            double e = tu_rel_diff(m, n, A, R, lda);
            TU_CHECK(!same_piv || e < 1e-12, "%lldx%lld kind %d: factors differ from LAPACK by %g",
                     (long long)m, (long long)n, kind, e);
            npiv_diff += !same_piv;
            TU_CHECK(rep.checked >= m, "checked %lld", (long long)rep.checked);
            bitwise += memcmp(A, R, (size_t)(lda * n) * sizeof(double)) == 0;
            ++runs;
            free(A);
            free(R);
            free(rp);
            free(ip);
        }
    }
    /* fp32 */
    for (int t = 0; t < 20; ++t) {
        int64_t n = tu_int(r, 1, 200), m = n, k = n;
        abft_lu_options_t opt = {tu_int(r, 0, 40), 1};
        float *A = tu_alloc_s(n * n), *R = tu_alloc_s(n * n);
        tu_fill_s(r, TU_UNIFORM, n, n, A, n);
        memcpy(R, A, (size_t)(n * n) * sizeof(float));
        int *rp = (int *)malloc((size_t)k * sizeof(int));
        int in = (int)n, rinfo = 0;
        sgetrf_(&in, &in, R, &in, rp, &rinfo);
        int64_t *ip = (int64_t *)malloc((size_t)k * sizeof(int64_t)), info;
        abft_report_t rep;
        TU_CHECK_STATUS(abft_sgetrf_online(h, m, n, A, n, ip, &opt, &info, &rep), ABFT_STATUS_SUCCESS);
        TU_CHECK(rep.detected == 0, "fp32 false positive n %lld nb %lld max_ratio %g", (long long)n,
                 (long long)opt.nb, rep.max_ratio);
        int same = 1;
        for (int64_t i = 0; i < k; ++i) same &= ip[i] == rp[i];
        TU_CHECK(same || (opt.nb != 0 && opt.nb != 64), "fp32 n %lld nb %lld: pivots differ",
                 (long long)n, (long long)opt.nb);
        npiv_diff += !same;
        free(A);
        free(R);
        free(rp);
        free(ip);
    }
    printf("clean: %d fp64 + 20 fp32 factorizations, %d bitwise equal to LAPACK, %d with other "
           "(valid) pivots under a non-LAPACK blocking\n", runs, bitwise, npiv_diff);
}

/* A flip in the trailing matrix between panels: corrected online; with the trailing checks
 * off the final check detects what spread. */
static void test_between_panels(abft_handle_t h, tu_rng_t *r) {
    int corrected = 0, detected_off = 0, total = 0;
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
        abft_lu_options_t on = {nb, 1}, off = {nb, 1000};
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
            if (mode == 0) {
                ++total;
                TU_CHECK(rep.corrected == 1 && rep.uncorrectable == 0 && rep.spread == 0,
                         "online: flip (%lld,%lld) after panel %d bit %d %g -> %g: corrected %lld "
                         "uncorrectable %lld spread %d", (long long)f.i, (long long)f.j, which,
                         f.bit, f.before, f.after, (long long)rep.corrected,
                         (long long)rep.uncorrectable, rep.spread);
                if (rep.corrected == 1) {
                    ++corrected;
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
                TU_CHECK(rep.spread == 1 || rep.corrected > 0,
                         "checks off: detected but neither spread nor corrected");
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
    printf("between panels: online corrected %d/%d; checks off: detected %d/%d\n", corrected,
           total, detected_off, total);
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
        abft_lu_options_t opt = {nb, 1};
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
        abft_lu_options_t opt = {nb, 1};
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
    abft_lu_options_t bad = {-1, 1};
    TU_CHECK_STATUS(abft_dgetrf_online(h, n, n, A, n, ip, &bad, &info, &rep), ABFT_STATUS_INVALID_VALUE);
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
    test_clean(h, &r);
    test_between_panels(h, &r);
    test_checksum(h, &r);
    test_l_between_panels(h, &r);
    test_singular_args(h, &r);
    abft_destroy(h);
    return tu_finish(NAME);
}

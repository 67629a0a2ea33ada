/* A program built against an installed abft (find_package or pkg-config), in plain C.
 *
 * It checks that the headers and the library agree on the version, then runs a protected
 * GEMM on the CPU backend, C = A·B (beta = 0, row checksums), while a hook corrupts one
 * element of C after the multiplication. The library must detect the fault, correct exactly
 * that element and return a C equal to a reference product within rounding.
 * Exit status 0 only when all of that holds. */
#include <abft/abft.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { M = 48, N = 40, K = 56, BAD_ROW = 7, BAD_COL = 11 };

typedef struct {
    int calls;    /* times the hook corrupted C */
    double good;  /* the value it replaced */
} hook_state_t;

/* Adds a large offset to C(BAD_ROW, BAD_COL) after the GEMM, before verification. */
static abft_status_t corrupt_c(void *user, abft_hook_site_t site, int which, char precision,
                               void *ptr, int64_t rows, int64_t cols, int64_t ld) {
    (void)which;
    hook_state_t *hs = (hook_state_t *)user;
    if (site != ABFT_SITE_AFTER_GEMM || precision != 'd' || rows <= BAD_ROW || cols <= BAD_COL)
        return ABFT_STATUS_SUCCESS;
    double *c = (double *)ptr + BAD_ROW + (int64_t)BAD_COL * ld;
    hs->good = *c;
    *c += 1000.0;
    hs->calls++;
    return ABFT_STATUS_SUCCESS;
}

static double lcg(uint64_t *s) { /* uniform in [-1, 1) */
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static void print_report(const abft_report_t *r) {
    fprintf(stderr,
            "report: checked %lld detected %lld corrected %lld uncorrectable %lld recomputed %lld "
            "checksum_faults %lld max_ratio %.3g nfaults %lld\n",
            (long long)r->checked, (long long)r->detected, (long long)r->corrected,
            (long long)r->uncorrectable, (long long)r->recomputed, (long long)r->checksum_faults,
            r->max_ratio, (long long)r->nfaults);
    for (int64_t f = 0; f < r->nfaults && f < ABFT_REPORT_MAX_FAULTS; ++f)
        fprintf(stderr, "  fault %lld: row %lld col %lld action %d\n", (long long)f,
                (long long)r->faults[f].row, (long long)r->faults[f].col, r->faults[f].action);
}

int main(void) {
    if (abft_version_number() != ABFT_VERSION_NUMBER ||
        strcmp(abft_version_string(), ABFT_VERSION_STRING) != 0) {
        fprintf(stderr, "version mismatch: header %s, library %s\n", ABFT_VERSION_STRING,
                abft_version_string());
        return 1;
    }

    static double A[M * K], B[K * N], C[M * N];
    uint64_t seed = 20260101;
    for (int i = 0; i < M * K; ++i) A[i] = lcg(&seed);
    for (int i = 0; i < K * N; ++i) B[i] = lcg(&seed);
    for (int i = 0; i < M * N; ++i) C[i] = NAN; /* beta = 0: C is never read */

    abft_handle_t h = NULL;
    abft_status_t st = abft_create(&h, ABFT_BACKEND_CPU);
    if (st != ABFT_STATUS_SUCCESS) {
        fprintf(stderr, "abft_create: %s\n", abft_status_name(st));
        return 1;
    }
    hook_state_t hs = {0, 0.0};
    if (abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW) != ABFT_STATUS_SUCCESS ||
        abft_set_hook(h, corrupt_c, &hs) != ABFT_STATUS_SUCCESS) {
        fprintf(stderr, "setting up the handle failed\n");
        abft_destroy(h);
        return 1;
    }
    abft_report_t rep;
    memset(&rep, 0xff, sizeof rep);
    st = abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, M, N, K, 1.0, A, M, B, K, 0.0, C, M, &rep);
    abft_destroy(h);

    int bad = 0;
    if (st != ABFT_STATUS_SUCCESS) {
        fprintf(stderr, "abft_dgemm: %s\n", abft_status_name(st));
        bad = 1;
    }
    if (hs.calls != 1) {
        fprintf(stderr, "the hook corrupted C %d times (expected once)\n", hs.calls);
        bad = 1;
    }
    if (rep.detected < 1 || rep.corrected != 1 || rep.uncorrectable != 0) {
        fprintf(stderr, "expected the corrupted element to be detected and corrected once\n");
        bad = 1;
    }

    /* Reference product and elementwise rounding bounds: both products are within
     * gamma_k·sum_l |a_il·b_lj| of the exact one. The corrected element may also carry the
     * rounding of its row's checksum residual (the sum over the row, the offset included)
     * when the correction is taken from it, so its bound covers that sum too. */
    double worst = 0.0;
    int shown = 0;
    for (int i = 0; i < M; ++i) {
        double rowmag = 1000.0;
        for (int j = 0; j < N; ++j)
            for (int l = 0; l < K; ++l) rowmag += fabs(A[i + l * M] * B[l + j * K]);
        for (int j = 0; j < N; ++j) {
            double s = 0.0, mag = 0.0;
            for (int l = 0; l < K; ++l) {
                s += A[i + l * M] * B[l + j * K];
                mag += fabs(A[i + l * M] * B[l + j * K]);
            }
            double err = fabs(C[i + j * M] - s), tol = 4.0 * (K + 2) * DBL_EPSILON * mag;
            if (i == BAD_ROW && j == BAD_COL) tol += 4.0 * (N + K + 2) * DBL_EPSILON * rowmag;
            if (!(err <= tol)) {
                if (shown++ < 5)
                    fprintf(stderr, "C(%d,%d) = %.17g, reference %.17g (|diff| %.3g > %.3g)\n",
                            i, j, C[i + j * M], s, err, tol);
                bad = 1;
            }
            if (err > worst) worst = err;
        }
    }
    if (bad) {
        print_report(&rep);
        return 1;
    }
    printf("consumer OK (abft %s): C(%d,%d) corrupted by +1000, detected %lld, corrected %lld, "
           "max |C - reference| = %.3g\n",
           abft_version_string(), BAD_ROW, BAD_COL, (long long)rep.detected,
           (long long)rep.corrected, worst);
    return 0;
}

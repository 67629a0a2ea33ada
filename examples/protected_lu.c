/* Protected LU and solve: factor A with checksums checked after the factorization, while a
 * hook corrupts one element of the factors (a bit flip in U after the LU, as a soft error
 * in memory would); the check locates and repairs it. Then A·x = b is solved with checked
 * triangular solves and the residual is measured. On the GPU when one is present (device
 * pointers, pivots in device memory), else on the CPU (host pointers).
 *
 *   build/examples/protected_lu [n]
 *
 * Exit status 0 when the fault was corrected, the factors equal the fault-free ones and the
 * solution's residual is small. */
#include <abft/abft.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if ABFT_HAVE_CUDA_BACKEND
#include <cuda_runtime.h>
#endif

#include "example_mem.h"

/* The fault: flip bit 60 (a high exponent bit) of U(40, 90) once the factors are done. */
enum { FAULT_ROW = 40, FAULT_COL = 90, FAULT_BIT = 60 };
static abft_status_t flip_factor(void *user, abft_hook_site_t site, int which, char prec,
                                 void *LU, int64_t rows, int64_t cols, int64_t ld) {
    (void)user, (void)which, (void)prec, (void)rows, (void)cols;
    if (site != ABFT_SITE_AFTER_LU) return ABFT_STATUS_SUCCESS;
    double *p = (double *)LU + FAULT_ROW + FAULT_COL * ld, v, old;
    uint64_t bits;
    if (to_backend(&v, p, sizeof v, 0) != 0) return ABFT_STATUS_CUDA_ERROR;
    old = v;
    memcpy(&bits, &v, sizeof bits);
    bits ^= 1ull << FAULT_BIT;
    memcpy(&v, &bits, sizeof v);
    printf("injected at site %s: U(%d,%d) bit %d, %.17g -> %.17g\n", abft_hook_site_name(site),
           FAULT_ROW, FAULT_COL, FAULT_BIT, old, v);
    return to_backend(p, &v, sizeof v, 1) == 0 ? ABFT_STATUS_SUCCESS : ABFT_STATUS_CUDA_ERROR;
}

static void print_report(const char *what, abft_status_t st, const abft_report_t *rep) {
    printf("%s: %s, checked %lld, detected %lld, corrected %lld, recomputed %lld, "
           "uncorrectable %lld, checksum faults %lld, spread %d, largest residual/bound %.3g\n",
           what, abft_status_name(st), (long long)rep->checked, (long long)rep->detected,
           (long long)rep->corrected, (long long)rep->recomputed, (long long)rep->uncorrectable,
           (long long)rep->checksum_faults, rep->spread, rep->max_ratio);
    for (int64_t f = 0; f < rep->nfaults; ++f)
        printf("  fault at (%lld, %lld) in %s: delta %.6g, %s\n", (long long)rep->faults[f].row,
               (long long)rep->faults[f].col,
               abft_factor_name((abft_factor_t)rep->faults[f].factor), rep->faults[f].delta,
               abft_action_name((abft_action_t)rep->faults[f].action));
}

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? atoll(argv[1]) : 300;
    if (n < 100) n = 100;
    abft_handle_t h;
    abft_status_t st = abft_create(&h, ABFT_BACKEND_AUTO);
    if (st != ABFT_STATUS_SUCCESS) {
        fprintf(stderr, "abft_create: %s\n", abft_status_string(st));
        return 1;
    }
    abft_get_backend(h, &backend);
    printf("protected LU, backend %s, n = %lld\n", abft_backend_name(backend), (long long)n);
    /* A copy of A lets the check confirm a located fault before correcting it (two row
     * checksums alone cannot tell one error from several, or from a corrupted checksum);
     * without it a fault in the factors is detected and reported, not corrected. */
    abft_set_lu_recovery(h, 1);

    size_t bytes = sizeof(double) * (size_t)(n * n), vbytes = sizeof(double) * (size_t)n;
    double *hA = malloc(bytes), *hF = malloc(bytes), *hG = malloc(bytes), *hb = malloc(vbytes),
           *hx = malloc(vbytes);
    double *A = backend_alloc(bytes), *b = backend_alloc(vbytes);
    int64_t *ipiv = backend_alloc(sizeof(int64_t) * (size_t)n), info = 0;
    if (!hA || !hF || !hG || !hb || !hx || !A || !b || !ipiv) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    srand(7);
    for (int64_t i = 0; i < n * n; ++i) hA[i] = rand() / (double)RAND_MAX - 0.5;
    for (int64_t i = 0; i < n; ++i) hb[i] = 1.0;

    /* the fault-free factors, for the comparison below */
    abft_report_t rep;
    if (to_backend(A, hA, bytes, 1)) return 1;
    st = abft_dgetrf(h, n, n, A, n, ipiv, &info, &rep);
    if (st != ABFT_STATUS_SUCCESS || to_backend(hG, A, bytes, 0)) {
        fprintf(stderr, "fault-free abft_dgetrf: %s\n", abft_status_string(st));
        return 1;
    }

    /* the same factorization with a bit flip in U after the LU */
    if (to_backend(A, hA, bytes, 1)) return 1;
    abft_set_hook(h, flip_factor, NULL);
    st = abft_dgetrf(h, n, n, A, n, ipiv, &info, &rep);
    abft_set_hook(h, NULL, NULL);
    print_report("getrf", st, &rep);
    /* why one bit flip is "detected" in many rows: the check compares the rows of
     * L·(U·V) with P·(A·V); an error in U at (i, j) changes row i of U·V, and L carries it
     * into every row r > i with L(r, i) != 0 (docs/lu.md) */
    if (rep.detected > 1 && rep.corrected == 1)
        printf("  (one error in U at row %d reaches every later row of L·(U·V) through column %d "
               "of L: %lld rows flagged, one element corrected)\n", FAULT_ROW, FAULT_ROW,
               (long long)rep.detected);
    if (st != ABFT_STATUS_SUCCESS || rep.uncorrectable > 0) {
        printf("the factors are not trustworthy (spread %d): refactor\n", rep.spread);
        return 1;
    }
    int64_t repaired = rep.corrected + rep.recomputed;
    if (to_backend(hF, A, bytes, 0)) return 1;
    double maxdiff = 0.0, maxf = 0.0;
    for (int64_t i = 0; i < n * n; ++i) {
        maxdiff = fmax(maxdiff, fabs(hF[i] - hG[i]));
        maxf = fmax(maxf, fabs(hG[i]));
    }
    printf("largest difference from the fault-free factors: %.3g (largest factor entry %.3g)\n",
           maxdiff, maxf);

    /* solve A·x = b with the repaired factors, each triangular solve checked */
    if (to_backend(b, hb, vbytes, 1)) return 1;
    st = abft_dgetrs(h, ABFT_OP_N, n, 1, A, n, ipiv, b, n, &rep);
    print_report("getrs", st, &rep);
    if (st != ABFT_STATUS_SUCCESS || to_backend(hx, b, vbytes, 0)) return 1;
    /* relative residual |A·x - b| / (|A|·|x| + |b|), max over the rows */
    double res = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        double r = -hb[i], s = fabs(hb[i]);
        for (int64_t j = 0; j < n; ++j) {
            r += hA[i + j * n] * hx[j];
            s += fabs(hA[i + j * n] * hx[j]);
        }
        res = fmax(res, fabs(r) / s);
    }
    printf("relative residual of the solution: %.3g\n", res);
    int ok = repaired == 1 && rep.uncorrectable == 0 && maxdiff <= 1e-12 * maxf && res <= 1e-10;
    printf("%s\n", ok ? "the fault was repaired: factors and solution are trustworthy"
                      : "NOT trustworthy");
    backend_free(A), backend_free(b), backend_free(ipiv);
    free(hA), free(hF), free(hG), free(hb), free(hx);
    abft_destroy(h);
    return ok ? 0 : 1;
}

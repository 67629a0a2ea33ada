#include "testutil.h"

#include <math.h>
#include <string.h>
#include <time.h>

int tu_failures = 0;

uint64_t tu_seed(const char *test_name) {
    const char *env = getenv("ABFT_TEST_SEED");
    uint64_t seed = env != NULL ? strtoull(env, NULL, 0)
                                : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    printf("%s: seed: %llu (replay with ABFT_TEST_SEED=%llu)\n", test_name,
           (unsigned long long)seed, (unsigned long long)seed);
    fflush(stdout);
    return seed;
}

void tu_rng_init(tu_rng_t *r, uint64_t seed) { r->s = seed; }

uint64_t tu_next(tu_rng_t *r) { /* splitmix64 */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double tu_uniform(tu_rng_t *r) { return (double)(tu_next(r) >> 11) * 0x1.0p-53; }
double tu_range(tu_rng_t *r, double lo, double hi) { return lo + (hi - lo) * tu_uniform(r); }
int64_t tu_int(tu_rng_t *r, int64_t lo, int64_t hi) {
    return lo + (int64_t)(tu_next(r) % (uint64_t)(hi - lo + 1));
}

static double draw(tu_rng_t *r, tu_kind_t kind, int64_t i, int64_t j) {
    switch (kind) {
    case TU_WIDE: {
        double s = tu_uniform(r) < 0.5 ? -1.0 : 1.0;
        return s * pow(10.0, tu_range(r, -8.0, 8.0));
    }
    case TU_CANCEL: {
        /* Every other column is big with alternating sign; the rest small. Sums over a row
         * cancel the big parts almost exactly, leaving the small ones. */
        double big = 1e6 * (1.0 + tu_uniform(r));
        if ((j & 1) == 0) return ((i + j / 2) & 1) ? big : -big;
        return tu_range(r, -1e-3, 1e-3);
    }
    case TU_POSITIVE: return tu_range(r, 0.5, 1.5);
    case TU_UNIFORM:
    default: return tu_range(r, -1.0, 1.0);
    }
}

void tu_fill_d(tu_rng_t *r, tu_kind_t kind, int64_t rows, int64_t cols, double *A, int64_t ld) {
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < ld; ++i) A[i + j * ld] = i < rows ? draw(r, kind, i, j) : -7777.0;
}

void tu_fill_s(tu_rng_t *r, tu_kind_t kind, int64_t rows, int64_t cols, float *A, int64_t ld) {
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < ld; ++i) {
            double v = i < rows ? draw(r, kind, i, j) : -7777.0;
            if (kind == TU_WIDE && i < rows) v = copysign(fmin(fabs(v), 1e30), v);
            A[i + j * ld] = (float)v;
        }
}

double *tu_alloc_d(int64_t count) {
    double *p = (double *)malloc((size_t)(count > 0 ? count : 1) * sizeof(double));
    if (p == NULL) {
        fprintf(stderr, "test: out of host memory\n");
        exit(1);
    }
    return p;
}
float *tu_alloc_s(int64_t count) {
    float *p = (float *)malloc((size_t)(count > 0 ? count : 1) * sizeof(float));
    if (p == NULL) {
        fprintf(stderr, "test: out of host memory\n");
        exit(1);
    }
    return p;
}

double tu_flip_d(double v, int bit) {
    uint64_t u;
    memcpy(&u, &v, 8);
    u ^= 1ull << bit;
    memcpy(&v, &u, 8);
    return v;
}
float tu_flip_s(float v, int bit) {
    uint32_t u;
    memcpy(&u, &v, 4);
    u ^= 1u << bit;
    memcpy(&v, &u, 4);
    return v;
}

void tu_require_gpu(void) {
    abft_handle_t h = NULL;
    if (!abft_cuda_built() || abft_create(&h, ABFT_BACKEND_CUDA) != ABFT_STATUS_SUCCESS) {
        printf("no GPU (or no CUDA backend): skipped\n");
        exit(77);
    }
    abft_destroy(h);
}

int tu_finish(const char *test_name) {
    if (tu_failures == 0) {
        printf("%s: all checks passed\n", test_name);
        return 0;
    }
    printf("%s: %d check(s) FAILED\n", test_name, tu_failures);
    return 1;
}

abft_status_t tu_flip_hook(void *user, abft_hook_site_t site, int which, char prec, void *ptr,
                           int64_t rows, int64_t cols, int64_t ld) {
    tu_flip_t *f = (tu_flip_t *)user;
    if ((int)site != f->site || (f->which >= 0 && which != f->which) || f->fired)
        return ABFT_STATUS_SUCCESS;
    if (f->i >= rows || f->j >= cols) return ABFT_STATUS_SUCCESS;
    if (prec == 'd') {
        double *p = (double *)ptr + f->i + f->j * ld;
        f->before = *p;
        *p = tu_flip_d(*p, f->bit);
        f->after = *p;
    } else {
        float *p = (float *)ptr + f->i + f->j * ld;
        f->before = *p;
        *p = tu_flip_s(*p, f->bit);
        f->after = *p;
    }
    f->fired = 1;
    return ABFT_STATUS_SUCCESS;
}

double tu_lu_backward(int64_t m, int64_t n, const double *A0, const double *F, int64_t ld,
                      const int64_t *ipiv, double u) {
    const int64_t k = m < n ? m : n;
    double *PA = (double *)malloc(sizeof(double) * (size_t)(ld * n));
    if (PA == NULL) return INFINITY;
    memcpy(PA, A0, sizeof(double) * (size_t)(ld * n));
    for (int64_t i = 0; i < k; ++i) {
        const int64_t p = ipiv[i] - 1;
        if (p < 0 || p >= m) {
            free(PA);
            return INFINITY;
        }
        for (int64_t j = 0; j < n; ++j) {
            double x = PA[i + j * ld];
            PA[i + j * ld] = PA[p + j * ld];
            PA[p + j * ld] = x;
        }
    }
    double worst = 0.0;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
            double lu = 0.0, alu = 0.0;
            const int64_t lmax = i < j ? i : j;
            for (int64_t l = 0; l <= lmax && l < k; ++l) {
                const double L = l == i ? 1.0 : F[i + l * ld], U = F[l + j * ld];
                lu += L * U;
                alu += fabs(L * U);
            }
            const double e = fabs(PA[i + j * ld] - lu) / ((double)k * u * alu + 1e-300);
            if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
        }
    free(PA);
    return worst;
}

int tu_single_fault_resolved(double beta, int64_t m, int64_t n, const abft_report_t *rep) {
    const double lim = 8.0 * (double)((m > n ? m : n) + 1);
    /* beta != 0: nothing can recompute the element, and only a recomputation confirms a
     * correction (docs/bound.md, "Confirm"): every flagged entry reported, nothing written */
    if (beta != 0.0) return rep->corrected == 0 && rep->uncorrectable == rep->detected;
    return (rep->corrected == 1 && rep->uncorrectable == 0) ||
           (rep->corrected == 0 && rep->nfaults > 0 && rep->faults[0].ratio <= lim);
}

double tu_rel_diff(int64_t m, int64_t n, const double *A, const double *B, int64_t ld) {
    double num = 0, den = 0;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
            num = fmax(num, fabs(A[i + j * ld] - B[i + j * ld]));
            den = fmax(den, fabs(B[i + j * ld]));
        }
    return den > 0 ? num / den : num;
}

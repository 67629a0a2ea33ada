/* How tight the checksum bound is: the real residual of a clean product's row checksum
 * against the library's bound (worst-case and probabilistic modes, from the report's
 * max_ratio) and against candidates for a tight mode, on the CPU backend or (--backend cuda)
 * the CUDA one (cuBLAS).
 *
 *   bench_bound [--sizes 256,1024,2048] [--reps R] [--precision s|d|both]
 *               [--backend cpu|cuda] [--out DIR]
 *   bench_bound --volume N COUNT [--volume-shape MxNxK] [--volume-kind K] [--precision s|d]
 *               [--backend cpu|cuda] (COUNT clean products of one shape and data kind in the
 *               tight mode; volume_mode below)
 *
 * For each precision, size n (m = n = k) and data kind, R products C = A·B (fresh seeded
 * inputs each, seed printed) run through abft_sgemm/abft_dgemm on a CPU (or CUDA) handle, once per
 * bound mode. For every row i the real residual of the unit-weight checksum,
 *   r_i = |sum_j C_ij - sum_l a_il·(sum_j b_lj)|,
 * is computed in binary128 where the compiler has it (exact products, sums far below the
 * data's rounding; long double elsewhere, printed), and
 * compared with (u the data's unit roundoff, lambda = 4, sq_i = sum_l a_il^2·sum_j b_lj^2):
 *   second moment (Cauchy-Schwarz):  lambda·u·sqrt(k)·sqrt(k·sq_i)
 *   random walk with drift:          lambda·u·sqrt((k/3)·(sq_i/2 + sum_j C_ij^2/3))
 *   prefix:                          lambda·u·sqrt(V_i), V_i = sum_j sum_t (P_tj^2 + p_tj^2),
 *                                    P_tj = sum_{l <= t} a_il·b_lj (natural order), exact
 *   sketched prefix:                 lambda_q·u·sqrt(Vs_i + sq_i), Vs_i = sum_r sum_t
 *                                    (sum_{l <= t} a_il·Z_lr)^2 / q, Z = B·G, G an n x q
 *                                    matrix of normal draws (q = 32), lambda_q from a row's
 *                                    false-alarm probability 2^-40 (below)
 *   guarded:                         the larger of the sketched bound and
 *                                    lambda_c·u·sqrt(sum_t (Pc_t^2 + pc_t^2)), Pc_t the
 *                                    partial sums of sum_l a_il·(B·e)_l (the checksum
 *                                    direction, exact), lambda_c = sqrt(2·ln(2/2^-40))
 *   grouped:                         lambda_q·u·sqrt(Vs_i + sq_i + sum_G Vg_i), Vg_i the
 *                                    group's coherent partial sums sum_t (Pg_t^2 + pg_t^2),
 *                                    Pg_t = sum_{l <= t} a_il·sum_{j in G} b_lj, for each
 *                                    group G of more than one column of B equal up to sign
 *                                    and a power of two (found by comparing normalised
 *                                    columns; quadratic: a measurement, not the library's)
 *   class-weighted (w1, w2):         lambda_q·u·sqrt(sum_t g_t·Vs_t + sum_l g1_l·a_il^2·
 *                                    sum_j b_lj^2), Vs_t the sketch's share of prefix t, g_t
 *                                    = g1_t (w1) or g2_t (w2), the class sizes of the rows of
 *                                    B (window_classes below): how many columns can share one
 *                                    rounding; w16 the same with gW_t, the class sizes of
 *                                    the last WINDOW = 16 rows up to t (window_classes);
 *                                    w16b that plus the short nodes of a blocked sum
 * ("sk low" prints the smallest Vs_i / (V_i - sq_i) seen: how low the sketch fell.)
 * Printed and written (DIR/bound_cpu.md, .json, or bound_cuda.*; default bench/results): the largest
 * residual/bound over rows and products (the tightness; above 1 the candidate failed),
 * beside the library's own largest |residual|/bound in each mode. Data kinds: cancelling
 * (uniform in [-1, 1]), positive (uniform in [0, 1]), wide range ([-1, 1] times 2^e, e
 * uniform in [-10, 9]) and sign-sorted (positive A whose every row has its larger half
 * first, B rows alternating in sign by blocks: partial sums that grow, then cancel) and
 * repeated (A cancelling, every column of B equal to its first: each row of C is one value
 * n times, its rounding errors equal instead of independent) and two groups (half of B's
 * columns its first, half minus the first times 1 + 2^-20: two groups of equal roundings
 * whose plain sums cancel) and shared rows (the first half of B's rows constant along
 * each row: columns all different, partial sums over that half and their roundings shared)
 * and discrete (A cancelling, B from {-0.3, -0.1, 0.1, 0.3}: columns different, few values)
 * and constant (A all 0.1, B all 1: roundings correlated along l, equal across columns)
 * and near-constant (the same with a relative spread of 2^-12) and periodic (the rows of A
 * repeat three values along l, B all 1).
 * GIT_COMMIT in the environment is recorded as the commit. A benchmark, not a test: it
 * exits 1 only when a call fails or the library flags a clean product. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abft/abft.h"
#include "abft_internal.h"
#include "verify/abft_bound.h"
#ifdef BENCH_BOUND_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#endif

static int g_flag_ok; /* a flagged clean product is a measurement (the probabilistic mode's
                       * known failure on constant data), not an error */
static int g_cuda; /* --backend cuda: the products run on the GPU (cuBLAS), device memory */
static unsigned g_kinds = ~0u; /* --kinds: the data kinds --lib-only runs (a bit per kind) */
static int g_no_host; /* --no-host: --lib-only without the host's count of risky rows (large n) */

/* The residual's reference arithmetic: binary128 where the compiler has it (GCC and Clang
 * on x86-64), else long double (at least the data's double on every target; on x86-64
 * Linux 64 bits of mantissa, on aarch64 Linux 113). */
#if defined(__SIZEOF_FLOAT128__)
typedef __float128 quad;
#define QUAD_NAME "binary128"
#else
typedef long double quad;
#define QUAD_NAME "long double"
#endif

enum { KINDS = 13 };
static const char *kind_name[KINDS] = {"cancelling", "positive",   "wide range", "sign-sorted",
                                       "repeated",   "two groups", "shared rows", "discrete",
                                       "constant",   "near-const", "periodic",    "dominant",
                                       "pairs"};
/* the small entries of "dominant" and "pairs": drawn with A, one of 2^-20, 2^-25 (below
 * fp32's spacing of 1) and 2^-54 (below fp64's) */
static double small_eps = 0x1p-25;

static uint64_t rng_state;
static uint64_t next_u64(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double unit(void) { return (double)(next_u64() >> 11) * 0x1p-53; }
static double normal(void) { /* Box-Muller */
    const double a = 1.0 - unit(), b = unit();
    return sqrt(-2.0 * log(a)) * cos(6.283185307179586 * b);
}

/* The sketched prefix candidate: SKETCH_Q normal weight vectors, a row's false-alarm
 * probability SKETCH_P under the rounding model. */
enum { SKETCH_Q = 32 };
#define SKETCH_P 0x1p-40

/* Under the rounding model (independent roundings, |delta| <= u) a row's rounding error E is
 * sub-Gaussian with variance proxy u^2·V (Hoeffding), and the sketch is V·X/q with X at
 * worst a chi-square of q degrees of freedom (the squared prefixes all parallel), so
 * P(|E| > lambda·u·sqrt(V·X/q)) <= 2·E[exp(-lambda^2·X/(2q))] = 2·(1 + lambda^2/q)^(-q/2):
 * lambda_q makes that SKETCH_P. */
static double lambda_q(void) {
    return sqrt(SKETCH_Q * (pow(2.0 / SKETCH_P, 2.0 / SKETCH_Q) - 1.0));
}

/* One n x n matrix of a kind (column-major); `b`: the B operand of the pair. */
/* A rows x cols operand of a kind (column-major, ld = rows): A is m x k (b = 0), B k x n
 * (b = 1); the inner index l is A's column and B's row. */
static void fill_rect(double *M, int64_t rows, int64_t cols, int kind, int b) {
    if (!b) {
        static const double eps[3] = {0x1p-20, 0x1p-25, 0x1p-54};
        small_eps = eps[next_u64() % 3];
    }
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < rows; ++i) {
            double v;
            switch (kind) {
            case 0: v = 2.0 * unit() - 1.0; break;
            case 1: v = unit(); break;
            case 2: v = (2.0 * unit() - 1.0) * ldexp(1.0, (int)(next_u64() % 20) - 10); break;
            case 3:
                if (!b) v = (j < cols / 2 ? 1.0 : 0.5) * (0.5 + 0.5 * unit()); /* A: positive */
                else v = (i < rows / 2 ? 1.0 : -1.0) * (0.5 + 0.5 * unit());  /* B: +, then - */
                break;
            case 4: /* A cancelling; B's columns all equal its first (rounding errors equal
                     * across the columns of C, not independent) */
                v = (b && j > 0) ? M[i] : 2.0 * unit() - 1.0;
                break;
            case 5: /* A cancelling; half of B's columns equal its first, half its negative
                     * times 1 + 2^-20 (other values: other roundings): two groups whose
                     * plain sums cancel */
                v = (b && j > 0) ? (j < cols / 2 ? M[i] : -M[i] * (1.0 + 0x1p-20))
                                 : 2.0 * unit() - 1.0;
                break;
            case 6: /* A cancelling; B's first half of rows equal across the columns, the
                     * rest random: every column different, but the partial sums over the
                     * first half, and their roundings, shared */
                v = (b && j > 0 && i < rows / 2) ? M[i] : 2.0 * unit() - 1.0;
                break;
            case 7: /* A cancelling; B drawn from {-0.3, -0.1, 0.1, 0.3}: every column
                     * different, but few values, so partial sums of different columns
                     * coincide (and round alike) far more often than random data's */
                v = b ? (next_u64() & 1 ? 0.1 : 0.3) * (next_u64() & 1 ? 1.0 : -1.0)
                      : 2.0 * unit() - 1.0;
                break;
            case 8: /* A all 0.1, B all 1: every partial sum a multiple of 0.1, their
                     * roundings correlated along l and equal across the columns */
                v = b ? 1.0 : 0.1;
                break;
            case 9: /* near-constant: 0.1 and 1 with a relative spread of 2^-12 (fp32: the
                     * additions round alike from k of about 4096 on) */
                v = (b ? 1.0 : 0.1) * (1.0 + 0x1p-12 * unit());
                break;
            case 10: /* periodic: the rows of A repeat three values along l (A's column
                      * index), B all 1 */
                v = b ? 1.0 : 0.1 * (1.0 + (double)(j % 3) / 3.0);
                break;
            case 11: /* dominant: A's first column 1, the rest small_eps·U(0, 1); B in
                      * [0.5, 1]: every later product below the first's spacing (absorbed) */
                v = b ? 0.5 + 0.5 * unit() : j == 0 ? 1.0 : small_eps * unit();
                break;
            default: /* pairs: A's columns l = 63, 64, 127, 128, ... are +1, -1, the rest
                      * small_eps·U(0, 1); B's rows 64, 128, ... equal the rows before them:
                      * cancelled in the natural order, not in a k-block that starts between */
                if (b)
                    v = i % 64 == 0 && i > 0 ? M[i - 1 + j * rows] : 0.5 + 0.5 * unit();
                else
                    v = j % 64 == 63 ? 1.0 : j % 64 == 0 && j > 0 ? -1.0 : small_eps * unit();
                break;
            }
            M[i + j * rows] = v;
        }
}
static void fill(double *M, int64_t n, int kind, int b) { fill_rect(M, n, n, kind, b); }

typedef struct row_result {
    char prec;
    int64_t n;
    int kind;
    double lib_worst, lib_prob, cs, rwd, pre, sk, sk_low, gd, gr, w1, w2;
    double g1max, g2max; /* the largest class sizes seen (g1_l, g2_l below) */
    double ww, gwmax;    /* the sketch weighted by gW_l (windows of WINDOW rows), its largest */
    double wb;           /* w16 with the short nodes of a blocked sum (w16b) */
    double wc;           /* w16b with each class's exact coherent sum for the short nodes */
} row_result_t;

/* Class sizes of the rows of B. Columns j, j' can share a rounding at a node of a dot
 * product's summation only where their entries agree up to one common sign and power of two
 * on the node's span of l (rounding commutes with both); a node's span is a run of l, and one
 * of two or more entries holds l - 1 and l when it ends at l. So (window_classes below)
 *   g1_l: the largest set of columns whose entries b_lj agree up to sign and a power of two
 *         (the products' own roundings, and a node of one entry): a window of 1 row;
 *   g2_l: the largest set whose pairs (b_{l-1,j}, b_lj) agree up to one common sign and power
 *         of two (g2_0 = g1_0): a window of 2 rows;
 * bound how many columns can share the rounding of a node that ends at l. A rounding shared
 * by g columns adds (sum_j w_j·s_j·S_j)^2 <= g·sum_j (w_j·S_j)^2 to the variance proxy
 * (Cauchy-Schwarz), so weighting each l's share of the sketch by g_l keeps the tail bound. */
typedef struct pair_key {
    double x, y;
} pair_key_t;
static int cmp_pair(const void *a, const void *b) {
    const pair_key_t *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    if (p->y != q->y) return p->y < q->y ? -1 : 1;
    return 0;
}
/* x scaled by the sign and power of two that bring `lead` into [1, 2) (lead != 0) */
static double scale_by(double x, double lead) {
    int e;
    frexp(lead, &e);
    return copysign(1.0, lead) * ldexp(x, 1 - e);
}
static int64_t largest_class(pair_key_t *key, int64_t n) {
    qsort(key, (size_t)n, sizeof *key, cmp_pair);
    int64_t best = n > 0, run = 1;
    for (int64_t j = 1; j < n; ++j) {
        run = cmp_pair(key + j, key + j - 1) == 0 ? run + 1 : 1;
        if (run > best) best = run;
    }
    return best;
}
/* gW_l: the largest set of columns whose entries on the rows l - s + 1 .. l of B, s =
 * min(l + 1, WINDOW), agree up to one common sign and power of two (compared by a 64-bit
 * hash of the scaled window: a measurement). In a sum taken in the natural order of l the
 * node that ends at l spans all of 0 .. l, so at most gW_l columns share its rounding; g2 is
 * this with a window of 2. With another `window` the same for that many rows. */
enum { WINDOW = 16 };
static uint64_t mix64(uint64_t h, double x) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    h ^= b + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 31);
}
/* The key of column j for the window of rows l0 .. l of B (row-major Bt): the entries
 * scaled by the sign and power of two of the first nonzero one, hashed. */
static uint64_t window_key(int64_t n, const double *Bt, int64_t l0, int64_t l, int64_t j) {
    double lead = 0.0;
    for (int64_t r = l0; r <= l && lead == 0.0; ++r) lead = Bt[r * n + j];
    uint64_t h = 0x243F6A8885A308D3ull;
    for (int64_t r = l0; r <= l; ++r) h = mix64(h, lead != 0.0 ? scale_by(Bt[r * n + j], lead) : 0.0);
    return h;
}
typedef struct key_idx {
    uint64_t key;
    int64_t j;
} key_idx_t;
static int cmp_key_idx(const void *a, const void *b) {
    const key_idx_t *p = a, *q = b;
    return p->key < q->key ? -1 : p->key > q->key ? 1 : (p->j > q->j) - (p->j < q->j);
}
/* w16c: the short nodes' share with each class's exact coherent sum instead of the class
 * size. The columns of one class of the window of s rows ending at e are equal up to one
 * sign and power of two there, so their node values are those multiples of one reference
 * node and (sum_{j in class} c_j)^2 <= s·sum_{l' in window} a_il'^2·(sum_{j in class}
 * b_l'j)^2 (Cauchy-Schwarz over the window only). So Ec_l = sum_{s < WINDOW} s·max over
 * the nodes' ends e in l .. l + s - 1 of E_s(e, l) = sum over the classes of window (s, e)
 * of (sum_{j in class} b_lj)^2 replaces Ws_l·sum_j b_lj^2 (unit weight). */
static void coherent_short(int64_t n, const double *Bt, double *Ec) {
    key_idx_t *key = malloc((size_t)n * sizeof *key);
    double *E = malloc((size_t)n * WINDOW * sizeof(double)); /* E_s(e, e - s + 1 + o) */
    for (int64_t l = 0; l < n; ++l) Ec[l] = 0.0;
    for (int64_t sp = 1; sp < WINDOW; ++sp) {
        for (int64_t e = 0; e < n; ++e) {
            const int64_t l0 = e + 1 >= sp ? e + 1 - sp : 0;
            for (int64_t j = 0; j < n; ++j) key[j] = (key_idx_t){window_key(n, Bt, l0, e, j), j};
            qsort(key, (size_t)n, sizeof *key, cmp_key_idx);
            for (int64_t o = 0; o <= e - l0; ++o) {
                const double *b = Bt + (l0 + o) * n;
                double tot = 0.0, run = 0.0;
                for (int64_t x = 0; x < n; ++x) {
                    run += b[key[x].j];
                    if (x + 1 == n || key[x + 1].key != key[x].key) tot += run * run, run = 0.0;
                }
                E[e * WINDOW + o] = tot;
            }
        }
        for (int64_t l = 0; l < n; ++l) {
            double g = 0.0;
            for (int64_t e = l; e < l + sp && e < n; ++e) {
                const int64_t l0 = e + 1 >= sp ? e + 1 - sp : 0;
                g = fmax(g, E[e * WINDOW + (l - l0)]);
            }
            Ec[l] += (double)sp * g;
        }
    }
    free(key), free(E);
}

static void window_classes(int64_t n, const double *Bt, int64_t window, double *gw) {
    pair_key_t *key = malloc((size_t)n * sizeof *key);
    for (int64_t l = 0; l < n; ++l) {
        const int64_t l0 = l + 1 >= window ? l + 1 - window : 0;
        for (int64_t j = 0; j < n; ++j) {
            const uint64_t h = window_key(n, Bt, l0, l, j);
            key[j] = (pair_key_t){(double)(h >> 11), (double)(h & 2047u)};
        }
        gw[l] = (double)largest_class(key, n);
    }
    free(key);
}
/* The product through the library in one bound mode; C gets the result (data precision,
 * widened to double in Cd). Returns the report's max_ratio, or -1 on a failure. */
static double run_rect(abft_handle_t h, char prec, int64_t m, int64_t n, int64_t k,
                       const double *A, const double *B, double *Cd, abft_bound_mode_t mode) {
    abft_report_t rep;
    if (abft_set_bound_mode(h, mode, mode == ABFT_BOUND_PROBABILISTIC ? 4.0 : 1.0) !=
        ABFT_STATUS_SUCCESS)
        return -1.0;
    abft_status_t st;
    const size_t na = (size_t)m * (size_t)k, nb = (size_t)k * (size_t)n, nc = (size_t)m * (size_t)n;
    const size_t es = prec == 'd' ? sizeof(double) : sizeof(float);
    void *hA = malloc(na * es + 1), *hB = malloc(nb * es + 1), *hC = malloc(nc * es + 1);
    void *dA = hA, *dB = hB, *dC = hC;
    if (hA == NULL || hB == NULL || hC == NULL) {
        free(hA), free(hB), free(hC);
        return -1.0;
    }
    for (size_t i = 0; i < na; ++i) {
        if (prec == 'd') ((double *)hA)[i] = A[i];
        else ((float *)hA)[i] = (float)A[i];
    }
    for (size_t i = 0; i < nb; ++i) {
        if (prec == 'd') ((double *)hB)[i] = B[i];
        else ((float *)hB)[i] = (float)B[i];
    }
#ifdef BENCH_BOUND_CUDA
    if (g_cuda) {
        dA = dB = dC = NULL;
        if (cudaMalloc(&dA, na * es + 1) != cudaSuccess || cudaMalloc(&dB, nb * es + 1) != cudaSuccess ||
            cudaMalloc(&dC, nc * es + 1) != cudaSuccess ||
            cudaMemcpy(dA, hA, na * es, cudaMemcpyHostToDevice) != cudaSuccess ||
            cudaMemcpy(dB, hB, nb * es, cudaMemcpyHostToDevice) != cudaSuccess) {
            cudaFree(dA), cudaFree(dB), cudaFree(dC);
            free(hA), free(hB), free(hC);
            return -1.0;
        }
    }
#endif
    if (prec == 'd')
        st = abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0, dA, m, dB, k, 0.0, dC, m, &rep);
    else
        st = abft_sgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0f, dA, m, dB, k, 0.0f, dC, m, &rep);
#ifdef BENCH_BOUND_CUDA
    if (g_cuda) {
        if (st == ABFT_STATUS_SUCCESS &&
            cudaMemcpy(hC, dC, nc * es, cudaMemcpyDeviceToHost) != cudaSuccess)
            st = ABFT_STATUS_CUDA_ERROR;
        cudaFree(dA), cudaFree(dB), cudaFree(dC);
    }
#endif
    for (size_t i = 0; i < nc; ++i)
        Cd[i] = prec == 'd' ? ((double *)hC)[i] : (double)((float *)hC)[i];
    free(hA), free(hB), free(hC);
    if (st != ABFT_STATUS_SUCCESS) {
        fprintf(stderr, "bench_bound: %s\n", abft_status_name(st));
        return -1.0;
    }
    if (rep.detected != 0 && !g_flag_ok) {
        fprintf(stderr, "bench_bound: a clean product was flagged in the %s mode (%c, %lld x %lld "
                        "x %lld, ratio %g)\n", mode == ABFT_BOUND_TIGHT ? "tight"
                        : mode == ABFT_BOUND_WORST_CASE ? "worst-case" : "probabilistic", prec,
                (long long)m, (long long)n, (long long)k, rep.max_ratio);
        return -1.0;
    }
    return rep.max_ratio;
}
static double run(abft_handle_t h, char prec, int64_t n, const double *A, const double *B,
                  double *Cd, abft_bound_mode_t mode) {
    return run_rect(h, prec, n, n, n, A, B, Cd, mode);
}

/* The candidates' largest residual/bound over the rows of one product. A and B hold the
 * data as the GEMM saw it (rounded to fp32 for 's'). */
static void candidates(int64_t n, double u, const double *A, const double *B, const double *C,
                       double *cs, double *rwd, double *pre, double *sk, double *sk_low,
                       double *gd, double *gr, double *w1, double *w2, double *g1max,
                       double *g2max, double *ww, double *gwmax, double *wb, double *wc) {
    quad *be = calloc((size_t)n, sizeof(quad));
    double *bsq = calloc((size_t)n, sizeof(double));
    for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < n; ++l) {
            double b = B[l + j * n];
            be[l] += (quad)b;
            bsq[l] += b * b;
        }
    /* B by rows (row l contiguous), and the running prefix sums P_j of one row of C */
    double *Bt = malloc((size_t)n * (size_t)n * sizeof(double));
    double *P = malloc((size_t)n * sizeof(double));
    for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < n; ++l) Bt[l * n + j] = B[l + j * n];
    double *g1 = malloc((size_t)n * sizeof(double)), *g2 = malloc((size_t)n * sizeof(double));
    window_classes(n, Bt, 1, g1);
    window_classes(n, Bt, 2, g2);
    double *gw = malloc((size_t)n * sizeof(double));
    window_classes(n, Bt, WINDOW, gw);
    /* w16b: a blocked sum (k-blocks, split-k, MMA steps) restarts its nodes at every block,
     * so a node of s < WINDOW rows can end anywhere. It is shared by at most g_s(e) columns,
     * e its last row, and its value S obeys S^2 <= s·sum of its products^2; each row l lies
     * in at most one node of each span s of a block, whose end lies in l .. l + s - 1. So the
     * short nodes add at most sum_l a_il^2·sum_j b_lj^2·Ws_l, Ws_l = sum_{s < WINDOW}
     * s·max_{l <= e < l + s} g_s(e), to the variance proxy (s = 1: the products' own
     * roundings). */
    double *Ws = calloc((size_t)n, sizeof(double)), *gs = malloc((size_t)n * sizeof(double));
    for (int64_t sp = 1; sp < WINDOW; ++sp) {
        const double *g_sp = sp == 1 ? g1 : sp == 2 ? g2 : gs; /* spans 1 and 2: at hand */
        if (sp > 2) window_classes(n, Bt, sp, gs);
        for (int64_t l = 0; l < n; ++l) {
            double g = 0.0;
            for (int64_t e = l; e < l + sp && e < n; ++e) g = fmax(g, g_sp[e]);
            Ws[l] += (double)sp * g;
        }
    }
    free(gs);
    double *Ec = malloc((size_t)n * sizeof(double));
    coherent_short(n, Bt, Ec);
    for (int64_t l = n >= WINDOW ? WINDOW - 1 : 0; l < n; ++l) /* the full windows */
        if (gw[l] > *gwmax) *gwmax = gw[l];
    for (int64_t l = 0; l < n; ++l) {
        if (g1[l] > *g1max) *g1max = g1[l];
        if (g2[l] > *g2max) *g2max = g2[l];
    }
    /* The sketch: Z = B·G with G an n x SKETCH_Q matrix of standard normal draws, so that
     * (G^T P_t)_r = sum_{l <= t} a_il·Z_lr and E_G[sum_r (G^T P_t)_r^2 / q] = ||P_t||^2. */
    double *Z = calloc((size_t)n * SKETCH_Q, sizeof(double));
    for (int64_t j = 0; j < n; ++j)
        for (int r = 0; r < SKETCH_Q; ++r) {
            const double g = normal();
            for (int64_t l = 0; l < n; ++l) Z[l * SKETCH_Q + r] += B[l + j * n] * g;
        }
    /* lambda of the sketched bound: a row's false alarm at most 2·(1 + lambda^2/q)^(-q/2)
     * = SKETCH_P under the rounding model whatever the partial sums (the sketch is a
     * chi-square draw of q degrees of freedom at worst, times the exact V) */
    const double lam_q = lambda_q();
    const double lambda = 4.0, k = (double)n;
    /* grouped: columns of B equal up to sign and a power of two round alike (rounding
     * commutes with both), so each group of more than one column adds its own coherent
     * partial sums sum_{l <= t} a_il·(sum_{j in G} b_lj), exact, to the sketch; groups by
     * the columns scaled so that their first nonzero entry is in [1, 2) */
    int64_t *grp = malloc((size_t)n * sizeof(int64_t)), ngroups = 0;
    double *gsum = NULL; /* per group of more than one column: sum_{j in G} b_lj */
    {
        double *Nc = malloc((size_t)n * (size_t)n * sizeof(double));
        for (int64_t j = 0; j < n; ++j) {
            const double *col = B + j * n;
            double sc = 0.0;
            for (int64_t l = 0; l < n && sc == 0.0; ++l)
                if (col[l] != 0.0) {
                    int e;
                    frexp(col[l], &e);
                    sc = copysign(ldexp(1.0, 1 - e), col[l]);
                }
            for (int64_t l = 0; l < n; ++l) Nc[l + j * n] = col[l] * (sc != 0.0 ? sc : 1.0);
            grp[j] = -1;
        }
        int64_t *size = calloc((size_t)n, sizeof(int64_t)), *lead = malloc((size_t)n * sizeof(int64_t));
        int64_t nc = 0; /* classes of equal normalised columns (quadratic: a benchmark) */
        for (int64_t j = 0; j < n; ++j) {
            int64_t c = -1;
            for (int64_t q = 0; q < nc && c < 0; ++q)
                if (memcmp(Nc + lead[q] * n, Nc + j * n, (size_t)n * sizeof(double)) == 0) c = q;
            if (c < 0) lead[c = nc++] = j;
            grp[j] = c;
            size[c]++;
        }
        /* keep the classes of more than one column as groups */
        int64_t *gid = malloc((size_t)(nc + 1) * sizeof(int64_t));
        for (int64_t q = 0; q < nc; ++q) gid[q] = size[q] > 1 ? ngroups++ : -1;
        gsum = calloc((size_t)(ngroups + 1) * (size_t)n, sizeof(double));
        for (int64_t j = 0; j < n; ++j) {
            grp[j] = gid[grp[j]];
            if (grp[j] >= 0)
                for (int64_t l = 0; l < n; ++l) gsum[l + grp[j] * n] += B[l + j * n];
        }
        free(Nc), free(size), free(lead), free(gid);
    }
    for (int64_t i = 0; i < n; ++i) {
        /* prefix: V_i = sum_j sum_t (P_tj^2 + p_tj^2), P_tj = sum_{l <= t} a_il·b_lj, the
         * partial sums of a GEMM that sums in the natural order of l */
        double V = 0.0;
        for (int64_t j = 0; j < n; ++j) P[j] = 0.0;
        for (int64_t l = 0; l < n; ++l) {
            const double a = A[i + l * n], *b = Bt + l * n;
            for (int64_t j = 0; j < n; ++j) {
                const double pj = a * b[j];
                P[j] += pj;
                V += P[j] * P[j] + pj * pj;
            }
        }
        quad s = 0, t = 0;
        double sq = 0.0, c2 = 0.0;
        for (int64_t j = 0; j < n; ++j) {
            double c = C[i + j * n];
            s += (quad)c;
            c2 += c * c;
        }
        for (int64_t l = 0; l < n; ++l) {
            double a = A[i + l * n];
            t += (quad)a * be[l];
            sq += a * a * bsq[l];
        }
        double r = fabs((double)(s - t));
        double b_cs = lambda * u * sqrt(k) * sqrt(k * sq);
        double b_rwd = lambda * u * sqrt((k / 3.0) * (sq / 2.0 + c2 / 3.0));
        double x = b_cs > 0.0 ? r / b_cs : (r == 0.0 ? 0.0 : INFINITY);
        double y = b_rwd > 0.0 ? r / b_rwd : (r == 0.0 ? 0.0 : INFINITY);
        double Vs = 0.0, sq2 = 0.0, Vw1 = 0.0, Vw2 = 0.0, Vww = 0.0, sqw = 0.0, Tsh = 0.0, Tc = 0.0;
        for (int r = 0; r < SKETCH_Q; ++r) {
            double run_s = 0.0;
            for (int64_t l = 0; l < n; ++l) {
                run_s += A[i + l * n] * Z[l * SKETCH_Q + r];
                Vs += run_s * run_s;
                Vw1 += g1[l] * run_s * run_s;
                Vw2 += g2[l] * run_s * run_s;
                Vww += gw[l] * run_s * run_s;
            }
        }
        for (int64_t l = 0; l < n; ++l) {
            sq2 += A[i + l * n] * A[i + l * n] * bsq[l];
            sqw += g1[l] * A[i + l * n] * A[i + l * n] * bsq[l];
            Tsh += Ws[l] * A[i + l * n] * A[i + l * n] * bsq[l];
            Tc += Ec[l] * A[i + l * n] * A[i + l * n];
        }
        /* class-weighted sketches: each l's share times g1_l (w1) or g2_l (w2); the
         * products' own roundings times g1_l in both */
        const double b_w1 = lam_q * u * sqrt(Vw1 / SKETCH_Q + sqw);
        const double b_w2 = lam_q * u * sqrt(Vw2 / SKETCH_Q + sqw);
        const double q1 = b_w1 > 0.0 ? r / b_w1 : (r == 0.0 ? 0.0 : INFINITY);
        const double q2 = b_w2 > 0.0 ? r / b_w2 : (r == 0.0 ? 0.0 : INFINITY);
        if (q1 > *w1) *w1 = q1;
        if (q2 > *w2) *w2 = q2;
        const double b_ww = lam_q * u * sqrt(Vww / SKETCH_Q + sqw);
        const double qw = b_ww > 0.0 ? r / b_ww : (r == 0.0 ? 0.0 : INFINITY);
        if (qw > *ww) *ww = qw;
        const double b_wb = lam_q * u * sqrt(Vww / SKETCH_Q + Tsh);
        const double qb = b_wb > 0.0 ? r / b_wb : (r == 0.0 ? 0.0 : INFINITY);
        if (qb > *wb) *wb = qb;
        const double b_wc = lam_q * u * sqrt(Vww / SKETCH_Q + Tc);
        const double qc = b_wc > 0.0 ? r / b_wc : (r == 0.0 ? 0.0 : INFINITY);
        if (qc > *wc) *wc = qc;
        const double Vpre = V - sq2; /* the exact sum of squared prefixes, without sum p^2 */
        Vs = Vs / SKETCH_Q + sq2;
        if (Vpre > 0.0 && (Vs - sq2) / Vpre < *sk_low) *sk_low = (Vs - sq2) / Vpre;
        const double b_sk = lam_q * u * sqrt(Vs);
        double q = b_sk > 0.0 ? r / b_sk : (r == 0.0 ? 0.0 : INFINITY);
        if (q > *sk) *sk = q;
        /* guarded: the sketch, or the coherent partial sums of the checksum direction
         * (exact: the errors of columns equal up to sign and a power of two add with the
         * checksum's own weights), whichever bound is larger; lambda_c from Hoeffding over
         * the k exact terms for the same 2^-40 */
        double Vc = 0.0, runc = 0.0;
        for (int64_t l = 0; l < n; ++l) {
            const double pc = A[i + l * n] * (double)be[l];
            runc += pc;
            Vc += runc * runc + pc * pc;
        }
        const double lam_c = sqrt(2.0 * log(2.0 / SKETCH_P));
        const double b_gd = fmax(b_sk, lam_c * u * sqrt(Vc));
        double gq = b_gd > 0.0 ? r / b_gd : (r == 0.0 ? 0.0 : INFINITY);
        if (gq > *gd) *gd = gq;
        double Vg = 0.0;
        for (int64_t g = 0; g < ngroups; ++g) {
            double rg = 0.0;
            for (int64_t l = 0; l < n; ++l) {
                const double pg = A[i + l * n] * gsum[l + g * n];
                rg += pg;
                Vg += rg * rg + pg * pg;
            }
        }
        const double b_gr = lam_q * u * sqrt(Vs + Vg);
        double grq = b_gr > 0.0 ? r / b_gr : (r == 0.0 ? 0.0 : INFINITY);
        if (grq > *gr) *gr = grq;
        const double b_pre = lambda * u * sqrt(V);
        double z = b_pre > 0.0 ? r / b_pre : (r == 0.0 ? 0.0 : INFINITY);
        if (x > *cs) *cs = x;
        if (y > *rwd) *rwd = y;
        if (z > *pre) *pre = z;
    }
    free(be), free(bsq), free(Bt), free(P), free(Z), free(grp), free(gsum), free(g1), free(g2),
        free(gw), free(Ws), free(Ec);
}

/* Correlation along l, the other way independence fails: one fp32 dot product of k products
 * p_l = ±fl(0.1·(1 + 2^-s·x_l)), x_l uniform in [0, 1) (s = none: exactly 0.1), all
 * positive (coherent: the partial sum grows like l) or of random signs (a random walk),
 * summed in order in fp32, against the sketch's model for one column (g = 1: lambda_q·u·
 * sqrt(sum_t (P_t^2 + p_t^2)), the sketch exact here) and with the weight h, the largest set
 * of products equal up to sign (the equality guard along l: lambda_q·u·sqrt(h·sum_t ...)).
 * Once the partial sum's ulp exceeds the products' spread (coherent: t > about 2^-s / u;
 * random signs: t > about (2^-s / u)^2) the additions round alike and the error grows
 * linearly. Writes the table to f (and stdout). */
enum { DITHER_W = 16 };
static void sequential_bias(FILE *f) {
    /* spreads 2^-s (0: exactly 0.1), then two periodic patterns of D values (negative
     * entries: p_l = 0.1·(1 + (l mod D)/D)), which spread widely and still repeat */
    static const int spread[7] = {0, 20, 16, 12, 8, -3, -1000};
    const double u = 0x1p-24, lam = lambda_q();
    if (f != NULL)
        fprintf(f, "\n## Correlation along l: one sequential fp32 dot product of near-constant "
                   "products\n\np_l = ±fl(0.1·(1 + 2^-s·x_l)), x_l uniform in [0, 1) "
                   "(s = none: exactly 0.1), all positive or of random signs; real error / "
                   "bound for the independent model (g = 1) and with the equality weight h "
                   "(the largest set of products equal up to sign; h shown). Above 1 the "
                   "candidate failed.\n\n"
                   "dither split: the additions whose last 16 products spread over at least "
                   "2·u·|P_t| in quadrature, the others' u·|P_t| added linearly; both: the "
                   "dither split with its quadrature part weighted by h. period D: "
                   "p_l = 0.1·(1 + (l mod D)/D).\n\n"
                   "| signs | spread | k | error/bound (g = 1) | h | error/bound (weight h) "
                   "| error/bound (dither split) | error/bound (both) |\n"
                   "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    printf("\ncorrelation along l (one fp32 dot product, near-constant products):\n");
    for (int sg = 0; sg < 2; ++sg)
        for (int v = 0; v < 7; ++v)
            for (int64_t k = 1024; k <= (1 << 20); k *= 4) {
                rng_state = 12345u + (uint64_t)v + 100u * (uint64_t)sg;
                float *p = malloc((size_t)k * sizeof(float)), sum = 0.0f;
                double exact = 0.0, P = 0.0, V = 0.0; /* exact: k <= 2^20 values of 24 bits */
                double Vd = 0.0, Bnd = 0.0; /* the dither split below */
                if (p == NULL) return;
                for (int64_t t = 0; t < k; ++t) {
                    if (spread[v] < 0)
                        p[t] = (float)(0.1 * (1.0 + (double)(t % -spread[v]) / -spread[v]));
                    else
                        p[t] = spread[v] ? (float)(0.1 * (1.0 + ldexp(unit(), -spread[v])))
                                         : 0.1f;
                    if (sg && (next_u64() & 1)) p[t] = -p[t];
                    sum += p[t];
                    exact += p[t];
                    P += p[t];
                    V += P * P + (double)p[t] * p[t];
                    /* dither split: the addition at t counts as random when the products of
                     * the last DITHER_W steps spread over at least the partial sum's spacing
                     * (2·u·|P_t|), else its rounding is bounded by u·|P_t| and added linearly */
                    double lo = p[t], hi = p[t];
                    for (int64_t r = t > DITHER_W - 1 ? t - DITHER_W + 1 : 0; r < t; ++r)
                        lo = fmin(lo, p[r]), hi = fmax(hi, p[r]);
                    if (hi - lo >= 2.0 * u * fabs(P)) Vd += P * P + (double)p[t] * p[t];
                    else Bnd += u * fabs(P);
                }
                pair_key_t *key = malloc((size_t)k * sizeof *key);
                for (int64_t t = 0; key != NULL && t < k; ++t)
                    key[t] = (pair_key_t){fabs((double)p[t]), 0.0};
                const double h = key != NULL ? (double)largest_class(key, k) : (double)k;
                const double err = fabs((double)sum - exact), b = lam * u * sqrt(V);
                const double bd = lam * u * sqrt(Vd) + Bnd, bhd = lam * u * sqrt(h * Vd) + Bnd;
                char name[24];
                if (spread[v] < 0) snprintf(name, sizeof name, "period %d", -spread[v]);
                else snprintf(name, sizeof name, spread[v] ? "2^-%d" : "none", spread[v]);
                const char *signs = sg ? "random" : "positive";
                printf("  %-8s spread %-6s k %8lld: error/bound %.3g (g = 1), h %.0f, %.3g "
                       "(weight h), %.3g (dither split), %.3g (both)\n", signs, name,
                       (long long)k, err / b, h, err / (b * sqrt(h)), err / bd, err / bhd);
                if (f != NULL)
                    fprintf(f, "| %s | %s | %lld | %.3g | %.0f | %.3g | %.3g | %.3g |\n", signs,
                            name, (long long)k, err / b, h, err / (b * sqrt(h)), err / bd,
                            err / bhd);
                free(p), free(key);
            }
}

/* A results file DIR/<name>_<backend>.<ext> opened for writing (NULL on failure), with the
 * date it is written at (UTC). */
static FILE *open_result(const char *out, const char *name, const char *bname, const char *ext,
                         char *path, size_t npath, char *date, size_t ndate) {
    time_t now = time(NULL);
    strftime(date, ndate, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    snprintf(path, npath, "%s/%s_%s.%s", out, name, bname, ext);
    return fopen(path, "w");
}

/* ---- --lib-only: the library's three bound modes at larger sizes ----------------------- */

/* The tight bound of the library, evaluated on the host from the inputs and the result (the
 * CPU backend's tight pass, kernels/cpu/abft_cpu_tight.c, and the bound module's
 * coefficients): the largest |residual|/bound over rows and both weight columns of C = A·B
 * (n x n, alpha = 1, beta = 0), with the checksums taken as the CPU backend takes them.
 * On the CUDA backend this asks whether cuBLAS's results keep within the bound the tight
 * mode would give them. *risky: the rows the guard sent to the worst case. Returns -1 on a
 * failure. */
static double tight_host(abft_handle_t h, char prec, int64_t m, int64_t n, int64_t k,
                         const double *A, const double *B, const double *C, int64_t *risky,
                         double *tau0) {
    const abft_prec_t pr = prec == 'd' ? ABFT_PREC_D : ABFT_PREC_S;
    abft_kctx_t none;
    memset(&none, 0, sizeof none);
    double *yb = malloc(sizeof(double) * (size_t)k * 2), *T = malloc(sizeof(double) * (size_t)m * 2);
    double *S = malloc(sizeof(double) * (size_t)m * 2), *Sa = malloc(sizeof(double) * (size_t)m * 2);
    double *R = malloc(sizeof(double) * (size_t)m * 2), *Ra = malloc(sizeof(double) * (size_t)m * 2);
    double ratio = -1.0;
    abft_arith_t ar = abft_arith_native(pr);
    abft_gemm_tight_t tb;
    abft_gemm_bound_t bc;
    if (!yb || !T || !S || !Sa || !R || !Ra) goto done;
    abft_bound_gemm_tight(h, &ar, n, k, n, ABFT_TIGHT_COMP_SEQ, &tb);
    abft_bound_gemm(h, &ar, 1.0, 0.0, n, k, n, &bc);
    /* the data are doubles here (fp32 values widened): the pass reads them as fp64 data,
     * with the fp32 unit roundoff */
    abft_tsmm_args_t y = {ABFT_PREC_D, 0, k, n, 2, B, k, NULL, 0, NULL, 0, yb, k, NULL, 0, 0};
    abft_tight_args_t t = {ABFT_PREC_D, 0, 0, m, n, k, A, m, B, k, yb, k, 1.0, tb.u, tb.u_chk,
                           tb.lambda, T, m, risky, 0, 0, {{0, 0}}};
    t.nord = abft_bound_tight_lanes(h->backend, t.ord); /* the lane orders of the results' backend */
    abft_tsmm_args_t sx = {ABFT_PREC_D, 0, m, k, 2, A, m, yb, k, NULL, 0, S, m, Sa, m, 0};
    abft_tsmm_args_t rx = {ABFT_PREC_D, 0, m, n, 2, C, m, NULL, 0, NULL, 0, R, m, Ra, m, 0};
    if (abft_cpu_tsmm(&none, &y) != ABFT_STATUS_SUCCESS ||
        abft_cpu_tight(&none, &t) != ABFT_STATUS_SUCCESS ||
        abft_cpu_tsmm(&none, &rx) != ABFT_STATUS_SUCCESS)
        goto done;
    /* |op(A)|·(|op(B)|·V) for the worst case of risky rows and the small terms */
    {
        double *yba = malloc(sizeof(double) * (size_t)k * 2);
        if (!yba) goto done;
        abft_tsmm_args_t ya = {ABFT_PREC_D, 0, k, n, 2, B, k, NULL, 0, NULL, 0, yb, k, yba, k, 0};
        abft_status_t st = abft_cpu_tsmm(&none, &ya);
        sx.Xabs = yba, sx.ldxabs = k;
        if (st == ABFT_STATUS_SUCCESS) st = abft_cpu_tsmm(&none, &sx);
        free(yba);
        if (st != ABFT_STATUS_SUCCESS) goto done;
    }
    ratio = 0.0;
    for (int64_t i = 0; i < m; ++i)
        for (int q = 0; q < 2; ++q) {
            const int64_t o = i + q * m;
            double tau = T[o] >= 0.0
                             ? T[o] + tb.coef_s * Sa[o] + tb.coef_r * Ra[o] +
                                   tb.coef_x * (fabs(R[o]) + fabs(S[o])) + bc.abs_floor
                             : bc.coef_s * Sa[o] + bc.coef_r * Ra[o] + bc.abs_floor;
            if (tau0 != NULL && q == 0) tau0[i] = tau; /* the unit weight's bound */
            double d = fabs(R[o] - S[o]);
            double x = d == 0.0 ? 0.0 : d / tau;
            if (!(x <= ratio)) ratio = x;
        }
done:
    free(yb), free(T), free(S), free(Sa), free(R), free(Ra);
    return ratio;
}

typedef struct lib_result {
    char prec;
    int64_t m, n, k;
    int kind;
    double worst, prob, tight;
    int64_t risky; /* rows sent to the worst case, largest over the products */
} lib_result_t;

/* --lib-only: for each precision, size and kind, reps products through the library in each
 * bound mode (the tight one through the host evaluation on the CUDA backend); writes
 * DIR/bound_lib_<backend>.md and .json. */
static int lib_only(const int64_t (*shapes)[3], int nshapes, int reps, const char *precs,
                    const char *out, uint64_t seed, const char *commit) {
    const char *bname = g_cuda ? "cuda" : "cpu";
    abft_handle_t h = NULL;
    if (abft_create(&h, g_cuda ? ABFT_BACKEND_CUDA : ABFT_BACKEND_CPU) != ABFT_STATUS_SUCCESS)
        return 1;
    lib_result_t res[2 * 8 * KINDS];
    int nres = 0, failed = 0;
    printf("%-4s %6s %6s %6s %-12s %12s %12s %12s %8s %14s\n", "prec", "m", "n", "k", "data",
           "worst", "prob", "tight", "risky", "tight/worst");
    for (const char *pc = precs; *pc; ++pc)
        for (int s = 0; s < nshapes; ++s)
            for (int kind = 0; kind < KINDS; ++kind) {
                if (!(g_kinds >> kind & 1u)) continue;
                const int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
                const size_t na = (size_t)m * (size_t)k, nb = (size_t)k * (size_t)n;
                double *A = malloc(na * sizeof(double) + 8), *B = malloc(nb * sizeof(double) + 8);
                double *C = malloc((size_t)m * (size_t)n * sizeof(double) + 8);
                if (A == NULL || B == NULL || C == NULL) return 1;
                lib_result_t r = {*pc, m, n, k, kind, 0.0, 0.0, 0.0, g_no_host ? -1 : 0};
                for (int rep = 0; rep < reps; ++rep) {
                    rng_state = seed + 1000003ull * (uint64_t)(nres * reps + rep);
                    fill_rect(A, m, k, kind, 0);
                    fill_rect(B, k, n, kind, 1);
                    if (*pc == 's') {
                        for (size_t i = 0; i < na; ++i) A[i] = (float)A[i];
                        for (size_t i = 0; i < nb; ++i) B[i] = (float)B[i];
                    }
                    g_flag_ok = 1; /* the probabilistic mode may flag constant data */
                    double w = run_rect(h, *pc, m, n, k, A, B, C, ABFT_BOUND_PROBABILISTIC);
                    g_flag_ok = 0;
                    double x = run_rect(h, *pc, m, n, k, A, B, C, ABFT_BOUND_WORST_CASE);
                    int64_t risky = 0;
                    /* the library's tight mode */
                    double t = run_rect(h, *pc, m, n, k, A, B, C, ABFT_BOUND_TIGHT);
                    /* the guard's count from the host (the CPU pass: the same rows) */
                    double th = g_no_host ? 0.0 : tight_host(h, *pc, m, n, k, A, B, C, &risky, NULL);
                    if (g_no_host) risky = -1;
                    if (w < 0.0 || x < 0.0 || t < 0.0 || th < 0.0) {
                        failed = 1;
                        continue;
                    }
                    if (t >= 1.0) {
                        fprintf(stderr, "bench_bound: the tight bound failed (%g)\n", t);
                        failed = 1;
                    }
                    if (w > r.prob) r.prob = w;
                    if (x > r.worst) r.worst = x;
                    if (t > r.tight) r.tight = t;
                    if (risky > r.risky) r.risky = risky;
                }
                free(A), free(B), free(C);
                res[nres++] = r;
                printf("%-4c %6lld %6lld %6lld %-12s %12.3g %12.3g %12.3g %8lld %14.3g\n", r.prec,
                       (long long)m, (long long)n, (long long)k, kind_name[kind], r.worst, r.prob, r.tight,
                       (long long)r.risky, r.worst > 0.0 ? r.tight / r.worst : 0.0);
                fflush(stdout);
            }
    abft_destroy(h);
    char path[512], date[64];
    FILE *f = open_result(out, "bound_lib", bname, "md", path, sizeof path, date, sizeof date);
    if (f != NULL) {
        fprintf(f, "# The library's bound modes: tightness (bench_bound --lib-only, %s)\n\n"
                   "- date: %s\n- commit: %s\n- seed %llu, %d products per case, C = A·B "
                   "(m x k times k x n), alpha = 1, beta = 0, row checksums\n\n"
                   "Largest |residual| / bound over the rows, both weight columns and the "
                   "products (the tightness; 1 is the bound reached). worst, prob (factor 4): "
                   "the report's max_ratio (prob above 1: it flagged a clean product); tight: the report's max_ratio. risky: the most "
                   "rows of one product that the tight mode's guards sent to the worst "
                   "case (-1: not counted, --no-host). Data kinds: bench/bench_bound.c.\n\n"
                   "| prec | m | n | k | data | worst | prob | tight | risky rows | tight / worst |\n"
                   "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n",
                g_cuda ? "CUDA backend, cuBLAS" : "CPU backend", date,
                commit ? commit : "unknown", (unsigned long long)seed, reps);
        for (int i = 0; i < nres; ++i)
            fprintf(f, "| fp%s | %lld | %lld | %lld | %s | %.3g | %.3g | %.3g | %lld | %.3g |\n",
                    res[i].prec == 'd' ? "64" : "32", (long long)res[i].m, (long long)res[i].n,
                    (long long)res[i].k,
                    kind_name[res[i].kind], res[i].worst, res[i].prob, res[i].tight,
                    (long long)res[i].risky,
                    res[i].worst > 0.0 ? res[i].tight / res[i].worst : 0.0);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/bound_lib_%s.json", out, bname);
    f = fopen(path, "w");
    if (f != NULL) {
        fprintf(f, "{\"bench\": \"bench_bound --lib-only\", \"backend\": \"%s\", \"date\": "
                   "\"%s\", \"commit\": \"%s\", \"seed\": %llu, \"reps\": %d, \"rows\": [",
                bname, date, commit ? commit : "unknown", (unsigned long long)seed, reps);
        for (int i = 0; i < nres; ++i)
            fprintf(f, "%s\n {\"precision\": \"%c\", \"m\": %lld, \"n\": %lld, \"k\": %lld, "
                       "\"data\": \"%s\", "
                       "\"worst\": %.6g, \"prob\": %.6g, \"tight\": %.6g, \"risky\": %lld}",
                    i ? "," : "", res[i].prec, (long long)res[i].m, (long long)res[i].n,
                    (long long)res[i].k, kind_name[res[i].kind],
                    res[i].worst, res[i].prob, res[i].tight, (long long)res[i].risky);
        fprintf(f, "\n]}\n");
        fclose(f);
    }
    return failed;
}

/* ---- --blocks N: blocked checksums, what they would gain (CPU backend) ------------------ */

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Blocked checksums split the columns of C into b blocks, each with its own weight pair
 * [1, j+1] over its own columns: a block's checksum is that of the product with the block's
 * columns of B alone, so its tight bound is the library's tight bound of that product. For
 * one product C = A·B (n x n x n, uniform data in [-1, 1]) and b = 1, 2, 4, ..., 16: the
 * smallest change of one element that the unit weight's bound guarantees to find, 2·tau_i
 * over the RMS of row i of C (median and largest over the rows and blocks), the largest
 * clean |residual| / bound over the blocks (both weights), and the time of the tight bound
 * of all blocks on this machine (the pass's row scan costs the same for every block: b
 * blocks cost about b times one). Writes DIR/bound_blocks_cpu.md. */
static int blocks_mode(int64_t n, const char *precs, const char *out, uint64_t seed,
                       const char *commit) {
    abft_handle_t h = NULL;
    if (abft_create(&h, ABFT_BACKEND_CPU) != ABFT_STATUS_SUCCESS) return 1;
    const size_t nn = (size_t)n * (size_t)n;
    double *A = malloc(nn * sizeof(double)), *B = malloc(nn * sizeof(double));
    double *C = malloc(nn * sizeof(double)), *rms = malloc((size_t)n * sizeof(double));
    double *tau = malloc((size_t)n * sizeof(double)), *det = malloc(nn * sizeof(double));
    if (!A || !B || !C || !rms || !tau || !det) return 1;
    char path[512], date[64];
    FILE *f = open_result(out, "bound_blocks", "cpu", "md", path, sizeof path, date, sizeof date);
    if (f != NULL)
        fprintf(f, "# Blocked checksums: the smallest change the tight bound finds (bench_bound "
                   "--blocks %lld, CPU backend)\n\n- date: %s\n- commit: %s\n- seed %llu, one "
                   "product C = A·B, n = k = %lld, uniform data in [-1, 1], alpha = 1, beta = 0\n\n"
                   "b blocks of n/b columns of C, each with its own weights [1, j+1] (the tight "
                   "bound of the product with the block's columns of B). detectable: 2·tau_i / "
                   "RMS of row i of C for the unit weight (a change above it in one element is "
                   "found), median and largest over rows and blocks; clean: the largest "
                   "|residual| / bound; time: the tight bound of all b blocks on this machine "
                   "(the row scan of the tight pass runs once per block).\n\n"
                   "| prec | b | detectable, median | detectable, largest | clean | time (s) |\n"
                   "| --- | ---: | ---: | ---: | ---: | ---: |\n",
                (long long)n, date, commit ? commit : "unknown", (unsigned long long)seed,
                (long long)n);
    printf("%-4s %4s %18s %18s %10s %10s\n", "prec", "b", "detect median", "detect max", "clean",
           "time s");
    int failed = 0;
    for (const char *pc = precs; *pc; ++pc) {
        rng_state = seed;
        fill_rect(A, n, n, 0, 0);
        fill_rect(B, n, n, 0, 1);
        if (*pc == 's')
            for (size_t i = 0; i < nn; ++i) A[i] = (float)A[i], B[i] = (float)B[i];
        if (run_rect(h, *pc, n, n, n, A, B, C, ABFT_BOUND_WORST_CASE) < 0.0) return 1;
        for (int64_t i = 0; i < n; ++i) {
            double ss = 0.0;
            for (int64_t j = 0; j < n; ++j) ss += C[i + j * n] * C[i + j * n];
            rms[i] = sqrt(ss / (double)n);
        }
        for (int64_t b = 1; b <= 16 && n % b == 0; b *= 2) {
            const int64_t nb = n / b;
            double clean = 0.0;
            size_t nd = 0;
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            for (int64_t blk = 0; blk < b; ++blk) {
                int64_t risky = 0;
                double r = tight_host(h, *pc, n, nb, n, A, B + (size_t)(blk * nb) * (size_t)n,
                                      C + (size_t)(blk * nb) * (size_t)n, &risky, tau);
                if (r < 0.0 || r >= 1.0) failed = 1;
                if (r > clean) clean = r;
                for (int64_t i = 0; i < n; ++i) det[nd++] = 2.0 * tau[i] / rms[i];
            }
            clock_gettime(CLOCK_MONOTONIC, &t1);
            const double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
            qsort(det, nd, sizeof(double), cmp_double);
            printf("%-4c %4lld %18.3g %18.3g %10.3g %10.3f\n", *pc, (long long)b, det[nd / 2],
                   det[nd - 1], clean, secs);
            if (f != NULL)
                fprintf(f, "| fp%s | %lld | %.3g | %.3g | %.3g | %.3f |\n", *pc == 'd' ? "64" : "32",
                        (long long)b, det[nd / 2], det[nd - 1], clean, secs);
        }
    }
    if (f != NULL) fclose(f);
    abft_destroy(h);
    free(A), free(B), free(C), free(rms), free(tau), free(det);
    return failed;
}

/* ---- --volume N COUNT: many clean products of one configuration (CUDA backend) -------- */

/* The volume mode's data kinds (--volume-kind): cancelling (uniform in (-1, 1]), positive
 * (uniform in (0, 1]), wide range (uniform in (-1, 1] times a log-normal factor exp(4·N),
 * about 2^±17 at three standard deviations: bench_bound's own wide range spreads 2^-10 to
 * 2^9 with the same standard deviation of the exponent, without the tails) and sign-sorted
 * (positive A whose every row has its larger half first, B rows positive in the first half
 * and negative in the second: partial sums that grow, then cancel). */
enum { VK_CANCEL, VK_POSITIVE, VK_WIDE, VK_SORTED, VKINDS };
static const char *vkind_name[VKINDS] = {"cancelling", "positive", "wide-range", "sign-sorted"};

#ifdef BENCH_BOUND_CUDA
/* x = s·x + t on the device for count values (t through the ones vector) */
static int affine(cublasHandle_t cb, int dp, void *x, double s, double t, const void *ones,
                  int64_t count) {
    const float sf = (float)s, tf = (float)t;
    if (dp)
        return cublasDscal(cb, (int)count, &s, (double *)x, 1) != CUBLAS_STATUS_SUCCESS ||
               cublasDaxpy(cb, (int)count, &t, (const double *)ones, 1, (double *)x, 1) !=
                   CUBLAS_STATUS_SUCCESS;
    return cublasSscal(cb, (int)count, &sf, (float *)x, 1) != CUBLAS_STATUS_SUCCESS ||
           cublasSaxpy(cb, (int)count, &tf, (const float *)ones, 1, (float *)x, 1) !=
               CUBLAS_STATUS_SUCCESS;
}
/* X (rows x cols, leading dimension rows) = diag(d)·X (left) or X·diag(d) (right), in place;
 * with rows = count and cols = 1 the elementwise product of two vectors */
static int scale(cublasHandle_t cb, int dp, int left, void *X, int64_t rows, int64_t cols,
                 const void *d) {
    const cublasSideMode_t side = left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
    if (dp)
        return cublasDdgmm(cb, side, (int)rows, (int)cols, (const double *)X, (int)rows,
                           (const double *)d, 1, (double *)X, (int)rows) != CUBLAS_STATUS_SUCCESS;
    return cublasSdgmm(cb, side, (int)rows, (int)cols, (const float *)X, (int)rows,
                       (const float *)d, 1, (float *)X, (int)rows) != CUBLAS_STATUS_SUCCESS;
}
/* One operand (rows x cols, column-major, leading dimension rows) of the kind: b says B (the
 * sign-sorted kind differs between them). tmp holds rows·cols values (even), signs the
 * sign-sorted kind's side vector (1 / 0.5 along A's columns, +1 / -1 along B's rows). */
static int draw(curandGenerator_t gen, cublasHandle_t cb, int dp, int kind, int b, void *X,
                int64_t rows, int64_t cols, void *tmp, const void *ones, const void *signs) {
    const int64_t cnt = rows * cols, even = cnt + (cnt & 1);
    int bad = dp ? curandGenerateUniformDouble(gen, (double *)X, (size_t)cnt) != CURAND_STATUS_SUCCESS
                 : curandGenerateUniform(gen, (float *)X, (size_t)cnt) != CURAND_STATUS_SUCCESS;
    if (bad) return 1;
    switch (kind) {
    case VK_CANCEL: return affine(cb, dp, X, 2.0, -1.0, ones, cnt);
    case VK_POSITIVE: return 0;
    case VK_WIDE:
        bad = dp ? curandGenerateLogNormalDouble(gen, (double *)tmp, (size_t)even, 0.0, 4.0) !=
                       CURAND_STATUS_SUCCESS
                 : curandGenerateLogNormal(gen, (float *)tmp, (size_t)even, 0.0f, 4.0f) !=
                       CURAND_STATUS_SUCCESS;
        return bad || affine(cb, dp, X, 2.0, -1.0, ones, cnt) || scale(cb, dp, 1, X, cnt, 1, tmp);
    default: /* sign-sorted: 0.5 + 0.5·u, then A's columns or B's rows scaled */
        return affine(cb, dp, X, 0.5, 0.5, ones, cnt) || scale(cb, dp, b, X, rows, cols, signs);
    }
}
#endif

/* One operand on the host (the CPU backend's volume): the same kinds as draw() from the
 * generator of this file (unit(); the wide range's normal draw by Box-Muller). */
static void draw_host(int dp, int kind, int b, void *X, int64_t rows, int64_t cols) {
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < rows; ++i) {
            const double u = 1.0 - unit(); /* (0, 1] */
            double v;
            switch (kind) {
            case VK_CANCEL: v = 2.0 * u - 1.0; break;
            case VK_POSITIVE: v = u; break;
            case VK_WIDE: {
                const double r = sqrt(-2.0 * log(1.0 - unit())), th = 6.283185307179586 * unit();
                v = (2.0 * u - 1.0) * exp(4.0 * r * cos(th));
                break;
            }
            default: v = (0.5 + 0.5 * u) * (b ? (i < rows / 2 ? 1.0 : -1.0) : (j < cols / 2 ? 1.0 : 0.5));
            }
            if (dp) ((double *)X)[i + j * rows] = v;
            else ((float *)X)[i + j * rows] = (float)v;
        }
}

/* COUNT clean products C = A·B (m x k times k x n, A and B of the kind: on the CUDA backend
 * drawn on the device by cuRAND, on the CPU backend on the host, from the printed seed)
 * through abft_sgemm/abft_dgemm in the tight mode, row checksums: the volume of
 * clean products for one configuration. Prints and writes
 * (DIR/bound_volume_<cuda|cpu>_<m>x<n>x<k>_<kind>.md) the number flagged (must be 0), the
 * largest report max_ratio (the tightness over the products) and its median over them. */
static int volume_mode(const int64_t dims[3], int kind, int64_t count, const char *precs,
                       const char *out, uint64_t seed, const char *commit) {
    const int64_t m = dims[0], n = dims[1], k = dims[2];
    const size_t na = (size_t)m * (size_t)k, nb = (size_t)k * (size_t)n, nc = (size_t)m * (size_t)n;
    const size_t nmax = (na > nb ? na : nb) + 1;
    abft_handle_t h = NULL;
    void *dA = NULL, *dB = NULL, *dC = NULL;
#ifdef BENCH_BOUND_CUDA
    cublasHandle_t cb = NULL;
    curandGenerator_t gen = NULL;
    void *ones = NULL, *tmp = NULL, *sa = NULL, *sb = NULL;
#endif
    double *ratios = malloc(sizeof(double) * (size_t)count);
    int failed = ratios == NULL ||
                 abft_create(&h, g_cuda ? ABFT_BACKEND_CUDA : ABFT_BACKEND_CPU) != ABFT_STATUS_SUCCESS ||
                 abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0) != ABFT_STATUS_SUCCESS;
    if (!failed && !g_cuda) {
        dA = malloc(na * 8), dB = malloc(nb * 8), dC = malloc(nc * 8);
        failed = !dA || !dB || !dC;
        rng_state = seed;
    }
#ifdef BENCH_BOUND_CUDA
    if (!failed && g_cuda)
        failed = cublasCreate(&cb) != CUBLAS_STATUS_SUCCESS ||
                 curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10) != CURAND_STATUS_SUCCESS ||
                 curandSetPseudoRandomGeneratorSeed(gen, seed) != CURAND_STATUS_SUCCESS ||
                 cudaMalloc(&dA, na * 8) != cudaSuccess || cudaMalloc(&dB, nb * 8) != cudaSuccess ||
                 cudaMalloc(&dC, nc * 8) != cudaSuccess || cudaMalloc(&ones, nmax * 8) != cudaSuccess ||
                 cudaMalloc(&tmp, nmax * 8) != cudaSuccess || cudaMalloc(&sa, (size_t)k * 8) != cudaSuccess ||
                 cudaMalloc(&sb, (size_t)k * 8) != cudaSuccess;
#endif
    if (failed) {
        fprintf(stderr, "bench_bound: --volume could not start\n");
        return 1;
    }
    char path[512], date[64];
    char stem[96];
    const char *bname = g_cuda ? "cuda" : "cpu";
    if (m == n && n == k && kind == VK_CANCEL && g_cuda)
        snprintf(stem, sizeof stem, "cuda_%lld", (long long)n); /* the first runs' name */
    else
        snprintf(stem, sizeof stem, "%s_%lldx%lldx%lld_%s", bname, (long long)m, (long long)n,
                 (long long)k, vkind_name[kind]);
    FILE *f = open_result(out, "bound_volume", stem, "md", path, sizeof path, date, sizeof date);
    if (f != NULL)
        fprintf(f, "# Clean products in the tight mode, one configuration at a time (bench_bound "
                   "--volume, %s backend)\n\n- date: %s\n- commit: %s\n- seed %llu "
                   "(%s), C = A·B, m = %lld, n = %lld, k = %lld, data %s "
                   "(bench/bench_bound.c), alpha = 1, beta = 0, row checksums\n\nflagged: clean "
                   "products with an entry above its bound (a false alarm); tightness: the "
                   "largest report max_ratio; median: the median over the products of their "
                   "max_ratio.\n\n| prec | products | flagged | tightness | median | seconds |\n"
                   "| --- | ---: | ---: | ---: | ---: | ---: |\n",
                g_cuda ? "CUDA" : "CPU", date, commit ? commit : "unknown",
                (unsigned long long)seed, g_cuda ? "cuRAND Philox" : "the host's splitmix64",
                (long long)m, (long long)n, (long long)k, vkind_name[kind]);
    for (const char *pc = precs; *pc && !failed; ++pc) {
        const int dp = *pc == 'd';
        int64_t flagged = 0;
        double worst = 0.0;
#ifdef BENCH_BOUND_CUDA
        if (g_cuda) { /* the ones vector for the shifts, the sign-sorted kind's side vectors */
            const size_t es = dp ? sizeof(double) : sizeof(float);
            unsigned char *ho = malloc(nmax * es), *hs = malloc((size_t)k * 2 * es);
            for (size_t i = 0; ho && i < nmax; ++i) {
                if (dp) ((double *)ho)[i] = 1.0;
                else ((float *)ho)[i] = 1.0f;
            }
            for (int64_t l = 0; hs && l < k; ++l) {
                const double va = l < k / 2 ? 1.0 : 0.5, vb = l < k / 2 ? 1.0 : -1.0;
                if (dp) ((double *)hs)[l] = va, ((double *)hs)[k + l] = vb;
                else ((float *)hs)[l] = (float)va, ((float *)hs)[k + l] = (float)vb;
            }
            if (!ho || !hs || cudaMemcpy(ones, ho, nmax * es, cudaMemcpyHostToDevice) != cudaSuccess ||
                cudaMemcpy(sa, hs, (size_t)k * es, cudaMemcpyHostToDevice) != cudaSuccess ||
                cudaMemcpy(sb, hs + (size_t)k * es, (size_t)k * es, cudaMemcpyHostToDevice) != cudaSuccess)
                failed = 1;
            free(ho), free(hs);
        }
#endif
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int64_t t = 0; t < count && !failed; ++t) {
            int bad = 0;
            if (!g_cuda) {
                draw_host(dp, kind, 0, dA, m, k);
                draw_host(dp, kind, 1, dB, k, n);
            }
#ifdef BENCH_BOUND_CUDA
            else
                bad = draw(gen, cb, dp, kind, 0, dA, m, k, tmp, ones, sa) ||
                      draw(gen, cb, dp, kind, 1, dB, k, n, tmp, ones, sb) ||
                      cudaDeviceSynchronize() != cudaSuccess;
#endif
            abft_report_t rep;
            abft_status_t st = ABFT_STATUS_SUCCESS;
            if (!bad)
                st = dp ? abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0, (const double *)dA, m,
                                     (const double *)dB, k, 0.0, (double *)dC, m, &rep)
                        : abft_sgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0f, (const float *)dA, m,
                                     (const float *)dB, k, 0.0f, (float *)dC, m, &rep);
            if (bad || st != ABFT_STATUS_SUCCESS) {
                fprintf(stderr, "bench_bound: --volume product %lld failed (%s)\n", (long long)t,
                        bad ? "data" : abft_status_name(st));
                failed = 1;
                break;
            }
            if (rep.detected != 0) {
                ++flagged;
                fprintf(stderr, "bench_bound: --volume fp%d product %lld flagged, ratio %g\n",
                        dp ? 64 : 32, (long long)t, rep.max_ratio);
            }
            ratios[t] = rep.max_ratio;
            if (rep.max_ratio > worst) worst = rep.max_ratio;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (failed) break;
        const double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        qsort(ratios, (size_t)count, sizeof(double), cmp_double);
        printf("volume: %s fp%d %lld x %lld x %lld %s: %lld clean products, %lld flagged, "
               "tightness %.3g, median %.3g, %.1f s\n", bname, dp ? 64 : 32, (long long)m,
               (long long)n, (long long)k, vkind_name[kind], (long long)count, (long long)flagged,
               worst, ratios[count / 2], secs);
        if (f != NULL) {
            fprintf(f, "| fp%d | %lld | %lld | %.3g | %.3g | %.1f |\n", dp ? 64 : 32,
                    (long long)count, (long long)flagged, worst, ratios[count / 2], secs);
            fflush(f);
        }
        if (flagged > 0) failed = 1;
    }
    if (f != NULL) fclose(f);
    if (!g_cuda) free(dA), free(dB), free(dC);
#ifdef BENCH_BOUND_CUDA
    else {
        cudaFree(dA), cudaFree(dB), cudaFree(dC), cudaFree(ones), cudaFree(tmp), cudaFree(sa),
            cudaFree(sb);
        curandDestroyGenerator(gen);
        cublasDestroy(cb);
    }
#endif
    abft_destroy(h);
    free(ratios);
    return failed;
}

/* ---- --sweep N: clean products in the tight mode over the space (--backend: CPU or CUDA) */

/* N clean products C = alpha·op(A)·op(B) + beta·C_old in the tight mode: n x n operands of
 * the nine kinds (n uniform in 1..128), both precisions, every transpose (op(A) = A^T reads
 * the kind's A transposed: its structure then runs along the other index), alpha in
 * {1, -0.7, 3.5, 2^-900 (fp64) or 2^-100 (fp32)}, beta in {0, 1, -0.3} with a random old C,
 * row and full checksums. Every one must pass: prints the count flagged (a false alarm),
 * the largest |residual|/bound, and the calls whose every row the guard sent to the worst
 * case are not told apart (the report does not say). Returns 1 on a flag or a failure. */
static int sweep(int64_t count, uint64_t seed) {
    abft_handle_t h = NULL;
    if (abft_create(&h, g_cuda ? ABFT_BACKEND_CUDA : ABFT_BACKEND_CPU) != ABFT_STATUS_SUCCESS)
        return 1;
    abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0);
    const int64_t NMAX = 128;
    double *A = malloc(sizeof(double) * NMAX * NMAX), *B = malloc(sizeof(double) * NMAX * NMAX);
    double *C = malloc(sizeof(double) * NMAX * NMAX);
    float *As = malloc(sizeof(float) * NMAX * NMAX), *Bs = malloc(sizeof(float) * NMAX * NMAX);
    float *Cs = malloc(sizeof(float) * NMAX * NMAX);
    if (!A || !B || !C || !As || !Bs || !Cs) return 1;
    /* the operands where the backend reads them (device memory on CUDA) */
    void *dA = NULL, *dB = NULL, *dC = NULL;
#ifdef BENCH_BOUND_CUDA
    if (g_cuda && (cudaMalloc(&dA, sizeof(double) * NMAX * NMAX) != cudaSuccess ||
                   cudaMalloc(&dB, sizeof(double) * NMAX * NMAX) != cudaSuccess ||
                   cudaMalloc(&dC, sizeof(double) * NMAX * NMAX) != cudaSuccess))
        return 1;
#endif
    int64_t flagged = 0, failed = 0;
    double worst = 0.0;
    int64_t per_kind[KINDS] = {0};
    double worst_kind[KINDS] = {0};
    rng_state = seed;
    for (int64_t t = 0; t < count; ++t) {
        const int64_t n = 1 + (int64_t)(next_u64() % (uint64_t)NMAX);
        const int kind = (int)(next_u64() % KINDS), dp = (int)(next_u64() & 1u);
        const int ta = (int)(next_u64() & 1u), tb = (int)(next_u64() & 1u);
        const int full = (int)(next_u64() & 1u);
        static const double alphas[3] = {1.0, -0.7, 3.5}, betas[3] = {0.0, 1.0, -0.3};
        const uint64_t ai = next_u64() % 4u;
        const double alpha = ai < 3 ? alphas[ai] : (dp ? 0x1p-900 : 0x1p-100);
        const double beta = betas[next_u64() % 3u];
        fill(A, n, kind, 0);
        fill(B, n, kind, 1);
        for (int64_t i = 0; i < n * n; ++i) C[i] = 2.0 * unit() - 1.0;
        abft_set_checksum_kind(h, full ? ABFT_CHECKSUM_FULL : ABFT_CHECKSUM_ROW);
        abft_report_t rep;
        abft_status_t st;
        if (!dp)
            for (int64_t i = 0; i < n * n; ++i)
                As[i] = (float)A[i], Bs[i] = (float)B[i], Cs[i] = (float)C[i];
        const void *pa = dp ? (const void *)A : (const void *)As;
        const void *pb = dp ? (const void *)B : (const void *)Bs;
        void *pc = dp ? (void *)C : (void *)Cs;
#ifdef BENCH_BOUND_CUDA
        if (g_cuda) {
            const size_t bytes = (dp ? sizeof(double) : sizeof(float)) * (size_t)(n * n);
            if (cudaMemcpy(dA, pa, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
                cudaMemcpy(dB, pb, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
                cudaMemcpy(dC, pc, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
                ++failed;
                continue;
            }
            pa = dA, pb = dB, pc = dC;
        }
#endif
        if (dp)
            st = abft_dgemm(h, (abft_operation_t)ta, (abft_operation_t)tb, n, n, n, alpha,
                            (const double *)pa, n, (const double *)pb, n, beta, (double *)pc, n,
                            &rep);
        else
            st = abft_sgemm(h, (abft_operation_t)ta, (abft_operation_t)tb, n, n, n, (float)alpha,
                            (const float *)pa, n, (const float *)pb, n, (float)beta, (float *)pc,
                            n, &rep);
        if (st != ABFT_STATUS_SUCCESS) {
            ++failed;
            continue;
        }
        ++per_kind[kind];
        if (rep.detected != 0) {
            ++flagged;
            fprintf(stderr, "sweep: product %lld flagged: %s n %lld kind %s t%d%d alpha %g "
                            "beta %g %s, ratio %g\n", (long long)t, dp ? "fp64" : "fp32",
                    (long long)n, kind_name[kind], ta, tb, alpha, beta, full ? "full" : "row",
                    rep.max_ratio);
        }
        if (rep.max_ratio > worst) worst = rep.max_ratio;
        if (rep.max_ratio > worst_kind[kind]) worst_kind[kind] = rep.max_ratio;
    }
    printf("sweep: %lld clean products in the tight mode, %s backend (seed %llu): %lld "
           "flagged, %lld failed calls, largest |residual|/bound %.3g\n", (long long)count,
           g_cuda ? "cuda" : "cpu", (unsigned long long)seed, (long long)flagged,
           (long long)failed, worst);
    for (int k = 0; k < KINDS; ++k)
        printf("  %-12s %9lld products, largest ratio %.3g\n", kind_name[k],
               (long long)per_kind[k], worst_kind[k]);
    free(A), free(B), free(C), free(As), free(Bs), free(Cs);
#ifdef BENCH_BOUND_CUDA
    cudaFree(dA), cudaFree(dB), cudaFree(dC);
#endif
    abft_destroy(h);
    return flagged > 0 || failed > 0;
}

int main(int argc, char **argv) {
    int64_t sizes[8] = {256, 1024, 2048};
    int nsizes = 3, reps = 2, lib = 0, nshapes = 0;
    int64_t shapes[8][3];
    int64_t sweep_n = 0, blocks_n = 0, volume_n = 0, volume_count = 0, vdims[3] = {0, 0, 0};
    int vkind = VK_CANCEL;
    const char *out = "bench/results", *precs = "sd";
    unsigned long long seed_arg = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            nsizes = 0;
            for (char *t = strtok(argv[++i], ","); t != NULL && nsizes < 8; t = strtok(NULL, ","))
                sizes[nsizes++] = atoll(t);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--precision") == 0 && i + 1 < argc) {
            const char *p = argv[++i];
            precs = strcmp(p, "s") == 0 ? "s" : strcmp(p, "d") == 0 ? "d" : "sd";
        } else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
            const char *b = argv[++i];
            if (strcmp(b, "cuda") == 0) {
#ifdef BENCH_BOUND_CUDA
                g_cuda = 1;
#else
                fprintf(stderr, "bench_bound: built without the CUDA backend\n");
                return 2;
#endif
            } else if (strcmp(b, "cpu") != 0) {
                fprintf(stderr, "bench_bound: --backend cpu|cuda\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--volume") == 0 && i + 2 < argc) {
            volume_n = atoll(argv[++i]);
            volume_count = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--volume-shape") == 0 && i + 1 < argc) {
            long long a = 0, b = 0, c = 0; /* --volume's m x n x k in place of n x n x n */
            if (sscanf(argv[++i], "%lldx%lldx%lld", &a, &b, &c) != 3 || a < 1 || b < 1 || c < 1 ||
                a * c > INT32_MAX || b * c > INT32_MAX) {
                fprintf(stderr, "bench_bound: --volume-shape MxNxK (M·K and K·N below 2^31)\n");
                return 2;
            }
            vdims[0] = a, vdims[1] = b, vdims[2] = c;
        } else if (strcmp(argv[i], "--volume-kind") == 0 && i + 1 < argc) {
            const char *t = argv[++i];
            vkind = -1;
            for (int q = 0; q < VKINDS; ++q)
                if (strcmp(t, vkind_name[q]) == 0) vkind = q;
            if (vkind < 0) {
                fprintf(stderr, "bench_bound: --volume-kind cancelling|positive|wide-range|sign-sorted\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--blocks") == 0 && i + 1 < argc) {
            blocks_n = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--no-host") == 0) {
            g_no_host = 1;
        } else if (strcmp(argv[i], "--lib-only") == 0) {
            lib = 1;
        } else if (strcmp(argv[i], "--shapes") == 0 && i + 1 < argc) {
            /* --lib-only's shapes, a comma list of MxNxK */
            for (char *t = strtok(argv[++i], ","); t != NULL && nshapes < 8; t = strtok(NULL, ",")) {
                long long a = 0, b = 0, c = 0;
                if (sscanf(t, "%lldx%lldx%lld", &a, &b, &c) != 3 || a < 1 || b < 1 || c < 1 ||
                    a > 65536 || b > 65536 || c > 65536) {
                    fprintf(stderr, "bench_bound: --shapes MxNxK,... (1..65536 each)\n");
                    return 2;
                }
                shapes[nshapes][0] = a, shapes[nshapes][1] = b, shapes[nshapes][2] = c, ++nshapes;
            }
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed_arg = strtoull(argv[++i], NULL, 10); /* replays a printed seed */
        } else if (strcmp(argv[i], "--kinds") == 0 && i + 1 < argc) {
            /* --lib-only's data kinds, a comma list of their names */
            g_kinds = 0;
            for (char *t = strtok(argv[++i], ","); t != NULL; t = strtok(NULL, ",")) {
                int found = -1;
                for (int q = 0; q < KINDS; ++q)
                    if (strcmp(t, kind_name[q]) == 0) found = q;
                if (found < 0) {
                    fprintf(stderr, "bench_bound: --kinds: no data kind \"%s\"\n", t);
                    return 2;
                }
                g_kinds |= 1u << found;
            }
        } else if (strcmp(argv[i], "--sweep") == 0 && i + 1 < argc) {
            sweep_n = atoll(argv[++i]);
        } else {
            fprintf(stderr, "usage: bench_bound [--sizes 256,1024,2048] [--reps R] "
                            "[--precision s|d|both] [--backend cpu|cuda] [--out DIR] "
                            "[--lib-only [--shapes MxNxK,...] [--kinds a,b] [--no-host]] [--seed S] [--sweep N] "
                            "[--blocks N] [--volume N COUNT [--volume-shape MxNxK] [--volume-kind K]]\n");
            return 2;
        }
    }
    for (int s = 0; s < nsizes; ++s)
        if (sizes[s] < 1 || sizes[s] > 16384 || reps < 1) {
            fprintf(stderr, "bench_bound: sizes 1..16384, reps >= 1\n");
            return 2;
        }
    const char *commit = getenv("GIT_COMMIT");
    uint64_t seed = seed_arg != 0 ? (uint64_t)seed_arg : (uint64_t)time(NULL);
    const char *bname = g_cuda ? "cuda" : "cpu";
    printf("bench_bound: seed %llu, %d reps, %s backend, residuals in %s\n",
           (unsigned long long)seed, reps, bname, QUAD_NAME);
    if (sweep_n > 0) return sweep(sweep_n, seed);
    if (blocks_n > 0) return blocks_mode(blocks_n, precs, out, seed, commit);
    if (volume_n > 0 && volume_count > 0) {
        if (vdims[0] == 0) vdims[0] = vdims[1] = vdims[2] = volume_n;
        return volume_mode(vdims, vkind, volume_count, precs, out, seed, commit);
    }
    if (lib) {
        if (nshapes == 0) /* the squares of --sizes */
            for (int s = 0; s < nsizes; ++s) shapes[s][0] = shapes[s][1] = shapes[s][2] = sizes[s];
        return lib_only((const int64_t(*)[3])shapes, nshapes ? nshapes : nsizes, reps, precs, out,
                        seed, commit);
    }
    abft_handle_t h = NULL;
    if (abft_create(&h, g_cuda ? ABFT_BACKEND_CUDA : ABFT_BACKEND_CPU) != ABFT_STATUS_SUCCESS)
        return 1;
    row_result_t res[2 * 8 * KINDS];
    int nres = 0, failed = 0;
    printf("%-4s %6s %-12s %12s %12s %12s %12s %12s %12s %12s %12s %12s %10s %10s %10s %10s %10s "
           "%7s %7s %7s\n", "prec", "n", "data", "lib worst", "lib prob", "2nd moment",
           "rw drift", "prefix", "sketch", "sk low", "guarded", "grouped", "w1", "w2", "w16",
           "w16b", "w16c", "g1 max", "g2 max", "g16 max");
    for (const char *pc = precs; *pc; ++pc)
        for (int s = 0; s < nsizes; ++s)
            for (int kind = 0; kind < KINDS; ++kind) {
                const int64_t n = sizes[s];
                const size_t nn = (size_t)n * (size_t)n;
                double *A = malloc(nn * sizeof(double)), *B = malloc(nn * sizeof(double));
                double *C = malloc(nn * sizeof(double));
                if (A == NULL || B == NULL || C == NULL) return 1;
                row_result_t r = {*pc, n, kind, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, INFINITY, 0.0, 0.0,
                                  0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
                const double u = *pc == 'd' ? 0x1p-53 : 0x1p-24;
                for (int rep = 0; rep < reps; ++rep) {
                    rng_state = seed + 1000003ull * (uint64_t)(nres * reps + rep);
                    fill(A, n, kind, 0);
                    fill(B, n, kind, 1);
                    if (*pc == 's') /* the data as the fp32 GEMM sees it */
                        for (size_t i = 0; i < nn; ++i)
                            A[i] = (float)A[i], B[i] = (float)B[i];
                    double w = run(h, *pc, n, A, B, C, ABFT_BOUND_PROBABILISTIC);
                    double x = run(h, *pc, n, A, B, C, ABFT_BOUND_WORST_CASE);
                    if (w < 0.0 || x < 0.0) {
                        failed = 1;
                        continue;
                    }
                    if (w > r.lib_prob) r.lib_prob = w;
                    if (x > r.lib_worst) r.lib_worst = x;
                    candidates(n, u, A, B, C, &r.cs, &r.rwd, &r.pre, &r.sk, &r.sk_low, &r.gd, &r.gr,
                               &r.w1, &r.w2, &r.g1max, &r.g2max, &r.ww, &r.gwmax,
                               &r.wb, &r.wc);
                }
                free(A), free(B), free(C);
                res[nres++] = r;
                printf("%-4c %6lld %-12s %12.3g %12.3g %12.3g %12.3g %12.3g %12.3g %12.3g "
                       "%12.3g %12.3g %10.3g %10.3g %10.3g %10.3g %10.3g %7.0f %7.0f %7.0f\n", r.prec,
                       (long long)n, kind_name[kind], r.lib_worst, r.lib_prob, r.cs, r.rwd,
                       r.pre, r.sk, r.sk_low, r.gd, r.gr, r.w1, r.w2, r.ww, r.wb, r.wc, r.g1max,
                       r.g2max, r.gwmax);
                fflush(stdout);
            }
    abft_destroy(h);

    char path[512], date[64];
    FILE *f = open_result(out, "bound", bname, "md", path, sizeof path, date, sizeof date);
    if (f != NULL) {
        fprintf(f, "# Checksum bound tightness (bench_bound, %s backend)\n\n- date: %s\n- commit: "
                   "%s\n- seed %llu, %d products per case, C = A·B, m = n = k\n\n"
                   "Largest real residual / bound of the unit-weight row checksum over rows and "
                   "products (1 = the bound is reached; above 1 it failed). lib: the library's "
                   "report.max_ratio in each bound mode (worst case; probabilistic, factor 4). "
                   "The three candidates, lambda = 4: second moment "
                   "`lambda·u·sqrt(k)·sqrt(k·sq_i)`, random walk with drift "
                   "`lambda·u·sqrt((k/3)·(sq_i/2 + sum_j C_ij^2/3))`, sq_i = "
                   "sum_l a_il^2·sum_j b_lj^2, and prefix `lambda·u·sqrt(sum_j sum_t "
                   "(P_tj^2 + p_tj^2))` with P_tj = sum_{l <= t} a_il·b_lj, the partial sums "
                   "in the natural order of l, and its sketch with 32 normal vectors, "
                   "lambda_q = %.3g (a row's false alarm <= 2^-40 under the rounding model); "
                   "sk low: the smallest sketch / exact sum of squared prefixes seen; "
                   "guarded: the larger of the sketched bound and the coherent one "
                   "(the checksum direction's own partial sums, exact); grouped: the sketch "
                   "plus, for each group of columns of B equal up to sign and a power of "
                   "two, the group's own coherent partial sums (exact); w1, w2: the sketch with "
                   "each l's share weighted by g1_l, the largest set of columns whose b_lj agree "
                   "up to sign and a power of two, or by g2_l, the same for the pairs "
                   "(b_{l-1,j}, b_lj) with one common scale; w16: the same for the last 16 "
                   "rows up to l (g1 max, g2 max, g16 max: the largest seen; g16 over full "
                   "windows, l >= 15); w16b: w16 plus the short nodes a blocked sum "
                   "starts at every block, each with the class size of its own rows; "
                   "w16c: w16b with each class's exact coherent sum for the short nodes "
                   "(bench/bench_bound.c).\n\n"
                   "| prec | n | data | lib worst | lib prob | second moment | rw drift | prefix "
                   "| sketched prefix | sk low | guarded | grouped | w1 | w2 | w16 | w16b | w16c "
                   "| g1 max | g2 max | g16 max |\n"
                   "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
                   "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
                g_cuda ? "CUDA (cuBLAS)" : "CPU", date, commit ? commit : "unknown",
                (unsigned long long)seed, reps, lambda_q());
        for (int i = 0; i < nres; ++i)
            fprintf(f, "| fp%s | %lld | %s | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | "
                       "%.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.0f | %.0f | %.0f |\n",
                    res[i].prec == 'd' ? "64" : "32", (long long)res[i].n, kind_name[res[i].kind],
                    res[i].lib_worst, res[i].lib_prob, res[i].cs, res[i].rwd, res[i].pre,
                    res[i].sk, res[i].sk_low, res[i].gd, res[i].gr, res[i].w1, res[i].w2,
                    res[i].ww, res[i].wb, res[i].wc, res[i].g1max, res[i].g2max, res[i].gwmax);
        sequential_bias(f);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/bound_%s.json", out, bname);
    f = fopen(path, "w");
    if (f != NULL) {
        fprintf(f, "{\"bench\": \"bench_bound\", \"date\": \"%s\", \"commit\": \"%s\", \"seed\": "
                   "%llu, \"reps\": %d, \"rows\": [",
                date, commit ? commit : "unknown", (unsigned long long)seed, reps);
        for (int i = 0; i < nres; ++i)
            fprintf(f, "%s\n {\"precision\": \"%c\", \"n\": %lld, \"data\": \"%s\", "
                       "\"lib_worst\": %.6g, \"lib_prob\": %.6g, \"second_moment\": %.6g, "
                       "\"rw_drift\": %.6g, \"prefix\": %.6g, \"sketched_prefix\": %.6g, "
                       "\"sketch_low\": %.6g, \"guarded\": %.6g, \"grouped\": %.6g, "
                       "\"class_weighted_1\": %.6g, \"class_weighted_2\": %.6g, "
                       "\"class_weighted_16\": %.6g, \"class_weighted_16_blocked\": %.6g, "
                       "\"class_coherent_16_blocked\": %.6g, \"g1_max\": %.0f, \"g2_max\": %.0f, "
                       "\"g16_max\": %.0f}",
                    i ? "," : "", res[i].prec, (long long)res[i].n, kind_name[res[i].kind],
                    res[i].lib_worst, res[i].lib_prob, res[i].cs, res[i].rwd, res[i].pre,
                    res[i].sk, res[i].sk_low, res[i].gd, res[i].gr, res[i].w1, res[i].w2,
                    res[i].ww, res[i].wb, res[i].wc, res[i].g1max, res[i].g2max, res[i].gwmax);
        fprintf(f, "\n]}\n");
        fclose(f);
    }
    return failed;
}

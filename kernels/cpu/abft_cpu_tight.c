/* abft CPU backend: the tight pass of ABFT_BOUND_TIGHT (kernels/abft_kernels.h; the model
 * and its derivation: docs/bound.md, "Tight mode").
 *
 * For row i of C = op(A)·op(B) and checksum weights w (w_j = 1 or j + 1) the rounding error
 * of sum_j w_j·C_ij is, under the model of independent roundings, sub-Gaussian with a
 * variance proxy u^2·V. This pass computes an upper estimate of V from three parts:
 *
 *   1. the long nodes, each addition rounding u·|node|: sketched with SK_Q Gaussian vectors
 *      (Z = op(B)·diag(w)·G, then running sums x_r of a_il·Z_lr along l), the nodes of any
 *      blocking into runs of WIN or more terms (k-blocks, split-k: P_t - P_b for the
 *      block's start b) are at most D = max(pmax - lo, hi - pmin) per sketch column over an
 *      aligned window of WIN terms ([pmin, pmax] the window's range of x, [lo, hi] the range
 *      up to its end, 0 included): (len + 2)·gW·D^2 per window, two for the blocks' ends
 *      (abft_tight_window), where gW(t)
 *      bounds how many columns can share the rounding of the node ending at t (columns
 *      equal up to one sign and power of two on the WIN rows up to t: rounding commutes
 *      with both, and a rounding shared by g columns adds at most g times their squares);
 *   2. the short nodes of a blocked order (k-blocks, split-k, MMA steps restart the sums):
 *      a node of s < WIN entries ending at e is shared by at most g_s(e) columns and its
 *      value obeys S^2 <= s·(sum of its products^2): sum_l a_il^2·B2_l·Ws_l;
 *   3. the final roundings of alpha·D_ij (and their share of the sum with beta·C_old):
 *      2·gW(k-1)·sum_j w_j^2·P_(k-1)j^2 (the last prefix again);
 *   1b. for each lane order of a->ord (abft_tight_common.h: S lanes taking tiles of b terms
 *      in turn, each summed from zero, combined at the end), in place of part 1 where it is
 *      the larger: a sketch Zo with independent draws per lane, every term's gL·y^2 (y the
 *      running sum of a_il·Zo_l: all lanes at once) and the combination's
 *      (S(S+3)/2 - 1)·gL·y^2 at each segment's end, gL counted on the lane's last WIN rows;
 *
 * and the rounding of Yb = op(B)·w as stored (each entry off by at most u_chk·|Yb_l|,
 * independently), which alpha·op(A) carries into the reference: sum_l a_il^2·Yb_l^2.
 * Terms below the spacing of the sum they join are not noise; the protocol bounds them per
 * entry on the host where the compare flags one (abft_tight_common.h).
 *
 * The along-l guard. Independence along l fails where the products of a row do not vary
 * against the partial sum's spacing (near-constant or few-valued products, e.g. constant
 * data or short periods): the additions then round alike. Per aligned block of WIN terms,
 * d_a (row i of op(A)) and d_b (column j of op(B)) count the distinct magnitudes after
 * rounding to r bits, r such that values within 16·u·k of each other count as one. The
 * model takes the products to vary as much as the more varied factor; a row meeting a
 * column where both factors take fewer than D = 8 values on a block is "risky": T = -1,
 * and the compare uses the worst-case bound. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "abft_cpu_host_blas.h"
#include "abft_kernels.h"
#include "abft_tight_common.h"

enum { SK_Q = ABFT_TIGHT_Q, WIN = ABFT_TIGHT_WIN, NWIN = ABFT_TIGHT_NWIN, CH = 64 };

static inline double opa(const abft_tight_args_t *a, int64_t i, int64_t l) {
    size_t o = a->transa ? (size_t)(l + i * a->lda) : (size_t)(i + l * a->lda);
    return a->prec == ABFT_PREC_D ? ((const double *)a->A)[o] : (double)((const float *)a->A)[o];
}
static inline double opb(const abft_tight_args_t *a, int64_t l, int64_t j) {
    size_t o = a->transb ? (size_t)(j + l * a->ldb) : (size_t)(l + j * a->ldb);
    return a->prec == ABFT_PREC_D ? ((const double *)a->B)[o] : (double)((const float *)a->B)[o];
}

/* The multiplicity of each of the n keys (cnt_of[j], may be NULL) and the largest one (a
 * collision of the hash only merges classes, so a count can only grow: safe). tab and cnt:
 * cap slots, cap a power of two >= 2n. */
static int64_t class_counts(const uint64_t *key, int64_t n, uint64_t *tab, int64_t *cnt,
                            int64_t cap, int64_t *cnt_of) {
    int64_t best = n > 0;
    for (int64_t s = 0; s < cap; ++s) cnt[s] = 0;
    for (int64_t j = 0; j < n; ++j) {
        uint64_t h = abft_tight_mix(key[j]) & (uint64_t)(cap - 1);
        while (cnt[h] != 0 && tab[h] != key[j]) h = (h + 1) & (uint64_t)(cap - 1);
        tab[h] = key[j];
        if (++cnt[h] > best) best = cnt[h];
    }
    if (cnt_of != NULL)
        for (int64_t j = 0; j < n; ++j) {
            uint64_t h = abft_tight_mix(key[j]) & (uint64_t)(cap - 1);
            while (tab[h] != key[j]) h = (h + 1) & (uint64_t)(cap - 1);
            cnt_of[j] = cnt[h];
        }
    return best;
}

/* The number of distinct magnitudes among len values (exactly, by their bits), with a
 * scratch table tab of cap slots (a power of two >= 2·len; a collision of the hash only
 * merges values: the count can only fall, which the guard reads as more repetition). */
static int64_t distinct_exact(const double *v, int64_t len, uint64_t *tab, int64_t cap) {
    int64_t d = 0;
    for (int64_t s = 0; s < cap; ++s) tab[s] = 0;
    for (int64_t x = 0; x < len; ++x) {
        /* the lowest bit set: 0 marks an empty slot (values that differ only there merge) */
        const uint64_t key = abft_tight_bits(fabs(v[x])) | 1u;
        uint64_t h = abft_tight_mix(key) & (uint64_t)(cap - 1);
        while (tab[h] != 0 && tab[h] != key) h = (h + 1) & (uint64_t)(cap - 1);
        if (tab[h] == 0) tab[h] = key, ++d;
    }
    return d;
}

/* Entry b = op(B)(l, j) into the sketch Z (row l: both weight columns) and, where B2 is not
 * NULL, B2. */
static inline void sketch_add(double *Z, double *B2, const double *G, int64_t k, int64_t l,
                              int64_t j, double b) {
    if (b == 0.0) return;
    const double w1 = (double)(j + 1), *g = G + j * SK_Q;
    double *z0 = Z + (size_t)l * 2 * SK_Q, *z1 = z0 + SK_Q;
    for (int q = 0; q < SK_Q; ++q) z0[q] += b * g[q], z1[q] += w1 * b * g[q];
    if (B2 == NULL) return;
    B2[l] += b * b;
    B2[l + k] += w1 * w1 * b * b;
}

/* Entry b = op(B)(l, j) into each of the nord lane orders' sketches: Zo (nord blocks of
 * k x 2·SK_Q), with the draws G of the lane of l in that order (lane: nord blocks of k, the
 * lane of each l; G: a block of n x SK_Q per lane). */
static inline void sketch_lanes(int nord, int64_t k, int64_t n, double *Zo, const double *G,
                                const unsigned char *lane, int64_t l, int64_t j, double b) {
    for (int o = 0; o < nord; ++o)
        sketch_add(Zo + (size_t)o * (size_t)k * 2 * SK_Q, NULL,
                   G + (size_t)lane[(size_t)o * (size_t)k + (size_t)l] * (size_t)n * SK_Q, k, l, j, b);
}

/* Z = op(B)·diag(w)·G and B2 = (op(B)∘op(B))·w^2 (both weight columns; Z and B2 zeroed
 * here), and each of the nord lane orders' sketches Zo (zeroed by the caller), by blocks of
 * CH rows of op(B), each walked along its stored contiguous index: down the columns of B
 * when op(B) = B, along its rows otherwise. */
static void sketch_b(const abft_tight_args_t *a, double *Z, double *B2, const double *G, int nord,
                     double *Zo, const unsigned char *lane) {
    const int64_t n = a->n, k = a->k;
    memset(Z, 0, sizeof(double) * (size_t)k * 2 * SK_Q);
    memset(B2, 0, sizeof(double) * (size_t)k * 2);
#pragma omp parallel for schedule(static)
    for (int64_t l0 = 0; l0 < k; l0 += CH) {
        const int64_t l1 = l0 + CH < k ? l0 + CH : k;
        if (a->transb) {
            for (int64_t l = l0; l < l1; ++l)
                for (int64_t j = 0; j < n; ++j) {
                    const double b = opb(a, l, j);
                    sketch_add(Z, B2, G, k, l, j, b);
                    sketch_lanes(nord, k, n, Zo, G, lane, l, j, b);
                }
        } else {
            for (int64_t j = 0; j < n; ++j)
                for (int64_t l = l0; l < l1; ++l) {
                    const double b = opb(a, l, j);
                    sketch_add(Z, B2, G, k, l, j, b);
                    sketch_lanes(nord, k, n, Zo, G, lane, l, j, b);
                }
        }
    }
}

/* The filter (a->filter; docs/bound.md, "Two stages"): the parts of the full pass below
 * that need no class weights, windows, lane orders or guards, each at most the full pass's
 * (the natural order's squares x_t^2 of the first ABFT_TIGHT_FILTER_Q sketch columns, taken
 * at the samples of abft_tight_filter_sample only, <= a window's D^2, class weights 1, the
 * short nodes' Ws_l >= 1 + sum_{s<WIN} s, their sum_j w_j^2·b_lj^2 estimated from the sketch
 * as abft_tight_common.h states): T >= 0
 * everywhere, 0 where not finite (the full pass decides such rows). The CUDA filter computes
 * the same in fp32 (kernels/cuda/abft_cuda_filter.cu); this is its oracle. */
static abft_status_t cpu_filter(const abft_tight_args_t *a) {
    enum { FQ = ABFT_TIGHT_FILTER_Q, NZ = 2 * FQ, RB = 32, JB = 256 };
    const int64_t m = a->m, n = a->n, k = a->k;
    const int64_t ks = a->ksplit > 0 && a->ksplit < k ? a->ksplit : 0;
    /* the host BLAS takes 32-bit sizes: beyond them, the scalar sketch of the full pass */
    const int blas = k <= INT_MAX && n <= INT_MAX && a->ldb <= INT_MAX;
    double *Gw = malloc(sizeof(double) * (size_t)n * NZ);     /* n x NZ: G, diag(w)·G */
    double *Z = malloc(sizeof(double) * (size_t)k * NZ);      /* k x NZ, then by rows */
    double *Zr = malloc(sizeof(double) * (size_t)k * NZ);     /* k rows of NZ */
    double *aux = malloc(sizeof(double) * (size_t)k * 4);     /* per term: the short nodes'
                                                                 estimates, Yb^2 */
    double *Bd = NULL, *Zs = NULL, *B2 = NULL, *G = NULL;
    if (!blas) {
        Zs = malloc(sizeof(double) * (size_t)k * 2 * SK_Q);
        B2 = malloc(sizeof(double) * (size_t)k * 2);
        G = malloc(sizeof(double) * (size_t)n * SK_Q);
    } else if (a->prec == ABFT_PREC_S) {
        Bd = malloc(sizeof(double) * (size_t)k * JB);
    }
    if (!Gw || !Z || !Zr || !aux || (!blas && (!Zs || !B2 || !G)) ||
        (blas && a->prec == ABFT_PREC_S && !Bd)) {
        free(Gw), free(Z), free(Zr), free(aux), free(Bd), free(Zs), free(B2), free(G);
        return ABFT_STATUS_ALLOC_FAILED;
    }
    /* Z = op(B)·Gw (k x NZ) in fp64: the host BLAS (fp32 data widened a block of JB columns
     * at a time), or the full pass's scalar sketch */
    for (int64_t j = 0; j < n; ++j)
        for (int c = 0; c < FQ; ++c) {
            const double g = abft_tight_gauss_lane(j, c, 0);
            Gw[j + (size_t)c * (size_t)n] = g;
            Gw[j + (size_t)(FQ + c) * (size_t)n] = (double)(j + 1) * g;
        }
    if (blas) {
        const int ik = (int)k, nz = NZ, in = (int)n, ildb = (int)a->ldb;
        const double one = 1.0, zero = 0.0;
        if (a->prec == ABFT_PREC_D) {
            const char tb = a->transb ? 'T' : 'N', nn = 'N';
            ABFT_HOST_BLAS(dgemm, (&tb, &nn, &ik, &nz, &in, &one, (const double *)a->B, &ildb, Gw,
                                   &in, &zero, Z, &ik));
        } else {
            const float *Bs = (const float *)a->B;
            memset(Z, 0, sizeof(double) * (size_t)k * NZ);
            for (int64_t j0 = 0; j0 < n; j0 += JB) {
                const int64_t jb = n - j0 < JB ? n - j0 : JB;
                for (int64_t j = 0; j < jb; ++j)
                    for (int64_t l = 0; l < k; ++l)
                        Bd[l + (size_t)j * (size_t)k] =
                            a->transb ? (double)Bs[(size_t)(j0 + j) + (size_t)l * (size_t)a->ldb]
                                      : (double)Bs[(size_t)l + (size_t)(j0 + j) * (size_t)a->ldb];
                const int ijb = (int)jb;
                const char nn = 'N';
                ABFT_HOST_BLAS(dgemm, (&nn, &nn, &ik, &nz, &ijb, &one, Bd, &ik, Gw + j0, &in, &one,
                                       Z, &ik));
            }
        }
    } else {
        for (int64_t j = 0; j < n; ++j)
            for (int q = 0; q < SK_Q; ++q)
                G[(size_t)j * SK_Q + (size_t)q] = abft_tight_gauss_lane(j, q, 0);
        sketch_b(a, Zs, B2, G, 0, NULL, NULL);
        for (int64_t l = 0; l < k; ++l)
            for (int c = 0; c < FQ; ++c) {
                Z[l + (size_t)c * (size_t)k] = Zs[(size_t)l * 2 * SK_Q + (size_t)c];
                Z[l + (size_t)(FQ + c) * (size_t)k] = Zs[(size_t)l * 2 * SK_Q + SK_Q + (size_t)c];
            }
    }
    const double ws = 1.0 + (double)(WIN * (WIN - 1) / 2); /* abft_tight_ws, classes of 1 */
    const double sc = ABFT_TIGHT_FILTER_SHORT / FQ;
    for (int64_t l = 0; l < k; ++l) {
        double z2[2] = {0.0, 0.0}; /* the short nodes' estimate, as the CUDA filter's */
        for (int c = 0; c < NZ; ++c) {
            const double z = Z[l + (size_t)c * (size_t)k];
            Zr[(size_t)l * NZ + (size_t)c] = z;
            z2[c / FQ] += z * z;
        }
        const double y0 = a->Yb[l], y1 = a->Yb[l + a->ldyb];
        aux[4 * l] = ws * (sc * z2[0]), aux[4 * l + 1] = ws * (sc * z2[1]);
        aux[4 * l + 2] = y0 * y0, aux[4 * l + 3] = y1 * y1;
    }
    const double aal = fabs(a->alpha), u2 = a->u * a->u, uc2 = a->u_chk * a->u_chk;
    /* the scan: RB rows at a time, each term's NZ products in one vector loop */
#pragma omp parallel for schedule(static)
    for (int64_t i0 = 0; i0 < m; i0 += RB) {
        const int rb = m - i0 < RB ? (int)(m - i0) : RB;
        double P[RB][NZ], V[RB][NZ], F[RB][NZ], su[RB][4];
        memset(P, 0, sizeof P), memset(V, 0, sizeof V), memset(F, 0, sizeof F);
        memset(su, 0, sizeof su);
        for (int64_t l = 0; l < k; ++l) {
            const double *z = Zr + (size_t)l * NZ, *ax = aux + 4 * l;
            const int smp = abft_tight_filter_sample(l, k, ks), fin = l == k - 1 || l == ks - 1;
            for (int r = 0; r < rb; ++r) {
                const double x = opa(a, i0 + r, l), x2 = x * x;
                double *pr = P[r];
                for (int c = 0; c < NZ; ++c) pr[c] += x * z[c];
                if (smp)
                    for (int c = 0; c < NZ; ++c) V[r][c] += pr[c] * pr[c];
                if (fin)
                    for (int c = 0; c < NZ; ++c) F[r][c] += 2.0 * (pr[c] * pr[c]);
                for (int q = 0; q < 4; ++q) su[r][q] += x2 * ax[q];
            }
        }
        for (int r = 0; r < rb; ++r)
            for (int q = 0; q < 2; ++q) {
                double vs = 0.0, fs = 0.0;
                for (int c = 0; c < FQ; ++c) vs += V[r][q * FQ + c], fs += F[r][q * FQ + c];
                const double t = a->lambda * aal * sqrt(u2 * ((vs + fs) / SK_Q + su[r][q]) +
                                                        uc2 * su[r][2 + q]);
                a->T[i0 + r + q * a->ldt] = t < INFINITY ? t : 0.0;
            }
    }
    free(Gw), free(Z), free(Zr), free(aux), free(Bd), free(Zs), free(B2), free(G);
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_cpu_tight(const abft_kctx_t *ctx, const abft_tight_args_t *a) {
    (void)ctx;
    const int64_t m = a->m, n = a->n, k = a->k;
    if (a->nrisky) *a->nrisky = 0;
    if (m == 0) return ABFT_STATUS_SUCCESS;
    if (n == 0 || k == 0) {
        for (int64_t i = 0; i < m; ++i) a->T[i] = a->T[i + a->ldt] = 0.0;
        if (a->nrisky) *a->nrisky = 0;
        return ABFT_STATUS_SUCCESS;
    }
    if (a->filter) return cpu_filter(a);
    const int64_t nblk = (k + WIN - 1) / WIN;
    const int64_t ks = a->ksplit > 0 && a->ksplit < k ? a->ksplit : 0;
    /* the lane orders (abft_tight_common.h): their sketches Zo, each term's lane, class
     * weights gl; G holds smax lanes' draws, the first the natural order's */
    int nord = 0, smax = 1;
    if (!abft_tight_orders(a->ord, a->nord, &nord, &smax)) return ABFT_STATUS_INVALID_VALUE;
    int64_t cap = 2;
    while (cap < 2 * n) cap *= 2;
    double *Z = malloc(sizeof(double) * (size_t)k * 2 * SK_Q);
    double *B2 = malloc(sizeof(double) * (size_t)k * 2);
    double *gw = malloc(sizeof(double) * (size_t)k * (NWIN + 1)); /* G_p(l), then Ws_l */
    double *G = malloc(sizeof(double) * (size_t)smax * (size_t)n * SK_Q);
    uint64_t *key = malloc(sizeof(uint64_t) * (size_t)n * NWIN);
    uint64_t *tab = malloc(sizeof(uint64_t) * (size_t)cap);
    int64_t *cnt = malloc(sizeof(int64_t) * (size_t)cap);
    int64_t *lnz = malloc(sizeof(int64_t) * (size_t)n);
    double *lnzv = malloc(sizeof(double) * (size_t)n);
    double *rb = malloc(sizeof(double) * (size_t)(CH + WIN) * (size_t)n);
    int64_t *cof = malloc(sizeof(int64_t) * (size_t)n), *sub = malloc(sizeof(int64_t) * (size_t)n);
    uint32_t *mask = calloc((size_t)nblk, sizeof(uint32_t));
    double *Zo = nord ? calloc((size_t)nord * (size_t)k * 2 * SK_Q, sizeof(double)) : NULL;
    unsigned char *lane = nord ? malloc((size_t)nord * (size_t)k) : NULL;
    double *gl = nord ? malloc(sizeof(double) * (size_t)nord * (size_t)k) : NULL;
    if (!Z || !B2 || !gw || !G || !key || !tab || !cnt || !lnz || !lnzv || !rb || !cof || !sub ||
        !mask || (nord && (!Zo || !lane || !gl))) {
        free(Z), free(B2), free(gw), free(G), free(key), free(tab), free(cnt), free(lnz),
            free(lnzv), free(rb), free(cof), free(sub), free(mask), free(Zo), free(lane), free(gl);
        return ABFT_STATUS_ALLOC_FAILED;
    }
    double *Ws = gw + (size_t)k * NWIN;
    const int r = abft_tight_qbits(a->u, k); /* the guard's quantization */

    /* Z = op(B)·diag(w)·G and B2 = (op(B)∘op(B))·w^2, both weight columns */
    for (int s = 0; s < smax; ++s) /* lane 0's draws are abft_tight_gauss's */
        for (int64_t j = 0; j < n; ++j)
            for (int q = 0; q < SK_Q; ++q)
                G[((size_t)s * (size_t)n + (size_t)j) * SK_Q + (size_t)q] = abft_tight_gauss_lane(j, q, s);
    for (int o = 0; o < nord; ++o)
        for (int64_t l = 0; l < k; ++l)
            lane[(size_t)o * (size_t)k + (size_t)l] =
                (unsigned char)abft_tight_lane(l, ks > 0 && l >= ks ? ks : 0, a->ord[o].S, a->ord[o].b);
    sketch_b(a, Z, B2, G, nord, Zo, lane);

    /* class sizes G_p(l) of the windows of 2^p rows ending at l (fewer at the top), each
     * column scaled by the sign and power of two of its last nonzero entry up to l: columns
     * equal up to one such scale on a window have equal keys. The rows of op(B) a block of
     * CH rows needs (and the WIN - 1 before it) are gathered first, row-major in rb. */
    for (int64_t j = 0; j < n; ++j) lnz[j] = -1, lnzv[j] = 0.0;
    for (int64_t l0 = 0; l0 < k; l0 += CH) {
        const int64_t l1 = l0 + CH < k ? l0 + CH : k, lb = l0 >= WIN - 1 ? l0 - (WIN - 1) : 0;
        if (a->transb) {
            for (int64_t l = lb; l < l1; ++l)
                for (int64_t j = 0; j < n; ++j)
                    rb[(size_t)(l - lb) * (size_t)n + (size_t)j] = opb(a, l, j);
        } else {
            for (int64_t j = 0; j < n; ++j)
                for (int64_t l = lb; l < l1; ++l)
                    rb[(size_t)(l - lb) * (size_t)n + (size_t)j] = opb(a, l, j);
        }
#define ROWB(l, j) rb[(size_t)((l) - lb) * (size_t)n + (size_t)(j)]
        for (int64_t l = l0; l < l1; ++l) {
            for (int64_t j = 0; j < n; ++j) {
                const double b = ROWB(l, j);
                if (b != 0.0) lnz[j] = l, lnzv[j] = b;
                key[j] = abft_tight_mant_key(b);
            }
            int64_t g = class_counts(key, n, tab, cnt, cap, cof);
            gw[l] = (double)g;
            /* a longer window only refines the classes: the columns alone at a window stay
             * alone, so each longer window counts only the others (sub, nsub) */
            int64_t nsub = 0;
            for (int64_t j = 0; j < n; ++j)
                if (cof[j] > 1) sub[nsub++] = j;
            /* each lane order's node at l spans the lane's terms up to l: its class weight
             * is counted on the lane's last WIN rows (the columns alone at row l stay alone) */
            for (int o = 0; o < nord; ++o) {
                double go = 1.0;
                if (g > 1) {
                    const int S = a->ord[o].S, bo = a->ord[o].b;
                    const int64_t base = ks > 0 && l >= ks ? ks : 0;
                    uint64_t *lk = key + n;
                    for (int64_t x = 0; x < nsub; ++x) {
                        uint64_t h = ABFT_TIGHT_KEY_SEED;
                        for (int i = 0; i < WIN; ++i) {
                            const int64_t row = abft_tight_lane_row(l, base, S, bo, i);
                            if (row < 0) break;
                            h = abft_tight_lane_key_step(h, opb(a, row, sub[x]), i);
                        }
                        lk[x] = h;
                    }
                    go = (double)class_counts(lk, nsub, tab, cnt, cap, NULL);
                }
                gl[(size_t)o * (size_t)k + (size_t)l] = go;
            }
            for (int p = 1; p < NWIN; ++p) {
                if (g == 1) {
                    gw[l + p * k] = 1.0;
                    continue;
                }
                for (int64_t x = 0; x < nsub; ++x) {
                    const int64_t j = sub[x];
                    /* the scale: sign sg and exponent 1 - e of the anchor, the last nonzero
                     * entry up to l (applied by ldexp: exact, and the same for columns
                     * equal up to the scale even where it over- or underflows) */
                    int e = 1;
                    double sg = 1.0;
                    if (lnz[j] >= 0) {
                        frexp(lnzv[j], &e);
                        sg = copysign(1.0, lnzv[j]);
                    }
                    uint64_t h = ABFT_TIGHT_KEY_SEED;
                    const int64_t len = (int64_t)1 << p;
                    for (int64_t t = 0; t < len && l - t >= 0; ++t)
                        h = abft_tight_key_step(h, ROWB(l - t, j), sg, e, t);
                    key[x] = h;
                }
                g = nsub > 0 ? class_counts(key, nsub, tab, cnt, cap, cof) : 1;
                gw[l + p * k] = (double)g;
                int64_t keep = 0;
                for (int64_t x = 0; x < nsub; ++x)
                    if (cof[x] > 1) sub[keep++] = sub[x];
                nsub = keep;
            }
        }
#undef ROWB
    }
    for (int64_t l = 0; l < k; ++l) Ws[l] = abft_tight_ws(gw, k, l);

    /* the guard's masks: which counts d_b occur on each block among the columns */
    for (int64_t j = 0; j < n; ++j)
        for (int64_t w = 0; w < nblk; ++w) {
            uint64_t v[WIN];
            int len = 0;
            for (int64_t l = w * WIN; l < k && l < (w + 1) * WIN; ++l)
                v[len++] = abft_tight_qkey(opb(a, l, j), r);
            mask[w] |= 1u << (abft_tight_distinct(v, len) - 1);
        }

    /* long sums: the fewest distinct values a column of op(B) takes along l */
    const int long_guard = abft_tight_long_guard(a->u, k);
    int64_t cap2 = 2;
    while (cap2 < 2 * k) cap2 *= 2;
    int64_t bmin = k;
    if (long_guard) {
        uint64_t *t2 = malloc(sizeof(uint64_t) * (size_t)cap2);
        double *col = malloc(sizeof(double) * (size_t)k);
        if (!t2 || !col) {
            free(t2), free(col);
            bmin = 0; /* no table: every row to the worst case below */
        } else {
            for (int64_t j = 0; j < n && !abft_tight_repeats(bmin, k); ++j) {
                for (int64_t l = 0; l < k; ++l) col[l] = opb(a, l, j);
                const int64_t d = distinct_exact(col, k, t2, cap2);
                if (d < bmin) bmin = d;
            }
            free(t2), free(col);
        }
    }
    const int b_repeats = long_guard && abft_tight_repeats(bmin, k);

    const double *gW = gw + (size_t)(NWIN - 1) * (size_t)k; /* windows of WIN rows */
    const double aal = fabs(a->alpha), u2 = a->u * a->u, uc2 = a->u_chk * a->u_chk;
    int64_t risky = 0;
#pragma omp parallel reduction(+ : risky)
    {
        /* this thread's copy of row i of op(A), read once for the guards and the scan, and the
         * long-sum guard's table */
        double *row = malloc(sizeof(double) * (size_t)k);
        uint64_t *t2 = b_repeats ? malloc(sizeof(uint64_t) * (size_t)cap2) : NULL;
#pragma omp for schedule(static)
        for (int64_t i = 0; i < m; ++i) {
            int bad = row == NULL || (b_repeats && t2 == NULL); /* no memory: the worst case */
            if (!bad) {
                for (int64_t l = 0; l < k; ++l) row[l] = opa(a, i, l);
                /* a column repeats its values: does row i too? */
                if (b_repeats) bad = abft_tight_repeats(distinct_exact(row, k, t2, cap2), k);
            }
            for (int64_t w = 0; w < nblk && !bad; ++w) {
                uint64_t v[WIN];
                int len = 0;
                for (int64_t l = w * WIN; l < k && l < (w + 1) * WIN; ++l)
                    v[len++] = abft_tight_qkey(row[l], r);
                int da = abft_tight_distinct(v, len);
                for (int db = 1; db <= len && !bad; ++db)
                    if ((mask[w] >> (db - 1) & 1u) && !abft_tight_rich(da, db, len)) bad = 1;
            }
            if (bad) {
                a->T[i] = a->T[i + a->ldt] = -1.0;
                ++risky;
                continue;
            }
            /* per sketch column: the running sum P, its range [lo, hi] through the last
             * window (0 included) and [pn, px] in this one, and the weighted sum of squares Vq
             * (elementwise, so the loop vectorizes; summed over the columns at the end, in
             * the GPU kernel's order): a window's nodes, in any blocking, are
             * abft_tight_window's. gw_max: the window's largest class weight. */
            double P[2 * SK_Q] = {0}, lo[2 * SK_Q] = {0}, hi[2 * SK_Q] = {0};
            double pn[2 * SK_Q], px[2 * SK_Q], Vq[2 * SK_Q] = {0}, Fq[2 * SK_Q] = {0}, gw_max = 0.0;
            for (int q = 0; q < 2 * SK_Q; ++q) pn[q] = INFINITY, px[q] = -INFINITY;
            double vs[2] = {0, 0}, fs[2] = {0, 0}, sh[2] = {0, 0}, yc[2] = {0, 0};
            for (int64_t l = 0; l < k; ++l) {
                const double x = row[l], *z = Z + (size_t)l * 2 * SK_Q, g = gW[l];
                gw_max = g > gw_max ? g : gw_max;
                for (int q = 0; q < 2 * SK_Q; ++q) {
                    P[q] += x * z[q];
                    pn[q] = P[q] < pn[q] ? P[q] : pn[q];
                    px[q] = P[q] > px[q] ? P[q] : px[q];
                }
                if (l % WIN == WIN - 1 || l == k - 1) { /* the window's end */
                    const int len = (int)(l % WIN) + 1;
                    for (int q = 0; q < 2 * SK_Q; ++q) {
                        lo[q] = pn[q] < lo[q] ? pn[q] : lo[q];
                        hi[q] = px[q] > hi[q] ? px[q] : hi[q];
                        Vq[q] += abft_tight_window(gw_max, len, pn[q], px[q], lo[q], hi[q]);
                        pn[q] = INFINITY, px[q] = -INFINITY;
                    }
                    gw_max = 0.0;
                }
                /* the final roundings (alpha·D, its sum with beta·C_old; after the library's
                 * split, also the first half's result, rounded as it is stored) */
                if (l == k - 1 || l == ks - 1)
                    for (int q = 0; q < 2 * SK_Q; ++q) Fq[q] += 2.0 * g * (P[q] * P[q]);
                sh[0] += x * x * B2[l] * Ws[l], sh[1] += x * x * B2[l + k] * Ws[l];
                const double y0 = a->Yb[l], y1 = a->Yb[l + a->ldyb];
                yc[0] += x * x * y0 * y0, yc[1] += x * x * y1 * y1;
            }
            for (int q = 0; q < SK_Q; ++q) vs[0] += Vq[q], vs[1] += Vq[SK_Q + q];
            for (int q = 0; q < SK_Q; ++q) fs[0] += Fq[q], fs[1] += Fq[SK_Q + q];
            /* each lane order: every node's square (the sketch sums all the lanes at l, one
             * of which holds the node), then the combination of the lanes' results at each
             * segment's end, weighted by the largest class among the lanes' last nodes; the
             * largest order's sum replaces the natural order's */
            for (int o = 0; o < nord; ++o) {
                const int S = a->ord[o].S;
                const int64_t per = (int64_t)S * a->ord[o].b;
                const double *zo = Zo + (size_t)o * (size_t)k * 2 * SK_Q, *go = gl + (size_t)o * (size_t)k;
                double Y[2 * SK_Q] = {0}, Vo[2 * SK_Q] = {0}, gend = 0.0, vo[2] = {0, 0};
                for (int64_t l = 0; l < k; ++l) {
                    if (l == ks && ks > 0) /* the second half's lanes start from zero */
                        for (int q = 0; q < 2 * SK_Q; ++q) Y[q] = 0.0;
                    const int64_t end = ks > 0 && l < ks ? ks - 1 : k - 1;
                    const double x = row[l], *z = zo + (size_t)l * 2 * SK_Q, g = go[l];
                    if (end - l < per && g > gend) gend = g;
                    for (int q = 0; q < 2 * SK_Q; ++q) {
                        Y[q] += x * z[q];
                        Vo[q] += g * (Y[q] * Y[q]);
                    }
                    if (l == end) {
                        const double c = abft_tight_comb_lanes(S) * gend;
                        for (int q = 0; q < 2 * SK_Q; ++q) Vo[q] += c * (Y[q] * Y[q]);
                        gend = 0.0;
                    }
                }
                for (int q = 0; q < SK_Q; ++q) vo[0] += Vo[q], vo[1] += Vo[SK_Q + q];
                for (int q = 0; q < 2; ++q) vs[q] = vo[q] > vs[q] ? vo[q] : vs[q];
            }
            for (int q = 0; q < 2; ++q) {
                double V = u2 * ((vs[q] + fs[q]) / SK_Q + sh[q]) + uc2 * yc[q];
                /* these sums' own rounding: relative (2·SK_Q + 4)·k·2^-53 at most, far below */
                double t = a->lambda * aal * sqrt(V) * (1.0 + 0x1p-20);
                /* squares that overflowed (or a NaN input): the worst case decides */
                a->T[i + q * a->ldt] = t < INFINITY ? t : -1.0;
            }
        }
        free(row), free(t2);
    }
    if (a->nrisky) *a->nrisky = risky;
    free(Z), free(B2), free(gw), free(G), free(key), free(tab), free(cnt), free(lnz), free(lnzv),
        free(rb), free(cof), free(sub), free(mask), free(Zo), free(lane), free(gl);
    return ABFT_STATUS_SUCCESS;
}

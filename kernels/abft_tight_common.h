/* abft: the pieces of the tight pass (ABFT_BOUND_TIGHT) that the CPU backend
 * (kernels/cpu/abft_cpu_tight.c) and the CUDA backend (kernels/cuda/abft_cuda_tight.cu) must
 * compute alike, written once for both: the sketch's normal draws, the keys of the class
 * counting and of the along-l guard, and the guard's rule. Private. */
#ifndef ABFT_TIGHT_COMMON_H
#define ABFT_TIGHT_COMMON_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define ABFT_TIGHT_FN static __host__ __device__ __forceinline__
#else
#define ABFT_TIGHT_FN static inline
#endif

/* 32 sketch columns; the guard's blocks (and the class windows' longest) are 16 terms;
 * windows of 1, 2, 4, 8, 16 rows; a block's products must take 8 distinct values. */
enum { ABFT_TIGHT_Q = 32, ABFT_TIGHT_WIN = 16, ABFT_TIGHT_NWIN = 5, ABFT_TIGHT_D = 8 };

/* The filter of the two stages (docs/bound.md, "Two stages") takes the squares of the running
 * sums at every ABFT_TIGHT_FILTER_S-th term of each half of l (the library's split ks, or
 * none) and at each half's last term: a subset of the terms whose squares the full pass sums,
 * so it stays below the full pass's part term by term, at a quarter of the squares' cost. */
enum { ABFT_TIGHT_FILTER_S = 4 };

/* The filter sums the first ABFT_TIGHT_FILTER_Q of each weight column's ABFT_TIGHT_Q sketch
 * columns (over ABFT_TIGHT_Q still: a subset of the full pass's terms), and estimates the
 * short nodes' sum_j w_j^2·b_lj^2 by the mean of those columns' Z_lr^2 times
 * ABFT_TIGHT_FILTER_SHORT: the mean is the exact sum times a chi-square of 16 degrees of
 * freedom over 16, above 7 with probability 1.9e-16, so the estimate stays below the exact
 * sum that the full pass uses but with that probability per term. */
enum { ABFT_TIGHT_FILTER_Q = 16 };
#define ABFT_TIGHT_FILTER_SHORT (1.0 / 7.0)

/* Is term t (of k, split at ks: 0 for none) one of the filter's samples? */
ABFT_TIGHT_FN int abft_tight_filter_sample(int64_t t, int64_t k, int64_t ks) {
    const int64_t h0 = ks > 0 && t >= ks ? ks : 0;
    return (t - h0 + 1) % ABFT_TIGHT_FILTER_S == 0 || t == k - 1 || (ks > 0 && t == ks - 1);
}

ABFT_TIGHT_FN uint64_t abft_tight_mix(uint64_t z) { /* splitmix64's finalizer */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The bits of x, +0 and -0 alike. */
ABFT_TIGHT_FN uint64_t abft_tight_bits(double x) {
    if (x == 0.0) return 0;
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
#endif
}

/* The key of a one-row window: |b| scaled into [1, 2) (0 for zero): for a normal number its
 * 52 fraction bits, for a subnormal the same after normalizing it. */
ABFT_TIGHT_FN uint64_t abft_tight_mant_key(double b) {
    int e;
    if (b == 0.0) return 0;
    const uint64_t x = abft_tight_bits(b);
    if ((x >> 52 & 0x7FFu) != 0u) return (x & 0xFFFFFFFFFFFFFull) | 0x3FF0000000000000ull;
    return abft_tight_bits(ldexp(frexp(fabs(b), &e), 1));
}

/* One step of a window's key: the entry b scaled by the sign sg and exponent 1 - e of the
 * window's anchor (ldexp: exact, and the same for columns equal up to the scale even where
 * it over- or underflows), s its distance from the window's end. */
ABFT_TIGHT_FN uint64_t abft_tight_key_step(uint64_t h, double b, double sg, int e, int64_t s) {
    return abft_tight_mix(h ^ abft_tight_bits(sg * ldexp(b, 1 - e))) + (uint64_t)s;
}
#define ABFT_TIGHT_KEY_SEED 0x6A09E667F3BCC909ull

/* Lane orders (docs/bound.md, "Tight mode", item 3b). Besides the natural order in blocks,
 * a BLAS may deal the k terms of each dot product to S lanes by tiles of b consecutive
 * terms (tile t to lane t mod S; a vector register's lanes: b = 1; cuBLAS's fp32 split-k:
 * S = 4, b = 8), sum each lane in order from zero, and combine the S results at the end in
 * any order. Where the data cancel in the natural order but not within the lanes (signs
 * alternating along l), the lanes' partial sums, and so their roundings, are far larger
 * than the natural order's. The pass bounds each order of a backend's list
 * (abft_bound_tight_lanes, verify/abft_bound.c) by its own sketch and takes the largest.
 * The library's split at ksplit starts the lanes afresh (each half is a GEMM of its own).
 * The list's type and limits: abft_tight_order_t, kernels/abft_kernels.h. */
/* The pass's list of lane orders (abft_tight_args_t, kernels/abft_kernels.h, included
 * before this header): *nord of them, *smax the most lanes among them (1 where none). 0
 * where the list is not valid (more than ABFT_TIGHT_MAXORD orders, or an order with S
 * outside 1..ABFT_TIGHT_MAXLANES, or b < 1). */
ABFT_TIGHT_FN int abft_tight_orders(const abft_tight_order_t *ord, int count, int *nord,
                                    int *smax) {
    *nord = 0, *smax = 1;
    if (count < 0 || count > ABFT_TIGHT_MAXORD) return 0;
    *nord = count;
    for (int o = 0; o < *nord; ++o) {
        if (ord[o].S < 1 || ord[o].S > ABFT_TIGHT_MAXLANES || ord[o].b < 1) return 0;
        *smax = ord[o].S > *smax ? ord[o].S : *smax;
    }
    return 1;
}

/* The lane of term l, in the segment that starts at base. */
ABFT_TIGHT_FN int abft_tight_lane(int64_t l, int64_t base, int S, int b) {
    return (int)(((l - base) / b) % S);
}
/* The row of the i-th term before l in l's lane (i = 0: l itself), or -1 where the lane has
 * fewer terms since base. */
ABFT_TIGHT_FN int64_t abft_tight_lane_row(int64_t l, int64_t base, int S, int b, int i) {
    const int64_t d = l - base, per = (int64_t)S * b;
    const int64_t mi = (d / per) * b + d % b - i; /* the index of the term within its lane */
    if (mi < 0) return -1;
    return base + (mi / b) * per + ((d / b) % S) * b + mi % b;
}
/* One step of a lane window's class key: the entry's magnitude scaled into [1, 2)
 * (abft_tight_mant_key), i its distance from the window's end. Columns equal up to one sign
 * and power of two on the window have equal keys (and so do columns whose entries agree only
 * up to a scale of their own per row: a coarser class, so a larger count: safe). */
ABFT_TIGHT_FN uint64_t abft_tight_lane_key_step(uint64_t h, double b, int i) {
    return abft_tight_mix(h ^ abft_tight_mant_key(b)) + (uint64_t)i;
}
/* The combination of S lane results in any order: a binary tree whose internal nodes hold
 * c = 2..S of them, each at most c times the sum of their squares (Cauchy-Schwarz), at most
 * S·(S + 1)/2 - 1 times the sum over all lanes in all (a chain; a balanced tree holds less);
 * and the root once more, S: its scaling by alpha, which the second half of the library's
 * split rounds apart (as does a BLAS that scales each slice before the reduction). */
ABFT_TIGHT_FN double abft_tight_comb_lanes(int S) { return (double)S * (S + 3) / 2.0 - 1.0; }

/* A standard normal draw for (j, r): Box-Muller on two hashed uniforms. The sketch's tail
 * bound holds for any fixed G independent of the rounding errors. */
ABFT_TIGHT_FN double abft_tight_gauss(int64_t j, int r) {
    uint64_t z = abft_tight_mix(0x243F6A8885A308D3ull +
                                0x9E3779B97F4A7C15ull *
                                    ((uint64_t)j * ABFT_TIGHT_Q + (uint64_t)r + 1u));
    double u1 = ((double)(z >> 11) + 0.5) * 0x1p-53;
    double u2 = (double)(abft_tight_mix(z ^ 0x5851F42D4C957F2Dull) >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
/* Lane s's draws for a lane order's sketch (lane 0: the natural order's): independent of
 * the other lanes', so that the sketch sees each lane's partial sums apart. */
ABFT_TIGHT_FN double abft_tight_gauss_lane(int64_t j, int r, int s) {
    return abft_tight_gauss(j + ((int64_t)s << 40), r);
}

/* The guard's key: the magnitude of x with its fraction rounded to r bits (half up, on the
 * bits: a carry moves into the exponent, as rounding the magnitude does; 0 for zero; a
 * subnormal is rounded at the same absolute position, which only merges values). */
ABFT_TIGHT_FN uint64_t abft_tight_qkey(double x, int r) {
    if (x == 0.0) return 0;
    const uint64_t m = abft_tight_bits(x) & 0x7FFFFFFFFFFFFFFFull, drop = (uint64_t)(52 - r);
    return (m + ((uint64_t)1 << (drop - 1))) >> drop;
}
/* The guard's quantization for unit roundoff u and inner dimension k: values within about
 * 16·u·k of each other count as one. */
ABFT_TIGHT_FN int abft_tight_qbits(double u, int64_t k) {
    const double eps = 16.0 * u * (double)k;
    int r = eps >= 0.5 ? 1 : (int)floor(-log2(eps));
    return r > 51 ? 51 : r; /* at least one bit dropped (qkey's rounding) */
}

ABFT_TIGHT_FN int abft_tight_distinct(const uint64_t *v, int n) {
    int d = 0;
    for (int x = 0; x < n; ++x) {
        int seen = 0;
        for (int y = 0; y < x && !seen; ++y) seen = v[y] == v[x];
        d += !seen;
    }
    return d;
}

/* Do products of factors with d_a and d_b distinct magnitudes on a block of len terms vary
 * enough for the model? They take at least max(ceil(d_a/d_b), ceil(d_b/d_a)) distinct values
 * (pigeonhole); the model assumes max(d_a, d_b) (the products of two factors vary at least
 * as much as the more varied one: a row built from the reciprocals of a column does not,
 * docs/bound.md). */
ABFT_TIGHT_FN int abft_tight_rich(int da, int db, int len) {
    int D = (len + 1) / 2;
    if (D > ABFT_TIGHT_D) D = ABFT_TIGHT_D;
    return da >= D || db >= D;
}

/* The short-node weight of row l (windows' class sizes gw: k x NWIN, column p for windows of
 * 2^p rows): sum_{s < WIN} s·max_{l <= e < l + s} g_s(e) with g_s <= G_floor(log2 s), plus
 * one more G_0(l) for a product rounded before it is added (alpha applied to an operand). */
ABFT_TIGHT_FN double abft_tight_ws(const double *gw, int64_t k, int64_t l) {
    double ws = gw[l];
    for (int s = 1; s < ABFT_TIGHT_WIN; ++s) {
        const int p = s >= 8 ? 3 : s >= 4 ? 2 : s >= 2 ? 1 : 0;
        double g = 0.0;
        for (int64_t e = l; e < l + s && e < k; ++e)
            if (gw[e + p * k] > g) g = gw[e + p * k];
        ws += (double)s * g;
    }
    return ws;
}

/* The long nodes, whatever the GEMM's blocking. The GEMM cuts l = 0..k-1 into blocks of at
 * least WIN consecutive terms (k-blocks, split-k, the library's own split), sums each from
 * zero in the natural order, and adds the blocks' results in order. A node at t inside a
 * block that starts at b holds P(t) - P(b), for a sketch column's running sum P; whatever
 * b is, that is at most max(P(t) - lo, hi - P(t)), with [lo, hi] the range of P up to t (0
 * included), at least |P(t)|, the natural order's node. Per aligned window of WIN terms
 * (len of them, fewer in the last) the pass keeps the window's own range [pmin, pmax] of
 * P; with [lo, hi] taken through the window's end, D = max(pmax - lo, hi - pmin) bounds
 * every node of the window. Each block's end adds at most ABFT_TIGHT_COMB more nodes (its
 * result, scaled by alpha, and the running sum it joins), each also at most D; blocks of
 * WIN or more terms end at most once per window. So a window adds
 * (len + ABFT_TIGHT_COMB)·g·D^2, g the largest class weight gW of its terms. */
#define ABFT_TIGHT_COMB 2.0
ABFT_TIGHT_FN double abft_tight_window(double g, int len, double pmin, double pmax, double lo,
                                       double hi) {
    const double d = pmax - lo > hi - pmin ? pmax - lo : hi - pmin;
    return ((double)len + ABFT_TIGHT_COMB) * g * (d * d);
}

/* Terms below a partial sum's rounding spacing (absorbed, or rounding the sum by one step
 * whatever their low bits) err by up to their own size with any sign pattern: not the
 * model's noise. They are bounded per entry of C, from its own exact prefix sums, by the
 * protocol on the host (abft_bound_tight_small, verify/abft_bound.h) for every entry the
 * compare flags against this pass's T; T itself leaves them out. */

/* Long sums of few values. Sign-coherent products that take few distinct values along l
 * (periodic rows, quantized data) round alike over long stretches once the partial sums
 * are large: in fp32 from k of about 2048 for sets of 8 to 20 values, 8192 to 32768 for
 * periods of 16 to 100, beyond 10^5 for 256 (bench/NOTES-bound.md). Up to
 * ABFT_TIGHT_KU_FREE = k·u the 16-term blocks' guard suffices (measured in fp32 up to
 * k = 1024); beyond it a row needs a factor whose values repeat on average fewer than
 * ABFT_TIGHT_REPEAT times along l (distinct values, exactly, times ABFT_TIGHT_REPEAT above
 * k), else it gets the worst case. */
#define ABFT_TIGHT_KU_FREE 0x1p-14
#define ABFT_TIGHT_REPEAT 16
ABFT_TIGHT_FN int abft_tight_long_guard(double u, int64_t k) {
    return (double)k * u > ABFT_TIGHT_KU_FREE;
}
ABFT_TIGHT_FN int abft_tight_repeats(int64_t distinct, int64_t k) {
    return distinct * ABFT_TIGHT_REPEAT <= k;
}

/* The CUDA pass keeps two tables in shared memory, one block at a time: the class
 * counting's (32-bit fingerprints and counts in nslot = max(64, 1.5·n) slots, and a byte per
 * column) and, where the long-sum guard runs, its exact count's (64-bit keys, a power of two
 * of at least 2·(k / REPEAT + REP_THREADS) slots: each of the counting block's threads
 * inserts at most one value past the count's limit). Where either exceeds the device's shared memory
 * per block (smem), every row gets the worst case: the CUDA pass and the campaign, which
 * mirrors the library's bound, decide it with this one rule. */
enum { ABFT_TIGHT_REP_THREADS = 256 };
ABFT_TIGHT_FN int64_t abft_tight_class_slots(int64_t n) { return n + n / 2 > 64 ? n + n / 2 : 64; }
ABFT_TIGHT_FN int64_t abft_tight_long_slots(int64_t k) {
    int64_t s = 64;
    while (s < 2 * (k / ABFT_TIGHT_REPEAT + ABFT_TIGHT_REP_THREADS)) s *= 2;
    return s;
}
ABFT_TIGHT_FN int abft_tight_tables_fit(int64_t n, int64_t k, double u, size_t smem) {
    const size_t cls = sizeof(uint32_t) * 2 * (size_t)abft_tight_class_slots(n) + (size_t)n;
    if (cls > smem) return 0;
    return !abft_tight_long_guard(u, k) || sizeof(uint64_t) * (size_t)abft_tight_long_slots(k) <= smem;
}

#endif /* ABFT_TIGHT_COMMON_H */

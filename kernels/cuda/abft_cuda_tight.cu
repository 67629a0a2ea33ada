/* abft CUDA backend: the tight pass of ABFT_BOUND_TIGHT, the same computation as the CPU
 * backend's (kernels/cpu/abft_cpu_tight.c, which states the model; docs/bound.md "Tight
 * mode"), in five kernels:
 *
 *   gauss_kernel   G (n x 32): the sketch's normal draws, from the same hash as the CPU's;
 *   sketch_kernel  Z (k x 64: Z_l,qr = sum_j w_qj·G_jr·b_lj, a register-tiled product) and B2
 *                  (k x 2: sum_j w_qj^2·b_lj^2);
 *                  then each lane order's Zo, with the draws of each row's lane (the lanes
 *                  along the grid's y, one launch per segment);
 *   class_kernel   per row l of op(B), one block: the largest class of columns equal up to one
 *                  sign and power of two on the windows of 1, 2, 4, 8, 16 rows ending at l
 *                  (and for each lane order, on the lane's last 16 rows up to l),
 *                  counted in a hash table in shared memory (32-bit fingerprints of the CPU's
 *                  64-bit keys: a collision merges classes, so a count can only grow); the
 *                  entries alone first through a table of two-bit cells that finds the
 *                  columns whose key no other column has (largest_entries);
 *   ws_kernel      the short-node weights Ws from the class sizes;
 *   mask_kernel    per block of 16 rows, the counts of distinct magnitudes its columns take;
 *   guard_kernel   the along-l guard of the 16-term blocks, per row of op(A);
 *   repeat_kernel  the long-sum guard (k·u > ABFT_TIGHT_KU_FREE only): does a column of
 *                  op(B) repeat its values, and then which rows of op(A) do too, each vector
 *                  counted exactly in a hash table in shared memory that stops once the
 *                  count passes k / ABFT_TIGHT_REPEAT;
 *   rows_kernel    per row i and weight column q: the guards' verdict, then the sketched
 *                  partial sums along l and T(i, q).
 *
 * Everything lives in the context's scratch (the output T in the caller's memory), the
 * tables in shared memory: where they do not fit the device's shared memory per block
 * (abft_tight_tables_fit: on an H100, more than 17880 columns, or in fp32 k > 126991),
 * every row gets T = -1 (the worst case). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "abft_cuda_common.cuh"
#include "abft_cuda_tuning.h"
#include "abft_tight_common.h"

namespace {

constexpr int SK_Q = ABFT_TIGHT_Q, WIN = ABFT_TIGHT_WIN, NWIN = ABFT_TIGHT_NWIN;
/* the long-sum guard's threads per block (abft_tight_long_slots leaves room for one value
 * each past the count's limit) */
constexpr int REP_THREADS = ABFT_TIGHT_REP_THREADS;

/* The pass's arguments, and what the kernels share beside them. */
struct tight_dev : abft_tight_args_t {
    int64_t ks;     /* the split along k (0: none) */
    int qbits;      /* the guard's quantization */
    int too_wide;   /* the tables do not fit in shared memory: every row to the worst case */
    double *G, *Z, *B2, *gw, *Ws;
    double *GL, *Zo, *gl; /* the lane orders: draws per lane, sketches, class weights */
    uint32_t *mask;
    int *risky; /* m: the guards' verdict per row */
    int *brep;  /* the long-sum guard: some column of op(B) repeats its values */
};

__device__ __forceinline__ double opa(const tight_dev &a, int64_t i, int64_t l) {
    size_t o = a.transa ? (size_t)(l + i * a.lda) : (size_t)(i + l * a.lda);
    return a.prec == ABFT_PREC_D ? ((const double *)a.A)[o] : (double)((const float *)a.A)[o];
}
__device__ __forceinline__ double opb(const tight_dev &a, int64_t l, int64_t j) {
    size_t o = a.transb ? (size_t)(j + l * a.ldb) : (size_t)(l + j * a.ldb);
    return a.prec == ABFT_PREC_D ? ((const double *)a.B)[o] : (double)((const float *)a.B)[o];
}

/* G (lanes = 0), or the lane orders' draws GL of lanes 0..lanes-1 */
__global__ void gauss_kernel(tight_dev a, int lanes) {
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (lanes == 0) {
        if (t < a.n * SK_Q) a.G[t] = abft_tight_gauss(t / SK_Q, (int)(t % SK_Q));
        return;
    }
    if (t >= lanes * a.n * SK_Q) return;
    const int64_t s = t / (a.n * SK_Q), js = t % (a.n * SK_Q);
    a.GL[t] = abft_tight_gauss_lane(js / SK_Q, (int)(js % SK_Q), (int)s);
}

/* The sketch's tiles: SKL rows l by SKC = 2·SK_Q columns (both weight columns), SKJ columns j
 * of op(B) at a time; each of the 256 threads sums a 4 x 4 tile of Z. */
constexpr int SKL = 64, SKJ = 32, SKC = 2 * SK_Q, SKP = 2; /* SKP: padding of a tile's rows */
static_assert(SKL * SKC == 256 * 16, "sketch_kernel: 16 entries of Z per thread");

/* Which rows of op(B) a sketch covers: those of each lane s of a lane order (S lanes, tiles
 * of b; s = blockIdx.y) in the segment [base, end): the x-th of lane s is
 * base + (x / b)·S·b + s·b + x % b; the natural sketch is S = b = 1 over [0, k). */
struct rowmap {
    int64_t base, end;
    int S, b;
    __device__ int64_t row(int64_t x) const {
        return base + (x / b) * (int64_t)S * b + (int64_t)blockIdx.y * b + x % b;
    }
};

/* SKL rows l per block of 256 threads: Z_l,c = sum_j b_lj·W_jc with W_jc = G_jc (c < SK_Q)
 * and (j + 1)·G_j,c-SK_Q (the draws G of lane blockIdx.y: n x SK_Q each), as a register-
 * tiled product: thread (ty, tx) = (t / 16, t % 16) sums rows 4·ty..4·ty+3 against columns
 * 2·tx, 2·tx + 1 of both weights (16-byte reads of W without bank conflicts), from tiles of op(B) (transposed: sb[j][l]) and of W in shared memory.
 * Where B2 is not NULL, B2_l = (sum_j b_lj^2, sum_j (j + 1)^2·b_lj^2) too (4 threads a row).
 * Block z sums the slice of columns j in [z·nper, (z + 1)·nper) into Z + z·zstride (and B2 +
 * z·zstride / SK_Q): with a few blocks along l only, the slices keep the SMs busy, and
 * slices_kernel adds them up in a fixed order (the same result on every run). */
__global__ void __launch_bounds__(256, 2) sketch_kernel(tight_dev a, const double *G, double *Z,
                                                        double *B2, rowmap rm, int64_t nper,
                                                        size_t zstride) {
    constexpr int NB = SKL * SKJ / 256, NG = SKJ * SK_Q / 256; /* a thread's loads per tile */
    __shared__ __align__(16) double sb[SKJ][SKL + SKP];
    __shared__ __align__(16) double sw[SKJ][SKC + SKP];
    __shared__ int64_t srow[SKL]; /* the block's rows of op(B), -1 past the segment */
    const int t = threadIdx.x, ty = t / 16, tx = t % 16;
    const int64_t x0 = (int64_t)blockIdx.x * SKL;
    const int64_t jb = (int64_t)blockIdx.z * nper, je = jb + nper < a.n ? jb + nper : a.n;
    Z += blockIdx.z * zstride; /* this slice of j's partial sums (zstride = 0: the sums) */
    if (B2 != NULL) B2 += blockIdx.z * (zstride / SK_Q);
    if (t < SKL) {
        const int64_t l = rm.row(x0 + t);
        srow[t] = l < rm.end ? l : -1;
    }
    __syncthreads();
    /* the next tile's values, fetched into registers while the current one is summed */
    double pb[NB], pg[NG];
    auto fetch = [&](int64_t j0) {
#pragma unroll
        for (int e = 0; e < NB; ++e) {
            /* adjacent threads along the stored matrix's contiguous index */
            const int x = t + 256 * e;
            const int li = a.transb ? x / SKJ : x % SKL, ji = a.transb ? x % SKJ : x / SKL;
            const int64_t lj = srow[li], jj = j0 + ji;
            pb[e] = lj >= 0 && jj < je ? opb(a, lj, jj) : 0.0;
        }
#pragma unroll
        for (int e = 0; e < NG; ++e) {
            const int x = t + 256 * e, ji = x / SK_Q, r = x % SK_Q;
            const int64_t jj = j0 + ji;
            pg[e] = jj < je ? G[((int64_t)blockIdx.y * a.n + jj) * SK_Q + r] : 0.0;
        }
    };
    double z[4][4], q0 = 0.0, q1 = 0.0;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int c = 0; c < 4; ++c) z[i][c] = 0.0;
    fetch(jb);
    for (int64_t j0 = jb; j0 < je; j0 += SKJ) {
#pragma unroll
        for (int e = 0; e < NB; ++e) {
            const int x = t + 256 * e;
            const int li = a.transb ? x / SKJ : x % SKL, ji = a.transb ? x % SKJ : x / SKL;
            sb[ji][li] = pb[e];
        }
#pragma unroll
        for (int e = 0; e < NG; ++e) {
            const int x = t + 256 * e, ji = x / SK_Q, r = x % SK_Q;
            sw[ji][r] = pg[e];
            sw[ji][SK_Q + r] = (double)(j0 + ji + 1) * pg[e];
        }
        __syncthreads();
        if (j0 + SKJ < je) fetch(j0 + SKJ);
        const int jn = je - j0 < SKJ ? (int)(je - j0) : SKJ;
#pragma unroll 4
        for (int ji = 0; ji < jn; ++ji) {
            const double2 b01 = *(const double2 *)&sb[ji][4 * ty];
            const double2 b23 = *(const double2 *)&sb[ji][4 * ty + 2];
            const double2 w01 = *(const double2 *)&sw[ji][2 * tx];
            const double2 w23 = *(const double2 *)&sw[ji][SK_Q + 2 * tx];
            const double b[4] = {b01.x, b01.y, b23.x, b23.y}, w[4] = {w01.x, w01.y, w23.x, w23.y};
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int c = 0; c < 4; ++c) z[i][c] = fma(b[i], w[c], z[i][c]);
        }
        if (B2 != NULL) /* row t / 4, every fourth j */
            for (int ji = t % 4; ji < jn; ji += 4) {
                const double b = sb[ji][t / 4], w1 = (double)(j0 + ji + 1), bb = b * b;
                q0 += bb;
                q1 = fma(w1 * w1, bb, q1);
            }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int64_t l = srow[4 * ty + i];
        if (l >= 0)
#pragma unroll
            for (int c = 0; c < 4; ++c) Z[l * SKC + (c / 2) * SK_Q + 2 * tx + c % 2] = z[i][c];
    }
    if (B2 != NULL) {
        q0 += __shfl_xor_sync(0xffffffffu, q0, 1), q1 += __shfl_xor_sync(0xffffffffu, q1, 1);
        q0 += __shfl_xor_sync(0xffffffffu, q0, 2), q1 += __shfl_xor_sync(0xffffffffu, q1, 2);
        const int64_t l = srow[t / 4];
        if (t % 4 == 0 && l >= 0) B2[l * 2] = q0, B2[l * 2 + 1] = q1;
    }
}

/* The slices' partial sums added up, in the order of the slices: out[e] = sum_z p[z·stride + e]
 * for e in [first, end). */
__global__ void slices_kernel(double *out, const double *p, int64_t first, int64_t end, int nz,
                              size_t stride) {
    const int64_t e = first + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= end) return;
    double v = p[e];
    for (int z = 1; z < nz; ++z) v += p[z * stride + e];
    out[e] = v;
}

/* The key of column j for the window of 2^p rows ending at l (p >= 1; all rows up to l when
 * fewer), as the CPU computes it: the column scaled by the sign and power of two of its last
 * nonzero entry up to l (zeros stay zero: only a nonzero within the window matters). */
__device__ uint64_t window_key(const tight_dev &a, int64_t l, int64_t j, int p) {
    int e = 1;
    double sg = 1.0;
    for (int64_t s = 0; s < (1 << p) && l - s >= 0; ++s) {
        const double an = opb(a, l - s, j);
        if (an != 0.0) {
            frexp(an, &e);
            sg = copysign(1.0, an);
            break;
        }
    }
    uint64_t h = ABFT_TIGHT_KEY_SEED;
    for (int64_t s = 0; s < (1 << p) && l - s >= 0; ++s) h = abft_tight_key_step(h, opb(a, l - s, j), sg, e, s);
    return h;
}

/* The key of column j for the window of lane order o's last WIN rows up to l, as the CPU
 * computes it. */
__device__ uint64_t lane_key(const tight_dev &a, int64_t l, int64_t j, int o) {
    const int64_t base = a.ks > 0 && l >= a.ks ? a.ks : 0;
    uint64_t h = ABFT_TIGHT_KEY_SEED;
    for (int i = 0; i < WIN; ++i) {
        const int64_t row = abft_tight_lane_row(l, base, a.ord[o].S, a.ord[o].b, i);
        if (row < 0) break;
        h = abft_tight_lane_key_step(h, opb(a, row, j), i);
    }
    return h;
}

/* The key of column j for window p (0: the entry alone, its magnitude scaled into [1, 2);
 * -1: lane order o's window). */
template <int P>
__device__ __forceinline__ uint64_t key_of(const tight_dev &a, int64_t l, int64_t j, int o) {
    return P < 0 ? lane_key(a, l, j, o)
         : P == 0 ? abft_tight_mant_key(opb(a, l, j)) : window_key(a, l, j, P);
}

/* A hash's home slot in a table of nslot < 2^32: its low 32 bits scaled to [0, nslot) (one
 * multiply, where a modulo by a run-time nslot costs a 64-bit division). */
__device__ __forceinline__ int64_t slot_of(uint64_t h, int64_t nslot) {
    return (int64_t)(((h & 0xffffffffull) * (uint64_t)nslot) >> 32);
}

/* *smax = the largest of the block's mine (and its value before); a barrier after. */
__device__ void block_max(uint32_t mine, uint32_t *smax) {
    for (int off = 16; off >= 1; off /= 2) {
        const uint32_t o = __shfl_xor_sync(0xffffffffu, mine, off);
        mine = o > mine ? o : mine;
    }
    if ((threadIdx.x & 31) == 0) atomicMax(smax, mine);
    __syncthreads();
}

/* The largest class among the keys of one window, over the columns not yet known to be
 * alone (done[j] = 0); then, for the natural windows, every column alone in this window is
 * marked done, since a longer window only refines the classes (block-wide; the table in
 * dynamic shared memory: nslot fingerprints, then nslot counts). o: the lane order of P = -1. */
template <int P>
__device__ int64_t largest(const tight_dev &a, int64_t l, uint32_t *fp, uint32_t *cnt,
                           int64_t nslot, uint8_t *done, uint32_t *smax, int o = 0) {
    for (int64_t s = threadIdx.x; s < nslot; s += blockDim.x) fp[s] = 0u, cnt[s] = 0u;
    if (threadIdx.x == 0) *smax = 0u;
    __syncthreads();
    uint32_t mine = 0u; /* this thread's largest count seen */
    for (int64_t j = threadIdx.x; j < a.n; j += blockDim.x) {
        if (done[j]) continue;
        const uint64_t h = abft_tight_mix(key_of<P>(a, l, j, o));
        const uint32_t f = (uint32_t)(h >> 32) | 1u; /* 0 marks an empty slot */
        int64_t s = slot_of(h, nslot);
        for (;;) {
            uint32_t old = atomicCAS(&fp[s], 0u, f);
            if (old == 0u || old == f) {
                const uint32_t c = atomicAdd(&cnt[s], 1u) + 1u;
                mine = c > mine ? c : mine;
                break;
            }
            s = s + 1 == nslot ? 0 : s + 1;
        }
    }
    /* the last insert into a class sees its full count: the largest of the threads' maxima
     * is the largest class */
    block_max(mine, smax);
    const int64_t g = (int64_t)*smax;
    if (g > 1 && P >= 0 && P + 1 < NWIN) /* mark the columns alone in their class */
        for (int64_t j = threadIdx.x; j < a.n; j += blockDim.x) {
            if (done[j]) continue;
            const uint64_t h = abft_tight_mix(key_of<P>(a, l, j, o));
            const uint32_t f = (uint32_t)(h >> 32) | 1u;
            int64_t s = slot_of(h, nslot);
            while (fp[s] != f) s = s + 1 == nslot ? 0 : s + 1;
            if (cnt[s] == 1u) done[j] = 1;
        }
    __syncthreads();
    return g;
}

/* largest<0> (the entries alone) in two steps, for speed: the linear probing of largest's
 * table, at a load of up to 2/3 with every column of the row inserted, holds each warp to
 * its longest probe chain. First each column sets its key's cell in a table of two-bit
 * cells (16·nslot of them in the count region: seen once, seen twice or more) with one or
 * two atomicOr, no loop; a column whose cell is not "twice" has a key no other column has
 * (equal keys share a cell). Only the others (the columns of a class of 2 or more, and
 * those whose cell another key shares: about n/12 of them for n distinct keys) are counted
 * in an exact table of nslot/2 entries (32-bit fingerprint, 32-bit count) in the
 * fingerprint region. Then, where the largest class has 2 or more, the columns alone are
 * marked done, as largest<0> marks them. If that table fills up (only where most columns
 * are candidates with distinct keys), the row's class is taken as all n columns and
 * nothing is marked: a coarser class, so a larger weight, which is safe. */
__device__ int64_t largest_entries(const tight_dev &a, int64_t l, uint32_t *tab, int64_t nslot,
                                   uint8_t *done, uint32_t *smax, int *full) {
    unsigned long long *ct = (unsigned long long *)tab; /* nslot / 2 entries */
    uint32_t *cells = tab + nslot;                      /* 16·nslot two-bit cells */
    const int64_t nct = nslot / 2, ncell = 16 * nslot;
    for (int64_t s = threadIdx.x; s < nslot; s += blockDim.x) tab[s] = 0u, cells[s] = 0u;
    if (threadIdx.x == 0) *smax = 1u, *full = 0;
    __syncthreads();
    for (int64_t j = threadIdx.x; j < a.n; j += blockDim.x) {
        const uint64_t h = abft_tight_mix(abft_tight_mant_key(opb(a, l, j)));
        const int64_t c = slot_of(h, ncell);
        const uint32_t bit = 1u << (2 * (c & 15));
        if (atomicOr(&cells[c >> 4], bit) & bit) atomicOr(&cells[c >> 4], bit << 1);
    }
    __syncthreads();
    uint32_t mine = 1u; /* this thread's largest count seen */
    for (int64_t j = threadIdx.x; j < a.n; j += blockDim.x) {
        const uint64_t h = abft_tight_mix(abft_tight_mant_key(opb(a, l, j)));
        const int64_t c = slot_of(h, ncell);
        if (!(cells[c >> 4] >> (2 * (c & 15)) & 2u)) continue; /* alone */
        const unsigned long long f = (unsigned long long)((uint32_t)(h >> 32) | 1u) << 32;
        int64_t s = slot_of(h, nct);
        for (int64_t t = 0;; ++t) {
            if (t == nct) { /* the table is full */
                *full = 1;
                break;
            }
            const unsigned long long old = atomicCAS(&ct[s], 0ull, f);
            if (old == 0ull || (old >> 32) == (f >> 32)) {
                const uint32_t n = (uint32_t)atomicAdd(&ct[s], 1ull) + 1u;
                mine = n > mine ? n : mine;
                break;
            }
            s = s + 1 == nct ? 0 : s + 1;
        }
    }
    block_max(mine, smax);
    if (*full) {
        __syncthreads(); /* not needed (nothing resets the flag): kept as measured */
        return a.n;
    }
    const int64_t g = (int64_t)*smax;
    if (g > 1) /* mark the columns alone in their class */
        for (int64_t j = threadIdx.x; j < a.n; j += blockDim.x) {
            const uint64_t h = abft_tight_mix(abft_tight_mant_key(opb(a, l, j)));
            const int64_t c = slot_of(h, ncell);
            if (cells[c >> 4] >> (2 * (c & 15)) & 2u) {
                const unsigned long long f = (unsigned long long)((uint32_t)(h >> 32) | 1u);
                int64_t s = slot_of(h, nct);
                while ((ct[s] >> 32) != f) s = s + 1 == nct ? 0 : s + 1;
                if ((uint32_t)ct[s] == 1u) done[j] = 1;
            } else {
                done[j] = 1;
            }
        }
    __syncthreads();
    return g;
}

__global__ void __launch_bounds__(256) class_kernel(tight_dev a, int64_t nslot) {
    extern __shared__ uint32_t tab[];
    __shared__ uint32_t smax;
    __shared__ int full;
    const int64_t l = blockIdx.x;
    uint32_t *fp = tab, *cnt = tab + nslot;
    uint8_t *done = (uint8_t *)(tab + 2 * nslot);
    for (int64_t j = threadIdx.x; j < a.n; j += blockDim.x) done[j] = 0;
    __syncthreads();
    int64_t g[NWIN] = {1, 1, 1, 1, 1};
    g[0] = largest_entries(a, l, tab, nslot, done, &smax, &full);
    for (int o = 0; o < a.nord; ++o) { /* the lane orders' windows (columns alone at l stay so) */
        const int64_t go = g[0] > 1 ? largest<-1>(a, l, fp, cnt, nslot, done, &smax, o) : 1;
        if (threadIdx.x == 0) a.gl[o * a.k + l] = (double)go;
    }
    if (g[0] > 1) g[1] = largest<1>(a, l, fp, cnt, nslot, done, &smax);
    if (g[1] > 1) g[2] = largest<2>(a, l, fp, cnt, nslot, done, &smax);
    if (g[2] > 1) g[3] = largest<3>(a, l, fp, cnt, nslot, done, &smax);
    if (g[3] > 1) g[4] = largest<4>(a, l, fp, cnt, nslot, done, &smax);
    if (threadIdx.x == 0)
        for (int p = 0; p < NWIN; ++p) a.gw[l + p * a.k] = (double)g[p];
}

__global__ void ws_kernel(tight_dev a) {
    const int64_t l = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (l < a.k) a.Ws[l] = abft_tight_ws(a.gw, a.k, l);
}

__global__ void mask_kernel(tight_dev a, int64_t nblk) {
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nblk * a.n) return;
    const int64_t w = t % nblk, j = t / nblk;
    uint64_t v[WIN];
    int len = 0;
    for (int64_t l = w * WIN; l < a.k && l < (w + 1) * WIN; ++l) v[len++] = abft_tight_qkey(opb(a, l, j), a.qbits);
    atomicOr(&a.mask[w], 1u << (abft_tight_distinct(v, len) - 1));
}

/* The guard, one thread per (row i, block w), i fastest (adjacent threads read adjacent
 * rows of op(A) when it is stored untransposed): risky[i] = 1 where row i and some column
 * of op(B) are both few-valued on block w. */
__global__ void guard_kernel(tight_dev a, int64_t nblk) {
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= a.m * nblk) return;
    const int64_t i = t % a.m, w = t / a.m;
    uint64_t v[WIN];
    int len = 0;
    for (int64_t l = w * WIN; l < a.k && l < (w + 1) * WIN; ++l)
        v[len++] = abft_tight_qkey(opa(a, i, l), a.qbits);
    const int da = abft_tight_distinct(v, len);
    const uint32_t mk = a.mask[w];
    for (int db = 1; db <= len; ++db)
        if (((mk >> (db - 1)) & 1u) && !abft_tight_rich(da, db, len)) {
            a.risky[i] = 1; /* any thread may write it: the same value */
            return;
        }
}

/* The long-sum guard, one block per vector: column v of op(B) (rows = 0), or row v of
 * op(A) (rows = 1, only once some column repeats). Its distinct magnitudes are counted by
 * their bits (the CPU's key: the lowest bit set, so that 0 marks an empty slot) until the
 * count passes lim = k / REPEAT: a thread inserts at most one value after the count passed,
 * so the table (nslot >= 2·(lim + REP_THREADS)) stays at most half full. The vector
 * repeats its values (abft_tight_repeats) exactly where the final count is <= lim. */
__global__ void __launch_bounds__(REP_THREADS) repeat_kernel(tight_dev a, int rows, int64_t nslot) {
    extern __shared__ unsigned long long rtab[];
    __shared__ unsigned int count;
    __shared__ int skip;
    /* one read of the flag for the whole block (blocks of the column pass may be setting it),
     * so that every thread leaves or none does */
    if (threadIdx.x == 0) {
        const int b = *(volatile int *)a.brep;
        skip = rows ? b == 0 : b != 0;
    }
    __syncthreads();
    if (skip) return;
    const int64_t v = blockIdx.x, lim = a.k / ABFT_TIGHT_REPEAT;
    for (int64_t s = threadIdx.x; s < nslot; s += blockDim.x) rtab[s] = 0ull;
    if (threadIdx.x == 0) count = 0u;
    __syncthreads();
    for (int64_t l = threadIdx.x; l < a.k; l += blockDim.x) {
        if ((int64_t)*(volatile unsigned int *)&count > lim) break;
        const double x = rows ? opa(a, v, l) : opb(a, l, v);
        const unsigned long long key = abft_tight_bits(fabs(x)) | 1ull;
        int64_t s = (int64_t)(abft_tight_mix(key) & (uint64_t)(nslot - 1));
        for (;;) {
            const unsigned long long old = atomicCAS(&rtab[s], 0ull, key);
            if (old == 0ull) {
                atomicAdd(&count, 1u);
                break;
            }
            if (old == key) break;
            s = s + 1 == nslot ? 0 : s + 1;
        }
    }
    __syncthreads();
    if (threadIdx.x == 0 && abft_tight_repeats((int64_t)count, a.k)) {
        if (rows)
            a.risky[v] = 1;
        else
            *a.brep = 1;
    }
}

/* A block of 8 warps takes 32 rows for weight column q = blockIdx.y, each warp 4 of them;
 * lane r carries sketch column r of all 4 (its share of the squared partial sums is its
 * own), with the tiles of Z (and of the lane orders' Zo), of the class weights and of the
 * rows of op(A) (transposed: xs[l][i], a warp's 4 rows in two 16-byte reads) for 32 values
 * of l in shared memory, so that Z is read once per 32 rows. The node terms are
 * abft_tight_window's (the ranges of the running sum kept per lane); each lane order's are
 * every node's square and the combination at each segment's end, as on the CPU. A tile
 * with none of the special terms (the last of a segment or its lanes' last S·b, the split,
 * the end of k) takes the fast path: its 32 terms unrolled, two whole windows, no test per
 * term; the others the general one, which tests each term. Both compute the same values
 * in the same order. The exact terms are dealt round the lanes (lane li: l = l0 + li); each
 * warp adds its lanes up at the end. The guard's verdict comes from guard_kernel. */
constexpr int RW = 8, RPW = 4, RROWS = RW * RPW, RL = 32, RXP = 2;
static_assert(ABFT_TIGHT_MAXORD == 2, "rows_kernel is instantiated for 0, 1 and 2 lane orders");
static_assert(RPW == 4 && RL % WIN == 0, "rows_kernel: 4 rows a warp, whole windows a tile");
/* One term of a row's running sums: P += x·z, and the window's range of P (comparisons,
 * not fmin/fmax: no NaN rule to pay for). */
__device__ __forceinline__ void scan_term(const double (&x)[RPW], double z, double (&P)[RPW],
                                         double (&pn)[RPW], double (&px)[RPW]) {
#pragma unroll
    for (int rr = 0; rr < RPW; ++rr) {
        P[rr] = fma(x[rr], z, P[rr]);
        pn[rr] = P[rr] < pn[rr] ? P[rr] : pn[rr];
        px[rr] = P[rr] > px[rr] ? P[rr] : px[rr];
    }
}
/* A window's end: its nodes' term (abft_tight_window, class weight g, len terms) into vs,
 * the running range widened by the window's, the window's range reset. */
__device__ __forceinline__ void scan_window(double g, int len, double (&pn)[RPW], double (&px)[RPW],
                                           double (&lo)[RPW], double (&hi)[RPW], double (&vs)[RPW]) {
#pragma unroll
    for (int rr = 0; rr < RPW; ++rr) {
        lo[rr] = fmin(lo[rr], pn[rr]);
        hi[rr] = fmax(hi[rr], px[rr]);
        vs[rr] += abft_tight_window(g, len, pn[rr], px[rr], lo[rr], hi[rr]);
        pn[rr] = INFINITY, px[rr] = -INFINITY;
    }
}
template <int NO> /* the lane orders: a.nord, fixed at compile time (registers) */
__global__ void __launch_bounds__(RW * 32, 2) rows_kernel(tight_dev a, int64_t nblk) {
    constexpr int NA = NO > 0 ? NO : 1;
    __shared__ double zs[RL][SK_Q + 1];
    __shared__ double zos[NA][RL][SK_Q + 1];
    __shared__ double gls[NA][RL];
    __shared__ double gws[RL], gwin[RL / WIN];
    __shared__ __align__(16) double xs[RL][RROWS + RXP];
    __shared__ int bads[RROWS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, q = blockIdx.y;
    const int64_t i0 = (int64_t)blockIdx.x * RROWS;
    if (threadIdx.x < RROWS) {
        const int64_t i = i0 + threadIdx.x;
        bads[threadIdx.x] = a.too_wide || (i < a.m && a.risky[i]);
    }
    const double *gW = a.gw + (size_t)(NWIN - 1) * (size_t)a.k;
    double P[RPW], lo[RPW], hi[RPW], pn[RPW], px[RPW], vs[RPW], fs[RPW], sh[RPW], yc[RPW];
    double Y[NA][RPW], vo[NA][RPW], gend[NA];
    constexpr int nord = NO;
    int64_t sbmax = 1; /* the most terms a lane order's combination looks back over */
    for (int o = 0; o < nord; ++o)
        sbmax = (int64_t)a.ord[o].S * a.ord[o].b > sbmax ? (int64_t)a.ord[o].S * a.ord[o].b : sbmax;
#pragma unroll
    for (int rr = 0; rr < RPW; ++rr) {
        P[rr] = lo[rr] = hi[rr] = vs[rr] = fs[rr] = sh[rr] = yc[rr] = 0.0;
        pn[rr] = INFINITY, px[rr] = -INFINITY;
#pragma unroll
        for (int o = 0; o < NA; ++o) Y[o][rr] = vo[o][rr] = 0.0;
    }
#pragma unroll
    for (int o = 0; o < NA; ++o) gend[o] = 0.0;
    double gw_max = 0.0;
    for (int64_t l0 = 0; l0 < a.k; l0 += RL) {
        const int ln = a.k - l0 < RL ? (int)(a.k - l0) : RL;
        __syncthreads();
        for (int x = threadIdx.x; x < RL * SK_Q; x += RW * 32) {
            const int li = x / SK_Q, r = x % SK_Q;
            zs[li][r] = li < ln ? a.Z[(l0 + li) * 2 * SK_Q + q * SK_Q + r] : 0.0;
            for (int o = 0; o < nord; ++o)
                zos[o][li][r] = li < ln ? a.Zo[((size_t)o * a.k + l0 + li) * 2 * SK_Q + q * SK_Q + r] : 0.0;
        }
        for (int x = threadIdx.x; x < nord * RL; x += RW * 32) {
            const int o = x / RL, li = x % RL;
            gls[o][li] = li < ln ? a.gl[o * a.k + l0 + li] : 0.0;
        }
        if (threadIdx.x < RL) gws[threadIdx.x] = threadIdx.x < ln ? gW[l0 + threadIdx.x] : 0.0;
        if (threadIdx.x < RL / WIN) { /* the largest class weight of each window */
            double m = 0.0;
            for (int li = threadIdx.x * WIN; li < (threadIdx.x + 1) * WIN && li < ln; ++li) m = fmax(m, gW[l0 + li]);
            gwin[threadIdx.x] = m;
        }
        for (int x = threadIdx.x; x < RROWS * RL; x += RW * 32) {
            /* adjacent threads along the stored matrix's contiguous index */
            const int ri = a.transa ? x / RL : x % RROWS, li = a.transa ? x % RL : x / RROWS;
            const int64_t i = i0 + ri;
            xs[li][ri] = i < a.m && li < ln ? opa(a, i, l0 + li) : 0.0;
        }
        __syncthreads();
        const int64_t lsp = a.ks ? a.ks - 1 : -1;
        const int64_t send = a.ks && l0 < a.ks ? a.ks - 1 : a.k - 1; /* this segment's last term */
        const bool fast = ln == RL && l0 + RL - 1 + sbmax <= send && !(a.ks && l0 == a.ks);
        if (fast) {
#pragma unroll
            for (int w = 0; w < RL / WIN; ++w) {
#pragma unroll
                for (int t = 0; t < WIN; ++t) {
                    const int li = w * WIN + t;
                    const double z = zs[li][lane];
                    const double2 x01 = *(const double2 *)&xs[li][warp * RPW];
                    const double2 x23 = *(const double2 *)&xs[li][warp * RPW + 2];
                    const double x[RPW] = {x01.x, x01.y, x23.x, x23.y};
                    scan_term(x, z, P, pn, px);
#pragma unroll
                    for (int o = 0; o < NO; ++o) {
                        const double zo = zos[o][li][lane], go = gls[o][li];
#pragma unroll
                        for (int rr = 0; rr < RPW; ++rr) {
                            const double y = fma(x[rr], zo, Y[o][rr]);
                            Y[o][rr] = y;
                            vo[o][rr] = fma(go, y * y, vo[o][rr]);
                        }
                    }
                }
                scan_window(gwin[w], WIN, pn, px, lo, hi, vs);
            }
        } else {
            /* a window's nodes at its end (abft_tight_window), the last rows' extra terms
             * only where they fall */
            for (int li = 0; li < ln; ++li) {
                const int64_t l = l0 + li;
                const double z = zs[li][lane], g = gws[li];
                double x[RPW];
#pragma unroll
                for (int rr = 0; rr < RPW; ++rr) x[rr] = xs[li][warp * RPW + rr];
                gw_max = fmax(gw_max, g);
                scan_term(x, z, P, pn, px);
                if ((l & (WIN - 1)) == WIN - 1 || l == a.k - 1) {
                    scan_window(gw_max, (int)(l & (WIN - 1)) + 1, pn, px, lo, hi, vs);
                    gw_max = 0.0;
                }
                if (l == a.k - 1 || l == lsp)
#pragma unroll
                    for (int rr = 0; rr < RPW; ++rr) fs[rr] += 2.0 * g * (P[rr] * P[rr]);
                const int64_t end = a.ks && l < a.ks ? a.ks - 1 : a.k - 1;
#pragma unroll
                for (int o = 0; o < NO; ++o) {
                    const double zo = zos[o][li][lane], go = gls[o][li];
                    if (end - l < (int64_t)a.ord[o].S * a.ord[o].b) gend[o] = fmax(gend[o], go);
                    const int fresh = a.ks && l == a.ks; /* the second half's lanes start from zero */
#pragma unroll
                    for (int rr = 0; rr < RPW; ++rr) {
                        const double y = fma(x[rr], zo, fresh ? 0.0 : Y[o][rr]);
                        Y[o][rr] = y;
                        vo[o][rr] = fma(go, y * y, vo[o][rr]);
                    }
                    if (l == end) {
                        const double c = abft_tight_comb_lanes(a.ord[o].S) * gend[o];
#pragma unroll
                        for (int rr = 0; rr < RPW; ++rr) vo[o][rr] = fma(c, Y[o][rr] * Y[o][rr], vo[o][rr]);
                        gend[o] = 0.0;
                    }
                }
            }
        }
        if (lane < ln) { /* the exact terms: lane li of the tile */
            const int64_t l = l0 + lane;
            const double b2 = a.B2[l * 2 + q] * a.Ws[l], y = a.Yb[l + q * a.ldyb];
#pragma unroll
            for (int rr = 0; rr < RPW; ++rr) {
                const double x = xs[lane][warp * RPW + rr];
                sh[rr] += x * x * b2;
                yc[rr] += x * x * y * y;
            }
        }
    }
#pragma unroll
    for (int rr = 0; rr < RPW; ++rr) {
        double v = vs[rr], f = fs[rr], h = sh[rr], c = yc[rr], w[NA];
#pragma unroll
        for (int o = 0; o < NA; ++o) w[o] = vo[o][rr];
        for (int off = 16; off >= 1; off /= 2) {
            v += __shfl_xor_sync(0xffffffffu, v, off);
            f += __shfl_xor_sync(0xffffffffu, f, off);
            h += __shfl_xor_sync(0xffffffffu, h, off);
            c += __shfl_xor_sync(0xffffffffu, c, off);
#pragma unroll
            for (int o = 0; o < NO; ++o) w[o] += __shfl_xor_sync(0xffffffffu, w[o], off);
        }
        /* the largest order's node sum (the natural order's, or a lane order's) */
        for (int o = 0; o < nord; ++o) v = fmax(v, w[o]);
        const int64_t i = i0 + warp * RPW + rr;
        if (lane == 0 && i < a.m) {
            if (bads[warp * RPW + rr]) {
                a.T[i + q * a.ldt] = -1.0;
            } else {
                const double V = a.u * a.u * ((v + f) / SK_Q + h) + a.u_chk * a.u_chk * c;
                const double t = a.lambda * fabs(a.alpha) * sqrt(V) * (1.0 + 0x1p-20);
                a.T[i + q * a.ldt] = t < INFINITY ? t : -1.0;
            }
        }
    }
}

size_t align256(size_t b) { return (b + 255) & ~(size_t)255; }

} // namespace

/* The device's shared memory per block, opted in. */
static abft_status_t smem_optin(const abft_kctx_t *ctx, size_t *bytes) {
    int v = 0;
    ABFT_CUDA_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx->device));
    *bytes = (size_t)v;
    return ABFT_STATUS_SUCCESS;
}

extern "C" abft_status_t abft_cuda_tight_filter(const abft_kctx_t *ctx, const abft_tight_args_t *a);

extern "C" int abft_cuda_tight_fits(const abft_kctx_t *ctx, int64_t n, int64_t k, double u) {
    size_t smem = 0;
    if (smem_optin(ctx, &smem) != ABFT_STATUS_SUCCESS) {
        (void)cudaGetLastError(); /* not left for a later check to find */
        return 0;                 /* unknown: the worst case */
    }
    return abft_tight_tables_fit(n, k, u, smem);
}

extern "C" abft_status_t abft_cuda_tight(const abft_kctx_t *ctx, const abft_tight_args_t *a) {
    const int64_t m = a->m, n = a->n, k = a->k;
    if (a->nrisky != NULL) *a->nrisky = -1; /* not counted on this backend */
    if (m == 0) return ABFT_STATUS_SUCCESS;
    cudaStream_t st = abft_cuda_stream(ctx);
    if (n == 0 || k == 0) {
        ABFT_CUDA_TRY(cudaMemset2DAsync(a->T, sizeof(double) * (size_t)a->ldt, 0,
                                        sizeof(double) * (size_t)m, 2, st));
        return ABFT_STATUS_SUCCESS;
    }
    if (a->filter) return abft_cuda_tight_filter(ctx, a); /* abft_cuda_filter.cu */
    const int64_t nblk = (k + WIN - 1) / WIN;
    int nord = 0, smax = 1;
    if (!abft_tight_orders(a->ord, a->nord, &nord, &smax)) return ABFT_STATUS_INVALID_VALUE;
    if (nord == 0) smax = 0; /* no lane draws */
    /* the sketches' slices of j: about 4 blocks per SM, at least 4 tiles of j per slice */
    int sms = 1;
    (void)abft_cuda_tune_get(ctx->device, &sms);
    const int64_t bl = (k + SKL - 1) / SKL, jt = (n + SKJ - 1) / SKJ;
    int64_t nz = 4 * (int64_t)sms / bl;
    nz = nz < jt / 4 ? nz : jt / 4;
    nz = nz > 1 ? nz : 1;
    const int64_t nper = (jt + nz - 1) / nz * SKJ; /* columns per slice */
    nz = (n + nper - 1) / nper;
    size_t bytes = align256(sizeof(double) * (size_t)n * SK_Q) +
                   align256(sizeof(double) * (size_t)smax * (size_t)n * SK_Q) +
                   align256(sizeof(double) * (size_t)nord * (size_t)k * 2 * SK_Q) +
                   align256(sizeof(double) * (size_t)nord * (size_t)k) +
                   align256(sizeof(double) * (size_t)k * 2 * SK_Q) +
                   align256(sizeof(double) * (size_t)k * 2) +
                   align256(sizeof(double) * (size_t)k * NWIN) + align256(sizeof(double) * (size_t)k) +
                   align256(sizeof(uint32_t) * (size_t)nblk) + align256(sizeof(int) * (size_t)m) +
                   align256(sizeof(int)) +
                   (nz > 1 ? align256(sizeof(double) * (size_t)nz * (size_t)k * (2 * SK_Q + 2)) : 0);
    void *mem = NULL;
    ABFT_TRY_STATUS(abft_cuda_scratch(ctx, bytes, &mem));
    tight_dev d;
    static_cast<abft_tight_args_t &>(d) = *a;
    d.ks = a->ksplit > 0 && a->ksplit < k ? a->ksplit : 0;
    d.nord = nord;
    d.qbits = abft_tight_qbits(a->u, k);
    const int long_guard = abft_tight_long_guard(a->u, k);
    size_t smem = 0;
    ABFT_TRY_STATUS(smem_optin(ctx, &smem));
    d.too_wide = !abft_tight_tables_fit(n, k, a->u, smem);
    char *p = (char *)mem;
    d.G = (double *)p, p += align256(sizeof(double) * (size_t)n * SK_Q);
    d.GL = (double *)p, p += align256(sizeof(double) * (size_t)smax * (size_t)n * SK_Q);
    d.Zo = (double *)p, p += align256(sizeof(double) * (size_t)nord * (size_t)k * 2 * SK_Q);
    d.gl = (double *)p, p += align256(sizeof(double) * (size_t)nord * (size_t)k);
    d.Z = (double *)p, p += align256(sizeof(double) * (size_t)k * 2 * SK_Q);
    d.B2 = (double *)p, p += align256(sizeof(double) * (size_t)k * 2);
    d.gw = (double *)p, p += align256(sizeof(double) * (size_t)k * NWIN);
    d.Ws = (double *)p, p += align256(sizeof(double) * (size_t)k);
    d.mask = (uint32_t *)p, p += align256(sizeof(uint32_t) * (size_t)nblk);
    d.risky = (int *)p, p += align256(sizeof(int) * (size_t)m);
    d.brep = (int *)p, p += align256(sizeof(int));
    double *Zp = nz > 1 ? (double *)p : NULL;                            /* nz x k x 2·SK_Q */
    double *Bp = nz > 1 ? Zp + (size_t)nz * (size_t)k * 2 * SK_Q : NULL; /* nz x k x 2 */
    const size_t zst = nz > 1 ? (size_t)k * 2 * SK_Q : 0;
    ABFT_CUDA_TRY(cudaMemsetAsync(d.mask, 0, sizeof(uint32_t) * (size_t)nblk, st));
    ABFT_CUDA_TRY(cudaMemsetAsync(d.risky, 0, sizeof(int) * (size_t)m, st));
    ABFT_CUDA_TRY(cudaMemsetAsync(d.brep, 0, sizeof(int), st));
    if (!d.too_wide) {
        gauss_kernel<<<(unsigned)((n * SK_Q + 255) / 256), 256, 0, st>>>(d, 0);
        ABFT_CUDA_LAUNCHED();
        sketch_kernel<<<dim3((unsigned)bl, 1, (unsigned)nz), 256, 0, st>>>(
            d, d.G, nz > 1 ? Zp : d.Z, nz > 1 ? Bp : d.B2, rowmap{0, k, 1, 1}, nper, zst);
        ABFT_CUDA_LAUNCHED();
        if (nz > 1) {
            slices_kernel<<<(unsigned)((k * 2 * SK_Q + 255) / 256), 256, 0, st>>>(
                d.Z, Zp, 0, k * 2 * SK_Q, (int)nz, zst);
            ABFT_CUDA_LAUNCHED();
            slices_kernel<<<(unsigned)((k * 2 + 255) / 256), 256, 0, st>>>(d.B2, Bp, 0, k * 2,
                                                                          (int)nz, zst / SK_Q);
            ABFT_CUDA_LAUNCHED();
        }
        if (nord > 0) {
            gauss_kernel<<<(unsigned)((smax * n * SK_Q + 255) / 256), 256, 0, st>>>(d, smax);
            ABFT_CUDA_LAUNCHED();
        }
        for (int o = 0; o < nord; ++o) /* each segment's lanes, one launch each */
            for (int seg = 0; seg < (d.ks ? 2 : 1); ++seg) {
                const int64_t base = seg ? d.ks : 0, end = d.ks && !seg ? d.ks : k;
                const int S = a->ord[o].S, b = a->ord[o].b;
                const int64_t per = (int64_t)S * b, nx = (end - base + per - 1) / per * b;
                double *Zo = d.Zo + (size_t)o * (size_t)k * 2 * SK_Q;
                sketch_kernel<<<dim3((unsigned)((nx + SKL - 1) / SKL), (unsigned)S, (unsigned)nz), 256,
                                0, st>>>(d, d.GL, nz > 1 ? Zp : Zo, NULL, rowmap{base, end, S, b}, nper,
                                         zst);
                ABFT_CUDA_LAUNCHED();
                if (nz > 1) {
                    const int64_t e0 = base * 2 * SK_Q, e1 = end * 2 * SK_Q;
                    slices_kernel<<<(unsigned)((e1 - e0 + 255) / 256), 256, 0, st>>>(Zo, Zp, e0, e1,
                                                                                     (int)nz, zst);
                    ABFT_CUDA_LAUNCHED();
                }
            }
        const int64_t nslot = abft_tight_class_slots(n);
        size_t smem = sizeof(uint32_t) * 2 * (size_t)nslot + (size_t)n; /* + done[] */
        ABFT_CUDA_TRY(cudaFuncSetAttribute(class_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)smem));
        class_kernel<<<(unsigned)k, 256, smem, st>>>(d, nslot);
        ABFT_CUDA_LAUNCHED();
        ws_kernel<<<(unsigned)((k + 255) / 256), 256, 0, st>>>(d);
        ABFT_CUDA_LAUNCHED();
        mask_kernel<<<(unsigned)((nblk * n + 255) / 256), 256, 0, st>>>(d, nblk);
        ABFT_CUDA_LAUNCHED();
        guard_kernel<<<(unsigned)((nblk * m + 255) / 256), 256, 0, st>>>(d, nblk);
        ABFT_CUDA_LAUNCHED();
        if (long_guard) { /* the columns of op(B), then (where one repeats) the rows of op(A) */
            const int64_t ls = abft_tight_long_slots(k);
            const size_t lsm = sizeof(unsigned long long) * (size_t)ls;
            ABFT_CUDA_TRY(cudaFuncSetAttribute(repeat_kernel,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, (int)lsm));
            repeat_kernel<<<(unsigned)n, REP_THREADS, lsm, st>>>(d, 0, ls);
            ABFT_CUDA_LAUNCHED();
            repeat_kernel<<<(unsigned)m, REP_THREADS, lsm, st>>>(d, 1, ls);
            ABFT_CUDA_LAUNCHED();
        }
    }
    const dim3 rg((unsigned)((m + RROWS - 1) / RROWS), 2);
    const int no = d.too_wide ? 0 : nord; /* every row to the worst case: no scan needed */
    if (no == 0) rows_kernel<0><<<rg, RW * 32, 0, st>>>(d, nblk);
    else if (no == 1) rows_kernel<1><<<rg, RW * 32, 0, st>>>(d, nblk);
    else rows_kernel<2><<<rg, RW * 32, 0, st>>>(d, nblk);
    ABFT_CUDA_LAUNCHED();
    return ABFT_STATUS_SUCCESS;
}

/* abft verify layer: the protected GEMM (docs/bound.md) and its split form.
 *
 *   1. pass over B:  Yb = op(B)·V, Yba = |op(B)|·V                         (k x 2 each)
 *   2. pass over A:  S = op(A)·Yb, Sa = |op(A)|·Yba                        (m x 2 each)
 *      (FULL: the same read of A also gives Za = op(A)^T·V, Zaa = |op(A)|^T·V, and a read
 *       of B gives T = op(B)^T·Za, Ta = |op(B)|^T·Zaa, n x 2 each)
 *      beta != 0: a pass over the old C first: P = C·V, Pa = |C|·V (and columns for FULL)
 *   3. the GEMM itself, untouched (split in two halves along k only when a hook is set)
 *   4. pass over C:  R = C·V, Ra = |C|·V (FULL: columns from the same read), compare with
 *      alpha·S + beta·P against the bound of docs/bound.md; locate, correct, re-verify.
 *
 * Everything bulky runs on the handle's backend; the handling of flagged rows/columns (rare)
 * runs on the host on copies of the few rows/columns concerned. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abft_bound.h"
#include "abft_correct.h"
#include "abft_internal.h"

/* Indices of the fp64 work arrays of a plan; each is (rows of its side) x 2, except that
 * with the random checksum each array of the rows is x 4 and its random twin (W_YR for
 * W_YB, ...) is its last two columns, and W_RW is n x 4 (plan_layout). */
enum {
    W_YB, W_YBA,           /* k x 2: op(B)·V, |op(B)|·V */
    W_S, W_SA,             /* m x 2: op(A)·Yb, |op(A)|·Yba */
    W_P, W_PA,             /* m x 2: C_old·V, |C_old|·V */
    W_R, W_RA,             /* m x 2: C·V, |C|·V */
    W_ZA, W_ZAA,           /* k x 2: op(A)^T·V, |op(A)|^T·V            (FULL) */
    W_T, W_TA,             /* n x 2: op(B)^T·Za, |op(B)|^T·Zaa          (FULL) */
    W_PC, W_PCA,           /* n x 2: C_old^T·V, |C_old|^T·V             (FULL) */
    W_RC, W_RCA,           /* n x 2: C^T·V, |C|^T·V                     (FULL) */
    W_TMP,                 /* 2 x 2: one recomputed element or checksum entry */
    W_SIG, W_SIGT,         /* 2 x 2: S^T·V and T^T·V at encoding: the checksums' own checksum */
    /* the detection-only random checksum (abft_set_random_checksum), rows only: */
    W_RW,                  /* n x 4: the weights [1, j+1, r0, r1] (Vr: the last two) */
    W_YR, W_YRA,           /* k x 2: op(B)·Vr, |op(B)|·Vr */
    W_SR, W_SRA,           /* m x 2: op(A)·Yr, |op(A)|·Yra */
    W_PR, W_PRA,           /* m x 2: C_old·Vr, |C_old|·Vr */
    W_RR, W_RRA,           /* m x 2: C·Vr, |C|·Vr */
    W_SIGR,                /* 2 x 2: Sr^T·V at encoding */
    /* the tight bound mode (ABFT_BOUND_TIGHT): each entry's part of the bound from the
     * inputs, computed at encoding by the tight pass */
    W_TT,                  /* m x 2: rows */
    W_TTC,                 /* n x 2: columns                           (FULL) */
    /* the full tight pass's part where the filter ran at encoding (two stages), merged into
     * W_TT and W_TTC once the compare against the filter flags something */
    W_TF,                  /* m x 2: rows */
    W_TFC,                 /* n x 2: columns                           (FULL) */
    W_COUNT
};

struct abft_gemm_plan {
    abft_handle_t h;
    abft_prec_t prec;
    int transa, transb;
    int64_t m, n, k;
    double alpha, beta;
    abft_checksum_kind_t kind;
    int rnd;            /* the random checksum, with its seed (the handle's at creation) */
    uint64_t rnd_seed;
    int rnd_ready;      /* a plan's own copy of the weights is uploaded */
    int encoded;
    int tight;          /* the tight pass ran at the last encoding (W_TT, W_TTC hold it) */
    int two_stage;      /* encode the tight mode's filter only, the full pass at verification
                         * where the filter's bound flags something (a call that has its
                         * inputs at verification: the one-call form) */
    int tight_full;     /* W_TT, W_TTC hold the full pass's part (or the larger of it and the
                         * filter's) */
    int comp;           /* the checksums in compensated sums (abft_tsmm_args_t): fp64 data
                         * in the tight mode on the CUDA backend, fixed at the encoding */
    double tight_u;     /* with this unit roundoff of the GEMM */
    int64_t tight_ks;   /* and this split of the GEMM along k (0: none) */
    abft_arith_t arith; /* the GEMM's arithmetic, read at encode and verify (plan_arith) */
    abft_math_t math;   /* the split form's declaration (ABFT_MATH_HANDLE: the handle's) */
    void *math_blas;    /* or the caller's cuBLAS handle whose math mode is read */
    int own_mem;      /* the plan allocated `mem` itself (split form) */
    void *mem;        /* backend memory holding every work array */
    double *w[W_COUNT];
    int64_t ld[W_COUNT];
};


static size_t elem_size(abft_prec_t p) { return p == ABFT_PREC_D ? sizeof(double) : sizeof(float); }

/* The random checksum's arrays and the arrays of the rows they share a layout with: the twin
 * of W_YR is W_YB, and so on (-1: none). */
static int rnd_twin(int i) {
    switch (i) {
    case W_YR: return W_YB;
    case W_YRA: return W_YBA;
    case W_SR: return W_S;
    case W_SRA: return W_SA;
    case W_PR: return W_P;
    case W_PRA: return W_PA;
    case W_RR: return W_R;
    case W_RRA: return W_RA;
    default: return -1;
    }
}
static int rnd_has_twin(int i) {
    return i == W_YB || i == W_YBA || i == W_S || i == W_SA || i == W_P || i == W_PA ||
           i == W_R || i == W_RA;
}

/* Lay the work arrays out in `mem` (or compute the size when mem == NULL). */
static size_t plan_layout(struct abft_gemm_plan *p, void *mem) {
    int64_t rows[W_COUNT] = {p->k, p->k, p->m, p->m, p->m, p->m, p->m, p->m,
                             p->k, p->k, p->n, p->n, p->n, p->n, p->n, p->n, 2, 2, 2,
                             p->n, p->k, p->k, p->m, p->m, p->m, p->m, p->m, p->m, 2,
                             p->m, p->n, p->m, p->n};
    const int full = p->kind == ABFT_CHECKSUM_FULL;
    size_t off = 0;
    for (int i = 0; i < W_COUNT; ++i) {
        int64_t r = rows[i] > 0 ? rows[i] : 1;
        p->ld[i] = r;
        p->w[i] = NULL;
        if (!full && ((i >= W_ZA && i < W_TMP) || i == W_SIGT || i == W_TTC || i == W_TFC))
            continue;
        if (!p->rnd && i >= W_RW && i <= W_SIGR) continue;
        /* with the random checksum, each array of the rows and its random twin are one
         * array of 4 columns (the twin its last two), so that one pass with the weights
         * [1, j+1, r0, r1] fills both (rnd_fused) */
        int twin = rnd_twin(i);
        if (p->rnd && twin >= 0) { /* 16·rows bytes in: aligned to 16 bytes only */
            if (mem != NULL) p->w[i] = p->w[twin] + 2 * p->ld[twin];
            continue;
        }
        if (i == W_RW && !p->own_mem) continue; /* the handle's copy (rnd_upload) */
        int cols = p->rnd && (rnd_has_twin(i) || i == W_RW) ? 4 : 2;
        if (mem != NULL) p->w[i] = (double *)((char *)mem + off);
        /* keep every array 256-byte aligned so kernels may use wide loads */
        off += ((size_t)r * (size_t)cols * sizeof(double) + 255) & ~(size_t)255;
    }
    return off;
}

/* pos: the position of transa in the public call; transb, m, n, k follow it. */
static abft_status_t check_shape(abft_handle_t h, int transa, int transb, int64_t m, int64_t n,
                                 int64_t k, int pos) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(abft_bad_op(transa), pos);
    ABFT_ARG_IF(abft_bad_op(transb), pos + 1);
    ABFT_ARG_IF(m < 0, pos + 2);
    ABFT_ARG_IF(n < 0, pos + 3);
    ABFT_ARG_IF(k < 0, pos + 4);
    return ABFT_STATUS_SUCCESS;
}

/* Do the memory spans of two column-major matrices overlap? (Spans, not elements: a
 * conservative test.) Empty matrices overlap nothing. */
static int overlaps(const void *X, int64_t xr, int64_t xc, int64_t ldx, const void *Y, int64_t yr,
                    int64_t yc, int64_t ldy, size_t es) {
    if (xr == 0 || xc == 0 || yr == 0 || yc == 0) return 0;
    uintptr_t x0 = (uintptr_t)X, x1 = x0 + es * (size_t)(ldx * (xc - 1) + xr);
    uintptr_t y0 = (uintptr_t)Y, y1 = y0 + es * (size_t)(ldy * (yc - 1) + yr);
    return x0 < y1 && y0 < x1;
}

/* C is written (the result, corrections) while A and B are read (and read again for
 * recomputation): does C overlap either? With alpha = 0 or k = 0 they are not referenced;
 * a NULL one (the split form's verify without inputs) is not read. */
static int c_overlaps_inputs(const struct abft_gemm_plan *p, const void *A, int64_t lda,
                             const void *B, int64_t ldb, const void *C, int64_t ldc) {
    if (!(p->alpha != 0.0 && p->k > 0)) return 0;
    const int64_t ar = p->transa ? p->k : p->m, ac = p->transa ? p->m : p->k;
    const int64_t br = p->transb ? p->n : p->k, bc = p->transb ? p->k : p->n;
    const size_t es = elem_size(p->prec);
    return (A != NULL && overlaps(C, p->m, p->n, ldc, A, ar, ac, lda, es)) ||
           (B != NULL && overlaps(C, p->m, p->n, ldc, B, br, bc, ldb, es));
}

/* C == NULL with ldc == 0: the split form's encode with beta = 0, which does not read C.
 * With alpha = 0 (or k = 0) A and B are not referenced, as in BLAS: they may be NULL, their
 * leading dimensions are still checked. */
/* pos: the positions of A, lda, B, ldb, C, ldc in the public call. */
static abft_status_t check_operands(const struct abft_gemm_plan *p, const void *A, int64_t lda,
                                    const void *B, int64_t ldb, const void *C, int64_t ldc,
                                    const int pos[6]) {
    const int no_c = C == NULL && ldc == 0;
    const int ab_used = p->alpha != 0.0 && p->k > 0;
    int64_t ar = p->transa ? p->k : p->m, ac = p->transa ? p->m : p->k;
    int64_t br = p->transb ? p->n : p->k, bc = p->transb ? p->k : p->n;
    int bad = abft_matrix_bad_arg(ar, ac, ab_used ? A : (const void *)&lda, lda, pos[0], pos[1]);
    ABFT_ARG_IF(bad != 0, bad);
    bad = abft_matrix_bad_arg(br, bc, ab_used ? B : (const void *)&ldb, ldb, pos[2], pos[3]);
    ABFT_ARG_IF(bad != 0, bad);
    if (no_c) return ABFT_STATUS_SUCCESS;
    bad = abft_matrix_bad_arg(p->m, p->n, C, ldc, pos[4], pos[5]);
    ABFT_ARG_IF(bad != 0, bad);
    ABFT_ARG_IF(c_overlaps_inputs(p, A, lda, B, ldb, C, ldc), pos[4]);
    return ABFT_STATUS_SUCCESS;
}

/* The arithmetic of the GEMM being verified: the handle's (its cuBLAS math mode), or what
 * the split form's caller declared or lent. */
static abft_status_t plan_arith(struct abft_gemm_plan *p) {
    if (p->math_blas != NULL) return abft_bound_arith_cublas(p->math_blas, p->prec, &p->arith);
    if (p->math == ABFT_MATH_HANDLE) return abft_bound_arith(p->h, p->prec, &p->arith);
    return abft_arith_of(p->math, p->prec, &p->arith);
}

/* ---- encoding ------------------------------------------------------------------------ */

/* comp: compensated sums (abft_tsmm_args_t; the plan's comp for the checksums the tight
 * bound compares, 0 for the random checksum's and the checksums' own) */
static abft_status_t run_tsmm_c(abft_handle_t h, int comp, abft_prec_t prec, int trans,
                                int64_t rows, int64_t cols, int64_t c, const void *A,
                                int64_t lda, const double *X, int64_t ldx, const double *Xa,
                                int64_t ldxa, double *Y, int64_t ldy, double *Ya, int64_t ldya) {
    if ((trans ? cols : rows) == 0) return ABFT_STATUS_SUCCESS;
    abft_tsmm_args_t a = {prec, trans, rows, cols, c, A, lda, X, ldx, Xa, ldxa, Y, ldy, Ya, ldya,
                          comp};
    return h->ops->tsmm(&h->kctx, &a);
}

static abft_status_t run_tsmm(abft_handle_t h, int comp, abft_prec_t prec, int trans,
                              int64_t rows, int64_t cols, const void *A, int64_t lda,
                              const double *X, int64_t ldx, const double *Xa, int64_t ldxa,
                              double *Y, int64_t ldy, double *Ya, int64_t ldya) {
    return run_tsmm_c(h, comp, prec, trans, rows, cols, 2, A, lda, X, ldx, Xa, ldxa, Y, ldy,
                      Ya, ldya);
}

/* ---- the random checksum ------------------------------------------------------------- */

static uint64_t rnd_mix(uint64_t z) { /* splitmix64's finalizer */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Weight q of column j: 1 + x, x one of the 2^52 multiples of 2^-52 in [0, 1) (exact in
 * fp64), from a splitmix64 hash of the mixed seed, q and j. Every weight is at least 1, so a
 * change of one element by delta moves the residual by at least |delta| (the fixed weights'
 * guarantee holds for it too), and below 2, so the bound's sums grow by at most 2x. */
static double rnd_weight(uint64_t seed, int q, int64_t j) {
    uint64_t z = rnd_mix(seed ^ 0x6a09e667f3bcc909ull) +
                 0x9E3779B97F4A7C15ull * ((uint64_t)j * 2u + (uint64_t)q + 1u);
    return 1.0 + (double)(rnd_mix(z) >> 12) * 0x1p-52;
}

/* The n x 2 weights on the host (column-major, ld n). */
static void rnd_weights(uint64_t seed, int64_t n, double *v) {
    for (int q = 0; q < 2; ++q)
        for (int64_t j = 0; j < n; ++j) v[j + q * n] = rnd_weight(seed, q, j);
}

/* The random weights in backend memory: columns 2 and 3 of W_RW (its first two hold the
 * fixed weights 1 and j + 1, exact in fp64, for the fused passes). */
static const double *rnd_cols(const struct abft_gemm_plan *p) {
    return p->w[W_RW] + 2 * p->ld[W_RW];
}

/* Does one pass with the weights [1, j+1, r0, r1] give the fixed and the random checksums
 * of the rows together? With row checksums, yes; beside full checksums (whose passes also
 * read the other side, through the dual kernel) the random checksum has passes of its
 * own. */
static int rnd_fused(const struct abft_gemm_plan *p) {
    return p->rnd && p->kind != ABFT_CHECKSUM_FULL;
}

/* The weights [1, j+1, r0, r1] (n x 4) in backend memory, pointed to by W_RW. A plan of the
 * split form keeps them in its own memory, uploaded at its first encode; a protected call
 * uses the handle's copy, uploaded again only when the seed or n changed (an upload waits
 * for the stream: the weights are generated on the host). */
static abft_status_t rnd_upload(struct abft_gemm_plan *p) {
    abft_handle_t h = p->h;
    double *dst = p->w[W_RW];
    int fixed_ok = 0; /* the first two columns already hold [1, j+1] for this n */
    if (p->own_mem) {
        if (p->rnd_ready) return ABFT_STATUS_SUCCESS;
    } else {
        if (h->rnd_w_n == p->n && h->rnd_w_seed == p->rnd_seed) {
            p->w[W_RW] = (double *)h->rnd_w.ptr, p->ld[W_RW] = p->n;
            return ABFT_STATUS_SUCCESS;
        }
        /* a new seed for the same n (the drop-in library's every call): the random
         * columns only */
        fixed_ok = h->rnd_w_n == p->n;
        h->rnd_w_n = -1;
        if (!fixed_ok)
            ABFT_TRY(abft_buffer_reserve(h, &h->rnd_w, sizeof(double) * (size_t)p->n * 4));
        dst = (double *)h->rnd_w.ptr;
    }
    double *v = (double *)malloc(sizeof(double) * (size_t)p->n * 4 + 1);
    ABFT_RETURN_IF(v == NULL, ABFT_STATUS_ALLOC_FAILED);
    for (int64_t j = 0; j < p->n; ++j) v[j] = 1.0, v[j + p->n] = (double)(j + 1);
    rnd_weights(p->rnd_seed, p->n, v + 2 * p->n);
    const int64_t c0 = fixed_ok ? 2 : 0;
    abft_copy_args_t c = {1, sizeof(double), p->n, 4 - c0, v + c0 * p->n, p->n,
                          dst + c0 * p->n, p->n};
    abft_status_t st = h->ops->copy(&h->kctx, &c);
    free(v);
    ABFT_TRY(st);
    if (p->own_mem) {
        p->rnd_ready = 1;
    } else {
        h->rnd_w_n = p->n, h->rnd_w_seed = p->rnd_seed;
        p->w[W_RW] = dst, p->ld[W_RW] = p->n;
    }
    return ABFT_STATUS_SUCCESS;
}

/* The random checksum's encodings: Yr = op(B)·Vr, Sr = op(A)·Yr with their absolute
 * companions (alpha term), and Pr = C_old·Vr (beta != 0): with row checksums the fused
 * passes of encode() made them; beside full checksums one more pass over B, A and C. Then
 * Sr's own checksum. */
static abft_status_t rnd_encode(struct abft_gemm_plan *p, const void *A, int64_t lda,
                                const void *B, int64_t ldb, const void *C, int64_t ldc) {
    abft_handle_t h = p->h;
    double **w = p->w;
    int64_t *ld = p->ld;
    int64_t br = p->transb ? p->n : p->k, bc = p->transb ? p->k : p->n;
    int64_t ar = p->transa ? p->k : p->m, ac = p->transa ? p->m : p->k;
    const int own = !rnd_fused(p); /* passes of its own (beside full checksums) */
    if (p->k > 0 && p->alpha != 0.0) {
        if (own) {
            ABFT_TRY(run_tsmm(h, p->comp, p->prec, p->transb, br, bc, B, ldb, rnd_cols(p), ld[W_RW],
                              NULL, 0, w[W_YR], ld[W_YR], w[W_YRA], ld[W_YRA]));
            ABFT_TRY(run_tsmm(h, p->comp, p->prec, p->transa, ar, ac, A, lda, w[W_YR], ld[W_YR],
                              w[W_YRA], ld[W_YRA], w[W_SR], ld[W_SR], w[W_SRA], ld[W_SRA]));
        }
        /* their own checksum: a corrupted entry of Sr is told from a corrupted input */
        ABFT_TRY(run_tsmm(h, 0, ABFT_PREC_D, 1, p->m, 2, w[W_SR], ld[W_SR], NULL, 0, NULL, 0,
                          w[W_SIGR], ld[W_SIGR], NULL, 0));
    }
    if (p->beta != 0.0 && own)
        ABFT_TRY(run_tsmm(h, p->comp, p->prec, 0, p->m, p->n, C, ldc, rnd_cols(p), ld[W_RW], NULL, 0,
                          w[W_PR], ld[W_PR], w[W_PRA], ld[W_PRA]));
    return ABFT_STATUS_SUCCESS;
}

/* Row (and for FULL column) checksums of an m x n matrix M with abs companions, from one
 * read: R = M·V, Ra = |M|·V, and Rc = M^T·V, Rca = |M|^T·V when Rc != NULL. */
static abft_status_t encode_matrix(abft_handle_t h, int comp, abft_prec_t prec, int64_t m,
                                   int64_t n, const void *M, int64_t ldm, double *R, double *Ra,
                                   int64_t ldr, double *Rc, double *Rca, int64_t ldrc) {
    if (m == 0 || n == 0) return ABFT_STATUS_SUCCESS;
    if (Rc == NULL)
        return run_tsmm(h, comp, prec, 0, m, n, M, ldm, NULL, 0, NULL, 0, R, ldr, Ra, ldr);
    abft_dual_args_t a = {prec, m, n, M, ldm, 2, NULL, 0, NULL, 0, R, ldr, Ra, ldr,
                          2, NULL, 0, NULL, 0, Rc, ldrc, Rca, ldrc, comp};
    return h->ops->dual(&h->kctx, &a);
}

/* Does the rows x cols matrix M hold a NaN or an Inf? M·0 is NaN exactly in the rows that
 * do (Inf·0 and NaN·0 are NaN): one tall-and-skinny product against zeros, then the
 * screen. Only on the rare path where an absolute-value sum was not finite. */
static abft_status_t has_nonfinite(abft_handle_t h, abft_prec_t prec, int64_t rows, int64_t cols,
                                   const void *M, int64_t ldm, int64_t *count) {
    *count = 0;
    if (rows == 0 || cols == 0) return ABFT_STATUS_SUCCESS;
    size_t zbytes = sizeof(double) * (size_t)cols * 2, ybytes = sizeof(double) * (size_t)rows * 2;
    void *dz = NULL, *dy = NULL;
    double *hz = (double *)calloc((size_t)cols * 2, sizeof(double));
    abft_status_t st = hz != NULL ? ABFT_STATUS_SUCCESS : ABFT_STATUS_ALLOC_FAILED;
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->alloc(&h->kctx, zbytes, &dz);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->alloc(&h->kctx, ybytes, &dy);
    if (st == ABFT_STATUS_SUCCESS) {
        abft_copy_args_t c = {1, sizeof(double), cols, 2, hz, cols, dz, cols};
        st = h->ops->copy(&h->kctx, &c);
    }
    if (st == ABFT_STATUS_SUCCESS)
        st = run_tsmm(h, 0, prec, 0, rows, cols, M, ldm, (const double *)dz, cols, NULL, 0,
                      (double *)dy, rows, NULL, 0);
    if (st == ABFT_STATUS_SUCCESS) st = abft_count_nonfinite(h, (const double *)dy, rows, rows, count);
    if (dz != NULL) h->ops->free(&h->kctx, dz);
    if (dy != NULL) h->ops->free(&h->kctx, dy);
    free(hz);
    return st;
}

/* Non-finite inputs: any NaN/Inf in A or B makes Sa = |A|·(|B|·V) non-finite (the weights
 * are >= 1, and 0·Inf is NaN), so one screen covers both (and the columns of FULL); the old C
 * (beta != 0) likewise shows in Pa. These sums can also overflow for huge finite data: then
 * a scan of the matrix decides. *nonfinite: rows found holding a NaN or an Inf. */
static abft_status_t screen_inputs(struct abft_gemm_plan *p, const void *A, int64_t lda,
                                   const void *B, int64_t ldb, const void *C, int64_t ldc,
                                   int64_t *nonfinite) {
    abft_handle_t h = p->h;
    int64_t br = p->transb ? p->n : p->k, bc = p->transb ? p->k : p->n;
    int64_t ar = p->transa ? p->k : p->m, ac = p->transa ? p->m : p->k;
    int64_t bad = 0;
    *nonfinite = 0;
    if (p->m == 0 || p->n == 0) return ABFT_STATUS_SUCCESS;
    if (p->k > 0 && p->alpha != 0.0) {
        ABFT_TRY(abft_count_nonfinite(h, p->w[W_SA], p->m, p->ld[W_SA], &bad));
        if (bad > 0) {
            ABFT_TRY(has_nonfinite(h, p->prec, ar, ac, A, lda, &bad));
            int64_t bb = 0;
            if (bad == 0) ABFT_TRY(has_nonfinite(h, p->prec, br, bc, B, ldb, &bb));
            bad += bb;
        }
        *nonfinite += bad;
    }
    if (p->beta != 0.0) {
        ABFT_TRY(abft_count_nonfinite(h, p->w[W_PA], p->m, p->ld[W_PA], &bad));
        if (bad > 0) ABFT_TRY(has_nonfinite(h, p->prec, p->m, p->n, C, ldc, &bad));
        *nonfinite += bad;
    }
    return ABFT_STATUS_SUCCESS;
}

/* Does the call read any input it must screen? (alpha = 0 or k = 0: neither A nor B) */
static int needs_screen(const struct abft_gemm_plan *p) {
    return p->m > 0 && p->n > 0 && ((p->k > 0 && p->alpha != 0.0) || p->beta != 0.0);
}

/* The tight bound mode: is it on for this plan's handle, and can the backend run it? */
static int tight_wanted(const struct abft_gemm_plan *p) {
    return p->h->bound_mode == ABFT_BOUND_TIGHT;
}
/* How the plan's checksums are summed, for the tight bound (abft_bound_tight_comp; on the
 * CUDA backend compensated only where the encoding asked for it: comp). */
static int tight_compensated(const struct abft_gemm_plan *p) {
    const int c = abft_bound_tight_comp(p->h->backend, p->prec);
    return c == ABFT_TIGHT_COMP_TREE && !p->comp ? ABFT_TIGHT_COMP_PLAIN : c;
}
/* The backend runs the tight pass. */
static abft_status_t tight_check(const struct abft_gemm_plan *p) {
    if (!tight_wanted(p)) return ABFT_STATUS_SUCCESS;
    ABFT_RETURN_IF(p->h->ops->tight == NULL, ABFT_STATUS_NOT_SUPPORTED);
    return ABFT_STATUS_SUCCESS;
}

/* The tight pass (after the encodings of B and A, whose op(B)·V and op(A)^T·V it reads):
 * each row's part of the tight bound, and each column's for FULL (the same pass over
 * C^T = op(B)^T·op(A)^T). Where it does not apply (abft_bound_tight_applies: an arithmetic
 * that shortens the inputs) the worst case is used. */
static abft_status_t tight_run(struct abft_gemm_plan *p, const void *A, int64_t lda,
                               const void *B, int64_t ldb, int filter, int ti, int tci) {
    abft_handle_t h = p->h;
    abft_gemm_tight_t tb;
    abft_bound_gemm_tight(h, &p->arith, p->n, p->k, p->n, tight_compensated(p), &tb);
    abft_tight_args_t a = {p->prec, p->transa, p->transb, p->m, p->n, p->k, A, lda, B, ldb,
                           p->w[W_YB], p->ld[W_YB], p->alpha, tb.u, tb.u_chk, tb.lambda,
                           p->w[ti], p->ld[ti], NULL, p->tight_ks, 0, {{0, 0}}, filter};
    a.nord = abft_bound_tight_lanes(h->backend, a.ord);
    ABFT_TRY(h->ops->tight(&h->kctx, &a));
    if (p->kind == ABFT_CHECKSUM_FULL) {
        abft_bound_gemm_tight(h, &p->arith, p->m, p->k, p->m, tight_compensated(p), &tb);
        abft_tight_args_t c = {p->prec, !p->transb, !p->transa, p->n, p->m, p->k, B, ldb, A,
                               lda, p->w[W_ZA], p->ld[W_ZA], p->alpha, tb.u, tb.u_chk,
                               tb.lambda, p->w[tci], p->ld[tci], NULL, p->tight_ks, 0, {{0, 0}},
                               filter};
        c.nord = abft_bound_tight_lanes(h->backend, c.ord);
        ABFT_TRY(h->ops->tight(&h->kctx, &c));
    }
    return ABFT_STATUS_SUCCESS;
}

/* At encoding: the full pass, or in two stages the filter only (docs/bound.md, "Two
 * stages"). */
static abft_status_t tight_pass(struct abft_gemm_plan *p, const void *A, int64_t lda,
                                const void *B, int64_t ldb) {
    if (!tight_wanted(p) || !abft_bound_tight_applies(&p->arith))
        return ABFT_STATUS_SUCCESS;
    ABFT_TRY(tight_check(p));
    p->tight_ks = abft_gemm_ksplit(p->h, p->k); /* as run_gemm splits it */
    ABFT_TRY(tight_run(p, A, lda, B, ldb, p->two_stage, W_TT, W_TTC));
    p->tight = 1;
    p->tight_full = !p->two_stage;
    p->tight_u = p->arith.u;
    return ABFT_STATUS_SUCCESS;
}

/* Which entries of one side (cs: 0 rows, 1 columns for FULL) have inputs that changed after
 * encoding, as far as their checksums show (docs/bound.md, "Two stages"): the side's two
 * encodings are taken again from the inputs at hand, each against the one stored at
 * encoding, within abft_bound_reencode. Rows: Y = op(B)·V (k x 2), then S = op(A)·Y (m x 2)
 * with the stored Y; columns: Za = op(A)^T·V, then T = op(B)^T·Za. chg[i] = 1 where S
 * moved beyond its rounding, or where op(A)·dY is not 0 for dY the moves of Y beyond theirs
 * (an input of the other side changed, and entry i reads it). */
static abft_status_t side_changed(struct abft_gemm_plan *p, int cs, const void *A, int64_t lda,
                                  const void *B, int64_t ldb, unsigned char *chg) {
    abft_handle_t h = p->h;
    const int64_t k = p->k, ar = p->transa ? p->k : p->m, ac = p->transa ? p->m : p->k;
    const int64_t br = p->transb ? p->n : p->k, bc = p->transb ? p->k : p->n;
    /* the side's first operand (its weights' sums, len1 terms each) and second (len2 = k) */
    const void *M1 = cs ? A : B, *M2 = cs ? B : A;
    const int64_t r1 = cs ? ar : br, c1 = cs ? ac : bc, ld1 = cs ? lda : ldb;
    const int64_t r2 = cs ? br : ar, c2 = cs ? bc : ac, ld2 = cs ? ldb : lda;
    const int t1 = cs ? !p->transa : p->transb, t2 = cs ? !p->transb : p->transa;
    const int64_t len1 = cs ? p->m : p->n, nout = cs ? p->n : p->m;
    const int yi = cs ? W_ZA : W_YB, yai = cs ? W_ZAA : W_YBA;
    const int si = cs ? W_T : W_S, sai = cs ? W_TA : W_SA;
    const double eta = 0x1p-1074;
    /* the sums' kind as the encoding took them (the CPU backend's always compensated) */
    const int comp = abft_bound_tight_comp(h->backend, p->prec) != ABFT_TIGHT_COMP_PLAIN;
    memset(chg, 0, (size_t)nout);
    double *hb = (double *)malloc(sizeof(double) * (size_t)(8 * k + 8 * nout + 2));
    void *dy = NULL, *dx = NULL, *ds = NULL, *dsa = NULL;
    abft_status_t st = hb != NULL ? ABFT_STATUS_SUCCESS : ABFT_STATUS_ALLOC_FAILED;
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->alloc(&h->kctx, sizeof(double) * (size_t)k * 2, &dy);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->alloc(&h->kctx, sizeof(double) * (size_t)k * 2, &dx);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->alloc(&h->kctx, sizeof(double) * (size_t)nout * 2, &ds);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->alloc(&h->kctx, sizeof(double) * (size_t)nout * 2, &dsa);
    double *y1 = hb, *y0 = hb + 2 * k, *ya = hb + 4 * k, *dyh = hb + 6 * k;
    double *s1 = hb + 8 * k, *sa1 = s1 + 2 * nout, *s0 = s1 + 4 * nout, *sa0 = s1 + 6 * nout;
    /* the weights again, and against their encoding */
    if (st == ABFT_STATUS_SUCCESS)
        st = run_tsmm_c(h, p->comp, p->prec, t1, r1, c1, 2, M1, ld1, NULL, 0, NULL, 0, (double *)dy,
                        k, NULL, 0);
    abft_copy_args_t cp[3] = {{0, sizeof(double), k, 2, y1, k, dy, k},
                              {0, sizeof(double), k, 2, y0, k, p->w[yi], p->ld[yi]},
                              {0, sizeof(double), k, 2, ya, k, p->w[yai], p->ld[yai]}};
    for (int x = 0; x < 3 && st == ABFT_STATUS_SUCCESS; ++x) st = h->ops->copy(&h->kctx, &cp[x]);
    int moved = 0;
    for (int64_t x = 0; x < 2 * k && st == ABFT_STATUS_SUCCESS; ++x) {
        const double d = y1[x] - y0[x];
        const double tol = abft_bound_reencode(comp, fmax(fabs(y0[x]), fabs(y1[x])), ya[x], ya[x],
                                               len1, 0);
        dyh[x] = fabs(d) > tol || (d != d) ? d : 0.0;
        moved |= dyh[x] != 0.0;
    }
    /* the side's checksums from the stored weights: |.| sums with the weights' own
     * underflow (abft_bound_reencode) */
    for (int64_t x = 0; x < 2 * k; ++x) ya[x] = fabs(y0[x]) + 2.0 * (double)(len1 + 1) * eta;
    abft_copy_args_t up = {1, sizeof(double), k, 2, ya, k, dx, k};
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &up);
    if (st == ABFT_STATUS_SUCCESS)
        st = run_tsmm_c(h, p->comp, p->prec, t2, r2, c2, 2, M2, ld2, p->w[yi], p->ld[yi],
                        (const double *)dx, k, (double *)ds, nout, (double *)dsa, nout);
    abft_copy_args_t cq[4] = {{0, sizeof(double), nout, 2, s1, nout, ds, nout},
                              {0, sizeof(double), nout, 2, sa1, nout, dsa, nout},
                              {0, sizeof(double), nout, 2, s0, nout, p->w[si], p->ld[si]},
                              {0, sizeof(double), nout, 2, sa0, nout, p->w[sai], p->ld[sai]}};
    for (int x = 0; x < 4 && st == ABFT_STATUS_SUCCESS; ++x) st = h->ops->copy(&h->kctx, &cq[x]);
    for (int64_t x = 0; x < 2 * nout && st == ABFT_STATUS_SUCCESS; ++x) {
        const double d = s1[x] - s0[x];
        const double tol = abft_bound_reencode(comp, fmax(fabs(s0[x]), fabs(s1[x])), sa1[x],
                                               sa0[x], k, len1);
        if (fabs(d) > tol || d != d) chg[x % nout] = 1;
    }
    /* the weights moved: the entries that read the moves */
    if (st == ABFT_STATUS_SUCCESS && moved) {
        abft_copy_args_t u2 = {1, sizeof(double), k, 2, dyh, k, dx, k};
        st = h->ops->copy(&h->kctx, &u2);
        if (st == ABFT_STATUS_SUCCESS)
            st = run_tsmm_c(h, 0, p->prec, t2, r2, c2, 2, M2, ld2, (const double *)dx, k, NULL, 0,
                            (double *)ds, nout, NULL, 0);
        abft_copy_args_t c5 = {0, sizeof(double), nout, 2, s1, nout, ds, nout};
        if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c5);
        for (int64_t x = 0; x < 2 * nout && st == ABFT_STATUS_SUCCESS; ++x)
            if (s1[x] != 0.0) chg[x % nout] = 1;
    }
    if (dy != NULL) h->ops->free(&h->kctx, dy);
    if (dx != NULL) h->ops->free(&h->kctx, dx);
    if (ds != NULL) h->ops->free(&h->kctx, ds);
    if (dsa != NULL) h->ops->free(&h->kctx, dsa);
    free(hb);
    return st;
}

/* The second stage: the full pass (after the GEMM: the inputs are the caller's, unchanged
 * unless corrupted after encoding), each entry's part then the larger of it and the
 * filter's, except where the full pass sends the entry to the worst case (T < 0) or finds
 * no bound (NaN): its verdict stands, unless the entry's inputs changed after encoding
 * (side_changed): a change the full pass read may have turned its guards, and the filter's
 * part, from the inputs as encoded, stays (docs/bound.md, "Two stages"). */
static abft_status_t tight_second(struct abft_gemm_plan *p, const void *A, int64_t lda,
                                  const void *B, int64_t ldb) {
    abft_handle_t h = p->h;
    ABFT_TRY(tight_run(p, A, lda, B, ldb, 0, W_TF, W_TFC));
    for (int cs = 0; cs < (p->kind == ABFT_CHECKSUM_FULL ? 2 : 1); ++cs) {
        const int64_t n = cs ? p->n : p->m;
        const int ti = cs ? W_TTC : W_TT, fi = cs ? W_TFC : W_TF;
        double *t = (double *)malloc(sizeof(double) * (size_t)n * 4 + 1);
        unsigned char *chg = (unsigned char *)malloc((size_t)n + 1);
        if (t == NULL || chg == NULL) {
            free(t), free(chg);
            return ABFT_STATUS_ALLOC_FAILED;
        }
        abft_copy_args_t c1 = {0, sizeof(double), n, 2, t, n, p->w[ti], p->ld[ti]};
        abft_copy_args_t c2 = {0, sizeof(double), n, 2, t + 2 * n, n, p->w[fi], p->ld[fi]};
        abft_status_t st = h->ops->copy(&h->kctx, &c1);
        if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c2);
        int fell = 0;
        for (int64_t x = 0; x < 2 * n && st == ABFT_STATUS_SUCCESS; ++x)
            fell |= abft_bound_tight_fell_back(t[2 * n + x]) && t[x] >= 0.0;
        if (st == ABFT_STATUS_SUCCESS && fell) st = side_changed(p, cs, A, lda, B, ldb, chg);
        for (int64_t x = 0; x < 2 * n && st == ABFT_STATUS_SUCCESS; ++x)
            if (!(fell && chg[x % n] && abft_bound_tight_fell_back(t[2 * n + x]) && t[x] >= 0.0))
                t[x] = abft_bound_tight_merge(t[x], t[2 * n + x]);
        abft_copy_args_t c3 = {1, sizeof(double), n, 2, t, n, p->w[ti], p->ld[ti]};
        if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c3);
        free(t), free(chg);
        ABFT_TRY(st);
    }
    p->tight_full = 1;
    return ABFT_STATUS_SUCCESS;
}

/* The encoding passes, then the screen: on the host (nonfinite != NULL: *nonfinite as in
 * screen_inputs) or, nonfinite == NULL, queued into the backend's device-side gate, which
 * the gated GEMM reads. */
static abft_status_t encode(struct abft_gemm_plan *p, const void *A, int64_t lda, const void *B,
                            int64_t ldb, const void *C, int64_t ldc, int64_t *nonfinite) {
    abft_handle_t h = p->h;
    double **w = p->w;
    int64_t *ld = p->ld;
    const int full = p->kind == ABFT_CHECKSUM_FULL;
    if (nonfinite != NULL) *nonfinite = 0;
    p->tight = 0;
    p->comp = tight_wanted(p) &&
              abft_bound_tight_comp(h->backend, p->prec) == ABFT_TIGHT_COMP_TREE;
    if (p->m == 0 || p->n == 0) return ABFT_STATUS_SUCCESS;
    int64_t br = p->transb ? p->n : p->k, bc = p->transb ? p->k : p->n;
    int64_t ar = p->transa ? p->k : p->m, ac = p->transa ? p->m : p->k;
    /* with the random checksum beside row checksums, every pass below takes the weights
     * [1, j+1, r0, r1] explicitly (c = 4) and fills the random twins too */
    const int fused = rnd_fused(p);
    const int64_t c = fused ? 4 : 2;
    if (p->rnd) ABFT_TRY(rnd_upload(p));
    if (p->k > 0 && p->alpha != 0.0) { /* alpha = 0: the GEMM reads neither A nor B */
        /* 1. op(B)·V and |op(B)|·V (k x 2) */
        ABFT_TRY(run_tsmm_c(h, p->comp, p->prec, p->transb, br, bc, c, B, ldb, fused ? w[W_RW] : NULL,
                            fused ? ld[W_RW] : 0, NULL, 0, w[W_YB], ld[W_YB], w[W_YBA],
                            ld[W_YBA]));
        /* 2. op(A)·Yb with |op(A)|·Yba (m x 2); FULL: op(A)^T·V from the same read of A */
        if (!full) {
            ABFT_TRY(run_tsmm_c(h, p->comp, p->prec, p->transa, ar, ac, c, A, lda, w[W_YB], ld[W_YB],
                                w[W_YBA], ld[W_YBA], w[W_S], ld[W_S], w[W_SA], ld[W_SA]));
        } else {
            /* A stored ar x ac. transa = N: S = A·Yb (the M·X side), Za = A^T·V (M^T·Z).
             * transa = T: S = A^T·Yb (the M^T·Z side), Za = A·V (the M·X side). */
            abft_dual_args_t d;
            memset(&d, 0, sizeof d);
            d.prec = p->prec;
            d.rows = ar;
            d.cols = ac;
            d.M = A;
            d.ldm = lda;
            d.c1 = d.c2 = 2;
            d.comp = p->comp;
            if (!p->transa) {
                d.X = w[W_YB], d.ldx = ld[W_YB], d.Xabs = w[W_YBA], d.ldxabs = ld[W_YBA];
                d.P = w[W_S], d.ldp = ld[W_S], d.Pabs = w[W_SA], d.ldpabs = ld[W_SA];
                d.Q = w[W_ZA], d.ldq = ld[W_ZA], d.Qabs = w[W_ZAA], d.ldqabs = ld[W_ZAA];
            } else {
                d.Z = w[W_YB], d.ldz = ld[W_YB], d.Zabs = w[W_YBA], d.ldzabs = ld[W_YBA];
                d.Q = w[W_S], d.ldq = ld[W_S], d.Qabs = w[W_SA], d.ldqabs = ld[W_SA];
                d.P = w[W_ZA], d.ldp = ld[W_ZA], d.Pabs = w[W_ZAA], d.ldpabs = ld[W_ZAA];
            }
            ABFT_TRY(h->ops->dual(&h->kctx, &d));
            /* op(B)^T·Za with |op(B)|^T·Zaa (n x 2): a second read of B */
            ABFT_TRY(run_tsmm(h, p->comp, p->prec, !p->transb, br, bc, B, ldb, w[W_ZA], ld[W_ZA],
                              w[W_ZAA], ld[W_ZAA], w[W_T], ld[W_T], w[W_TA], ld[W_TA]));
        }
        /* the checksums' own checksum (S^T·V, T^T·V): tells a checksum corrupted after
         * encoding from an input corrupted after encoding (docs/bound.md) */
        ABFT_TRY(run_tsmm(h, 0, ABFT_PREC_D, 1, p->m, 2, w[W_S], ld[W_S], NULL, 0, NULL, 0,
                          w[W_SIG], ld[W_SIG], NULL, 0));
        if (full)
            ABFT_TRY(run_tsmm(h, 0, ABFT_PREC_D, 1, p->n, 2, w[W_T], ld[W_T], NULL, 0, NULL, 0,
                              w[W_SIGT], ld[W_SIGT], NULL, 0));
        if (nonfinite == NULL) ABFT_TRY(h->ops->screen(&h->kctx, w[W_SA], p->m, ld[W_SA]));
        ABFT_TRY(tight_pass(p, A, lda, B, ldb));
    }
    /* beta != 0: a pass over the old C (rows and, for FULL, columns from one read). */
    if (p->beta != 0.0) {
        if (fused)
            ABFT_TRY(run_tsmm_c(h, p->comp, p->prec, 0, p->m, p->n, 4, C, ldc, w[W_RW], ld[W_RW], NULL,
                                0, w[W_P], ld[W_P], w[W_PA], ld[W_PA]));
        else
            ABFT_TRY(encode_matrix(h, p->comp, p->prec, p->m, p->n, C, ldc, w[W_P], w[W_PA], ld[W_P],
                                   full ? w[W_PC] : NULL, full ? w[W_PCA] : NULL, ld[W_PC]));
        if (nonfinite == NULL) ABFT_TRY(h->ops->screen(&h->kctx, w[W_PA], p->m, ld[W_PA]));
    }
    if (p->rnd) ABFT_TRY(rnd_encode(p, A, lda, B, ldb, C, ldc));
    if (nonfinite != NULL) ABFT_TRY(screen_inputs(p, A, lda, B, ldb, C, ldc, nonfinite));
    return ABFT_STATUS_SUCCESS;
}

/* ---- the GEMM (split along k when a hook wants to strike between the halves) ---------- */

/* The GEMM's arguments. With alpha = 0 (or k = 0) A and B are not referenced (BLAS
 * semantics; some BLAS read them anyway when alpha is 0, and may propagate a NaN from them,
 * or fault on NULL): C = beta·C as a product with k = 0. */
static abft_gemm_args_t gemm_args(const struct abft_gemm_plan *p, const void *A, int64_t lda,
                                  const void *B, int64_t ldb, void *C, int64_t ldc) {
    abft_gemm_args_t g = {p->prec, p->transa, p->transb, p->m, p->n, p->k, p->alpha, p->beta,
                          A, lda, B, ldb, C, ldc};
    if (p->alpha == 0.0 || p->k == 0) {
        g.k = 0, g.transa = g.transb = 0;
        g.A = C, g.lda = ldc, g.B = C, g.ldb = ldc;
    }
    return g;
}

static abft_status_t run_gemm(struct abft_gemm_plan *p, const void *A, int64_t lda,
                              const void *B, int64_t ldb, void *C, int64_t ldc) {
    abft_handle_t h = p->h;
    abft_gemm_args_t g = gemm_args(p, A, lda, B, ldb, C, ldc);
    const int64_t k1 = abft_gemm_ksplit(h, g.k); /* g.k: 0 where alpha = 0 (C = beta·C) */
    if (k1 == 0) return h->ops->gemm(&h->kctx, &g);
    size_t es = elem_size(p->prec);
    g.k = k1;
    ABFT_TRY(h->ops->gemm(&h->kctx, &g));
    ABFT_TRY(abft_call_hook(h, ABFT_SITE_MID_GEMM, 0, p->prec, C, p->m, p->n, ldc));
    /* second half: columns k1.. of op(A), rows k1.. of op(B) */
    g.A = (const char *)A + es * (size_t)(p->transa ? k1 : k1 * lda);
    g.B = (const char *)B + es * (size_t)(p->transb ? k1 * ldb : k1);
    g.k = p->k - k1;
    g.beta = 1.0;
    return h->ops->gemm(&h->kctx, &g);
}

/* ---- verification -------------------------------------------------------------------- */

/* One side of the checks (0: rows of C, 1: columns), its host copies fetched only when the
 * compare flagged something. */
typedef struct gemm_side {
    int64_t n;        /* entries on this side (m for rows, n for columns) */
    int64_t len;      /* length of each entry's vector in C (n for rows, m for columns) */
    double *S, *Sa, *P, *Pa; /* n x 2 each, ld = n (host) */
    double *l1;       /* n: 1-norm of the entry's row of op(A) / column of op(B); < 0: unknown */
    abft_gemm_bound_t bc;
    int tight;        /* the tight bound applies (tb, and T: n x 2 host copy, fetched with S) */
    abft_gemm_tight_t tb;
    double *T;
    double *sm;       /* n x 2: abft_bound_tight_small summed over the entry's vector with
                       * the weights, unscaled (INFINITY: unknown, capped by Sa in
                       * abft_bound_tight_raise); < 0: not computed yet (with T) */
    double *oth;      /* the other operand's len vectors of k on the host, once fetched for
                       * the small terms (NULL: not fetched, or not to be) */
    double ysum[2];   /* sum over the inner dimension of the other operand's |.|·V encoding */
    double ymin;      /* its smallest positive entry (first column) */
    int sig;          /* -1 not known yet; 1: the kept checksums changed since encoding */
    double dsig[2][2], tsig[2][2]; /* that change of S^T·V [q][e or w weights] and its
                                      rounding tolerance */
    int64_t *flags;   /* flagged entries (ascending), capacity n */
    int64_t nflag;
} gemm_side_t;

/* The state the correction engine's callbacks work on. */
typedef struct gemm_ctx {
    struct abft_gemm_plan *p;
    const void *A, *B;
    int64_t lda, ldb, ldc;
    void *C;
    int nsides;
    int use_ab;       /* the alpha term exists (k > 0, alpha != 0) */
    gemm_side_t s[2];
    double *va, *vb;  /* k doubles each: a row of op(A), a column of op(B) */
    /* the random checksum (p->rnd): the rows its compare flagged (merged into s[0].flags),
     * and, on the rare path, its encodings on the host as a side of rows (xr: S = Sr, ...,
     * ysum from |op(B)|·Vr) and its weights (xw, n x 2) */
    int64_t *xflags, *xmerge;
    int64_t nx;
    gemm_side_t xr;
    double *xw;
} gemm_ctx_t;

/* Copy `len` elements of data precision starting at `base` with stride `stride` (1 or a
 * leading dimension) to (dir 0) or from (dir 1) the host as doubles. */
static abft_status_t strip_io(const struct abft_gemm_plan *p, const void *base, int64_t stride,
                              int64_t len, double *v, int dir) {
    if (stride == 1)
        return abft_copy_doubles(p->h, p->prec, dir, (void *)base, len > 1 ? len : 1, len, 1, v);
    return abft_copy_doubles(p->h, p->prec, dir, (void *)base, stride, 1, len, v);
}

static const char *at(const struct abft_gemm_plan *p, const void *M, int64_t i, int64_t j,
                      int64_t ld) {
    return (const char *)M + elem_size(p->prec) * (size_t)(i + j * ld);
}

/* Row i of op(A) (k elements) to the host. */
static abft_status_t fetch_arow(gemm_ctx_t *g, int64_t i, double *v) {
    const struct abft_gemm_plan *p = g->p;
    if (p->transa) return strip_io(p, at(p, g->A, 0, i, g->lda), 1, p->k, v, 0);
    return strip_io(p, at(p, g->A, i, 0, g->lda), g->lda, p->k, v, 0);
}

/* Column j of op(B) (k elements) to the host. */
static abft_status_t fetch_bcol(gemm_ctx_t *g, int64_t j, double *v) {
    const struct abft_gemm_plan *p = g->p;
    if (p->transb) return strip_io(p, at(p, g->B, j, 0, g->ldb), g->ldb, p->k, v, 0);
    return strip_io(p, at(p, g->B, 0, j, g->ldb), 1, p->k, v, 0);
}

static double norm1(const double *v, int64_t n) {
    double s = 0.0;
    for (int64_t l = 0; l < n; ++l) s += fabs(v[l]);
    return s * (1.0 + (double)n * 0x1p-52); /* never below the exact sum */
}

/* Without the input, the 1-norm of entry idx's strip is bounded through the encoding: the
 * rows l of op(B) that are not zero have (|op(B)|·V)_l >= ymin, so sum_l |A_il| over them is
 * at most Sa_i / ymin (rows of op(B) that are zero lose nothing). */
static double l1_bound(const gemm_ctx_t *g, const gemm_side_t *s, int64_t idx) {
    double sa = s->Sa[idx] / (1.0 - 0x1p-53 * (double)(2 * g->p->k + 4)) +
                (double)g->p->k * 0x1p-1074;
    return s->ymin > 0.0 ? sa / s->ymin : 0.0;
}

/* The 1-norms the amplified-underflow term needs, for the listed entries of side cs: the
 * smaller of l1_bound and the input's own norm when the call has the input. */
static abft_status_t ensure_l1(gemm_ctx_t *g, int cs, const int64_t *list, int64_t n) {
    gemm_side_t *s = &g->s[cs];
    const struct abft_gemm_plan *p = g->p;
    if (!g->use_ab) return ABFT_STATUS_SUCCESS;
    const void *M = cs ? g->B : g->A;
    for (int64_t f = 0; f < n; ++f) {
        int64_t idx = list[f];
        if (s->l1[idx] >= 0.0) continue;
        s->l1[idx] = l1_bound(g, s, idx);
        if (M != NULL) {
            /* the input itself is tighter, unless it was corrupted after encoding (then its
             * norm says nothing of the encoded product, and the bound through the encoding,
             * which holds for the input as encoded, is kept) */
            ABFT_TRY(cs ? fetch_bcol(g, idx, g->va) : fetch_arow(g, idx, g->va));
            double x = norm1(g->va, p->k);
            if (x < s->l1[idx]) s->l1[idx] = x;
        }
    }
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t cb_get(void *ctx, int cs, int64_t idx, double *v) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    if (cs) return strip_io(g->p, at(g->p, g->C, 0, idx, g->ldc), 1, g->p->m, v, 0);
    return strip_io(g->p, at(g->p, g->C, idx, 0, g->ldc), g->ldc, g->p->n, v, 0);
}

static abft_status_t cb_put_vec(void *ctx, int cs, int64_t idx, const double *v) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    double *w = (double *)v; /* strip_io does not write v when storing */
    if (cs) return strip_io(g->p, at(g->p, g->C, 0, idx, g->ldc), 1, g->p->m, w, 1);
    return strip_io(g->p, at(g->p, g->C, idx, 0, g->ldc), g->ldc, g->p->n, w, 1);
}

static abft_status_t cb_put(void *ctx, int64_t i, int64_t j, double v, double *stored) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    double x = g->p->prec == ABFT_PREC_S ? (double)(float)v : v;
    *stored = x;
    return strip_io(g->p, at(g->p, g->C, i, j, g->ldc), 1, 1, &x, 1);
}

/* The tight mode's small-terms allowance of entry idx of side cs, into s->sm (both weight
 * columns): abft_bound_tight_small of the entry's vector (row i of op(A), or column j of
 * op(B)) against each vector x of the other operand, summed with the weights e and w in the
 * order of x (capped by the entry's encoded |.| sum Sa in abft_bound_tight_raise, which
 * also holds where an input changed after encoding); INFINITY, so Sa itself, where the
 * inputs are missing or a fetch failed (the bound then falls back to the worst case). Where the side has
 * SMALL_BATCH or more flagged entries and the other operand fits SMALL_CACHE doubles, that
 * operand is copied to the host once (s->oth) and the vectors are taken in parallel;
 * otherwise one at a time. Both give the same sums. */
#define SMALL_BATCH 4
#define SMALL_CACHE ((int64_t)1 << 25)
static void ensure_small(gemm_ctx_t *g, int cs, int64_t idx) {
    gemm_side_t *s = &g->s[cs];
    const struct abft_gemm_plan *p = g->p;
    const int64_t k = p->k, len = s->len;
    if (s->sm[idx] >= 0.0) return;
    double acc[2] = {0.0, 0.0};
    abft_tight_order_t ord[ABFT_TIGHT_MAXORD];
    const int nord = abft_bound_tight_lanes(p->h->backend, ord);
    int ok = g->A != NULL && g->B != NULL;
    if (ok) ok = (cs ? fetch_bcol(g, idx, g->vb) : fetch_arow(g, idx, g->va)) == ABFT_STATUS_SUCCESS;
    const double *own = cs ? g->vb : g->va;
    if (ok && s->oth == NULL && s->nflag >= SMALL_BATCH && k > 0 && len <= SMALL_CACHE / k) {
        double *o = (double *)malloc(sizeof(double) * (size_t)len * (size_t)(k + 1) + 1);
        abft_status_t st = o != NULL ? ABFT_STATUS_SUCCESS : ABFT_STATUS_ALLOC_FAILED;
        for (int64_t x = 0; x < len && st == ABFT_STATUS_SUCCESS; ++x)
            st = cs ? fetch_arow(g, x, o + (size_t)x * (size_t)k) : fetch_bcol(g, x, o + (size_t)x * (size_t)k);
        if (st == ABFT_STATUS_SUCCESS) s->oth = o;
        else free(o); /* one vector at a time below */
    }
    if (ok && s->oth != NULL) {
        double *e = s->oth + (size_t)len * (size_t)k; /* len values, then summed in order */
#pragma omp parallel for schedule(dynamic, 16)
        for (int64_t x = 0; x < len; ++x) {
            const double *o = s->oth + (size_t)x * (size_t)k;
            e[x] = cs ? abft_bound_tight_small(&p->arith, o, own, k, ord, nord, p->tight_ks)
                      : abft_bound_tight_small(&p->arith, own, o, k, ord, nord, p->tight_ks);
        }
        for (int64_t x = 0; x < len; ++x) acc[0] += e[x], acc[1] += (double)(x + 1) * e[x];
    } else {
        for (int64_t x = 0; x < len && ok; ++x) {
            ok = (cs ? fetch_arow(g, x, g->va) : fetch_bcol(g, x, g->vb)) == ABFT_STATUS_SUCCESS;
            if (!ok) break;
            const double e = abft_bound_tight_small(&p->arith, g->va, g->vb, k, ord, nord, p->tight_ks);
            acc[0] += e, acc[1] += (double)(x + 1) * e;
        }
    }
    for (int q = 0; q < 2; ++q) s->sm[idx + q * s->n] = ok ? acc[q] : INFINITY;
}

static void cb_expect(void *ctx, int cs, int64_t idx, const double r[2], const double ra[2],
                      double s2[2], double t[2]) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    const struct abft_gemm_plan *p = g->p;
    const gemm_side_t *s = &g->s[cs];
    double twc[2] = {0.0, 0.0}, amp[2] = {0.0, 0.0};
    int tight[2] = {0, 0};
    for (int q = 0; q < 2; ++q) {
        int64_t o = idx + q * s->n;
        double e = 0.0, b = 0.0;
        if (g->use_ab) e = p->alpha * s->S[o], b = fabs(p->alpha) * s->Sa[o];
        if (p->beta != 0.0) e += p->beta * s->P[o], b += fabs(p->beta) * s->Pa[o];
        s2[q] = e;
        const double tt = s->tight ? s->T[o] : -1.0;
        twc[q] = s->bc.coef_s * b + s->bc.coef_r * ra[q] + s->bc.abs_floor; /* the worst case */
        if (tt >= 0.0) { /* the tight bound, with the vector's own sum for R */
            double as = g->use_ab ? p->alpha * s->S[o] : 0.0;
            double sa = g->use_ab ? fabs(p->alpha) * s->Sa[o] : 0.0;
            double bp = p->beta != 0.0 ? p->beta * s->P[o] : 0.0;
            double pa = p->beta != 0.0 ? fabs(p->beta) * s->Pa[o] : 0.0;
            t[q] = abft_bound_tight_entry(&s->tb, s->bc.abs_floor, tt, sa, pa, ra[q],
                                          fabs(r[q]) + fabs(as) + fabs(bp));
            if (twc[q] < t[q]) t[q] = twc[q]; /* never looser than the worst case */
            tight[q] = 1;
        } else if (tt != tt) {
            t[q] = NAN;
        } else {
            t[q] = twc[q];
        }
        if (g->use_ab) {
            /* entries the compare never flagged have no fetched norm: the bound through
             * the encoding holds for them too */
            double l1 = s->l1[idx] >= 0.0 ? s->l1[idx] : l1_bound(g, s, idx);
            amp[q] = abft_bound_gemm_amp(&s->bc, q, l1, s->ysum[q]);
        }
    }
    /* The tight mode's small terms (docs/bound.md, item 5): the entry's bound is
     * min(Tt + |alpha|·Sm, Twc), Tt the tight bound without them (at most Twc), Twc the
     * worst case's (both valid where the model holds, Twc always; the compare flagged the
     * entry against Tt). Sm costs O(len·k): it is computed for an entry once a column exceeds Tt
     * (every entry the engine judges, locates from or takes a value from does) and kept for
     * every later check; an entry within Tt passes whatever Sm is, and gets Tt until then.
     * The bound stays the tight one wherever Sm is known, so that the engine's noises (what
     * a checksum's value for an element may be off by) are as tight as the compare's bound,
     * not raised to the worst case for want of Sm. Without the inputs Sm is Sa
     * (ensure_small): about the worst case. */
    int need = 0;
    for (int q = 0; q < 2; ++q) need |= tight[q] && fabs(r[q] - s2[q]) > t[q];
    if (need && g->use_ab && s->sm[idx] < 0.0) ensure_small(g, cs, idx);
    for (int q = 0; q < 2; ++q) {
        if (tight[q] && g->use_ab && s->sm[idx + q * s->n] >= 0.0)
            t[q] = abft_bound_tight_raise(t[q], twc[q], p->alpha, s->sm[idx + q * s->n],
                                          s->Sa[idx + q * s->n], s->len, p->k);
        t[q] += amp[q];
    }
}

/* Element (i, j) recomputed from the inputs (beta = 0 only: the old C is gone), with a bound
 * on its error: the dot product's rounding in the GEMM's arithmetic and its underflow. */
static abft_status_t cb_elem(void *ctx, int64_t i, int64_t j, double *v, double *noise,
                             int *ok) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    struct abft_gemm_plan *p = g->p;
    *ok = 0;
    if (p->beta != 0.0) return ABFT_STATUS_SUCCESS;
    if (!g->use_ab) { /* C = 0 exactly */
        *v = 0.0, *noise = 0.0, *ok = 1;
        return ABFT_STATUS_SUCCESS;
    }
    if (g->A == NULL || g->B == NULL) return ABFT_STATUS_SUCCESS;
    size_t es = elem_size(p->prec);
    abft_gemm_args_t a = {p->prec, p->transa, p->transb, 1, 1, p->k, p->alpha, 0.0,
                          p->transa ? at(p, g->A, 0, i, g->lda) : at(p, g->A, i, 0, g->lda),
                          g->lda,
                          p->transb ? at(p, g->B, j, 0, g->ldb) : at(p, g->B, 0, j, g->ldb),
                          g->ldb, p->w[W_TMP], 1};
    ABFT_TRY(p->h->ops->gemm(&p->h->kctx, &a));
    double dv = 0.0;
    float fv = 0.0f;
    abft_copy_args_t c = {0, es, 1, 1, p->prec == ABFT_PREC_D ? (void *)&dv : (void *)&fv, 1,
                          p->w[W_TMP], 1};
    ABFT_TRY(p->h->ops->copy(&p->h->kctx, &c));
    ABFT_TRY(fetch_arow(g, i, g->va));
    ABFT_TRY(fetch_bcol(g, j, g->vb));
    double dot = 0.0;
    for (int64_t l = 0; l < p->k; ++l) dot += fabs(g->va[l] * g->vb[l]);
    dot *= 1.0 + (double)p->k * 0x1p-52;
    const gemm_side_t *s = &g->s[0];
    *v = p->prec == ABFT_PREC_D ? dv : (double)fv;
    *noise = abft_bound_dot(p->h, &p->arith, (double)p->k + 1.0) * fabs(p->alpha) * dot *
                 (1.0 + 8.0 * 0x1p-53) +
             ((double)p->k + 3.0) * p->arith.eta * (fabs(p->alpha) + 1.0) +
             s->bc.eta_amp * (norm1(g->va, p->k) + norm1(g->vb, p->k));
    *ok = 1;
    return ABFT_STATUS_SUCCESS;
}

/* Vector idx of side cs recomputed from the inputs (beta = 0) and written into C. */
static abft_status_t cb_vec(void *ctx, int cs, int64_t idx, int *ok) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    struct abft_gemm_plan *p = g->p;
    *ok = 0;
    if (p->beta != 0.0) return ABFT_STATUS_SUCCESS;
    int64_t len = cs ? p->m : p->n;
    if (!g->use_ab) {
        memset(g->va, 0, sizeof(double) * (size_t)(len > p->k ? p->k : len));
        for (int64_t l = 0; l < len; ++l) {
            double z = 0.0, stored;
            ABFT_TRY(cb_put(ctx, cs ? l : idx, cs ? idx : l, z, &stored));
        }
        *ok = 1;
        return ABFT_STATUS_SUCCESS;
    }
    if (g->A == NULL || g->B == NULL) return ABFT_STATUS_SUCCESS;
    abft_gemm_args_t a = {p->prec, p->transa, p->transb, p->m, p->n, p->k, p->alpha, 0.0,
                          g->A, g->lda, g->B, g->ldb, g->C, g->ldc};
    if (cs == 0) {
        a.m = 1;
        a.A = p->transa ? at(p, g->A, 0, idx, g->lda) : at(p, g->A, idx, 0, g->lda);
        a.C = (void *)at(p, g->C, idx, 0, g->ldc);
    } else {
        a.n = 1;
        a.B = p->transb ? at(p, g->B, idx, 0, g->ldb) : at(p, g->B, 0, idx, g->ldb);
        a.C = (void *)at(p, g->C, 0, idx, g->ldc);
    }
    ABFT_TRY(p->h->ops->gemm(&p->h->kctx, &a));
    *ok = 1;
    return ABFT_STATUS_SUCCESS;
}

/* The arrays a side's kept checksums (host copy in a gemm_side_t) come from: the encoding
 * of the other operand (x, xa) and their own checksum taken at encoding (sig). */
typedef struct kept_src {
    int x, xa, sig;
} kept_src_t;

/* Have the kept checksums of s changed since they were encoded? Their own checksum, taken at
 * encoding, against the same sums of the host copy, beyond the rounding of the two. */
static abft_status_t kept_changed(gemm_ctx_t *g, gemm_side_t *s, kept_src_t src,
                                  int *changed) {
    struct abft_gemm_plan *p = g->p;
    if (s->sig < 0) {
        double y[4];
        abft_copy_args_t c = {0, sizeof(double), 2, 2, y, 2, p->w[src.sig], p->ld[src.sig]};
        ABFT_TRY(p->h->ops->copy(&p->h->kctx, &c));
        double g2 = abft_gamma(p->h, (double)s->n + 2.0, 0x1p-53);
        s->sig = 0;
        for (int q = 0; q < 2; ++q)
            for (int v = 0; v < 2; ++v) {
                double cur = 0.0, abs = 0.0;
                for (int64_t i = 0; i < s->n; ++i) {
                    double w = v ? (double)(i + 1) : 1.0, x = s->S[i + q * s->n];
                    cur += w * x;
                    abs += w * fabs(x);
                }
                double tol = 2.0 * g2 * abs * (1.0 + 0x1p-50) + 4.0 * (double)s->n * 0x1p-1074;
                s->dsig[q][v] = cur - y[q + 2 * v];
                s->tsig[q][v] = tol;
                if (!(fabs(s->dsig[q][v]) <= tol)) s->sig = 1;
            }
    }
    *changed = s->sig;
    return ABFT_STATUS_SUCCESS;
}

/* Vector idx of side cs recomputed in the fp64 checksum arithmetic with its absolute
 * companion, one tsmm over the other operand: a row is op(B)^T·op(A)(i,:)^T with
 * |op(B)|^T·|op(A)(i,:)|^T, a column op(A)·op(B)(:,j) with |op(A)|·|op(B)(:,j)|. Each
 * element of v must lie within the GEMM's own error of it, dot_{k+3}·|alpha|·(|A||B|)_ij,
 * plus the recomputation's, gamma_k(2^-53)·(|A||B|)_ij, and the underflow allowances. */
static abft_status_t cb_check_vec(void *ctx, int cs, int64_t idx, const double *v, int *ok,
                                  int *available) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    struct abft_gemm_plan *p = g->p;
    abft_handle_t h = p->h;
    *ok = 1;
    *available = 0;
    if (p->beta != 0.0 || !g->use_ab || g->A == NULL || g->B == NULL) return ABFT_STATUS_SUCCESS;
    const int64_t k = p->k, len = cs ? p->m : p->n;
    /* X = [x, 0], Xabs = [|x|, 1] (k x 2 each, fp64 on the backend), x the strip: Y[:,0] the
     * recomputation, Yabs = [(|.|·|x|), the 1-norms of the other operand's strips] */
    ABFT_TRY(cs ? fetch_bcol(g, idx, g->va) : fetch_arow(g, idx, g->va));
    double *host = (double *)calloc((size_t)(4 * k + 4 * len + 2), sizeof(double));
    ABFT_RETURN_IF(host == NULL, ABFT_STATUS_ALLOC_FAILED);
    for (int64_t l = 0; l < k; ++l)
        host[l] = g->va[l], host[2 * k + l] = fabs(g->va[l]), host[3 * k + l] = 1.0;
    void *dev = NULL;
    size_t bytes = sizeof(double) * (size_t)(4 * k + 4 * len + 2);
    abft_status_t st = h->ops->alloc(&h->kctx, bytes, &dev);
    double *dx = (double *)dev, *dxa = dx + 2 * k, *dy = dx + 4 * k, *dya = dy + 2 * len;
    if (st == ABFT_STATUS_SUCCESS) {
        abft_copy_args_t c = {1, sizeof(double), k, 4, host, k, dx, k};
        st = h->ops->copy(&h->kctx, &c);
    }
    if (st == ABFT_STATUS_SUCCESS) {
        /* rows: op(B)^T·x, op(B) stored br x bc; columns: op(A)·x, op(A) stored ar x ac */
        int64_t br = p->transb ? p->n : k, bc = p->transb ? k : p->n;
        int64_t ar = p->transa ? k : p->m, ac = p->transa ? p->m : k;
        abft_tsmm_args_t a = cs ? (abft_tsmm_args_t){p->prec, p->transa, ar, ac, 2, g->A, g->lda,
                                                     dx, k, dxa, k, dy, len, dya, len, p->comp}
                                : (abft_tsmm_args_t){p->prec, !p->transb, br, bc, 2, g->B, g->ldb,
                                                     dx, k, dxa, k, dy, len, dya, len, p->comp};
        st = h->ops->tsmm(&h->kctx, &a);
    }
    double *y = host + 4 * k, *ya = y + 2 * len; /* y: len x 2, ya: len x 2 */
    if (st == ABFT_STATUS_SUCCESS) {
        abft_copy_args_t c = {0, sizeof(double), len, 4, y, len, dy, len};
        st = h->ops->copy(&h->kctx, &c);
    }
    if (dev != NULL) (void)h->ops->free(&h->kctx, dev);
    if (st == ABFT_STATUS_SUCCESS) {
        const gemm_side_t *s = &g->s[0];
        double coef = (abft_bound_dot(h, &p->arith, (double)k + 3.0) +
                       abft_gamma(h, (double)k + 1.0, 0x1p-53)) * (1.0 + 16.0 * 0x1p-53);
        double l1 = norm1(g->va, k);
        double floor = ((double)k + 3.0) * p->arith.eta * (fabs(p->alpha) + 1.0) +
                       (double)(k + 2) * 0x1p-1074;
        for (int64_t l = 0; l < len && *ok; ++l) {
            /* the underflow of alpha applied to either operand first, amplified by the
             * other: eta·(1-norm of this strip + 1-norm of the other operand's strip) */
            double t = coef * fabs(p->alpha) * ya[l] + floor +
                       s->bc.eta_amp * (l1 + ya[l + len] * (1.0 + (double)k * 0x1p-52));
            if (!(fabs(v[l] - p->alpha * y[l]) <= t)) *ok = 0;
        }
        *available = 1;
    }
    free(host);
    return st;
}

/* The expected checksum of entry idx re-derived from the input it was encoded from: a row's
 * S_i = op(A)(i,:)·Yb (and Sa_i), a column's T_j = op(B)(:,j)^T·Za, each O(k) with the kept
 * encoding of the other operand. It counts as a corrupted checksum only when the kept
 * checksums' own checksum shows they changed since encoding: an input corrupted after
 * encoding gives the same picture from the row alone (the data agree with a checksum
 * re-derived from the corrupted input). The beta·C_old part cannot be re-derived. */
static abft_status_t rederive(gemm_ctx_t *g, int cs, int64_t idx, gemm_side_t *kp,
                              kept_src_t src, int *changed) {
    struct abft_gemm_plan *p = g->p;
    *changed = 0;
    const void *M = cs ? g->B : g->A;
    if (!g->use_ab || M == NULL) return ABFT_STATUS_SUCCESS;
    int kept = 0;
    ABFT_TRY(kept_changed(g, kp, src, &kept));
    if (!kept) return ABFT_STATUS_SUCCESS;
    /* the strip of the input as a 1 x k (trans 0) or k x 1 (trans 1) matrix */
    int along = cs ? !p->transb : p->transa; /* the strip is contiguous */
    int64_t ld = cs ? g->ldb : g->lda;
    const void *base = cs ? (p->transb ? at(p, M, idx, 0, ld) : at(p, M, 0, idx, ld))
                          : (p->transa ? at(p, M, 0, idx, ld) : at(p, M, idx, 0, ld));
    double *y = p->w[W_TMP], *ya = p->w[W_TMP] + 2;
    abft_tsmm_args_t a = {p->prec, along, along ? p->k : 1, along ? 1 : p->k, 2, base, ld,
                          p->w[src.x], p->ld[src.x], p->w[src.xa], p->ld[src.xa], y, 1, ya, 1,
                          p->comp};
    ABFT_TRY(p->h->ops->tsmm(&p->h->kctx, &a));
    double r[4];
    abft_copy_args_t c = {0, sizeof(double), 4, 1, r, 4, y, 4};
    ABFT_TRY(p->h->ops->copy(&p->h->kctx, &c));
    double gk = abft_gamma(p->h, (double)p->k + 2.0, 0x1p-53);
    const int64_t n = kp->n;
    for (int q = 0; q < 2; ++q) {
        int64_t o = idx + q * n;
        double tol = 2.0 * gk * (kp->Sa[o] > r[2 + q] ? kp->Sa[o] : r[2 + q]) * (1.0 + 0x1p-50) +
                     4.0 * (double)(p->k + 2) * 0x1p-1074;
        if (!(fabs(r[q] - kp->S[o]) <= tol)) *changed = 1;
    }
    /* ... and the change of S^T·V since encoding must be this entry's change: delta with
     * unit weights, (idx + 1)·delta with index weights, in each column q (a corrupted entry
     * elsewhere together with an input corrupted in this row must not pass) */
    for (int q = 0; q < 2 && *changed; ++q) {
        int64_t o = idx + q * n;
        double delta = kp->S[o] - r[q];
        double tol = 2.0 * gk * (kp->Sa[o] + r[2 + q]) + 4.0 * (double)(p->k + 2) * 0x1p-1074;
        if (!(fabs(kp->dsig[q][0] - delta) <= kp->tsig[q][0] + tol) ||
            !(fabs(kp->dsig[q][1] - (double)(idx + 1) * delta) <=
              kp->tsig[q][1] + (double)(idx + 1) * tol))
            *changed = 0;
    }
    if (*changed) {
        for (int q = 0; q < 2; ++q) {
            double delta = kp->S[idx + q * n] - r[q];
            kp->dsig[q][0] -= delta, kp->dsig[q][1] -= (double)(idx + 1) * delta;
            kp->S[idx + q * n] = r[q], kp->Sa[idx + q * n] = r[2 + q];
        }
    }
    return ABFT_STATUS_SUCCESS;
}

/* The engine's checksum op: the side's kept checksum re-derived, and for a row the random
 * checksum's too (either may be the corrupted one). */
static abft_status_t cb_checksum(void *ctx, int cs, int64_t idx, int *changed) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    kept_src_t src = {cs ? W_ZA : W_YB, cs ? W_ZAA : W_YBA, cs ? W_SIGT : W_SIG};
    ABFT_TRY(rederive(g, cs, idx, &g->s[cs], src, changed));
    if (cs == 0 && g->p->rnd) {
        kept_src_t xsrc = {W_YR, W_YRA, W_SIGR};
        int cx = 0;
        ABFT_TRY(rederive(g, 0, idx, &g->xr, xsrc, &cx));
        *changed |= cx;
    }
    return ABFT_STATUS_SUCCESS;
}

/* One side's compare job for the backend; its flagged indices come back to the host. */
static abft_compare_args_t compare_job(const gemm_ctx_t *g, int cs, double *max_ratio) {
    const struct abft_gemm_plan *p = g->p;
    const gemm_side_t *s = &g->s[cs];
    const double *const *w = (const double *const *)p->w;
    const int64_t *ld = p->ld;
    int b = cs ? W_RC - W_R : 0; /* offset between the row and column array indices */
    int sidx = cs ? W_T : W_S, pidx = cs ? W_PC : W_P;
    /* k = 0 or alpha = 0: the alpha terms vanish (and the GEMM reads neither A nor B, so
     * their encodings are not used: NaN there must not flag anything). */
    const int use_ab = g->use_ab;
    abft_compare_args_t c = {s->n, w[W_R + b], ld[W_R + b], w[W_RA + b], ld[W_RA + b],
                             use_ab ? w[sidx] : w[W_R + b], ld[sidx],
                             use_ab ? w[sidx + 1] : w[W_RA + b], ld[sidx + 1],
                             w[pidx], ld[pidx], w[pidx + 1], ld[pidx + 1],
                             use_ab ? p->alpha : 0.0, p->beta, s->bc.coef_s, s->bc.coef_r,
                             s->bc.abs_floor, s->n, s->flags, (int64_t *)&s->nflag, max_ratio,
                             NULL, 0, 0.0, 0.0, 0.0, 0.0, 1.0};
    if (s->tight) {
        c.T = w[cs ? W_TTC : W_TT], c.ldt = ld[cs ? W_TTC : W_TT];
        c.tcoef_s = s->tb.coef_s, c.tcoef_p = s->tb.coef_p, c.tcoef_r = s->tb.coef_r;
        c.tcoef_x = s->tb.coef_x;
    }
    return c;
}

/* The random checksum's tight coefficients (rows): the fixed ones, plus the rounding of its
 * stored encoding Yr = op(B)·Vr, which the pass's part bounds for the e weights only (in
 * quadrature): here its worst case, u_chk·(|op(A)|·|Yr|) <= u_chk·Sra, on Sra's
 * coefficient. Its weights lie in [1, 2), so every other part of the tight bound is at most
 * twice the e column's (rnd_job's tscale, docs/bound.md). */
static abft_gemm_tight_t rnd_tight(const gemm_side_t *s) {
    abft_gemm_tight_t tb = s->tb;
    tb.coef_s += tb.u_chk * (1.0 + 0x1p-40);
    return tb;
}

static abft_status_t fetch_n2(abft_handle_t h, double *host, const double *dev, int64_t n,
                              int64_t ldd);

/* The random checksum's compare job over R = C·Vr (W_RR, from check_all's pass over C). */
static abft_compare_args_t rnd_job(gemm_ctx_t *g, double *mrx) {
    struct abft_gemm_plan *p = g->p;
    double *const *w = p->w;
    const int64_t *ld = p->ld;
    const gemm_side_t *s = &g->s[0];
    const int use_ab = g->use_ab;
    abft_compare_args_t c = {p->m, w[W_RR], ld[W_RR], w[W_RRA], ld[W_RRA],
                             use_ab ? w[W_SR] : w[W_RR], ld[W_SR],
                             use_ab ? w[W_SRA] : w[W_RRA], ld[W_SRA],
                             w[W_PR], ld[W_PR], w[W_PRA], ld[W_PRA],
                             use_ab ? p->alpha : 0.0, p->beta, s->bc.coef_s, s->bc.coef_r,
                             s->bc.abs_floor, p->m, g->xflags, &g->nx, mrx,
                             NULL, 0, 0.0, 0.0, 0.0, 0.0, 1.0};
    if (s->tight) { /* the rows' tight part (the e column's, ldt = 0), twice */
        const abft_gemm_tight_t tb = rnd_tight(s);
        c.T = w[W_TT], c.ldt = 0, c.tscale = 2.0;
        c.tcoef_s = tb.coef_s, c.tcoef_p = tb.coef_p, c.tcoef_r = tb.coef_r;
        c.tcoef_x = tb.coef_x;
    }
    return c;
}

/* The rows the random checksum flagged join the row side's flags (ascending, each once). */
static void rnd_merge(gemm_ctx_t *g) {
    gemm_side_t *s = &g->s[0];
    int64_t a = 0, b = 0, n = 0;
    while (a < s->nflag || b < g->nx) {
        int64_t x;
        if (b >= g->nx || (a < s->nflag && s->flags[a] < g->xflags[b])) x = s->flags[a++];
        else if (a >= s->nflag || g->xflags[b] < s->flags[a]) x = g->xflags[b++];
        else x = s->flags[a++], ++b; /* in both */
        g->xmerge[n++] = x;
    }
    memcpy(s->flags, g->xmerge, sizeof(int64_t) * (size_t)n);
    s->nflag = n;
}

static abft_status_t fetch_encodings(gemm_ctx_t *g, gemm_side_t *s, int sidx, int pidx,
                                     int yidx);

/* Host copies of the random checksum's encodings, as a side of rows, and its weights (the
 * rare path). */
static abft_status_t fetch_rnd(gemm_ctx_t *g) {
    const struct abft_gemm_plan *p = g->p;
    g->xr.n = p->m;
    g->xw = (double *)malloc(sizeof(double) * (size_t)p->n * 2 + 1);
    ABFT_RETURN_IF(g->xw == NULL, ABFT_STATUS_ALLOC_FAILED);
    rnd_weights(p->rnd_seed, p->n, g->xw);
    return fetch_encodings(g, &g->xr, W_SR, W_PR, W_YRA);
}

/* The engine's detection-only check of row idx (values v): its residual in each weight
 * column against the bound of docs/bound.md with these weights (at most 2 each, so their
 * sum over the row is at most 2n), the tight one where the rows have it (rnd_job's, with
 * the small terms' allowance at most twice the e column's), no allowance for written
 * values. */
static void cb_extra(void *ctx, int64_t idx, const double *v, double *ratio) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    const struct abft_gemm_plan *p = g->p;
    gemm_side_t *s = &g->s[0];
    const int64_t m = p->m, n = p->n;
    double worst = 0.0;
    *ratio = 0.0;
    if (!p->rnd) return; /* no random checksum: nothing to add */
    for (int q = 0; q < 2; ++q) {
        const double *wq = g->xw + q * n;
        double r = 0.0, ra = 0.0;
        for (int64_t j = 0; j < n; ++j) r += wq[j] * v[j], ra += wq[j] * fabs(v[j]);
        double e = 0.0, b = 0.0;
        int64_t o = idx + q * m;
        if (g->use_ab) e = p->alpha * g->xr.S[o], b = fabs(p->alpha) * g->xr.Sa[o];
        if (p->beta != 0.0) e += p->beta * g->xr.P[o], b += fabs(p->beta) * g->xr.Pa[o];
        const double wc = s->bc.coef_s * b + s->bc.coef_r * ra + s->bc.abs_floor;
        double t = wc;
        const double tt = s->tight ? s->T[idx] : -1.0;
        if (tt != tt) {
            t = NAN;
        } else if (tt >= 0.0) {
            const abft_gemm_tight_t tb = rnd_tight(s);
            const double as = g->use_ab ? p->alpha * g->xr.S[o] : 0.0;
            const double bp = p->beta != 0.0 ? p->beta * g->xr.P[o] : 0.0;
            const double sa = g->use_ab ? fabs(p->alpha) * g->xr.Sa[o] : 0.0;
            const double pa = p->beta != 0.0 ? fabs(p->beta) * g->xr.Pa[o] : 0.0;
            t = abft_bound_tight_entry(&tb, s->bc.abs_floor, 2.0 * tt, sa, pa, ra,
                                       fabs(r) + fabs(as) + fabs(bp));
            if (wc < t) t = wc;
            if (g->use_ab && fabs(r - e) > t) {
                ensure_small(g, 0, idx);
                if (s->sm[idx] >= 0.0)
                    t = abft_bound_tight_raise(t, wc, p->alpha, 2.0 * s->sm[idx],
                                               g->xr.Sa[o], n, p->k);
            }
        }
        if (g->use_ab) {
            double l1 = s->l1[idx] >= 0.0 ? s->l1[idx] : l1_bound(g, s, idx);
            t += s->bc.eta_amp * (2.0 * (double)n * l1 + g->xr.ysum[q]);
            /* weights that are not integers: each product r_j·b_lj of the encoding that is
             * subnormal loses up to a subnormal spacing, n per entry of Yr, which op(A)
             * and alpha then amplify */
            t += fabs(p->alpha) * (double)n * 0x1p-1074 * l1 * (1.0 + 0x1p-40);
        }
        /* likewise r_j·C_old(i, j), amplified by beta */
        if (p->beta != 0.0) t += fabs(p->beta) * (double)n * 0x1p-1074 * (1.0 + 0x1p-40);
        double d = r - e;
        double x = isinf(t) ? INFINITY
                   : t > 0.0 ? fabs(d) / t
                             : (d == 0.0 ? 0.0 : INFINITY);
        if (!(x <= worst)) worst = isnan(x) ? INFINITY : x;
    }
    *ratio = worst;
}

/* 4. the pass over C (rows and, fused, columns) and the compare of every side: one
 * synchronisation. */
static abft_status_t check_all(gemm_ctx_t *g, double mr[2]) {
    struct abft_gemm_plan *p = g->p;
    abft_handle_t h = p->h;
    const int full = g->nsides == 2;
    if (rnd_fused(p)) /* R and its random twin RR from one pass (c = 4) */
        ABFT_TRY(run_tsmm_c(h, p->comp, p->prec, 0, p->m, p->n, 4, g->C, g->ldc, p->w[W_RW],
                            p->ld[W_RW], NULL, 0, p->w[W_R], p->ld[W_R], p->w[W_RA],
                            p->ld[W_RA]));
    else
        ABFT_TRY(encode_matrix(h, p->comp, p->prec, p->m, p->n, g->C, g->ldc, p->w[W_R], p->w[W_RA],
                               p->ld[W_R], full ? p->w[W_RC] : NULL, full ? p->w[W_RCA] : NULL,
                               p->ld[W_RC]));
    abft_compare_args_t jobs[2];
    for (int cs = 0; cs < g->nsides; ++cs) jobs[cs] = compare_job(g, cs, &mr[cs]);
    if (!p->rnd) return h->ops->compare(&h->kctx, jobs, g->nsides);
    /* the random checksum (beside full checksums: one more pass over C); its compare joins
     * the rows' (a second synchronisation only beside full checksums: the compare takes
     * two jobs) */
    double mrx = 0.0;
    abft_compare_args_t x = rnd_job(g, &mrx);
    if (!full) {
        jobs[1] = x;
        ABFT_TRY(h->ops->compare(&h->kctx, jobs, 2));
    } else {
        ABFT_TRY(run_tsmm(h, p->comp, p->prec, 0, p->m, p->n, g->C, g->ldc, rnd_cols(p), p->ld[W_RW],
                          NULL, 0, p->w[W_RR], p->ld[W_RR], p->w[W_RRA], p->ld[W_RRA]));
        ABFT_TRY(h->ops->compare(&h->kctx, jobs, 2));
        ABFT_TRY(h->ops->compare(&h->kctx, &x, 1));
    }
    if (!(mrx <= mr[0])) mr[0] = mrx;
    rnd_merge(g);
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t cb_recheck(void *ctx, int64_t *list[2], int64_t nf[2]) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    double mr[2] = {0.0, 0.0};
    ABFT_TRY(check_all(g, mr));
    for (int cs = 0; cs < g->nsides; ++cs) {
        gemm_side_t *s = &g->s[cs];
        nf[cs] = s->nflag;
        memcpy(list[cs], s->flags, sizeof(int64_t) * (size_t)s->nflag);
        ABFT_TRY(ensure_l1(g, cs, list[cs], nf[cs]));
    }
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t fetch_n2(abft_handle_t h, double *host, const double *dev, int64_t n,
                              int64_t ldd) {
    if (dev == NULL) {
        memset(host, 0, sizeof(double) * (size_t)n * 2);
        return ABFT_STATUS_SUCCESS;
    }
    abft_copy_args_t c = {0, sizeof(double), n, 2, host, n, (void *)dev, ldd};
    return h->ops->copy(&h->kctx, &c);
}

/* Bring one side's encodings to the host, with the sums the underflow term needs. */
static abft_status_t fetch_side(gemm_ctx_t *g, int cs) {
    gemm_side_t *s = &g->s[cs];
    ABFT_TRY(fetch_encodings(g, s, cs ? W_T : W_S, cs ? W_PC : W_P, cs ? W_ZAA : W_YBA));
    if (!s->tight) return ABFT_STATUS_SUCCESS;
    s->T = (double *)malloc(sizeof(double) * (size_t)s->n * 4 + 1);
    ABFT_RETURN_IF(s->T == NULL, ABFT_STATUS_ALLOC_FAILED);
    s->sm = s->T + 2 * s->n;
    for (int64_t i = 0; i < 2 * s->n; ++i) s->sm[i] = -1.0;
    return fetch_n2(g->p->h, s->T, g->p->w[cs ? W_TTC : W_TT], s->n, g->p->ld[cs ? W_TTC : W_TT]);
}

/* Host copies of the encodings of s (s->n entries): S, Sa from sidx, sidx + 1, P, Pa from
 * pidx, pidx + 1, and the sums the underflow term needs from yidx. */
static abft_status_t fetch_encodings(gemm_ctx_t *g, gemm_side_t *s, int sidx, int pidx,
                                     int yidx) {
    struct abft_gemm_plan *p = g->p;
    abft_handle_t h = p->h;
    const double *const *w = (const double *const *)p->w;
    const int64_t *ld = p->ld;
    int64_t n = s->n;
    s->S = (double *)calloc((size_t)n * 9 + 1, sizeof(double));
    ABFT_RETURN_IF(s->S == NULL, ABFT_STATUS_ALLOC_FAILED);
    s->Sa = s->S + 2 * n, s->P = s->S + 4 * n, s->Pa = s->S + 6 * n, s->l1 = s->S + 8 * n;
    for (int64_t i = 0; i < n; ++i) s->l1[i] = -1.0;
    s->sig = -1;
    ABFT_TRY(fetch_n2(h, s->S, g->use_ab ? w[sidx] : NULL, n, ld[sidx]));
    ABFT_TRY(fetch_n2(h, s->Sa, g->use_ab ? w[sidx + 1] : NULL, n, ld[sidx + 1]));
    ABFT_TRY(fetch_n2(h, s->P, p->beta != 0.0 ? w[pidx] : NULL, n, ld[pidx]));
    ABFT_TRY(fetch_n2(h, s->Pa, p->beta != 0.0 ? w[pidx + 1] : NULL, n, ld[pidx + 1]));
    s->ysum[0] = s->ysum[1] = 0.0;
    s->ymin = 0.0;
    if (!g->use_ab) return ABFT_STATUS_SUCCESS;
    double *y = (double *)malloc(sizeof(double) * (size_t)p->k * 2);
    ABFT_RETURN_IF(y == NULL, ABFT_STATUS_ALLOC_FAILED);
    abft_status_t st = fetch_n2(h, y, w[yidx], p->k, ld[yidx]);
    for (int64_t l = 0; l < p->k && st == ABFT_STATUS_SUCCESS; ++l) {
        s->ysum[0] += y[l];
        s->ysum[1] += y[l + p->k];
        if (y[l] > 0.0 && (s->ymin == 0.0 || y[l] < s->ymin)) s->ymin = y[l];
    }
    double pad = 1.0 + (double)(p->k + 2) * 0x1p-52;
    s->ysum[0] *= pad, s->ysum[1] *= pad;
    free(y);
    return st;
}

static void ctx_free(gemm_ctx_t *g) {
    for (int cs = 0; cs < 2; ++cs) {
        free(g->s[cs].S);
        free(g->s[cs].T);
        free(g->s[cs].oth);
        free(g->s[cs].flags);
    }
    free(g->va);
    free(g->xflags);
    free(g->xr.S);
    free(g->xw);
}

static const abft_corr_ops_t gemm_corr_ops = {cb_get,  cb_put_vec,  cb_put,       cb_expect,
                                              cb_elem, cb_vec,      cb_checksum,  cb_check_vec,
                                              cb_recheck, cb_extra};

/* The report's worst_case_rows in the tight mode: a side without the tight bound (it does
 * not apply to the arithmetic, or the pass did not run for it) counts every entry; after
 * the full pass (at encoding, or the second stage), the entries it sent to the worst case
 * (either weight column); with the filter alone, none (the filter's bound is the tighter). */
static abft_status_t count_fallback(const struct abft_gemm_plan *p, const gemm_ctx_t *g,
                                    abft_report_t *rep) {
    abft_handle_t h = p->h;
    for (int cs = 0; cs < g->nsides; ++cs) {
        const int64_t n = g->s[cs].n;
        if (!g->s[cs].tight) {
            rep->worst_case_rows += n;
            continue;
        }
        if (!p->tight_full || n == 0) continue;
        double *t = (double *)malloc(sizeof(double) * (size_t)n * 2);
        ABFT_RETURN_IF(t == NULL, ABFT_STATUS_ALLOC_FAILED);
        const int ti = cs ? W_TTC : W_TT;
        abft_copy_args_t c = {0, sizeof(double), n, 2, t, n, p->w[ti], p->ld[ti]};
        const abft_status_t st = h->ops->copy(&h->kctx, &c);
        for (int64_t i = 0; i < n && st == ABFT_STATUS_SUCCESS; ++i)
            rep->worst_case_rows += abft_bound_tight_fell_back(t[i]) || abft_bound_tight_fell_back(t[n + i]);
        free(t);
        ABFT_TRY(st);
    }
    return ABFT_STATUS_SUCCESS;
}

/* held != NULL: the GEMM went through the device-side gate; *held = 1 when the gate held it
 * back (a non-finite screen): then C is the old C, and nothing is checked or changed. */
static abft_status_t verify(struct abft_gemm_plan *p, const void *A, int64_t lda, const void *B,
                            int64_t ldb, void *C, int64_t ldc, abft_report_t *rep, int *held) {
    abft_handle_t h = p->h;
    ABFT_TRY(plan_arith(p));
    rep->unit_roundoff = p->arith.u_in > 0.0 ? p->arith.u_in : p->arith.u;
    if (p->m == 0 || p->n == 0) return ABFT_STATUS_SUCCESS;
    ABFT_TRY(abft_call_hook(h, ABFT_SITE_AFTER_GEMM, 0, p->prec, C, p->m, p->n, ldc));
    gemm_ctx_t g;
    memset(&g, 0, sizeof g);
    g.p = p, g.A = A, g.lda = lda, g.B = B, g.ldb = ldb, g.C = C, g.ldc = ldc;
    g.nsides = p->kind == ABFT_CHECKSUM_FULL ? 2 : 1;
    g.use_ab = p->k > 0 && p->alpha != 0.0;
    abft_status_t st = ABFT_STATUS_SUCCESS;
    for (int cs = 0; cs < g.nsides && st == ABFT_STATUS_SUCCESS; ++cs) {
        gemm_side_t *s = &g.s[cs];
        s->n = cs ? p->n : p->m;
        s->len = cs ? p->m : p->n;
        abft_bound_gemm(h, &p->arith, p->alpha, p->beta, s->len, p->k, s->len, &s->bc);
        /* the tight bound where the tight pass ran for this arithmetic (else the worst case) */
        s->tight = p->tight && tight_wanted(p) && p->arith.u == p->tight_u &&
                   abft_bound_tight_applies(&p->arith);
        if (s->tight)
            abft_bound_gemm_tight(h, &p->arith, s->len, p->k, s->len, tight_compensated(p), &s->tb);
        s->flags = (int64_t *)malloc(sizeof(int64_t) * (size_t)(s->n + 1));
        if (s->flags == NULL) st = ABFT_STATUS_ALLOC_FAILED;
    }
    if (st == ABFT_STATUS_SUCCESS && p->rnd) {
        g.xflags = (int64_t *)malloc(sizeof(int64_t) * (size_t)(2 * p->m + 2));
        g.xmerge = g.xflags + p->m + 1;
        if (g.xflags == NULL) st = ABFT_STATUS_ALLOC_FAILED;
    }
    double mr[2] = {0.0, 0.0};
    if (st == ABFT_STATUS_SUCCESS) st = check_all(&g, mr);
    int64_t flagged = 0;
    for (int cs = 0; cs < g.nsides && st == ABFT_STATUS_SUCCESS; ++cs) {
        if (mr[cs] > rep->max_ratio) rep->max_ratio = mr[cs];
        rep->checked += g.s[cs].n;
        flagged += g.s[cs].nflag;
    }
    if (held != NULL && st == ABFT_STATUS_SUCCESS) { /* the compare synchronised already */
        int64_t count = 0;
        st = h->ops->gate_result(&h->kctx, &count);
        if (st == ABFT_STATUS_SUCCESS && count > 0) {
            *held = 1;
            ctx_free(&g);
            return ABFT_STATUS_SUCCESS;
        }
    }
    /* two stages: something exceeds the filter's bound; the full pass decides (the rows
     * flagged by the random checksum are among the rows' flags: check_all merged them) */
    if (st == ABFT_STATUS_SUCCESS && g.s[0].tight && !p->tight_full && A != NULL && B != NULL &&
        (g.s[0].nflag > 0 || (g.nsides == 2 && g.s[1].nflag > 0))) {
        st = tight_second(p, A, lda, B, ldb);
        if (st == ABFT_STATUS_SUCCESS) st = check_all(&g, mr);
        /* the compare against the full bound replaces the filter's */
        flagged = 0, rep->max_ratio = 0.0;
        for (int cs = 0; cs < g.nsides && st == ABFT_STATUS_SUCCESS; ++cs) {
            if (mr[cs] > rep->max_ratio) rep->max_ratio = mr[cs];
            flagged += g.s[cs].nflag;
        }
    }
    if (st == ABFT_STATUS_SUCCESS && tight_wanted(p) && g.use_ab)
        st = count_fallback(p, &g, rep);
    if (st != ABFT_STATUS_SUCCESS || flagged == 0) {
        ctx_free(&g);
        return st;
    }
    /* The rare path: something was flagged. */
    g.va = (double *)malloc(sizeof(double) * 2 * (size_t)(p->k + 1));
    g.vb = g.va != NULL ? g.va + p->k + 1 : NULL;
    if (g.va == NULL) st = ABFT_STATUS_ALLOC_FAILED;
    for (int cs = 0; cs < g.nsides && st == ABFT_STATUS_SUCCESS; ++cs) {
        st = fetch_side(&g, cs);
        if (st == ABFT_STATUS_SUCCESS) st = ensure_l1(&g, cs, g.s[cs].flags, g.s[cs].nflag);
    }
    if (st == ABFT_STATUS_SUCCESS && p->rnd) st = fetch_rnd(&g);
    if (st == ABFT_STATUS_SUCCESS) {
        abft_corr_cfg_t cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.nsides = g.nsides;
        cfg.n[0] = p->m, cfg.n[1] = p->n;
        cfg.len[0] = p->n, cfg.len[1] = p->m;
        cfg.u_store = p->prec == ABFT_PREC_S ? 0x1p-24 : 0x1p-53;
        cfg.recompute_vec = h->recompute;
        int64_t *flags[2] = {g.s[0].flags, g.s[1].flags};
        int64_t nflag[2] = {g.s[0].nflag, g.s[1].nflag};
        double refined = 0.0;
        st = abft_correct(&gemm_corr_ops, &g, &cfg, flags, nflag, rep, &refined);
        /* the compare's flags measured against the full bound (docs/api.md) */
        rep->max_ratio = refined;
    }
    ctx_free(&g);
    return st;
}

/* ---- plans and entry points ---------------------------------------------------------- */

static void plan_init(struct abft_gemm_plan *p, abft_handle_t h, abft_prec_t prec, int transa,
                      int transb, int64_t m, int64_t n, int64_t k, double alpha, double beta) {
    memset(p, 0, sizeof *p);
    p->h = h;
    p->prec = prec;
    p->transa = transa;
    p->transb = transb;
    p->m = m, p->n = n, p->k = k;
    p->alpha = alpha, p->beta = beta;
    p->kind = h->kind;
    p->rnd = h->rnd;
    p->rnd_seed = h->rnd_seed;
}

static abft_status_t protected_gemm_run(struct abft_gemm_plan *pp, const void *A, int64_t lda,
                                        const void *B, int64_t ldb, void *C, int64_t ldc,
                                        abft_report_t *rep);

static abft_status_t protected_gemm(abft_handle_t h, abft_prec_t prec, int transa, int transb,
                                    int64_t m, int64_t n, int64_t k, double alpha, const void *A,
                                    int64_t lda, const void *B, int64_t ldb, double beta,
                                    void *C, int64_t ldc, abft_report_t *report) {
    ABFT_TRY(check_shape(h, transa, transb, m, n, k, 2));
    ABFT_ARG_IF(!isfinite(alpha), 7);
    ABFT_ARG_IF(!isfinite(beta), 12);
    struct abft_gemm_plan p;
    plan_init(&p, h, prec, transa, transb, m, n, k, alpha, beta);
    static const int gemm_pos[6] = {8, 9, 10, 11, 13, 14};
    ABFT_TRY(check_operands(&p, A, lda, B, ldb, C, ldc, gemm_pos));
    /* an arithmetic the bound does not model is refused before anything is touched, and so
     * is the tight mode on a backend without its pass */
    ABFT_TRY(plan_arith(&p));
    ABFT_TRY(tight_check(&p));
    p.two_stage = 1; /* the inputs are at hand when the result is checked */
    /* The report is written only when the call completes (SUCCESS or NON_FINITE_INPUT). */
    abft_report_t rep;
    memset(&rep, 0, sizeof rep);
    abft_status_t st = protected_gemm_run(&p, A, lda, B, ldb, C, ldc, &rep);
    if (report != NULL && (st == ABFT_STATUS_SUCCESS || st == ABFT_STATUS_NON_FINITE_INPUT))
        *report = rep;
    return st;
}

static abft_status_t protected_gemm_run(struct abft_gemm_plan *pp, const void *A, int64_t lda,
                                        const void *B, int64_t ldb, void *C, int64_t ldc,
                                        abft_report_t *rep) {
    struct abft_gemm_plan p = *pp;
    abft_handle_t h = p.h;
    const int64_t m = p.m, n = p.n, k = p.k;
    const abft_prec_t prec = p.prec;
    const int transa = p.transa, transb = p.transb;
    if (m == 0 || n == 0) return ABFT_STATUS_SUCCESS;
    ABFT_TRY(abft_buffer_reserve(h, &h->work, plan_layout(&p, NULL)));
    plan_layout(&p, h->work.ptr);
    /* The device-side gate (CUDA): the screen's verdict stays on the GPU, which runs the
     * GEMM only on finite inputs, so no round trip precedes the GEMM. Not with a hook, whose
     * sites sit between the encoding and the GEMM on the host. */
    const int gated = h->ops->gemm_gated != NULL && h->hook == NULL && needs_screen(&p);
    if (gated) {
        abft_gemm_args_t g = gemm_args(&p, A, lda, B, ldb, C, ldc);
        int held = 0;
        abft_status_t st = encode(&p, A, lda, B, ldb, C, ldc, NULL);
        if (st == ABFT_STATUS_SUCCESS) st = h->ops->gemm_gated(&h->kctx, &g);
        if (st == ABFT_STATUS_SUCCESS) st = verify(&p, A, lda, B, ldb, C, ldc, rep, &held);
        if (st != ABFT_STATUS_SUCCESS) {
            /* no count of this call may reach a later call's gate (on any stream) */
            (void)h->ops->gate_reset(&h->kctx);
            return st;
        }
        if (!held) return ABFT_STATUS_SUCCESS;
        /* Held back (C untouched): a NaN/Inf, or finite data whose sums overflowed. The host
         * screen decides; in the second case the GEMM runs as below. */
        memset(rep, 0, sizeof *rep);
    }
    int64_t nonfinite = 0;
    if (gated)
        ABFT_TRY(screen_inputs(&p, A, lda, B, ldb, C, ldc, &nonfinite));
    else
        ABFT_TRY(encode(&p, A, lda, B, ldb, C, ldc, &nonfinite));
    if (nonfinite > 0) {
        rep->nonfinite_input = 1;
        return ABFT_STATUS_NON_FINITE_INPUT;
    }
    if (k > 0 && p.alpha != 0.0) {
        int64_t ar = transa ? k : m, ac = transa ? m : k;
        int64_t br = transb ? n : k, bc = transb ? k : n;
        ABFT_TRY(abft_call_hook(h, ABFT_SITE_AFTER_ENCODE, 0, prec, (void *)A, ar, ac, lda));
        ABFT_TRY(abft_call_hook(h, ABFT_SITE_AFTER_ENCODE, 1, prec, (void *)B, br, bc, ldb));
        ABFT_TRY(abft_call_hook(h, ABFT_SITE_CHECKSUM, 0, ABFT_PREC_D, p.w[W_S], m, 2, p.ld[W_S]));
        if (p.kind == ABFT_CHECKSUM_FULL)
            ABFT_TRY(abft_call_hook(h, ABFT_SITE_CHECKSUM, 1, ABFT_PREC_D, p.w[W_T], n, 2,
                                    p.ld[W_T]));
        if (p.rnd)
            ABFT_TRY(abft_call_hook(h, ABFT_SITE_CHECKSUM, 2, ABFT_PREC_D, p.w[W_SR], m, 2,
                                    p.ld[W_SR]));
    }
    ABFT_TRY(run_gemm(&p, A, lda, B, ldb, C, ldc));
    return verify(&p, A, lda, B, ldb, C, ldc, rep, NULL);
}

abft_status_t abft_dgemm(abft_handle_t h, abft_operation_t transa, abft_operation_t transb,
                         int64_t m, int64_t n, int64_t k, double alpha, const double *A,
                         int64_t lda, const double *B, int64_t ldb, double beta, double *C,
                         int64_t ldc, abft_report_t *report) {
    return protected_gemm(h, ABFT_PREC_D, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta,
                          C, ldc, report);
}

abft_status_t abft_sgemm(abft_handle_t h, abft_operation_t transa, abft_operation_t transb,
                         int64_t m, int64_t n, int64_t k, float alpha, const float *A,
                         int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                         int64_t ldc, abft_report_t *report) {
    return protected_gemm(h, ABFT_PREC_S, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta,
                          C, ldc, report);
}

abft_status_t abft_gemm_plan_create(abft_handle_t h, char precision, abft_operation_t transa,
                                    abft_operation_t transb, int64_t m, int64_t n, int64_t k,
                                    double alpha, double beta, abft_gemm_plan_t *plan) {
    ABFT_TRY(check_shape(h, transa, transb, m, n, k, 3));
    ABFT_ARG_IF(precision != 'd' && precision != 's', 2);
    if (precision == 's') {
        /* the scalars an sgemm receives: rounded to fp32; beyond its largest finite value
         * refused (before the conversion, which would be undefined there) */
        ABFT_ARG_IF(!(fabs(alpha) <= FLT_MAX), 8);
        ABFT_ARG_IF(!(fabs(beta) <= FLT_MAX), 9);
        alpha = (double)(float)alpha;
        beta = (double)(float)beta;
    }
    ABFT_ARG_IF(!isfinite(alpha), 8);
    ABFT_ARG_IF(!isfinite(beta), 9);
    ABFT_ARG_IF(plan == NULL, 10);
    struct abft_gemm_plan *p = (struct abft_gemm_plan *)malloc(sizeof *p);
    ABFT_RETURN_IF(p == NULL, ABFT_STATUS_ALLOC_FAILED);
    plan_init(p, h, precision == 'd' ? ABFT_PREC_D : ABFT_PREC_S, transa, transb, m, n, k, alpha,
              beta);
    p->own_mem = 1; /* before the layout: the plan keeps its own weights */
    abft_status_t st = h->ops->alloc(&h->kctx, plan_layout(p, NULL), &p->mem);
    if (st != ABFT_STATUS_SUCCESS) {
        free(p);
        return st;
    }
    plan_layout(p, p->mem);
    *plan = p;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_gemm_plan_destroy(abft_gemm_plan_t p) {
    if (p == NULL) return ABFT_STATUS_SUCCESS;
    abft_status_t st = ABFT_STATUS_SUCCESS;
    if (p->own_mem && p->mem != NULL) st = p->h->ops->free(&p->h->kctx, p->mem);
    free(p);
    return st;
}

abft_status_t abft_gemm_plan_set_math(abft_gemm_plan_t p, abft_math_t math) {
    ABFT_ARG_IF(p == NULL, 1);
    ABFT_ARG_IF(math != ABFT_MATH_HANDLE && math != ABFT_MATH_IEEE && math != ABFT_MATH_TF32 &&
                    math != ABFT_MATH_BF16X9,
                2);
    ABFT_ARG_IF((math == ABFT_MATH_TF32 || math == ABFT_MATH_BF16X9) && p->prec != ABFT_PREC_S,
                2);
    p->math = math;
    p->math_blas = NULL;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_gemm_plan_set_cublas_math(abft_gemm_plan_t p, void *cublas_handle) {
    ABFT_ARG_IF(p == NULL, 1);
#if ABFT_HAVE_CUDA
    p->math = ABFT_MATH_HANDLE;
    p->math_blas = cublas_handle;
    return ABFT_STATUS_SUCCESS;
#else
    ABFT_RETURN_IF(cublas_handle != NULL, ABFT_STATUS_NOT_SUPPORTED);
    p->math = ABFT_MATH_HANDLE;
    p->math_blas = NULL;
    return ABFT_STATUS_SUCCESS;
#endif
}

static abft_status_t split_encode(abft_handle_t h, abft_gemm_plan_t p, abft_prec_t prec,
                                  const void *A, int64_t lda, const void *B, int64_t ldb,
                                  const void *C, int64_t ldc) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(p == NULL || p->h != h || p->prec != prec, 2);
    /* C is read only when beta != 0: it may be NULL otherwise. */
    static const int split_pos[6] = {3, 4, 5, 6, 7, 8};
    if (p->beta == 0.0 && C == NULL) {
        ABFT_TRY(check_operands(p, A, lda, B, ldb, NULL, 0, split_pos));
    } else {
        ABFT_TRY(check_operands(p, A, lda, B, ldb, C, ldc, split_pos));
    }
    ABFT_TRY(plan_arith(p));
    ABFT_TRY(tight_check(p));
    p->encoded = 0;
    int64_t nonfinite = 0;
    ABFT_TRY(encode(p, A, lda, B, ldb, C, ldc, &nonfinite));
    ABFT_RETURN_IF(nonfinite > 0, ABFT_STATUS_NON_FINITE_INPUT);
    p->encoded = 1;
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t split_verify(abft_handle_t h, abft_gemm_plan_t p, abft_prec_t prec,
                                  const void *A, int64_t lda, const void *B, int64_t ldb,
                                  void *C, int64_t ldc, abft_report_t *report) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(p == NULL || p->h != h || p->prec != prec || !p->encoded, 2);
    /* A and B are optional here (they serve recomputation only). */
    int64_t ar = p->transa ? p->k : p->m, ac = p->transa ? p->m : p->k;
    int64_t br = p->transb ? p->n : p->k, bc = p->transb ? p->k : p->n;
    ABFT_ARG_IF(A != NULL && abft_bad_matrix(ar, ac, A, lda), 4);
    ABFT_ARG_IF(B != NULL && abft_bad_matrix(br, bc, B, ldb), 6);
    int bad = abft_matrix_bad_arg(p->m, p->n, C, ldc, 7, 8);
    ABFT_ARG_IF(bad != 0, bad);
    ABFT_ARG_IF(c_overlaps_inputs(p, A, lda, B, ldb, C, ldc), 7); /* as abft_dgemm */
    abft_report_t rep;
    memset(&rep, 0, sizeof rep);
    /* beta != 0: the encoded beta·C·V belongs to the C of this GEMM only */
    if (p->beta != 0.0) p->encoded = 0;
    abft_status_t st = verify(p, A, lda, B, ldb, C, ldc, &rep, NULL);
    if (report != NULL && st == ABFT_STATUS_SUCCESS) *report = rep;
    return st;
}

abft_status_t abft_dgemm_encode(abft_handle_t h, abft_gemm_plan_t p, const double *A,
                                int64_t lda, const double *B, int64_t ldb, const double *C,
                                int64_t ldc) {
    return split_encode(h, p, ABFT_PREC_D, A, lda, B, ldb, C, ldc);
}
abft_status_t abft_sgemm_encode(abft_handle_t h, abft_gemm_plan_t p, const float *A,
                                int64_t lda, const float *B, int64_t ldb, const float *C,
                                int64_t ldc) {
    return split_encode(h, p, ABFT_PREC_S, A, lda, B, ldb, C, ldc);
}
abft_status_t abft_dgemm_verify(abft_handle_t h, abft_gemm_plan_t p, const double *A,
                                int64_t lda, const double *B, int64_t ldb, double *C,
                                int64_t ldc, abft_report_t *report) {
    return split_verify(h, p, ABFT_PREC_D, A, lda, B, ldb, C, ldc, report);
}
abft_status_t abft_sgemm_verify(abft_handle_t h, abft_gemm_plan_t p, const float *A,
                                int64_t lda, const float *B, int64_t ldb, float *C,
                                int64_t ldc, abft_report_t *report) {
    return split_verify(h, p, ABFT_PREC_S, A, lda, B, ldb, C, ldc, report);
}

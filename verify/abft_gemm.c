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
 * runs on the host on copies of the few rows/columns concerned.
 *
 * This file: plans, the encoding passes, the GEMM and the entry points; the tight bound
 * mode's passes are in abft_gemm_tight.c, step 4 in abft_gemm_verify.c (what they share:
 * abft_gemm_internal.h). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abft_bound.h"
#include "abft_correct.h"
#include "abft_internal.h"

#include "abft_gemm_internal.h"

size_t gemm_elem_size(abft_prec_t p) { return p == ABFT_PREC_D ? sizeof(double) : sizeof(float); }

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
         * [1, j+1, r0, r1] fills both (gemm_rnd_fused) */
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
    const size_t es = gemm_elem_size(p->prec);
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
abft_status_t gemm_plan_arith(struct abft_gemm_plan *p) {
    if (p->math_blas != NULL) return abft_bound_arith_cublas(p->math_blas, p->prec, &p->arith);
    if (p->math == ABFT_MATH_HANDLE) return abft_bound_arith(p->h, p->prec, &p->arith);
    return abft_arith_of(p->math, p->prec, &p->arith);
}

/* ---- encoding ------------------------------------------------------------------------ */

/* comp: compensated sums (abft_tsmm_args_t; the plan's comp for the checksums the tight
 * bound compares, 0 for the random checksum's and the checksums' own) */
abft_status_t gemm_tsmm_c(abft_handle_t h, int comp, abft_prec_t prec, int trans,
                          int64_t rows, int64_t cols, int64_t c, const void *A,
                          int64_t lda, const double *X, int64_t ldx, const double *Xa,
                          int64_t ldxa, double *Y, int64_t ldy, double *Ya, int64_t ldya) {
    if ((trans ? cols : rows) == 0) return ABFT_STATUS_SUCCESS;
    abft_tsmm_args_t a = {prec, trans, rows, cols, c, A, lda, X, ldx, Xa, ldxa, Y, ldy, Ya, ldya,
                          comp};
    return h->ops->tsmm(&h->kctx, &a);
}

abft_status_t gemm_tsmm(abft_handle_t h, int comp, abft_prec_t prec, int trans,
                        int64_t rows, int64_t cols, const void *A, int64_t lda,
                        const double *X, int64_t ldx, const double *Xa, int64_t ldxa,
                        double *Y, int64_t ldy, double *Ya, int64_t ldya) {
    return gemm_tsmm_c(h, comp, prec, trans, rows, cols, 2, A, lda, X, ldx, Xa, ldxa, Y, ldy,
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
void gemm_rnd_weights(uint64_t seed, int64_t n, double *v) {
    for (int q = 0; q < 2; ++q)
        for (int64_t j = 0; j < n; ++j) v[j + q * n] = rnd_weight(seed, q, j);
}

/* The random weights in backend memory: columns 2 and 3 of W_RW (its first two hold the
 * fixed weights 1 and j + 1, exact in fp64, for the fused passes). */
const double *gemm_rnd_cols(const struct abft_gemm_plan *p) {
    return p->w[W_RW] + 2 * p->ld[W_RW];
}

/* Does one pass with the weights [1, j+1, r0, r1] give the fixed and the random checksums
 * of the rows together? With row checksums, yes; beside full checksums (whose passes also
 * read the other side, through the dual kernel) the random checksum has passes of its
 * own. */
int gemm_rnd_fused(const struct abft_gemm_plan *p) {
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
    gemm_rnd_weights(p->rnd_seed, p->n, v + 2 * p->n);
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
    const int own = !gemm_rnd_fused(p); /* passes of its own (beside full checksums) */
    if (p->k > 0 && p->alpha != 0.0) {
        if (own) {
            ABFT_TRY(gemm_tsmm(h, p->comp, p->prec, p->transb, br, bc, B, ldb, gemm_rnd_cols(p),
                               ld[W_RW], NULL, 0, w[W_YR], ld[W_YR], w[W_YRA], ld[W_YRA]));
            ABFT_TRY(gemm_tsmm(h, p->comp, p->prec, p->transa, ar, ac, A, lda, w[W_YR], ld[W_YR],
                               w[W_YRA], ld[W_YRA], w[W_SR], ld[W_SR], w[W_SRA], ld[W_SRA]));
        }
        /* their own checksum: a corrupted entry of Sr is told from a corrupted input */
        ABFT_TRY(gemm_tsmm(h, 0, ABFT_PREC_D, 1, p->m, 2, w[W_SR], ld[W_SR], NULL, 0, NULL, 0,
                           w[W_SIGR], ld[W_SIGR], NULL, 0));
    }
    if (p->beta != 0.0 && own)
        ABFT_TRY(gemm_tsmm(h, p->comp, p->prec, 0, p->m, p->n, C, ldc, gemm_rnd_cols(p), ld[W_RW],
                           NULL, 0, w[W_PR], ld[W_PR], w[W_PRA], ld[W_PRA]));
    return ABFT_STATUS_SUCCESS;
}

/* Row (and for FULL column) checksums of an m x n matrix M with abs companions, from one
 * read: R = M·V, Ra = |M|·V, and Rc = M^T·V, Rca = |M|^T·V when Rc != NULL. */
abft_status_t gemm_encode_matrix(abft_handle_t h, int comp, abft_prec_t prec, int64_t m,
                                 int64_t n, const void *M, int64_t ldm, double *R, double *Ra,
                                 int64_t ldr, double *Rc, double *Rca, int64_t ldrc) {
    if (m == 0 || n == 0) return ABFT_STATUS_SUCCESS;
    if (Rc == NULL)
        return gemm_tsmm(h, comp, prec, 0, m, n, M, ldm, NULL, 0, NULL, 0, R, ldr, Ra, ldr);
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
        st = gemm_tsmm(h, 0, prec, 0, rows, cols, M, ldm, (const double *)dz, cols, NULL, 0,
                       (double *)dy, rows, NULL, 0);
    if (st == ABFT_STATUS_SUCCESS)
        st = abft_count_nonfinite(h, (const double *)dy, rows, rows, count);
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
    p->comp = gemm_tight_wanted(p) &&
              abft_bound_tight_comp(h->backend, p->prec) == ABFT_TIGHT_COMP_TREE;
    if (p->m == 0 || p->n == 0) return ABFT_STATUS_SUCCESS;
    int64_t br = p->transb ? p->n : p->k, bc = p->transb ? p->k : p->n;
    int64_t ar = p->transa ? p->k : p->m, ac = p->transa ? p->m : p->k;
    /* with the random checksum beside row checksums, every pass below takes the weights
     * [1, j+1, r0, r1] explicitly (c = 4) and fills the random twins too */
    const int fused = gemm_rnd_fused(p);
    const int64_t c = fused ? 4 : 2;
    if (p->rnd) ABFT_TRY(rnd_upload(p));
    if (p->k > 0 && p->alpha != 0.0) { /* alpha = 0: the GEMM reads neither A nor B */
        /* 1. op(B)·V and |op(B)|·V (k x 2) */
        ABFT_TRY(gemm_tsmm_c(h, p->comp, p->prec, p->transb, br, bc, c, B, ldb,
                             fused ? w[W_RW] : NULL, fused ? ld[W_RW] : 0, NULL, 0, w[W_YB],
                             ld[W_YB], w[W_YBA], ld[W_YBA]));
        /* 2. op(A)·Yb with |op(A)|·Yba (m x 2); FULL: op(A)^T·V from the same read of A */
        if (!full) {
            ABFT_TRY(gemm_tsmm_c(h, p->comp, p->prec, p->transa, ar, ac, c, A, lda, w[W_YB],
                                 ld[W_YB], w[W_YBA], ld[W_YBA], w[W_S], ld[W_S], w[W_SA],
                                 ld[W_SA]));
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
            ABFT_TRY(gemm_tsmm(h, p->comp, p->prec, !p->transb, br, bc, B, ldb, w[W_ZA], ld[W_ZA],
                               w[W_ZAA], ld[W_ZAA], w[W_T], ld[W_T], w[W_TA], ld[W_TA]));
        }
        /* the checksums' own checksum (S^T·V, T^T·V): tells a checksum corrupted after
         * encoding from an input corrupted after encoding (docs/bound.md) */
        ABFT_TRY(gemm_tsmm(h, 0, ABFT_PREC_D, 1, p->m, 2, w[W_S], ld[W_S], NULL, 0, NULL, 0,
                           w[W_SIG], ld[W_SIG], NULL, 0));
        if (full)
            ABFT_TRY(gemm_tsmm(h, 0, ABFT_PREC_D, 1, p->n, 2, w[W_T], ld[W_T], NULL, 0, NULL, 0,
                               w[W_SIGT], ld[W_SIGT], NULL, 0));
        if (nonfinite == NULL) ABFT_TRY(h->ops->screen(&h->kctx, w[W_SA], p->m, ld[W_SA]));
        ABFT_TRY(gemm_tight_pass(p, A, lda, B, ldb));
    }
    /* beta != 0: a pass over the old C (rows and, for FULL, columns from one read). */
    if (p->beta != 0.0) {
        if (fused)
            ABFT_TRY(gemm_tsmm_c(h, p->comp, p->prec, 0, p->m, p->n, 4, C, ldc, w[W_RW], ld[W_RW],
                                 NULL, 0, w[W_P], ld[W_P], w[W_PA], ld[W_PA]));
        else
            ABFT_TRY(gemm_encode_matrix(h, p->comp, p->prec, p->m, p->n, C, ldc, w[W_P], w[W_PA],
                                        ld[W_P], full ? w[W_PC] : NULL, full ? w[W_PCA] : NULL,
                                        ld[W_PC]));
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
    size_t es = gemm_elem_size(p->prec);
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
    ABFT_TRY(gemm_plan_arith(&p));
    ABFT_TRY(gemm_tight_check(&p));
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
        if (st == ABFT_STATUS_SUCCESS) st = gemm_verify(&p, A, lda, B, ldb, C, ldc, rep, &held);
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
    return gemm_verify(&p, A, lda, B, ldb, C, ldc, rep, NULL);
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
    ABFT_TRY(gemm_plan_arith(p));
    ABFT_TRY(gemm_tight_check(p));
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
    abft_status_t st = gemm_verify(p, A, lda, B, ldb, C, ldc, &rep, NULL);
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

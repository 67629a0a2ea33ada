/* abft verify layer: the protected GEMM (DESIGN section 4) and its split form.
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
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abft_bound.h"
#include "abft_internal.h"

/* Indices of the fp64 work arrays of a plan; each is (rows of its side) x 2. */
enum {
    W_YB, W_YBA,           /* k x 2: op(B)·V, |op(B)|·V */
    W_S, W_SA,             /* m x 2: op(A)·Yb, |op(A)|·Yba */
    W_P, W_PA,             /* m x 2: C_old·V, |C_old|·V */
    W_R, W_RA,             /* m x 2: C·V, |C|·V */
    W_ZA, W_ZAA,           /* k x 2: op(A)^T·V, |op(A)|^T·V            (FULL) */
    W_T, W_TA,             /* n x 2: op(B)^T·Za, |op(B)|^T·Zaa          (FULL) */
    W_PC, W_PCA,           /* n x 2: C_old^T·V, |C_old|^T·V             (FULL) */
    W_RC, W_RCA,           /* n x 2: C^T·V, |C|^T·V                     (FULL) */
    W_TMP,                 /* 1 x 2: one recomputed element */
    W_COUNT
};

struct abft_gemm_plan {
    abft_handle_t h;
    abft_prec_t prec;
    int transa, transb;
    int64_t m, n, k;
    double alpha, beta;
    abft_checksum_kind_t kind;
    int encoded;
    abft_arith_t arith; /* the GEMM's arithmetic, read at verification (plan_arith) */
    int own_mem;      /* the plan allocated `mem` itself (split form) */
    void *mem;        /* backend memory holding every work array */
    double *w[W_COUNT];
    int64_t ld[W_COUNT];
};

static const double U_FP64 = 0x1p-53;

static size_t elem_size(abft_prec_t p) { return p == ABFT_PREC_D ? sizeof(double) : sizeof(float); }

/* Lay the work arrays out in `mem` (or compute the size when mem == NULL). */
static size_t plan_layout(struct abft_gemm_plan *p, void *mem) {
    int64_t rows[W_COUNT] = {p->k, p->k, p->m, p->m, p->m, p->m, p->m, p->m,
                             p->k, p->k, p->n, p->n, p->n, p->n, p->n, p->n, 1};
    const int full = p->kind == ABFT_CHECKSUM_FULL;
    size_t off = 0;
    for (int i = 0; i < W_COUNT; ++i) {
        int64_t r = rows[i] > 0 ? rows[i] : 1;
        p->ld[i] = r;
        p->w[i] = NULL;
        if (!full && i >= W_ZA && i < W_TMP) continue;
        if (mem != NULL) p->w[i] = (double *)((char *)mem + off);
        /* keep every array 256-byte aligned so kernels may use wide loads */
        off += ((size_t)r * 2 * sizeof(double) + 255) & ~(size_t)255;
    }
    return off;
}

static abft_status_t check_shape(abft_handle_t h, int transa, int transb, int64_t m, int64_t n,
                                 int64_t k) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_RETURN_IF(abft_bad_op(transa) || abft_bad_op(transb), ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(m < 0 || n < 0 || k < 0, ABFT_STATUS_INVALID_VALUE);
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

static abft_status_t check_operands(const struct abft_gemm_plan *p, const void *A, int64_t lda,
                                    const void *B, int64_t ldb, const void *C, int64_t ldc) {
    int64_t ar = p->transa ? p->k : p->m, ac = p->transa ? p->m : p->k;
    int64_t br = p->transb ? p->n : p->k, bc = p->transb ? p->k : p->n;
    ABFT_RETURN_IF(abft_bad_matrix(ar, ac, A, lda), ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(abft_bad_matrix(br, bc, B, ldb), ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(abft_bad_matrix(p->m, p->n, C, ldc), ABFT_STATUS_INVALID_VALUE);
    /* C is written while A and B are read (and read again for recomputation): no overlap */
    size_t es = elem_size(p->prec);
    ABFT_RETURN_IF(overlaps(C, p->m, p->n, ldc, A, ar, ac, lda, es) ||
                       overlaps(C, p->m, p->n, ldc, B, br, bc, ldb, es),
                   ABFT_STATUS_INVALID_VALUE);
    return ABFT_STATUS_SUCCESS;
}

/* The arithmetic of the GEMM being verified: the handle's (its cuBLAS math mode). */
static abft_status_t plan_arith(struct abft_gemm_plan *p) {
    return abft_bound_arith(p->h, p->prec, &p->arith);
}

/* ---- encoding ------------------------------------------------------------------------ */

static abft_status_t run_tsmm(abft_handle_t h, abft_prec_t prec, int trans, int64_t rows,
                              int64_t cols, const void *A, int64_t lda, const double *X,
                              int64_t ldx, const double *Xa, int64_t ldxa, double *Y,
                              int64_t ldy, double *Ya, int64_t ldya) {
    if ((trans ? cols : rows) == 0) return ABFT_STATUS_SUCCESS;
    abft_tsmm_args_t a = {prec, trans, rows, cols, 2, A, lda, X, ldx, Xa, ldxa, Y, ldy, Ya, ldya};
    return h->ops->tsmm(&h->kctx, &a);
}

/* Row (and for FULL column) checksums of an m x n matrix M with abs companions, from one
 * read: R = M·V, Ra = |M|·V, and Rc = M^T·V, Rca = |M|^T·V when Rc != NULL. */
static abft_status_t encode_matrix(abft_handle_t h, abft_prec_t prec, int64_t m, int64_t n,
                                   const void *M, int64_t ldm, double *R, double *Ra, int64_t ldr,
                                   double *Rc, double *Rca, int64_t ldrc) {
    if (m == 0 || n == 0) return ABFT_STATUS_SUCCESS;
    if (Rc == NULL) return run_tsmm(h, prec, 0, m, n, M, ldm, NULL, 0, NULL, 0, R, ldr, Ra, ldr);
    abft_dual_args_t a = {prec, m, n, M, ldm, 2, NULL, 0, NULL, 0, R, ldr, Ra, ldr,
                          2, NULL, 0, NULL, 0, Rc, ldrc, Rca, ldrc};
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
        st = run_tsmm(h, prec, 0, rows, cols, M, ldm, (const double *)dz, cols, NULL, 0,
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
    if (p->m == 0 || p->n == 0) return ABFT_STATUS_SUCCESS;
    int64_t br = p->transb ? p->n : p->k, bc = p->transb ? p->k : p->n;
    int64_t ar = p->transa ? p->k : p->m, ac = p->transa ? p->m : p->k;
    if (p->k > 0 && p->alpha != 0.0) { /* alpha = 0: the GEMM reads neither A nor B */
        /* 1. op(B)·V and |op(B)|·V (k x 2) */
        ABFT_TRY(run_tsmm(h, p->prec, p->transb, br, bc, B, ldb, NULL, 0, NULL, 0, w[W_YB],
                          ld[W_YB], w[W_YBA], ld[W_YBA]));
        /* 2. op(A)·Yb with |op(A)|·Yba (m x 2); FULL: op(A)^T·V from the same read of A */
        if (!full) {
            ABFT_TRY(run_tsmm(h, p->prec, p->transa, ar, ac, A, lda, w[W_YB], ld[W_YB],
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
            ABFT_TRY(run_tsmm(h, p->prec, !p->transb, br, bc, B, ldb, w[W_ZA], ld[W_ZA],
                              w[W_ZAA], ld[W_ZAA], w[W_T], ld[W_T], w[W_TA], ld[W_TA]));
        }
        if (nonfinite == NULL) ABFT_TRY(h->ops->screen(&h->kctx, w[W_SA], p->m, ld[W_SA]));
    }
    /* beta != 0: a pass over the old C (rows and, for FULL, columns from one read). */
    if (p->beta != 0.0) {
        ABFT_TRY(encode_matrix(h, p->prec, p->m, p->n, C, ldc, w[W_P], w[W_PA], ld[W_P],
                               full ? w[W_PC] : NULL, full ? w[W_PCA] : NULL, ld[W_PC]));
        if (nonfinite == NULL) ABFT_TRY(h->ops->screen(&h->kctx, w[W_PA], p->m, ld[W_PA]));
    }
    if (nonfinite != NULL) ABFT_TRY(screen_inputs(p, A, lda, B, ldb, C, ldc, nonfinite));
    return ABFT_STATUS_SUCCESS;
}

/* ---- the GEMM (split along k when a hook wants to strike between the halves) ---------- */

static abft_status_t run_gemm(struct abft_gemm_plan *p, const void *A, int64_t lda,
                              const void *B, int64_t ldb, void *C, int64_t ldc) {
    abft_handle_t h = p->h;
    abft_gemm_args_t g = {p->prec, p->transa, p->transb, p->m, p->n, p->k, p->alpha, p->beta,
                          A, lda, B, ldb, C, ldc};
    if (h->hook == NULL || p->k < 2) return h->ops->gemm(&h->kctx, &g);
    int64_t k1 = p->k / 2;
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

/* Host copies of one side's n x 2 arrays, fetched only when something was flagged. */
typedef struct side_host {
    int64_t n;          /* entries on this side (m for rows, n for columns) */
    int64_t len;        /* length of each entry's vector in C (n for rows, m for columns) */
    double *R, *Ra, *S, *Sa, *P, *Pa; /* n x 2 each, ld = n; NULL until fetched */
    double *slack;      /* n x 2: noise carried into each entry by corrections made so far */
    abft_gemm_bound_t bc;
    int64_t *flags;     /* flagged entries (ascending) */
    int64_t nflag;
    int8_t *state;      /* per flagged entry: 0 open, 1 resolved */
} side_host_t;

static void side_free(side_host_t *s) {
    free(s->R);
    free(s->flags);
    free(s->state);
    memset(s, 0, sizeof *s);
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

/* Copy a vector of C (a row: stride ldc; a column: contiguous) to (dir 0) or from (dir 1)
 * the host as doubles. tmp holds len elements of the data precision. */
static abft_status_t vec_io(const struct abft_gemm_plan *p, void *C, int64_t ldc, int col_side,
                            int64_t idx, double *v, int dir, void *tmp) {
    abft_handle_t h = p->h;
    size_t es = elem_size(p->prec);
    int64_t len = col_side ? p->m : p->n;
    char *base = (char *)C + es * (size_t)(col_side ? idx * ldc : idx);
    abft_copy_args_t c;
    if (col_side)
        c = (abft_copy_args_t){dir, es, len, 1, tmp, len, base, ldc};
    else
        c = (abft_copy_args_t){dir, es, 1, len, tmp, 1, base, ldc};
    if (dir == 1) {
        for (int64_t j = 0; j < len; ++j) {
            if (p->prec == ABFT_PREC_D)
                ((double *)tmp)[j] = v[j];
            else
                ((float *)tmp)[j] = (float)v[j];
        }
    }
    ABFT_TRY(h->ops->copy(&h->kctx, &c));
    if (dir == 0) {
        for (int64_t j = 0; j < len; ++j)
            v[j] = p->prec == ABFT_PREC_D ? ((double *)tmp)[j] : (double)((float *)tmp)[j];
    }
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t elem_write(const struct abft_gemm_plan *p, void *C, int64_t ldc, int64_t i,
                                int64_t j, double v) {
    size_t es = elem_size(p->prec);
    double dv = v;
    float fv = (float)v;
    abft_copy_args_t c = {1, es, 1, 1, p->prec == ABFT_PREC_D ? (void *)&dv : (void *)&fv, 1,
                          (char *)C + es * (size_t)(i + j * ldc), ldc};
    return p->h->ops->copy(&p->h->kctx, &c);
}

/* Expected checksum of entry i, column q, and its bound given the vector's |.|-sum ra. */
static void expect(const struct abft_gemm_plan *p, const side_host_t *s, int64_t i, int q,
                   double ra, double *sv, double *t) {
    int64_t o = i + q * s->n;
    double e = p->alpha * s->S[o], b = fabs(p->alpha) * s->Sa[o];
    if (p->beta != 0.0) {
        e += p->beta * s->P[o];
        b += fabs(p->beta) * s->Pa[o];
    }
    *sv = e;
    *t = s->bc.coef_s * b + s->bc.coef_r * ra + s->bc.abs_floor;
}

/* Sums of a vector: r[0] = sum v_j, r[1] = sum (j+1) v_j; ra likewise with |v_j|. */
static void vec_sums(const double *v, int64_t len, double r[2], double ra[2]) {
    double s0 = 0, s1 = 0, a0 = 0, a1 = 0;
    for (int64_t j = 0; j < len; ++j) {
        double w = (double)(j + 1);
        s0 += v[j];
        s1 += w * v[j];
        a0 += fabs(v[j]);
        a1 += w * fabs(v[j]);
    }
    r[0] = s0, r[1] = s1, ra[0] = a0, ra[1] = a1;
}

/* Does vector i pass its check? Returns the residuals d and bounds t (t includes the noise
 * that earlier corrections carried into this entry, plus `extra` when not NULL). */
static int vec_passes(const struct abft_gemm_plan *p, const side_host_t *s, int64_t i,
                      const double *v, const double *extra, double d[2], double t[2]) {
    double r[2], ra[2];
    vec_sums(v, s->len, r, ra);
    int ok = 1;
    for (int q = 0; q < 2; ++q) {
        double e;
        expect(p, s, i, q, ra[q], &e, &t[q]);
        t[q] += s->slack[i + q * s->n] + (extra != NULL ? extra[q] : 0.0);
        d[q] = r[q] - e;
        if (!(fabs(d[q]) <= t[q]) || isinf(t[q])) ok = 0;
    }
    return ok;
}

static void add_fault(abft_report_t *rep, int64_t row, int64_t col, double delta, double ratio,
                      abft_action_t action, int side) {
    abft_report_add_fault(rep, row, col, delta, ratio, action, ABFT_FACTOR_NONE, side);
}

/* A correction at (row, col) carrying noise cn: every entry crossing it inherits that noise
 * (weighted by its position in the weighted checksum). */
static void note_correction(side_host_t sides[2], int64_t row, int64_t col, double cn) {
    if (sides[0].slack != NULL) {
        sides[0].slack[row] += cn;
        sides[0].slack[row + sides[0].n] += cn * (double)(col + 1);
    }
    if (sides[1].slack != NULL) {
        sides[1].slack[col] += cn;
        sides[1].slack[col + sides[1].n] += cn * (double)(row + 1);
    }
}

/* Element (i, j) of alpha·op(A)·op(B), recomputed from the inputs (a dot product). */
static abft_status_t recompute_elem(const struct abft_gemm_plan *p, const void *A, int64_t lda,
                                    const void *B, int64_t ldb, int64_t i, int64_t j, double *out) {
    size_t es = elem_size(p->prec);
    abft_gemm_args_t g = {p->prec, p->transa, p->transb, 1, 1, p->k, p->alpha, 0.0,
                          (const char *)A + es * (size_t)(p->transa ? i * lda : i), lda,
                          (const char *)B + es * (size_t)(p->transb ? j : j * ldb), ldb,
                          p->w[W_TMP], 1};
    ABFT_TRY(p->h->ops->gemm(&p->h->kctx, &g));
    double dv = 0.0;
    float fv = 0.0f;
    abft_copy_args_t c = {0, es, 1, 1, p->prec == ABFT_PREC_D ? (void *)&dv : (void *)&fv, 1,
                          p->w[W_TMP], 1};
    ABFT_TRY(p->h->ops->copy(&p->h->kctx, &c));
    *out = p->prec == ABFT_PREC_D ? dv : (double)fv;
    return ABFT_STATUS_SUCCESS;
}

/* Try to locate and correct a single error in vector idx of side cs (host copy v, updated
 * when the correction is confirmed and written back). *fixed = 1 when the entry passes. */
static abft_status_t try_correct(const struct abft_gemm_plan *p, side_host_t sides[2], int cs,
                                 int64_t idx, double *v, const void *A, int64_t lda,
                                 const void *B, int64_t ldb, void *C, int64_t ldc,
                                 abft_report_t *rep, int *fixed) {
    side_host_t *s = &sides[cs];
    *fixed = 0;
    int64_t len = s->len;
    double d[2], t[2];
    if (vec_passes(p, s, idx, v, NULL, d, t)) {
        *fixed = 1; /* consistent now (fixed through the other side) */
        return ABFT_STATUS_SUCCESS;
    }
    int64_t j = -1, nbad = 0;
    for (int64_t l = 0; l < len; ++l)
        if (!isfinite(v[l])) {
            ++nbad;
            j = l;
        }
    if (nbad == 0 && !(isfinite(d[0]) && isfinite(d[1]))) {
        /* The sums overflowed: one element became huge (an exponent flip). It is the
         * candidate; the confirmation below decides. */
        double big = -1.0;
        for (int64_t l = 0; l < len; ++l)
            if (fabs(v[l]) > big) big = fabs(v[l]), j = l;
    } else if (nbad == 0) {
        /* One finite error delta at position j gives d = (delta, (j+1)·delta). Accept the
         * location only if the integer is unambiguous even when both residuals carry their
         * worst-case noise. */
        if (d[0] == 0.0) return ABFT_STATUS_SUCCESS;
        double ratio = d[1] / d[0];
        double jr = nearbyint(ratio);
        double noise = (t[1] + fabs(jr) * t[0]) / fabs(d[0]);
        if (!(jr >= 1.0 && jr <= (double)len && fabs(ratio - jr) + noise < 0.5))
            return ABFT_STATUS_SUCCESS;
        j = (int64_t)jr - 1;
    } else if (nbad != 1) {
        return ABFT_STATUS_SUCCESS; /* several non-finite elements: not from one error */
    }
    /* The corrected value comes from the checksum and the other elements, not from
     * old - delta: a huge delta (an exponent flip) would swamp old - delta in rounding. */
    double old = v[j], cand, noise_e, r[2], ra[2];
    v[j] = 0.0;
    vec_sums(v, len, r, ra);
    expect(p, s, idx, 0, ra[0], &cand, &noise_e);
    noise_e += s->slack[idx];
    cand -= r[0];
    if (p->prec == ABFT_PREC_S) cand = (double)(float)cand;
    v[j] = cand;
    /* Confirm: with the element corrected, what remains is the noise the correction carried
     * (at most noise_e, plus the rounding of the corrected value itself), weighted by 1 and
     * j + 1 in the two checksums, on top of the entry's own bound. A wrong location leaves
     * a residual of at least the error's size in the weighted checksum. */
    double ur = p->prec == ABFT_PREC_S ? 0x1p-24 : U_FP64;
    double cn = noise_e + 2.0 * ur * fabs(cand);
    double extra[2] = {cn, cn * (double)(j + 1)};
    double d2[2], t2[2];
    if (!isfinite(cand) || !vec_passes(p, s, idx, v, extra, d2, t2)) {
        v[j] = old; /* never "correct" on a guess */
        return ABFT_STATUS_SUCCESS;
    }
    int64_t row = cs ? j : idx, col = cs ? idx : j;
    /* With beta = 0 the element can also be recomputed from the inputs (a dot product of
     * length k). Two errors in one vector whose weighted centre falls on an integer look
     * like one error to two checksums; the recomputation tells them apart, and it refuses
     * to "correct" C towards checksums when the inputs were corrupted after encoding
     * (then C is what the corrupted inputs give, and the fault is reported instead). */
    if (p->beta == 0.0 && p->k > 0 && A != NULL && B != NULL) {
        double rv = 0.0;
        ABFT_TRY(recompute_elem(p, A, lda, B, ldb, row, col, &rv));
        /* both carry at most the row's noise: the dot product its own rounding (below the
         * row's GEMM term), the checksum value the noise of the residual */
        if (!(fabs(rv - cand) <= 2.0 * noise_e + cn)) {
            v[j] = old;
            return ABFT_STATUS_SUCCESS;
        }
        /* the dot product carries only its own rounding; the checksum value carries every
         * other element's: keep the dot product */
        cand = rv;
        v[j] = cand;
    }
    ABFT_TRY(elem_write(p, C, ldc, row, col, cand));
    note_correction(sides, row, col, cn);
    *fixed = 1;
    rep->corrected++;
    add_fault(rep, row, col, old - cand, fabs(d[0]) / t[0], ABFT_ACTION_CORRECTED, cs);
    return ABFT_STATUS_SUCCESS;
}

/* One side's compare job for the backend; its flagged indices come back to the host. */
static abft_status_t compare_job(const struct abft_gemm_plan *p, int cs, side_host_t *s,
                                 double *max_ratio, abft_compare_args_t *a) {
    abft_handle_t h = p->h;
    const double *const *w = (const double *const *)p->w;
    const int64_t *ld = p->ld;
    int b = cs ? W_RC - W_R : 0; /* offset between the row and column array indices */
    int sidx = cs ? W_T : W_S, pidx = cs ? W_PC : W_P;
    int64_t n = cs ? p->n : p->m;
    s->n = n;
    s->len = cs ? p->m : p->n;
    s->flags = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    ABFT_RETURN_IF(s->flags == NULL, ABFT_STATUS_ALLOC_FAILED);
    abft_bound_gemm(h, &p->arith, p->alpha, p->beta, cs ? p->m : p->n, p->k, cs ? p->m : p->n,
                    &s->bc);
    /* k = 0 or alpha = 0: the alpha terms vanish (and the GEMM reads neither A nor B, so
     * their encodings are not used: NaN there must not flag anything). */
    const int use_ab = p->k > 0 && p->alpha != 0.0;
    abft_compare_args_t c = {n, w[W_R + b], ld[W_R + b], w[W_RA + b], ld[W_RA + b],
                             use_ab ? w[sidx] : w[W_R + b], ld[sidx],
                             use_ab ? w[sidx + 1] : w[W_RA + b], ld[sidx + 1],
                             w[pidx], ld[pidx], w[pidx + 1], ld[pidx + 1],
                             use_ab ? p->alpha : 0.0, p->beta, s->bc.coef_s, s->bc.coef_r,
                             s->bc.abs_floor, n, s->flags, &s->nflag, max_ratio};
    *a = c;
    return ABFT_STATUS_SUCCESS;
}

/* Bring one side's arrays to the host (n x 2 each). */
static abft_status_t fetch_side(const struct abft_gemm_plan *p, int cs, side_host_t *s) {
    abft_handle_t h = p->h;
    const double *const *w = (const double *const *)p->w;
    const int64_t *ld = p->ld;
    int b = cs ? W_RC - W_R : 0;
    int sidx = cs ? W_T : W_S, pidx = cs ? W_PC : W_P;
    const int use_ab = p->k > 0 && p->alpha != 0.0;
    int64_t n = s->n;
    s->R = (double *)calloc((size_t)n * 14, sizeof(double));
    s->state = (int8_t *)calloc((size_t)(s->nflag > 0 ? s->nflag : 1), 1);
    ABFT_RETURN_IF(s->R == NULL || s->state == NULL, ABFT_STATUS_ALLOC_FAILED);
    s->Ra = s->R + 2 * n, s->S = s->R + 4 * n, s->Sa = s->R + 6 * n;
    s->P = s->R + 8 * n, s->Pa = s->R + 10 * n, s->slack = s->R + 12 * n;
    ABFT_TRY(fetch_n2(h, s->R, w[W_R + b], n, ld[W_R + b]));
    ABFT_TRY(fetch_n2(h, s->Ra, w[W_RA + b], n, ld[W_RA + b]));
    ABFT_TRY(fetch_n2(h, s->S, use_ab ? w[sidx] : NULL, n, ld[sidx]));
    ABFT_TRY(fetch_n2(h, s->Sa, use_ab ? w[sidx + 1] : NULL, n, ld[sidx + 1]));
    ABFT_TRY(fetch_n2(h, s->P, p->beta != 0.0 ? w[pidx] : NULL, n, ld[pidx]));
    ABFT_TRY(fetch_n2(h, s->Pa, p->beta != 0.0 ? w[pidx + 1] : NULL, n, ld[pidx + 1]));
    return ABFT_STATUS_SUCCESS;
}

/* Recompute vector idx of C from the inputs (beta = 0 only): a row is
 * alpha·op(A)(i,:)·op(B), a column alpha·op(A)·op(B)(:,j). Keep it when it passes its check,
 * else restore what was there. */
static abft_status_t try_recompute(const struct abft_gemm_plan *p, side_host_t *s, int cs,
                                   int64_t idx, double *v, const void *A, int64_t lda,
                                   const void *B, int64_t ldb, void *C, int64_t ldc, void *tmp,
                                   int *fixed) {
    *fixed = 0;
    size_t es = elem_size(p->prec);
    abft_gemm_args_t g = {p->prec, p->transa, p->transb, p->m, p->n, p->k, p->alpha, 0.0,
                          A, lda, B, ldb, C, ldc};
    if (cs == 0) {
        g.m = 1;
        g.A = (const char *)A + es * (size_t)(p->transa ? idx * lda : idx);
        g.C = (char *)C + es * (size_t)idx;
    } else {
        g.n = 1;
        g.B = (const char *)B + es * (size_t)(p->transb ? idx : idx * ldb);
        g.C = (char *)C + es * (size_t)(idx * ldc);
    }
    ABFT_TRY(p->h->ops->gemm(&p->h->kctx, &g));
    double *nv = (double *)malloc(sizeof(double) * (size_t)s->len);
    ABFT_RETURN_IF(nv == NULL, ABFT_STATUS_ALLOC_FAILED);
    abft_status_t st = vec_io(p, C, ldc, cs, idx, nv, 0, tmp);
    double d[2], t[2];
    if (st == ABFT_STATUS_SUCCESS) {
        if (vec_passes(p, s, idx, nv, NULL, d, t)) {
            memcpy(v, nv, sizeof(double) * (size_t)s->len);
            *fixed = 1;
        } else {
            st = vec_io(p, C, ldc, cs, idx, v, 1, tmp); /* restore what was there */
        }
    }
    free(nv);
    return st;
}

/* FULL checksums: can the residual of entry idx on side cs be explained by data errors that
 * the other side (nothing flagged there) would not have seen? Each such error is at most the
 * other side's bound at its position, so the residual can be at most their (weighted) sum.
 * Beyond that, the checksum itself must be corrupted and the data are intact. */
static int is_checksum_fault(const struct abft_gemm_plan *p, side_host_t sides[2], int cs,
                             const double d[2], const double t[2]) {
    const side_host_t *o = &sides[!cs];
    double se = 0.0, sw = 0.0;
    for (int64_t l = 0; l < o->n; ++l) {
        double e, te;
        expect(p, o, l, 0, o->Ra[l], &e, &te);
        te += o->slack[l];
        /* an error the other side did not flag can be up to twice its bound: its own
         * rounding may have cancelled up to one bound of it */
        se += 2.0 * te;
        sw += 2.0 * te * (double)(l + 1);
    }
    return fabs(d[0]) - t[0] > se || fabs(d[1]) - t[1] > sw;
}

/* held != NULL: the GEMM went through the device-side gate; *held = 1 when the gate held it
 * back (a non-finite screen): then C is the old C, and nothing is checked or changed. */
static abft_status_t verify(struct abft_gemm_plan *p, const void *A, int64_t lda, const void *B,
                            int64_t ldb, void *C, int64_t ldc, abft_report_t *rep, int *held) {
    abft_handle_t h = p->h;
    const int full = p->kind == ABFT_CHECKSUM_FULL;
    const int nsides = full ? 2 : 1;
    ABFT_TRY(plan_arith(p));
    rep->unit_roundoff = p->arith.u_in > 0.0 ? p->arith.u_in : p->arith.u;
    if (p->m == 0 || p->n == 0) return ABFT_STATUS_SUCCESS;
    ABFT_TRY(abft_call_hook(h, ABFT_SITE_AFTER_GEMM, 0, p->prec, C, p->m, p->n, ldc));
    /* 4. pass over C: rows (and columns, fused) */
    ABFT_TRY(encode_matrix(h, p->prec, p->m, p->n, C, ldc, p->w[W_R], p->w[W_RA], p->ld[W_R],
                           full ? p->w[W_RC] : NULL, full ? p->w[W_RCA] : NULL, p->ld[W_RC]));
    side_host_t sides[2];
    memset(sides, 0, sizeof sides);
    abft_status_t st = ABFT_STATUS_SUCCESS;
    /* both sides in one compare: one synchronisation */
    abft_compare_args_t jobs[2];
    double mr[2] = {0.0, 0.0};
    for (int cs = 0; cs < nsides && st == ABFT_STATUS_SUCCESS; ++cs)
        st = compare_job(p, cs, &sides[cs], &mr[cs], &jobs[cs]);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->compare(&h->kctx, jobs, nsides);
    for (int cs = 0; cs < nsides && st == ABFT_STATUS_SUCCESS; ++cs) {
        if (mr[cs] > rep->max_ratio) rep->max_ratio = mr[cs];
        rep->checked += sides[cs].n;
        rep->detected += sides[cs].nflag;
    }
    if (held != NULL && st == ABFT_STATUS_SUCCESS) { /* the compare synchronised already */
        int64_t count = 0;
        st = h->ops->gate_result(&h->kctx, &count);
        if (st == ABFT_STATUS_SUCCESS && count > 0) {
            *held = 1;
            side_free(&sides[0]);
            side_free(&sides[1]);
            return ABFT_STATUS_SUCCESS;
        }
    }
    for (int cs = 0; cs < nsides && st == ABFT_STATUS_SUCCESS && rep->detected > 0; ++cs)
        st = fetch_side(p, cs, &sides[cs]);
    int64_t maxlen = p->m > p->n ? p->m : p->n;
    double *v = NULL;
    void *tmp = NULL;
    if (st == ABFT_STATUS_SUCCESS && rep->detected > 0) {
        v = (double *)malloc(sizeof(double) * (size_t)maxlen);
        tmp = malloc(sizeof(double) * (size_t)maxlen);
        if (v == NULL || tmp == NULL) st = ABFT_STATUS_ALLOC_FAILED;
    }
    /* Rows first, then columns (several errors in one row are single in their columns),
     * then rows again for what the columns fixed. */
    for (int pass = 0; pass < 2 * nsides - 1 && st == ABFT_STATUS_SUCCESS && rep->detected > 0;
         ++pass) {
        int cs = pass == 1;
        side_host_t *s = &sides[cs];
        for (int64_t f = 0; f < s->nflag && st == ABFT_STATUS_SUCCESS; ++f) {
            if (s->state[f] != 0) continue;
            int fixed = 0;
            st = vec_io(p, C, ldc, cs, s->flags[f], v, 0, tmp);
            if (st == ABFT_STATUS_SUCCESS)
                st = try_correct(p, sides, cs, s->flags[f], v, A, lda, B, ldb, C, ldc, rep,
                                 &fixed);
            if (fixed) s->state[f] = 1;
        }
    }
    /* What is left: a corrupted checksum (FULL), a recomputation (beta = 0: the old C is
     * not needed), or a report. */
    for (int cs = 0; cs < nsides && st == ABFT_STATUS_SUCCESS; ++cs) {
        side_host_t *s = &sides[cs];
        for (int64_t f = 0; f < s->nflag && st == ABFT_STATUS_SUCCESS; ++f) {
            if (s->state[f] != 0) continue;
            int64_t idx = s->flags[f];
            int64_t row = cs ? -1 : idx, col = cs ? idx : -1;
            st = vec_io(p, C, ldc, cs, idx, v, 0, tmp);
            if (st != ABFT_STATUS_SUCCESS) break;
            double d[2], t[2];
            if (vec_passes(p, s, idx, v, NULL, d, t)) continue; /* fixed meanwhile */
            /* the unweighted checksum's ratio: the one the location guarantee is stated in
             * (docs/bound.md); the report's max_ratio covers both */
            double ratio = fabs(d[0]) / t[0];
            /* Recompute first: when the recomputed vector passes, the data were wrong. A
             * corrupted checksum fails the recomputed vector too (then it is restored). */
            if (h->recompute && p->beta == 0.0 && p->k > 0 && A != NULL && B != NULL) {
                int fixed = 0;
                st = try_recompute(p, s, cs, idx, v, A, lda, B, ldb, C, ldc, tmp, &fixed);
                if (st != ABFT_STATUS_SUCCESS) break;
                if (fixed) {
                    rep->recomputed++;
                    add_fault(rep, row, col, d[0], ratio, ABFT_ACTION_RECOMPUTED, cs);
                    continue;
                }
            }
            if (full && sides[!cs].nflag == 0 && is_checksum_fault(p, sides, cs, d, t)) {
                rep->checksum_faults++;
                add_fault(rep, row, col, d[0], ratio, ABFT_ACTION_CHECKSUM_FAULT, cs);
                continue;
            }
            rep->uncorrectable++;
            add_fault(rep, row, col, d[0], ratio, ABFT_ACTION_UNCORRECTABLE, cs);
        }
    }
    free(v);
    free(tmp);
    side_free(&sides[0]);
    side_free(&sides[1]);
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
}

static abft_status_t protected_gemm_run(struct abft_gemm_plan *pp, const void *A, int64_t lda,
                                        const void *B, int64_t ldb, void *C, int64_t ldc,
                                        abft_report_t *rep);

static abft_status_t protected_gemm(abft_handle_t h, abft_prec_t prec, int transa, int transb,
                                    int64_t m, int64_t n, int64_t k, double alpha, const void *A,
                                    int64_t lda, const void *B, int64_t ldb, double beta,
                                    void *C, int64_t ldc, abft_report_t *report) {
    ABFT_TRY(check_shape(h, transa, transb, m, n, k));
    ABFT_RETURN_IF(!isfinite(alpha) || !isfinite(beta), ABFT_STATUS_INVALID_VALUE);
    struct abft_gemm_plan p;
    plan_init(&p, h, prec, transa, transb, m, n, k, alpha, beta);
    ABFT_TRY(check_operands(&p, A, lda, B, ldb, C, ldc));
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
        abft_gemm_args_t g = {prec, transa, transb, m, n, k, p.alpha, p.beta,
                              A, lda, B, ldb, C, ldc};
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
    ABFT_TRY(check_shape(h, transa, transb, m, n, k));
    ABFT_RETURN_IF(plan == NULL || (precision != 'd' && precision != 's'),
                   ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(!isfinite(alpha) || !isfinite(beta), ABFT_STATUS_INVALID_VALUE);
    struct abft_gemm_plan *p = (struct abft_gemm_plan *)malloc(sizeof *p);
    ABFT_RETURN_IF(p == NULL, ABFT_STATUS_ALLOC_FAILED);
    plan_init(p, h, precision == 'd' ? ABFT_PREC_D : ABFT_PREC_S, transa, transb, m, n, k, alpha,
              beta);
    abft_status_t st = h->ops->alloc(&h->kctx, plan_layout(p, NULL), &p->mem);
    if (st != ABFT_STATUS_SUCCESS) {
        free(p);
        return st;
    }
    p->own_mem = 1;
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

static abft_status_t split_encode(abft_handle_t h, abft_gemm_plan_t p, abft_prec_t prec,
                                  const void *A, int64_t lda, const void *B, int64_t ldb,
                                  const void *C, int64_t ldc) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_RETURN_IF(p == NULL || p->h != h || p->prec != prec, ABFT_STATUS_INVALID_VALUE);
    /* C is read only when beta != 0: it may be NULL otherwise. */
    if (p->beta == 0.0 && C == NULL) {
        int64_t cld = p->m > 1 ? p->m : 1;
        ABFT_TRY(check_operands(p, A, lda, B, ldb, &cld /* any non-NULL */, cld));
    } else {
        ABFT_TRY(check_operands(p, A, lda, B, ldb, C, ldc));
    }
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
    ABFT_RETURN_IF(p == NULL || p->h != h || p->prec != prec || !p->encoded,
                   ABFT_STATUS_INVALID_VALUE);
    /* A and B are optional here (they serve recomputation only). */
    int64_t ar = p->transa ? p->k : p->m, ac = p->transa ? p->m : p->k;
    int64_t br = p->transb ? p->n : p->k, bc = p->transb ? p->k : p->n;
    ABFT_RETURN_IF(A != NULL && abft_bad_matrix(ar, ac, A, lda), ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(B != NULL && abft_bad_matrix(br, bc, B, ldb), ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(abft_bad_matrix(p->m, p->n, C, ldc), ABFT_STATUS_INVALID_VALUE);
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

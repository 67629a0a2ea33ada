/* abft encode layer: checksum encoding and tall-and-skinny products. Checks arguments,
 * then dispatches to the handle's backend. */
#include "abft_internal.h"

/* A rows x cols operand (rows, cols >= 0) whose pointer and leading dimension sit at
 * positions pos_p, pos_ld of the public call (0: not a parameter of it). */
static abft_status_t check_out(int64_t rows, int64_t cols, const void *p, int64_t ld, int pos_p,
                               int pos_ld) {
    int bad = abft_matrix_bad_arg(rows, cols, p, ld, pos_p, pos_ld);
    ABFT_ARG_IF(bad != 0 || abft_bad_matrix(rows, cols, p, ld), bad);
    return ABFT_STATUS_SUCCESS;
}

/* A rows x cols column-major operand (ld, element size es) as a span of memory. */
typedef struct span {
    const void *p;
    size_t bytes;
} span_t;
static span_t mat_span(const void *p, int64_t rows, int64_t cols, int64_t ld, size_t es) {
    span_t s = {p, 0};
    if (p != NULL && rows > 0 && cols > 0)
        s.bytes = ((size_t)(cols - 1) * (size_t)ld + (size_t)rows) * es;
    return s;
}
static int spans_overlap(span_t a, span_t b) {
    if (a.bytes == 0 || b.bytes == 0) return 0;
    uintptr_t a0 = (uintptr_t)a.p, b0 = (uintptr_t)b.p;
    return a0 < b0 + b.bytes && b0 < a0 + a.bytes;
}
/* Errors leave every output untouched (docs/api.md): an output that overlaps another output
 * or any input is INVALID_VALUE (spans of memory, not elements: conservative). pos: the
 * outputs' positions in the public call. */
static abft_status_t check_overlaps(const span_t *out, int nout, const span_t *in, int nin,
                                    const int *pos) {
    for (int i = 0; i < nout; ++i) {
        for (int j = i + 1; j < nout; ++j) ABFT_ARG_IF(spans_overlap(out[i], out[j]), pos[j]);
        for (int j = 0; j < nin; ++j) ABFT_ARG_IF(spans_overlap(out[i], in[j]), pos[i]);
    }
    return ABFT_STATUS_SUCCESS;
}

/* Positions of tsmm's operands in a public call: trans, m, n, c, A, lda, X, ldx, Y, ldy,
 * Xabs, ldxabs, Yabs, ldyabs (0: not a parameter of that call). */
enum { P_TRANS, P_M, P_N, P_C, P_A, P_LDA, P_X, P_LDX, P_Y, P_LDY, P_XA, P_LDXA, P_YA, P_LDYA };
static const int tsmm_pos[14] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static const int checksum_pos[14] = {0, 2, 3, 0, 4, 5, 0, 0, 6, 7, 0, 0, 8, 9};

/* Shared by every tall-and-skinny entry point: validate, then run one tsmm. */
static abft_status_t tsmm(abft_handle_t h, abft_prec_t prec, int trans, int64_t m, int64_t n,
                          int64_t c, const void *A, int64_t lda, const double *X, int64_t ldx,
                          double *Y, int64_t ldy, const double *Xabs, int64_t ldxabs,
                          double *Yabs, int64_t ldyabs, const int *pos) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(abft_bad_op(trans), pos[P_TRANS]);
    ABFT_ARG_IF(c < 1 || c > 16, pos[P_C]);
    ABFT_ARG_IF(X == NULL && c != 2, pos[P_X]);
    ABFT_ARG_IF(m < 0, pos[P_M]);
    ABFT_ARG_IF(n < 0, pos[P_N]);
    ABFT_TRY(check_out(m, n, A, lda, pos[P_A], pos[P_LDA]));
    int64_t xrows = trans ? m : n, yrows = trans ? n : m;
    if (X != NULL) ABFT_TRY(check_out(xrows, c, X, ldx, pos[P_X], pos[P_LDX]));
    ABFT_TRY(check_out(yrows, c, Y, ldy, pos[P_Y], pos[P_LDY]));
    ABFT_ARG_IF(yrows > 0 && Y == NULL, pos[P_Y]);
    if (Yabs != NULL) {
        ABFT_TRY(check_out(yrows, c, Yabs, ldyabs, pos[P_YA], pos[P_LDYA]));
        ABFT_ARG_IF(Yabs == Y && yrows > 0, pos[P_YA]);
        if (Xabs != NULL) ABFT_TRY(check_out(xrows, c, Xabs, ldxabs, pos[P_XA], pos[P_LDXA]));
    } else {
        ABFT_ARG_IF(Xabs != NULL, pos[P_XA]);
    }
    const size_t es = prec == ABFT_PREC_D ? 8 : 4;
    span_t out[2] = {mat_span(Y, yrows, c, ldy, 8), mat_span(Yabs, yrows, c, ldyabs, 8)};
    span_t in[3] = {mat_span(A, m, n, lda, es), mat_span(X, xrows, c, ldx, 8),
                    mat_span(Xabs, xrows, c, ldxabs, 8)};
    const int opos[2] = {pos[P_Y], pos[P_YA]};
    ABFT_TRY(check_overlaps(out, 2, in, 3, opos));
    if (yrows == 0) return ABFT_STATUS_SUCCESS;
    abft_tsmm_args_t a = {prec, trans, m, n, c, A, lda, X, ldx, Xabs, ldxabs, Y, ldy,
                          Yabs, ldyabs, 0};
    return h->ops->tsmm(&h->kctx, &a);
}

abft_status_t abft_dchecksum_rows(abft_handle_t h, int64_t m, int64_t n, const double *A,
                                  int64_t lda, double *R, int64_t ldr, double *Rabs,
                                  int64_t ldrabs) {
    return tsmm(h, ABFT_PREC_D, 0, m, n, 2, A, lda, NULL, 0, R, ldr, NULL, 0, Rabs, ldrabs,
                checksum_pos);
}
abft_status_t abft_schecksum_rows(abft_handle_t h, int64_t m, int64_t n, const float *A,
                                  int64_t lda, double *R, int64_t ldr, double *Rabs,
                                  int64_t ldrabs) {
    return tsmm(h, ABFT_PREC_S, 0, m, n, 2, A, lda, NULL, 0, R, ldr, NULL, 0, Rabs, ldrabs,
                checksum_pos);
}
abft_status_t abft_dchecksum_cols(abft_handle_t h, int64_t m, int64_t n, const double *A,
                                  int64_t lda, double *K, int64_t ldk, double *Kabs,
                                  int64_t ldkabs) {
    return tsmm(h, ABFT_PREC_D, 1, m, n, 2, A, lda, NULL, 0, K, ldk, NULL, 0, Kabs, ldkabs,
                checksum_pos);
}
abft_status_t abft_schecksum_cols(abft_handle_t h, int64_t m, int64_t n, const float *A,
                                  int64_t lda, double *K, int64_t ldk, double *Kabs,
                                  int64_t ldkabs) {
    return tsmm(h, ABFT_PREC_S, 1, m, n, 2, A, lda, NULL, 0, K, ldk, NULL, 0, Kabs, ldkabs,
                checksum_pos);
}
abft_status_t abft_dtsmm(abft_handle_t h, abft_operation_t trans, int64_t m, int64_t n,
                         int64_t c, const double *A, int64_t lda, const double *X, int64_t ldx,
                         double *Y, int64_t ldy, const double *Xabs, int64_t ldxabs,
                         double *Yabs, int64_t ldyabs) {
    ABFT_ARG_IF(X == NULL && m > 0 && n > 0, 8);
    return tsmm(h, ABFT_PREC_D, trans, m, n, c, A, lda, X, ldx, Y, ldy, Xabs, ldxabs, Yabs,
                ldyabs, tsmm_pos);
}
abft_status_t abft_ststmm(abft_handle_t h, abft_operation_t trans, int64_t m, int64_t n,
                          int64_t c, const float *A, int64_t lda, const double *X, int64_t ldx,
                          double *Y, int64_t ldy, const double *Xabs, int64_t ldxabs,
                          double *Yabs, int64_t ldyabs) {
    ABFT_ARG_IF(X == NULL && m > 0 && n > 0, 8);
    return tsmm(h, ABFT_PREC_S, trans, m, n, c, A, lda, X, ldx, Y, ldy, Xabs, ldxabs, Yabs,
                ldyabs, tsmm_pos);
}

static abft_status_t dual(abft_handle_t h, abft_prec_t prec, int64_t m, int64_t n,
                          const void *M, int64_t ldm, int64_t c1, const double *X, int64_t ldx,
                          double *P, int64_t ldp, int64_t c2, const double *Z, int64_t ldz,
                          double *Q, int64_t ldq) {
    /* positions: m 2, n 3, M 4, ldm 5, c1 6, X 7, ldx 8, P 9, ldp 10, c2 11, Z 12, ldz 13,
     * Q 14, ldq 15 */
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(m < 0, 2);
    ABFT_ARG_IF(n < 0, 3);
    ABFT_ARG_IF(c1 < 1 || c1 > 16, 6);
    ABFT_ARG_IF(c2 < 1 || c2 > 16, 11);
    ABFT_TRY(check_out(m, n, M, ldm, 4, 5));
    ABFT_TRY(check_out(n, c1, X, ldx, 7, 8));
    ABFT_TRY(check_out(m, c1, P, ldp, 9, 10));
    ABFT_TRY(check_out(m, c2, Z, ldz, 12, 13));
    ABFT_TRY(check_out(n, c2, Q, ldq, 14, 15));
    ABFT_ARG_IF(n > 0 && X == NULL, 7);
    ABFT_ARG_IF(n > 0 && Q == NULL, 14);
    ABFT_ARG_IF(m > 0 && Z == NULL, 12);
    ABFT_ARG_IF(m > 0 && P == NULL, 9);
    const size_t es = prec == ABFT_PREC_D ? 8 : 4;
    span_t out[2] = {mat_span(P, m, c1, ldp, 8), mat_span(Q, n, c2, ldq, 8)};
    span_t in[3] = {mat_span(M, m, n, ldm, es), mat_span(X, n, c1, ldx, 8),
                    mat_span(Z, m, c2, ldz, 8)};
    static const int opos[2] = {9, 14};
    ABFT_TRY(check_overlaps(out, 2, in, 3, opos));
    if (m == 0 && n == 0) return ABFT_STATUS_SUCCESS;
    abft_dual_args_t a = {prec, m, n, M, ldm, c1, X, ldx, NULL, 0, P, ldp, NULL, 0,
                          c2, Z, ldz, NULL, 0, Q, ldq, NULL, 0, 0};
    return h->ops->dual(&h->kctx, &a);
}

abft_status_t abft_ddual(abft_handle_t h, int64_t m, int64_t n, const double *M, int64_t ldm,
                         int64_t c1, const double *X, int64_t ldx, double *P, int64_t ldp,
                         int64_t c2, const double *Z, int64_t ldz, double *Q, int64_t ldq) {
    return dual(h, ABFT_PREC_D, m, n, M, ldm, c1, X, ldx, P, ldp, c2, Z, ldz, Q, ldq);
}
abft_status_t abft_sdual(abft_handle_t h, int64_t m, int64_t n, const float *M, int64_t ldm,
                         int64_t c1, const double *X, int64_t ldx, double *P, int64_t ldp,
                         int64_t c2, const double *Z, int64_t ldz, double *Q, int64_t ldq) {
    return dual(h, ABFT_PREC_S, m, n, M, ldm, c1, X, ldx, P, ldp, c2, Z, ldz, Q, ldq);
}

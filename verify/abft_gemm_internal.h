/* abft verify layer: what the protected GEMM's files share (verify/abft_gemm.c: plans,
 * encoding, the GEMM, the entry points; verify/abft_gemm_tight.c: the tight bound mode's
 * passes; verify/abft_gemm_verify.c: verification, location and correction). Private. */
#ifndef ABFT_GEMM_INTERNAL_H
#define ABFT_GEMM_INTERNAL_H

#include <stdint.h>

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

/* ---- verify/abft_gemm.c --------------------------------------------------------------- */
size_t gemm_elem_size(abft_prec_t p);
/* The plan's arithmetic (its math mode, the handle's cuBLAS math) into p->arith. */
abft_status_t gemm_plan_arith(struct abft_gemm_plan *p);
/* Y = op(A)·X (c weight columns; X NULL: the implicit V = [1, j+1]) with Ya = |op(A)|·Xa,
 * through the backend's tsmm op (comp: compensated sums); gemm_tsmm: c = 2. */
abft_status_t gemm_tsmm_c(abft_handle_t h, int comp, abft_prec_t prec, int trans, int64_t rows,
                          int64_t cols, int64_t c, const void *A, int64_t lda, const double *X,
                          int64_t ldx, const double *Xa, int64_t ldxa, double *Y, int64_t ldy,
                          double *Ya, int64_t ldya);
abft_status_t gemm_tsmm(abft_handle_t h, int comp, abft_prec_t prec, int trans, int64_t rows,
                        int64_t cols, const void *A, int64_t lda, const double *X, int64_t ldx,
                        const double *Xa, int64_t ldxa, double *Y, int64_t ldy, double *Ya,
                        int64_t ldya);
/* R = M·V, Ra = |M|·V (m x 2), and with Rc the columns' from the same read. */
abft_status_t gemm_encode_matrix(abft_handle_t h, int comp, abft_prec_t prec, int64_t m, int64_t n,
                                 const void *M, int64_t ldm, double *R, double *Ra, int64_t ldr,
                                 double *Rc, double *Rca, int64_t ldrc);
/* The random checksum: its weights (n x 2, from the seed), the plan's host copy of them, and
 * whether its passes are fused with the rows' (c = 4). */
void gemm_rnd_weights(uint64_t seed, int64_t n, double *v);
const double *gemm_rnd_cols(const struct abft_gemm_plan *p);
int gemm_rnd_fused(const struct abft_gemm_plan *p);

/* ---- verify/abft_gemm_tight.c ---------------------------------------------------------- */
int gemm_tight_wanted(const struct abft_gemm_plan *p);
int gemm_tight_compensated(const struct abft_gemm_plan *p);
abft_status_t gemm_tight_check(const struct abft_gemm_plan *p);
/* At encoding: the full pass, or in two stages the filter only. */
abft_status_t gemm_tight_pass(struct abft_gemm_plan *p, const void *A, int64_t lda, const void *B,
                              int64_t ldb);
/* The second stage: the full pass after the GEMM, merged with the filter's parts. */
abft_status_t gemm_tight_second(struct abft_gemm_plan *p, const void *A, int64_t lda,
                                const void *B, int64_t ldb);

/* ---- verify/abft_gemm_verify.c --------------------------------------------------------- */
/* The check of C against the encoded checksums, then location and correction; held != NULL:
 * the GEMM went through the device-side gate (*held = 1: it held C back). */
abft_status_t gemm_verify(struct abft_gemm_plan *p, const void *A, int64_t lda, const void *B,
                          int64_t ldb, void *C, int64_t ldc, abft_report_t *rep, int *held);

#endif /* ABFT_GEMM_INTERNAL_H */

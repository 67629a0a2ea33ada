/* abft_last_invalid_argument: which argument a call rejected, as its 1-based position in the
 * function's parameter list (docs/api.md). Every case is a call that must fail with
 * INVALID_VALUE and name the argument at fault. Deterministic (no random data). */
#include <math.h>
#include <string.h>

#include "testutil.h"

#define EXPECT_ARG(call, pos)                                                                \
    do {                                                                                     \
        abft_set_bad_arg_sentinel();                                                         \
        abft_status_t st_ = (call);                                                          \
        int got_ = abft_last_invalid_argument();                                             \
        TU_CHECK(st_ == ABFT_STATUS_INVALID_VALUE && got_ == (pos),                          \
                 "%s: status %s, argument %d (want INVALID_VALUE, %d)", #call,               \
                 abft_status_name(st_), got_, (pos));                                        \
    } while (0)

/* A call that fails on argument 1 of abft_create: a known value before each case, so a case
 * that does not set the position shows. */
static void abft_set_bad_arg_sentinel(void) {
    (void)abft_create(NULL, ABFT_BACKEND_CPU);
    TU_CHECK(abft_last_invalid_argument() == 1, "sentinel");
}

int main(void) {
    printf("test_arg_position: deterministic\n");
    abft_handle_t h = NULL, other = NULL;
    TU_CHECK_STATUS(abft_create(&h, ABFT_BACKEND_CPU), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_create(&other, ABFT_BACKEND_CPU), ABFT_STATUS_SUCCESS);
    enum { N = 6 };
    double A[N * N], B[N * N], C[N * N], R[2 * N], X[2 * N];
    for (int i = 0; i < N * N; ++i) A[i] = B[i] = C[i] = 1.0 + (double)(i % 5);
    for (int i = 0; i < 2 * N; ++i) R[i] = X[i] = 0.0;
    abft_report_t rep;

    /* handle and options */
    EXPECT_ARG(abft_create(&h, (abft_backend_t)7), 2);
    EXPECT_ARG(abft_set_checksum_kind(h, (abft_checksum_kind_t)9), 2);
    EXPECT_ARG(abft_set_bound_mode(h, ABFT_BOUND_WORST_CASE, 0.0), 3);
    EXPECT_ARG(abft_set_recompute(h, 5), 2);
    EXPECT_ARG(abft_get_bound_mode(h, NULL, NULL), 2);

    /* protected GEMM: handle 1, transa 2, transb 3, m 4, n 5, k 6, alpha 7, A 8, lda 9, B 10,
     * ldb 11, beta 12, C 13, ldc 14, report 15 */
    EXPECT_ARG(abft_dgemm(h, (abft_operation_t)5, ABFT_OP_N, N, N, N, 1.0, A, N, B, N, 0.0, C,
                          N, &rep), 2);
    EXPECT_ARG(abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, -1, N, N, 1.0, A, N, B, N, 0.0, C, N, &rep),
               4);
    EXPECT_ARG(abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, N, N, N, NAN, A, N, B, N, 0.0, C, N, &rep), 7);
    EXPECT_ARG(abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, N, N, N, 1.0, A, N - 1, B, N, 0.0, C, N, &rep),
               9);
    EXPECT_ARG(abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, N, N, N, 1.0, A, N, NULL, N, 0.0, C, N, &rep),
               10);
    EXPECT_ARG(abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, N, N, N, 1.0, A, N, B, N, INFINITY, C, N,
                          &rep), 12);
    EXPECT_ARG(abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, N, N, N, 1.0, A, N, B, N, 0.0, C, N - 2, &rep),
               14);
    EXPECT_ARG(abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, N, N, N, 1.0, A, N, B, N, 0.0, A, N, &rep), 13);

    /* split form */
    abft_gemm_plan_t plan = NULL;
    EXPECT_ARG(abft_gemm_plan_create(h, 'x', ABFT_OP_N, ABFT_OP_N, N, N, N, 1.0, 0.0, &plan), 2);
    EXPECT_ARG(abft_gemm_plan_create(h, 'd', ABFT_OP_N, ABFT_OP_T, N, N, -3, 1.0, 0.0, &plan), 7);
    EXPECT_ARG(abft_gemm_plan_create(h, 'd', ABFT_OP_N, ABFT_OP_N, N, N, N, 1.0, 0.0, NULL), 10);
    TU_CHECK_STATUS(abft_gemm_plan_create(h, 'd', ABFT_OP_N, ABFT_OP_N, N, N, N, 1.0, 0.0, &plan),
                    ABFT_STATUS_SUCCESS);
    EXPECT_ARG(abft_gemm_plan_set_math(plan, ABFT_MATH_TF32), 2);
    EXPECT_ARG(abft_dgemm_encode(other, plan, A, N, B, N, NULL, N), 2);
    EXPECT_ARG(abft_dgemm_encode(h, plan, A, N, B, 2, NULL, N), 6);
    EXPECT_ARG(abft_dgemm_verify(h, plan, A, N, B, N, C, N, &rep), 2); /* not encoded */
    abft_gemm_plan_destroy(plan);

    /* encoders: dtsmm(handle 1, trans 2, m 3, n 4, c 5, A 6, lda 7, X 8, ldx 9, Y 10, ldy 11,
     * Xabs 12, ldxabs 13, Yabs 14, ldyabs 15); checksum_rows(handle 1, m 2, n 3, A 4, lda 5,
     * R 6, ldr 7, Rabs 8, ldrabs 9); ddual(handle 1, m 2, n 3, M 4, ldm 5, c1 6, X 7, ldx 8,
     * P 9, ldp 10, c2 11, Z 12, ldz 13, Q 14, ldq 15) */
    EXPECT_ARG(abft_dtsmm(h, ABFT_OP_N, N, N, 17, A, N, X, N, R, N, NULL, 0, NULL, 0), 5);
    EXPECT_ARG(abft_dtsmm(h, ABFT_OP_N, N, N, 2, A, N, X, N, NULL, N, NULL, 0, NULL, 0), 10);
    EXPECT_ARG(abft_dtsmm(h, ABFT_OP_N, N, N, 2, A, N, X, N, R, 1, NULL, 0, NULL, 0), 11);
    EXPECT_ARG(abft_dtsmm(h, ABFT_OP_N, N, N, 2, A, N, X, N, R, N, NULL, 0, R, N), 14);
    EXPECT_ARG(abft_dchecksum_rows(h, N, N, A, 3, R, N, NULL, 0), 5);
    EXPECT_ARG(abft_dchecksum_rows(h, N, N, A, N, NULL, N, NULL, 0), 6);
    EXPECT_ARG(abft_ddual(h, N, N, A, N, 0, X, N, R, N, 2, X, N, R, N), 6);
    EXPECT_ARG(abft_ddual(h, N, N, A, N, 2, X, N, R, N, 2, X, N, NULL, N), 14);

    /* LU: dgetrf(handle 1, m 2, n 3, A 4, lda 5, ipiv 6, info 7, report 8);
     * dgetrf_online(... ipiv 6, options 7, info 8, report 9); dgetrs(handle 1, trans 2, n 3,
     * nrhs 4, A 5, lda 6, ipiv 7, B 8, ldb 9, report 10) */
    int64_t ipiv[N], info = 0;
    EXPECT_ARG(abft_dgetrf(h, N, N, A, N - 1, ipiv, &info, &rep), 5);
    EXPECT_ARG(abft_dgetrf(h, N, N, A, N, NULL, &info, &rep), 6);
    abft_lu_options_t bad_opt = {-1, 1, 0, 0};
    EXPECT_ARG(abft_dgetrf_online(h, N, N, A, N, ipiv, &bad_opt, &info, &rep), 7);
    for (int i = 0; i < N; ++i) ipiv[i] = i + 1;
    EXPECT_ARG(abft_dgetrs(h, (abft_operation_t)9, N, 1, A, N, ipiv, B, N, &rep), 2);
    EXPECT_ARG(abft_dgetrs(h, ABFT_OP_N, N, 1, A, N, ipiv, B, N - 1, &rep), 9);
    ipiv[2] = 1; /* a pivot getrf never writes */
    EXPECT_ARG(abft_dgetrs(h, ABFT_OP_N, N, 1, A, N, ipiv, B, N, &rep), 7);
    EXPECT_ARG(abft_lu_plan_create(h, 'd', N, N, NULL), 5);

    abft_destroy(other);
    abft_destroy(h);
    return tu_finish("test_arg_position");
}

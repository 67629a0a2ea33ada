/* libabft_blas.so: the checksum passes of the SYRK and TRSM checks for one data type
 * (abft_blas_l3.c includes this file once per type: T the element type, P(name) the
 * type's prefix). Every sum is fp64 in any order (ACC double) or, for the recount of a
 * result whose sums overflowed fp64, long double (the _w functions). Weights: v_0(i) = 1,
 * v_1(i) = i + 1 (0-based i). Matrices column-major. No header guard: included twice. */

/* ---- SYRK: M = op(A), n x k; C = alpha·M·M^T + beta·C on the uplo triangle ------------- */

/* Y = M^T·v_q and Ya = |M|^T·v_q (k x 2 each), then S = M·Y, Sa = |M|·Ya (n x 2 each) and,
 * for trans = 'T', a1 = the rows' 1-norms of M (n). Returns 0 when A holds NaN or Inf. */
static int P(syrk_encode)(int trans, int64_t n, int64_t k, const T *A, int64_t lda, double *Y,
                          double *Ya, double *S, double *Sa, double *a1) {
    double nf = 0.0; /* x - x summed: NaN exactly when some x is NaN or Inf */
    for (int64_t i = 0; i < 2 * n; ++i) S[i] = Sa[i] = 0.0;
    if (!trans) { /* M = A (n x k): column l of A gives Y(l) */
        for (int64_t l = 0; l < k; ++l) {
            const T *a = A + (size_t)l * (size_t)lda;
            double y0 = 0, y1 = 0, z0 = 0, z1 = 0;
            for (int64_t i = 0; i < n; ++i) {
                const double x = a[i], ax = fabs(x), w = (double)(i + 1);
                nf += x - x;
                y0 += x, y1 += w * x, z0 += ax, z1 += w * ax;
            }
            Y[l] = y0, Y[k + l] = y1, Ya[l] = z0, Ya[k + l] = z1;
        }
        if (nf != 0.0) return 0;
        for (int64_t l = 0; l < k; ++l) {
            const T *a = A + (size_t)l * (size_t)lda;
            const double y0 = Y[l], y1 = Y[k + l], z0 = Ya[l], z1 = Ya[k + l];
            for (int64_t i = 0; i < n; ++i) {
                const double x = a[i], ax = fabs(x);
                S[i] += x * y0, S[n + i] += x * y1, Sa[i] += ax * z0, Sa[n + i] += ax * z1;
            }
        }
    } else { /* M = A^T, A k x n: column j of A is row j of M */
        for (int64_t l = 0; l < 2 * k; ++l) Y[l] = Ya[l] = 0.0;
        for (int64_t j = 0; j < n; ++j) {
            const T *a = A + (size_t)j * (size_t)lda;
            const double w = (double)(j + 1);
            for (int64_t l = 0; l < k; ++l) {
                const double x = a[l], ax = fabs(x);
                nf += x - x;
                Y[l] += x, Y[k + l] += w * x, Ya[l] += ax, Ya[k + l] += w * ax;
            }
        }
        if (nf != 0.0) return 0;
        for (int64_t j = 0; j < n; ++j) {
            const T *a = A + (size_t)j * (size_t)lda;
            double s0 = 0, s1 = 0, z0 = 0, z1 = 0, r = 0;
            for (int64_t l = 0; l < k; ++l) {
                const double x = a[l], ax = fabs(x);
                s0 += x * Y[l], s1 += x * Y[k + l], z0 += ax * Ya[l], z1 += ax * Ya[k + l];
                r += ax;
            }
            S[j] = s0, S[n + j] = s1, Sa[j] = z0, Sa[n + j] = z1, a1[j] = r;
        }
    }
    return 1;
}

/* The 1-norm of row i of M = A (n x k), trans = 'N' (trans = 'T' has them from the encode). */
static double P(row_norm)(int64_t k, const T *A, int64_t lda, int64_t i) {
    double r = 0.0;
    for (int64_t l = 0; l < k; ++l) r += fabs((double)A[i + (size_t)l * (size_t)lda]);
    return r;
}

/* The row sums of the symmetric n x n matrix the uplo triangle of C stands for:
 * R_q(i) = sum_j C(i, j)·v_q(j), Ra the same of |C| (n x 2 each). Returns 0 when the
 * triangle holds NaN or Inf. */
#define ABFT_BLAS_SYM_SUMS(NAME, ACC, ABS)                                                   \
    static int NAME(int upper, int64_t n, const T *C, int64_t ldc, ACC *R, ACC *Ra) {        \
        ACC nf = 0;                                                                          \
        for (int64_t i = 0; i < 2 * n; ++i) R[i] = Ra[i] = 0;                               \
        for (int64_t j = 0; j < n; ++j) {                                                    \
            const T *c = C + (size_t)j * (size_t)ldc;                                        \
            const int64_t lo = upper ? 0 : j + 1, hi = upper ? j : n; /* off the diagonal */ \
            const ACC wj = (ACC)(j + 1);                                                     \
            ACC r0 = 0, r1 = 0, z0 = 0, z1 = 0;                                              \
            for (int64_t i = lo; i < hi; ++i) {                                              \
                const ACC x = c[i], ax = ABS(x), w = (ACC)(i + 1);                           \
                nf += x - x;                                                                 \
                R[i] += x, R[n + i] += wj * x, Ra[i] += ax, Ra[n + i] += wj * ax;            \
                r0 += x, r1 += w * x, z0 += ax, z1 += w * ax;                                \
            }                                                                                \
            const ACC d = c[j], ad = ABS(d);                                                 \
            nf += d - d;                                                                     \
            R[j] += r0 + d, R[n + j] += r1 + wj * d;                                         \
            Ra[j] += z0 + ad, Ra[n + j] += z1 + wj * ad;                                     \
        }                                                                                    \
        return nf == 0;                                                                      \
    }
ABFT_BLAS_SYM_SUMS(P(sym_sums), double, fabs)
ABFT_BLAS_SYM_SUMS(P(sym_sums_w), long double, fabsl)
#undef ABFT_BLAS_SYM_SUMS

/* The uplo triangle of C (n x n) to and from a packed copy (its columns' parts in turn). */
static void P(tri_save)(int upper, int64_t n, const T *C, int64_t ldc, T *buf) {
    for (int64_t j = 0; j < n; ++j) {
        const int64_t lo = upper ? 0 : j, hi = upper ? j + 1 : n;
        memcpy(buf, C + (size_t)j * (size_t)ldc + lo, (size_t)(hi - lo) * sizeof(T));
        buf += hi - lo;
    }
}
static void P(tri_load)(int upper, int64_t n, T *C, int64_t ldc, const T *buf) {
    for (int64_t j = 0; j < n; ++j) {
        const int64_t lo = upper ? 0 : j, hi = upper ? j + 1 : n;
        memcpy(C + (size_t)j * (size_t)ldc + lo, buf, (size_t)(hi - lo) * sizeof(T));
        buf += hi - lo;
    }
}
/* C = beta·C on the triangle (beta = 0: C = 0, not read): the reference's alpha = 0 case */
static void P(tri_scale)(int upper, int64_t n, T beta, T *C, int64_t ldc) {
    for (int64_t j = 0; j < n; ++j) {
        T *c = C + (size_t)j * (size_t)ldc;
        const int64_t lo = upper ? 0 : j, hi = upper ? j + 1 : n;
        for (int64_t i = lo; i < hi; ++i) c[i] = beta == (T)0 ? (T)0 : beta * c[i];
    }
}

/* ---- TRSM: op(A)·X = B (left) or X·op(A) = B (right), A N x N triangular --------------- */

/* K = op(A)^T·v_q (left) or op(A)·v_q (right), Ka the same of |op(A)| (N x 2 each), the
 * non-unit diagonal's sums for the underflow terms (dsum, dmax). Returns 0 when the
 * triangle holds NaN or Inf or (non-unit) a zero on the diagonal: the solve divides by it. */
static int P(trsm_encode)(int left, int upper, int trans, int unit, int64_t N, const T *A,
                          int64_t lda, double *K, double *Ka, double *dg) {
    double nf = 0.0;
    /* column form: K(i) = column i of op-free A dotted with v (left, 'N'; right, 'T');
     * axpy form: K += column c of A times v(c) (left, 'T'; right, 'N') */
    const int dot = left ? !trans : trans;
    for (int64_t i = 0; i < 2 * N; ++i) K[i] = Ka[i] = 0.0;
    for (int64_t c = 0; c < N; ++c) {
        const T *a = A + (size_t)c * (size_t)lda;
        const int64_t lo = upper ? 0 : c + 1, hi = upper ? c : N; /* off the diagonal */
        const double d = unit ? 1.0 : (double)a[c], ad = fabs(d), wc = (double)(c + 1);
        if (!unit) {
            nf += d - d;
            if (d == 0.0) return 0;
            dg[c] = d;
        }
        if (dot) {
            double k0 = 0, k1 = 0, z0 = 0, z1 = 0;
            for (int64_t p = lo; p < hi; ++p) {
                const double x = a[p], ax = fabs(x), w = (double)(p + 1);
                nf += x - x;
                k0 += x, k1 += w * x, z0 += ax, z1 += w * ax;
            }
            K[c] = k0 + d, K[N + c] = k1 + wc * d, Ka[c] = z0 + ad, Ka[N + c] = z1 + wc * ad;
        } else {
            for (int64_t p = lo; p < hi; ++p) {
                const double x = a[p], ax = fabs(x);
                nf += x - x;
                K[p] += x, K[N + p] += wc * x, Ka[p] += ax, Ka[N + p] += wc * ax;
            }
            K[c] += d, K[N + c] += wc * d, Ka[c] += ad, Ka[N + c] += wc * ad;
        }
    }
    return nf == 0.0;
}

/* B = fl(alpha·B) in the data precision (scale: alpha != 1), as the reference applies
 * alpha before the solve, then the right-hand sides' sums: left, rhs j = column j:
 * Bs_q(j) = sum_i v_q(i)·B(i, j); right, rhs i = row i: Bs_q(i) = sum_c B(i, c)·v_q(c);
 * Bsa of |B| (nrhs x 2 each). Returns 0 when B (after the scaling) holds NaN or Inf. */
static int P(trsm_rhs)(int left, int64_t m, int64_t n, T *B, int64_t ldb, int scale, T alpha,
                       double *Bs, double *Bsa) {
    double nf = 0.0;
    const int64_t nrhs = left ? n : m;
    for (int64_t i = 0; i < 2 * nrhs; ++i) Bs[i] = Bsa[i] = 0.0;
    for (int64_t j = 0; j < n; ++j) {
        T *b = B + (size_t)j * (size_t)ldb;
        if (scale)
            for (int64_t i = 0; i < m; ++i) b[i] = alpha * b[i];
        if (left) {
            double s0 = 0, s1 = 0, z0 = 0, z1 = 0;
            for (int64_t i = 0; i < m; ++i) {
                const double x = b[i], ax = fabs(x), w = (double)(i + 1);
                nf += x - x;
                s0 += x, s1 += w * x, z0 += ax, z1 += w * ax;
            }
            Bs[j] = s0, Bs[n + j] = s1, Bsa[j] = z0, Bsa[n + j] = z1;
        } else {
            const double w = (double)(j + 1);
            for (int64_t i = 0; i < m; ++i) {
                const double x = b[i], ax = fabs(x);
                nf += x - x;
                Bs[i] += x, Bs[m + i] += w * x, Bsa[i] += ax, Bsa[m + i] += w * ax;
            }
        }
    }
    return nf == 0.0;
}

/* The solution's sums: left, Ys_q(j) = sum_i K_q(i)·X(i, j); right, Ys_q(i) =
 * sum_c X(i, c)·K_q(c); Ysa of |X| against Ka (nrhs x 2 each). Returns 0 when X holds NaN
 * or Inf. */
#define ABFT_BLAS_TRSM_SOL(NAME, ACC, ABS)                                                   \
    static int NAME(int left, int64_t m, int64_t n, const T *X, int64_t ldx, const double *K, \
                    const double *Ka, ACC *Ys, ACC *Ysa) {                                   \
        ACC nf = 0;                                                                          \
        const int64_t N = left ? m : n, nrhs = left ? n : m;                                 \
        for (int64_t i = 0; i < 2 * nrhs; ++i) Ys[i] = Ysa[i] = 0;                          \
        for (int64_t j = 0; j < n; ++j) {                                                    \
            const T *x = X + (size_t)j * (size_t)ldx;                                        \
            if (left) {                                                                      \
                ACC s0 = 0, s1 = 0, z0 = 0, z1 = 0;                                          \
                for (int64_t i = 0; i < m; ++i) {                                            \
                    const ACC v = x[i], av = ABS(v);                                         \
                    nf += v - v;                                                             \
                    s0 += (ACC)K[i] * v, s1 += (ACC)K[N + i] * v;                            \
                    z0 += (ACC)Ka[i] * av, z1 += (ACC)Ka[N + i] * av;                        \
                }                                                                            \
                Ys[j] = s0, Ys[nrhs + j] = s1, Ysa[j] = z0, Ysa[nrhs + j] = z1;              \
            } else {                                                                         \
                const ACC k0 = K[j], k1 = K[N + j], z0 = Ka[j], z1 = Ka[N + j];              \
                for (int64_t i = 0; i < m; ++i) {                                            \
                    const ACC v = x[i], av = ABS(v);                                         \
                    nf += v - v;                                                             \
                    Ys[i] += v * k0, Ys[nrhs + i] += v * k1;                                 \
                    Ysa[i] += av * z0, Ysa[nrhs + i] += av * z1;                             \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        return nf == 0;                                                                      \
    }
ABFT_BLAS_TRSM_SOL(P(trsm_sol), double, fabs)
ABFT_BLAS_TRSM_SOL(P(trsm_sol_w), long double, fabsl)
#undef ABFT_BLAS_TRSM_SOL

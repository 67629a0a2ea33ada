/* A distributed GEMM (PxGEMM) or linear solve (PxGESV: PxGETRF and PxGETRS) of ScaLAPACK on
 * a P x Q grid of MPI ranks, timed, for the overhead of libabft_blas.so preloaded in every
 * rank against the plain run (tests/scalapack/bench_scalapack.sh, docs/scalapack.md). The
 * Debian testers hold at most 2 MB of matrices per rank, too little for n = 2048.
 *
 *   mpicc -O2 pdbench.c -o pdbench -lscalapack-openmpi          (-DPDBENCH_FLOAT: single)
 *   mpirun -np 4 pdbench --op gemm|gesv --n 2048 --nb 64 --reps 3
 *
 * Every element is a function of its global position (the same matrices on any grid). Each
 * repetition is timed between barriers (MPI_Wtime on rank 0) after an untimed warm-up; the
 * inputs are set again before each one, untimed. The result is checked:
 *   gemm: C = A*B (beta = 0); C*e against A*(B*e) (e = ones, PxGEMV), relative to
 *         |A|*(|B|*e), must be below 16 * n * eps;
 *   gesv: ||b - A*x||_inf / (||A||_inf * ||x||_inf * n * eps) below 16 (the testers' form).
 * Output: one line "pdbench: op=... times=t1,t2,... median=... gflops=... check=... ok"
 * (rank 0); exit status 1 when the check fails. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PDBENCH_FLOAT
typedef float real;
#define PX(name) ps##name##_
#define PREC "s"
#define EPS 5.9604644775390625e-08
#define MPI_REAL_T MPI_FLOAT
#else
typedef double real;
#define PX(name) pd##name##_
#define PREC "d"
#define EPS 1.1102230246251565e-16
#define MPI_REAL_T MPI_DOUBLE
#endif

void Cblacs_pinfo(int *me, int *np);
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int p, int q);
void Cblacs_gridinfo(int ctxt, int *p, int *q, int *myr, int *myc);
void Cblacs_gridexit(int ctxt);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ctxt, const int *lld, int *info);
void PX(gemm)(const char *ta, const char *tb, const int *m, const int *n, const int *k,
              const real *alpha, const real *a, const int *ia, const int *ja, const int *desca,
              const real *b, const int *ib, const int *jb, const int *descb, const real *beta,
              real *c, const int *ic, const int *jc, const int *descc);
void PX(gemv)(const char *t, const int *m, const int *n, const real *alpha, const real *a,
              const int *ia, const int *ja, const int *desca, const real *x, const int *ix,
              const int *jx, const int *descx, const int *incx, const real *beta, real *y,
              const int *iy, const int *jy, const int *descy, const int *incy);
void PX(gesv)(const int *n, const int *nrhs, real *a, const int *ia, const int *ja,
              const int *desca, int *ipiv, real *b, const int *ib, const int *jb,
              const int *descb, int *info);

static const int i1 = 1, i0 = 0;

/* element (i, j) of matrix `which`, in [-1, 1): a hash of the global position */
static real elem(int which, int64_t i, int64_t j) {
    uint64_t x = (uint64_t)which * 0x9E3779B97F4A7C15ull ^ (uint64_t)i * 0xBF58476D1CE4E5B9ull ^
                 (uint64_t)j * 0x94D049BB133111EBull;
    x ^= x >> 31; x *= 0xD6E8CEB22FD7A5C5ull; x ^= x >> 29;
    return (real)((double)(x >> 11) / 4503599627370496.0 - 1.0);
}

/* the local part of an m x n matrix (block-cyclic, blocks nb x nb, source 0,0) */
static void fill(real *a, int which, int m, int n, int nb, int myr, int myc, int p, int q, int lld,
                 int absval) {
    int mloc = numroc_(&m, &nb, &myr, &i0, &p), nloc = numroc_(&n, &nb, &myc, &i0, &q);
    for (int jl = 0; jl < nloc; ++jl) {
        int64_t j = (int64_t)((jl / nb) * q + myc) * nb + jl % nb;
        for (int il = 0; il < mloc; ++il) {
            int64_t i = (int64_t)((il / nb) * p + myr) * nb + il % nb;
            real v = elem(which, i, j);
            a[(size_t)jl * (size_t)lld + (size_t)il] = absval ? (real)fabs((double)v) : v;
        }
    }
}

static int cmp(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *op = "gemm";
    int n = 2048, nb = 64, reps = 3, p = 0, q = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--op")) op = argv[i + 1];
        else if (!strcmp(argv[i], "--n")) n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--nb")) nb = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--p")) p = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--q")) q = atoi(argv[i + 1]);
    }
    int gemm = !strcmp(op, "gemm");
    if ((!gemm && strcmp(op, "gesv")) || n < 1 || nb < 1 || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: pdbench --op gemm|gesv --n N --nb NB --reps R [--p P --q Q]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int me, np;
    Cblacs_pinfo(&me, &np);
    if (p <= 0 || q <= 0) { /* the squarest grid p <= q with p * q = np */
        for (p = (int)sqrt((double)np); np % p; --p) {}
        q = np / p;
    }
    int ctxt, myr, myc, pp, qq;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "Row", p, q);
    Cblacs_gridinfo(ctxt, &pp, &qq, &myr, &myc);
    if (myr < 0) { MPI_Finalize(); return 0; } /* not in the grid */

    int mloc = numroc_(&n, &nb, &myr, &i0, &p), nloc = numroc_(&n, &nb, &myc, &i0, &q);
    int one_loc = numroc_(&i1, &nb, &myc, &i0, &q);
    int lld = mloc > 1 ? mloc : 1, info;
    int desc[9], descv[9];
    descinit_(desc, &n, &n, &nb, &nb, &i0, &i0, &ctxt, &lld, &info);
    descinit_(descv, &n, &i1, &nb, &nb, &i0, &i0, &ctxt, &lld, &info);
    size_t sz = (size_t)lld * (size_t)(nloc > 1 ? nloc : 1);
    size_t szv = (size_t)lld * (size_t)(one_loc > 1 ? one_loc : 1);
    real *A = malloc(sz * sizeof(real)), *B = malloc(sz * sizeof(real)),
         *C = malloc(sz * sizeof(real));
    real *x = malloc(szv * sizeof(real)), *y = malloc(szv * sizeof(real)),
         *z = malloc(szv * sizeof(real)), *w = malloc(szv * sizeof(real));
    int *ipiv = malloc((size_t)(mloc + nb) * sizeof(int));
    const real r1 = 1, r0 = 0, rm1 = -1;
    double *t = malloc(sizeof(double) * (size_t)reps);

    for (int r = -1; r < reps; ++r) {
        fill(A, 1, n, n, nb, myr, myc, p, q, lld, 0);
        if (gemm) fill(B, 2, n, n, nb, myr, myc, p, q, lld, 0);
        else fill(y, 3, n, 1, nb, myr, myc, p, q, lld, 0); /* b, overwritten by x */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (gemm) PX(gemm)("N", "N", &n, &n, &n, &r1, A, &i1, &i1, desc, B, &i1, &i1, desc, &r0,
                           C, &i1, &i1, desc);
        else PX(gesv)(&n, &i1, A, &i1, &i1, desc, ipiv, y, &i1, &i1, descv, &info);
        MPI_Barrier(MPI_COMM_WORLD);
        if (r >= 0) t[r] = MPI_Wtime() - t0;
        if (!gemm && info != 0) {
            if (me == 0) fprintf(stderr, "pdbench: p%sgesv info = %d\n", PREC, info);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }

    /* the check */
    double ratio = 0, limit;
    if (gemm) {
        /* w = C*e, z = A*(B*e), x = |A|*(|B|*e) */
        for (size_t i = 0; i < szv; ++i) x[i] = 1;
        PX(gemv)("N", &n, &n, &r1, C, &i1, &i1, desc, x, &i1, &i1, descv, &i1, &r0, w, &i1, &i1,
                 descv, &i1);
        PX(gemv)("N", &n, &n, &r1, B, &i1, &i1, desc, x, &i1, &i1, descv, &i1, &r0, y, &i1, &i1,
                 descv, &i1);
        PX(gemv)("N", &n, &n, &r1, A, &i1, &i1, desc, y, &i1, &i1, descv, &i1, &r0, z, &i1, &i1,
                 descv, &i1);
        fill(A, 1, n, n, nb, myr, myc, p, q, lld, 1);
        fill(B, 2, n, n, nb, myr, myc, p, q, lld, 1);
        PX(gemv)("N", &n, &n, &r1, B, &i1, &i1, desc, x, &i1, &i1, descv, &i1, &r0, y, &i1, &i1,
                 descv, &i1);
        PX(gemv)("N", &n, &n, &r1, A, &i1, &i1, desc, y, &i1, &i1, descv, &i1, &r0, x, &i1, &i1,
                 descv, &i1);
        double worst = 0;
        if (myc == 0)
            for (int i = 0; i < mloc; ++i) {
                double d = fabs((double)w[i] - (double)z[i]) / ((double)x[i] > 0 ? (double)x[i] : 1);
                if (d > worst) worst = d;
            }
        MPI_Allreduce(&worst, &ratio, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        ratio /= (double)n * EPS;
        limit = 16;
    } else {
        /* r = b - A*x, with A and b made again */
        fill(A, 1, n, n, nb, myr, myc, p, q, lld, 0);
        fill(z, 3, n, 1, nb, myr, myc, p, q, lld, 0);
        PX(gemv)("N", &n, &n, &rm1, A, &i1, &i1, desc, y, &i1, &i1, descv, &i1, &r1, z, &i1, &i1,
                 descv, &i1);
        double rn = 0, xn = 0, an = 0;
        if (myc == 0)
            for (int i = 0; i < mloc; ++i) {
                if (fabs((double)z[i]) > rn) rn = fabs((double)z[i]);
                if (fabs((double)y[i]) > xn) xn = fabs((double)y[i]);
            }
        /* ||A||_inf: the row sums, reduced over the grid's rows */
        double *rs = calloc((size_t)(mloc > 0 ? mloc : 1), sizeof(double));
        for (int jl = 0; jl < nloc; ++jl)
            for (int il = 0; il < mloc; ++il) rs[il] += fabs((double)A[(size_t)jl * lld + il]);
        double *rsum = calloc((size_t)(mloc > 0 ? mloc : 1), sizeof(double));
        MPI_Comm rowcomm;
        MPI_Comm_split(MPI_COMM_WORLD, myr, myc, &rowcomm);
        MPI_Allreduce(rs, rsum, mloc > 0 ? mloc : 1, MPI_DOUBLE, MPI_SUM, rowcomm);
        for (int il = 0; il < mloc; ++il) if (rsum[il] > an) an = rsum[il];
        double loc[3] = {rn, xn, an}, glob[3];
        MPI_Allreduce(loc, glob, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        ratio = glob[0] / (glob[2] * glob[1] * (double)n * EPS);
        limit = 16;
        MPI_Comm_free(&rowcomm);
        free(rs); free(rsum);
    }

    if (me == 0) {
        double s[100];
        memcpy(s, t, sizeof(double) * (size_t)reps);
        qsort(s, (size_t)reps, sizeof(double), cmp);
        double med = reps % 2 ? s[reps / 2] : 0.5 * (s[reps / 2 - 1] + s[reps / 2]);
        double flops = gemm ? 2.0 * n * (double)n * n : 2.0 / 3.0 * n * (double)n * n + 2.0 * n * (double)n;
        printf("pdbench: op=p%s%s n=%d nb=%d grid=%dx%d reps=%d times=", PREC, op, n, nb, p, q, reps);
        for (int r = 0; r < reps; ++r) printf("%s%.4f", r ? "," : "", t[r]);
        printf(" median=%.4f gflops=%.2f check=%.3g %s\n", med, flops / med * 1e-9, ratio,
               ratio < limit ? "ok" : "FAILED");
        fflush(stdout);
    }
    int ok = ratio < limit;
    free(A); free(B); free(C); free(x); free(y); free(z); free(w); free(ipiv); free(t);
    Cblacs_gridexit(ctxt);
    MPI_Finalize();
    return ok ? 0 : 1;
}

/* Checksums kept inside an iterative solver: the column checksums K = A^T·V (and
 * Kabs = |A|^T·V) are encoded once; each matrix-vector product y = A·x is then checked for
 * the price of two dot products, V^T·y against K^T·x:
 *
 *   |fl(V^T·y) - fl(K^T·x)| <= 3·gamma_n·Kabs^T·|x| + gamma_n·V^T·|y|
 *
 * (the product y, the encoding of K and the dot with K each contribute gamma_n·Kabs^T·|x|,
 * the dot V^T·y its own gamma_n·V^T·|y|; second-order terms are covered by a 1 % slack).
 *
 * The loop is a Jacobi iteration for a diagonally dominant A; at iteration 7 one element of
 * y is corrupted (as a soft error in the product would) and the check catches it, and the
 * product is recomputed. The checksums are encoded on the GPU when one is present (A copied
 * to device memory), else on the CPU; the loop itself runs on the host.
 *
 * Exit status 0 when exactly the one injected error was caught and the iteration
 * converged. */
#include <abft/abft.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#if ABFT_HAVE_CUDA_BACKEND
#include <cuda_runtime.h>
#endif

/* K = A^T·V and Ka = |A|^T·V (n x 2 each, host memory) on the handle's backend. */
static abft_status_t encode_cols(abft_handle_t h, int64_t n, const double *A, double *K,
                                 double *Ka) {
    abft_backend_t backend;
    abft_status_t st = abft_get_backend(h, &backend);
    if (st != ABFT_STATUS_SUCCESS) return st;
#if ABFT_HAVE_CUDA_BACKEND
    if (backend == ABFT_BACKEND_CUDA) {
        size_t ab = sizeof(double) * (size_t)(n * n), kb = sizeof(double) * (size_t)(2 * n);
        double *dA = NULL, *dK = NULL, *dKa = NULL;
        st = ABFT_STATUS_CUDA_ERROR;
        if (cudaMalloc((void **)&dA, ab) == cudaSuccess &&
            cudaMalloc((void **)&dK, kb) == cudaSuccess &&
            cudaMalloc((void **)&dKa, kb) == cudaSuccess &&
            cudaMemcpy(dA, A, ab, cudaMemcpyHostToDevice) == cudaSuccess) {
            st = abft_dchecksum_cols(h, n, n, dA, n, dK, n, dKa, n);
            /* the encoding is queued on the handle's stream: the copies wait for it */
            if (st == ABFT_STATUS_SUCCESS &&
                (cudaMemcpy(K, dK, kb, cudaMemcpyDeviceToHost) != cudaSuccess ||
                 cudaMemcpy(Ka, dKa, kb, cudaMemcpyDeviceToHost) != cudaSuccess))
                st = ABFT_STATUS_CUDA_ERROR;
        }
        cudaFree(dA), cudaFree(dK), cudaFree(dKa);
        return st;
    }
#endif
    return abft_dchecksum_cols(h, n, n, A, n, K, n, Ka, n);
}

static double gamma_n(double n) { return n * 0x1p-53 / (1.0 - n * 0x1p-53); }

/* y = A·x, the solver's own product (here a plain loop) */
static void matvec(int64_t n, const double *A, const double *x, double *y) {
    for (int64_t i = 0; i < n; ++i) y[i] = 0.0;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i) y[i] += A[i + j * n] * x[j];
}

/* 1 when y passes the checksum test */
static int check(int64_t n, const double *K, const double *Ka, const double *x, const double *y) {
    for (int q = 0; q < 2; ++q) {
        double vy = 0, kx = 0, b = 0, vya = 0;
        for (int64_t i = 0; i < n; ++i) {
            double w = q == 0 ? 1.0 : (double)(i + 1);
            vy += w * y[i];
            vya += w * fabs(y[i]);
            kx += K[i + q * n] * x[i];
            b += Ka[i + q * n] * fabs(x[i]);
        }
        double tau = 1.01 * gamma_n((double)n) * (3.0 * b + vya);
        if (!(fabs(vy - kx) <= tau)) return 0;
    }
    return 1;
}

int main(void) {
    const int64_t n = 400;
    abft_handle_t h;
    abft_backend_t backend;
    if (abft_create(&h, ABFT_BACKEND_AUTO) != ABFT_STATUS_SUCCESS) return 1;
    abft_get_backend(h, &backend);
    printf("checked Jacobi iteration, n = %lld, checksums encoded on backend %s\n", (long long)n,
           abft_backend_name(backend));
    double *A = malloc(sizeof(double) * n * n), *K = malloc(sizeof(double) * n * 2),
           *Ka = malloc(sizeof(double) * n * 2), *x = calloc(n, sizeof(double)),
           *y = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n);
    srand(3);
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i) A[i + j * n] = (rand() / (double)RAND_MAX - 0.5) + (i == j ? n : 0.0);
    for (int64_t i = 0; i < n; ++i) b[i] = 1.0;
    /* once: K = A^T·V, Ka = |A|^T·V */
    abft_status_t st = encode_cols(h, n, A, K, Ka);
    if (st != ABFT_STATUS_SUCCESS) {
        printf("encode: %s\n", abft_status_name(st));
        return 1;
    }
    int detected = 0;
    double res = 0;
    for (int it = 0; it < 20; ++it) {
        matvec(n, A, x, y);
        if (it == 7) y[123] += 1e-3; /* the soft error */
        if (!check(n, K, Ka, x, y)) {
            ++detected;
            printf("iteration %d: checksum mismatch in A·x, recomputing the product\n", it);
            matvec(n, A, x, y);
            if (!check(n, K, Ka, x, y)) {
                printf("still failing: stop\n");
                return 1;
            }
        }
        /* Jacobi: x += D^-1 (b - A·x) */
        res = 0;
        for (int64_t i = 0; i < n; ++i) {
            double r = b[i] - y[i];
            res = fmax(res, fabs(r));
            x[i] += r / A[i + i * n];
        }
        if (it % 5 == 4 || it == 19) printf("iteration %2d: residual %.3e\n", it, res);
    }
    int ok = detected == 1 && res < 1e-10;
    printf("faults detected and recomputed: %d; final residual %.3e: %s\n", detected, res,
           ok ? "converged, the one fault caught" : "WRONG");
    free(A);
    free(K);
    free(Ka);
    free(x);
    free(y);
    free(b);
    abft_destroy(h);
    return ok ? 0 : 1;
}

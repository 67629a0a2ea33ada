/* abft CUDA backend: device and context management, memory, the cuBLAS GEMM, the unit
 * roundoff of cuBLAS's current math mode, and the tuning table lookup. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <math.h>
#include <stdlib.h>

#include "abft_cuda_blas.cuh"
#include "abft_cuda_common.cuh"
#include "abft_cuda_tuning.h"

/* ---- device and context ------------------------------------------------------------- */

extern "C" int abft_cuda_device_present(void) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n > 0 ? 1 : 0;
}

extern "C" abft_status_t abft_cuda_context_create(abft_kctx_t *ctx) {
    int dev = 0;
    ABFT_CUDA_TRY(cudaGetDevice(&dev));
    ctx->device = dev;
    cublasHandle_t blas = NULL;
    if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
        (void)cudaGetLastError();
        return ABFT_STATUS_CUBLAS_ERROR;
    }
    cusolverDnHandle_t solver = NULL;
    if (cusolverDnCreate(&solver) != CUSOLVER_STATUS_SUCCESS) {
        cublasDestroy(blas);
        (void)cudaGetLastError();
        return ABFT_STATUS_CUSOLVER_ERROR;
    }
    ctx->blas = blas;
    ctx->solver = solver;
    abft_status_t st = abft_cuda_gate_create(ctx);
    if (st != ABFT_STATUS_SUCCESS) {
        cusolverDnDestroy(solver);
        cublasDestroy(blas);
        ctx->blas = ctx->solver = NULL;
        return st;
    }
    return ABFT_STATUS_SUCCESS;
}

extern "C" abft_status_t abft_cuda_context_destroy(abft_kctx_t *ctx, int own_blas,
                                                   int own_solver) {
    abft_status_t st = abft_cuda_gate_destroy(ctx);
    if (own_solver && ctx->solver != NULL) {
        if (cusolverDnDestroy((cusolverDnHandle_t)ctx->solver) != CUSOLVER_STATUS_SUCCESS &&
            st == ABFT_STATUS_SUCCESS)
            st = ABFT_STATUS_CUSOLVER_ERROR;
    }
    if (own_blas && ctx->blas != NULL) {
        if (cublasDestroy((cublasHandle_t)ctx->blas) != CUBLAS_STATUS_SUCCESS &&
            st == ABFT_STATUS_SUCCESS)
            st = ABFT_STATUS_CUBLAS_ERROR;
    }
    if (own_solver) ctx->solver = NULL;
    if (own_blas) ctx->blas = NULL;
    if (ctx->scratch != NULL && ctx->scratch->host != NULL) {
        if (cudaFreeHost(ctx->scratch->host) != cudaSuccess && st == ABFT_STATUS_SUCCESS)
            st = ABFT_STATUS_CUDA_ERROR;
        (void)cudaGetLastError();
        ctx->scratch->host = NULL;
        ctx->scratch->host_bytes = 0;
    }
    return st;
}

/* ---- memory ----------------------------------------------------------------------------- */

extern "C" abft_status_t abft_cuda_alloc(const abft_kctx_t *ctx, size_t bytes, void **ptr) {
    (void)ctx;
    void *p = NULL;
    /* A zero-byte request still returns a valid, distinct pointer (like the CPU backend). */
    ABFT_CUDA_TRY(cudaMalloc(&p, bytes > 0 ? bytes : 256));
    *ptr = p;
    return ABFT_STATUS_SUCCESS;
}

extern "C" abft_status_t abft_cuda_free(const abft_kctx_t *ctx, void *ptr) {
    (void)ctx;
    if (ptr == NULL) return ABFT_STATUS_SUCCESS;
    ABFT_CUDA_TRY(cudaFree(ptr));
    return ABFT_STATUS_SUCCESS;
}

extern "C" abft_status_t abft_cuda_copy(const abft_kctx_t *ctx, const abft_copy_args_t *a) {
    if (a->rows <= 0 || a->cols <= 0) return ABFT_STATUS_SUCCESS;
    cudaStream_t s = abft_cuda_stream(ctx);
    size_t width = (size_t)a->rows * a->elem;
    size_t hp = (size_t)a->ldh * a->elem, dp = (size_t)a->ldd * a->elem;
    cudaError_t e;
    if (a->dir == 2) {
        ABFT_CUDA_TRY(cudaMemcpy2DAsync(a->host, hp, a->dev, dp, width, (size_t)a->cols,
                                        cudaMemcpyDeviceToDevice, s));
        return ABFT_STATUS_SUCCESS;
    }
    if (a->dir == 0)
        e = cudaMemcpy2DAsync(a->host, hp, a->dev, dp, width, (size_t)a->cols,
                              cudaMemcpyDeviceToHost, s);
    else
        e = cudaMemcpy2DAsync(a->dev, dp, a->host, hp, width, (size_t)a->cols,
                              cudaMemcpyHostToDevice, s);
    ABFT_CUDA_TRY(e);
    ABFT_CUDA_TRY(cudaStreamSynchronize(s));
    return ABFT_STATUS_SUCCESS;
}

extern "C" abft_status_t abft_cuda_sync(const abft_kctx_t *ctx) {
    ABFT_CUDA_TRY(cudaStreamSynchronize(abft_cuda_stream(ctx)));
    return ABFT_STATUS_SUCCESS;
}

extern "C" abft_status_t abft_cuda_order(const abft_kctx_t *waiter, const abft_kctx_t *signaler) {
    cudaStream_t w = abft_cuda_stream(waiter), s = abft_cuda_stream(signaler);
    if (w == s) return ABFT_STATUS_SUCCESS;
    cudaEvent_t e = nullptr;
    ABFT_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    cudaError_t r = cudaEventRecord(e, s);
    if (r == cudaSuccess) r = cudaStreamWaitEvent(w, e, 0);
    /* the wait keeps what it needs: the event can go now */
    cudaError_t d = cudaEventDestroy(e);
    return abft_cuda_status(r != cudaSuccess ? r : d);
}

extern "C" abft_status_t abft_cuda_aux_create(abft_kctx_t *aux) {
    int least = 0, greatest = 0;
    ABFT_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t s = nullptr;
    ABFT_CUDA_TRY(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
    abft_kctx_t c = *aux;
    c.stream = s;
    abft_status_t st = abft_cuda_context_create(&c);
    if (st != ABFT_STATUS_SUCCESS) {
        (void)cudaStreamDestroy(s); /* cleanup: the first failure is the one reported */
        return st;
    }
    *aux = c;
    return ABFT_STATUS_SUCCESS;
}

extern "C" abft_status_t abft_cuda_aux_destroy(abft_kctx_t *aux) {
    abft_status_t st = abft_cuda_context_destroy(aux, 1, 1);
    if (aux->stream != nullptr) {
        abft_status_t r = abft_cuda_status(cudaStreamDestroy(abft_cuda_stream(aux)));
        if (st == ABFT_STATUS_SUCCESS) st = r;
        aux->stream = nullptr;
    }
    return st;
}

abft_status_t abft_cuda_scratch_counted(const abft_kctx_t *ctx, size_t ncount, size_t bytes,
                                        unsigned **count, void **ptr) {
    abft_buffer_t *b = ctx->scratch;
    if (b == NULL) return ABFT_STATUS_INTERNAL_ERROR;
    /* the counter region only grows (4096 counters at least, 256-byte aligned) */
    size_t z = 0;
    if (ncount > 0) {
        z = (ncount < 4096 ? 4096 : ncount) * sizeof(unsigned);
        z = (z + 255) / 256 * 256;
    }
    if (z < b->zeroed) z = b->zeroed;
    if (b->ptr == NULL || z > b->zeroed || b->bytes < z + bytes) {
        /* Grow by at least 1/4 so a sequence of slightly larger calls does not reallocate
         * each time. */
        size_t want = z + bytes + bytes / 4;
        void *p = NULL;
        ABFT_CUDA_TRY(cudaMalloc(&p, want > 0 ? want : 256));
        cudaError_t e = z > 0 ? cudaMemsetAsync(p, 0, z, abft_cuda_stream(ctx)) : cudaSuccess;
        if (e == cudaSuccess && b->ptr != NULL) {
            e = cudaStreamSynchronize(abft_cuda_stream(ctx));
            if (e == cudaSuccess) e = cudaFree(b->ptr);
        }
        if (e != cudaSuccess) {
            cudaFree(p);
            return abft_cuda_status(e);
        }
        b->ptr = p;
        b->bytes = want;
        b->zeroed = z;
    }
    if (count != NULL) *count = (unsigned *)b->ptr;
    *ptr = (char *)b->ptr + b->zeroed;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_cuda_host_alloc(size_t bytes, void **ptr) {
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
        (void)cudaGetLastError(); /* a device that cannot map host memory: plain pinned */
        ABFT_CUDA_TRY(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
    }
    *ptr = p;
    return ABFT_STATUS_SUCCESS;
}

void *abft_cuda_host_device_ptr(void *host) {
    void *dev = NULL;
    if (cudaHostGetDevicePointer(&dev, host, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        dev = NULL;
    }
    return dev;
}

abft_status_t abft_cuda_pinned(const abft_kctx_t *ctx, size_t bytes, void **ptr, void **dev) {
    abft_buffer_t *b = ctx->scratch;
    if (b == NULL) return ABFT_STATUS_INTERNAL_ERROR;
    if (b->host == NULL || b->host_bytes < bytes) {
        /* the old block is only ever read by the host after a synchronization: free now */
        size_t want = bytes < 4096 ? 4096 : bytes + bytes / 4;
        void *p = NULL;
        ABFT_TRY_STATUS(abft_cuda_host_alloc(want, &p));
        if (b->host != NULL) {
            cudaError_t e = cudaFreeHost(b->host);
            if (e != cudaSuccess) {
                cudaFreeHost(p);
                return abft_cuda_status(e);
            }
        }
        b->host = p;
        b->host_bytes = want;
    }
    *ptr = b->host;
    if (dev != NULL) *dev = abft_cuda_host_device_ptr(b->host);
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_cuda_scratch(const abft_kctx_t *ctx, size_t bytes, void **ptr) {
    return abft_cuda_scratch_counted(ctx, 0, bytes, NULL, ptr);
}

/* ---- GEMM through cuBLAS -------------------------------------------------------------- */

extern "C" abft_status_t abft_cuda_gemm(const abft_kctx_t *ctx, const abft_gemm_args_t *a) {
    if (a->m == 0 || a->n == 0) return ABFT_STATUS_SUCCESS;
    cublasHandle_t h = (cublasHandle_t)ctx->blas;
    if (h == NULL) return ABFT_STATUS_NOT_INITIALIZED;
    abft_blas_saved sv;
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (!abft_blas_enter(h, ctx, &sv, &s)) return ABFT_STATUS_CUBLAS_ERROR;
    if (s == CUBLAS_STATUS_SUCCESS) s = abft_blas_gemm(h, a);
    if (abft_blas_leave(h, &sv, s) != CUBLAS_STATUS_SUCCESS) {
        (void)cudaGetLastError();
        return ABFT_STATUS_CUBLAS_ERROR;
    }
    return ABFT_STATUS_SUCCESS;
}

/* Which arithmetic cuBLAS may use for a GEMM (and the trsm and getrf built on it) of data
 * precision prec under the handle's math mode; the bound module (verify/abft_bound.c)
 * models each. Conservative by design: when a mode allows a faster, less precise path we
 * assume it is taken, since the bound must hold whatever cuBLAS picks.
 *   fp32: default or pedantic math: IEEE; CUBLAS_TF32_TENSOR_OP_MATH or the deprecated
 *         CUBLAS_TENSOR_OP_MATH (fp32 maps to half or TF32 inputs, both with 10 fraction
 *         bits): TF32; CUBLAS_FP32_EMULATED_BF16X9_MATH: BF16X9.
 *   fp64: default or pedantic math: IEEE; CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH: the error of
 *         a fixed-point product is relative to the maxima of a row of A and a column of B,
 *         not to |A||B| elementwise, which no elementwise bound covers: NOT_SUPPORTED.
 * A mode that cannot be read is CUBLAS_ERROR. */
extern "C" abft_status_t abft_cuda_blas_math(void *blas, abft_prec_t prec, abft_math_t *math) {
    cublasHandle_t h = (cublasHandle_t)blas;
    cublasMath_t mode = CUBLAS_DEFAULT_MATH;
    if (h == NULL) return ABFT_STATUS_NOT_INITIALIZED;
    if (cublasGetMathMode(h, &mode) != CUBLAS_STATUS_SUCCESS) return ABFT_STATUS_CUBLAS_ERROR;
    int m = (int)mode & ~(int)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
    *math = ABFT_MATH_IEEE;
    if (prec == ABFT_PREC_S) {
        int base = m & 7;
        if (base == CUBLAS_TF32_TENSOR_OP_MATH || base == CUBLAS_TENSOR_OP_MATH)
            *math = ABFT_MATH_TF32;
        else if (base == CUBLAS_FP32_EMULATED_BF16X9_MATH)
            *math = ABFT_MATH_BF16X9;
        return ABFT_STATUS_SUCCESS;
    }
    if ((m & CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH) != 0) return ABFT_STATUS_NOT_SUPPORTED;
    return ABFT_STATUS_SUCCESS;
}

/* ---- tuning table ------------------------------------------------------------------------ */

/* H100 80GB HBM3 (132 SMs): per size class, the shape that read fastest (as a fraction of
 * a streaming read of the same bytes) in bench_encode's tile sweeps at m = k = 2048 (small),
 * 8192 (medium), 16384 and 30720 (large); a change was taken only where it beat the sweep's
 * run-to-run spread (about one point) and held in the benchmark (bench/NOTES-encode.md keeps
 * each sweep and A/B). Bps aims for whole waves: rows fp32 medium 3 gives 8192 four slices of
 * 128 row tiles, 512 blocks in one wave of 4 per SM; dual large 4 is one wave. Cols fp32
 * medium stays at 16 lanes (32 reads the same), which is what the explicit-X lanes cap gives
 * at c = 2, so the implicit and explicit paths share a launch shape there. Small ends at
 * 32 MiB: fp32 4096 (64 MiB) reads faster with the medium shapes, while at fp32 2048 (16 MiB)
 * they lose on the implicit passes.
 * The fallback row keeps shapes that are sound on any sm_70+ part. */
static const abft_cuda_tune_t abft_cuda_tune_table[] = {
    {9, 100, 32ll << 20, 1ll << 30,
     /* rows  fp64: small, medium, large      fp32 */
     {{{8, 4}, {8, 2}, {32, 2}}, {{8, 4}, {16, 3}, {16, 8}}},
     /* cols */
     {{{16, 4}, {32, 2}, {32, 4}}, {{8, 4}, {16, 2}, {32, 4}}},
     /* dual (bps only; fp32 medium 3: the implicit-weight kernel's occupancy) */
     {{{0, 4}, {0, 4}, {0, 4}}, {{0, 4}, {0, 3}, {0, 4}}},
     128, 32},
    {0, 0, 64ll << 20, 1ll << 30,
     {{{32, 4}, {32, 4}, {32, 4}}, {{32, 4}, {32, 4}, {32, 4}}},
     {{{8, 4}, {8, 4}, {8, 4}}, {{8, 4}, {8, 4}, {8, 4}}},
     {{{0, 4}, {0, 4}, {0, 8}}, {{0, 4}, {0, 4}, {0, 8}}},
     128, 32},
};

static int abft_cuda_over_rows = 0, abft_cuda_over_cols = 0, abft_cuda_over_bps = 0;

#define ABFT_CUDA_MAX_DEVICES 64
static const abft_cuda_tune_t *abft_cuda_tune_row[ABFT_CUDA_MAX_DEVICES];
static int abft_cuda_tune_sms[ABFT_CUDA_MAX_DEVICES];

extern "C" void abft_cuda_tune_override(int rows_lanes, int cols_lanes, int bps) {
    abft_cuda_over_rows = rows_lanes;
    abft_cuda_over_cols = cols_lanes;
    abft_cuda_over_bps = bps;
}

extern "C" abft_cuda_kshape_t abft_cuda_tune_shape(const abft_cuda_tune_t *t, int kernel,
                                                   int prec, double bytes) {
    const int cls = bytes <= (double)t->small_bytes ? 0 : bytes <= (double)t->large_bytes ? 1 : 2;
    const int p = prec ? 1 : 0;
    abft_cuda_kshape_t s = kernel == 0 ? t->rows[p][cls] : kernel == 1 ? t->cols[p][cls]
                                                                       : t->dual[p][cls];
    if (kernel == 0 && abft_cuda_over_rows > 0) s.lanes = abft_cuda_over_rows;
    if (kernel == 1 && abft_cuda_over_cols > 0) s.lanes = abft_cuda_over_cols;
    if (abft_cuda_over_bps > 0) s.bps = abft_cuda_over_bps;
    return s;
}

extern "C" const abft_cuda_tune_t *abft_cuda_tune_get(int device, int *sm_count) {
    const int d = device >= 0 && device < ABFT_CUDA_MAX_DEVICES ? device : -1;
    if (d >= 0 && abft_cuda_tune_row[d] != NULL) {
        *sm_count = abft_cuda_tune_sms[d];
        return abft_cuda_tune_row[d];
    }
    int major = 0, sms = 0;
    const int q = device >= 0 ? device : 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, q) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, q) != cudaSuccess) {
        (void)cudaGetLastError();
        major = 0;
        sms = 1;
    }
    if (sms < 1) sms = 1;
    const int nrows = (int)(sizeof abft_cuda_tune_table / sizeof abft_cuda_tune_table[0]);
    const abft_cuda_tune_t *t = &abft_cuda_tune_table[nrows - 1];
    for (int i = 0; i < nrows; ++i) {
        if (major >= abft_cuda_tune_table[i].cc_major_min &&
            sms >= abft_cuda_tune_table[i].sms_min) {
            t = &abft_cuda_tune_table[i];
            break;
        }
    }
    if (d >= 0) {
        abft_cuda_tune_sms[d] = sms; /* racing writers store identical values */
        abft_cuda_tune_row[d] = t;
    }
    *sm_count = sms;
    return t;
}

/* A kernel of this build, asked what code the device runs for it: the griddepcontrol
 * instructions of abft_pdl_enter exist only in code compiled for sm_90 or later. A build
 * without sm_90 code (say CMAKE_CUDA_ARCHITECTURES=80) runs on an H100 from compute_80 PTX,
 * JIT-compiled, with the wait compiled out: a PDL launch of that code could read before the
 * kernel ahead of it had written. */
__global__ void abft_cuda_pdl_probe() {}

static int abft_cuda_pdl_cap[ABFT_CUDA_MAX_DEVICES]; /* 0 unknown, 1 yes, 2 no */

int abft_cuda_pdl_ok(int device) {
    if (device < 0 || device >= ABFT_CUDA_MAX_DEVICES) return 0;
    if (abft_cuda_pdl_cap[device] == 0) {
        int major = 0, ok = 0;
        cudaFuncAttributes fa;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) ==
                cudaSuccess &&
            major >= 9 && cudaFuncGetAttributes(&fa, abft_cuda_pdl_probe) == cudaSuccess)
            ok = fa.ptxVersion >= 90; /* the code it runs comes from sm_90+ sources */
        else
            (void)cudaGetLastError();
        abft_cuda_pdl_cap[device] = ok ? 1 : 2; /* racing writers store identical values */
    }
    return abft_cuda_pdl_cap[device] == 1;
}

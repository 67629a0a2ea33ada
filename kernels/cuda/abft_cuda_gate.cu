/* abft CUDA backend: the GEMM held back on the device when an input is not finite.
 *
 * The protected GEMM promises C untouched when A, B or the old C hold a NaN or an Inf. The
 * screen that decides it reads checksums the GPU has just computed, so asking the host
 * costs a round trip (a stream synchronisation, then the GEMM's launch on an idle GPU)
 * before every GEMM. Here the decision stays on the device:
 *
 *   screen kernels     count the rows of the given n x 2 checksum arrays with a non-finite
 *                      entry into a device counter (zero between calls)
 *   gate kernel        reads the counter, leaves the reading in mapped host memory for the
 *                      host, resets the counter, and sets the condition of
 *   conditional node   IF (count == 0) { the cuBLAS GEMM, captured into the node's body }
 *
 * The gate and the conditional node form a CUDA graph (CUDA 12.4 or later), launched on the
 * context's stream like a kernel. A graph is built per GEMM signature (operands, shapes,
 * scalars, and every setting of the context's cuBLAS handle that steers its choice of
 * kernel) from the second call with that signature on (a one-off call takes the host path
 * below: a graph costs 60-100 us to build, the round trip it saves about 12), and up to 8
 * are kept. The GEMM is captured on a private cuBLAS handle given the same settings, with a
 * workspace the context owns: the caller's handle is never touched, and no graph refers to
 * memory of a handle that may be gone by its next launch. Where a graph cannot be built (an
 * older driver, a capture cuBLAS refuses), or builds stop paying (a stream of new
 * signatures: more than 16 builds beyond twice the hits), the same contract holds through the
 *  * host: synchronise, read and reset the counter, launch the GEMM when it is zero. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "abft_cuda_blas.cuh"
#include "abft_cuda_common.cuh"

namespace {

constexpr int GATE_CACHE = 8;                     /* graphs kept per context */
constexpr int GATE_SEEN = 32;                     /* signatures remembered (first sightings) */
constexpr size_t GATE_WORKSPACE = 32u << 20;      /* cuBLAS's recommended size on Hopper */
constexpr int SCREEN_THREADS = 256;

/* Everything the captured GEMM depends on. Compared bytewise: built with memset first. */
struct gate_key {
    abft_gemm_args_t g;
    int device;
    int math, atomics, sm_target, emulation, special_values, mantissa_control, max_bits,
        bit_offset;
    int *bit_count_ptr;
};

struct gate_entry {
    gate_key key;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    unsigned long long used; /* last use, for the replacement */
};

} /* namespace */

struct abft_cuda_gate {
    unsigned long long *count;       /* device: rows found non-finite since the last gate */
    unsigned long long *host;        /* pinned host: the last gate's reading */
    unsigned long long *host_dev;    /* its device address (mapped), NULL when not mapped */
    cudaStream_t capture;            /* the stream cuBLAS is captured on */
    cublasHandle_t blas;             /* the private handle the GEMMs are captured with */
    void *workspace;                 /* its cuBLAS workspace (every captured GEMM's) */
    int graphs_off;                  /* a graph could not be built: the host path from now on */
    unsigned long long clock, builds, hits;
    gate_entry entry[GATE_CACHE];
    uint64_t seen[GATE_SEEN];        /* hashes of signatures seen once (a ring) */
    int seen_next;
};

namespace {

__global__ void __launch_bounds__(SCREEN_THREADS)
    screen_kernel(const double *X, int64_t n, int64_t ld, unsigned long long *count) {
    abft_pdl_enter();
    unsigned bad = 0;
    for (int64_t i = (int64_t)blockIdx.x * SCREEN_THREADS + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * SCREEN_THREADS)
        bad += (!isfinite(X[i]) || !isfinite(X[i + ld])) ? 1u : 0u;
    for (int off = 16; off >= 1; off /= 2) bad += __shfl_xor_sync(0xffffffffu, bad, off);
    if ((threadIdx.x & 31) == 0 && bad != 0) atomicAdd(count, (unsigned long long)bad);
}

__global__ void gate_kernel(unsigned long long *count, unsigned long long *host,
                            cudaGraphConditionalHandle cond) {
    const unsigned long long v = *count;
    *count = 0;
    *host = v;
    cudaGraphSetConditional(cond, v == 0 ? 1u : 0u);
}

bool same_key(const gate_key &a, const gate_key &b) { return memcmp(&a, &b, sizeof a) == 0; }

uint64_t key_hash(const gate_key &k) { /* FNV-1a over the key's bytes (padding zeroed) */
    const unsigned char *b = (const unsigned char *)&k;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof k; ++i) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* The key of this call; false when a setting of the handle cannot be read. */
bool make_key(const abft_kctx_t *ctx, const abft_gemm_args_t *a, gate_key *k) {
    memset(k, 0, sizeof *k);
    k->g.prec = a->prec;
    k->g.transa = a->transa;
    k->g.transb = a->transb;
    k->g.m = a->m, k->g.n = a->n, k->g.k = a->k;
    k->g.alpha = a->alpha, k->g.beta = a->beta;
    k->g.A = a->A, k->g.lda = a->lda;
    k->g.B = a->B, k->g.ldb = a->ldb;
    k->g.C = a->C, k->g.ldc = a->ldc;
    k->device = ctx->device;
    cublasHandle_t h = (cublasHandle_t)ctx->blas;
    cublasMath_t math;
    cublasAtomicsMode_t atomics;
    cublasEmulationStrategy_t emu;
    cudaEmulationSpecialValuesSupport sv;
    cudaEmulationMantissaControl mc;
    if (cublasGetMathMode(h, &math) != CUBLAS_STATUS_SUCCESS ||
        cublasGetAtomicsMode(h, &atomics) != CUBLAS_STATUS_SUCCESS ||
        cublasGetSmCountTarget(h, &k->sm_target) != CUBLAS_STATUS_SUCCESS ||
        cublasGetEmulationStrategy(h, &emu) != CUBLAS_STATUS_SUCCESS ||
        cublasGetEmulationSpecialValuesSupport(h, &sv) != CUBLAS_STATUS_SUCCESS ||
        cublasGetFixedPointEmulationMantissaControl(h, &mc) != CUBLAS_STATUS_SUCCESS ||
        cublasGetFixedPointEmulationMaxMantissaBitCount(h, &k->max_bits) !=
            CUBLAS_STATUS_SUCCESS ||
        cublasGetFixedPointEmulationMantissaBitOffset(h, &k->bit_offset) !=
            CUBLAS_STATUS_SUCCESS ||
        cublasGetFixedPointEmulationMantissaBitCountPointer(h, &k->bit_count_ptr) !=
            CUBLAS_STATUS_SUCCESS)
        return false;
    k->math = (int)math;
    k->atomics = (int)atomics;
    k->emulation = (int)emu;
    k->special_values = (int)sv;
    k->mantissa_control = (int)mc;
    return true;
}

void drop_entry(gate_entry *e) {
    if (e->exec != nullptr) (void)cudaGraphExecDestroy(e->exec);
    if (e->graph != nullptr) (void)cudaGraphDestroy(e->graph);
    e->exec = nullptr;
    e->graph = nullptr;
    e->used = 0;
}

/* The private handle, given the settings of key k (those of the caller's handle). */
bool settings_to(cublasHandle_t h, const gate_key &k) {
    return cublasSetMathMode(h, (cublasMath_t)k.math) == CUBLAS_STATUS_SUCCESS &&
           cublasSetAtomicsMode(h, (cublasAtomicsMode_t)k.atomics) == CUBLAS_STATUS_SUCCESS &&
           cublasSetSmCountTarget(h, k.sm_target) == CUBLAS_STATUS_SUCCESS &&
           cublasSetEmulationStrategy(h, (cublasEmulationStrategy_t)k.emulation) ==
               CUBLAS_STATUS_SUCCESS &&
           cublasSetEmulationSpecialValuesSupport(
               h, (cudaEmulationSpecialValuesSupport)k.special_values) == CUBLAS_STATUS_SUCCESS &&
           cublasSetFixedPointEmulationMantissaControl(
               h, (cudaEmulationMantissaControl)k.mantissa_control) == CUBLAS_STATUS_SUCCESS &&
           cublasSetFixedPointEmulationMaxMantissaBitCount(h, k.max_bits) ==
               CUBLAS_STATUS_SUCCESS &&
           cublasSetFixedPointEmulationMantissaBitOffset(h, k.bit_offset) ==
               CUBLAS_STATUS_SUCCESS &&
           cublasSetFixedPointEmulationMantissaBitCountPointer(h, k.bit_count_ptr) ==
               CUBLAS_STATUS_SUCCESS;
}

/* Capture the GEMM into `body` on the gate's stream, with the private handle (its stream,
 * workspace and host pointer mode set when it was made). */
abft_status_t capture_gemm(abft_cuda_gate *G, const abft_gemm_args_t *a, const gate_key &k,
                           cudaGraph_t body) {
    if (!settings_to(G->blas, k)) return ABFT_STATUS_CUBLAS_ERROR;
    ABFT_CUDA_TRY(cudaStreamBeginCaptureToGraph(G->capture, body, nullptr, nullptr, 0,
                                                cudaStreamCaptureModeThreadLocal));
    const cublasStatus_t s = abft_blas_gemm(G->blas, a);
    cudaGraph_t out = nullptr;
    const cudaError_t e = cudaStreamEndCapture(G->capture, &out);
    if (s != CUBLAS_STATUS_SUCCESS) {
        (void)cudaGetLastError();
        return ABFT_STATUS_CUBLAS_ERROR;
    }
    return abft_cuda_status(e);
}

/* Build and instantiate the graph gate -> IF { GEMM } for key k into entry e. */
abft_status_t build_entry(abft_cuda_gate *G, const abft_gemm_args_t *a, const gate_key &k,
                          gate_entry *e) {
    drop_entry(e);
    cudaGraph_t g = nullptr;
    ABFT_CUDA_TRY(cudaGraphCreate(&g, 0));
    e->graph = g;
    cudaGraphConditionalHandle cond;
    ABFT_CUDA_TRY(cudaGraphConditionalHandleCreate(&cond, g, 0, cudaGraphCondAssignDefault));
    unsigned long long *count = G->count, *host = G->host_dev;
    void *args[3] = {&count, &host, &cond};
    cudaKernelNodeParams kp;
    memset(&kp, 0, sizeof kp);
    kp.func = (void *)gate_kernel;
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(1);
    kp.kernelParams = args;
    cudaGraphNode_t gate = nullptr, ifnode = nullptr;
    ABFT_CUDA_TRY(cudaGraphAddKernelNode(&gate, g, nullptr, 0, &kp));
    cudaGraphNodeParams cp = {}; /* zeroed: the reserved fields must be */
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = cond;
    cp.conditional.type = cudaGraphCondTypeIf;
    cp.conditional.size = 1;
    ABFT_CUDA_TRY(cudaGraphAddNode(&ifnode, g, &gate, nullptr, 1, &cp));
    ABFT_TRY_STATUS(capture_gemm(G, a, k, cp.conditional.phGraph_out[0]));
    ABFT_CUDA_TRY(cudaGraphInstantiate(&e->exec, g, 0));
    memcpy(&e->key, &k, sizeof k); /* bytes, padding included: keys compare by memcmp */
    return ABFT_STATUS_SUCCESS;
}

/* Resources of the device path, made on first use (the counter zeroed on the stream). */
abft_status_t gate_ready(abft_cuda_gate *G, cudaStream_t st) {
    if (G->count == nullptr) {
        void *p = nullptr;
        ABFT_CUDA_TRY(cudaMalloc(&p, sizeof(unsigned long long)));
        cudaError_t e = cudaMemsetAsync(p, 0, sizeof(unsigned long long), st);
        if (e != cudaSuccess) {
            (void)cudaFree(p);
            return abft_cuda_status(e);
        }
        G->count = (unsigned long long *)p;
    }
    if (G->host == nullptr) {
        /* its own block, not abft_cuda_pinned's: that one may move between the gate kernel
         * writing the word and the host reading it, and a graph keeps the device address */
        void *p = nullptr;
        ABFT_TRY_STATUS(abft_cuda_host_alloc(sizeof(unsigned long long), &p));
        G->host = (unsigned long long *)p;
        G->host_dev = (unsigned long long *)abft_cuda_host_device_ptr(p);
        if (G->host_dev == nullptr) G->graphs_off = 1; /* not mapped: the host path */
        *G->host = 0;
    }
    return ABFT_STATUS_SUCCESS;
}

/* The private capture stream, cuBLAS handle and workspace; false when one cannot be made. */
bool capture_ready(abft_cuda_gate *G) {
    if (G->capture == nullptr &&
        cudaStreamCreateWithFlags(&G->capture, cudaStreamNonBlocking) != cudaSuccess) {
        G->capture = nullptr;
        return false;
    }
    if (G->workspace == nullptr && cudaMalloc(&G->workspace, GATE_WORKSPACE) != cudaSuccess) {
        G->workspace = nullptr;
        return false;
    }
    if (G->blas == nullptr) {
        cublasHandle_t h = nullptr;
        if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return false;
        if (cublasSetStream(h, G->capture) != CUBLAS_STATUS_SUCCESS ||
            cublasSetWorkspace(h, G->workspace, GATE_WORKSPACE) != CUBLAS_STATUS_SUCCESS ||
            cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST) != CUBLAS_STATUS_SUCCESS) {
            (void)cublasDestroy(h);
            return false;
        }
        G->blas = h;
    }
    return true;
}

/* The graph for this call; NULL for the host path (not available, a first sighting, or
 * builds that stopped paying). */
abft_status_t gate_graph(abft_cuda_gate *G, const abft_kctx_t *ctx, const abft_gemm_args_t *a,
                         cudaGraphExec_t *exec) {
    *exec = nullptr;
    gate_key k;
    if (G->graphs_off || !make_key(ctx, a, &k)) return ABFT_STATUS_SUCCESS;
    gate_entry *victim = &G->entry[0]; /* the least recently used (empty ones: used = 0) */
    for (int i = 0; i < GATE_CACHE; ++i) {
        gate_entry *e = &G->entry[i];
        if (e->exec != nullptr && same_key(e->key, k)) {
            e->used = ++G->clock;
            ++G->hits;
            *exec = e->exec;
            return ABFT_STATUS_SUCCESS;
        }
        if (e->used < victim->used) victim = e;
    }
    /* a miss: build on the second sighting, while builds pay */
    const uint64_t hk = key_hash(k);
    bool seen = false;
    for (int i = 0; i < GATE_SEEN && !seen; ++i) seen = G->seen[i] == hk;
    if (!seen) {
        G->seen[G->seen_next] = hk;
        G->seen_next = (G->seen_next + 1) % GATE_SEEN;
        return ABFT_STATUS_SUCCESS;
    }
    if (G->builds > 2 * G->hits + 16) return ABFT_STATUS_SUCCESS;
    if (!capture_ready(G) || build_entry(G, a, k, victim) != ABFT_STATUS_SUCCESS) {
        drop_entry(victim);
        (void)cudaGetLastError();
        G->graphs_off = 1; /* not retried: each try would cost a capture */
        return ABFT_STATUS_SUCCESS;
    }
    ++G->builds;
    victim->used = ++G->clock;
    *exec = victim->exec;
    return ABFT_STATUS_SUCCESS;
}

} /* namespace */

extern "C" abft_status_t abft_cuda_gate_create(abft_kctx_t *ctx) {
    ctx->gate = calloc(1, sizeof(abft_cuda_gate));
    return ctx->gate != NULL ? ABFT_STATUS_SUCCESS : ABFT_STATUS_ALLOC_FAILED;
}

extern "C" abft_status_t abft_cuda_gate_destroy(abft_kctx_t *ctx) {
    abft_cuda_gate *G = (abft_cuda_gate *)ctx->gate;
    if (G == NULL) return ABFT_STATUS_SUCCESS;
    cudaError_t first = cudaSuccess;
    for (int i = 0; i < GATE_CACHE; ++i) drop_entry(&G->entry[i]);
    auto keep = [&](cudaError_t e) {
        if (first == cudaSuccess) first = e;
    };
    if (G->count != nullptr) keep(cudaFree(G->count));
    if (G->host != nullptr) keep(cudaFreeHost(G->host));
    if (G->blas != nullptr && cublasDestroy(G->blas) != CUBLAS_STATUS_SUCCESS)
        keep(cudaErrorUnknown);
    if (G->workspace != nullptr) keep(cudaFree(G->workspace));
    if (G->capture != nullptr) keep(cudaStreamDestroy(G->capture));
    free(G);
    ctx->gate = NULL;
    return abft_cuda_status(first);
}

extern "C" abft_status_t abft_cuda_screen(const abft_kctx_t *ctx, const double *X, int64_t n,
                                          int64_t ld) {
    abft_cuda_gate *G = (abft_cuda_gate *)ctx->gate;
    if (G == NULL) return ABFT_STATUS_NOT_INITIALIZED;
    if (n <= 0) return ABFT_STATUS_SUCCESS;
    ABFT_TRY_STATUS(gate_ready(G, abft_cuda_stream(ctx)));
    int64_t blocks = (n + SCREEN_THREADS - 1) / SCREEN_THREADS;
    if (blocks > 1024) blocks = 1024;
    return abft_cuda_launch(ctx, true, screen_kernel, dim3((unsigned)blocks), SCREEN_THREADS, 0, X, n,
                            ld, G->count);
}

extern "C" abft_status_t abft_cuda_gemm_gated(const abft_kctx_t *ctx, const abft_gemm_args_t *a) {
    abft_cuda_gate *G = (abft_cuda_gate *)ctx->gate;
    if (G == NULL) return ABFT_STATUS_NOT_INITIALIZED;
    if (ctx->blas == NULL) return ABFT_STATUS_NOT_INITIALIZED;
    cudaStream_t st = abft_cuda_stream(ctx);
    ABFT_TRY_STATUS(gate_ready(G, st));
    cudaGraphExec_t exec = nullptr;
    if (a->m > 0 && a->n > 0) ABFT_TRY_STATUS(gate_graph(G, ctx, a, &exec));
    if (exec != nullptr) {
        ABFT_CUDA_TRY(cudaGraphLaunch(exec, st));
        return ABFT_STATUS_SUCCESS;
    }
    /* the host path: the same decision after a round trip */
    unsigned long long v = 0;
    ABFT_CUDA_TRY(cudaMemcpyAsync(G->host, G->count, sizeof v, cudaMemcpyDeviceToHost, st));
    ABFT_CUDA_TRY(cudaMemsetAsync(G->count, 0, sizeof v, st));
    ABFT_CUDA_TRY(cudaStreamSynchronize(st));
    v = *(volatile unsigned long long *)G->host;
    return v == 0 ? abft_cuda_gemm(ctx, a) : ABFT_STATUS_SUCCESS;
}

extern "C" abft_status_t abft_cuda_gate_reset(const abft_kctx_t *ctx) {
    abft_cuda_gate *G = (abft_cuda_gate *)ctx->gate;
    if (G == NULL || G->count == nullptr) return ABFT_STATUS_SUCCESS;
    cudaStream_t st = abft_cuda_stream(ctx);
    (void)cudaStreamSynchronize(st); /* whatever is queued, done (its error is the caller's) */
    (void)cudaGetLastError();
    ABFT_CUDA_TRY(cudaMemsetAsync(G->count, 0, sizeof(unsigned long long), st));
    ABFT_CUDA_TRY(cudaStreamSynchronize(st));
    if (G->host != nullptr) *G->host = 0;
    return ABFT_STATUS_SUCCESS;
}

extern "C" abft_status_t abft_cuda_gate_result(const abft_kctx_t *ctx, int64_t *held) {
    abft_cuda_gate *G = (abft_cuda_gate *)ctx->gate;
    *held = 0;
    if (G == NULL || G->host == nullptr) return ABFT_STATUS_NOT_INITIALIZED;
    ABFT_CUDA_TRY(cudaStreamSynchronize(abft_cuda_stream(ctx)));
    *held = (int64_t)*(volatile unsigned long long *)G->host;
    return ABFT_STATUS_SUCCESS;
}

/* abft CUDA backend: shared helpers (status mapping, scratch growth). Private. */
#ifndef ABFT_CUDA_COMMON_CUH
#define ABFT_CUDA_COMMON_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "abft_kernels.h"

/* Map a CUDA runtime error to the library status (out-of-memory is ALLOC_FAILED). */
static inline abft_status_t abft_cuda_status(cudaError_t e) {
    if (e == cudaSuccess) return ABFT_STATUS_SUCCESS;
    (void)cudaGetLastError(); /* clear a sticky-free error so the next call starts clean */
    return e == cudaErrorMemoryAllocation ? ABFT_STATUS_ALLOC_FAILED : ABFT_STATUS_CUDA_ERROR;
}

#define ABFT_CUDA_TRY(expr)                                                   \
    do {                                                                      \
        abft_status_t abft_cst_ = abft_cuda_status(expr);                     \
        if (abft_cst_ != ABFT_STATUS_SUCCESS) return abft_cst_;               \
    } while (0)

/* After each launch: a bad configuration shows here, not at the next call. */
#define ABFT_CUDA_LAUNCHED() ABFT_CUDA_TRY(cudaGetLastError())

#define ABFT_TRY_STATUS(expr)                                                 \
    do {                                                                      \
        abft_status_t abft_st_ = (expr);                                      \
        if (abft_st_ != ABFT_STATUS_SUCCESS) return abft_st_;                 \
    } while (0)

static inline cudaStream_t abft_cuda_stream(const abft_kctx_t *ctx) {
    return (cudaStream_t)ctx->stream;
}

/* ---- programmatic dependent launch (compute capability 9.0+) ---------------------------
 * The pass kernels (tall-and-skinny, dual, reduce, compare, screen) are launched with
 * programmatic stream serialization where the device has it (abft_cuda_pdl_ok): such a grid
 * may be scheduled while the kernel before it on the stream is still running, and waits for
 * that kernel's completion and memory (griddepcontrol.wait) before its first access to
 * global memory. Each then lets the next grid be scheduled (launch_dependents), so that its
 * launch and block placement overlap this grid's tail instead of following it. Every kernel
 * launched through abft_cuda_launch must begin with abft_pdl_enter(). The caller asks for it
 * (pdl) only where the launch is short enough for its latency to matter: the passes over a
 * matrix of at most ABFT_CUDA_PDL_MAX_BYTES, their reduce launches, the compare and the
 * screen. Otherwise, and on devices without it, the launch is an ordinary stream launch and
 * both instructions are no-ops. */
__device__ __forceinline__ void abft_pdl_enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* Does the context's device take programmatic dependent launches? */
int abft_cuda_pdl_ok(int device);

template <typename... P, typename... A>
static inline abft_status_t abft_cuda_launch(const abft_kctx_t *ctx, bool pdl,
                                             void (*kern)(P...), dim3 grid, unsigned threads,
                                             size_t smem, A... args) {
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg;
    cfg.gridDim = grid;
    cfg.blockDim = dim3(threads, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = abft_cuda_stream(ctx);
    cfg.attrs = attr;
    cfg.numAttrs = pdl && abft_cuda_pdl_ok(ctx->device) ? 1 : 0;
    ABFT_CUDA_TRY(cudaLaunchKernelEx(&cfg, kern, args...)); /* launch errors come back here */
    return ABFT_STATUS_SUCCESS;
}

/* Ensure ctx->scratch holds `bytes` of device memory (contents not preserved). The old
 * buffer is freed only after the stream has drained, since queued kernels may still use it. */
abft_status_t abft_cuda_scratch(const abft_kctx_t *ctx, size_t bytes, void **ptr);
/* The same, plus `ncount` arrival counters in front of the scratch that are zero when the
 * next kernel on the stream starts, and that every kernel using them leaves at zero (zeroed
 * on the stream when the buffer is made; kept apart from what abft_cuda_scratch hands out). */
abft_status_t abft_cuda_scratch_counted(const abft_kctx_t *ctx, size_t ncount, size_t bytes,
                                        unsigned **count, void **ptr);
/* Pinned host memory of `bytes` in ctx->scratch (contents not preserved), for the small
 * results the host waits for. *dev (when dev != NULL) is its address for kernels (mapped
 * memory: a kernel writes the host's copy itself, no copy on the stream after it), or NULL
 * where the device cannot map host memory; then the caller copies into *ptr. */
abft_status_t abft_cuda_pinned(const abft_kctx_t *ctx, size_t bytes, void **ptr, void **dev);
/* Pinned host memory of `bytes`, mapped into the device's address space where the device
 * can map host memory, else plain pinned (free with cudaFreeHost). */
abft_status_t abft_cuda_host_alloc(size_t bytes, void **ptr);
/* The device's address of pinned host memory, or NULL where it is not mapped. */
void *abft_cuda_host_device_ptr(void *host);

#endif /* ABFT_CUDA_COMMON_CUH */

/* Memory of the handle's backend for the examples: device memory on the CUDA backend,
 * host memory on the CPU backend. Each example sets `backend` from abft_get_backend. */
#ifndef ABFT_EXAMPLE_MEM_H
#define ABFT_EXAMPLE_MEM_H

#include <abft/abft.h>
#include <stdlib.h>
#include <string.h>

#if ABFT_HAVE_CUDA_BACKEND
#include <cuda_runtime.h>
#endif

static abft_backend_t backend;

/* Copy between host and the backend's memory (the CPU backend's memory is host memory). */
static int to_backend(void *dst, const void *src, size_t bytes, int up) {
#if ABFT_HAVE_CUDA_BACKEND
    if (backend == ABFT_BACKEND_CUDA)
        return cudaMemcpy(dst, src, bytes, up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost) ==
                       cudaSuccess ? 0 : -1;
#endif
    memcpy(dst, src, bytes);
    return 0;
}

static void *backend_alloc(size_t bytes) {
#if ABFT_HAVE_CUDA_BACKEND
    if (backend == ABFT_BACKEND_CUDA) {
        void *p = NULL;
        return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
    }
#endif
    return malloc(bytes);
}

static void backend_free(void *p) {
#if ABFT_HAVE_CUDA_BACKEND
    if (backend == ABFT_BACKEND_CUDA) {
        cudaFree(p);
        return;
    }
#endif
    free(p);
}

#endif /* ABFT_EXAMPLE_MEM_H */

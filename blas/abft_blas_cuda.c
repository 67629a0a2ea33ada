/* libabft_blas_cuda.so, the drop-in's CUDA module: staging of host operands to the GPU
 * (docs/dropin.md, "CUDA backend"). libabft_blas.so loads this module with dlopen the first
 * time a call is to run on the GPU and reaches it only through the table of its one exported
 * function (abft_blas_cuda_module); the module holds its own copy of the libabft objects,
 * built with the CUDA backend, and links the CUDA libraries, which the drop-in itself does
 * not.
 *
 * The intercepted routines get host arrays. For a call the configuration sends to the GPU,
 * the operands are copied into device buffers of the calling thread (kept between calls,
 * grown when too small) through pinned buffers in chunks, several host threads at once
 * (below), the protected operation runs on the thread's CUDA handle, which verifies (and
 * corrects) the result on the GPU, and only then is the result copied back. On any status
 * but success the host arrays are left as they were (unless the copy back itself failed),
 * so the caller can run the call elsewhere. */
#include "abft_blas_internal.h"
#include "abft_blas_types.h"
#define ABFT_CPU_HOST_BLAS_NO_DECLS
#include "abft_cpu_host_blas.h"

#include <pthread.h>

#include <cuda_runtime_api.h>

#define EXPORT __attribute__((visibility("default")))

static int present(void) {
    if (!abft_cuda_built()) return 0;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count > 0;
}

/* Device buffer `slot` of at least `bytes`. */
static abft_status_t dev_buffer(abft_blas_stage_t *st, int slot, size_t bytes, void **ptr) {
    if (bytes == 0) bytes = 1;
    if (st->bytes[slot] < bytes) {
        if (st->dev[slot] != NULL) cudaFree(st->dev[slot]);
        st->dev[slot] = NULL, st->bytes[slot] = 0;
        if (cudaMalloc(&st->dev[slot], bytes) != cudaSuccess) {
            (void)cudaGetLastError();
            st->dev[slot] = NULL;
            return ABFT_STATUS_ALLOC_FAILED;
        }
        st->bytes[slot] = bytes;
    }
    *ptr = st->dev[slot];
    return ABFT_STATUS_SUCCESS;
}

/* ---- transfers -------------------------------------------------------------------------
 *
 * A host operand is moved as its packed image (abft_blas_pack.c), cut into chunks of
 * st->chunk bytes. Each lane (a host thread, the calling one for lane 0) takes every
 * lanes-th chunk and runs a two-buffer pipeline through its own pinned memory and stream:
 * to the device, it packs chunk i into one buffer while the copy engine still reads chunk
 * i - 1 from the other; to the host, the copy engine writes chunk i while the lane unpacks
 * chunk i - 1. The packing runs at memory speed in several threads and the copies at the
 * speed of pinned memory, both overlapped; a pageable cudaMemcpy does the same in one
 * thread through the driver's own small staging buffers. Where pinned memory is refused,
 * the transfers fall back to pageable copies. */

typedef struct xfer {
    abft_blas_stage_t *st;
    int lane, nlanes, device;
    int to_dev;     /* 1: host -> device, 0: device -> host */
    char *dev;      /* the packed device array */
    void *host;     /* the strided host matrix */
    int64_t ld, rows;
    size_t es, total, chunk;
    cudaError_t err;
} xfer_t;

static void lane_run(xfer_t *x) {
    abft_blas_lane_t *L = &x->st->lane[x->lane];
    cudaStream_t s = (cudaStream_t)L->stream;
    cudaError_t e = cudaSuccess;
    const size_t nchunks = (x->total + x->chunk - 1) / x->chunk;
    size_t prev_off = 0, prev_len = 0;
    int i = 0;
    for (size_t c = (size_t)x->lane; c < nchunks && e == cudaSuccess;
         c += (size_t)x->nlanes, ++i) {
        const int b = i & 1;
        const size_t off = c * x->chunk;
        const size_t len = x->total - off < x->chunk ? x->total - off : x->chunk;
        if (x->to_dev) {
            /* the copy that last read this buffer (chunk i - 2) must be done */
            if (i >= 2) e = cudaEventSynchronize((cudaEvent_t)L->ev[b]);
            if (e != cudaSuccess) break;
            abft_blas_pack_bytes(L->pinned[b], x->host, x->ld, x->rows, x->es, off, len);
            e = cudaMemcpyAsync(x->dev + off, L->pinned[b], len, cudaMemcpyHostToDevice, s);
            if (e == cudaSuccess) e = cudaEventRecord((cudaEvent_t)L->ev[b], s);
        } else {
            e = cudaMemcpyAsync(L->pinned[b], x->dev + off, len, cudaMemcpyDeviceToHost, s);
            if (e == cudaSuccess) e = cudaEventRecord((cudaEvent_t)L->ev[b], s);
            if (e == cudaSuccess && i >= 1) { /* chunk i - 1 while chunk i is copied */
                e = cudaEventSynchronize((cudaEvent_t)L->ev[1 - b]);
                if (e == cudaSuccess)
                    abft_blas_unpack_bytes(x->host, x->ld, L->pinned[1 - b], x->rows, x->es,
                                           prev_off, prev_len);
            }
            prev_off = off, prev_len = len;
        }
    }
    if (e == cudaSuccess && !x->to_dev && i >= 1) { /* the last chunk */
        const int b = (i - 1) & 1;
        e = cudaEventSynchronize((cudaEvent_t)L->ev[b]);
        if (e == cudaSuccess)
            abft_blas_unpack_bytes(x->host, x->ld, L->pinned[b], x->rows, x->es, prev_off,
                                   prev_len);
    }
    /* nothing of this lane may still be in flight when it returns (its buffers are reused) */
    cudaError_t e2 = cudaStreamSynchronize(s);
    x->err = e != cudaSuccess ? e : e2;
}

static void *lane_thread(void *p) {
    xfer_t *x = (xfer_t *)p;
    /* the current device is per host thread */
    x->err = cudaSetDevice(x->device);
    if (x->err == cudaSuccess) lane_run(x);
    return NULL;
}

static void lanes_free(abft_blas_stage_t *st) {
    for (int l = 0; l < ABFT_BLAS_STAGE_MAX_LANES; ++l) {
        abft_blas_lane_t *L = &st->lane[l];
        for (int b = 0; b < 2; ++b) {
            if (L->pinned[b] != NULL) cudaFreeHost(L->pinned[b]);
            if (L->ev[b] != NULL) cudaEventDestroy((cudaEvent_t)L->ev[b]);
            L->pinned[b] = NULL, L->ev[b] = NULL;
        }
        if (L->stream != NULL) cudaStreamDestroy((cudaStream_t)L->stream);
        L->stream = NULL;
    }
    (void)cudaGetLastError();
    st->made = 0, st->made_chunk = 0;
}

/* The lanes for st->lanes and st->chunk: kept from an earlier call when they match; made
 * anew otherwise. Returns the number of lanes, or 0 where pinned memory or a stream was
 * refused (then for good on this thread: pageable copies). */
static int lanes_ready(abft_blas_stage_t *st) {
    int want = st->lanes < 1 ? 1 : st->lanes > ABFT_BLAS_STAGE_MAX_LANES
                                       ? ABFT_BLAS_STAGE_MAX_LANES : st->lanes;
    size_t chunk = st->chunk < 4096 ? 4096 : st->chunk;
    if (st->made < 0) return 0;
    if (st->made == want && st->made_chunk == chunk) return want;
    lanes_free(st);
    for (int l = 0; l < want; ++l) {
        abft_blas_lane_t *L = &st->lane[l];
        cudaStream_t s = NULL;
        int ok = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess;
        L->stream = s;
        for (int b = 0; b < 2 && ok; ++b) {
            cudaEvent_t ev = NULL;
            ok = cudaHostAlloc(&L->pinned[b], chunk, cudaHostAllocPortable) == cudaSuccess &&
                 cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) == cudaSuccess;
            L->ev[b] = ev;
        }
        if (!ok) {
            lanes_free(st);
            st->made = -1;
            return 0;
        }
    }
    st->made = want, st->made_chunk = chunk;
    return want;
}

/* Moves the packed image of a rows x cols matrix between the strided host matrix (leading
 * dimension ld) and the packed device array dev: to_dev 1 uploads, 0 downloads. */
static abft_status_t transfer(abft_blas_stage_t *st, int to_dev, void *dev, void *host,
                              int64_t ld, int64_t rows, int64_t cols, size_t es) {
    if (rows == 0 || cols == 0) return ABFT_STATUS_SUCCESS;
    const size_t total = (size_t)rows * (size_t)cols * es;
    const int lanes = lanes_ready(st);
    if (lanes == 0) { /* pageable, in one call */
        cudaError_t e = to_dev ? cudaMemcpy2D(dev, (size_t)rows * es, host, (size_t)ld * es,
                                              (size_t)rows * es, (size_t)cols,
                                              cudaMemcpyHostToDevice)
                               : cudaMemcpy2D(host, (size_t)ld * es, dev, (size_t)rows * es,
                                              (size_t)rows * es, (size_t)cols,
                                              cudaMemcpyDeviceToHost);
        /* a pageable upload may return before its data reach the device, and the
         * handle's stream is not ordered after the legacy stream */
        if (e == cudaSuccess && to_dev) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return ABFT_STATUS_CUDA_ERROR;
        }
        return ABFT_STATUS_SUCCESS;
    }
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
        (void)cudaGetLastError();
        return ABFT_STATUS_CUDA_ERROR;
    }
    const size_t chunk = st->made_chunk;
    const size_t nchunks = (total + chunk - 1) / chunk;
    const int n = (size_t)lanes < nchunks ? lanes : (int)nchunks;
    xfer_t x[ABFT_BLAS_STAGE_MAX_LANES];
    pthread_t tid[ABFT_BLAS_STAGE_MAX_LANES];
    int started[ABFT_BLAS_STAGE_MAX_LANES];
    for (int l = 0; l < n; ++l) {
        xfer_t t = {st, l, n, device, to_dev, (char *)dev, host, ld, rows, es, total, chunk,
                    cudaSuccess};
        x[l] = t;
    }
    for (int l = 1; l < n; ++l)
        started[l] = pthread_create(&tid[l], NULL, lane_thread, &x[l]) == 0;
    lane_run(&x[0]);
    for (int l = 1; l < n; ++l) {
        if (started[l]) pthread_join(tid[l], NULL);
        else lane_run(&x[l]); /* no thread: this one does that lane's chunks too */
    }
    for (int l = 0; l < n; ++l) {
        if (x[l].err != cudaSuccess) {
            (void)cudaGetLastError();
            return ABFT_STATUS_CUDA_ERROR;
        }
    }
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t to_dev(abft_blas_stage_t *st, void *d, const void *h, int64_t ldh,
                            int64_t rows, int64_t cols, size_t es) {
    return transfer(st, 1, d, (void *)h, ldh, rows, cols, es);
}

static abft_status_t to_host(abft_blas_stage_t *st, void *h, int64_t ldh, const void *d,
                             int64_t rows, int64_t cols, size_t es) {
    return transfer(st, 0, (void *)d, h, ldh, rows, cols, es);
}

#define TRY(x)                                                                               \
    do {                                                                                     \
        abft_status_t s_ = (x);                                                              \
        if (s_ != ABFT_STATUS_SUCCESS) return s_;                                            \
    } while (0)

static const abft_blas_type_t *type_of(char prec) {
    return &abft_blas_types[prec == 'd' ? 0 : 1];
}

/* Everything queued on the handle's stream is done: before the staged operands are written
 * (a call that failed may have left work queued that reads or writes the device buffers)
 * and before a result is copied back (the GEMM, the checks, the corrections). */
static abft_status_t handle_idle(abft_handle_t h) {
    void *s = NULL;
    TRY(abft_get_stream(h, &s));
    if (cudaStreamSynchronize((cudaStream_t)s) != cudaSuccess) {
        (void)cudaGetLastError();
        return ABFT_STATUS_CUDA_ERROR;
    }
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t cuda_gemm(abft_blas_stage_t *st, char prec, abft_handle_t h, abft_operation_t ta, abft_operation_t tb,
                                  int64_t m, int64_t n, int64_t k, const void *alpha,
                                  const void *A, int64_t lda, const void *B, int64_t ldb,
                                  const void *beta, const void *C, int64_t ldc,
                                  abft_report_t *rep) {
    const abft_blas_type_t *t = type_of(prec);
    const size_t es = t->size;
    int64_t ar = ta == ABFT_OP_N ? m : k, ac = ta == ABFT_OP_N ? k : m;
    int64_t br = tb == ABFT_OP_N ? k : n, bc = tb == ABFT_OP_N ? n : k;
    void *dA, *dB, *dC;
    TRY(handle_idle(h));
    TRY(dev_buffer(st, 0, (size_t)ar * (size_t)ac * es, &dA));
    TRY(dev_buffer(st, 1, (size_t)br * (size_t)bc * es, &dB));
    TRY(dev_buffer(st, 2, (size_t)m * (size_t)n * es, &dC));
    TRY(to_dev(st, dA, A, lda, ar, ac, es));
    TRY(to_dev(st, dB, B, ldb, br, bc, es));
    if (!t->is_zero(beta)) TRY(to_dev(st, dC, C, ldc, m, n, es)); /* beta = 0: C is not read */
    return t->gemm(h, ta, tb, m, n, k, alpha, dA, ar > 1 ? ar : 1, dB, br > 1 ? br : 1, beta,
                   dC, m > 1 ? m : 1, rep);
}

static abft_status_t cuda_gemm_result(abft_blas_stage_t *st, char prec, abft_handle_t h,
                                      int64_t m, int64_t n, void *C, int64_t ldc, int *written) {
    const abft_blas_type_t *t = type_of(prec);
    *written = 0;
    TRY(handle_idle(h));
    *written = 1;
    return to_host(st, C, ldc, st->dev[2], m, n, t->size);
}

static abft_status_t cuda_getrf(abft_blas_stage_t *st, char prec, abft_handle_t h, int64_t m,
                                int64_t n, void *A, int64_t lda, int64_t *ipiv, int64_t *info,
                                abft_report_t *rep, int *written) {
    const abft_blas_type_t *t = type_of(prec);
    const size_t es = t->size;
    const int64_t mn = m < n ? m : n;
    void *dA, *dP;
    *written = 0;
    TRY(handle_idle(h));
    TRY(dev_buffer(st, 0, (size_t)m * (size_t)n * es, &dA));
    TRY(dev_buffer(st, 1, (size_t)mn * sizeof(int64_t), &dP));
    TRY(to_dev(st, dA, A, lda, m, n, es));
    abft_status_t s = t->getrf(h, m, n, dA, m > 1 ? m : 1, (int64_t *)dP, info, rep);
    if (s != ABFT_STATUS_SUCCESS && s != ABFT_STATUS_SINGULAR) return s;
    TRY(handle_idle(h));
    *written = 1; /* from here on ipiv and A are being overwritten */
    TRY(to_host(st, ipiv, mn, dP, mn, 1, sizeof(int64_t)));
    TRY(to_host(st, A, lda, dA, m, n, es));
    return s;
}

static abft_status_t cuda_getrs(abft_blas_stage_t *st, char prec, abft_handle_t h,
                                abft_operation_t trans, int64_t n, int64_t nrhs, const void *A,
                                int64_t lda, const int64_t *ipiv, void *B, int64_t ldb,
                                abft_report_t *rep, int *written) {
    const abft_blas_type_t *t = type_of(prec);
    const size_t es = t->size;
    void *dA, *dP, *dB;
    *written = 0;
    TRY(handle_idle(h));
    TRY(dev_buffer(st, 0, (size_t)n * (size_t)n * es, &dA));
    TRY(dev_buffer(st, 1, (size_t)n * sizeof(int64_t), &dP));
    TRY(dev_buffer(st, 2, (size_t)n * (size_t)nrhs * es, &dB));
    TRY(to_dev(st, dA, A, lda, n, n, es));
    TRY(to_dev(st, dB, B, ldb, n, nrhs, es));
    TRY(to_dev(st, dP, ipiv, n, n, 1, sizeof(int64_t)));
    abft_status_t s = t->getrs(h, trans, n, nrhs, dA, n > 1 ? n : 1, (const int64_t *)dP, dB,
                               n > 1 ? n : 1, rep);
    if (s != ABFT_STATUS_SUCCESS) return s;
    TRY(handle_idle(h));
    *written = 1;
    return to_host(st, B, ldb, dB, n, nrhs, es);
}

static void cuda_release(abft_blas_stage_t *st) {
    lanes_free(st);
    for (int i = 0; i < 3; ++i) {
        if (st->dev[i] != NULL) cudaFree(st->dev[i]);
        st->dev[i] = NULL, st->bytes[i] = 0;
    }
}

/* ---- the module's table ---------------------------------------------------------------- */

static const abft_blas_cuda_api_t api = {
    ABFT_BLAS_CUDA_API_VERSION,
    {abft_create, abft_destroy, abft_set_checksum_kind, abft_set_random_checksum,
     abft_set_bound_mode, abft_set_recompute, abft_set_lu_recovery, abft_injector_create,
     abft_injector_destroy, abft_injector_set_spec, abft_injector_set_targets,
     abft_injector_arm, abft_injector_attach, abft_injector_detach, abft_injector_flips},
    present,
    cuda_gemm,
    cuda_gemm_result,
    cuda_getrf,
    cuda_getrs,
    cuda_release,
};

EXPORT const abft_blas_cuda_api_t *abft_blas_cuda_module(int version, const void *host_blas) {
    if (version != ABFT_BLAS_CUDA_API_VERSION) return NULL;
    /* the module's CPU code (never used by the drop-in: its CPU handles are its own) calls
     * the routines after the drop-in too, never the drop-in's exported symbols */
    static int set;
    if (!set && host_blas != NULL) {
        abft_cpu_host_blas = *(const abft_cpu_host_blas_t *)host_blas;
        set = 1;
    }
    return &api;
}

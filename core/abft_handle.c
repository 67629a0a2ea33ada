/* abft: handle creation, backend selection, options, version. */
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "abft_internal.h"

static const abft_backend_ops_t cpu_ops = {
    abft_cpu_tsmm, abft_cpu_dual, abft_cpu_compare, abft_cpu_gemm,
    abft_cpu_alloc, abft_cpu_free, abft_cpu_copy, abft_cpu_sync, abft_cpu_order,
    abft_cpu_lu_tri, abft_cpu_lu_getrf, abft_cpu_lu_laswp, abft_cpu_lu_trsm,
    abft_cpu_lu_gather, abft_cpu_lu_axpy, abft_cpu_lu_get, abft_cpu_lu_set,
    NULL, NULL, NULL, NULL, abft_cpu_tight, NULL,
};

#if ABFT_HAVE_CUDA
static const abft_backend_ops_t cuda_ops = {
    abft_cuda_tsmm, abft_cuda_dual, abft_cuda_compare, abft_cuda_gemm,
    abft_cuda_alloc, abft_cuda_free, abft_cuda_copy, abft_cuda_sync, abft_cuda_order,
    abft_cuda_lu_tri, abft_cuda_lu_getrf, abft_cuda_lu_laswp, abft_cuda_lu_trsm,
    abft_cuda_lu_gather, abft_cuda_lu_axpy, abft_cuda_lu_get, abft_cuda_lu_set,
    abft_cuda_screen, abft_cuda_gemm_gated, abft_cuda_gate_result, abft_cuda_gate_reset,
    abft_cuda_tight, abft_cuda_tight_fits,
};
#endif

unsigned abft_version_number(void) { return ABFT_VERSION_NUMBER; }
const char *abft_version_string(void) { return ABFT_VERSION_STRING; }
int abft_cuda_built(void) { return ABFT_HAVE_CUDA; }

abft_status_t abft_create(abft_handle_t *handle, abft_backend_t backend) {
    ABFT_ARG_IF(handle == NULL, 1);
    ABFT_ARG_IF(backend != ABFT_BACKEND_AUTO && backend != ABFT_BACKEND_CPU &&
                    backend != ABFT_BACKEND_CUDA,
                2);
    abft_backend_t chosen = backend;
    if (backend == ABFT_BACKEND_AUTO) {
#if ABFT_HAVE_CUDA
        chosen = abft_cuda_device_present() ? ABFT_BACKEND_CUDA : ABFT_BACKEND_CPU;
#else
        chosen = ABFT_BACKEND_CPU;
#endif
    }
#if !ABFT_HAVE_CUDA
    ABFT_RETURN_IF(chosen == ABFT_BACKEND_CUDA, ABFT_STATUS_NOT_SUPPORTED);
#else
    ABFT_RETURN_IF(chosen == ABFT_BACKEND_CUDA && !abft_cuda_device_present(),
                   ABFT_STATUS_NOT_SUPPORTED);
#endif
    struct abft_context *h = (struct abft_context *)calloc(1, sizeof *h);
    ABFT_RETURN_IF(h == NULL, ABFT_STATUS_ALLOC_FAILED);
    h->magic = ABFT_HANDLE_MAGIC;
    h->backend = chosen;
    h->kctx.scratch = &h->scratch;
    h->kctx.device = -1;
    h->kind = ABFT_CHECKSUM_ROW;
    h->bound_mode = ABFT_BOUND_WORST_CASE;
    h->bound_factor = 1.0;
    h->recompute = 1;
    h->rnd_w_n = -1;
    if (chosen == ABFT_BACKEND_CPU) {
        h->ops = &cpu_ops;
    }
#if ABFT_HAVE_CUDA
    else {
        h->ops = &cuda_ops;
        abft_status_t st = abft_cuda_context_create(&h->kctx);
        if (st != ABFT_STATUS_SUCCESS) {
            free(h);
            return st;
        }
        h->own_blas = h->kctx.blas;
        h->own_solver = h->kctx.solver;
    }
#endif
    *handle = h;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_destroy(abft_handle_t h) {
    if (h == NULL) return ABFT_STATUS_SUCCESS;
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    abft_buffer_release(h, &h->scratch);
    abft_buffer_release(h, &h->work);
    abft_buffer_release(h, &h->rnd_w);
    abft_buffer_release(h, &h->aux_scratch);
    abft_status_t st = ABFT_STATUS_SUCCESS;
#if ABFT_HAVE_CUDA
    if (h->backend == ABFT_BACKEND_CUDA) {
        if (h->aux_ready) st = abft_cuda_aux_destroy(&h->aux);
        /* Destroy only what the handle created itself, not what it borrowed. */
        h->kctx.blas = h->own_blas;
        h->kctx.solver = h->own_solver;
        abft_status_t r = abft_cuda_context_destroy(&h->kctx, 1, 1);
        if (st == ABFT_STATUS_SUCCESS) st = r;
    }
#endif
    h->magic = 0;
    free(h);
    return st;
}

abft_status_t abft_aux_context(abft_handle_t h, const abft_kctx_t **aux) {
    if (!h->aux_ready) {
        abft_kctx_t c = h->kctx;
        c.scratch = &h->aux_scratch;
#if ABFT_HAVE_CUDA
        if (h->backend == ABFT_BACKEND_CUDA) ABFT_TRY(abft_cuda_aux_create(&c));
#endif
        h->aux = c;
        h->aux_ready = 1;
    }
    *aux = &h->aux;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_get_backend(abft_handle_t h, abft_backend_t *backend) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(backend == NULL, 2);
    *backend = h->backend;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_set_stream(abft_handle_t h, void *stream) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(h->backend == ABFT_BACKEND_CPU && stream != NULL, 2);
    h->kctx.stream = stream;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_get_stream(abft_handle_t h, void **stream) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(stream == NULL, 2);
    *stream = h->kctx.stream;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_set_cublas_handle(abft_handle_t h, void *cublas_handle) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_RETURN_IF(h->backend != ABFT_BACKEND_CUDA, ABFT_STATUS_NOT_SUPPORTED);
    h->kctx.blas = cublas_handle != NULL ? cublas_handle : h->own_blas;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_set_cusolver_handle(abft_handle_t h, void *cusolver_handle) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_RETURN_IF(h->backend != ABFT_BACKEND_CUDA, ABFT_STATUS_NOT_SUPPORTED);
    h->kctx.solver = cusolver_handle != NULL ? cusolver_handle : h->own_solver;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_set_checksum_kind(abft_handle_t h, abft_checksum_kind_t kind) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(kind != ABFT_CHECKSUM_ROW && kind != ABFT_CHECKSUM_FULL, 2);
    h->kind = kind;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_get_checksum_kind(abft_handle_t h, abft_checksum_kind_t *kind) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(kind == NULL, 2);
    *kind = h->kind;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_set_bound_mode(abft_handle_t h, abft_bound_mode_t mode, double factor) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(mode != ABFT_BOUND_WORST_CASE && mode != ABFT_BOUND_PROBABILISTIC &&
                    mode != ABFT_BOUND_TIGHT,
                2);
    /* written so that NaN is refused */
    ABFT_ARG_IF(!(factor > 0.0 && factor <= 1e6), 3);
    h->bound_mode = mode;
    h->bound_factor = factor;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_get_bound_mode(abft_handle_t h, abft_bound_mode_t *mode, double *factor) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(mode == NULL, 2);
    ABFT_ARG_IF(factor == NULL, 3);
    *mode = h->bound_mode;
    *factor = h->bound_factor;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_set_recompute(abft_handle_t h, int enable) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(enable != 0 && enable != 1, 2);
    h->recompute = enable;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_set_random_checksum(abft_handle_t h, int enable, uint64_t seed) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(enable != 0 && enable != 1, 2);
    h->rnd = enable;
    h->rnd_seed = seed;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_get_random_checksum(abft_handle_t h, int *enable, uint64_t *seed) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(enable == NULL, 2);
    ABFT_ARG_IF(seed == NULL, 3);
    *enable = h->rnd;
    *seed = h->rnd_seed;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_set_lu_recovery(abft_handle_t h, int enable) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(enable != 0 && enable != 1, 2);
    h->lu_recovery = enable;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_set_hook(abft_handle_t h, abft_hook_fn fn, void *user) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    h->hook = fn;
    h->hook_user = user;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_call_hook(abft_handle_t h, abft_hook_site_t site, int which, abft_prec_t prec,
                             void *ptr, int64_t rows, int64_t cols, int64_t ld) {
    if (h->hook == NULL || rows == 0 || cols == 0) return ABFT_STATUS_SUCCESS;
    ABFT_TRY(h->ops->sync(&h->kctx));
    return h->hook(h->hook_user, site, which, prec == ABFT_PREC_D ? 'd' : 's', ptr, rows, cols, ld);
}

abft_status_t abft_buffer_reserve(abft_handle_t h, abft_buffer_t *buf, size_t bytes) {
    if (buf->bytes >= bytes) return ABFT_STATUS_SUCCESS;
    void *p = NULL;
    ABFT_TRY(h->ops->alloc(&h->kctx, bytes, &p));
    if (buf->ptr != NULL) h->ops->free(&h->kctx, buf->ptr);
    buf->ptr = p;
    buf->bytes = bytes;
    return ABFT_STATUS_SUCCESS;
}

void abft_buffer_release(abft_handle_t h, abft_buffer_t *buf) {
    if (buf->ptr != NULL) h->ops->free(&h->kctx, buf->ptr);
    buf->ptr = NULL;
    buf->bytes = 0;
    buf->zeroed = 0;
}

abft_status_t abft_copy_doubles(abft_handle_t h, abft_prec_t prec, int dir, void *dev, int64_t ld,
                                int64_t rows, int64_t cols, double *host) {
    if (rows <= 0 || cols <= 0) return ABFT_STATUS_SUCCESS;
    const size_t cnt = (size_t)rows * (size_t)cols;
    if (prec == ABFT_PREC_D) {
        abft_copy_args_t c = {dir, sizeof(double), rows, cols, host, rows, dev, ld};
        return h->ops->copy(&h->kctx, &c);
    }
    float *f = (float *)malloc(cnt * sizeof(float));
    ABFT_RETURN_IF(f == NULL, ABFT_STATUS_ALLOC_FAILED);
    if (dir == 1)
        for (size_t i = 0; i < cnt; ++i) f[i] = (float)host[i];
    abft_copy_args_t c = {dir, sizeof(float), rows, cols, f, rows, dev, ld};
    abft_status_t st = h->ops->copy(&h->kctx, &c);
    if (st == ABFT_STATUS_SUCCESS && dir == 0)
        for (size_t i = 0; i < cnt; ++i) host[i] = (double)f[i];
    free(f);
    return st;
}

void abft_report_add_fault(abft_report_t *r, int64_t row, int64_t col, double delta,
                           double ratio, abft_action_t action, abft_factor_t factor, int side) {
    if (r->nfaults >= ABFT_REPORT_MAX_FAULTS) return;
    abft_fault_t *f = &r->faults[r->nfaults++];
    f->row = row;
    f->col = col;
    f->delta = delta;
    f->ratio = isnan(ratio) ? INFINITY : ratio;
    f->action = (int32_t)action;
    f->factor = (int32_t)factor;
    f->side = side;
    f->reserved = 0;
}

abft_status_t abft_count_nonfinite(abft_handle_t h, const double *X, int64_t n, int64_t ld,
                                   int64_t *count) {
    *count = 0;
    if (n == 0) return ABFT_STATUS_SUCCESS;
    double maxr = 0.0;
    abft_compare_args_t a = {n, X, ld, X, ld, X, ld, X, ld, NULL, 0, NULL, 0,
                             1.0, 0.0, 0.0, 0.0, 0.0, 0, NULL, count, &maxr,
                             NULL, 0, 0.0, 0.0, 0.0, 0.0, 1.0};
    return h->ops->compare(&h->kctx, &a, 1);
}

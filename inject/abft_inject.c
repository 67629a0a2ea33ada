/* abft inject layer: the fault spec, direct injection, and the injector that fires from a
 * handle's hook. Checks arguments, turns the bit class into a bit range, and dispatches to
 * the backend's flip kernel (kernels/abft_inject_kernels.h). */
#include <stdlib.h>
#include <string.h>

#include "abft_inject_kernels.h"
#include "abft_internal.h"

struct abft_injector {
    abft_handle_t handle;
    abft_fault_spec_t spec;
    uint32_t site_mask;
    int which;
    int max_firings;
    uint64_t seed;
    int64_t firings;
    abft_flip_t *flips;
    int64_t nflips, cap;
    void *kstate; /* the backend's flip state (the CUDA generator) */
};

abft_fault_spec_t abft_fault_spec_default(void) {
    abft_fault_spec_t s = {ABFT_BITS_ANY, 0, 1, 1, -1, -1};
    return s;
}

double abft_flip_bits_d(double v, int bit, int width) {
    if (bit < 0 || width < 1 || bit + width > 64) return v;
    uint64_t b;
    memcpy(&b, &v, 8);
    b ^= abft_inject_mask(bit, width);
    memcpy(&v, &b, 8);
    return v;
}

float abft_flip_bits_s(float v, int bit, int width) {
    if (bit < 0 || width < 1 || bit + width > 32) return v;
    uint32_t b;
    memcpy(&b, &v, 4);
    b ^= (uint32_t)abft_inject_mask(bit, width);
    memcpy(&v, &b, 4);
    return v;
}

uint64_t abft_inject_firing_seed(uint64_t seed, int64_t firing) {
    /* splitmix64 finalizer of seed + (f + 1)·golden ratio: neighbouring seeds and firings
     * give unrelated streams. */
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(firing + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The bit range [lo, hi] of a class for a word of nbits bits. */
static abft_status_t bit_range(const abft_fault_spec_t *s, int nbits, int32_t *lo, int32_t *hi) {
    int mant = nbits == 64 ? 52 : 23;           /* mantissa bits */
    int half = nbits == 64 ? 26 : 12;           /* the low half: bits 0..half-1 */
    switch (s->bit_class) {
    case ABFT_BITS_ANY: *lo = 0; *hi = nbits - 1; break;
    case ABFT_BITS_SIGN: *lo = *hi = nbits - 1; break;
    case ABFT_BITS_EXPONENT: *lo = mant; *hi = nbits - 2; break;
    case ABFT_BITS_MANTISSA_HIGH: *lo = half; *hi = mant - 1; break;
    case ABFT_BITS_MANTISSA_LOW: *lo = 0; *hi = half - 1; break;
    case ABFT_BITS_EXACT:
        ABFT_RETURN_IF(s->bit < 0 || s->bit + s->width > nbits, ABFT_STATUS_INVALID_VALUE);
        *lo = *hi = s->bit;
        break;
    default: return ABFT_STATUS_INVALID_VALUE;
    }
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_fault_bit_range(const abft_fault_spec_t *spec, char precision, int32_t *lo,
                                   int32_t *hi) {
    ABFT_RETURN_IF(spec == NULL || lo == NULL || hi == NULL, ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(precision != 'd' && precision != 's', ABFT_STATUS_INVALID_VALUE);
    return bit_range(spec, precision == 'd' ? 64 : 32, lo, hi);
}

static abft_status_t check_spec(const abft_fault_spec_t *s) {
    ABFT_RETURN_IF(s == NULL, ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(s->bit_class < ABFT_BITS_ANY || s->bit_class > ABFT_BITS_EXACT,
                   ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(s->width != 1 && s->width != 2, ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(s->nelems < 1 || s->nelems > ABFT_INJECT_MAX_ELEMS, ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(s->bit_class == ABFT_BITS_EXACT && (s->bit < 0 || s->bit + s->width > 64),
                   ABFT_STATUS_INVALID_VALUE);
    return ABFT_STATUS_SUCCESS;
}

static double bits_value(abft_prec_t prec, uint64_t bits) {
    if (prec == ABFT_PREC_D) {
        double v;
        memcpy(&v, &bits, 8);
        return v;
    }
    uint32_t b = (uint32_t)bits;
    float f;
    memcpy(&f, &b, 4);
    return (double)f;
}

/* One firing on an array of the handle's backend: check, flip, convert the records. */
static abft_status_t fire(abft_handle_t h, void **kstate, const abft_fault_spec_t *spec,
                          uint64_t seed, abft_prec_t prec, void *ptr, int64_t rows, int64_t cols,
                          int64_t ld, int site, int which, int firing, abft_flip_t *out) {
    ABFT_TRY(check_spec(spec));
    ABFT_RETURN_IF(abft_bad_matrix(rows, cols, ptr, ld), ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(spec->row >= rows || spec->col >= cols, ABFT_STATUS_INVALID_VALUE);
    int nbits = prec == ABFT_PREC_D ? 64 : 32;
    int32_t lo, hi;
    ABFT_TRY(bit_range(spec, nbits, &lo, &hi));
    int64_t ncand = abft_inject_ncand(rows, cols, spec->row, spec->col);
    ABFT_RETURN_IF(ncand < spec->nelems, ABFT_STATUS_INVALID_VALUE);

    abft_inject_rec_t rec[ABFT_INJECT_KMAX];
    abft_inject_args_t a = {prec, ptr, rows, cols, ld, spec->row < 0 ? -1 : spec->row,
                            spec->col < 0 ? -1 : spec->col, lo, hi, spec->width, spec->nelems,
                            seed, rec, kstate};
    if (h->backend == ABFT_BACKEND_CPU) {
        ABFT_TRY(abft_cpu_inject(&h->kctx, &a));
    } else {
#if ABFT_HAVE_CUDA
        ABFT_TRY(abft_cuda_inject(&h->kctx, &a));
#else
        return ABFT_STATUS_NOT_SUPPORTED;
#endif
    }
    for (int e = 0; e < spec->nelems; ++e) {
        abft_flip_t f;
        memset(&f, 0, sizeof f);
        f.site = site;
        f.which = which;
        f.firing = firing;
        f.precision = prec == ABFT_PREC_D ? 'd' : 's';
        f.row = rec[e].row;
        f.col = rec[e].col;
        f.bit = rec[e].bit;
        f.width = rec[e].width;
        f.old_bits = rec[e].old_bits;
        f.new_bits = rec[e].new_bits;
        f.old_value = bits_value(prec, rec[e].old_bits);
        f.new_value = bits_value(prec, rec[e].new_bits);
        out[e] = f;
    }
    return ABFT_STATUS_SUCCESS;
}

static void release_kstate(abft_handle_t h, void *kstate) {
    if (kstate == NULL) return;
#if ABFT_HAVE_CUDA
    if (h->backend == ABFT_BACKEND_CUDA) {
        abft_cuda_inject_release(kstate);
        return;
    }
#endif
    (void)h;
    abft_cpu_inject_release(kstate);
}

static abft_status_t direct(abft_handle_t h, const abft_fault_spec_t *spec, uint64_t seed,
                            abft_prec_t prec, int64_t m, int64_t n, void *A, int64_t lda,
                            abft_flip_t *flips, int64_t *nflips) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_RETURN_IF(flips == NULL || nflips == NULL, ABFT_STATUS_INVALID_VALUE);
    ABFT_TRY(check_spec(spec));
    void *kstate = NULL;
    abft_status_t st = fire(h, &kstate, spec, abft_inject_firing_seed(seed, 0), prec, A, m, n,
                            lda, -1, 0, 0, flips);
    release_kstate(h, kstate);
    if (st == ABFT_STATUS_SUCCESS) *nflips = spec->nelems;
    return st;
}

abft_status_t abft_dinject(abft_handle_t h, const abft_fault_spec_t *spec, uint64_t seed,
                           int64_t m, int64_t n, double *A, int64_t lda, abft_flip_t *flips,
                           int64_t *nflips) {
    return direct(h, spec, seed, ABFT_PREC_D, m, n, A, lda, flips, nflips);
}

abft_status_t abft_sinject(abft_handle_t h, const abft_fault_spec_t *spec, uint64_t seed,
                           int64_t m, int64_t n, float *A, int64_t lda, abft_flip_t *flips,
                           int64_t *nflips) {
    return direct(h, spec, seed, ABFT_PREC_S, m, n, A, lda, flips, nflips);
}

/* ---- injector ------------------------------------------------------------------------- */

abft_status_t abft_injector_create(abft_handle_t h, abft_injector_t *out) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_RETURN_IF(out == NULL, ABFT_STATUS_INVALID_VALUE);
    struct abft_injector *inj = (struct abft_injector *)calloc(1, sizeof *inj);
    ABFT_RETURN_IF(inj == NULL, ABFT_STATUS_ALLOC_FAILED);
    inj->handle = h;
    inj->spec = abft_fault_spec_default();
    inj->site_mask = (1u << ABFT_SITE_COUNT) - 1u;
    inj->which = -1;
    inj->max_firings = 1;
    *out = inj;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_injector_destroy(abft_injector_t inj) {
    if (inj == NULL) return ABFT_STATUS_SUCCESS;
    abft_handle_t h = inj->handle;
    if (abft_handle_ok(h)) {
        if (h->hook == abft_injector_hook && h->hook_user == inj) abft_set_hook(h, NULL, NULL);
        release_kstate(h, inj->kstate);
    }
    free(inj->flips);
    free(inj);
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_injector_set_spec(abft_injector_t inj, const abft_fault_spec_t *spec) {
    ABFT_RETURN_IF(inj == NULL, ABFT_STATUS_NOT_INITIALIZED);
    ABFT_TRY(check_spec(spec));
    inj->spec = *spec;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_injector_set_targets(abft_injector_t inj, uint32_t site_mask, int which,
                                        int max_firings) {
    ABFT_RETURN_IF(inj == NULL, ABFT_STATUS_NOT_INITIALIZED);
    ABFT_RETURN_IF((site_mask >> ABFT_SITE_COUNT) != 0u, ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(which < -1 || max_firings < 0, ABFT_STATUS_INVALID_VALUE);
    inj->site_mask = site_mask;
    inj->which = which;
    inj->max_firings = max_firings;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_injector_arm(abft_injector_t inj, uint64_t seed) {
    ABFT_RETURN_IF(inj == NULL, ABFT_STATUS_NOT_INITIALIZED);
    inj->seed = seed;
    inj->firings = 0;
    inj->nflips = 0;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_injector_attach(abft_injector_t inj) {
    ABFT_RETURN_IF(inj == NULL, ABFT_STATUS_NOT_INITIALIZED);
    return abft_set_hook(inj->handle, abft_injector_hook, inj);
}

abft_status_t abft_injector_detach(abft_injector_t inj) {
    ABFT_RETURN_IF(inj == NULL, ABFT_STATUS_NOT_INITIALIZED);
    abft_handle_t h = inj->handle;
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    if (h->hook == abft_injector_hook && h->hook_user == inj) return abft_set_hook(h, NULL, NULL);
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_injector_flips(abft_injector_t inj, const abft_flip_t **flips,
                                  int64_t *nflips) {
    ABFT_RETURN_IF(inj == NULL, ABFT_STATUS_NOT_INITIALIZED);
    ABFT_RETURN_IF(flips == NULL || nflips == NULL, ABFT_STATUS_INVALID_VALUE);
    *flips = inj->flips;
    *nflips = inj->nflips;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_injector_hook(void *user, abft_hook_site_t site, int which, char precision,
                                 void *ptr, int64_t rows, int64_t cols, int64_t ld) {
    struct abft_injector *inj = (struct abft_injector *)user;
    ABFT_RETURN_IF(inj == NULL || !abft_handle_ok(inj->handle), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_RETURN_IF(precision != 'd' && precision != 's', ABFT_STATUS_INVALID_VALUE);
    if ((unsigned)site >= ABFT_SITE_COUNT || !(inj->site_mask & (1u << site))) {
        return ABFT_STATUS_SUCCESS;
    }
    if (inj->which >= 0 && which != inj->which) return ABFT_STATUS_SUCCESS;
    if (inj->max_firings > 0 && inj->firings >= inj->max_firings) return ABFT_STATUS_SUCCESS;
    int64_t need = inj->nflips + inj->spec.nelems;
    if (need > inj->cap) {
        int64_t cap = inj->cap > 0 ? inj->cap * 2 : 64;
        while (cap < need) cap *= 2;
        abft_flip_t *p = (abft_flip_t *)realloc(inj->flips, (size_t)cap * sizeof *p);
        ABFT_RETURN_IF(p == NULL, ABFT_STATUS_ALLOC_FAILED);
        inj->flips = p;
        inj->cap = cap;
    }
    abft_prec_t prec = precision == 'd' ? ABFT_PREC_D : ABFT_PREC_S;
    ABFT_TRY(fire(inj->handle, &inj->kstate, &inj->spec,
                  abft_inject_firing_seed(inj->seed, inj->firings), prec, ptr, rows, cols, ld,
                  (int)site, which, (int)inj->firings, inj->flips + inj->nflips));
    inj->nflips = need;
    inj->firings += 1;
    return ABFT_STATUS_SUCCESS;
}

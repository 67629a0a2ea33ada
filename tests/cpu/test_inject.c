/* The bit-flip injector on the CPU backend: the flipped bits are the recorded ones, a seed
 * replays the same faults, bit classes / rows / columns / widths are respected, bad specs
 * change nothing, and the injector fires from the hook of a protected GEMM. */
#include <math.h>
#include <string.h>

#include "testutil.h"

static const int lo_d[] = {0, 63, 52, 26, 0}, hi_d[] = {63, 63, 62, 51, 25};
static const int lo_s[] = {0, 31, 23, 12, 0}, hi_s[] = {31, 31, 30, 22, 11};

static uint64_t bits_d(double v) {
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}
static uint32_t bits_s(float v) {
    uint32_t b;
    memcpy(&b, &v, 4);
    return b;
}

/* Every element differs from the copy exactly where a flip was recorded, by exactly the
 * recorded bits, with the recorded old and new values. */
static void check_flips_d(const double *before, const double *after, int64_t m, int64_t n,
                          int64_t ld, const abft_flip_t *f, int64_t nf, const abft_fault_spec_t *s,
                          uint64_t seed) {
    int64_t ndiff = 0;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < ld; ++i)
            if (bits_d(before[i + j * ld]) != bits_d(after[i + j * ld])) ++ndiff;
    TU_CHECK(ndiff == nf, "seed %llu: %lld elements changed, %lld flips recorded",
             (unsigned long long)seed, (long long)ndiff, (long long)nf);
    for (int64_t e = 0; e < nf; ++e) {
        TU_CHECK(f[e].row >= 0 && f[e].row < m && f[e].col >= 0 && f[e].col < n,
                 "seed %llu: flip at [%lld, %lld] outside %lld x %lld", (unsigned long long)seed,
                 (long long)f[e].row, (long long)f[e].col, (long long)m, (long long)n);
        if (!(f[e].row >= 0 && f[e].row < m && f[e].col >= 0 && f[e].col < n)) continue;
        int64_t t = f[e].row + f[e].col * ld;
        uint64_t mask = ((f[e].width == 2 ? 3ull : 1ull) << f[e].bit);
        TU_CHECK((bits_d(before[t]) ^ bits_d(after[t])) == mask,
                 "seed %llu: element [%lld, %lld] changed by 0x%llx, recorded bit %d width %d",
                 (unsigned long long)seed, (long long)f[e].row, (long long)f[e].col,
                 (unsigned long long)(bits_d(before[t]) ^ bits_d(after[t])), f[e].bit, f[e].width);
        TU_CHECK(f[e].old_bits == bits_d(before[t]) && f[e].new_bits == bits_d(after[t]),
                 "seed %llu: recorded bits 0x%llx -> 0x%llx, array 0x%llx -> 0x%llx",
                 (unsigned long long)seed, (unsigned long long)f[e].old_bits,
                 (unsigned long long)f[e].new_bits, (unsigned long long)bits_d(before[t]),
                 (unsigned long long)bits_d(after[t]));
        TU_CHECK(bits_d(f[e].old_value) == bits_d(before[t]) &&
                     bits_d(f[e].new_value) == bits_d(after[t]),
                 "seed %llu: recorded values %.17g -> %.17g", (unsigned long long)seed,
                 f[e].old_value, f[e].new_value);
        if (s->bit_class == ABFT_BITS_EXACT) {
            TU_CHECK(f[e].bit == s->bit, "seed %llu: exact bit %d, flipped %d",
                     (unsigned long long)seed, s->bit, f[e].bit);
        } else {
            int lo = lo_d[s->bit_class], hi = hi_d[s->bit_class];
            if (hi > 64 - s->width) hi = 64 - s->width;
            if (lo > hi) lo = hi;
            TU_CHECK(f[e].bit >= lo && f[e].bit <= hi, "seed %llu: class %d bit %d outside [%d, %d]",
                     (unsigned long long)seed, s->bit_class, f[e].bit, lo, hi);
        }
        if (s->row >= 0) TU_CHECK(f[e].row == s->row, "row %lld != %lld", (long long)f[e].row, (long long)s->row);
        if (s->col >= 0) TU_CHECK(f[e].col == s->col, "col %lld != %lld", (long long)f[e].col, (long long)s->col);
        for (int64_t q = 0; q < e; ++q)
            TU_CHECK(f[q].row != f[e].row || f[q].col != f[e].col,
                     "seed %llu: flips %lld and %lld hit the same element", (unsigned long long)seed,
                     (long long)q, (long long)e);
    }
}

static void test_direct_d(abft_handle_t h, tu_rng_t *r) {
    const int64_t m = 37, n = 23, ld = 41;
    double *A = tu_alloc_d(ld * n), *B = tu_alloc_d(ld * n);
    abft_flip_t f[ABFT_INJECT_MAX_ELEMS], g[ABFT_INJECT_MAX_ELEMS];
    int seen[64] = {0};
    /* 1200 draws: at 400 a seed left one bit position unflipped (seed 465434516308815) */
    for (int it = 0; it < 1200; ++it) {
        abft_fault_spec_t s = abft_fault_spec_default();
        s.bit_class = (int32_t)tu_int(r, 0, 5);
        s.bit = (int32_t)tu_int(r, 0, 62);
        s.width = (int32_t)tu_int(r, 1, 2);
        s.nelems = (int32_t)tu_int(r, 1, it % 7 == 0 ? 40 : 3);
        s.row = tu_int(r, 0, 3) == 0 ? tu_int(r, 0, m - 1) : -1;
        s.col = tu_int(r, 0, 3) == 0 ? tu_int(r, 0, n - 1) : -1;
        int64_t ncand = (s.row < 0 ? m : 1) * (s.col < 0 ? n : 1);
        if (s.nelems > ncand) s.nelems = (int32_t)ncand;
        uint64_t seed = tu_next(r);
        tu_fill_d(r, TU_WIDE, m, n, A, ld);
        memcpy(B, A, sizeof(double) * (size_t)(ld * n));
        int64_t nf = -1, ng = -1;
        TU_CHECK_STATUS(abft_dinject(h, &s, seed, m, n, A, ld, f, &nf), ABFT_STATUS_SUCCESS);
        TU_CHECK(nf == s.nelems, "nflips %lld, spec %d", (long long)nf, s.nelems);
        check_flips_d(B, A, m, n, ld, f, nf, &s, seed);
        for (int64_t e = 0; e < nf; ++e) seen[f[e].bit] = 1;
        /* replay: the same seed on the same data flips the same bits */
        memcpy(A, B, sizeof(double) * (size_t)(ld * n));
        TU_CHECK_STATUS(abft_dinject(h, &s, seed, m, n, A, ld, g, &ng), ABFT_STATUS_SUCCESS);
        TU_CHECK(ng == nf && memcmp(f, g, sizeof(abft_flip_t) * (size_t)nf) == 0,
                 "seed %llu: replay gave different flips", (unsigned long long)seed);
    }
    int nseen = 0;
    for (int b = 0; b < 64; ++b) nseen += seen[b];
    TU_CHECK(nseen == 64, "only %d of 64 bit positions were ever flipped", nseen);
    free(A);
    free(B);
}

static void test_direct_s(abft_handle_t h, tu_rng_t *r) {
    const int64_t m = 19, n = 11, ld = 20;
    float *A = tu_alloc_s(ld * n), *B = tu_alloc_s(ld * n);
    abft_flip_t f[ABFT_INJECT_MAX_ELEMS];
    for (int it = 0; it < 300; ++it) {
        abft_fault_spec_t s = abft_fault_spec_default();
        s.bit_class = (int32_t)tu_int(r, 0, 5);
        s.bit = (int32_t)tu_int(r, 0, 30);
        s.width = (int32_t)tu_int(r, 1, 2);
        s.nelems = (int32_t)tu_int(r, 1, 4);
        uint64_t seed = tu_next(r);
        tu_fill_s(r, TU_UNIFORM, m, n, A, ld);
        memcpy(B, A, sizeof(float) * (size_t)(ld * n));
        int64_t nf = 0;
        TU_CHECK_STATUS(abft_sinject(h, &s, seed, m, n, A, ld, f, &nf), ABFT_STATUS_SUCCESS);
        int64_t ndiff = 0;
        for (int64_t t = 0; t < ld * n; ++t) ndiff += bits_s(A[t]) != bits_s(B[t]);
        TU_CHECK(ndiff == nf, "seed %llu: %lld changed, %lld recorded", (unsigned long long)seed,
                 (long long)ndiff, (long long)nf);
        for (int64_t e = 0; e < nf; ++e) {
            int64_t t = f[e].row + f[e].col * ld;
            uint32_t mask = (f[e].width == 2 ? 3u : 1u) << f[e].bit;
            TU_CHECK((bits_s(A[t]) ^ bits_s(B[t])) == mask && f[e].old_bits == bits_s(B[t]) &&
                         f[e].new_bits == bits_s(A[t]) && f[e].precision == 's',
                     "seed %llu: fp32 flip %lld not as recorded (bit %d)", (unsigned long long)seed,
                     (long long)e, f[e].bit);
            TU_CHECK((double)B[t] == f[e].old_value || (isnan(B[t]) && isnan(f[e].old_value)),
                     "old value %.9g recorded %.9g", (double)B[t], f[e].old_value);
            int lo = s.bit_class == ABFT_BITS_EXACT ? s.bit : lo_s[s.bit_class];
            int hi = s.bit_class == ABFT_BITS_EXACT ? s.bit : hi_s[s.bit_class];
            if (hi > 32 - s.width) hi = 32 - s.width;
            if (lo > hi) lo = hi;
            TU_CHECK(f[e].bit >= lo && f[e].bit <= hi, "fp32 class %d bit %d outside [%d, %d]",
                     s.bit_class, f[e].bit, lo, hi);
        }
    }
    free(A);
    free(B);
}

static void test_bad_specs(abft_handle_t h) {
    double A[12];
    for (int t = 0; t < 12; ++t) A[t] = t + 0.5;
    abft_flip_t f[ABFT_INJECT_MAX_ELEMS];
    int64_t nf = 0;
    abft_fault_spec_t s = abft_fault_spec_default();
    s.bit_class = ABFT_BITS_EXACT;
    s.bit = 63;
    s.width = 2; /* leaves the word */
    TU_CHECK_STATUS(abft_dinject(h, &s, 1, 3, 4, A, 3, f, &nf), ABFT_STATUS_INVALID_VALUE);
    s = abft_fault_spec_default();
    s.nelems = 13; /* more than 12 elements */
    TU_CHECK_STATUS(abft_dinject(h, &s, 1, 3, 4, A, 3, f, &nf), ABFT_STATUS_INVALID_VALUE);
    s = abft_fault_spec_default();
    s.row = 3; /* out of range */
    TU_CHECK_STATUS(abft_dinject(h, &s, 1, 3, 4, A, 3, f, &nf), ABFT_STATUS_INVALID_VALUE);
    s = abft_fault_spec_default();
    s.bit_class = 9;
    TU_CHECK_STATUS(abft_dinject(h, &s, 1, 3, 4, A, 3, f, &nf), ABFT_STATUS_INVALID_VALUE);
    s = abft_fault_spec_default();
    float F[4] = {1, 2, 3, 4};
    s.bit_class = ABFT_BITS_EXACT;
    s.bit = 40; /* beyond an fp32 word */
    TU_CHECK_STATUS(abft_sinject(h, &s, 1, 2, 2, F, 2, f, &nf), ABFT_STATUS_INVALID_VALUE);
    for (int t = 0; t < 12; ++t) TU_CHECK(A[t] == t + 0.5, "A[%d] changed by a refused spec", t);
    for (int t = 0; t < 4; ++t) TU_CHECK(F[t] == t + 1, "F[%d] changed by a refused spec", t);
    TU_CHECK_STATUS(abft_dinject(NULL, &s, 1, 3, 4, A, 3, f, &nf), ABFT_STATUS_NOT_INITIALIZED);
    TU_CHECK(abft_flip_bits_d(1.0, 63, 1) == -1.0, "sign flip of 1.0");
    TU_CHECK(abft_flip_bits_d(1.0, 52, 1) == 0.5, "lowest exponent bit of 1.0: %g",
             abft_flip_bits_d(1.0, 52, 1));
    TU_CHECK(abft_flip_bits_s(1.0f, 31, 1) == -1.0f, "fp32 sign flip");
    TU_CHECK(abft_flip_bits_s(1.0f, 0, 2) == nextafterf(nextafterf(nextafterf(1.0f, 2.f), 2.f), 2.f),
             "fp32 two low bits of 1.0");
}

/* The injector fires from the hook of a protected GEMM at the chosen site only, records the
 * site, respects max_firings, and replays from its seed. */
static void test_hook(abft_handle_t h, tu_rng_t *r) {
    const int64_t n = 48;
    double *A = tu_alloc_d(n * n), *B = tu_alloc_d(n * n), *C = tu_alloc_d(n * n);
    tu_fill_d(r, TU_UNIFORM, n, n, A, n);
    tu_fill_d(r, TU_UNIFORM, n, n, B, n);
    abft_injector_t inj = NULL;
    TU_CHECK_STATUS(abft_injector_create(h, &inj), ABFT_STATUS_SUCCESS);
    abft_fault_spec_t s = abft_fault_spec_default();
    s.bit_class = ABFT_BITS_EXPONENT;
    TU_CHECK_STATUS(abft_injector_set_spec(inj, &s), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_injector_attach(inj), ABFT_STATUS_SUCCESS);
    const abft_flip_t *f = NULL;
    int64_t nf = 0;
    abft_flip_t first;
    memset(&first, 0, sizeof first);
    for (int rep = 0; rep < 2; ++rep) {
        TU_CHECK_STATUS(abft_injector_set_targets(inj, 1u << ABFT_SITE_AFTER_GEMM, -1, 1),
                        ABFT_STATUS_SUCCESS);
        TU_CHECK_STATUS(abft_injector_arm(inj, 12345), ABFT_STATUS_SUCCESS);
        abft_report_t rpt;
        abft_status_t st = abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, n, n, n, 1.0, A, n, B, n, 0.0, C, n,
                                      &rpt);
        TU_CHECK(st == ABFT_STATUS_SUCCESS, "dgemm: %s", abft_status_name(st));
        TU_CHECK_STATUS(abft_injector_flips(inj, &f, &nf), ABFT_STATUS_SUCCESS);
        TU_CHECK(nf == 1, "AFTER_GEMM with one firing: %lld flips", (long long)nf);
        if (nf < 1) break;
        TU_CHECK(f[0].site == ABFT_SITE_AFTER_GEMM && f[0].precision == 'd' && f[0].firing == 0,
                 "flip site %d precision %c firing %d", f[0].site, f[0].precision, f[0].firing);
        TU_CHECK(rpt.detected >= 1, "an exponent flip in C went undetected (bit %d, %.17g -> %.17g)",
                 f[0].bit, f[0].old_value, f[0].new_value);
        if (rep == 0) first = f[0];
        else TU_CHECK(memcmp(&first, &f[0], sizeof first) == 0, "re-arming with the same seed "
                      "flipped bit %d of [%lld, %lld], first time bit %d of [%lld, %lld]",
                      f[0].bit, (long long)f[0].row, (long long)f[0].col, first.bit,
                      (long long)first.row, (long long)first.col);
    }
    /* every site, unlimited firings: encode A, B, checksum, mid, after all fire */
    TU_CHECK_STATUS(abft_injector_set_targets(inj, (1u << ABFT_SITE_COUNT) - 1u, -1, 0),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_injector_arm(inj, 99), ABFT_STATUS_SUCCESS);
    abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, n, n, n, 1.0, A, n, B, n, 0.0, C, n, NULL);
    TU_CHECK_STATUS(abft_injector_flips(inj, &f, &nf), ABFT_STATUS_SUCCESS);
    int sites = 0;
    for (int64_t e = 0; e < nf; ++e) sites |= 1 << f[e].site;
    int want = (1 << ABFT_SITE_AFTER_ENCODE) | (1 << ABFT_SITE_MID_GEMM) |
               (1 << ABFT_SITE_AFTER_GEMM) | (1 << ABFT_SITE_CHECKSUM);
    TU_CHECK((sites & want) == want, "sites fired 0x%x, expected at least 0x%x", sites, want);
    /* site mask 0: nothing fires */
    TU_CHECK_STATUS(abft_injector_set_targets(inj, 0u, -1, 0), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_injector_arm(inj, 5), ABFT_STATUS_SUCCESS);
    abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, n, n, n, 1.0, A, n, B, n, 0.0, C, n, NULL);
    TU_CHECK_STATUS(abft_injector_flips(inj, &f, &nf), ABFT_STATUS_SUCCESS);
    TU_CHECK(nf == 0, "mask 0 fired %lld times", (long long)nf);
    TU_CHECK_STATUS(abft_injector_set_targets(inj, 1u << 20, -1, 0), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_injector_destroy(inj), ABFT_STATUS_SUCCESS);
    free(A);
    free(B);
    free(C);
}

int main(void) {
    uint64_t seed = tu_seed("test_inject");
    tu_rng_t r;
    tu_rng_init(&r, seed);
    abft_handle_t h = NULL;
    TU_CHECK_STATUS(abft_create(&h, ABFT_BACKEND_CPU), ABFT_STATUS_SUCCESS);
    test_direct_d(h, &r);
    test_direct_s(h, &r);
    test_bad_specs(h);
    test_hook(h, &r);
    abft_destroy(h);
    return tu_finish("test_inject");
}

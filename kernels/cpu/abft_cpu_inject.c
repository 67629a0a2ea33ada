/* abft CPU backend: bit flips in host memory from a xoshiro256** stream. */
#include <string.h>

#include "abft_inject_kernels.h"

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void abft_cpu_inject_words(uint64_t seed, uint32_t *w, int n) {
    /* xoshiro256**: the state is filled by splitmix64 as its authors recommend, so any
     * seed (0 included) gives a good stream. Each 64-bit output gives two words. */
    uint64_t sm = seed, s[4];
    for (int t = 0; t < 4; ++t) s[t] = splitmix64(&sm);
    for (int t = 0; t < n; t += 2) {
        uint64_t r = rotl(s[1] * 5, 7) * 9;
        uint64_t x = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= x;
        s[3] = rotl(s[3], 45);
        w[t] = (uint32_t)(r >> 32);
        if (t + 1 < n) w[t + 1] = (uint32_t)r;
    }
}

abft_status_t abft_cpu_inject(const abft_kctx_t *ctx, const abft_inject_args_t *a) {
    (void)ctx;
    uint32_t w[ABFT_INJECT_WORDS_PER_ELEM * ABFT_INJECT_KMAX];
    int64_t taken[ABFT_INJECT_KMAX];
    int nw = ABFT_INJECT_WORDS_PER_ELEM * a->nelems;
    abft_cpu_inject_words(a->seed, w, nw);
    int64_t ncand = abft_inject_ncand(a->rows, a->cols, a->row, a->col);
    int32_t nbits = a->prec == ABFT_PREC_D ? 64 : 32;
    for (int e = 0; e < a->nelems; ++e) {
        int64_t i, j;
        int32_t bit;
        abft_inject_map(w, e, taken, ncand, a->bit_lo, a->bit_hi, a->width, nbits, &taken[e],
                        &bit);
        abft_inject_pos(taken[e], a->rows, a->row, a->col, &i, &j);
        uint64_t mask = abft_inject_mask(bit, a->width), old_bits, new_bits;
        if (a->prec == ABFT_PREC_D) {
            double *p = (double *)a->ptr + i + j * a->ld;
            memcpy(&old_bits, p, 8);
            new_bits = old_bits ^ mask;
            memcpy(p, &new_bits, 8);
        } else {
            float *p = (float *)a->ptr + i + j * a->ld;
            uint32_t o;
            memcpy(&o, p, 4);
            uint32_t nb = o ^ (uint32_t)mask;
            memcpy(p, &nb, 4);
            old_bits = o;
            new_bits = nb;
        }
        abft_inject_rec_t r = {i, j, bit, a->width, old_bits, new_bits};
        a->rec[e] = r;
    }
    return ABFT_STATUS_SUCCESS;
}

void abft_cpu_inject_release(void *state) { (void)state; }

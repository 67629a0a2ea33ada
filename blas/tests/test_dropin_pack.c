/* The packed-image copies of libabft_blas.so (blas/abft_blas_pack.c), which the staging to
 * the GPU cuts into chunks of any byte length: for random shapes (rows and columns from 0,
 * leading dimensions above the rows, element sizes 4 and 8) and random chunk lengths
 * (1 byte up to the whole image, most not multiples of a column or an element) taken in a
 * random order, each chunk packed into a buffer of exactly its length must hold those bytes
 * of the matrix's columns one after the other and nothing past them (canary bytes), and
 * unpacking each from such a buffer into a second matrix must reproduce the first, with
 * nothing read past the chunk (a different canary would land in a neighbour) and the
 * padding of the second matrix keeping its sentinel bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abft_blas_internal.h"
#include "testutil.h"

enum { GUARD = 16 }; /* canary bytes after every chunk buffer */

/* A chunk buffer of exactly len bytes followed by GUARD canary bytes (an overrun of the
 * chunk shows as a changed canary, and under AddressSanitizer as a heap overflow when it
 * goes further). */
static unsigned char *chunk_alloc(size_t len, unsigned char canary) {
    unsigned char *b = malloc(len + GUARD);
    if (b == NULL) {
        printf("test_dropin_pack: out of memory\n");
        exit(1);
    }
    memset(b + len, canary, GUARD);
    return b;
}

static int canary_ok(const unsigned char *b, size_t len, unsigned char canary) {
    for (size_t i = 0; i < GUARD; ++i)
        if (b[len + i] != canary) return 0;
    return 1;
}

static int check_shape(tu_rng_t *r, int64_t rows, int64_t cols, int64_t ld, size_t es) {
    const size_t mat_bytes = (size_t)ld * (size_t)(cols > 0 ? cols : 1) * es;
    const size_t total = (size_t)rows * (size_t)cols * es;
    unsigned char *mat = malloc(mat_bytes), *back = malloc(mat_bytes);
    unsigned char *want = malloc(total + 1);
    size_t *cut = malloc(sizeof(size_t) * (total + 2));
    size_t *order = malloc(sizeof(size_t) * (total + 1));
    if (mat == NULL || back == NULL || want == NULL || cut == NULL || order == NULL) {
        printf("test_dropin_pack: out of memory\n");
        exit(1);
    }
    for (size_t b = 0; b < mat_bytes; ++b) mat[b] = (unsigned char)tu_next(r);
    memset(back, 0xA5, mat_bytes); /* sentinel: the padding must keep it */
    for (int64_t j = 0; j < cols; ++j) /* the image, element by element */
        for (int64_t i = 0; i < rows; ++i)
            memcpy(want + ((size_t)j * (size_t)rows + (size_t)i) * es,
                   mat + ((size_t)j * (size_t)ld + (size_t)i) * es, es);
    /* cut the image into chunks: a random mix of tiny, odd and large lengths */
    size_t nchunks = 0, off = 0;
    cut[0] = 0;
    while (off < total) {
        size_t len;
        switch (tu_int(r, 0, 3)) {
        case 0: len = (size_t)tu_int(r, 1, 3); break;
        case 1: len = (size_t)tu_int(r, 1, (int64_t)(rows * (int64_t)es) + 5); break;
        case 2: len = (size_t)tu_int(r, 1, (int64_t)total); break;
        default: len = es * (size_t)tu_int(r, 1, 7); break;
        }
        if (len > total - off) len = total - off;
        off += len;
        cut[++nchunks] = off;
    }
    /* the chunks in a random order (an overrun into a neighbour already done shows) */
    for (size_t c = 0; c < nchunks; ++c) order[c] = c;
    for (size_t c = nchunks; c > 1; --c) {
        size_t x = (size_t)tu_int(r, 0, (int64_t)c - 1), y = order[c - 1];
        order[c - 1] = order[x], order[x] = y;
    }
    int bad = 0;
    for (size_t o = 0; o < nchunks && !bad; ++o) {
        const size_t c = order[o], coff = cut[c], len = cut[c + 1] - cut[c];
        /* pack into an exact buffer: the bytes of the image, nothing written past them */
        unsigned char *buf = chunk_alloc(len, 0x3C);
        abft_blas_pack_bytes(buf, mat, ld, rows, es, coff, len);
        if (memcmp(buf, want + coff, len) != 0) bad = 1;
        if (!canary_ok(buf, len, 0x3C)) bad = 4;
        /* unpack from an exact buffer whose canary differs from the image: a read past the
         * chunk would write canary bytes over a neighbour */
        memset(buf + len, 0xC3, GUARD);
        abft_blas_unpack_bytes(back, ld, buf, rows, es, coff, len);
        free(buf);
    }
    for (int64_t j = 0; j < cols && !bad; ++j) {
        const unsigned char *a = mat + (size_t)j * (size_t)ld * es;
        const unsigned char *b = back + (size_t)j * (size_t)ld * es;
        if (memcmp(a, b, (size_t)rows * es) != 0) bad = 2;
        for (size_t p = (size_t)rows * es; p < (size_t)ld * es && !bad; ++p)
            if (b[p] != 0xA5) bad = 3;
    }
    if (bad)
        printf("test_dropin_pack: FAILED (%s) rows %lld cols %lld ld %lld es %zu, %zu chunks\n",
               bad == 1   ? "packed image"
               : bad == 2 ? "unpacked matrix"
               : bad == 3 ? "padding written"
                          : "written past the chunk",
               (long long)rows, (long long)cols, (long long)ld, es, nchunks);
    free(mat), free(back), free(want), free(cut), free(order);
    return bad != 0;
}

int main(void) {
    tu_rng_t r;
    tu_rng_init(&r, tu_seed("test_dropin_pack"));
    int failed = 0, shapes = 0;
    /* the edges: empty, one element, one column, no padding */
    const int64_t fixed[][3] = {{0, 0, 1}, {0, 5, 1}, {5, 0, 5}, {1, 1, 1}, {1, 1, 3},
                                {7, 1, 7}, {7, 1, 9}, {1, 9, 1}, {1, 9, 4}, {13, 11, 13}};
    for (size_t f = 0; f < sizeof fixed / sizeof fixed[0]; ++f)
        for (size_t es = 4; es <= 8; es += 4, ++shapes)
            failed += check_shape(&r, fixed[f][0], fixed[f][1], fixed[f][2], es);
    for (int t = 0; t < 400; ++t, ++shapes) {
        int64_t rows = tu_int(&r, 0, 70), cols = tu_int(&r, 0, 40);
        int64_t ld = rows + (tu_int(&r, 0, 2) == 0 ? 0 : tu_int(&r, 1, 9));
        if (ld < 1) ld = 1;
        failed += check_shape(&r, rows, cols, ld, tu_int(&r, 0, 1) ? 8 : 4);
    }
    if (failed) {
        printf("test_dropin_pack: %d of %d shapes FAILED\n", failed, shapes);
        return 1;
    }
    printf("test_dropin_pack: %d shapes, packed and unpacked in random chunks: passed\n",
           shapes);
    return 0;
}

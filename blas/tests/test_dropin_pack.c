/* The packed-image copies of libabft_blas.so (blas/abft_blas_pack.c), which the staging to
 * the GPU cuts into chunks of any byte length: for random shapes (rows and columns from 0,
 * leading dimensions above the rows, element sizes 4 and 8) and random chunk lengths
 * (1 byte up to the whole image, most not multiples of a column or an element), packing
 * chunk by chunk must give the matrix's columns one after the other, unpacking them chunk by
 * chunk into a second matrix must reproduce the first, and the padding of both must keep
 * its sentinel bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abft_blas_internal.h"
#include "testutil.h"

static int check_shape(tu_rng_t *r, int64_t rows, int64_t cols, int64_t ld, size_t es) {
    const size_t mat_bytes = (size_t)ld * (size_t)(cols > 0 ? cols : 1) * es;
    const size_t total = (size_t)rows * (size_t)cols * es;
    unsigned char *mat = malloc(mat_bytes), *back = malloc(mat_bytes);
    unsigned char *img = malloc(total + 1), *want = malloc(total + 1);
    if (mat == NULL || back == NULL || img == NULL || want == NULL) {
        printf("test_dropin_pack: out of memory\n");
        exit(1);
    }
    for (size_t b = 0; b < mat_bytes; ++b) mat[b] = (unsigned char)tu_next(r);
    memset(back, 0xA5, mat_bytes); /* sentinel: the padding must keep it */
    for (int64_t j = 0; j < cols; ++j) /* the image, element by element */
        for (int64_t i = 0; i < rows; ++i)
            memcpy(want + ((size_t)j * (size_t)rows + (size_t)i) * es,
                   mat + ((size_t)j * (size_t)ld + (size_t)i) * es, es);
    memset(img, 0x5A, total + 1);
    /* chunk lengths: a random mix of tiny, odd and large */
    size_t off = 0;
    int chunks = 0;
    while (off < total) {
        size_t len;
        switch (tu_int(r, 0, 3)) {
        case 0: len = (size_t)tu_int(r, 1, 3); break;
        case 1: len = (size_t)tu_int(r, 1, (int64_t)(rows * (int64_t)es) + 5); break;
        case 2: len = (size_t)tu_int(r, 1, (int64_t)total); break;
        default: len = es * (size_t)tu_int(r, 1, 7); break;
        }
        if (len > total - off) len = total - off;
        abft_blas_pack_bytes(img + off, mat, ld, rows, es, off, len);
        off += len, ++chunks;
    }
    int bad = 0;
    if (memcmp(img, want, total) != 0 || img[total] != 0x5A) bad = 1;
    /* unpack in a different random cut */
    off = 0;
    while (off < total) {
        size_t len = (size_t)tu_int(r, 1, (int64_t)(total < 97 ? total : 97));
        if (tu_int(r, 0, 4) == 0) len = total - off;
        if (len > total - off) len = total - off;
        abft_blas_unpack_bytes(back, ld, img + off, rows, es, off, len);
        off += len;
    }
    for (int64_t j = 0; j < cols && !bad; ++j) {
        const unsigned char *a = mat + (size_t)j * (size_t)ld * es;
        const unsigned char *b = back + (size_t)j * (size_t)ld * es;
        if (memcmp(a, b, (size_t)rows * es) != 0) bad = 2;
        for (size_t p = (size_t)rows * es; p < (size_t)ld * es && !bad; ++p)
            if (b[p] != 0xA5) bad = 3;
    }
    if (bad)
        printf("test_dropin_pack: FAILED (%s) rows %lld cols %lld ld %lld es %zu, %d chunks\n",
               bad == 1 ? "packed image" : bad == 2 ? "unpacked matrix" : "padding written",
               (long long)rows, (long long)cols, (long long)ld, es, chunks);
    free(mat), free(back), free(img), free(want);
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

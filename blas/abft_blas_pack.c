/* libabft_blas.so: copies between a strided column-major matrix and its packed image.
 *
 * The packed image of a rows x cols matrix of es-byte elements (leading dimension ld >= rows)
 * is its columns one after the other, rows·cols·es bytes. The staging to the GPU moves that
 * image in chunks of any byte length (a chunk may begin and end inside a column), and the
 * saved copies of outputs are whole images: both go through these two functions. The
 * padding between columns (rows <= i < ld) is never read or written. */
#include <string.h>

#include "abft_blas_internal.h"

void abft_blas_pack_bytes(void *buf, const void *mat, int64_t ld, int64_t rows, size_t es,
                          size_t off, size_t len) {
    const size_t col = (size_t)rows * es, ldb = (size_t)ld * es;
    if (len == 0) return;
    if (ld == rows) { /* no padding: the image is the matrix */
        memcpy(buf, (const char *)mat + off, len);
        return;
    }
    size_t j = off / col, r = off % col;
    char *d = (char *)buf;
    while (len > 0) {
        size_t piece = col - r < len ? col - r : len;
        memcpy(d, (const char *)mat + j * ldb + r, piece);
        d += piece, len -= piece, r = 0, ++j;
    }
}

void abft_blas_unpack_bytes(void *mat, int64_t ld, const void *buf, int64_t rows, size_t es,
                            size_t off, size_t len) {
    const size_t col = (size_t)rows * es, ldb = (size_t)ld * es;
    if (len == 0) return;
    if (ld == rows) {
        memcpy((char *)mat + off, buf, len);
        return;
    }
    size_t j = off / col, r = off % col;
    const char *s = (const char *)buf;
    while (len > 0) {
        size_t piece = col - r < len ? col - r : len;
        memcpy((char *)mat + j * ldb + r, s, piece);
        s += piece, len -= piece, r = 0, ++j;
    }
}

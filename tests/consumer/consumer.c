/* A tiny program built against an installed abft through find_package(abft). */
#include <abft/abft.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    if (abft_version_number() != ABFT_VERSION_NUMBER ||
        strcmp(abft_version_string(), ABFT_VERSION_STRING) != 0) {
        fprintf(stderr, "version mismatch: header %s, library %s\n", ABFT_VERSION_STRING,
                abft_version_string());
        return 1;
    }
    abft_handle_t h = NULL;
    abft_status_t st = abft_create(&h, ABFT_BACKEND_CPU);
    if (st != ABFT_STATUS_SUCCESS) {
        fprintf(stderr, "abft_create: %s\n", abft_status_name(st));
        return 1;
    }
    const double A[4] = {1, 2, 3, 4}; /* 2 x 2, column-major */
    double R[4];
    st = abft_dchecksum_rows(h, 2, 2, A, 2, R, 2, NULL, 0);
    abft_destroy(h);
    /* row sums 4, 6; weighted sums 1*1 + 2*3 = 7, 1*2 + 2*4 = 10 */
    if (st != ABFT_STATUS_SUCCESS || R[0] != 4 || R[1] != 6 || R[2] != 7 || R[3] != 10) {
        fprintf(stderr, "checksums wrong: %s %g %g %g %g\n", abft_status_name(st), R[0], R[1],
                R[2], R[3]);
        return 1;
    }
    printf("consumer OK (abft %s)\n", abft_version_string());
    return 0;
}

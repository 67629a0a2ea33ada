/* Checks for test and benchmark programs (never library code): print the failing call and
 * its error, then exit(1). */
#ifndef ABFT_TESTUTIL_CUDA_H
#define ABFT_TESTUTIL_CUDA_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "abft/abft.h"

#define TU_FAIL_IF(cond, x, fmt, val)                                                   \
    do {                                                                                \
        if (cond) {                                                                     \
            fprintf(stderr, "%s:%d: %s: " fmt "\n", __FILE__, __LINE__, #x, val);       \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* A CUDA runtime call. */
#define TU_CUDA_OK(x)                                                                   \
    do {                                                                                \
        cudaError_t tu_e_ = (x);                                                        \
        TU_FAIL_IF(tu_e_ != cudaSuccess, x, "%s", cudaGetErrorString(tu_e_));           \
    } while (0)
/* A cuBLAS or cuSOLVER call (status 0 is success for both). */
#define TU_LIB_OK(x)                                                                    \
    do {                                                                                \
        int tu_s_ = (int)(x);                                                           \
        TU_FAIL_IF(tu_s_ != 0, x, "library status %d", tu_s_);                         \
    } while (0)
/* An abft call. */
#define TU_ABFT_OK(x)                                                                   \
    do {                                                                                \
        abft_status_t tu_a_ = (x);                                                      \
        TU_FAIL_IF(tu_a_ != ABFT_STATUS_SUCCESS, x, "%s", abft_status_name(tu_a_));     \
    } while (0)

#endif

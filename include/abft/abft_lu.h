/* abft: lu API (see abft.h for the conventions). */
#ifndef ABFT_LU_H
#define ABFT_LU_H

#include "abft/abft_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif /* ABFT_LU_H */

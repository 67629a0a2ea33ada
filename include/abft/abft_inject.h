/* abft: inject API (see abft.h for the conventions). */
#ifndef ABFT_INJECT_H
#define ABFT_INJECT_H

#include "abft/abft_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif /* ABFT_INJECT_H */

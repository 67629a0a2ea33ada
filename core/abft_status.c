/* abft: status names and messages (generated from ABFT_STATUS_LIST), and the names of the
 * other public enums. */
#include <stddef.h>

#include "abft/abft_status.h"
#include "abft/abft_types.h"
#include "abft_internal.h"

const char *abft_status_name(abft_status_t status) {
    switch (status) {
#define ABFT_X_NAME(name, value, msg) \
    case name: return #name;
        ABFT_STATUS_LIST(ABFT_X_NAME)
#undef ABFT_X_NAME
    }
    return "ABFT_STATUS_<unknown>";
}

const char *abft_status_string(abft_status_t status) {
    switch (status) {
#define ABFT_X_MSG(name, value, msg) \
    case name: return msg;
        ABFT_STATUS_LIST(ABFT_X_MSG)
#undef ABFT_X_MSG
    }
    return "unknown status value";
}

/* ---- names of the other public enums (declared in abft_types.h) ------------------------ */

/* names[value] for 0 <= value < count, else "unknown" (also for a NULL entry). */
static const char *enum_name(int value, const char *const *names, int count) {
    return value >= 0 && value < count && names[value] != NULL ? names[value] : "unknown";
}
#define ENUM_NAME(v, names) enum_name((int)(v), names, (int)(sizeof names / sizeof names[0]))

const char *abft_backend_name(abft_backend_t backend) {
    static const char *const names[] = {
        [ABFT_BACKEND_AUTO] = "auto", [ABFT_BACKEND_CPU] = "cpu", [ABFT_BACKEND_CUDA] = "cuda"};
    return ENUM_NAME(backend, names);
}

const char *abft_operation_name(abft_operation_t op) {
    static const char *const names[] = {[ABFT_OP_N] = "N", [ABFT_OP_T] = "T"};
    return ENUM_NAME(op, names);
}

const char *abft_checksum_kind_name(abft_checksum_kind_t kind) {
    static const char *const names[] = {[ABFT_CHECKSUM_ROW] = "row", [ABFT_CHECKSUM_FULL] = "full"};
    return ENUM_NAME(kind, names);
}

const char *abft_bound_mode_name(abft_bound_mode_t mode) {
    static const char *const names[] = {[ABFT_BOUND_WORST_CASE] = "worst_case",
                                        [ABFT_BOUND_PROBABILISTIC] = "probabilistic",
                                        [ABFT_BOUND_TIGHT] = "tight"};
    return ENUM_NAME(mode, names);
}

const char *abft_action_name(abft_action_t action) {
    static const char *const names[] = {[ABFT_ACTION_NONE] = "none",
                                        [ABFT_ACTION_CORRECTED] = "corrected",
                                        [ABFT_ACTION_UNCORRECTABLE] = "uncorrectable",
                                        [ABFT_ACTION_RECOMPUTED] = "recomputed",
                                        [ABFT_ACTION_CHECKSUM_FAULT] = "checksum_fault"};
    return ENUM_NAME(action, names);
}

const char *abft_math_name(abft_math_t math) {
    static const char *const names[] = {[ABFT_MATH_HANDLE] = "handle", [ABFT_MATH_IEEE] = "ieee",
                                        [ABFT_MATH_TF32] = "tf32", [ABFT_MATH_BF16X9] = "bf16x9"};
    return ENUM_NAME(math, names);
}

const char *abft_factor_name(abft_factor_t factor) {
    static const char *const names[] = {
        [ABFT_FACTOR_NONE] = "none", [ABFT_FACTOR_L] = "L", [ABFT_FACTOR_U] = "U"};
    return ENUM_NAME(factor, names);
}

const char *abft_hook_site_name(abft_hook_site_t site) {
    static const char *const names[ABFT_SITE_COUNT] = {
        [ABFT_SITE_AFTER_ENCODE] = "after_encode", [ABFT_SITE_MID_GEMM] = "mid_gemm",
        [ABFT_SITE_AFTER_GEMM] = "after_gemm",     [ABFT_SITE_CHECKSUM] = "checksum",
        [ABFT_SITE_LU_PANEL] = "lu_panel",         [ABFT_SITE_AFTER_LU] = "after_lu"};
    return ENUM_NAME(site, names);
}

static _Thread_local int abft_bad_arg_pos;

void abft_set_bad_arg(int pos) { abft_bad_arg_pos = pos; }

int abft_last_invalid_argument(void) { return abft_bad_arg_pos; }

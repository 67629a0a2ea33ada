/* The names of the public enums: every value has its own name, out-of-range values give
 * "unknown", and the names are the ones documented in docs/api.md. */
#include <stdio.h>
#include <string.h>

#include "abft/abft.h"

static int fails = 0;

static void expect(const char *what, const char *got, const char *want) {
    if (got == NULL || strcmp(got, want) != 0) {
        fprintf(stderr, "FAIL %s: got '%s', want '%s'\n", what, got ? got : "(null)", want);
        ++fails;
    }
}

int main(void) {
    expect("backend auto", abft_backend_name(ABFT_BACKEND_AUTO), "auto");
    expect("backend cpu", abft_backend_name(ABFT_BACKEND_CPU), "cpu");
    expect("backend cuda", abft_backend_name(ABFT_BACKEND_CUDA), "cuda");
    expect("backend 3", abft_backend_name((abft_backend_t)3), "unknown");
    expect("backend -1", abft_backend_name((abft_backend_t)-1), "unknown");
    expect("op N", abft_operation_name(ABFT_OP_N), "N");
    expect("op T", abft_operation_name(ABFT_OP_T), "T");
    expect("op 2", abft_operation_name((abft_operation_t)2), "unknown");
    expect("kind row", abft_checksum_kind_name(ABFT_CHECKSUM_ROW), "row");
    expect("kind full", abft_checksum_kind_name(ABFT_CHECKSUM_FULL), "full");
    expect("kind 2", abft_checksum_kind_name((abft_checksum_kind_t)2), "unknown");
    expect("bound worst", abft_bound_mode_name(ABFT_BOUND_WORST_CASE), "worst_case");
    expect("bound prob", abft_bound_mode_name(ABFT_BOUND_PROBABILISTIC), "probabilistic");
    expect("bound 7", abft_bound_mode_name((abft_bound_mode_t)7), "unknown");
    expect("action none", abft_action_name(ABFT_ACTION_NONE), "none");
    expect("action corrected", abft_action_name(ABFT_ACTION_CORRECTED), "corrected");
    expect("action uncorrectable", abft_action_name(ABFT_ACTION_UNCORRECTABLE), "uncorrectable");
    expect("action recomputed", abft_action_name(ABFT_ACTION_RECOMPUTED), "recomputed");
    expect("action checksum", abft_action_name(ABFT_ACTION_CHECKSUM_FAULT), "checksum_fault");
    expect("action 5", abft_action_name((abft_action_t)5), "unknown");
    expect("factor none", abft_factor_name(ABFT_FACTOR_NONE), "none");
    expect("factor L", abft_factor_name(ABFT_FACTOR_L), "L");
    expect("factor U", abft_factor_name(ABFT_FACTOR_U), "U");
    expect("factor 3", abft_factor_name((abft_factor_t)3), "unknown");
    expect("site encode", abft_hook_site_name(ABFT_SITE_AFTER_ENCODE), "after_encode");
    expect("site mid", abft_hook_site_name(ABFT_SITE_MID_GEMM), "mid_gemm");
    expect("site after", abft_hook_site_name(ABFT_SITE_AFTER_GEMM), "after_gemm");
    expect("site checksum", abft_hook_site_name(ABFT_SITE_CHECKSUM), "checksum");
    expect("site panel", abft_hook_site_name(ABFT_SITE_LU_PANEL), "lu_panel");
    expect("site after lu", abft_hook_site_name(ABFT_SITE_AFTER_LU), "after_lu");
    expect("site count", abft_hook_site_name(ABFT_SITE_COUNT), "unknown");
    expect("site -1", abft_hook_site_name((abft_hook_site_t)-1), "unknown");
    /* every site has its own name */
    for (int a = 0; a < ABFT_SITE_COUNT; ++a)
        for (int b = a + 1; b < ABFT_SITE_COUNT; ++b)
            if (strcmp(abft_hook_site_name((abft_hook_site_t)a),
                       abft_hook_site_name((abft_hook_site_t)b)) == 0) {
                fprintf(stderr, "FAIL sites %d and %d share a name\n", a, b);
                ++fails;
            }
    expect("status", abft_status_name(ABFT_STATUS_INVALID_VALUE), "ABFT_STATUS_INVALID_VALUE");
    /* campaign outcomes: the names of docs/api.md, in the enum's order */
    static const char *const outcomes[ABFT_OUTCOME_COUNT] = {
        "masked", "corrected", "uncorrectable", "gray", "sdc", "miscorrected",
        "false_positive", "clean", "not_fired", "error", "undetected"};
    for (int o = 0; o < ABFT_OUTCOME_COUNT; ++o) expect("outcome", abft_outcome_name(o), outcomes[o]);
    expect("outcome count", abft_outcome_name(ABFT_OUTCOME_COUNT), "unknown");
    expect("outcome undetected", abft_outcome_name(ABFT_OUTCOME_UNDETECTED), "undetected");
    if (fails == 0) printf("enum names: ok\n");
    return fails ? 1 : 0;
}

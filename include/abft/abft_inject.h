/* abft: bit-flip fault injection and fault-injection campaigns (see abft.h for the
 * conventions).
 *
 * Fault model (docs/campaign.md): IEEE-754 bit flips in fp64 / fp32 arrays. One bit or two
 * adjacent bits per element, in one or several elements; the bit drawn uniformly from a
 * class (any, sign, exponent, high or low half of the mantissa) or given exactly; the
 * element drawn uniformly or given (row and/or column). Every flip is recorded (position,
 * bit, old and new value) and every draw comes from a seed, so a trial replays exactly.
 *
 * Random draws: the CPU backend uses xoshiro256** seeded through splitmix64; the CUDA
 * backend draws with cuRAND (Philox4x32-10) on the handle's stream and flips on the
 * device. Both map the draws to positions the same way; the same seed replays the same
 * faults on the same backend (the two generators differ, so a CPU and a CUDA run of one
 * seed pick different faults). */
#ifndef ABFT_INJECT_H
#define ABFT_INJECT_H

#include <signal.h>
#include <stdint.h>

#include "abft/abft_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- fault specification ------------------------------------------------------------- */

/* Which bits may be flipped. fp64: sign 63, exponent 52..62, mantissa 0..51 with the high
 * half 26..51 and the low half 0..25. fp32: sign 31, exponent 23..30, mantissa 0..22 with
 * the high half 12..22 and the low half 0..11. */
typedef enum abft_bit_class {
    ABFT_BITS_ANY = 0,           /* uniform over every bit of the word */
    ABFT_BITS_SIGN = 1,
    ABFT_BITS_EXPONENT = 2,
    ABFT_BITS_MANTISSA_HIGH = 3,
    ABFT_BITS_MANTISSA_LOW = 4,
    ABFT_BITS_EXACT = 5          /* the bit given in abft_fault_spec_t.bit */
} abft_bit_class_t;

/* Largest number of elements one firing may corrupt. */
#define ABFT_INJECT_MAX_ELEMS 64

/* What one firing of the injector does to the array it is given (rows x cols, leading
 * dimension ld).
 *  - nelems distinct elements (1..ABFT_INJECT_MAX_ELEMS, at most the number of candidate
 *    elements), each in row `row` (or a uniform row when row < 0) and column `col` (or a
 *    uniform column when col < 0): row = 3, col = -1, nelems = 4 corrupts four elements of
 *    row 3. A drawn position already taken moves to the next free candidate (column-major
 *    order, wrapping), so the elements are distinct without extra draws.
 *  - in each element, `width` (1 or 2) adjacent bits starting at the lowest flipped bit b:
 *    b is drawn uniformly from the class (ABFT_BITS_EXACT: b = bit), then lowered to
 *    nbits - width when the pair would leave the word (sign with width 2 flips the sign and
 *    the top exponent bit).
 * Positions out of range, an exact bit out of the word, or nelems larger than the candidate
 * count make a firing fail with INVALID_VALUE (nothing is flipped). */
typedef struct abft_fault_spec {
    int32_t bit_class; /* abft_bit_class_t */
    int32_t bit;       /* ABFT_BITS_EXACT: the lowest flipped bit (0 = least significant) */
    int32_t width;     /* 1 or 2 adjacent bits */
    int32_t nelems;    /* elements per firing */
    int64_t row;       /* given row, or -1 for uniform */
    int64_t col;       /* given column, or -1 for uniform */
} abft_fault_spec_t;

/* One bit, uniform over the word, one uniform element. */
ABFT_API abft_fault_spec_t abft_fault_spec_default(void);

/* The bits [*lo, *hi] the lowest flipped bit of spec is drawn from in a word of the given
 * precision ('d': 64 bits, 's': 32 bits), before lowering for the width (ABFT_BITS_EXACT:
 * the given bit). INVALID_VALUE for a bad class, precision, or an exact bit out of the
 * word. */
ABFT_API abft_status_t abft_fault_bit_range(const abft_fault_spec_t *spec, char precision,
                                            int32_t *lo, int32_t *hi);

/* One recorded flip. Values are reported as doubles (fp32 values are exact in a double);
 * the raw bits are the stored word (fp32 words in the low 32 bits). */
typedef struct abft_flip {
    int32_t site;      /* abft_hook_site_t, or -1 for a direct abft_[ds]inject call */
    int32_t which;     /* the hook's `which` (AFTER_ENCODE: 0 = A, 1 = B) */
    int32_t firing;    /* 0-based firing of the injector since it was armed */
    char precision;    /* 'd' or 's' */
    char pad_[3];
    int64_t row, col;  /* position in the array the hook (or the caller) passed */
    int32_t bit;       /* lowest flipped bit */
    int32_t width;     /* number of adjacent flipped bits */
    double old_value, new_value;
    uint64_t old_bits, new_bits;
} abft_flip_t;

/* Direct injection into an m x n array A (leading dimension lda) in the handle's backend
 * memory (device memory for a CUDA handle; ordered on the handle's stream and synchronized
 * before returning). Draws come from `seed`: the same seed and spec flip the same bits.
 * flips (host memory) receives spec->nelems records, *nflips their count. */
ABFT_API abft_status_t abft_dinject(abft_handle_t handle, const abft_fault_spec_t *spec,
                                    uint64_t seed, int64_t m, int64_t n, double *A, int64_t lda,
                                    abft_flip_t *flips, int64_t *nflips);
ABFT_API abft_status_t abft_sinject(abft_handle_t handle, const abft_fault_spec_t *spec,
                                    uint64_t seed, int64_t m, int64_t n, float *A, int64_t lda,
                                    abft_flip_t *flips, int64_t *nflips);

/* Flip bits [bit, bit + width) of one value (the primitive everything above uses). */
ABFT_API double abft_flip_bits_d(double v, int bit, int width);
ABFT_API float abft_flip_bits_s(float v, int bit, int width);

/* ---- injector attached to a handle ---------------------------------------------------- */

/* An injector fires from the handle's hook (abft_set_hook) at the chosen sites:
 *   abft_injector_create(handle, &inj);
 *   abft_injector_set_spec(inj, &spec);
 *   abft_injector_set_targets(inj, 1u << ABFT_SITE_AFTER_GEMM, -1, 1);
 *   abft_injector_attach(inj);             // abft_set_hook(handle, abft_injector_hook, inj)
 *   abft_injector_arm(inj, seed);          // before each trial: clears the record
 *   abft_dgemm(handle, ...);               // the hook flips bits in flight
 *   abft_injector_flips(inj, &flips, &n);  // what was flipped
 * Firing f of an arming with seed s draws from the stream seeded with
 * abft_inject_firing_seed(s, f), so a trial replays from s alone. The injector works on
 * the memory of its handle's backend and must only be attached to that handle. */
typedef struct abft_injector *abft_injector_t;

ABFT_API abft_status_t abft_injector_create(abft_handle_t handle, abft_injector_t *injector);
/* Detaches the injector if it is still the handle's hook. NULL is a no-op. */
ABFT_API abft_status_t abft_injector_destroy(abft_injector_t injector);
ABFT_API abft_status_t abft_injector_set_spec(abft_injector_t injector,
                                              const abft_fault_spec_t *spec);
/* site_mask: bit (1u << site) for each abft_hook_site_t to fire at (0: never fire);
 * which: only calls with this `which` (-1: any); max_firings: firings per arming
 * (0: unlimited). Default: every site, any which, one firing. */
ABFT_API abft_status_t abft_injector_set_targets(abft_injector_t injector, uint32_t site_mask,
                                                 int which, int max_firings);
/* Reset the record and the firing count and take a new seed. */
ABFT_API abft_status_t abft_injector_arm(abft_injector_t injector, uint64_t seed);
/* Make the injector its handle's hook (abft_set_hook), or remove it when it is the hook.
 * Destroy an injector before its handle. */
ABFT_API abft_status_t abft_injector_attach(abft_injector_t injector);
ABFT_API abft_status_t abft_injector_detach(abft_injector_t injector);
/* The flips since the last arming (host memory owned by the injector, valid until the
 * next arming or firing). */
ABFT_API abft_status_t abft_injector_flips(abft_injector_t injector, const abft_flip_t **flips,
                                           int64_t *nflips);
/* The hook itself (an abft_hook_fn; user is the injector), for callers that chain hooks.
 * A firing that fails returns its status, which aborts the protected operation. */
ABFT_API abft_status_t abft_injector_hook(void *user, abft_hook_site_t site, int which,
                                          char precision, void *ptr, int64_t rows, int64_t cols,
                                          int64_t ld);
/* The seed of firing f of an arming with seed s (splitmix64 of s and f). */
ABFT_API uint64_t abft_inject_firing_seed(uint64_t seed, int64_t firing);

/* ---- campaigns ----------------------------------------------------------------------- */

/* Operations a campaign can protect. Adding one is an entry in the table in
 * inject/abft_campaign.c. */
typedef enum abft_campaign_op {
    ABFT_CAMPAIGN_GEMM = 0,  /* C = A·B (m x k times k x n), alpha = 1, beta = 0 */
    ABFT_CAMPAIGN_GETRF = 1, /* P·A = L·U of an n x n matrix (abft_[ds]getrf, uses n) */
    ABFT_CAMPAIGN_GETRF_ONLINE = 2, /* the same through abft_[ds]getrf_online */
    ABFT_CAMPAIGN_OP_COUNT = 3
} abft_campaign_op_t;

/* Outcome of one trial (docs/campaign.md), judged against a fault-free golden run with the
 * per-row bound tau_i (docs/campaign.md) and the guarantee factor g (default 2):
 * rho = max_ij |C_ij - G_ij| / tau_i; and, for an undetected change within the bound,
 * against the rounding noise of the fault-free computation (MASKED or UNDETECTED). */
typedef enum abft_outcome {
    ABFT_OUTCOME_MASKED = 0,        /* nothing detected, rho <= 1, and the change within the
                                       fault-free rounding noise (docs/campaign.md, "Masked
                                       or undetected") */
    ABFT_OUTCOME_CORRECTED = 1,     /* detected, everything resolved, rho <= 1 */
    ABFT_OUTCOME_UNCORRECTABLE = 2, /* detected and reported uncorrectable to the caller */
    ABFT_OUTCOME_GRAY = 3,          /* not reported uncorrectable, 1 < rho <= g: the gray
                                       zone between the bound and the guarantee (full
                                       space: also undetected with rho > g but
                                       rho_check <= g) */
    ABFT_OUTCOME_SDC = 4,           /* nothing detected, rho > g (full space: rho_check > g,
                                       the guarantee violated): must be 0 */
    ABFT_OUTCOME_MISCORRECTED = 5,  /* detected, "resolved", rho > g in the rows and columns
                                       the report resolved: must be 0 (a change elsewhere
                                       is judged as undetected: docs/campaign.md) */
    ABFT_OUTCOME_FALSE_POSITIVE = 6,/* control trial with a detection: must be 0 */
    ABFT_OUTCOME_CLEAN = 7,         /* control trial, nothing detected */
    ABFT_OUTCOME_NOT_FIRED = 8,     /* faulty trial whose site was never reached */
    ABFT_OUTCOME_ERROR = 9,         /* the protected call failed with an error status */
    ABFT_OUTCOME_UNDETECTED = 10,   /* nothing detected, rho <= 1, but the change exceeds the
                                       fault-free rounding noise: below what the bound can
                                       see, beyond what rounding explains (counted, with its
                                       relative size in abft_trial_t.rel_change) */
    ABFT_OUTCOME_COUNT = 11
} abft_outcome_t;

/* "masked", "corrected", "uncorrectable", "gray", "sdc", "miscorrected", "false_positive",
 * "clean", "not_fired", "error", "undetected"; "unknown" otherwise. */
ABFT_API const char *abft_outcome_name(int outcome);

/* Where each trial's configuration comes from (abft_campaign_config_t.space). */
typedef enum abft_campaign_space {
    ABFT_SPACE_FIXED = 0, /* every trial runs the configuration of abft_campaign_config_t:
                             alpha = 1, beta = 0, no transposes, the given sizes, the
                             config's fault spec at the first call of the drawn site */
    ABFT_SPACE_FULL = 1   /* each trial draws its configuration from everything the API
                             accepts (sizes up to the config's, transposes, alpha, beta,
                             leading dimensions, handle options, LU options) and its fault
                             from every model at any call of its site (docs/campaign.md) */
} abft_campaign_space_t;

/* Fault models of a full-space trial: how the elements of one firing are chosen in the
 * array the hook passes (rows x cols). */
typedef enum abft_fault_model {
    ABFT_FAULT_SPEC = -1,    /* fixed space: the config's fault spec */
    ABFT_FAULT_ONE = 0,      /* one uniform element */
    ABFT_FAULT_ROW2 = 1,     /* two elements of one row */
    ABFT_FAULT_COL2 = 2,     /* two elements of one column */
    ABFT_FAULT_SAME_BIT = 3, /* the same bit in 2 to 4 uniform elements */
    ABFT_FAULT_BURST = 4,    /* 2 to 4 adjacent elements of one column (adjacent in memory) */
    ABFT_FAULT_MODEL_COUNT = 5
} abft_fault_model_t;

/* "spec", "one", "row2", "col2", "same_bit", "burst"; "unknown" otherwise. */
ABFT_API const char *abft_fault_model_name(int model);

/* The configuration a trial ran with: drawn from the trial seed in the full space, the
 * config's in the fixed space. Together with the campaign config and the seed it replays
 * the trial. */
typedef struct abft_trial_config {
    int64_t m, n, k;          /* gemm: op(A) m x k, op(B) k x n; getrf: A m x n (k unused) */
    int64_t lda, ldb, ldc;    /* leading dimensions (getrf: lda) */
    double alpha, beta;       /* gemm */
    double c_scale;           /* gemm: the old C is uniform in [-c_scale, c_scale); NaN: the
                                 old C is all NaN (only with beta = 0, which must ignore it) */
    int32_t transa, transb;   /* abft_operation_t (gemm) */
    int32_t checksum_kind;    /* abft_checksum_kind_t */
    int32_t bound_mode;       /* abft_bound_mode_t */
    double bound_factor;
    int32_t math_mode;        /* 1: the handle's cuBLAS handle in TF32 tensor-op math (CUDA
                                 backend only; 0 elsewhere), 0: default math */
    int32_t recompute;        /* gemm: abft_set_recompute */
    int32_t lu_recovery;      /* getrf: abft_set_lu_recovery */
    int32_t random_checksum;  /* gemm: abft_set_random_checksum (its seed derives from the
                                 trial seed, or the campaign seed in the fixed space) */
    int64_t nb, check_every, panel_nb, lookahead; /* getrf-online: abft_lu_options_t */
    /* the fault (faulty trials; -1 / 0 for controls) */
    int32_t model;            /* abft_fault_model_t */
    int32_t width;            /* adjacent bits flipped per element */
    int32_t call;             /* the firing call: 0-based among its site's calls */
    int32_t calls;            /* calls of that site in the golden run (0: not counted) */
} abft_trial_config_t;

/* One trial, handed to the on_trial callback (all host memory, valid during the call). */
typedef struct abft_trial {
    int64_t index;       /* 0.. trials-1 faulty, trials.. trials+controls-1 control */
    int32_t control;     /* 1 for a control (fault-free) trial */
    int32_t outcome;     /* abft_outcome_t */
    uint64_t seed;       /* the trial seed (injector arming seed) */
    int64_t set;         /* input set (inputs and golden) the trial ran on */
    int32_t site;        /* abft_hook_site_t targeted (-1 for a control) */
    int32_t which;       /* the targeted call's `which` (AFTER_ENCODE: 0 = A, 1 = B; LU
                            panel index), -1 when not fixed */
    int32_t status;      /* abft_status_t of the protected call */
    int32_t pad_;
    double rho;          /* max_ij |C_ij - G_ij| / tau_i (0 for controls) */
    double rho_check;    /* the change as the checksums see it: max over the checked
                            vectors (rows; columns too with full checksums) and both weights
                            v of |v·(C - G)| / tau_v (LU: rho); the guarantee is stated in
                            it (docs/campaign.md). Full space only, else 0 */
    double seconds;      /* wall time of the protected call */
    int64_t nflips;
    const abft_flip_t *flips;
    abft_report_t report;
    abft_trial_config_t config; /* the configuration and fault the trial ran with */
    double rel_change;   /* undetected faulty trials (else 0): the change's relative size;
                            GEMM: max over changed elements of |C_ij - G_ij| / rms_i(G), the
                            root mean square of golden's row i; LU: max over rows and both
                            checksums of the trial's residual |L·(U·v) - P·(A·v)|_i over
                            golden's (|L|·(|U|·v))_i; each denominator at least the smallest
                            normal number (docs/campaign.md) */
} abft_trial_t;

typedef struct abft_campaign_config {
    int32_t op;            /* abft_campaign_op_t */
    char precision;        /* 'd' or 's' */
    char pad_[3];
    int64_t m, n, k;       /* problem size (getrf: n) */
    int64_t trials;        /* faulty trials (trials + controls must fit in int64) */
    int64_t controls;      /* fault-free control trials, each on fresh inputs */
    int64_t refresh;       /* faulty trials per input set (new inputs and golden); >= 1 */
    uint32_t sites;        /* hook sites to draw from (bit 1u << site); 0: the op's default */
    int32_t backend;       /* abft_backend_t */
    abft_fault_spec_t spec; /* row, col: -1 or an index; fixed space: every site drawn from
                              must hold the row, the column and nelems elements */
    int32_t checksum_kind; /* abft_checksum_kind_t */
    int32_t bound_mode;    /* abft_bound_mode_t */
    double bound_factor;   /* 0 < factor <= 1e6 (abft_set_bound_mode's range) */
    double guarantee;      /* finite g >= 1: changes above g·tau must be detected (default 2) */
    uint64_t seed;         /* campaign seed: every trial seed and input set derive from it */
    int64_t only_trial;    /* 0.. trials + controls - 1: run only this trial (replay), else -1 */
    int32_t lu_recovery;   /* getrf: 1 = the handle keeps a recovery copy of A
                              (abft_set_lu_recovery); 0 or 1, default 0 */
    int32_t space;         /* abft_campaign_space_t (default FIXED). FULL: m, n, k are the
                              largest sizes drawn (getrf: m and n both up to n); refresh is ignored (every trial draws its
                              own inputs and runs its own golden); the spec's bit class (and
                              exact bit) is kept, its width, elements, row and column are
                              drawn; checksum_kind, bound_mode, bound_factor, lu_recovery
                              and random_checksum are drawn */
    /* Callbacks (may be NULL), called on the calling thread, trial after trial in index
     * order whatever jobs is. */
    void (*progress)(void *user, int64_t done, int64_t total);
    void (*on_trial)(void *user, const abft_trial_t *trial);
    void *user;
    int32_t jobs;          /* worker threads, 1..64 (default 1; 0 counts as 1): each has its own handle
                              (on the GPU its own streams) and takes the trials a block at
                              a time; the results, and the order they reach the callbacks
                              in, are those of jobs = 1 (only the timings differ) */
    int32_t random_checksum; /* gemm, fixed space: 1 = abft_set_random_checksum on (default
                                0); 0 or 1, and 1 is refused with getrf or the full space
                                (which draws it) */
    const volatile sig_atomic_t *stop; /* NULL (default), or a flag the caller may set to
                              nonzero at any time, e.g. from a SIGINT handler: no trial
                              starts after the campaign sees it; the trials finished before
                              the first unfinished one (in index order) are passed on and
                              summarized, and the summary is marked partial */
} abft_campaign_config_t;

/* Defaults: GEMM, 'd', m = n = k = 128, 200 trials, 200 controls, refresh 50, default
 * sites, AUTO backend, the default fault spec, ROW checksums, worst-case bound factor 1,
 * guarantee 2, seed 1, only_trial -1, no LU recovery copy, FIXED space, no callbacks,
 * jobs 1, no stop flag. */
ABFT_API abft_campaign_config_t abft_campaign_config_default(void);

typedef struct abft_campaign_summary {
    int64_t total;                                  /* trials run */
    int64_t count[ABFT_OUTCOME_COUNT];              /* every trial except control errors */
    int64_t by_site[ABFT_SITE_COUNT][ABFT_OUTCOME_COUNT];
    int64_t by_bit[64][ABFT_OUTCOME_COUNT];         /* faulty trials by first flipped bit */
    double max_control_ratio;   /* largest report max_ratio among clean controls */
    double max_corrected_rho;   /* largest rho left in a CORRECTED or GRAY detected trial */
    double max_undetected_rho;  /* largest rho among undetected faulty trials */
    double seconds;             /* wall time of the campaign */
    int32_t backend;            /* abft_backend_t the campaign ran on */
    int32_t partial;            /* 1: cfg->stop ended the campaign early; every count is of
                                   the trials run, trials 0 .. total - 1 in index order (the
                                   controls come after the faulty trials); else 0 */
    double unit_roundoff;       /* u the bound assumed (from the golden run's report) */
    int64_t golden_runs;        /* input sets run fault-free as golden */
    int64_t golden_detections;  /* golden runs that flagged something: false positives too
                                   (not in count[], which counts trials) */
    int64_t control_errors;     /* control trials whose protected call returned an error
                                   status (outcome ERROR): a failure, counted here and not in
                                   count[], so count[ERROR] is the faulty trials' */
    int64_t by_model[ABFT_FAULT_MODEL_COUNT][ABFT_OUTCOME_COUNT]; /* full space: faulty
                                   trials by fault model */
    int64_t spread_undetected;  /* full space: trials with an undetected change (alone, or
                                   in rows and columns beside faults the report resolved)
                                   whose largest element change exceeds g·tau while the
                                   change the checksums see does not (a change spread over a
                                   row): outside the guarantee, counted GRAY */
    double max_undetected_rel;  /* largest rel_change among UNDETECTED trials */
} abft_campaign_summary_t;

/* The memory abft_campaign_run allocates for cfg, in bytes, every worker's included: host
 * (the pristine inputs, golden, the result, the old C, the bounds, and the records of the
 * trials in flight) and backend (the backend's copies of the inputs and the result: on the
 * CPU backend host memory too). Exact for the buffers; the library's own workspace inside
 * the protected calls comes on top. Reads op, precision, m, n, k, trials, controls, refresh,
 * space, jobs and spec.nelems; INVALID_VALUE (abft_last_invalid_argument() = 1) when one is
 * invalid or a size does not fit in int64. abft_campaign_run refuses such a config too. */
ABFT_API abft_status_t abft_campaign_memory(const abft_campaign_config_t *cfg,
                                            int64_t *host_bytes, int64_t *backend_bytes);

/* Run a campaign: for each input set a golden run (injector attached, not firing), then the
 * faulty trials on it (one firing at a site drawn from cfg->sites), then the control
 * trials (no hook, fresh inputs each). In the full space every faulty trial draws its
 * configuration, runs its own golden, and fires at a call drawn among its site's calls. Every trial is classified into an abft_outcome_t.
 * Returns an error status only when the campaign itself cannot run (bad config, memory,
 * golden run failing); a protected call failing in a trial is the ERROR outcome. A config
 * that breaks a rule of docs/campaign.md ("The config's rules"), or whose buffers do not fit
 * in int64 (abft_campaign_memory), is refused with INVALID_VALUE before anything runs, and
 * abft_last_invalid_argument() names it (1; a NULL summary: 2). *summary is written only
 * when the campaign completed: on any error status it is left as it was (the callbacks may
 * have seen some trials). A campaign stopped through cfg->stop returns SUCCESS with the
 * summary of the trials it ran and summary->partial = 1. */
ABFT_API abft_status_t abft_campaign_run(const abft_campaign_config_t *cfg,
                                         abft_campaign_summary_t *summary);

/* Wilson score interval for k successes in n trials at normal quantile z (1.96 for 95 %):
 * *lo, *hi in [0, 1]; n = 0 gives [0, 1]. */
ABFT_API void abft_wilson_interval(int64_t k, int64_t n, double z, double *lo, double *hi);

#ifdef __cplusplus
}
#endif
#endif /* ABFT_INJECT_H */

/* libabft_blas.so: drop-in protection for unmodified programs (docs/dropin.md).
 *
 * Exports the Fortran BLAS/LAPACK symbols dgemm_, sgemm_, dgetrf_, sgetrf_, dgetrs_,
 * sgetrs_, dgesv_, sgesv_, dsyrk_, ssyrk_, dtrsm_, strsm_ and the CBLAS cblas_dgemm,
 * cblas_sgemm, cblas_dsyrk, cblas_ssyrk, cblas_dtrsm, cblas_strsm. Placed in front of a host BLAS/LAPACK
 * (LD_PRELOAD, or linked first), each call checks its arguments as the reference
 * implementation does, then runs the protected operation of libabft (abft_?gemm,
 * abft_?getrf, abft_?getrs on a handle of the calling thread); the arithmetic itself goes to
 * the routines that come after this library in the search order (dlsym(RTLD_NEXT)). The
 * library's CPU backend is routed to those same routines (abft_cpu_host_blas), and a call
 * that reaches this library while one of its calls is running on the same thread (a
 * LAPACK routine calling dgemm_, say) goes straight to the next library.
 *
 * Types are entries of one table (abft_blas_type_t); each operation has one generic
 * wrapper, the exported symbols are thin functions that name their type.
 *
 * This library links no BLAS/LAPACK and no CUDA library (docs/dropin.md, "What a process
 * pays for the preload"): where the program has no BLAS in the global search order, the
 * first call loads libabft_blas_host.so (the BLAS/LAPACK libabft was built with); the CUDA
 * backend is libabft_blas_cuda.so, loaded at the first call that is to run on the GPU and
 * used through its table (abft_blas_cuda_api_t). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fenv.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abft/abft.h"
#include "abft_blas_internal.h"
#include "abft_blas_types.h"
#define ABFT_CPU_HOST_BLAS_NO_DECLS /* this file defines dgemm_ ... with the hidden lengths */
#include "abft_cpu_host_blas.h"

#define EXPORT __attribute__((visibility("default")))

/* The error handler in the search order (the application's, or the BLAS's), found at the
 * first call (init). */
typedef void (*xerbla_fn)(const char *srname, const int *info, size_t len);
static xerbla_fn xerbla_next;
static void xerbla_(const char *srname, const int *info, size_t len) {
    if (xerbla_next != NULL) xerbla_next(srname, info, len);
}

/* ---- the types ------------------------------------------------------------------------ */

enum { T_D = 0, T_S = 1, T_COUNT = 2 };
static const abft_blas_type_t *const types = abft_blas_types;

/* The routines after this library in the search order. */
static struct next_fns {
    abft_blas_gemm_fn gemm;
    abft_blas_getrf_fn getrf;
    abft_blas_getrs_fn getrs;
    void *cblas_gemm; /* may be NULL: a BLAS without CBLAS */
    abft_blas_trsm_fn trsm;
    abft_blas_syrk_fn syrk;
    abft_blas_gesv_fn gesv; /* may be NULL: then getrf and getrs after this library */
    void *cblas_syrk, *cblas_trsm; /* may be NULL */
} next[T_COUNT];

/* ---- configuration (environment, read once) ------------------------------------------- */

enum { ON_RECOMPUTE = 1, ON_WARN = 2, ON_ABORT = 4 };

static struct config {
    abft_backend_t backend;       /* ABFT_BLAS_BACKEND: AUTO (default), CPU, CUDA */
    double threshold;             /* ABFT_BLAS_THRESHOLD: calls with m·n·k below pass through */
    double gpu_threshold;         /* ABFT_BLAS_GPU_THRESHOLD: backend auto, GPU from here on */
    abft_checksum_kind_t checksum;
    int rnd;                      /* ABFT_BLAS_CHECKSUM row+random / full+random */
    unsigned long long rnd_seed;  /* ABFT_BLAS_RANDOM_SEED: each call's seed derives from it */
    abft_bound_mode_t bound;
    double factor;
    unsigned on_unc;              /* ON_* bits */
    int lu_recovery;              /* a copy of A confirms LU corrections (docs/lu.md) */
    int inject;                   /* ABFT_BLAS_INJECT given and understood */
    long long inj_call;           /* 1-based index among protected calls */
    long long inj_row, inj_col;
    int inj_bit;
    int summary;                  /* ABFT_BLAS_SUMMARY: SUMMARY_* */
    int profile;                  /* ABFT_BLAS_PROFILE=on: the time of protected GEMMs */
    char report_path[4096];       /* ABFT_BLAS_REPORT, opened at the first line written */
    int stage_threads;            /* ABFT_BLAS_STAGE_THREADS: host threads per staged operand */
    double stage_chunk;           /* ABFT_BLAS_STAGE_CHUNK: bytes per pinned staging buffer */
} cfg;

#define DEFAULT_THRESHOLD 262144.0        /* 64^3 */
#define DEFAULT_GPU_THRESHOLD 134217728.0 /* 512^3 */
#define DEFAULT_STAGE_THREADS 4
#define DEFAULT_STAGE_CHUNK 8388608.0     /* 8 MiB */

enum { SUMMARY_PROTECTED = 0, SUMMARY_ALWAYS = 1, SUMMARY_NEVER = 2 };

static FILE *report_file;
static int report_opened; /* the report file was opened (or tried) */
static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_key_t state_key;
static atomic_int initialized;

/* Counters of the summary line. */
static atomic_llong n_index;     /* protected calls attempted (the numbering of call=) */
static atomic_llong n_protected; /* calls that ran protected to the end */
static atomic_llong n_passed;    /* calls passed through unprotected */
static atomic_llong n_detected;  /* flagged entries (the reports' detected) */
static atomic_llong n_corrected; /* corrected or recomputed elements, rows, calls */
static atomic_llong n_uncorrectable;
static atomic_llong n_checksum;  /* flagged entries explained by a corrupted checksum */
enum { OP_GEMM, OP_GETRF, OP_GETRS, OP_GESV, OP_TRSM, OP_SYRK, OP_COUNT };
static const char *const op_names[T_COUNT][OP_COUNT] = {
    {"dgemm", "dgetrf", "dgetrs", "dgesv", "dtrsm", "dsyrk"},
    {"sgemm", "sgetrf", "sgetrs", "sgesv", "strsm", "ssyrk"}};
static atomic_llong n_op[T_COUNT][OP_COUNT]; /* protected calls per routine */

static void report_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report_line(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&report_mu);
    if (!report_opened && cfg.report_path[0] != '\0') { /* the first line: open the file */
        report_opened = 1;
        report_file = fopen(cfg.report_path, "a");
    }
    if (report_file != NULL) {
        vfprintf(report_file, fmt, ap);
        fputc('\n', report_file);
        fflush(report_file);
    }
    pthread_mutex_unlock(&report_mu);
    va_end(ap);
}

static const char *env(const char *name) {
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? v : NULL;
}

static int parse_nonneg(const char *s, double *out) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= 0.0) || isinf(v)) return 0;
    *out = v;
    return 1;
}

static void parse_config(void) {
    const char *v;
    cfg.backend = ABFT_BACKEND_AUTO;
    cfg.threshold = DEFAULT_THRESHOLD;
    cfg.gpu_threshold = DEFAULT_GPU_THRESHOLD;
    cfg.stage_threads = DEFAULT_STAGE_THREADS;
    cfg.stage_chunk = DEFAULT_STAGE_CHUNK;
    cfg.checksum = ABFT_CHECKSUM_ROW;
    cfg.bound = ABFT_BOUND_WORST_CASE;
    cfg.factor = 1.0;
    cfg.on_unc = ON_RECOMPUTE;
    cfg.lu_recovery = 1;
    if ((v = env("ABFT_BLAS_REPORT")) != NULL)
        snprintf(cfg.report_path, sizeof cfg.report_path, "%s", v);
    cfg.summary = SUMMARY_PROTECTED;
    if ((v = env("ABFT_BLAS_PROFILE")) != NULL) {
        if (strcmp(v, "on") == 0) cfg.profile = 1;
        else if (strcmp(v, "off") != 0)
            report_line("config ABFT_BLAS_PROFILE=%s not understood (on, off): off", v);
    }
    if ((v = env("ABFT_BLAS_SUMMARY")) != NULL) {
        if (strcmp(v, "protected") == 0) cfg.summary = SUMMARY_PROTECTED;
        else if (strcmp(v, "always") == 0) cfg.summary = SUMMARY_ALWAYS;
        else if (strcmp(v, "never") == 0) cfg.summary = SUMMARY_NEVER;
        else report_line("config ABFT_BLAS_SUMMARY=%s not understood (protected, always, "
                         "never): protected", v);
    }

    if ((v = env("ABFT_BLAS_BACKEND")) != NULL) {
        if (strcmp(v, "cpu") == 0) cfg.backend = ABFT_BACKEND_CPU;
        else if (strcmp(v, "cuda") == 0) cfg.backend = ABFT_BACKEND_CUDA;
        else if (strcmp(v, "auto") == 0) cfg.backend = ABFT_BACKEND_AUTO;
        else report_line("config ABFT_BLAS_BACKEND=%s not understood (cpu, cuda, auto): auto", v);
    }
    if ((v = env("ABFT_BLAS_THRESHOLD")) != NULL && !parse_nonneg(v, &cfg.threshold))
        report_line("config ABFT_BLAS_THRESHOLD=%s not understood (a number >= 0): %.0f", v,
                    cfg.threshold);
    if ((v = env("ABFT_BLAS_GPU_THRESHOLD")) != NULL && !parse_nonneg(v, &cfg.gpu_threshold))
        report_line("config ABFT_BLAS_GPU_THRESHOLD=%s not understood (a number >= 0): %.0f", v,
                    cfg.gpu_threshold);
    if ((v = env("ABFT_BLAS_STAGE_THREADS")) != NULL) {
        double x = 0.0;
        if (parse_nonneg(v, &x) && x >= 1.0 && x <= ABFT_BLAS_STAGE_MAX_LANES && x == (int)x)
            cfg.stage_threads = (int)x;
        else
            report_line("config ABFT_BLAS_STAGE_THREADS=%s not understood (1 to %d): %d", v,
                        ABFT_BLAS_STAGE_MAX_LANES, cfg.stage_threads);
    }
    if ((v = env("ABFT_BLAS_STAGE_CHUNK")) != NULL) {
        double x = 0.0;
        if (parse_nonneg(v, &x) && x >= 4096.0 && x <= 1073741824.0)
            cfg.stage_chunk = x;
        else
            report_line("config ABFT_BLAS_STAGE_CHUNK=%s not understood (bytes, 4096 to 2^30): "
                        "%.0f", v, cfg.stage_chunk);
    }
    if ((v = env("ABFT_BLAS_CHECKSUM")) != NULL) {
        if (strcmp(v, "row") == 0) cfg.checksum = ABFT_CHECKSUM_ROW;
        else if (strcmp(v, "full") == 0) cfg.checksum = ABFT_CHECKSUM_FULL;
        else if (strcmp(v, "row+random") == 0) cfg.checksum = ABFT_CHECKSUM_ROW, cfg.rnd = 1;
        else if (strcmp(v, "full+random") == 0) cfg.checksum = ABFT_CHECKSUM_FULL, cfg.rnd = 1;
        else
            report_line("config ABFT_BLAS_CHECKSUM=%s not understood (row, full, row+random, "
                        "full+random): row", v);
    }
    cfg.rnd_seed = 0x5eed5eed5eed5eedull;
    if ((v = env("ABFT_BLAS_RANDOM_SEED")) != NULL) {
        char *end;
        unsigned long long x = strtoull(v, &end, 0);
        if (end != v && *end == '\0') cfg.rnd_seed = x;
        else report_line("config ABFT_BLAS_RANDOM_SEED=%s not understood (an integer): %llu", v,
                         cfg.rnd_seed);
    }
    if ((v = env("ABFT_BLAS_BOUND")) != NULL) {
        if (strcmp(v, "worst") == 0) {
            cfg.bound = ABFT_BOUND_WORST_CASE;
        } else if (strncmp(v, "prob", 4) == 0 && (v[4] == '\0' || v[4] == ':')) {
            double f = 4.0; /* the probabilistic mode's default factor (docs/bound.md) */
            if (v[4] == ':' && !(parse_nonneg(v + 5, &f) && f > 0.0)) {
                report_line("config ABFT_BLAS_BOUND=%s: factor not understood, 4 used", v);
                f = 4.0;
            }
            cfg.bound = ABFT_BOUND_PROBABILISTIC;
            cfg.factor = f;
        } else {
            report_line("config ABFT_BLAS_BOUND=%s not understood (worst, prob[:factor]): worst",
                        v);
        }
    }
    if ((v = env("ABFT_BLAS_LU_RECOVERY")) != NULL) {
        if (strcmp(v, "on") == 0) cfg.lu_recovery = 1;
        else if (strcmp(v, "off") == 0) cfg.lu_recovery = 0;
        else report_line("config ABFT_BLAS_LU_RECOVERY=%s not understood (on, off): on", v);
    }
    if ((v = env("ABFT_BLAS_ON_UNCORRECTABLE")) != NULL) {
        /* one action, or recompute followed by warn or abort: "recompute+warn" */
        unsigned bits = 0;
        char buf[64];
        snprintf(buf, sizeof buf, "%s", v);
        int ok = 1;
        for (char *save = NULL, *tok = strtok_r(buf, "+,", &save); tok != NULL;
             tok = strtok_r(NULL, "+,", &save)) {
            if (strcmp(tok, "recompute") == 0) bits |= ON_RECOMPUTE;
            else if (strcmp(tok, "warn") == 0) bits |= ON_WARN;
            else if (strcmp(tok, "abort") == 0) bits |= ON_ABORT;
            else ok = 0;
        }
        if (ok && bits != 0) cfg.on_unc = bits;
        else
            report_line("config ABFT_BLAS_ON_UNCORRECTABLE=%s not understood (recompute, warn, "
                        "abort, recompute+warn, recompute+abort): recompute", v);
    }
    if ((v = env("ABFT_BLAS_INJECT")) != NULL) {
        /* call=N,row=I,col=J,bit=B (row, col 0-based; defaults row=0,col=0,bit=62) */
        char buf[128];
        snprintf(buf, sizeof buf, "%s", v);
        long long call = 0, row = 0, col = 0, bit = 62;
        int ok = 1;
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
             tok = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(tok, '=');
            if (eq == NULL) { ok = 0; break; }
            *eq = '\0';
            char *end;
            long long x = strtoll(eq + 1, &end, 10);
            if (end == eq + 1 || *end != '\0' || x < 0) { ok = 0; break; }
            if (strcmp(tok, "call") == 0) call = x;
            else if (strcmp(tok, "row") == 0) row = x;
            else if (strcmp(tok, "col") == 0) col = x;
            else if (strcmp(tok, "bit") == 0) bit = x;
            else { ok = 0; break; }
        }
        if (ok && call >= 1 && bit <= 63) {
            cfg.inject = 1;
            cfg.inj_call = call, cfg.inj_row = row, cfg.inj_col = col, cfg.inj_bit = (int)bit;
        } else {
            report_line("config ABFT_BLAS_INJECT=%s not understood (call=N,row=I,col=J,bit=B "
                        "with N >= 1): nothing injected", v);
        }
    }
}

/* ---- initialization ------------------------------------------------------------------- */

static void state_free(void *p);
static void write_summary(void);

static void fatal(const char *what) {
    /* No routine after this library: it cannot compute anything (a broken installation). */
    fprintf(stderr, "abft_blas: %s not found after libabft_blas.so in the search order; "
                    "aborting\n", what);
    abort();
}

/* A module installed next to this library (libabft_blas_host.so, libabft_blas_cuda.so),
 * else found on the loader's search path; NULL when neither loads. */
static void *open_module(const char *name, int flags) {
    Dl_info info;
    if (dladdr((void *)&open_module, &info) != 0 && info.dli_fname != NULL) {
        const char *slash = strrchr(info.dli_fname, '/');
        if (slash != NULL) {
            char path[4096];
            int len = snprintf(path, sizeof path, "%.*s/%s", (int)(slash - info.dli_fname),
                               info.dli_fname, name);
            if (len > 0 && (size_t)len < sizeof path) {
                void *h = dlopen(path, flags);
                if (h != NULL) return h;
            }
        }
    }
    return dlopen(name, flags);
}

/* The BLAS/LAPACK routine sym after this library in the search order: the program's, or,
 * where the program has none (a BLAS loaded locally, as NumPy's, or no LAPACK), that of the
 * BLAS and LAPACK this library was built with, which libabft_blas_host.so links and which
 * are loaded (locally) only then. This library links neither: a process that never calls
 * it does not load them (docs/dropin.md, "What a process pays for the preload"). */
static void *host_module;
static void *next_sym(const char *sym) {
    void *p = dlsym(RTLD_NEXT, sym);
    if (p == NULL) {
        if (host_module == NULL) host_module = open_module("libabft_blas_host.so", RTLD_NOW | RTLD_LOCAL);
        if (host_module != NULL) p = dlsym(host_module, sym);
    }
    return p;
}

/* ---- ABFT_BLAS_PROFILE: where the time of protected GEMMs goes -------------------------
 * Per type: the protected GEMM calls that ran on the CPU, their wall time from the entry to
 * the return, and the part of it spent in the host BLAS's GEMM (the product, and its
 * repetitions): the rest is the protection's own (the checksum passes, the compare, the
 * copies). Written to the report at exit ("profile ..."). */
static atomic_llong prof_calls[T_COUNT];
static _Atomic double prof_total[T_COUNT], prof_blas[T_COUNT];
static _Atomic double prof_total_cpu[T_COUNT], prof_blas_cpu[T_COUNT];
/* this thread's host-GEMM time in its call: wall, and the thread's CPU time (which the
 * machine's other load does not take; the whole call's where the BLAS has one thread) */
static _Thread_local double prof_blas_now, prof_blas_cpu_now;

static double wall_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static void prof_add(_Atomic double *x, double v) {
    double old = atomic_load(x);
    while (!atomic_compare_exchange_weak(x, &old, old + v)) {
    }
}
/* the CPU backend's GEMM, timed (the host-BLAS table's entries while profiling) */
static void timed_dgemm(const char *ta, const char *tb, const int *m, const int *n, const int *k,
                        const double *alpha, const double *A, const int *lda, const double *B,
                        const int *ldb, const double *beta, double *C, const int *ldc) {
    const double t0 = wall_now(), c0 = cpu_now();
    next[T_D].gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, 1, 1);
    prof_blas_cpu_now += cpu_now() - c0;
    prof_blas_now += wall_now() - t0;
}
static void timed_sgemm(const char *ta, const char *tb, const int *m, const int *n, const int *k,
                        const float *alpha, const float *A, const int *lda, const float *B,
                        const int *ldb, const float *beta, float *C, const int *ldc) {
    const double t0 = wall_now(), c0 = cpu_now();
    next[T_S].gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, 1, 1);
    prof_blas_cpu_now += cpu_now() - c0;
    prof_blas_now += wall_now() - t0;
}

static void config_init(void) {
    parse_config();
    /* the bounds of the modes this library offers (worst, prob) take the checksums' sums as
     * plain fp64 ones: the passes may sum so (abft_blas_kernels.c) */
    abft_blas_kernels_plain(cfg.bound == ABFT_BOUND_WORST_CASE ||
                            cfg.bound == ABFT_BOUND_PROBABILISTIC);
}

static void init(void) {
    pthread_once(&config_once, config_init);
    for (int t = 0; t < T_COUNT; ++t) {
        *(void **)&next[t].gemm = next_sym(types[t].sym_gemm);
        *(void **)&next[t].getrf = next_sym(types[t].sym_getrf);
        *(void **)&next[t].getrs = next_sym(types[t].sym_getrs);
        next[t].cblas_gemm = next_sym(types[t].sym_cblas_gemm);
        *(void **)&next[t].trsm = next_sym(types[t].sym_trsm);
        *(void **)&next[t].syrk = next_sym(types[t].sym_syrk);
        *(void **)&next[t].gesv = next_sym(types[t].sym_gesv);
        next[t].cblas_syrk = next_sym(t == T_D ? "cblas_dsyrk" : "cblas_ssyrk");
        next[t].cblas_trsm = next_sym(t == T_D ? "cblas_dtrsm" : "cblas_strsm");
    }
    /* the program's error handler, else the BLAS's */
    *(void **)&xerbla_next = dlsym(RTLD_DEFAULT, "xerbla_");
    if (xerbla_next == NULL) *(void **)&xerbla_next = next_sym("xerbla_");
    /* The CPU backend of the library objects inside this one calls these, never the symbols
     * this library exports. */
    abft_cpu_host_blas_t hb;
    /* dlsym's void * converted to each routine's own type (POSIX allows it) */
    *(void **)&hb.dgemm = *(void **)&next[T_D].gemm;
    *(void **)&hb.sgemm = *(void **)&next[T_S].gemm;
    *(void **)&hb.dgetrf = *(void **)&next[T_D].getrf;
    *(void **)&hb.sgetrf = *(void **)&next[T_S].getrf;
    *(void **)&hb.dtrsm = *(void **)&next[T_D].trsm;
    *(void **)&hb.strsm = *(void **)&next[T_S].trsm;
    if (cfg.profile) {
        hb.dgemm = timed_dgemm;
        hb.sgemm = timed_sgemm;
    }
    abft_cpu_host_blas = hb;
    pthread_key_create(&state_key, state_free);
    atomic_store(&initialized, 1);
}

static void ensure_init(void) {
    pthread_once(&init_once, init);
    for (int t = 0; t < T_COUNT; ++t) {
        if (next[t].gemm == NULL) fatal(types[t].sym_gemm);
        if (next[t].getrf == NULL) fatal(types[t].sym_getrf);
        if (next[t].getrs == NULL) fatal(types[t].sym_getrs);
        if (next[t].trsm == NULL) fatal(types[t].sym_trsm);
        if (next[t].syrk == NULL) fatal(types[t].sym_syrk);
    }
}

__attribute__((destructor)) static void fini(void) {
    const int was_init = atomic_load(&initialized);
    if (!was_init) {
        /* a program that never called: nothing loaded, nothing written, unless it asks for a
         * summary of zeros */
        const char *v = env("ABFT_BLAS_SUMMARY");
        if (v == NULL || strcmp(v, "always") != 0) return;
        pthread_once(&config_once, config_init);
    }
    if (cfg.summary == SUMMARY_ALWAYS ||
        (cfg.summary == SUMMARY_PROTECTED && atomic_load(&n_index) > 0))
        write_summary();
    for (int t = 0; cfg.profile && t < T_COUNT; ++t)
        if (atomic_load(&prof_calls[t]) > 0)
            report_line("profile op=%s calls=%lld seconds=%.6f host_gemm_seconds=%.6f "
                        "protection_seconds=%.6f cpu_seconds=%.6f host_gemm_cpu_seconds=%.6f "
                        "protection_cpu_seconds=%.6f", op_names[t][OP_GEMM],
                        (long long)atomic_load(&prof_calls[t]), atomic_load(&prof_total[t]),
                        atomic_load(&prof_blas[t]),
                        atomic_load(&prof_total[t]) - atomic_load(&prof_blas[t]),
                        atomic_load(&prof_total_cpu[t]), atomic_load(&prof_blas_cpu[t]),
                        atomic_load(&prof_total_cpu[t]) - atomic_load(&prof_blas_cpu[t]));
    pthread_mutex_lock(&report_mu);
    if (report_file != NULL) fclose(report_file);
    report_file = NULL;
    pthread_mutex_unlock(&report_mu);
    /* unloaded (dlclose): no thread may run the destructor of its state afterwards */
    if (was_init) pthread_key_delete(state_key);
}

/* The summary line (docs/dropin.md, "The report file"). */
static void write_summary(void) {
    char per_op[512];
    size_t len = 0;
    per_op[0] = '\0';
    for (int t = 0; t < T_COUNT; ++t)
        for (int o = 0; o < OP_COUNT && len < sizeof per_op; ++o)
            len += (size_t)snprintf(per_op + len, sizeof per_op - len, " %s=%lld",
                                    op_names[t][o], (long long)n_op[t][o]);
    report_line("summary protected=%lld passed_through=%lld detected=%lld corrected=%lld "
                "uncorrectable=%lld checksum_faults=%lld%s",
                (long long)n_protected, (long long)n_passed, (long long)n_detected,
                (long long)n_corrected, (long long)n_uncorrectable, (long long)n_checksum,
                per_op);
}

/* ---- the CUDA module ------------------------------------------------------------------- */

/* The module's table once loaded and a GPU found there; NULL otherwise. */
static const abft_blas_cuda_api_t *cuda;
static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;

/* The libabft functions on a handle of the CPU (this library's objects) and of the GPU
 * (the module's). */
static const abft_blas_lib_t host_lib = {
    abft_create, abft_destroy, abft_set_checksum_kind, abft_set_random_checksum,
    abft_set_bound_mode, abft_set_recompute, abft_set_lu_recovery, abft_injector_create,
    abft_injector_destroy, abft_injector_set_spec, abft_injector_set_targets,
    abft_injector_arm, abft_injector_attach, abft_injector_detach, abft_injector_flips};
static const abft_blas_lib_t *lib_of(int gpu) {
    return gpu && cuda != NULL ? &cuda->lib : &host_lib;
}

#if ABFT_HAVE_CUDA
/* Backend auto: is there a GPU at all? Asked of the driver (libcuda.so.1) alone, so that a
 * machine without one never loads the CUDA libraries of the module. */
static int gpu_in_driver(void) {
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (drv == NULL) return 0;
    int (*cu_init)(unsigned) = NULL;
    int (*cu_count)(int *) = NULL;
    *(void **)&cu_init = dlsym(drv, "cuInit");
    *(void **)&cu_count = dlsym(drv, "cuDeviceGetCount");
    int count = 0;
    if (cu_init == NULL || cu_count == NULL || cu_init(0) != 0 || cu_count(&count) != 0)
        count = 0;
    return count > 0; /* the driver stays loaded: the CUDA runtime uses it */
}
#endif

static void cuda_load(void) {
#if ABFT_HAVE_CUDA
    if (cfg.backend == ABFT_BACKEND_AUTO && !gpu_in_driver()) return;
    void *mod = open_module("libabft_blas_cuda.so", RTLD_NOW | RTLD_LOCAL);
    if (mod == NULL) {
        report_line("cuda libabft_blas_cuda.so not loaded (%s): calls run on the CPU",
                    dlerror());
        return;
    }
    abft_blas_cuda_module_fn entry;
    *(void **)&entry = dlsym(mod, ABFT_BLAS_CUDA_MODULE_ENTRY);
    const abft_blas_cuda_api_t *api =
        entry != NULL ? entry(ABFT_BLAS_CUDA_API_VERSION, &abft_cpu_host_blas) : NULL;
    if (api == NULL) {
        report_line("cuda libabft_blas_cuda.so is of another version: calls run on the CPU");
        return;
    }
    /* kept loaded either way: the CUDA runtime is not made to be unloaded */
    if (api->present()) cuda = api;
#endif
}

/* The module, loaded at the first call that would run on the GPU. */
static const abft_blas_cuda_api_t *cuda_api(void) {
    pthread_once(&cuda_once, cuda_load);
    return cuda;
}

/* ---- per-thread state ------------------------------------------------------------------ */

typedef struct thread_state {
    abft_handle_t h[2]; /* CPU, CUDA: made on first use */
    int tried[2];
    abft_injector_t inj[2];
    void *buf; /* host scratch: saved outputs, 64-bit pivots */
    size_t bytes;
    void *wbuf; /* the sums of the SYRK and TRSM checks */
    size_t wbytes;
    abft_blas_stage_t stage;
} thread_state_t;

/* > 0 while a call of this library runs on this thread: calls that come back go straight to
 * the next library. */
static _Thread_local int depth;
static _Thread_local thread_state_t *tls_state;

static void state_free(void *p) {
    thread_state_t *s = (thread_state_t *)p;
    if (s == NULL) return;
    depth++;
    for (int b = 0; b < 2; ++b) {
        if (s->inj[b] != NULL) lib_of(b)->injector_destroy(s->inj[b]);
        if (s->h[b] != NULL) lib_of(b)->destroy(s->h[b]);
    }
    if (cuda != NULL) cuda->release(&s->stage);
    free(s->buf);
    free(s->wbuf);
    free(s);
    tls_state = NULL;
    depth--;
}

static thread_state_t *state(void) {
    if (tls_state == NULL) {
        tls_state = (thread_state_t *)calloc(1, sizeof(thread_state_t));
        if (tls_state != NULL) {
            tls_state->stage.lanes = cfg.stage_threads;
            tls_state->stage.chunk = (size_t)cfg.stage_chunk;
            pthread_setspecific(state_key, tls_state);
        }
    }
    return tls_state;
}

static abft_handle_t handle(thread_state_t *s, int gpu) {
    if (!s->tried[gpu]) {
        s->tried[gpu] = 1;
        abft_handle_t h = NULL;
        const abft_blas_lib_t *L = lib_of(gpu);
        if (L->create(&h, gpu ? ABFT_BACKEND_CUDA : ABFT_BACKEND_CPU) == ABFT_STATUS_SUCCESS) {
            if (L->set_checksum_kind(h, cfg.checksum) != ABFT_STATUS_SUCCESS ||
                L->set_random_checksum(h, cfg.rnd, cfg.rnd_seed) != ABFT_STATUS_SUCCESS ||
                L->set_bound_mode(h, cfg.bound, cfg.factor) != ABFT_STATUS_SUCCESS ||
                L->set_recompute(h, 1) != ABFT_STATUS_SUCCESS ||
                L->set_lu_recovery(h, cfg.lu_recovery) != ABFT_STATUS_SUCCESS) {
                L->destroy(h);
                h = NULL;
            }
            s->h[gpu] = h;
        }
    }
    return s->h[gpu];
}

/* Host scratch of at least `bytes`, 16-byte aligned pieces carved by the caller. */
static void *scratch(thread_state_t *s, size_t bytes) {
    if (s->bytes < bytes) {
        void *p = realloc(s->buf, bytes);
        if (p == NULL) return NULL;
        s->buf = p, s->bytes = bytes;
    }
    return s->buf;
}

static void *wscratch(thread_state_t *s, size_t bytes) {
    if (s->wbytes < bytes) {
        void *p = realloc(s->wbuf, bytes);
        if (p == NULL) return NULL;
        s->wbuf = p, s->wbytes = bytes;
    }
    return s->wbuf;
}

static size_t round16(size_t b) { return (b + 15) & ~(size_t)15; }

/* rows x cols of es-byte elements between a strided matrix and a packed copy */
static void pack(void *dst, const void *src, int64_t ld, int64_t rows, int64_t cols, size_t es) {
    abft_blas_pack_bytes(dst, src, ld, rows, es, 0, (size_t)rows * (size_t)cols * es);
}
static void unpack(void *dst, int64_t ld, const void *src, int64_t rows, int64_t cols,
                   size_t es) {
    abft_blas_unpack_bytes(dst, ld, src, rows, es, 0, (size_t)rows * (size_t)cols * es);
}

/* Does a call of this work run on the GPU? Only there is the CUDA module loaded. */
static int use_gpu(double work) {
    if (cfg.backend == ABFT_BACKEND_CPU) return 0;
    if (cfg.backend != ABFT_BACKEND_CUDA && work < cfg.gpu_threshold) return 0;
    return cuda_api() != NULL;
}

/* ---- one protected call: numbering, injection, accounting, actions --------------------- */

typedef struct call {
    const char *op; /* "dgemm", ... */
    int t, o;       /* type, OP_* */
    long long index;
    int64_t m, n, k;
    int gpu;
    thread_state_t *s;
    abft_injector_t inj; /* armed for this call, or NULL */
    const abft_blas_lib_t *inj_lib; /* the libabft the injector belongs to */
} call_t;

static void inject_arm(call_t *c, abft_hook_site_t site, int64_t rows, int64_t cols) {
    c->inj = NULL;
    if (!cfg.inject || c->index != cfg.inj_call) return;
    if (cfg.inj_row >= rows || cfg.inj_col >= cols) {
        report_line("inject call=%lld op=%s: row=%lld col=%lld outside the %lld x %lld result, "
                    "nothing injected", c->index, c->op, cfg.inj_row, cfg.inj_col,
                    (long long)rows, (long long)cols);
        return;
    }
    thread_state_t *s = c->s;
    const abft_blas_lib_t *L = lib_of(c->gpu);
    if (s->inj[c->gpu] == NULL &&
        L->injector_create(s->h[c->gpu], &s->inj[c->gpu]) != ABFT_STATUS_SUCCESS) {
        s->inj[c->gpu] = NULL;
        return;
    }
    abft_injector_t inj = s->inj[c->gpu];
    abft_fault_spec_t spec = abft_fault_spec_default();
    spec.bit_class = ABFT_BITS_EXACT;
    spec.bit = c->op[0] == 's' && cfg.inj_bit > 31 ? 30 : cfg.inj_bit; /* fp32: 32 bits */
    spec.width = 1;
    spec.nelems = 1;
    spec.row = cfg.inj_row, spec.col = cfg.inj_col;
    if (L->injector_set_spec(inj, &spec) != ABFT_STATUS_SUCCESS ||
        L->injector_set_targets(inj, 1u << site, -1, 1) != ABFT_STATUS_SUCCESS ||
        L->injector_arm(inj, 0) != ABFT_STATUS_SUCCESS ||
        L->injector_attach(inj) != ABFT_STATUS_SUCCESS)
        return;
    c->inj = inj;
    c->inj_lib = L;
}

static void inject_disarm(call_t *c) {
    if (c->inj == NULL) return;
    const abft_flip_t *fl = NULL;
    int64_t nf = 0;
    if (c->inj_lib->injector_flips(c->inj, &fl, &nf) == ABFT_STATUS_SUCCESS)
        for (int64_t i = 0; i < nf; ++i)
            report_line("inject call=%lld op=%s site=%s row=%lld col=%lld bit=%d old=%.17g "
                        "new=%.17g", c->index, c->op, abft_hook_site_name(fl[i].site),
                        (long long)fl[i].row, (long long)fl[i].col, fl[i].bit, fl[i].old_value,
                        fl[i].new_value);
    c->inj_lib->injector_detach(c->inj);
    c->inj = NULL;
}

/* The first report of a call: counters and one line per recorded fault. */
static void account(const call_t *c, const abft_report_t *r) {
    atomic_fetch_add(&n_protected, 1);
    atomic_fetch_add(&n_op[c->t][c->o], 1);
    atomic_fetch_add(&n_detected, r->detected);
    atomic_fetch_add(&n_corrected, r->corrected + r->recomputed);
    atomic_fetch_add(&n_checksum, r->checksum_faults);
    for (int64_t f = 0; f < r->nfaults && f < ABFT_REPORT_MAX_FAULTS; ++f) {
        const abft_fault_t *x = &r->faults[f];
        report_line("fault call=%lld op=%s m=%lld n=%lld k=%lld backend=%s row=%lld col=%lld "
                    "factor=%s side=%d delta=%.6g ratio=%.6g action=%s",
                    c->index, c->op, (long long)c->m, (long long)c->n, (long long)c->k,
                    c->gpu ? "cuda" : "cpu", (long long)x->row, (long long)x->col,
                    abft_factor_name((abft_factor_t)x->factor), x->side, x->delta, x->ratio,
                    abft_action_name((abft_action_t)x->action));
    }
    if (r->detected > r->nfaults)
        report_line("fault call=%lld op=%s: %lld flagged entries, %lld recorded above",
                    c->index, c->op, (long long)r->detected, (long long)r->nfaults);
}

/* What is left uncorrectable after the configured recomputation: warn or abort. */
static void uncorrectable_left(const call_t *c, long long left) {
    atomic_fetch_add(&n_uncorrectable, left);
    report_line("uncorrectable call=%lld op=%s m=%lld n=%lld k=%lld entries=%lld", c->index,
                c->op, (long long)c->m, (long long)c->n, (long long)c->k, left);
    if (cfg.on_unc & (ON_WARN | ON_ABORT))
        fprintf(stderr, "abft_blas: %s call %lld (m=%lld n=%lld k=%lld): %lld uncorrectable "
                        "entries, the result is not trustworthy%s\n",
                c->op, c->index, (long long)c->m, (long long)c->n, (long long)c->k, left,
                (cfg.on_unc & ON_ABORT) ? "; aborting (ABFT_BLAS_ON_UNCORRECTABLE=abort)" : "");
    if (cfg.on_unc & ON_ABORT) {
        fini();
        abort();
    }
}

/* The "recompute" action: up to two more runs of a call left with uncorrectable entries, each
 * from the output as it was before the call (restored from `saved` when not NULL), verified
 * again; the runs are reported. `again` runs the protected operation once more. Returns the
 * uncorrectable entries still left (0 when a run came out clean); *failed gets the status
 * of a run that failed (then the output may be partly written and the caller must put it
 * right), else SUCCESS. */
typedef abft_status_t (*again_fn)(void *ctx, abft_report_t *rep);
static long long recompute_left(const call_t *c, long long left, again_fn again, void *ctx,
                                void *out, int64_t ld, const void *saved, int64_t rows,
                                int64_t cols, size_t es, int singular_ok,
                                abft_status_t *failed) {
    *failed = ABFT_STATUS_SUCCESS;
    for (int attempt = 1; attempt <= 2 && left > 0; ++attempt) {
        if (saved != NULL) unpack(out, ld, saved, rows, cols, es);
        abft_report_t r2;
        abft_status_t s2 = again(ctx, &r2);
        if (s2 != ABFT_STATUS_SUCCESS && !(singular_ok && s2 == ABFT_STATUS_SINGULAR)) {
            report_line("error call=%lld op=%s: %s (recompute attempt %d)", c->index, c->op,
                        abft_status_name(s2), attempt);
            *failed = s2;
            break;
        }
        report_line("recompute call=%lld op=%s attempt=%d detected=%lld uncorrectable=%lld",
                    c->index, c->op, attempt, (long long)r2.detected, (long long)r2.uncorrectable);
        if (r2.uncorrectable == 0) {
            atomic_fetch_add(&n_corrected, left);
            left = 0;
        }
    }
    return left;
}

/* The scratch of a factorization or solve: npiv 64-bit pivots, then, when the recompute
 * action may need it, a packed copy (*saved) of the rows x cols array X the call
 * overwrites. NULL when out of memory. */
static int64_t *pivots_and_copy(thread_state_t *s, int npiv, const void *X, int ldx, int rows,
                                int cols, size_t es, void **saved) {
    const int keep = (cfg.on_unc & ON_RECOMPUTE) != 0;
    const size_t piv_bytes = round16((size_t)npiv * sizeof(int64_t));
    char *buf = (char *)scratch(s, piv_bytes + (keep ? (size_t)rows * (size_t)cols * es : 0));
    *saved = NULL;
    if (buf == NULL) return NULL;
    if (keep) {
        *saved = buf + piv_bytes;
        pack(*saved, X, ldx, rows, cols, es);
    }
    return (int64_t *)buf;
}

/* A protected call that failed after it began to overwrite X: reported; with the saved
 * copy X is put back and 1 returned (the caller runs the next library's routine), else the
 * call is left uncorrectable and 0 returned. */
static int failed_call(const call_t *c, abft_status_t st, void *X, int ldx, const void *saved,
                       int rows, int cols, size_t es) {
    report_line("error call=%lld op=%s: %s", c->index, c->op, abft_status_name(st));
    if (saved != NULL) {
        unpack(X, ldx, saved, rows, cols, es);
        return 1;
    }
    uncorrectable_left(c, 1);
    return 0;
}

/* Errors that leave every output untouched (docs/api.md): the call passes through. */
static int untouched_refusal(abft_status_t st) {
    return st == ABFT_STATUS_NON_FINITE_INPUT || st == ABFT_STATUS_INVALID_VALUE ||
           st == ABFT_STATUS_NOT_SUPPORTED;
}

/* The random checksum's seed for a GEMM call (ABFT_BLAS_CHECKSUM=...+random): a new one per
 * call, from ABFT_BLAS_RANDOM_SEED and the call's number, on both handles of the thread (a
 * staged call may move to the CPU; a handle made later starts from the base seed). */
static void random_checksum_for(const call_t *c) {
    if (!cfg.rnd) return;
    uint64_t z = (uint64_t)cfg.rnd_seed + 0x9E3779B97F4A7C15ull * (uint64_t)c->index;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    for (int b = 0; b < 2; ++b)
        if (c->s->h[b] != NULL) (void)lib_of(b)->set_random_checksum(c->s->h[b], 1, z);
}

/* gpu_ok: the operation has a GPU path (GEMM, GETRF, GETRS) */
static void call_begin(call_t *c, int t, int o, int64_t m, int64_t n, int64_t k,
                       double work, int gpu_ok) {
    c->t = t, c->o = o;
    c->op = op_names[t][o];
    c->m = m, c->n = n, c->k = k;
    c->inj = NULL;
    c->inj_lib = NULL;
    c->s = state();
    c->gpu = gpu_ok && c->s != NULL && use_gpu(work);
    if (c->s != NULL && c->gpu && handle(c->s, 1) == NULL) c->gpu = 0;
    c->index = 0;
}

static int lsame(char a, char b) { return (a | 0x20) == (b | 0x20); }

/* Floating-point exception flags. The library's own arithmetic (bounds with subnormal
 * constants, checksums) may raise underflow and denormal flags that the plain routine would
 * not: a protected call leaves the flags as it found them, plus the invalid, divide-by-zero,
 * overflow and inexact flags raised while it ran. */
#if defined(__x86_64__)
#include <xmmintrin.h>
typedef unsigned fp_flags_t;
static fp_flags_t fp_save(void) { return _mm_getcsr(); }
static void fp_restore(fp_flags_t saved) {
    /* MXCSR flags: invalid 0x01, denormal 0x02, divide 0x04, overflow 0x08, underflow 0x10,
     * inexact 0x20 (fenv.h cannot clear the denormal flag) */
    unsigned now = _mm_getcsr();
    _mm_setcsr((now & ~0x3Fu) | (saved & 0x3Fu) | (now & 0x2Du));
}
#else
typedef fexcept_t fp_flags_t;
static fp_flags_t fp_save(void) {
    fexcept_t f;
    fegetexceptflag(&f, FE_ALL_EXCEPT);
    return f;
}
static void fp_restore(fp_flags_t saved) {
    int keep = fetestexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_INEXACT);
    fesetexceptflag(&saved, FE_ALL_EXCEPT);
    if (keep) feraiseexcept(keep);
}
#endif

/* ---- GEMM ----------------------------------------------------------------------------- */

static void real_gemm(int t, char ta, char tb, int m, int n, int k, const void *alpha,
                      const void *A, int lda, const void *B, int ldb, const void *beta, void *C,
                      int ldc) {
    next[t].gemm(&ta, &tb, &m, &n, &k, alpha, A, &lda, B, &ldb, beta, C, &ldc, 1, 1);
}

/* The reference BLAS's checks; 0 or the number of the first bad parameter. */
static int gemm_info(char ta, char tb, int m, int n, int k, int lda, int ldb, int ldc) {
    int nota = lsame(ta, 'N'), notb = lsame(tb, 'N');
    int nrowa = nota ? m : k, nrowb = notb ? k : n;
    if (!nota && !lsame(ta, 'C') && !lsame(ta, 'T')) return 1;
    if (!notb && !lsame(tb, 'C') && !lsame(tb, 'T')) return 2;
    if (m < 0) return 3;
    if (n < 0) return 4;
    if (k < 0) return 5;
    if (lda < (nrowa > 1 ? nrowa : 1)) return 8;
    if (ldb < (nrowb > 1 ? nrowb : 1)) return 10;
    if (ldc < (m > 1 ? m : 1)) return 13;
    return 0;
}

/* One protected GEMM call's arguments, and the old C where a run on the CPU may have to be
 * repeated (recompute) or undone (an error after it began to write C). */
typedef struct gemm_call {
    const abft_blas_type_t *ty;
    call_t *c;
    abft_operation_t oa, ob;
    const void *alpha, *A;
    int lda;
    const void *B;
    int ldb;
    const void *beta;
    void *C;
    int ldc;
    int beta_zero;
    void *saved;   /* the old C, packed: made before the first run on the CPU when beta != 0
                    * and the recompute action is on. A staged call needs none: it leaves
                    * the host C as it was until its result is final (gemm_core). */
    int c_written; /* a run on the CPU has begun to write the host C */
} gemm_call_t;

static void keep_old_c(gemm_call_t *g) {
    if (g->saved != NULL || g->c_written || g->beta_zero || !(cfg.on_unc & ON_RECOMPUTE))
        return;
    g->saved = scratch(g->c->s, (size_t)g->c->m * (size_t)g->c->n * g->ty->size);
    if (g->saved != NULL) pack(g->saved, g->C, g->ldc, g->c->m, g->c->n, g->ty->size);
}

/* One run of the protected GEMM: staged to the GPU (the result stays there; the host C is
 * untouched), or on the CPU, where a staged run that failed is also repeated. */
static abft_status_t gemm_once(gemm_call_t *g, abft_report_t *rep) {
    call_t *c = g->c;
    const abft_blas_type_t *ty = g->ty;
    abft_handle_t h = c->s->h[c->gpu];
    if (c->gpu) {
        abft_status_t st = cuda->gemm(&c->s->stage, ty->prec, h, g->oa, g->ob, c->m, c->n,
                                               c->k, g->alpha, g->A, g->lda, g->B, g->ldb,
                                               g->beta, g->C, g->ldc, rep);
        if (st == ABFT_STATUS_SUCCESS || st == ABFT_STATUS_NON_FINITE_INPUT) return st;
        /* the host arrays are untouched: protect it on the CPU instead */
        report_line("cuda call=%lld op=%s: %s, run on the CPU", c->index, c->op,
                    abft_status_name(st));
        if (c->inj != NULL) inject_disarm(c);
        c->gpu = 0;
        h = handle(c->s, 0);
        if (h == NULL) return ABFT_STATUS_NOT_SUPPORTED;
    }
    keep_old_c(g); /* unless a CPU run wrote it, the host C is still the old one here */
    g->c_written = 1;
    return ty->gemm(h, g->oa, g->ob, c->m, c->n, c->k, g->alpha, g->A, g->lda, g->B, g->ldb,
                    g->beta, g->C, g->ldc, rep);
}

/* recompute_left's run: on the CPU from the old C (put back first); staged to the GPU the
 * host C is still the old C */
static abft_status_t gemm_again(void *ctx, abft_report_t *rep) {
    gemm_call_t *g = (gemm_call_t *)ctx;
    if (!g->c->gpu && g->c_written && !g->beta_zero) {
        /* the host C holds a CPU run's result: only its saved old value can restart it */
        if (g->saved == NULL) return ABFT_STATUS_ALLOC_FAILED;
        unpack(g->C, g->ldc, g->saved, g->c->m, g->c->n, g->ty->size);
    }
    return gemm_once(g, rep);
}

/* A protected run that failed after the call was under way: the routine after this library
 * computes C from the old C (restored from the saved copy where a CPU run wrote it; with
 * beta = 0 C is not read), and 0 is returned; where the old C is lost, the call is left
 * uncorrectable and m·n is returned (C may be partly written). */
static long long gemm_fallback(int t, gemm_call_t *g, char ta, char tb, int m, int n, int k,
                               const void *alpha, const void *A, int lda, const void *B,
                               int ldb, const void *beta, void *C, int ldc) {
    if (g->c_written && !g->beta_zero) {
        if (g->saved == NULL) return (long long)m * (long long)n;
        unpack(C, ldc, g->saved, m, n, g->ty->size);
    }
    real_gemm(t, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    return 0;
}

/* After the argument checks: quick returns, pass-through or the protected call. */
static void gemm_core(int t, char ta, char tb, int m, int n, int k, const void *alpha,
                      const void *A, int lda, const void *B, int ldb, const void *beta, void *C,
                      int ldc) {
    const abft_blas_type_t *ty = &types[t];
    if (m == 0 || n == 0 || ((ty->is_zero(alpha) || k == 0) && ty->is_one(beta))) return;
    double work = (double)m * (double)n * (double)k;
    if (ty->is_zero(alpha) || k == 0) {
        /* no product: C = beta·C, done here as the reference does it, A and B never
         * referenced (some BLAS libraries read them even then) */
        atomic_fetch_add(&n_passed, 1);
        ty->scale(m, n, beta, C, ldc);
        return;
    }
    /* non-finite scalars are the next library's to propagate */
    if (work < cfg.threshold || !ty->is_finite(alpha) || !ty->is_finite(beta)) {
        atomic_fetch_add(&n_passed, 1);
        real_gemm(t, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    call_t c;
    const double prof_t0 = cfg.profile ? wall_now() : 0.0;
    const double prof_c0 = cfg.profile ? cpu_now() : 0.0;
    prof_blas_now = prof_blas_cpu_now = 0.0;
    call_begin(&c, t, OP_GEMM, m, n, k, work, 1);
    if (c.s == NULL || handle(c.s, c.gpu) == NULL) {
        atomic_fetch_add(&n_passed, 1);
        real_gemm(t, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    gemm_call_t g = {ty, &c, lsame(ta, 'N') ? ABFT_OP_N : ABFT_OP_T,
                     lsame(tb, 'N') ? ABFT_OP_N : ABFT_OP_T, alpha, A, lda, B, ldb, beta, C,
                     ldc, ty->is_zero(beta), NULL, 0};
    c.index = atomic_fetch_add(&n_index, 1) + 1;
    random_checksum_for(&c);
    inject_arm(&c, ABFT_SITE_AFTER_GEMM, m, n);
    abft_report_t rep;
    abft_status_t st = gemm_once(&g, &rep);
    inject_disarm(&c);
    if (untouched_refusal(st)) { /* C untouched: NaN/Inf inputs, aliasing, sizes */
        atomic_fetch_add(&n_passed, 1);
        real_gemm(t, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    if (st != ABFT_STATUS_SUCCESS) { /* a CPU run failed after the multiplication started */
        report_line("error call=%lld op=%s: %s", c.index, c.op, abft_status_name(st));
        long long lost = gemm_fallback(t, &g, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                                       ldc);
        if (lost > 0) uncorrectable_left(&c, lost);
        else atomic_fetch_add(&n_passed, 1); /* computed by the routine after this one */
        return;
    }
    account(&c, &rep);
    long long left = rep.uncorrectable;
    if (left > 0 && (cfg.on_unc & ON_RECOMPUTE) && (g.beta_zero || c.gpu || g.saved != NULL)) {
        /* the real BLAS again, verified again; twice at most */
        abft_status_t failed;
        left = recompute_left(&c, left, gemm_again, &g, C, ldc, NULL, m, n, ty->size, 0,
                              &failed);
        if (failed != ABFT_STATUS_SUCCESS) { /* a GPU result was given up, or C partly written */
            c.gpu = 0;
            left = gemm_fallback(t, &g, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        }
    }
    if (c.gpu) { /* still on the GPU: the final result to the host */
        int written = 0;
        st = cuda->gemm_result(&c.s->stage, ty->prec, c.s->h[1], m, n, C, ldc, &written);
        if (st != ABFT_STATUS_SUCCESS) {
            /* not begun: the host C is the old one; begun: C may be partly written, which
             * only beta = 0 (C not read) can recompute */
            report_line("error call=%lld op=%s: %s (copying the result back)", c.index, c.op,
                        abft_status_name(st));
            g.c_written = written;
            left = gemm_fallback(t, &g, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        }
    }
    if (left > 0) uncorrectable_left(&c, left);
    if (cfg.profile && !c.gpu) {
        atomic_fetch_add(&prof_calls[t], 1);
        prof_add(&prof_total_cpu[t], cpu_now() - prof_c0);
        prof_add(&prof_total[t], wall_now() - prof_t0);
        prof_add(&prof_blas[t], prof_blas_now);
        prof_add(&prof_blas_cpu[t], prof_blas_cpu_now);
    }
}

static void gemm_entry(int t, const char *ta, const char *tb, const int *m, const int *n,
                       const int *k, const void *alpha, const void *A, const int *lda,
                       const void *B, const int *ldb, const void *beta, void *C,
                       const int *ldc) {
    if (depth > 0) { /* called from inside this library (a LAPACK routine, the backend) */
        next[t].gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, 1, 1);
        return;
    }
    ensure_init();
    int info = gemm_info(*ta, *tb, *m, *n, *k, *lda, *ldb, *ldc);
    if (info != 0) {
        xerbla_(types[t].name_gemm, &info, 6);
        return;
    }
    fp_flags_t fp = fp_save();
    depth++;
    gemm_core(t, *ta, *tb, *m, *n, *k, alpha, A, *lda, B, *ldb, beta, C, *ldc);
    depth--;
    fp_restore(fp);
}

EXPORT void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
                   const double *alpha, const double *A, const int *lda, const double *B,
                   const int *ldb, const double *beta, double *C, const int *ldc, size_t lta,
                   size_t ltb) {
    (void)lta, (void)ltb;
    gemm_entry(T_D, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

EXPORT void sgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
                   const float *alpha, const float *A, const int *lda, const float *B,
                   const int *ldb, const float *beta, float *C, const int *ldc, size_t lta,
                   size_t ltb) {
    (void)lta, (void)ltb;
    gemm_entry(T_S, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* ---- CBLAS GEMM ------------------------------------------------------------------------ */

enum { CBLAS_ROW = 101, CBLAS_COL = 102, CBLAS_N = 111, CBLAS_T = 112, CBLAS_C = 113 };

/* Without a CBLAS after this library, errors are reported as the reference CBLAS does:
 * cblas_xerbla(parameter, routine, ...) when the program has one, else xerbla_. */
static void cblas_error(int t, int param, int f77info) {
    typedef void (*cblas_xerbla_t)(int, const char *, const char *, ...);
    cblas_xerbla_t cx = (cblas_xerbla_t)dlsym(RTLD_DEFAULT, "cblas_xerbla");
    if (cx != NULL) cx(param, types[t].sym_cblas_gemm, "");
    else xerbla_(types[t].name_gemm, &f77info, 6);
}

static void cblas_gemm_entry(int t, int layout, int TA, int TB, int M, int N, int K,
                             const void *alpha, const void *A, int lda, const void *B, int ldb,
                             const void *beta, void *C, int ldc) {
    if (depth == 0) ensure_init();
    const abft_blas_type_t *ty = &types[t];
    void *real = next[t].cblas_gemm;
    int valid_enums = (layout == CBLAS_ROW || layout == CBLAS_COL) &&
                      (TA == CBLAS_N || TA == CBLAS_T || TA == CBLAS_C) &&
                      (TB == CBLAS_N || TB == CBLAS_T || TB == CBLAS_C);
    if (depth > 0 && real != NULL) {
        ty->cblas_gemm_call(real, layout, TA, TB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    char ta = TA == CBLAS_N ? 'N' : TA == CBLAS_T ? 'T' : 'C';
    char tb = TB == CBLAS_N ? 'N' : TB == CBLAS_T ? 'T' : 'C';
    /* column-major form: row-major C^T = op(B)^T·op(A)^T, the operands swapped */
    int row = layout == CBLAS_ROW;
    char fa = row ? tb : ta, fb = row ? ta : tb;
    int fm = row ? N : M, fn = row ? M : N;
    const void *fA = row ? B : A, *fB = row ? A : B;
    int flda = row ? ldb : lda, fldb = row ? lda : ldb;
    int info = valid_enums ? gemm_info(fa, fb, fm, fn, K, flda, fldb, ldc) : 0;
    if (!valid_enums || info != 0) {
        if (real != NULL) { /* the next CBLAS reports it its own way */
            depth++;
            ty->cblas_gemm_call(real, layout, TA, TB, M, N, K, alpha, A, lda, B, ldb, beta, C,
                                ldc);
            depth--;
            return;
        }
        if (layout != CBLAS_ROW && layout != CBLAS_COL) cblas_error(t, 1, 1);
        else if (TA != CBLAS_N && TA != CBLAS_T && TA != CBLAS_C) cblas_error(t, 2, row ? 2 : 1);
        else if (TB != CBLAS_N && TB != CBLAS_T && TB != CBLAS_C) cblas_error(t, 3, row ? 1 : 2);
        else {
            /* the Fortran parameter of the swapped call, renamed to the CBLAS one */
            static const int col_map[14] = {0, 2, 3, 4, 5, 6, 0, 0, 9, 0, 11, 0, 0, 14};
            static const int row_map[14] = {0, 3, 2, 5, 4, 6, 0, 0, 11, 0, 9, 0, 0, 14};
            cblas_error(t, (row ? row_map : col_map)[info], info);
        }
        return;
    }
    if (depth > 0) { /* no CBLAS after this library: its Fortran routine */
        real_gemm(t, fa, fb, fm, fn, K, alpha, fA, flda, fB, fldb, beta, C, ldc);
        return;
    }
    fp_flags_t fp = fp_save();
    depth++;
    gemm_core(t, fa, fb, fm, fn, K, alpha, fA, flda, fB, fldb, beta, C, ldc);
    depth--;
    fp_restore(fp);
}

EXPORT void cblas_dgemm(int layout, int TA, int TB, int M, int N, int K, double alpha,
                        const double *A, int lda, const double *B, int ldb, double beta,
                        double *C, int ldc) {
    cblas_gemm_entry(T_D, layout, TA, TB, M, N, K, &alpha, A, lda, B, ldb, &beta, C, ldc);
}

EXPORT void cblas_sgemm(int layout, int TA, int TB, int M, int N, int K, float alpha,
                        const float *A, int lda, const float *B, int ldb, float beta, float *C,
                        int ldc) {
    cblas_gemm_entry(T_S, layout, TA, TB, M, N, K, &alpha, A, lda, B, ldb, &beta, C, ldc);
}

/* ---- GETRF ----------------------------------------------------------------------------- */

static abft_status_t getrf_once(const abft_blas_type_t *ty, call_t *c, void *A, int lda,
                                int64_t *ipiv, int64_t *info, abft_report_t *rep) {
    abft_handle_t h = c->s->h[c->gpu];
    if (c->gpu) {
        int written = 0;
        abft_status_t st = cuda->getrf(&c->s->stage, ty->prec, h, c->m, c->n, A, lda, ipiv,
                                                info, rep, &written);
        if (st == ABFT_STATUS_SUCCESS || st == ABFT_STATUS_SINGULAR ||
            st == ABFT_STATUS_NON_FINITE_INPUT || written)
            return st; /* written: A may be partly overwritten, no rerun over it here */
        report_line("cuda call=%lld op=%s: %s, run on the CPU", c->index, c->op,
                    abft_status_name(st));
        if (c->inj != NULL) inject_disarm(c);
        c->gpu = 0;
        h = handle(c->s, 0);
        if (h == NULL) return ABFT_STATUS_NOT_SUPPORTED;
    }
    return ty->getrf(h, c->m, c->n, A, lda, ipiv, info, rep);
}

/* getrf_once's arguments, for recompute_left */
typedef struct getrf_again {
    const abft_blas_type_t *ty;
    call_t *c;
    void *A;
    int lda;
    int64_t *ipiv, *info;
} getrf_again_t;
static abft_status_t getrf_again(void *ctx, abft_report_t *rep) {
    getrf_again_t *g = (getrf_again_t *)ctx;
    return getrf_once(g->ty, g->c, g->A, g->lda, g->ipiv, g->info, rep);
}

static int getrf_core(int t, int m, int n, void *A, int lda, int *ipiv, int *info) {
    const abft_blas_type_t *ty = &types[t];
    const int mn = m < n ? m : n;
    double work = (double)m * (double)n * (double)mn;
    call_t c;
    if (work < cfg.threshold) goto pass;
    call_begin(&c, t, OP_GETRF, m, n, mn, work, 1);
    if (c.s == NULL || handle(c.s, c.gpu) == NULL) goto pass;
    void *saved; /* A is overwritten: a copy for the recompute action */
    int64_t *ip = pivots_and_copy(c.s, mn, A, lda, m, n, ty->size, &saved);
    if (ip == NULL) goto pass;
    c.index = atomic_fetch_add(&n_index, 1) + 1;
    inject_arm(&c, ABFT_SITE_AFTER_LU, m, n);
    abft_report_t rep;
    int64_t inf = 0;
    abft_status_t st = getrf_once(ty, &c, A, lda, ip, &inf, &rep);
    inject_disarm(&c);
    if (untouched_refusal(st)) goto pass; /* A untouched */
    if (st != ABFT_STATUS_SUCCESS && st != ABFT_STATUS_SINGULAR) {
        if (failed_call(&c, st, A, lda, saved, m, n, ty->size)) goto pass;
        *info = 0;
        return 1;
    }
    account(&c, &rep);
    long long left = rep.uncorrectable;
    if (left > 0 && saved != NULL) {
        getrf_again_t g = {ty, &c, A, lda, ip, &inf};
        abft_status_t failed;
        left = recompute_left(&c, left, getrf_again, &g, A, lda, saved, m, n, ty->size, 1,
                              &failed);
        if (failed != ABFT_STATUS_SUCCESS) { /* A from the copy, the routine after this one */
            unpack(A, lda, saved, m, n, ty->size);
            next[t].getrf(&m, &n, A, &lda, ipiv, info);
            return 1;
        }
    }
    for (int i = 0; i < mn; ++i) ipiv[i] = (int)ip[i];
    *info = (int)inf;
    if (left > 0) uncorrectable_left(&c, left);
    return 1;
pass:
    atomic_fetch_add(&n_passed, 1);
    next[t].getrf(&m, &n, A, &lda, ipiv, info);
    return 0;
}

static void getrf_entry(int t, const int *m, const int *n, void *A, const int *lda, int *ipiv,
                        int *info) {
    if (depth > 0) {
        next[t].getrf(m, n, A, lda, ipiv, info);
        return;
    }
    ensure_init();
    *info = 0;
    if (*m < 0) *info = -1;
    else if (*n < 0) *info = -2;
    else if (*lda < (*m > 1 ? *m : 1)) *info = -4;
    if (*info != 0) {
        int p = -*info;
        xerbla_(types[t].name_getrf, &p, 6);
        return;
    }
    if (*m == 0 || *n == 0) return;
    fp_flags_t fp = fp_save();
    depth++;
    getrf_core(t, *m, *n, A, *lda, ipiv, info);
    depth--;
    fp_restore(fp);
}

EXPORT void dgetrf_(const int *m, const int *n, double *A, const int *lda, int *ipiv,
                    int *info) {
    getrf_entry(T_D, m, n, A, lda, ipiv, info);
}

EXPORT void sgetrf_(const int *m, const int *n, float *A, const int *lda, int *ipiv,
                    int *info) {
    getrf_entry(T_S, m, n, A, lda, ipiv, info);
}

/* ---- GETRS ----------------------------------------------------------------------------- */

static abft_status_t getrs_once(const abft_blas_type_t *ty, call_t *c, abft_operation_t op,
                                const void *A, int lda, const int64_t *ipiv, void *B, int ldb,
                                abft_report_t *rep) {
    abft_handle_t h = c->s->h[c->gpu];
    if (c->gpu) {
        int written = 0;
        abft_status_t st = cuda->getrs(&c->s->stage, ty->prec, h, op, c->m, c->n, A, lda,
                                                ipiv, B, ldb, rep, &written);
        if (st == ABFT_STATUS_SUCCESS || st == ABFT_STATUS_NON_FINITE_INPUT || written)
            return st; /* written: B may be partly overwritten, no rerun over it here */
        report_line("cuda call=%lld op=%s: %s, run on the CPU", c->index, c->op,
                    abft_status_name(st));
        c->gpu = 0;
        h = handle(c->s, 0);
        if (h == NULL) return ABFT_STATUS_NOT_SUPPORTED;
    }
    return ty->getrs(h, op, c->m, c->n, A, lda, ipiv, B, ldb, rep);
}

/* getrs_once's arguments, for recompute_left */
typedef struct getrs_again {
    const abft_blas_type_t *ty;
    call_t *c;
    abft_operation_t op;
    const void *A;
    int lda;
    const int64_t *ipiv;
    void *B;
    int ldb;
} getrs_again_t;
static abft_status_t getrs_again(void *ctx, abft_report_t *rep) {
    getrs_again_t *g = (getrs_again_t *)ctx;
    return getrs_once(g->ty, g->c, g->op, g->A, g->lda, g->ipiv, g->B, g->ldb, rep);
}

static int getrs_core(int t, char tr, int n, int nrhs, const void *A, int lda, const int *ipiv,
                       void *B, int ldb, int *info) {
    const abft_blas_type_t *ty = &types[t];
    double work = (double)n * (double)n * (double)nrhs;
    call_t c;
    if (work < cfg.threshold) goto pass;
    /* m, n, k of the report lines: the order, the right-hand sides, the order */
    call_begin(&c, t, OP_GETRS, n, nrhs, n, work, 1);
    if (c.s == NULL || handle(c.s, c.gpu) == NULL) goto pass;
    void *saved; /* B is overwritten: a copy for the recompute action */
    int64_t *ip = pivots_and_copy(c.s, n, B, ldb, n, nrhs, ty->size, &saved);
    if (ip == NULL) goto pass;
    for (int i = 0; i < n; ++i) ip[i] = ipiv[i];
    const abft_operation_t op = lsame(tr, 'N') ? ABFT_OP_N : ABFT_OP_T;
    c.index = atomic_fetch_add(&n_index, 1) + 1;
    if (cfg.inject && c.index == cfg.inj_call)
        report_line("inject call=%lld op=%s: no injection site in a solve, nothing injected",
                    c.index, c.op);
    abft_report_t rep;
    abft_status_t st = getrs_once(ty, &c, op, A, lda, ip, B, ldb, &rep);
    if (untouched_refusal(st)) goto pass; /* B untouched */
    if (st != ABFT_STATUS_SUCCESS) {
        if (failed_call(&c, st, B, ldb, saved, n, nrhs, ty->size)) goto pass;
        return 1;
    }
    account(&c, &rep);
    long long left = rep.uncorrectable;
    if (left > 0 && saved != NULL) {
        getrs_again_t g = {ty, &c, op, A, lda, ip, B, ldb};
        abft_status_t failed;
        left = recompute_left(&c, left, getrs_again, &g, B, ldb, saved, n, nrhs, ty->size, 0,
                              &failed);
        if (failed != ABFT_STATUS_SUCCESS) { /* B from the copy, the routine after this one */
            unpack(B, ldb, saved, n, nrhs, ty->size);
            next[t].getrs(&tr, &n, &nrhs, A, &lda, ipiv, B, &ldb, info, 1);
            return 1;
        }
    }
    if (left > 0) uncorrectable_left(&c, left);
    return 1;
pass:
    atomic_fetch_add(&n_passed, 1);
    next[t].getrs(&tr, &n, &nrhs, A, &lda, ipiv, B, &ldb, info, 1);
    return 0;
}

static void getrs_entry(int t, const char *tr, const int *n, const int *nrhs, const void *A,
                        const int *lda, const int *ipiv, void *B, const int *ldb, int *info) {
    if (depth > 0) {
        next[t].getrs(tr, n, nrhs, A, lda, ipiv, B, ldb, info, 1);
        return;
    }
    ensure_init();
    *info = 0;
    if (!lsame(*tr, 'N') && !lsame(*tr, 'T') && !lsame(*tr, 'C')) *info = -1;
    else if (*n < 0) *info = -2;
    else if (*nrhs < 0) *info = -3;
    else if (*lda < (*n > 1 ? *n : 1)) *info = -5;
    else if (*ldb < (*n > 1 ? *n : 1)) *info = -8;
    if (*info != 0) {
        int p = -*info;
        xerbla_(types[t].name_getrs, &p, 6);
        return;
    }
    if (*n == 0 || *nrhs == 0) return;
    fp_flags_t fp = fp_save();
    depth++;
    getrs_core(t, *tr, *n, *nrhs, A, *lda, ipiv, B, *ldb, info);
    depth--;
    fp_restore(fp);
}

EXPORT void dgetrs_(const char *tr, const int *n, const int *nrhs, const double *A,
                    const int *lda, const int *ipiv, double *B, const int *ldb, int *info,
                    size_t ltr) {
    (void)ltr;
    getrs_entry(T_D, tr, n, nrhs, A, lda, ipiv, B, ldb, info);
}

EXPORT void sgetrs_(const char *tr, const int *n, const int *nrhs, const float *A,
                    const int *lda, const int *ipiv, float *B, const int *ldb, int *info,
                    size_t ltr) {
    (void)ltr;
    getrs_entry(T_S, tr, n, nrhs, A, lda, ipiv, B, ldb, info);
}

/* ---- GESV ------------------------------------------------------------------------------ */

/* The reference DGESV: the factorization, then (info = 0) the solve, each protected as the
 * drop-in's dgetrf_ and dgetrs_ are. The summary counts the call as its getrf and getrs,
 * and under dgesv= when both ran protected. */
static void gesv_entry(int t, const int *n, const int *nrhs, void *A, const int *lda,
                       int *ipiv, void *B, const int *ldb, int *info) {
    if (depth > 0) {
        if (next[t].gesv != NULL) {
            next[t].gesv(n, nrhs, A, lda, ipiv, B, ldb, info);
        } else {
            next[t].getrf(n, n, A, lda, ipiv, info);
            if (*info == 0) next[t].getrs("N", n, nrhs, A, lda, ipiv, B, ldb, info, 1);
        }
        return;
    }
    ensure_init();
    *info = 0;
    if (*n < 0) *info = -1;
    else if (*nrhs < 0) *info = -2;
    else if (*lda < (*n > 1 ? *n : 1)) *info = -4;
    else if (*ldb < (*n > 1 ? *n : 1)) *info = -7;
    if (*info != 0) {
        int p = -*info;
        xerbla_(types[t].name_gesv, &p, 6);
        return;
    }
    if (*n == 0) return;
    fp_flags_t fp = fp_save();
    depth++;
    int prot = getrf_core(t, *n, *n, A, *lda, ipiv, info);
    if (*info == 0 && *nrhs > 0)
        prot &= getrs_core(t, 'N', *n, *nrhs, A, *lda, ipiv, B, *ldb, info);
    if (prot) atomic_fetch_add(&n_op[t][OP_GESV], 1);
    depth--;
    fp_restore(fp);
}

EXPORT void dgesv_(const int *n, const int *nrhs, double *A, const int *lda, int *ipiv,
                   double *B, const int *ldb, int *info) {
    gesv_entry(T_D, n, nrhs, A, lda, ipiv, B, ldb, info);
}

EXPORT void sgesv_(const int *n, const int *nrhs, float *A, const int *lda, int *ipiv,
                   float *B, const int *ldb, int *info) {
    gesv_entry(T_S, n, nrhs, A, lda, ipiv, B, ldb, info);
}

/* ---- SYRK and TRSM (checks of this library: abft_blas_l3.c) --------------------------- */

static double scalar_of(int t, const void *p) {
    return t == T_D ? *(const double *)p : (double)*(const float *)p;
}

/* ABFT_BLAS_INJECT for the checks of this library: bit B of element (I, J) of the result
 * flipped after the routine, before the check (site after_call). */
static void inject_result(const call_t *c, void *X, int ld, int rows, int cols, size_t es,
                          int64_t row, int64_t col) {
    if (!cfg.inject || c->index != cfg.inj_call) return;
    if (row >= rows || col >= cols) {
        report_line("inject call=%lld op=%s: row=%lld col=%lld outside the %d x %d result, "
                    "nothing injected", c->index, c->op, (long long)row, (long long)col, rows,
                    cols);
        return;
    }
    char *p = (char *)X + ((size_t)col * (size_t)ld + (size_t)row) * es;
    const int bit = es == 4 && cfg.inj_bit > 31 ? 30 : cfg.inj_bit;
    double old, now;
    if (es == 8) {
        uint64_t u;
        memcpy(&u, p, 8);
        memcpy(&old, &u, 8);
        u ^= 1ull << bit;
        memcpy(p, &u, 8);
        memcpy(&now, &u, 8);
    } else {
        uint32_t u;
        float f;
        memcpy(&u, p, 4);
        memcpy(&f, &u, 4);
        old = f;
        u ^= 1u << bit;
        memcpy(p, &u, 4);
        memcpy(&f, &u, 4);
        now = f;
    }
    report_line("inject call=%lld op=%s site=after_call row=%lld col=%lld bit=%d old=%.17g "
                "new=%.17g", c->index, c->op, (long long)row, (long long)col, bit, old, now);
}

/* -- SYRK -- */

static void real_syrk(int t, char uplo, char trans, int n, int k, const void *alpha,
                      const void *A, int lda, const void *beta, void *C, int ldc) {
    next[t].syrk(&uplo, &trans, &n, &k, alpha, A, &lda, beta, C, &ldc, 1, 1);
}

typedef struct syrk_run {
    int t;
    char uplo, trans;
    int n, k, lda, ldc;
    const void *alpha, *A, *beta;
    void *C;
    const void *saved; /* the old triangle (beta != 0) */
    abft_blas_syrk_t chk;
    call_t *c;
} syrk_run_t;

static abft_status_t syrk_again(void *ctx, abft_report_t *rep) {
    syrk_run_t *r = (syrk_run_t *)ctx;
    if (r->saved != NULL)
        abft_blas_tri_load(types[r->t].prec, r->chk.upper, r->n, r->C, r->ldc, r->saved);
    real_syrk(r->t, r->uplo, r->trans, r->n, r->k, r->alpha, r->A, r->lda, r->beta, r->C,
              r->ldc);
    abft_blas_syrk_after(r->c->s->h[0], &r->chk, r->C, r->ldc, rep);
    return ABFT_STATUS_SUCCESS;
}

static void syrk_core(int t, char uplo, char trans, int n, int k, const void *alpha,
                      const void *A, int lda, const void *beta, void *C, int ldc) {
    const abft_blas_type_t *ty = &types[t];
    const int upper = lsame(uplo, 'U');
    if (n == 0 || ((ty->is_zero(alpha) || k == 0) && ty->is_one(beta))) return;
    if (ty->is_zero(alpha) || k == 0) { /* C = beta·C on the triangle, A not read */
        atomic_fetch_add(&n_passed, 1);
        abft_blas_tri_scale(ty->prec, upper, n, beta, C, ldc);
        return;
    }
    const double work = (double)n * (double)n * (double)k;
    if (work < cfg.threshold || !ty->is_finite(alpha) || !ty->is_finite(beta)) goto pass;
    call_t c;
    call_begin(&c, t, OP_SYRK, n, n, k, work, 0); /* checked on the host (docs/dropin.md) */
    if (c.s == NULL || handle(c.s, 0) == NULL) goto pass;
    void *ws = wscratch(c.s, abft_blas_syrk_ws(n, k));
    if (ws == NULL) goto pass;
    syrk_run_t r = {t, uplo, trans, n, k, lda, ldc, alpha, A, beta, C, NULL,
                    {ty->prec, upper, !lsame(trans, 'N'), n, k, A, lda, scalar_of(t, alpha),
                     scalar_of(t, beta), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                     {0.0, 0.0}},
                    &c};
    if (!abft_blas_syrk_before(&r.chk, ws, C, ldc)) goto pass; /* NaN/Inf: unchecked */
    const int beta_zero = ty->is_zero(beta);
    if (!beta_zero && (cfg.on_unc & ON_RECOMPUTE)) {
        void *buf = scratch(c.s, ((size_t)n * (size_t)(n + 1) / 2) * ty->size);
        if (buf != NULL) abft_blas_tri_save(ty->prec, upper, n, C, ldc, buf);
        r.saved = buf;
    }
    c.index = atomic_fetch_add(&n_index, 1) + 1;
    real_syrk(t, uplo, trans, n, k, alpha, A, lda, beta, C, ldc);
    if (cfg.inject && c.index == cfg.inj_call) {
        /* a position of the other triangle means its mirror */
        int64_t i = cfg.inj_row, j = cfg.inj_col;
        if (upper ? i > j : i < j) i = cfg.inj_col, j = cfg.inj_row;
        inject_result(&c, C, ldc, n, n, ty->size, i, j);
    }
    abft_report_t rep;
    abft_blas_syrk_after(c.s->h[0], &r.chk, C, ldc, &rep);
    account(&c, &rep);
    long long left = rep.uncorrectable;
    if (left > 0 && (cfg.on_unc & ON_RECOMPUTE) && (beta_zero || r.saved != NULL)) {
        abft_status_t failed;
        left = recompute_left(&c, left, syrk_again, &r, C, ldc, NULL, n, n, ty->size, 0,
                              &failed);
    }
    if (left > 0) uncorrectable_left(&c, left);
    return;
pass:
    atomic_fetch_add(&n_passed, 1);
    real_syrk(t, uplo, trans, n, k, alpha, A, lda, beta, C, ldc);
}

static void syrk_entry(int t, const char *uplo, const char *trans, const int *n, const int *k,
                       const void *alpha, const void *A, const int *lda, const void *beta,
                       void *C, const int *ldc) {
    if (depth > 0) {
        next[t].syrk(uplo, trans, n, k, alpha, A, lda, beta, C, ldc, 1, 1);
        return;
    }
    ensure_init();
    /* the reference's checks, in its order */
    const int nrowa = lsame(*trans, 'N') ? *n : *k;
    int info = 0;
    if (!lsame(*uplo, 'U') && !lsame(*uplo, 'L')) info = 1;
    else if (!lsame(*trans, 'N') && !lsame(*trans, 'T') && !lsame(*trans, 'C')) info = 2;
    else if (*n < 0) info = 3;
    else if (*k < 0) info = 4;
    else if (*lda < (nrowa > 1 ? nrowa : 1)) info = 7;
    else if (*ldc < (*n > 1 ? *n : 1)) info = 10;
    if (info != 0) {
        xerbla_(types[t].name_syrk, &info, 6);
        return;
    }
    fp_flags_t fp = fp_save();
    depth++;
    syrk_core(t, *uplo, *trans, *n, *k, alpha, A, *lda, beta, C, *ldc);
    depth--;
    fp_restore(fp);
}

EXPORT void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k,
                   const double *alpha, const double *A, const int *lda, const double *beta,
                   double *C, const int *ldc, size_t lu, size_t lt) {
    (void)lu, (void)lt;
    syrk_entry(T_D, uplo, trans, n, k, alpha, A, lda, beta, C, ldc);
}

EXPORT void ssyrk_(const char *uplo, const char *trans, const int *n, const int *k,
                   const float *alpha, const float *A, const int *lda, const float *beta,
                   float *C, const int *ldc, size_t lu, size_t lt) {
    (void)lu, (void)lt;
    syrk_entry(T_S, uplo, trans, n, k, alpha, A, lda, beta, C, ldc);
}

/* -- TRSM -- */

static void real_trsm(int t, char side, char uplo, char transa, char diag, int m, int n,
                      const void *alpha, const void *A, int lda, void *B, int ldb) {
    next[t].trsm(&side, &uplo, &transa, &diag, &m, &n, alpha, A, &lda, B, &ldb, 1, 1, 1, 1);
}

typedef struct trsm_run {
    int t;
    char side, uplo, transa, diag;
    int m, n, lda, ldb;
    const void *alpha, *A;
    void *B;
    abft_blas_trsm_t chk;
    call_t *c;
} trsm_run_t;

/* recompute_left's run: B is the old B again (put back from the copy), scaled and encoded
 * again, solved, checked */
static abft_status_t trsm_again(void *ctx, abft_report_t *rep) {
    trsm_run_t *r = (trsm_run_t *)ctx;
    const abft_blas_type_t *ty = &types[r->t];
    (void)abft_blas_trsm_rhs(&r->chk, r->B, r->ldb, r->alpha); /* finite the first time */
    real_trsm(r->t, r->side, r->uplo, r->transa, r->diag, r->m, r->n, ty->one, r->A, r->lda,
              r->B, r->ldb);
    abft_blas_trsm_after(r->c->s->h[0], &r->chk, r->B, r->ldb, rep);
    return ABFT_STATUS_SUCCESS;
}

static void trsm_core(int t, char side, char uplo, char transa, char diag, int m, int n,
                      const void *alpha, const void *A, int lda, void *B, int ldb) {
    const abft_blas_type_t *ty = &types[t];
    if (m == 0 || n == 0) return;
    if (ty->is_zero(alpha)) { /* B = 0, A not read */
        atomic_fetch_add(&n_passed, 1);
        ty->scale(m, n, alpha, B, ldb);
        return;
    }
    const int left = lsame(side, 'L');
    const double work = left ? (double)m * (double)m * (double)n
                             : (double)m * (double)n * (double)n;
    if (work < cfg.threshold || !ty->is_finite(alpha)) goto pass;
    call_t c;
    /* m, n, k of the report lines: B's rows and columns, the triangle's order */
    call_begin(&c, t, OP_TRSM, m, n, left ? m : n, work, 0); /* on the host (docs/dropin.md) */
    if (c.s == NULL || handle(c.s, 0) == NULL) goto pass;
    void *ws = wscratch(c.s, abft_blas_trsm_ws(m, n, left));
    if (ws == NULL) goto pass;
    trsm_run_t r = {t, side, uplo, transa, diag, m, n, lda, ldb, alpha, A, B,
                    {ty->prec, left, lsame(uplo, 'U'), !lsame(transa, 'N'), lsame(diag, 'U'),
                     m, n, A, lda, NULL, NULL, NULL, NULL, NULL, NULL, NULL, {0.0, 0.0}, 0.0},
                    &c};
    if (!abft_blas_trsm_encode(&r.chk, ws)) goto pass; /* NaN/Inf or a zero divisor */
    void *saved = NULL; /* B is overwritten: a copy for the recompute action */
    if (cfg.on_unc & ON_RECOMPUTE) {
        saved = scratch(c.s, (size_t)m * (size_t)n * ty->size);
        if (saved != NULL) pack(saved, B, ldb, m, n, ty->size);
    }
    if (!abft_blas_trsm_rhs(&r.chk, B, ldb, alpha)) {
        /* NaN/Inf in alpha·B (now in B): the solve with alpha = 1 is the call's, unchecked */
        atomic_fetch_add(&n_passed, 1);
        real_trsm(t, side, uplo, transa, diag, m, n, ty->one, A, lda, B, ldb);
        return;
    }
    c.index = atomic_fetch_add(&n_index, 1) + 1;
    real_trsm(t, side, uplo, transa, diag, m, n, ty->one, A, lda, B, ldb);
    inject_result(&c, B, ldb, m, n, ty->size, cfg.inj_row, cfg.inj_col);
    abft_report_t rep;
    abft_blas_trsm_after(c.s->h[0], &r.chk, B, ldb, &rep);
    account(&c, &rep);
    long long left_n = rep.uncorrectable;
    if (left_n > 0 && saved != NULL) {
        abft_status_t failed;
        left_n = recompute_left(&c, left_n, trsm_again, &r, B, ldb, saved, m, n, ty->size, 0,
                                &failed);
    }
    if (left_n > 0) uncorrectable_left(&c, left_n);
    return;
pass:
    atomic_fetch_add(&n_passed, 1);
    real_trsm(t, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}

static void trsm_entry(int t, const char *side, const char *uplo, const char *transa,
                       const char *diag, const int *m, const int *n, const void *alpha,
                       const void *A, const int *lda, void *B, const int *ldb) {
    if (depth > 0) {
        next[t].trsm(side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb, 1, 1, 1, 1);
        return;
    }
    ensure_init();
    const int nrowa = lsame(*side, 'L') ? *m : *n;
    int info = 0;
    if (!lsame(*side, 'L') && !lsame(*side, 'R')) info = 1;
    else if (!lsame(*uplo, 'U') && !lsame(*uplo, 'L')) info = 2;
    else if (!lsame(*transa, 'N') && !lsame(*transa, 'T') && !lsame(*transa, 'C')) info = 3;
    else if (!lsame(*diag, 'U') && !lsame(*diag, 'N')) info = 4;
    else if (*m < 0) info = 5;
    else if (*n < 0) info = 6;
    else if (*lda < (nrowa > 1 ? nrowa : 1)) info = 9;
    else if (*ldb < (*m > 1 ? *m : 1)) info = 11;
    if (info != 0) {
        xerbla_(types[t].name_trsm, &info, 6);
        return;
    }
    fp_flags_t fp = fp_save();
    depth++;
    trsm_core(t, *side, *uplo, *transa, *diag, *m, *n, alpha, A, *lda, B, *ldb);
    depth--;
    fp_restore(fp);
}

EXPORT void dtrsm_(const char *side, const char *uplo, const char *transa, const char *diag,
                   const int *m, const int *n, const double *alpha, const double *A,
                   const int *lda, double *B, const int *ldb, size_t ls, size_t lu, size_t lt,
                   size_t ld) {
    (void)ls, (void)lu, (void)lt, (void)ld;
    trsm_entry(T_D, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}

EXPORT void strsm_(const char *side, const char *uplo, const char *transa, const char *diag,
                   const int *m, const int *n, const float *alpha, const float *A,
                   const int *lda, float *B, const int *ldb, size_t ls, size_t lu, size_t lt,
                   size_t ld) {
    (void)ls, (void)lu, (void)lt, (void)ld;
    trsm_entry(T_S, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}

/* ---- CBLAS SYRK and TRSM ---------------------------------------------------------------- */

/* A row-major call is the column-major one of the transposed matrices: SYRK with the other
 * triangle and the other transposition, TRSM with the other side and triangle and m, n
 * swapped. An invalid call goes to the next library's CBLAS routine, which reports it its own
 * way (without one, xerbla_ gets the Fortran routine's parameter number). */
enum { CBLAS_UPPER = 121, CBLAS_LOWER = 122, CBLAS_NONUNIT = 131, CBLAS_UNIT = 132,
       CBLAS_LEFT = 141, CBLAS_RIGHT = 142 };

#define ABFT_BLAS_CBLAS_L3(P, T, TI)                                                          \
    typedef void (*P##_cblas_syrk_t)(int, int, int, int, int, T, const T *, int, T, T *, int); \
    typedef void (*P##_cblas_trsm_t)(int, int, int, int, int, int, int, T, const T *, int,    \
                                     T *, int);                                               \
    EXPORT void cblas_##P##syrk(int layout, int uplo, int trans, int n, int k, T alpha,       \
                                const T *A, int lda, T beta, T *C, int ldc) {                 \
        if (depth == 0) ensure_init();                                                        \
        P##_cblas_syrk_t real = (P##_cblas_syrk_t)next[TI].cblas_syrk;                        \
        const int row = layout == CBLAS_ROW;                                                  \
        const int ok = (row || layout == CBLAS_COL) &&                                        \
                       (uplo == CBLAS_UPPER || uplo == CBLAS_LOWER) &&                        \
                       (trans == CBLAS_N || trans == CBLAS_T || trans == CBLAS_C);            \
        char fu = (uplo == CBLAS_UPPER) != row ? 'U' : 'L';                                   \
        char ft = (trans == CBLAS_N) != row ? 'N' : 'T';                                      \
        if (depth > 0 && real != NULL) {                                                      \
            real(layout, uplo, trans, n, k, alpha, A, lda, beta, C, ldc);                     \
            return;                                                                           \
        }                                                                                     \
        const int nrowa = ft == 'N' ? n : k;                                                  \
        int info = !ok ? 1 : n < 0 ? 3 : k < 0 ? 4 : lda < (nrowa > 1 ? nrowa : 1) ? 7       \
                   : ldc < (n > 1 ? n : 1) ? 10 : 0;                                          \
        if (info != 0 || depth > 0) {                                                         \
            if (real != NULL) {                                                               \
                depth++;                                                                      \
                real(layout, uplo, trans, n, k, alpha, A, lda, beta, C, ldc);                 \
                depth--;                                                                      \
            } else if (info != 0) {                                                           \
                xerbla_(types[TI].name_syrk, &info, 6);                                       \
            } else {                                                                          \
                next[TI].syrk(&fu, &ft, &n, &k, &alpha, A, &lda, &beta, C, &ldc, 1, 1);       \
            }                                                                                 \
            return;                                                                           \
        }                                                                                     \
        fp_flags_t fp = fp_save();                                                            \
        depth++;                                                                              \
        syrk_core(TI, fu, ft, n, k, &alpha, A, lda, &beta, C, ldc);                           \
        depth--;                                                                              \
        fp_restore(fp);                                                                       \
    }                                                                                         \
    EXPORT void cblas_##P##trsm(int layout, int side, int uplo, int transa, int diag, int m,  \
                                int n, T alpha, const T *A, int lda, T *B, int ldb) {         \
        if (depth == 0) ensure_init();                                                        \
        P##_cblas_trsm_t real = (P##_cblas_trsm_t)next[TI].cblas_trsm;                        \
        const int row = layout == CBLAS_ROW;                                                  \
        const int ok = (row || layout == CBLAS_COL) &&                                        \
                       (side == CBLAS_LEFT || side == CBLAS_RIGHT) &&                         \
                       (uplo == CBLAS_UPPER || uplo == CBLAS_LOWER) &&                        \
                       (transa == CBLAS_N || transa == CBLAS_T || transa == CBLAS_C) &&       \
                       (diag == CBLAS_UNIT || diag == CBLAS_NONUNIT);                         \
        char fs = (side == CBLAS_LEFT) != row ? 'L' : 'R';                                    \
        char fu = (uplo == CBLAS_UPPER) != row ? 'U' : 'L';                                   \
        char ft = transa == CBLAS_N ? 'N' : 'T', fd = diag == CBLAS_UNIT ? 'U' : 'N';         \
        int fm = row ? n : m, fn = row ? m : n;                                               \
        if (depth > 0 && real != NULL) {                                                      \
            real(layout, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);              \
            return;                                                                           \
        }                                                                                     \
        const int nrowa = fs == 'L' ? fm : fn;                                                \
        int info = !ok ? 1 : fm < 0 ? 5 : fn < 0 ? 6 : lda < (nrowa > 1 ? nrowa : 1) ? 9     \
                   : ldb < (fm > 1 ? fm : 1) ? 11 : 0;                                        \
        if (info != 0 || depth > 0) {                                                         \
            if (real != NULL) {                                                               \
                depth++;                                                                      \
                real(layout, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);          \
                depth--;                                                                      \
            } else if (info != 0) {                                                           \
                xerbla_(types[TI].name_trsm, &info, 6);                                       \
            } else {                                                                          \
                next[TI].trsm(&fs, &fu, &ft, &fd, &fm, &fn, &alpha, A, &lda, B, &ldb, 1, 1,   \
                              1, 1);                                                          \
            }                                                                                 \
            return;                                                                           \
        }                                                                                     \
        fp_flags_t fp = fp_save();                                                            \
        depth++;                                                                              \
        trsm_core(TI, fs, fu, ft, fd, fm, fn, &alpha, A, lda, B, ldb);                        \
        depth--;                                                                              \
        fp_restore(fp);                                                                       \
    }

ABFT_BLAS_CBLAS_L3(d, double, T_D)
ABFT_BLAS_CBLAS_L3(s, float, T_S)

/* bench_dropin_cpu: the drop-in's CPU overhead (libabft_blas.so, docs/dropin.md, "Overhead")
 * against the time to read its operands once more at the machine's streaming rate, side by
 * side in one run.
 *
 * For each precision, size n and beta, C = A·B + beta·C (n x n, alpha = 1) is timed through
 *   blas   the host BLAS's dgemm_ / sgemm_ (unprotected; the BLAS this program is linked with)
 *   shim   dgemm_ / sgemm_ of libabft_blas.so, loaded with dlopen (only these calls go
 *          through it), ABFT_BLAS_THRESHOLD=0 and ABFT_BLAS_BACKEND=cpu unless set
 *   read   one read of A, B and C (an XOR over their words), as they are between calls
 * interleaved rep after rep (one warm-up each first), C restored before each call. The
 * overhead is the median over reps of t(shim) - t(blas), and the drop-in's own profile
 * (ABFT_BLAS_PROFILE=on) gives the time of its protected calls outside the host GEMM, per
 * call, measured within each call (free of the GEMM's own variation, which on a machine with
 * other load is larger than the protection); each is compared with the time to
 * read A, B and C (3·n²·element bytes) at the streaming rate, measured on a buffer of
 * --stream-mb MiB (default 1024, far above the caches), before and after the timed calls
 * (the lower of the two medians of 5 reads), with as many threads as the BLAS has
 * (OPENBLAS_NUM_THREADS, else OMP_NUM_THREADS, else every logical CPU). Also given: the
 * fastest call of each variant and their difference (the least disturbed calls on a machine
 * with other load). The limit (issue 42), judged on the protection in a call: at most 1.15 x
 * that time. Every measurement runs in a child process of its own (the drop-in's report per
 * row; no thread of one left in the next). The shim's results must equal the BLAS's bit for bit (the
 * protected call runs the same routine) and its report must show every timed call protected
 * and nothing flagged, else the run fails.
 *
 * Usage: bench_dropin_cpu [--shim PATH] [--sizes 1024,2048] [--precs d,s] [--betas 0]
 *                         [--reps 15] [--stream-mb 1024] [--md FILE] [--json FILE]
 *                         [--commit SHA] [--label TEXT]
 *        bench_dropin_cpu --stream-only [--stream-mb 1024]   (prints the streaming rate)
 * --md and --json append (one section, or one JSON object per line, per run). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_host.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef ABFT_BLAS_DEFAULT_PATH
#define ABFT_BLAS_DEFAULT_PATH "libabft_blas.so"
#endif

typedef void (*gemm_fn)(const char *, const char *, const int *, const int *, const int *,
                        const void *, const void *, const int *, const void *, const int *,
                        const void *, void *, const int *, size_t, size_t);

/* the host BLAS this program is linked with */
void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *,
            const double *, const int *, const double *, const int *, const double *, double *,
            const int *, size_t, size_t);
void sgemm_(const char *, const char *, const int *, const int *, const int *, const float *,
            const float *, const int *, const float *, const int *, const float *, float *,
            const int *, size_t, size_t);

/* CPU time of the calling thread: with one thread every part of a call runs on it, and the
 * time the machine's other load takes from it does not count */
static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the BLAS's thread count, as the environment sets it */
static int blas_threads(void) {
    const char *v = getenv("OPENBLAS_NUM_THREADS");
    if (v == NULL || atoi(v) < 1) v = getenv("OMP_NUM_THREADS");
    if (v != NULL && atoi(v) >= 1) return atoi(v);
    return nprocs();
}

static volatile uint64_t sink;

/* one read of `bytes` (a multiple of 64) with `threads` threads */
static void read_words(const void *p, size_t bytes, int threads) {
    const uint64_t *w = (const uint64_t *)p;
    const size_t n = bytes / 8;
    uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
#pragma omp parallel for num_threads(threads) schedule(static) \
    reduction(^ : a0, a1, a2, a3, a4, a5, a6, a7)
    for (size_t i = 0; i < n - n % 8; i += 8) {
        a0 ^= w[i], a1 ^= w[i + 1], a2 ^= w[i + 2], a3 ^= w[i + 3];
        a4 ^= w[i + 4], a5 ^= w[i + 5], a6 ^= w[i + 6], a7 ^= w[i + 7];
    }
    sink ^= a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7;
    (void)threads;
}

/* the streaming read rate (bytes/s): the median of 5 reads of a buffer of mb MiB; with
 * *cpu_rate (one thread) also by the thread's CPU time */
static double stream_rate_cpu(size_t mb, int threads, double *cpu_rate) {
    const size_t bytes = mb << 20;
    char *buf = malloc(bytes);
    if (buf == NULL) return NAN;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < bytes; i += 4096) memset(buf + i, (int)(i >> 12), 4096);
    double t[5], c[5];
    for (int r = 0; r < 5; ++r) {
        double t0 = now(), c0 = cpu_now();
        read_words(buf, bytes, threads);
        t[r] = now() - t0, c[r] = cpu_now() - c0;
    }
    free(buf);
    if (cpu_rate != NULL) *cpu_rate = (double)bytes / median(c, 5);
    return (double)bytes / median(t, 5);
}
static double stream_rate(size_t mb, int threads) { return stream_rate_cpu(mb, threads, NULL); }

typedef struct row {
    char prec;
    int n;
    double beta;
    double blas, shim, read;  /* median seconds */
    double over;              /* median of t(shim) - t(blas) */
    double blas_min, shim_min; /* the fastest call of each (the least disturbed) */
    double over_cpu;          /* one thread: median of the differences of CPU time */
    double stream_cpu_t;      /* one thread: A, B, C at the streaming rate by CPU time */
    double stream_t;          /* A, B, C at the streaming rate */
    double diff;              /* max |C_shim - C_blas| */
    double prot;              /* the drop-in's profile: a call's time outside the host GEMM */
    double prot_cpu;          /* the same by the calling thread's CPU time (one thread) */
} row_t;

/* Runs fn(arg, res) in a child process, whose res (bytes) comes back through a pipe; the
 * child ends with exit (the drop-in's destructor writes its report). 1 when it did. */
static int in_child(void (*fn)(void *arg, void *res), void *arg, void *res, size_t bytes) {
    int fd[2];
    if (pipe(fd) != 0) return 0;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
        close(fd[0]);
        fn(arg, res);
        const char *p = (const char *)res;
        for (size_t done = 0; done < bytes;) {
            ssize_t k = write(fd[1], p + done, bytes - done);
            if (k <= 0) _exit(1);
            done += (size_t)k;
        }
        close(fd[1]);
        exit(0);
    }
    close(fd[1]);
    size_t got = 0;
    while (got < bytes) {
        ssize_t k = read(fd[0], (char *)res + got, bytes - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return got == bytes && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

typedef struct stream_job {
    size_t mb;
    int threads;
} stream_job_t;
static void stream_job(void *arg, void *res) {
    const stream_job_t *j = (const stream_job_t *)arg;
    double *r = (double *)res;
    r[0] = stream_rate_cpu(j->mb, j->threads, &r[1]);
}

typedef struct row_job {
    const char *shim;
    char prec;
    int n;
    double beta;
    int reps, threads;
} row_job_t;

/* One row, in its child: the drop-in loaded here, the calls interleaved (see the header). */
static void row_job(void *arg, void *res) {
    const row_job_t *j = (const row_job_t *)arg;
    row_t *w = (row_t *)res;
    memset(w, 0, sizeof *w);
    void *shim = dlopen(j->shim, RTLD_NOW | RTLD_LOCAL);
    if (shim == NULL) {
        fprintf(stderr, "bench_dropin_cpu: cannot load %s: %s\n", j->shim, dlerror());
        return;
    }
    gemm_fn shim_fn[2], blas_fn[2] = {(gemm_fn)(void *)dgemm_, (gemm_fn)(void *)sgemm_};
    *(void **)&shim_fn[0] = dlsym(shim, "dgemm_");
    *(void **)&shim_fn[1] = dlsym(shim, "sgemm_");
    if (shim_fn[0] == NULL || shim_fn[1] == NULL) {
        fprintf(stderr, "bench_dropin_cpu: no dgemm_/sgemm_ in %s\n", j->shim);
        return;
    }
    const int n = j->n, p = j->prec == 's', reps = j->reps, threads = j->threads;
    const size_t es = p ? 4 : 8, nn = (size_t)n * (size_t)n, bytes = nn * es;
    char *A = malloc(bytes), *B = malloc(bytes), *C0 = malloc(bytes);
    char *Cb = malloc(bytes), *Cs = malloc(bytes);
    double *tb = malloc(sizeof(double) * (size_t)reps), *ts = malloc(sizeof(double) * (size_t)reps);
    double *tr = malloc(sizeof(double) * (size_t)reps), *od = malloc(sizeof(double) * (size_t)reps);
    double *oc = malloc(sizeof(double) * (size_t)reps);
    if (A == NULL || B == NULL || C0 == NULL || Cb == NULL || Cs == NULL || tb == NULL ||
        ts == NULL || tr == NULL || od == NULL || oc == NULL) {
        fprintf(stderr, "bench_dropin_cpu: out of memory at n = %d\n", n);
        return;
    }
    uint64_t s = 12345u + (uint64_t)n;
    for (size_t i = 0; i < nn; ++i) {
        double v[3];
        for (int k = 0; k < 3; ++k) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            v[k] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
        }
        if (p) ((float *)A)[i] = (float)v[0], ((float *)B)[i] = (float)v[1],
               ((float *)C0)[i] = (float)v[2];
        else ((double *)A)[i] = v[0], ((double *)B)[i] = v[1], ((double *)C0)[i] = v[2];
    }
    const double alpha_d = 1.0, beta_d = j->beta;
    const float alpha_s = 1.0f, beta_s = (float)j->beta;
    const void *alpha = p ? (const void *)&alpha_s : (const void *)&alpha_d;
    const void *beta = p ? (const void *)&beta_s : (const void *)&beta_d;
    for (int r = -1; r < reps; ++r) { /* r = -1: warm-up */
        memcpy(Cb, C0, bytes);
        double c0 = cpu_now(), t0 = now();
        blas_fn[p]("N", "N", &n, &n, &n, alpha, A, &n, B, &n, beta, Cb, &n, 1, 1);
        double t1 = now(), c1 = cpu_now();
        memcpy(Cs, C0, bytes);
        double c2 = cpu_now(), t2 = now();
        shim_fn[p]("N", "N", &n, &n, &n, alpha, A, &n, B, &n, beta, Cs, &n, 1, 1);
        double t3 = now(), c3 = cpu_now();
        double t4 = now();
        read_words(A, bytes, threads);
        read_words(B, bytes, threads);
        read_words(Cs, bytes, threads);
        double t5 = now();
        if (r >= 0) {
            tb[r] = t1 - t0, ts[r] = t3 - t2, tr[r] = t5 - t4;
            od[r] = ts[r] - tb[r];
            oc[r] = (c3 - c2) - (c1 - c0);
        }
    }
    w->prec = j->prec, w->n = n, w->beta = beta_d;
    w->blas = median(tb, reps), w->shim = median(ts, reps);
    w->read = median(tr, reps), w->over = median(od, reps);
    w->over_cpu = median(oc, reps);
    w->blas_min = tb[0], w->shim_min = ts[0];
    for (int r = 1; r < reps; ++r)
        w->blas_min = fmin(w->blas_min, tb[r]), w->shim_min = fmin(w->shim_min, ts[r]);
    w->diff = 0;
    for (size_t i = 0; i < nn; ++i) {
        double x = p ? ((float *)Cs)[i] : ((double *)Cs)[i];
        double y = p ? ((float *)Cb)[i] : ((double *)Cb)[i];
        w->diff = fmax(w->diff, fabs(x - y));
    }
    free(A), free(B), free(C0), free(Cb), free(Cs);
    free(tb), free(ts), free(tr), free(od), free(oc);
}

int main(int argc, char **argv) {
    const char *shim_path = ABFT_BLAS_DEFAULT_PATH, *md_path = NULL, *json_path = NULL;
    const char *commit = getenv("ABFT_COMMIT"), *label = NULL;
    double sizes[8] = {1024, 2048}, betas[4] = {0}, precs_v[2];
    char precs[2] = {'d', 's'};
    int nsizes = 2, nbetas = 1, nprecs = 2, reps = 15, stream_only = 0;
    size_t stream_mb = 1024;
    (void)precs_v;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--stream-only") == 0) {
            stream_only = 1;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "bench_dropin_cpu: %s needs a value\n", a);
            return 2;
        }
        if (strcmp(a, "--shim") == 0) shim_path = v;
        else if (strcmp(a, "--sizes") == 0) nsizes = parse_list(v, sizes, 8);
        else if (strcmp(a, "--betas") == 0) nbetas = parse_list(v, betas, 4);
        else if (strcmp(a, "--precs") == 0) {
            nprecs = 0;
            for (const char *p = v; *p != '\0' && nprecs < 2; ++p)
                if (*p == 'd' || *p == 's') precs[nprecs++] = *p;
        } else if (strcmp(a, "--reps") == 0) reps = atoi(v);
        else if (strcmp(a, "--stream-mb") == 0) stream_mb = (size_t)atol(v);
        else if (strcmp(a, "--md") == 0) md_path = v;
        else if (strcmp(a, "--json") == 0) json_path = v;
        else if (strcmp(a, "--commit") == 0) commit = v;
        else if (strcmp(a, "--label") == 0) label = v;
        else {
            fprintf(stderr, "bench_dropin_cpu: unknown option %s (see the header of "
                            "bench/bench_dropin_cpu.c)\n", a);
            return 2;
        }
        ++i;
    }
    const int threads = blas_threads();
    if (stream_only) {
        printf("stream_read_GBps %.3f threads %d\n", stream_rate(stream_mb, threads) / 1e9,
               threads);
        return 0;
    }
    if (reps < 3 || reps > 201 || nsizes < 1 || nbetas < 1 || nprecs < 1) {
        fprintf(stderr, "bench_dropin_cpu: --reps 3..201, at least one size, beta, precision\n");
        return 2;
    }
    setenv("ABFT_BLAS_THRESHOLD", "0", 0);
    setenv("ABFT_BLAS_BACKEND", "cpu", 0);
    setenv("ABFT_BLAS_PROFILE", "on", 1);
    setenv("ABFT_BLAS_REPORT", "bench_dropin_cpu.report", 1);
    Dl_info di;
    const char *host_blas = dladdr((void *)dgemm_, &di) && di.dli_fname ? di.dli_fname : "?";
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    const char *obt = getenv("OPENBLAS_NUM_THREADS"), *omp = getenv("OMP_NUM_THREADS");
    /* every measurement in a child of its own: the drop-in's report (its profile line) per
     * row, and no OpenMP or BLAS thread of one measurement left in the next */
    double sr[2] = {NAN, NAN};
    stream_job_t sj = {stream_mb, threads};
    if (!in_child(stream_job, &sj, sr, sizeof sr)) return 1;
    double crate0 = sr[1], crate1 = NAN;
    const double rate0 = sr[0];
    printf("bench_dropin_cpu: %s (%d logical CPUs), host BLAS %s, OPENBLAS_NUM_THREADS=%s "
           "OMP_NUM_THREADS=%s (%d threads), %d reps\n", cpu, nprocs(), host_blas,
           obt ? obt : "(unset)", omp ? omp : "(unset)", threads, reps);
    printf("%4s %6s %5s %10s %10s %10s %10s %10s %8s %10s %8s %10s %8s\n", "prec", "n", "beta",
           "blas_s", "shim_s", "over_ms", "read_ms", "stream_ms", "ratio", "minover_ms",
           "ratio", "prot_ms", "ratio");
    row_t rows[64];
    int nrows = 0, failed = 0;
    long long shim_calls = 0, prot = 0, det = 0, unc = 0;
    for (int pi = 0; pi < nprecs; ++pi)
        for (int si = 0; si < nsizes; ++si)
            for (int bi = 0; bi < nbetas; ++bi) {
                row_job_t rj = {shim_path, precs[pi], (int)sizes[si], betas[bi], reps, threads};
                row_t *w = &rows[nrows++];
                remove("bench_dropin_cpu.report");
                if (!in_child(row_job, &rj, w, sizeof *w) || w->n == 0) return 1;
                if (w->diff != 0) failed = 1;
                shim_calls += reps + 1;
                /* the row's report: every call protected, nothing flagged; the profile */
                long long p = -1, d = -1, u = -1, calls = 0;
                double tot = NAN, gemm = NAN, ctot = NAN, cgemm = NAN;
                FILE *rf = fopen("bench_dropin_cpu.report", "r");
                char line[1024];
                while (rf != NULL && fgets(line, sizeof line, rf) != NULL) {
                    if (strncmp(line, "summary ", 8) == 0)
                        sscanf(line, "summary protected=%lld passed_through=%*d detected=%lld "
                                     "corrected=%*d uncorrectable=%lld", &p, &d, &u);
                    if (strncmp(line, "profile ", 8) == 0)
                        sscanf(line, "profile op=%*s calls=%lld seconds=%lf host_gemm_seconds=%lf "
                                     "protection_seconds=%*f cpu_seconds=%lf "
                                     "host_gemm_cpu_seconds=%lf", &calls, &tot, &gemm, &ctot,
                               &cgemm);
                }
                if (rf != NULL) fclose(rf);
                if (p != reps + 1 || d != 0 || u != 0) failed = 1;
                prot += p, det += d, unc += u;
                w->prot = calls > 0 ? (tot - gemm) / (double)calls : NAN;
                w->prot_cpu = calls > 0 ? (ctot - cgemm) / (double)calls : NAN;
            }
    if (!in_child(stream_job, &sj, sr, sizeof sr)) return 1;
    crate1 = sr[1];
    const double rate1 = sr[0];
    const double rate = fmax(rate0, rate1); /* the faster read: the lower time to beat */
    const double crate = fmax(crate0, crate1);
    int pass = 1;
    for (int i = 0; i < nrows; ++i) {
        row_t *w = &rows[i];
        const double abc = 3.0 * (double)w->n * (double)w->n * (w->prec == 's' ? 4 : 8);
        w->stream_t = abc / rate, w->stream_cpu_t = abc / crate;
        const double ratio = w->over / w->stream_t;
        const double mo = w->shim_min - w->blas_min;
        pass &= w->prot / w->stream_t <= 1.15 ||
                (threads == 1 && w->prot_cpu / w->stream_cpu_t <= 1.15);
        printf("%4c %6d %5g %10.4f %10.4f %10.3f %10.3f %10.3f %8.2f %10.3f %8.2f %10.3f %8.2f",
               w->prec, w->n, w->beta, w->blas, w->shim, 1e3 * w->over, 1e3 * w->read,
               1e3 * w->stream_t, ratio, 1e3 * mo, mo / w->stream_t, 1e3 * w->prot,
               w->prot / w->stream_t);
        if (threads == 1)
            printf("  cpu: over %.3f ms, protection %.3f ms, stream %.3f ms, ratios %.2f %.2f",
                   1e3 * w->over_cpu, 1e3 * w->prot_cpu, 1e3 * w->stream_cpu_t,
                   w->over_cpu / w->stream_cpu_t, w->prot_cpu / w->stream_cpu_t);
        printf("\n");
    }
    printf("streaming read: %.2f GB/s before, %.2f GB/s after the calls (%zu MiB, %d threads)\n",
           rate0 / 1e9, rate1 / 1e9, stream_mb, threads);
    printf("shim report: %lld of %lld calls protected, %lld detected, %lld uncorrectable; "
           "results %s the BLAS's\n", prot, shim_calls, det, unc,
           failed ? "DIFFER from" : "equal to");
    if (prot != shim_calls || det != 0 || unc != 0) failed = 1;
    printf("limit: the protection's time in a call (profile) <= 1.15 x the read of A, B, C at "
           "the streaming rate: %s\n", pass ? "PASS" : "FAIL");

    char date[64];
    time_t tnow = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&tnow));
    if (commit == NULL) commit = "unknown";
    if (md_path != NULL) {
        FILE *f = fopen(md_path, "a");
        if (f == NULL) {
            perror(md_path);
            return 1;
        }
        fprintf(f, "## %s\n\n", label != NULL ? label : "bench_dropin_cpu");
        fprintf(f, "%s, commit %s, %s (%d logical CPUs), host BLAS %s, "
                   "OPENBLAS_NUM_THREADS=%s, OMP_NUM_THREADS=%s: %d threads. %d reps per row, "
                   "interleaved, medians. Streaming read %.2f GB/s before and %.2f GB/s after "
                   "the calls (%zu MiB buffer, %d threads); the faster is the rate used. Shim "
                   "report: %lld of %lld calls protected, %lld flagged; results %s the "
                   "BLAS's.\n\n",
                date, commit, cpu, nprocs(), host_blas, obt ? obt : "(unset)",
                omp ? omp : "(unset)", threads, reps, rate0 / 1e9, rate1 / 1e9, stream_mb,
                threads, prot, shim_calls, det, failed ? "DIFFER from" : "bit for bit equal to");
        fprintf(f, "| routine | n | beta | BLAS (s) | drop-in (s) | protection in a call (ms) | "
                   "overhead (ms) | fastest "
                   "BLAS (s) | fastest drop-in (s) | their difference (ms) | read A, B, C in "
                   "place (ms) | read A, B, C at the streaming rate (ms) | overhead / streaming "
                   "read | difference of the fastest / streaming read | protection / streaming "
                   "read |%s\n"
                   "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
                   "| ---: | ---: | ---: | ---: |%s\n",
                threads == 1 ? " by CPU time: protection in a call (ms) | overhead (ms) | "
                               "streaming read (ms) | protection / streaming read |" : "",
                threads == 1 ? " ---: | ---: | ---: | ---: |" : "");
        for (int i = 0; i < nrows; ++i) {
            const row_t *w = &rows[i];
            const double mo = w->shim_min - w->blas_min;
            fprintf(f, "| %cgemm_ | %d | %g | %.4f | %.4f | %.3f | %.3f | %.4f | %.4f | %.3f | "
                       "%.3f | %.3f | %.2f | %.2f | %.2f |",
                    w->prec, w->n, w->beta, w->blas, w->shim, 1e3 * w->prot, 1e3 * w->over,
                    w->blas_min, w->shim_min, 1e3 * mo, 1e3 * w->read, 1e3 * w->stream_t,
                    w->over / w->stream_t, mo / w->stream_t, w->prot / w->stream_t);
            if (threads == 1)
                fprintf(f, " %.3f | %.3f | %.3f | %.2f |", 1e3 * w->prot_cpu, 1e3 * w->over_cpu,
                        1e3 * w->stream_cpu_t, w->prot_cpu / w->stream_cpu_t);
            fprintf(f, "\n");
        }
        fprintf(f, "\nProtection in a call: the drop-in's profile (ABFT_BLAS_PROFILE=on), the "
                   "time of its protected calls outside the host GEMM per call, measured "
                   "within each call and so free of the GEMM's own variation. Overhead: the "
                   "median of the differences of the calls side by side (drop-in minus "
                   "BLAS); the fastest calls are the least disturbed by the machine's other "
                   "load%s. Limit (issue 42), on the protection in a call (wall%s): at most "
                   "1.15 x the streaming read: %s.\n\n",
                threads == 1 ? "; by CPU time, with one thread every part of a call runs on "
                               "the calling thread (the streaming read then timed by CPU time "
                               "too)" : "",
                threads == 1 ? " or CPU time" : "", pass ? "PASS" : "FAIL");
        fclose(f);
    }
    if (json_path != NULL) {
        FILE *f = fopen(json_path, "a");
        if (f == NULL) {
            perror(json_path);
            return 1;
        }
        fprintf(f, "{\"benchmark\": \"bench_dropin_cpu\", \"date\": \"%s\", \"commit\": \"%s\", "
                   "\"label\": \"%s\", \"cpu\": \"%s\", \"threads\": %d, \"reps\": %d, "
                   "\"stream_GBps\": [%.3f, %.3f], \"protected\": %lld, \"calls\": %lld, "
                   "\"flagged\": %lld, \"rows\": [",
                date, commit, label != NULL ? label : "", cpu, threads, reps, rate0 / 1e9,
                rate1 / 1e9, prot, shim_calls, det);
        for (int i = 0; i < nrows; ++i) {
            const row_t *w = &rows[i];
            fprintf(f, "%s{\"routine\": \"%cgemm_\", \"n\": %d, \"beta\": %g, \"blas_s\": %.6f, "
                       "\"shim_s\": %.6f, \"overhead_s\": %.6f, \"read_s\": %.6f, "
                       "\"stream_read_s\": %.6f, \"ratio\": %.4f, \"blas_min_s\": %.6f, "
                       "\"shim_min_s\": %.6f, \"ratio_min\": %.4f, \"overhead_cpu_s\": %.6f, "
                       "\"stream_read_cpu_s\": %.6f, \"protection_s\": %.6f, "
                       "\"protection_cpu_s\": %.6f}",
                    i ? ", " : "", w->prec, w->n, w->beta, w->blas, w->shim, w->over, w->read,
                    w->stream_t, w->over / w->stream_t, w->blas_min, w->shim_min,
                    (w->shim_min - w->blas_min) / w->stream_t,
                    threads == 1 ? w->over_cpu : -1.0, threads == 1 ? w->stream_cpu_t : -1.0,
                    w->prot, threads == 1 ? w->prot_cpu : -1.0);
        }
        fprintf(f, "], \"pass\": %s}\n", pass ? "true" : "false");
        fclose(f);
    }
    return failed ? 1 : pass ? 0 : 3;
}

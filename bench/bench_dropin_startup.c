/* bench_dropin_startup: what the drop-in library (libabft_blas.so, docs/dropin.md) costs a
 * process that has it preloaded and never calls BLAS. Each program is started reps times,
 * plain and with LD_PRELOAD=<library> for each library given, the variants interleaved
 * (start after start, so a change in the machine's load hits them alike), each with only
 * LD_PRELOAD in its environment (and the parent's PATH); the wall time from posix_spawn to
 * the child's exit and the child's peak resident set (getrusage's ru_maxrss through wait4)
 * are recorded. Reported: medians (and the 10th percentile and mean of the times), and the
 * preloaded variant's medians minus the plain one's.
 *
 * Usage: bench_dropin_startup [--shim PATH]... [--program PATH]... [--reps 400]
 *                             [--md FILE] [--commit SHA] [--label TEXT]...
 *   --shim: a library to preload (default: the libabft_blas.so of this build); several give
 *   several columns. --label: a name for the shim of the same position. --program: a program
 *   to start (default /bin/true and the build's dropin_probe, which does nothing).
 * The limits checked (issue 42): less than 5 ms and 5 MB more than without the preload. */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#ifndef ABFT_BLAS_DEFAULT_PATH
#define ABFT_BLAS_DEFAULT_PATH "libabft_blas.so"
#endif
#ifndef ABFT_PROBE_DEFAULT_PATH
#define ABFT_PROBE_DEFAULT_PATH "dropin_probe"
#endif

enum { MAXV = 8 };

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct stats {
    double med, p10, mean, rss_med, rss_max; /* ms, ms, ms, MB, MB */
} stats_t;

static stats_t summarize(double *t, double *r, int n) {
    stats_t s;
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += t[i];
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    qsort(r, (size_t)n, sizeof(double), cmp_double);
    s.med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    s.p10 = t[n / 10];
    s.mean = sum / n;
    s.rss_med = (n % 2 ? r[n / 2] : 0.5 * (r[n / 2 - 1] + r[n / 2])) / 1024.0;
    s.rss_max = r[n - 1] / 1024.0;
    return s;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* one start: wall ms and peak RSS in KB */
static int start(const char *prog, const char *preload, double *ms, double *kb) {
    static char pre[4200], path[4200];
    const char *p = getenv("PATH");
    snprintf(path, sizeof path, "PATH=%s", p != NULL ? p : "/usr/bin:/bin");
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", preload != NULL ? preload : "");
    char *envp[3] = {path, preload != NULL ? pre : NULL, NULL};
    char *argv[2] = {(char *)prog, NULL};
    pid_t pid;
    int status;
    struct rusage ru;
    double t0 = now_ms();
    if (posix_spawn(&pid, prog, NULL, NULL, argv, envp) != 0) return 0;
    if (wait4(pid, &status, 0, &ru) < 0) return 0;
    *ms = now_ms() - t0;
    *kb = (double)ru.ru_maxrss;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void loadavg(char *out, size_t len) {
    snprintf(out, len, "?");
    FILE *f = fopen("/proc/loadavg", "r");
    if (f == NULL) return;
    double a, b, c;
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(out, len, "%.2f %.2f %.2f", a, b, c);
    fclose(f);
}

static void cpu_model(char *out, size_t len) {
    snprintf(out, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) return;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "processor", 9) == 0) ++n;
        if (n == 1 && strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c != NULL) {
                c += 2;
                c[strcspn(c, "\n")] = '\0';
                snprintf(out, len, "%s", c);
            }
        }
    }
    fclose(f);
    size_t l = strlen(out);
    snprintf(out + l, len - l, ", %d logical CPUs", n);
}

int main(int argc, char **argv) {
    const char *shims[MAXV], *labels[MAXV], *progs[MAXV];
    int nshim = 0, nlabel = 0, nprog = 0, reps = 400;
    const char *md = NULL, *commit = getenv("ABFT_COMMIT");
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL) {
            fprintf(stderr, "bench_dropin_startup: %s needs a value\n", a);
            return 2;
        }
        if (strcmp(a, "--shim") == 0 && nshim < MAXV) shims[nshim++] = v;
        else if (strcmp(a, "--label") == 0 && nlabel < MAXV) labels[nlabel++] = v;
        else if (strcmp(a, "--program") == 0 && nprog < MAXV) progs[nprog++] = v;
        else if (strcmp(a, "--reps") == 0) reps = atoi(v);
        else if (strcmp(a, "--md") == 0) md = v;
        else if (strcmp(a, "--commit") == 0) commit = v;
        else {
            fprintf(stderr, "bench_dropin_startup: unknown option %s (see the header of "
                            "bench/bench_dropin_startup.c)\n", a);
            return 2;
        }
        ++i;
    }
    if (nshim == 0) shims[nshim++] = ABFT_BLAS_DEFAULT_PATH;
    for (int i = nlabel; i < nshim; ++i) labels[i] = shims[i];
    if (nprog == 0) progs[nprog++] = "/bin/true", progs[nprog++] = ABFT_PROBE_DEFAULT_PATH;
    if (reps < 10) reps = 10;
    const int nv = 1 + nshim;
    double *t = malloc(sizeof(double) * (size_t)(nprog * nv * reps));
    double *r = malloc(sizeof(double) * (size_t)(nprog * nv * reps));
    if (t == NULL || r == NULL) return 2;
    char load0[64], load1[64];
    loadavg(load0, sizeof load0);
    for (int k = 0; k < reps; ++k)
        for (int p = 0; p < nprog; ++p)
            for (int v = 0; v < nv; ++v) {
                const size_t o = ((size_t)p * nv + (size_t)v) * (size_t)reps + (size_t)k;
                if (!start(progs[p], v == 0 ? NULL : shims[v - 1], &t[o], &r[o])) {
                    fprintf(stderr, "bench_dropin_startup: %s%s%s failed\n",
                            v ? "LD_PRELOAD=" : "", v ? shims[v - 1] : "", progs[p]);
                    return 1;
                }
            }
    loadavg(load1, sizeof load1);
    char cpu[256], date[64];
    cpu_model(cpu, sizeof cpu);
    time_t tt = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&tt));
    struct utsname un;
    uname(&un);
    FILE *out = md != NULL ? fopen(md, "w") : stdout;
    if (out == NULL) {
        fprintf(stderr, "bench_dropin_startup: cannot write %s\n", md);
        return 2;
    }
    fprintf(out, "# Drop-in startup cost (bench_dropin_startup)\n\n");
    fprintf(out, "Command:");
    for (int i = 0; i < argc; ++i) fprintf(out, " %s", argv[i]);
    fprintf(out, "\n\n");
    fprintf(out, "%s, %s, Linux %s, commit %s. %d starts of each variant, interleaved; load "
                 "average %s before, %s after. Times from posix_spawn to the exit "
                 "(ms), peak RSS from the child's getrusage (MB).\n\n",
            date, cpu, un.release, commit != NULL ? commit : "unknown", reps, load0, load1);
    int pass = 1;
    for (int p = 0; p < nprog; ++p) {
        fprintf(out, "## %s\n\n", progs[p]);
        fprintf(out, "| preload | median (ms) | p10 (ms) | mean (ms) | RSS median (MB) | "
                     "RSS max (MB) | + median time (ms) | + RSS (MB) |\n");
        fprintf(out, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        stats_t base = {0, 0, 0, 0, 0};
        for (int v = 0; v < nv; ++v) {
            const size_t o = ((size_t)p * nv + (size_t)v) * (size_t)reps;
            stats_t s = summarize(t + o, r + o, reps);
            if (v == 0) base = s;
            const double dt = s.med - base.med, dr = s.rss_med - base.rss_med;
            fprintf(out, "| %s | %.3f | %.3f | %.3f | %.2f | %.2f | %s%.3f | %s%.2f |\n",
                    v == 0 ? "none" : labels[v - 1], s.med, s.p10, s.mean, s.rss_med,
                    s.rss_max, v ? (dt >= 0 ? "+" : "") : "", v ? dt : 0.0,
                    v ? (dr >= 0 ? "+" : "") : "", v ? dr : 0.0);
            if (v == 1) pass &= dt < 5.0 && dr < 5.0; /* the first shim is the one judged */
        }
        fprintf(out, "\n");
    }
    fprintf(out, "Limit (issue 42), for the first library: less than 5 ms and 5 MB more than "
                 "without the preload (medians): %s.\n", pass ? "PASS" : "FAIL");
    if (out != stdout) fclose(out);
    free(t), free(r);
    return pass ? 0 : 1;
}

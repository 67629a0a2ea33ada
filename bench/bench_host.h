/* abft benchmarks: the host-side helpers the drop-in benchmarks share (bench_dropin.c,
 * bench_dropin_cpu.c): a monotonic clock, the median, a comma list, the CPU's name and count.
 * Benchmark code only. */
#ifndef ABFT_BENCH_HOST_H
#define ABFT_BENCH_HOST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
/* the median of v[0..n-1] (v left as it is) */
static inline double median(const double *v, int n) {
    double *w = (double *)malloc(sizeof(double) * (size_t)n);
    memcpy(w, v, sizeof(double) * (size_t)n);
    qsort(w, (size_t)n, sizeof(double), cmp_double);
    double m = n % 2 ? w[n / 2] : 0.5 * (w[n / 2 - 1] + w[n / 2]);
    free(w);
    return m;
}

/* "a,b,c" into out (at most max values); the count */
static inline int parse_list(const char *s, double *out, int max) {
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t != NULL && n < max;
         t = strtok_r(NULL, ",", &save))
        out[n++] = atof(t);
    return n;
}

/* the logical CPUs /proc/cpuinfo lists (at least 1) */
static inline int nprocs(void) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) return 1;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL) n += strncmp(line, "processor", 9) == 0;
    fclose(f);
    return n > 0 ? n : 1;
}

static inline void cpu_model(char *out, size_t len) {
    snprintf(out, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) return;
    char line[512];
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c != NULL) {
                c += 2;
                c[strcspn(c, "\n")] = '\0';
                snprintf(out, len, "%s", c);
            }
            break;
        }
    fclose(f);
}

#endif

/* Protected LU against plain cuSOLVER getrf, measured in one run.
 *
 *   bench_lu [--quick] [--reps R] [--out DIR]
 *   bench_lu --profile d|s N cusolver|online|online0|online-nola [--no-warmup]
 *            (one timed run of one variant, for a profiler: prints its time only)
 *
 * For n in {4096, 8192, 16384} (--quick: 4096 only), fp64 and fp32: median time of
 * cusolverDn?getrf (workspace preallocated, not timed), abft_?getrf (offline: encode +
 * getrf + check), abft_?getrf_online (check after every panel, and after every 4th, with
 * the GPU's default look-ahead; and after every panel without look-ahead).
 * Each run factors a fresh copy of the same matrix (the copy is not timed). Prints a table
 * and writes DIR/lu.json and DIR/lu.md (default bench/results). GIT_COMMIT in the
 * environment is recorded as the commit. */
#include <abft/abft.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "testutil_cuda.h"


static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct result {
    char prec;
    int64_t n;
    double t_cusolver, t_offline, t_online1, t_online4, t_online_off, t_online1_nola;
    int64_t detected;
} result_t;

enum { V_CUSOLVER, V_OFFLINE, V_ONLINE1, V_ONLINE4, V_ONLINE_OFF, V_ONLINE1_NOLA, V_COUNT };

/* --profile: run only this variant, once (-1: all); g_warm = 0: without the warm-up run
 * (for ncu, which then sees the timed run's kernels only) */
static int g_only = -1, g_warm = 1;

/* the online configuration the main table uses: 0 = the library's GPU default */
static const int64_t g_nb = 0, g_inb = 0;
#define CHECKS_OFF ((int64_t)1 << 40)

typedef struct sweep {
    char prec;
    int64_t n, nb, inb, la; /* la: the look-ahead option (0: default, -1: off) */
    double ms;
} sweep_t;

/* variants: which of V_*; for the sweep (sweep != NULL) only the online variant with the
 * given nb/inb and checks off is timed. */
static void run_size(abft_handle_t h, cusolverDnHandle_t cs, char prec, int64_t n, int reps,
                     result_t *res, sweep_t *sweep, int nsweep) {
    size_t es = prec == 'd' ? 8 : 4, bytes = (size_t)n * (size_t)n * es;
    void *A0, *A, *work;
    int *ip32, *dinfo;
    int64_t *ip64;
    TU_CUDA_OK(cudaMalloc(&A0, bytes));
    TU_CUDA_OK(cudaMalloc(&A, bytes));
    TU_CUDA_OK(cudaMalloc((void **)&ip32, (size_t)n * sizeof(int) + 64));
    TU_CUDA_OK(cudaMalloc((void **)&ip64, (size_t)n * sizeof(int64_t)));
    dinfo = ip32 + n;
    /* random values in [-1, 1), never zeros: generated on the host once */
    void *hA = malloc(bytes);
    uint64_t z = 0x9e3779b97f4a7c15ull * (uint64_t)n;
    for (size_t i = 0; i < (size_t)n * (size_t)n; ++i) {
        z ^= z << 13;
        z ^= z >> 7;
        z ^= z << 17;
        double v = (double)(z >> 11) * 0x1p-52 - 1.0;
        if (prec == 'd') ((double *)hA)[i] = v; else ((float *)hA)[i] = (float)v;
    }
    TU_CUDA_OK(cudaMemcpy(A0, hA, bytes, cudaMemcpyHostToDevice));
    free(hA);
    int lwork = 0;
    if (prec == 'd') TU_LIB_OK(cusolverDnDgetrf_bufferSize(cs, (int)n, (int)n, (double *)A, (int)n, &lwork));
    else TU_LIB_OK(cusolverDnSgetrf_bufferSize(cs, (int)n, (int)n, (float *)A, (int)n, &lwork));
    TU_CUDA_OK(cudaMalloc(&work, (size_t)lwork * es + 16));
    cudaEvent_t e0, e1;
    TU_CUDA_OK(cudaEventCreate(&e0));
    TU_CUDA_OK(cudaEventCreate(&e1));
    double *t = (double *)malloc(sizeof(double) * (size_t)(reps + 1));
    double med[V_COUNT] = {0};
    if (res != NULL) res->detected = 0;
    int nv = sweep != NULL ? nsweep : V_COUNT;
    for (int vi = 0; vi < nv; ++vi) {
        int v = sweep != NULL ? V_ONLINE_OFF : vi;
        if (g_only >= 0 && v != g_only) continue;
        int64_t nb = sweep != NULL ? sweep[vi].nb : g_nb, inb = sweep != NULL ? sweep[vi].inb : g_inb;
        int64_t la = sweep != NULL ? sweep[vi].la : 0;
        for (int r = g_warm ? -1 : 0; r < reps; ++r) { /* r = -1: warm-up */
            TU_CUDA_OK(cudaMemcpy(A, A0, bytes, cudaMemcpyDeviceToDevice));
            TU_CUDA_OK(cudaDeviceSynchronize());
            abft_report_t rep;
            int64_t info = 0;
            abft_status_t st = ABFT_STATUS_SUCCESS;
            abft_lu_options_t o1 = {nb, 1, inb, la}, o4 = {nb, 4, inb, la};
            abft_lu_options_t ooff = {nb, CHECKS_OFF, inb, la}, o1n = {nb, 1, inb, -1};
            TU_CUDA_OK(cudaEventRecord(e0, 0));
            switch (v) {
            case V_CUSOLVER:
                if (prec == 'd') TU_LIB_OK(cusolverDnDgetrf(cs, (int)n, (int)n, (double *)A, (int)n, (double *)work, ip32, dinfo));
                else TU_LIB_OK(cusolverDnSgetrf(cs, (int)n, (int)n, (float *)A, (int)n, (float *)work, ip32, dinfo));
                break;
            case V_OFFLINE:
                st = prec == 'd' ? abft_dgetrf(h, n, n, (double *)A, n, ip64, &info, &rep)
                                 : abft_sgetrf(h, n, n, (float *)A, n, ip64, &info, &rep);
                break;
            case V_ONLINE1:
            case V_ONLINE4:
            case V_ONLINE_OFF:
            case V_ONLINE1_NOLA: {
                abft_lu_options_t *o = v == V_ONLINE1 ? &o1 : v == V_ONLINE4 ? &o4
                                       : v == V_ONLINE_OFF ? &ooff : &o1n;
                st = prec == 'd' ? abft_dgetrf_online(h, n, n, (double *)A, n, ip64, o, &info, &rep)
                                 : abft_sgetrf_online(h, n, n, (float *)A, n, ip64, o, &info, &rep);
                break;
            }
            }
            TU_CUDA_OK(cudaEventRecord(e1, 0));
            TU_CUDA_OK(cudaEventSynchronize(e1));
            if (st != ABFT_STATUS_SUCCESS) {
                fprintf(stderr, "variant %d n %lld %c: %s\n", v, (long long)n, prec, abft_status_name(st));
                exit(1);
            }
            if (v != V_CUSOLVER && res != NULL) res->detected += rep.detected;
            float ms = 0;
            TU_CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 0) t[r] = ms;
        }
        if (sweep != NULL) sweep[vi].ms = median(t, reps);
        else med[v] = median(t, reps);
    }
    if (res != NULL) {
        res->prec = prec;
        res->n = n;
        res->t_cusolver = med[V_CUSOLVER];
        res->t_offline = med[V_OFFLINE];
        res->t_online1 = med[V_ONLINE1];
        res->t_online4 = med[V_ONLINE4];
        res->t_online_off = med[V_ONLINE_OFF];
        res->t_online1_nola = med[V_ONLINE1_NOLA];
    }
    free(t);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(work);
    cudaFree(A0);
    cudaFree(A);
    cudaFree(ip32);
    cudaFree(ip64);
}

int main(int argc, char **argv) {
    const char *out = "bench/results";
    int quick = 0, reps = 7;
    char pprec = 0;
    int64_t pn = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--profile") && i + 3 < argc) {
            pprec = argv[i + 1][0];
            pn = atoll(argv[i + 2]);
            const char *v = argv[i + 3];
            g_only = !strcmp(v, "cusolver") ? V_CUSOLVER : !strcmp(v, "online") ? V_ONLINE1
                     : !strcmp(v, "online0") ? V_ONLINE_OFF
                     : !strcmp(v, "online-nola") ? V_ONLINE1_NOLA : V_OFFLINE;
            i += 3;
        } else if (!strcmp(argv[i], "--no-warmup")) g_warm = 0;
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_lu [--quick] [--reps R] [--out DIR]\n");
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    abft_handle_t h;
    if (abft_create(&h, ABFT_BACKEND_CUDA) != ABFT_STATUS_SUCCESS) {
        fprintf(stderr, "bench_lu: no GPU\n");
        return 77;
    }
    cusolverDnHandle_t cs;
    TU_LIB_OK(cusolverDnCreate(&cs));
    struct cudaDeviceProp prop;
    int dev = 0;
    TU_CUDA_OK(cudaGetDevice(&dev));
    TU_CUDA_OK(cudaGetDeviceProperties(&prop, dev));
    if (g_only >= 0) {
        result_t r;
        run_size(h, cs, pprec == 's' ? 's' : 'd', pn > 0 ? pn : 4096, 1, &r, NULL, 0);
        printf("profile %c n %lld variant %d: %.3f ms\n", pprec, (long long)pn, g_only,
               g_only == V_CUSOLVER ? r.t_cusolver : g_only == V_ONLINE1 ? r.t_online1
               : g_only == V_ONLINE_OFF ? r.t_online_off
               : g_only == V_ONLINE1_NOLA ? r.t_online1_nola : r.t_offline);
        cusolverDnDestroy(cs);
        abft_destroy(h);
        return 0;
    }
    const int64_t sizes[] = {4096, 8192, 16384};
    int nsz = quick ? 1 : 3;
    result_t res[6];
    int nres = 0;
    /* Sweep of the online blocking (checks off) at n = 8192 (--quick: 4096), fp64 then
     * fp32; the fastest (nb, panel_nb) over both precisions drives the main table. */
    const int64_t cfg[][3] = {{256, 256, 0},  {256, 128, 0},  {512, 128, 0},  {384, 128, 0},
                              {1024, 128, 0}, {256, 256, -1}, {512, 128, -1}};
    const int ncfg = (int)(sizeof cfg / sizeof cfg[0]);
    sweep_t sw[2 * 7];
    int64_t sn = quick ? 4096 : 8192;
    for (int pi = 0; pi < 2; ++pi) {
        for (int c = 0; c < ncfg; ++c) {
            sw[pi * ncfg + c].prec = pi == 0 ? 'd' : 's';
            sw[pi * ncfg + c].n = sn;
            sw[pi * ncfg + c].nb = cfg[c][0];
            sw[pi * ncfg + c].inb = cfg[c][1];
            sw[pi * ncfg + c].la = cfg[c][2];
        }
        run_size(h, cs, pi == 0 ? 'd' : 's', sn, reps < 5 ? reps : 5, NULL, sw + pi * ncfg, ncfg);
    }
    printf("online blocking sweep (checks off), n = %lld:\n", (long long)sn);
    for (int c = 0; c < ncfg; ++c)
        printf("  nb %5lld panel_nb %4lld look-ahead %-7s: fp64 %9.3f ms  fp32 %9.3f ms\n",
               (long long)cfg[c][0], (long long)cfg[c][1], cfg[c][2] < 0 ? "off" : "default",
               sw[c].ms, sw[ncfg + c].ms);
    printf("table: the library's default blocking\n");
    printf("%-5s %6s %12s %12s %12s %12s %12s %12s %9s %9s %9s %9s %9s\n", "prec", "n",
           "cusolver ms", "offline ms", "online1 ms", "online4 ms", "online0 ms", "on1-nola ms",
           "off %", "on1 %", "on4 %", "on0 %", "nola %");
    for (int pi = 0; pi < 2; ++pi) {
        for (int s = 0; s < nsz; ++s) {
            result_t *r = &res[nres++];
            run_size(h, cs, pi == 0 ? 'd' : 's', sizes[s], sizes[s] >= 16384 ? (reps < 5 ? reps : 5) : reps, r,
                     NULL, 0);
            printf("%-5s %6lld %12.3f %12.3f %12.3f %12.3f %12.3f %12.3f %+8.2f%% %+8.2f%% %+8.2f%% "
                   "%+8.2f%% %+8.2f%%  (detected %lld)\n",
                   r->prec == 'd' ? "fp64" : "fp32", (long long)r->n, r->t_cusolver, r->t_offline,
                   r->t_online1, r->t_online4, r->t_online_off, r->t_online1_nola,
                   100.0 * (r->t_offline / r->t_cusolver - 1.0),
                   100.0 * (r->t_online1 / r->t_cusolver - 1.0),
                   100.0 * (r->t_online4 / r->t_cusolver - 1.0),
                   100.0 * (r->t_online_off / r->t_cusolver - 1.0),
                   100.0 * (r->t_online1_nola / r->t_cusolver - 1.0), (long long)r->detected);
            fflush(stdout);
        }
    }
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    const char *commit = getenv("GIT_COMMIT") ? getenv("GIT_COMMIT") : "unknown";
    char path[1024];
    snprintf(path, sizeof path, "%s/lu.json", out);
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        fprintf(f, "{\n  \"date\": \"%s\",\n  \"device\": \"%s\",\n  \"commit\": \"%s\",\n  \"reps\": %d,\n"
                   "  \"online_blocking\": \"library default (GPU: nb 256 up to n = 8192, 512 in 128-column leaves above)\",\n"
                   "  \"sweep\": [\n",
                date, prop.name, commit, reps);
        for (int i = 0; i < 2 * ncfg; ++i)
            fprintf(f, "    {\"precision\": \"%s\", \"n\": %lld, \"nb\": %lld, \"panel_nb\": %lld, "
                       "\"lookahead\": %s, \"online_checks_off_ms\": %.4f}%s\n",
                    sw[i].prec == 'd' ? "fp64" : "fp32", (long long)sw[i].n, (long long)sw[i].nb,
                    (long long)sw[i].inb, sw[i].la < 0 ? "false" : "true", sw[i].ms,
                    i + 1 < 2 * ncfg ? "," : "");
        fprintf(f, "  ],\n  \"results\": [\n");
        for (int i = 0; i < nres; ++i)
            fprintf(f, "    {\"precision\": \"%s\", \"n\": %lld, \"cusolver_ms\": %.4f, \"offline_ms\": %.4f, "
                       "\"online_every1_ms\": %.4f, \"online_every4_ms\": %.4f, \"online_checks_off_ms\": %.4f, "
                       "\"online_every1_no_lookahead_ms\": %.4f, \"detected\": %lld}%s\n",
                    res[i].prec == 'd' ? "fp64" : "fp32", (long long)res[i].n, res[i].t_cusolver,
                    res[i].t_offline, res[i].t_online1, res[i].t_online4, res[i].t_online_off,
                    res[i].t_online1_nola,
                    (long long)res[i].detected, i + 1 < nres ? "," : "");
        fprintf(f, "  ]\n}\n");
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/lu.md", out);
    f = fopen(path, "w");
    if (f != NULL) {
        fprintf(f, "# Protected LU vs cuSOLVER getrf\n\nDate %s, device %s, commit %s. Median of %d runs "
                   "(5 at n = 16384) after one warm-up; each run factors a fresh copy of the same random "
                   "matrix (values in [-1, 1)). Overheads are relative to cusolverDn?getrf. Online: the library's GPU "
                   "default blocking (nb = 256 up to n = 8192, 512 in 128-column leaves above); \"checks off\" runs the same blocked LU "
                   "with the carried checksums but no trailing checks (the final check still runs). Online "
                   "runs use the GPU's default look-ahead (the next panel factored on a second stream), except "
                   "the last column.\n\n",
                date, prop.name, commit, reps);
        fprintf(f, "| prec | n | cuSOLVER ms | offline ms | offline | online (every panel) ms | online | "
                   "online (every 4th) ms | online | online (checks off) ms | online | "
                   "online (every panel, no look-ahead) ms | online |\n"
                   "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (int i = 0; i < nres; ++i) {
            result_t *r = &res[i];
            fprintf(f, "| %s | %lld | %.3f | %.3f | %+.2f %% | %.3f | %+.2f %% | %.3f | %+.2f %% | "
                       "%.3f | %+.2f %% | %.3f | %+.2f %% |\n",
                    r->prec == 'd' ? "fp64" : "fp32", (long long)r->n, r->t_cusolver, r->t_offline,
                    100.0 * (r->t_offline / r->t_cusolver - 1.0), r->t_online1,
                    100.0 * (r->t_online1 / r->t_cusolver - 1.0), r->t_online4,
                    100.0 * (r->t_online4 / r->t_cusolver - 1.0), r->t_online_off,
                    100.0 * (r->t_online_off / r->t_cusolver - 1.0), r->t_online1_nola,
                    100.0 * (r->t_online1_nola / r->t_cusolver - 1.0));
        }
        fprintf(f, "\nOnline blocking sweep, checks off, n = %lld:\n\n| nb | panel_nb | look-ahead | "
                   "fp64 ms | fp32 ms |\n|---|---|---|---|---|\n", (long long)sn);
        for (int c = 0; c < ncfg; ++c)
            fprintf(f, "| %lld | %lld | %s | %.3f | %.3f |\n", (long long)cfg[c][0],
                    (long long)cfg[c][1], cfg[c][2] < 0 ? "off" : "on", sw[c].ms, sw[ncfg + c].ms);
        fclose(f);
    }
    cusolverDnDestroy(cs);
    abft_destroy(h);
    return 0;
}

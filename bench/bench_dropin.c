/* bench_dropin: what the drop-in library (libabft_blas.so, docs/dropin.md) costs on top of
 * the protected C API, in one run. For each size n and beta, C = A·B (n x n, fp64) is timed
 * through
 *   blas   the host BLAS's dgemm_ (unprotected; the BLAS this program is linked with),
 *   abft   abft_dgemm on a CPU handle (the protected C API; its GEMM is that same BLAS),
 *   shim   dgemm_ of libabft_blas.so, loaded with dlopen (RTLD_LOCAL: only this call goes
 *          through it) with ABFT_BLAS_THRESHOLD=0 and ABFT_BLAS_BACKEND=cpu unless set,
 *   nvblas dgemm_ of libnvblas.so when --nvblas PATH is given (GPU; it reads the
 *          nvblas.conf this program writes in the current directory, with
 *          NVBLAS_CPU_BLAS_LIB = the host BLAS above unless --cpu-blas PATH).
 * The variants run interleaved, rep after rep (one warm-up call each first), so a change
 * in the machine's load hits them alike; the shim's overhead is the median over reps of
 * t(shim) / t(abft) - 1. The shim's report file (bench_dropin.report) must show every
 * timed shim call protected and nothing flagged, else the run fails.
 *
 * With --gpu (needs --nvblas) only the drop-in and NVBLAS run, the drop-in staged to the GPU
 * (ABFT_BLAS_BACKEND=cuda unless set): at n >= 4096 the host BLAS would take minutes a call.
 * Its overhead is then the median of t(shim) / t(nvblas) - 1, protected against unprotected,
 * both from host arrays, and the results of the two are compared element by element.
 *
 * Usage: bench_dropin [--shim PATH] [--nvblas PATH] [--cpu-blas PATH] [--sizes 1024,2048]
 *                     [--betas 0,1] [--reps 7] [--md FILE] [--json FILE] [--commit SHA]
 *                     [--gpu [--device NAME]]   (NAME: the GPU's, for the report)
 * Built without CUDA (blas/CMakeLists.txt); the NVBLAS column needs a GPU machine. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <abft/abft.h>

#include "bench_host.h"

#ifndef ABFT_BLAS_DEFAULT_PATH
#define ABFT_BLAS_DEFAULT_PATH "libabft_blas.so"
#endif

typedef void (*dgemm_fn)(const char *, const char *, const int *, const int *, const int *,
                         const double *, const double *, const int *, const double *,
                         const int *, const double *, double *, const int *, size_t, size_t);

/* the host BLAS this program is linked with */
void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *,
            const double *, const int *, const double *, const int *, const double *, double *,
            const int *, size_t, size_t);

enum { V_BLAS = 0, V_ABFT = 1, V_SHIM = 2, V_NVBLAS = 3, V_COUNT = 4 };
static const char *const vname[V_COUNT] = {"blas", "abft", "shim", "nvblas"};

typedef struct row {
    int n;
    double beta;
    double t[V_COUNT];   /* median seconds */
    double overhead;     /* median of t(shim)/t(abft) - 1 (--gpu: t(shim)/t(nvblas) - 1) */
    double diff;         /* max |C_shim - C_abft| (--gpu: |C_shim - C_nvblas|) */
} row_t;

int main(int argc, char **argv) {
    const char *shim_path = ABFT_BLAS_DEFAULT_PATH, *nv_path = NULL, *cpu_blas = NULL;
    const char *md_path = NULL, *json_path = NULL, *commit = getenv("ABFT_COMMIT");
    const char *gpu_name = "unknown GPU";
    double sizes[16] = {1024, 2048}, betas[8] = {0, 1};
    int nsizes = 2, nbetas = 2, reps = 7, gpu = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--gpu") == 0) {
            gpu = 1;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "bench_dropin: %s needs a value\n", a);
            return 2;
        }
        if (strcmp(a, "--shim") == 0) shim_path = v;
        else if (strcmp(a, "--nvblas") == 0) nv_path = v;
        else if (strcmp(a, "--cpu-blas") == 0) cpu_blas = v;
        else if (strcmp(a, "--sizes") == 0) nsizes = parse_list(v, sizes, 16);
        else if (strcmp(a, "--betas") == 0) nbetas = parse_list(v, betas, 8);
        else if (strcmp(a, "--reps") == 0) reps = atoi(v);
        else if (strcmp(a, "--md") == 0) md_path = v;
        else if (strcmp(a, "--json") == 0) json_path = v;
        else if (strcmp(a, "--commit") == 0) commit = v;
        else if (strcmp(a, "--device") == 0) gpu_name = v; /* for the report (--gpu) */
        else {
            fprintf(stderr, "bench_dropin: unknown option %s (see the header of "
                            "bench/bench_dropin.c)\n", a);
            return 2;
        }
        ++i;
    }
    if (reps < 1 || reps > 101 || nsizes < 1 || nbetas < 1) {
        fprintf(stderr, "bench_dropin: --reps 1..101, at least one size and beta\n");
        return 2;
    }
    if (gpu && nv_path == NULL) {
        fprintf(stderr, "bench_dropin: --gpu needs --nvblas PATH (what the drop-in is timed "
                        "against)\n");
        return 2;
    }

    /* the host BLAS's file, for the report and NVBLAS's CPU fallback */
    Dl_info di;
    const char *host_blas = dladdr((void *)dgemm_, &di) && di.dli_fname ? di.dli_fname : "?";
    if (cpu_blas == NULL) cpu_blas = host_blas;

    /* the drop-in, configured before it is loaded */
    setenv("ABFT_BLAS_THRESHOLD", "0", 0);
    setenv("ABFT_BLAS_BACKEND", gpu ? "cuda" : "cpu", 0);
    setenv("ABFT_BLAS_REPORT", "bench_dropin.report", 1);
    remove("bench_dropin.report");
    void *shim_lib = dlopen(shim_path, RTLD_NOW | RTLD_LOCAL);
    if (shim_lib == NULL) {
        fprintf(stderr, "bench_dropin: cannot load %s: %s\n", shim_path, dlerror());
        return 1;
    }
    dgemm_fn fn[V_COUNT] = {dgemm_, NULL, (dgemm_fn)0, NULL};
    *(void **)&fn[V_SHIM] = dlsym(shim_lib, "dgemm_");
    if (fn[V_SHIM] == NULL) {
        fprintf(stderr, "bench_dropin: no dgemm_ in %s\n", shim_path);
        return 1;
    }
    if (nv_path != NULL) {
        FILE *f = fopen("nvblas.conf", "w");
        if (f == NULL) {
            perror("bench_dropin: nvblas.conf");
            return 1;
        }
        fprintf(f, "NVBLAS_LOGFILE nvblas.log\nNVBLAS_CPU_BLAS_LIB %s\nNVBLAS_GPU_LIST ALL0\n"
                   "NVBLAS_TILE_DIM 2048\nNVBLAS_AUTOPIN_MEM_ENABLED\n", cpu_blas);
        fclose(f);
        setenv("NVBLAS_CONFIG_FILE", "nvblas.conf", 1);
        void *nv = dlopen(nv_path, RTLD_NOW | RTLD_LOCAL);
        if (nv == NULL || (*(void **)&fn[V_NVBLAS] = dlsym(nv, "dgemm_")) == NULL) {
            fprintf(stderr, "bench_dropin: cannot use %s: %s\n", nv_path, dlerror());
            return 1;
        }
    }
    abft_handle_t h;
    if (abft_create(&h, ABFT_BACKEND_CPU) != ABFT_STATUS_SUCCESS) {
        fprintf(stderr, "bench_dropin: abft_create failed\n");
        return 1;
    }

    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    const char *obt = getenv("OPENBLAS_NUM_THREADS"), *omp = getenv("OMP_NUM_THREADS");
    printf("bench_dropin: %s (%d logical CPUs), host BLAS %s, OPENBLAS_NUM_THREADS=%s "
           "OMP_NUM_THREADS=%s, %d reps\n", cpu, nprocs(), host_blas, obt ? obt : "(unset)",
           omp ? omp : "(unset)", reps);
    const char *backend_env = getenv("ABFT_BLAS_BACKEND");
    const char *st_thr = getenv("ABFT_BLAS_STAGE_THREADS");
    const char *st_chunk = getenv("ABFT_BLAS_STAGE_CHUNK");
    printf("drop-in backend: ABFT_BLAS_BACKEND=%s; staging ABFT_BLAS_STAGE_THREADS=%s "
           "ABFT_BLAS_STAGE_CHUNK=%s\n", backend_env, st_thr ? st_thr : "(default)",
           st_chunk ? st_chunk : "(default)");
    if (gpu)
        printf("%6s %5s %10s %10s %11s\n", "n", "beta", "shim_s", "nvblas_s", "shim/nvblas");
    else
        printf("%6s %5s %10s %10s %10s %10s %9s %9s\n", "n", "beta", "blas_s", "abft_s",
               "shim_s", nv_path ? "nvblas_s" : "-", "abft/blas", "shim/abft");

    row_t rows[128];
    int nrows = 0;
    long long shim_calls = 0;
    int failed = 0;
    for (int si = 0; si < nsizes; ++si) {
        const int n = (int)sizes[si];
        size_t nn = (size_t)n * (size_t)n;
        double *A = malloc(nn * sizeof(double)), *B = malloc(nn * sizeof(double));
        double *C0 = malloc(nn * sizeof(double)), *C[V_COUNT];
        for (int v = 0; v < V_COUNT; ++v) C[v] = malloc(nn * sizeof(double));
        if (A == NULL || B == NULL || C0 == NULL || C[V_COUNT - 1] == NULL) {
            fprintf(stderr, "bench_dropin: out of memory at n = %d\n", n);
            return 1;
        }
        uint64_t s = 12345u + (uint64_t)n;
        for (size_t i = 0; i < nn; ++i) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            A[i] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            B[i] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            C0[i] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
        }
        for (int bi = 0; bi < nbetas; ++bi) {
            const double alpha = 1.0, beta = betas[bi];
            double t[V_COUNT][101], ratio[101];
            for (int r = -1; r < reps; ++r) { /* r = -1: warm-up */
                for (int v = 0; v < V_COUNT; ++v) {
                    if (v != V_ABFT && fn[v] == NULL) continue;
                    if (gpu && (v == V_BLAS || v == V_ABFT)) continue;
                    memcpy(C[v], C0, nn * sizeof(double));
                    double t0 = now();
                    if (v == V_ABFT) {
                        abft_report_t rep;
                        abft_status_t st = abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, n, n, n, alpha, A,
                                                      n, B, n, beta, C[v], n, &rep);
                        if (st != ABFT_STATUS_SUCCESS || rep.detected != 0) {
                            fprintf(stderr, "bench_dropin: abft_dgemm %s, %lld detected\n",
                                    abft_status_name(st), (long long)rep.detected);
                            failed = 1;
                        }
                    } else {
                        fn[v]("N", "N", &n, &n, &n, &alpha, A, &n, B, &n, &beta, C[v], &n, 1,
                              1);
                    }
                    double dt = now() - t0;
                    if (v == V_SHIM) ++shim_calls;
                    if (r >= 0) t[v][r] = dt;
                }
                if (r >= 0) ratio[r] = t[V_SHIM][r] / t[gpu ? V_NVBLAS : V_ABFT][r];
            }
            row_t *w = &rows[nrows++];
            w->n = n, w->beta = beta;
            w->diff = 0;
            const double *ref = C[gpu ? V_NVBLAS : V_ABFT];
            for (size_t i = 0; i < nn; ++i) w->diff = fmax(w->diff, fabs(C[V_SHIM][i] - ref[i]));
            for (int v = 0; v < V_COUNT; ++v) {
                int ran = gpu ? (v == V_SHIM || v == V_NVBLAS) : (v == V_ABFT || fn[v] != NULL);
                w->t[v] = ran ? median(t[v], reps) : NAN;
            }
            w->overhead = median(ratio, reps) - 1.0;
            if (gpu)
                printf("%6d %5g %10.4f %10.4f %+10.2f%%  max|C_shim - C_nvblas| %.3g\n", n,
                       beta, w->t[V_SHIM], w->t[V_NVBLAS], 100.0 * w->overhead, w->diff);
            else
                printf("%6d %5g %10.4f %10.4f %10.4f %10.4f %+8.2f%% %+8.2f%%\n", n, beta,
                       w->t[V_BLAS], w->t[V_ABFT], w->t[V_SHIM], w->t[V_NVBLAS],
                       100.0 * (w->t[V_ABFT] / w->t[V_BLAS] - 1.0), 100.0 * w->overhead);
            fflush(stdout);
        }
        free(A), free(B), free(C0);
        for (int v = 0; v < V_COUNT; ++v) free(C[v]);
    }
    abft_destroy(h);
    dlclose(shim_lib); /* its report's summary line is written now */

    /* every shim call protected, nothing flagged */
    long long prot = -1, det = -1, unc = -1;
    FILE *rf = fopen("bench_dropin.report", "r");
    char line[1024];
    while (rf != NULL && fgets(line, sizeof line, rf) != NULL)
        if (strncmp(line, "summary ", 8) == 0)
            sscanf(line, "summary protected=%lld passed_through=%*d detected=%lld corrected=%*d "
                         "uncorrectable=%lld", &prot, &det, &unc);
    if (rf != NULL) fclose(rf);
    printf("shim report: %lld of %lld calls protected, %lld detected, %lld uncorrectable\n",
           prot, shim_calls, det, unc);
    if (prot != shim_calls || det != 0 || unc != 0) failed = 1;

    char date[64];
    time_t tnow = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&tnow));
    if (commit == NULL) commit = "unknown";
    if (json_path != NULL) {
        FILE *f = fopen(json_path, "w");
        if (f == NULL) {
            perror(json_path);
            return 1;
        }
        fprintf(f, "{\n  \"benchmark\": \"bench_dropin\",\n  \"date\": \"%s\",\n"
                   "  \"commit\": \"%s\",\n  \"device\": \"%s\",\n  \"logical_cpus\": %d,\n"
                   "  \"host_blas\": \"%s\",\n  \"openblas_num_threads\": \"%s\",\n"
                   "  \"omp_num_threads\": \"%s\",\n  \"reps\": %d,\n"
                   "  \"shim_calls_protected\": %lld,\n  \"shim_detected\": %lld,\n"
                   "  \"mode\": \"%s\",\n  \"gpu\": \"%s\",\n  \"shim_backend\": \"%s\",\n"
                   "  \"rows\": [\n",
                date, commit, cpu, nprocs(), host_blas, obt ? obt : "", omp ? omp : "", reps,
                prot, det, gpu ? "gpu" : "cpu", gpu ? gpu_name : "", backend_env);
        for (int i = 0; i < nrows; ++i) {
            const row_t *w = &rows[i];
            if (gpu) {
                fprintf(f, "    {\"n\": %d, \"beta\": %g, \"shim_s\": %.6f, \"nvblas_s\": %.6f, "
                           "\"shim_over_nvblas\": %.5f, \"max_diff_shim_nvblas\": %g}%s\n",
                        w->n, w->beta, w->t[V_SHIM], w->t[V_NVBLAS], w->overhead, w->diff,
                        i + 1 < nrows ? "," : "");
                continue;
            }
            fprintf(f, "    {\"n\": %d, \"beta\": %g, \"blas_s\": %.6f, \"abft_s\": %.6f, "
                       "\"shim_s\": %.6f, ", w->n, w->beta, w->t[V_BLAS], w->t[V_ABFT],
                    w->t[V_SHIM]);
            if (isnan(w->t[V_NVBLAS])) fprintf(f, "\"nvblas_s\": null, ");
            else fprintf(f, "\"nvblas_s\": %.6f, ", w->t[V_NVBLAS]);
            fprintf(f, "\"abft_over_blas\": %.5f, \"shim_over_abft\": %.5f, "
                       "\"max_diff_shim_abft\": %g}%s\n", w->t[V_ABFT] / w->t[V_BLAS] - 1.0,
                    w->overhead, w->diff, i + 1 < nrows ? "," : "");
        }
        fprintf(f, "  ]\n}\n");
        fclose(f);
    }
    if (md_path != NULL) {
        FILE *f = fopen(md_path, "w");
        if (f == NULL) {
            perror(md_path);
            return 1;
        }
        fprintf(f, "# Drop-in library overhead (bench_dropin)\n\n"
                   "- date: %s\n- commit: %s\n- device: %s (%d logical CPUs)\n"
                   "- host BLAS: %s; OPENBLAS_NUM_THREADS=%s, OMP_NUM_THREADS=%s\n"
                   "- %d reps per case, interleaved, medians; C = A·B, n x n, fp64, alpha = 1\n"
                   "- shim report: %lld of %lld calls protected, %lld flagged\n\n",
                date, commit, cpu, nprocs(), host_blas, obt ? obt : "(unset)",
                omp ? omp : "(unset)", reps, prot, shim_calls, det);
        if (gpu) {
            fprintf(f, "GPU: %s. The drop-in (ABFT_BLAS_BACKEND=%s) stages A, B and C (beta != 0) "
                       "to the GPU through pinned buffers (ABFT_BLAS_STAGE_THREADS=%s, "
                       "ABFT_BLAS_STAGE_CHUNK=%s; docs/dropin.md), runs the protected "
                       "abft_dgemm there and copies C back; NVBLAS (%s, tile 2048, "
                       "pinned automatically) runs the unprotected dgemm_ from the same host "
                       "arrays. Overhead: median over reps of t(drop-in) / t(NVBLAS) - 1.\n\n"
                       "| n | beta | drop-in dgemm_ (s) | NVBLAS dgemm_ (s) | drop-in vs NVBLAS "
                       "| max abs difference |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n",
                    gpu_name, backend_env, st_thr ? st_thr : "default",
                    st_chunk ? st_chunk : "default", nv_path);
            for (int i = 0; i < nrows; ++i) {
                const row_t *w = &rows[i];
                fprintf(f, "| %d | %g | %.4f | %.4f | %+.2f %% | %.3g |\n", w->n, w->beta,
                        w->t[V_SHIM], w->t[V_NVBLAS], 100.0 * w->overhead, w->diff);
            }
            fclose(f);
            if (failed) fprintf(stderr, "bench_dropin: a call was flagged or not protected\n");
            return failed;
        }
        fprintf(f, "| n | beta | BLAS dgemm_ (s) | abft_dgemm (s) | drop-in dgemm_ (s) |%s "
                   "protection vs BLAS | drop-in vs abft_dgemm |\n",
                nv_path ? " NVBLAS dgemm_ (s) |" : "");
        fprintf(f, "| ---: | ---: | ---: | ---: | ---: |%s ---: | ---: |\n",
                nv_path ? " ---: |" : "");
        for (int i = 0; i < nrows; ++i) {
            const row_t *w = &rows[i];
            fprintf(f, "| %d | %g | %.4f | %.4f | %.4f |", w->n, w->beta, w->t[V_BLAS],
                    w->t[V_ABFT], w->t[V_SHIM]);
            if (nv_path) fprintf(f, " %.4f |", w->t[V_NVBLAS]);
            fprintf(f, " %+.2f %% | %+.2f %% |\n", 100.0 * (w->t[V_ABFT] / w->t[V_BLAS] - 1.0),
                    100.0 * w->overhead);
        }
        fclose(f);
    }
    if (failed) fprintf(stderr, "bench_dropin: a call was flagged or not protected\n");
    return failed;
}

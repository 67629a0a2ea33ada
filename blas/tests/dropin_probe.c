/* A plain program, linked with no BLAS and nothing of abft, for what the drop-in costs a
 * process that has it preloaded (docs/dropin.md, "What a process pays for the preload").
 *
 *   dropin_probe            does nothing: the tiny program of bench/bench_dropin_startup.c
 *   dropin_probe maps [n]   lists the shared objects mapped (/proc/self/maps) and checks that
 *                           none is a BLAS/LAPACK or a CUDA library; with n > 0 it then calls
 *                           dgemm_ (the one in the global scope: the drop-in's) on n x n
 *                           matrices and checks again: the BLAS is there now, a CUDA library
 *                           only when the call ran on the GPU (ABFT_BLAS_BACKEND=cuda, or auto
 *                           at or above the GPU threshold with a GPU present).
 * Exits 0 when the checks hold, 1 otherwise. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*dgemm_fn)(const char *, const char *, const int *, const int *, const int *,
                         const double *, const double *, const int *, const double *,
                         const int *, const double *, double *, const int *);

static const char *const cuda_libs[] = {"libcudart", "libcublas", "libcusolver", "libcurand",
                                        "libcusparse", "libnvJitLink", "libcuda.so",
                                        "libabft_blas_cuda"};
static const char *const blas_libs[] = {"libblas", "libopenblas", "liblapack", "libmkl",
                                        "libgfortran", "libabft_blas_host"};

/* Counts the distinct shared objects mapped, those of `names`, and whether the drop-in is;
 * prints the matches. */
static int scan(const char *when, const char *const *names, int nnames, const char *what,
                int *dropin) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL) {
        printf("dropin_probe: /proc/self/maps: cannot read\n");
        exit(1);
    }
    char line[4096], last[4096] = "";
    int objects = 0, hits = 0;
    *dropin = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char *path = strchr(line, '/');
        if (path == NULL || strstr(path, ".so") == NULL) continue;
        path[strcspn(path, "\n")] = '\0';
        if (strcmp(path, last) == 0) continue;
        snprintf(last, sizeof last, "%s", path);
        ++objects;
        const char *base = strrchr(path, '/') + 1;
        if (strncmp(base, "libabft_blas.so", 15) == 0) *dropin = 1;
        for (int i = 0; i < nnames; ++i)
            if (strstr(base, names[i]) != NULL) {
                printf("dropin_probe: %s: %s mapped: %s\n", when, what, path);
                ++hits;
                break;
            }
    }
    fclose(f);
    printf("dropin_probe: %s: %d shared objects mapped, %d %s\n", when, objects, hits, what);
    return hits;
}

int main(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "maps") != 0) return 0;
    const int n = argc > 2 ? atoi(argv[2]) : 0;
    int bad = 0, dropin = 0;
    bad += scan("before any call", cuda_libs, 8, "CUDA libraries", &dropin);
    bad += scan("before any call", blas_libs, 6, "BLAS/LAPACK libraries", &dropin);
    if (!dropin) {
        printf("dropin_probe: libabft_blas.so is not mapped (run with LD_PRELOAD)\n");
        return 1;
    }
    if (n > 0) {
        dgemm_fn f;
        *(void **)&f = dlsym(RTLD_DEFAULT, "dgemm_");
        double *A = calloc((size_t)n * n, sizeof(double)), *C = calloc((size_t)n * n, sizeof(double));
        if (f == NULL || A == NULL || C == NULL) return 1;
        for (int i = 0; i < n; ++i) A[i + (size_t)i * n] = 2.0;
        const double one = 1.0, zero = 0.0;
        f("N", "N", &n, &n, &n, &one, A, &n, A, &n, &zero, C, &n);
        int ok = 1;
        for (int i = 0; i < n; ++i) ok &= C[i + (size_t)i * n] == 4.0;
        printf("dropin_probe: dgemm_ n = %d: %s\n", n, ok ? "right" : "WRONG");
        bad += !ok;
        const char *backend = getenv("ABFT_BLAS_BACKEND");
        char when[64];
        snprintf(when, sizeof when, "after dgemm_ n = %d", n);
        const int cuda = scan(when, cuda_libs, 8, "CUDA libraries", &dropin);
        if (backend == NULL || strcmp(backend, "cuda") != 0) {
            /* only a call at or above the GPU threshold (auto) may load them, and only
             * where there is a GPU: the caller says whether that may be the case */
            const char *allow = getenv("DROPIN_PROBE_CUDA_ALLOWED");
            if (cuda > 0 && (allow == NULL || strcmp(allow, "1") != 0)) bad += cuda;
        }
        free(A), free(C);
    }
    printf("dropin_probe: %s\n", bad ? "FAILED" : "passed");
    return bad ? 1 : 0;
}

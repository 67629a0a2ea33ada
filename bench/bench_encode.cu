/* bench_encode: checksum encoding kernels (abft_cuda_tsmm / abft_cuda_dual) against
 * (1) a streaming read of the same bytes, measured in the same run, and
 * (2) cuBLAS doing the same job (cublasDgemm/Sgemm A·V for rows, (T,N) for V^T·A, two calls
 *     for checksum+bound or rows+cols).
 *
 * Usage: bench_encode [out_dir]   (default bench/results)
 *   writes out_dir/encode_fp64.json, out_dir/encode_fp32.json and out_dir/encode.md.
 * Env: ABFT_COMMIT (else git), ABFT_BENCH_SWEEP=1 (tile sweep only, printed and written to
 *   out_dir/encode_sweep.txt; at the table's class sizes, or at ABFT_BENCH_SIZES when set),
 *   ABFT_BENCH_SIZES=2048,4096 (subset of m = k).
 * Timing: each sample is a batch of calls on rotated inputs (together > 256 MB, so never
 * served from the 50 MB L2), timed by CUDA events; the median sample over the batch size is
 * reported after warm-up. Inputs are random in [-1, 1], never zero. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abft_kernels.h"
#include "cuda/abft_cuda_tuning.h"
#include "testutil_cuda.h"


/* ---- streaming read reference ------------------------------------------------------------
 * Grid-stride over 16-byte words, UNROLL independent loads in flight per thread, an xor
 * that the compiler cannot drop, one conditional store per thread. */
template <int UNROLL>
__global__ void read_kernel(const uint4 *__restrict__ p, size_t n16, unsigned *sink) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (; i + (UNROLL - 1) * stride < n16; i += UNROLL * stride) {
        uint4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = __ldg(p + i + u * stride);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n16; i += stride) {
        uint4 v = __ldg(p + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) *sink = acc;
}

__global__ void fill_kernel(void *p, size_t count, int isd, uint64_t seed) {
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < count;
         e += (size_t)gridDim.x * blockDim.x) {
        uint64_t z = (e + seed) * 0x9E3779B97F4A7C15ull;
        z ^= z >> 31;
        z *= 0xBF58476D1CE4E5B9ull;
        z ^= z >> 29;
        double v = ((double)(z >> 11) * 0x1p-53) * 2.0 - 1.0;
        if (v == 0.0) v = 0.5;
        if (isd)
            ((double *)p)[e] = v;
        else
            ((float *)p)[e] = (float)v;
    }
}

__global__ void abs_kernel(const void *src, void *dst, size_t count, int isd) {
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < count;
         e += (size_t)gridDim.x * blockDim.x) {
        if (isd)
            ((double *)dst)[e] = fabs(((const double *)src)[e]);
        else
            ((float *)dst)[e] = fabsf(((const float *)src)[e]);
    }
}

/* V = [1, j+1] and general X (random) in the data precision for cuBLAS, fp64 for us. */
__global__ void weights_kernel(void *V, int64_t rows, int64_t cols, int isd, int implicit) {
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < rows * cols;
         e += (int64_t)gridDim.x * blockDim.x) {
        int64_t j = e / rows, i = e - j * rows;
        double v = implicit ? (j == 0 ? 1.0 : (double)(i + 1))
                            : 0.25 + 0.5 * (double)((i * 7 + j * 13) % 11) / 11.0;
        if (isd)
            ((double *)V)[e] = v;
        else
            ((float *)V)[e] = (float)v;
    }
}

static cudaStream_t g_stream;
static cudaEvent_t g_e0, g_e1;
static int g_read_blocks = 0, g_read_threads = 512, g_read_unroll = 4;
static unsigned *g_sink;

static void run_read(const void *p, size_t bytes) {
    size_t n16 = bytes / 16;
    if (g_read_unroll == 8)
        read_kernel<8><<<g_read_blocks, g_read_threads, 0, g_stream>>>((const uint4 *)p, n16, g_sink);
    else if (g_read_unroll == 2)
        read_kernel<2><<<g_read_blocks, g_read_threads, 0, g_stream>>>((const uint4 *)p, n16, g_sink);
    else
        read_kernel<4><<<g_read_blocks, g_read_threads, 0, g_stream>>>((const uint4 *)p, n16, g_sink);
}

/* Median over `samples` of the per-call time of a batch of `batch` calls; call(k) runs the
 * k-th call (k selects the rotated buffer). */
template <typename F>
static double time_ms(F call, int batch, int samples) {
    for (int w = 0; w < 3; ++w) call(w);
    TU_CUDA_OK(cudaStreamSynchronize(g_stream));
    TU_CUDA_OK(cudaGetLastError());
    double t[64];
    if (samples > 64) samples = 64;
    int k = 0;
    for (int s = 0; s < samples; ++s) {
        TU_CUDA_OK(cudaEventRecord(g_e0, g_stream));
        for (int b = 0; b < batch; ++b) call(k++);
        TU_CUDA_OK(cudaEventRecord(g_e1, g_stream));
        TU_CUDA_OK(cudaEventSynchronize(g_e1));
        float ms;
        TU_CUDA_OK(cudaEventElapsedTime(&ms, g_e0, g_e1));
        t[s] = ms / batch;
    }
    TU_CUDA_OK(cudaGetLastError());
    for (int i = 1; i < samples; ++i)
        for (int j = i; j > 0 && t[j] < t[j - 1]; --j) {
            double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    return t[samples / 2];
}

typedef struct {
    char name[24];
    const char *prec;
    int64_t m, n, c;
    double ms, gbs, pct, ratio, cublas_ms, read_ms;
} record_t;

static record_t g_rec[512];
static int g_nrec = 0;

int main(int argc, char **argv) {
    const char *out_dir = argc > 1 ? argv[1] : "bench/results";
    const int sweep = getenv("ABFT_BENCH_SWEEP") && atoi(getenv("ABFT_BENCH_SWEEP")) != 0;
    TU_CUDA_OK(cudaSetDevice(0));
    cudaDeviceProp prop;
    TU_CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    char commit[64] = "unknown";
    if (getenv("ABFT_COMMIT")) {
        snprintf(commit, sizeof commit, "%s", getenv("ABFT_COMMIT"));
    } else {
        FILE *f = popen("git rev-parse --short HEAD 2>/dev/null", "r");
        if (f) {
            if (fgets(commit, sizeof commit, f)) commit[strcspn(commit, "\n")] = 0;
            pclose(f);
        }
    }
    TU_CUDA_OK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    TU_CUDA_OK(cudaEventCreate(&g_e0));
    TU_CUDA_OK(cudaEventCreate(&g_e1));
    TU_CUDA_OK(cudaMalloc(&g_sink, 16));
    abft_buffer_t scratch = {NULL, 0};
    abft_kctx_t ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.scratch = &scratch;
    TU_ABFT_OK(abft_cuda_context_create(&ctx));
    ctx.stream = g_stream;
    cublasHandle_t blas;
    TU_LIB_OK(cublasCreate(&blas));
    TU_LIB_OK(cublasSetStream(blas, g_stream));
    const int sms = prop.multiProcessorCount;
    printf("device: %s, %d SMs, L2 %d MB, commit %s\n", prop.name, sms, prop.l2CacheSize >> 20,
           commit);

    /* ---- the read reference: best of a small sweep on an 8 GiB buffer ---- */
    const size_t big = (size_t)8 << 30;
    void *bigbuf = NULL;
    TU_CUDA_OK(cudaMalloc(&bigbuf, big));
    fill_kernel<<<4 * sms, 512, 0, g_stream>>>(bigbuf, big / 4, 0, 1);
    double best_rate = 0;
    int bb = 0, bt = 0, bu = 0;
    const int blk_mult[] = {2, 4, 8, 16};
    const int thr[] = {256, 512, 1024};
    const int unr[] = {2, 4, 8};
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 3; ++b)
            for (int u = 0; u < 3; ++u) {
                if (blk_mult[a] * thr[b] > 4096) continue;
                g_read_blocks = blk_mult[a] * sms;
                g_read_threads = thr[b];
                g_read_unroll = unr[u];
                double ms = time_ms([&](int) { run_read(bigbuf, big); }, 1, 5);
                double rate = (double)big / (ms * 1e-3) / 1e12;
                if (rate > best_rate) {
                    best_rate = rate;
                    bb = g_read_blocks;
                    bt = g_read_threads;
                    bu = g_read_unroll;
                }
            }
    g_read_blocks = bb;
    g_read_threads = bt;
    g_read_unroll = bu;
    printf("streaming read (8 GiB): %.3f TB/s (blocks %d, threads %d, unroll %d)\n", best_rate,
           bb, bt, bu);
    TU_CUDA_OK(cudaFree(bigbuf));

    int64_t sizes_d[] = {2048, 4096, 8192, 16384, 30720, 0};
    int64_t sizes_s[] = {2048, 4096, 8192, 16384, 30720, 40960, 0};
    if (getenv("ABFT_BENCH_SIZES")) {
        static int64_t custom[16];
        int k = 0;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", getenv("ABFT_BENCH_SIZES"));
        for (char *t = strtok(buf, ","); t && k < 15; t = strtok(NULL, ",")) custom[k++] = atoll(t);
        custom[k] = 0;
        memcpy(sizes_d, custom, sizeof(int64_t) * 6);
        sizes_d[5] = 0;
        memcpy(sizes_s, custom, sizeof(int64_t) * 7);
        sizes_s[6] = 0;
    }
    FILE *sweepf = NULL;
    if (sweep) {
        char path[512];
        snprintf(path, sizeof path, "%s/encode_sweep.txt", out_dir);
        sweepf = fopen(path, "w");
    }

    for (int pi = 0; pi < 2; ++pi) {
        const int isd = pi == 0;
        const abft_prec_t prec = isd ? ABFT_PREC_D : ABFT_PREC_S;
        const size_t es = isd ? 8 : 4;
        const int64_t *sizes = isd ? sizes_d : sizes_s;
        for (int si = 0; sizes[si] != 0; ++si) {
            const int64_t m = sizes[si], n = sizes[si];
            /* the sweep's sizes: the table's classes, or ABFT_BENCH_SIZES when given */
            if (sweep && !getenv("ABFT_BENCH_SIZES") &&
                !(m == 2048 || m == 8192 || m == 16384 || m == 30720))
                continue;
            const int64_t lda = m;
            const size_t bytes = (size_t)lda * n * es;
            int nbuf = (int)(((size_t)256 << 20) / bytes) + 1;
            if (nbuf > 16) nbuf = 16;
            void *A = NULL, *Aabs = NULL;
            TU_CUDA_OK(cudaMalloc(&A, bytes * nbuf));
            fill_kernel<<<8 * sms, 256, 0, g_stream>>>(A, bytes * nbuf / es, isd, 12345 + si);
            if (!sweep) {
                TU_CUDA_OK(cudaMalloc(&Aabs, bytes * nbuf));
                abs_kernel<<<8 * sms, 256, 0, g_stream>>>(A, Aabs, bytes * nbuf / es, isd);
            }
            const int64_t big_dim = m > n ? m : n;
            void *Vd = NULL, *Xd = NULL; /* data precision, for cuBLAS */
            double *X64 = NULL;          /* fp64 explicit weights for us */
            double *Y = NULL, *Ya = NULL, *Y2 = NULL;
            TU_CUDA_OK(cudaMalloc(&Vd, big_dim * 2 * es));
            TU_CUDA_OK(cudaMalloc(&Xd, big_dim * 16 * es));
            TU_CUDA_OK(cudaMalloc(&X64, big_dim * 16 * 8));
            TU_CUDA_OK(cudaMalloc(&Y, big_dim * 16 * 8));
            TU_CUDA_OK(cudaMalloc(&Ya, big_dim * 16 * 8));
            TU_CUDA_OK(cudaMalloc(&Y2, big_dim * 16 * 8));
            weights_kernel<<<256, 256, 0, g_stream>>>(Vd, big_dim, 2, isd, 1);
            weights_kernel<<<256, 256, 0, g_stream>>>(Xd, big_dim, 16, isd, 0);
            weights_kernel<<<256, 256, 0, g_stream>>>(X64, big_dim, 16, 1, 0);
            TU_CUDA_OK(cudaStreamSynchronize(g_stream));
            const int batch = bytes > ((size_t)1 << 30) ? 2 : bytes > ((size_t)256 << 20) ? 4 : 10;
            const int samples = 15;
            auto bufA = [&](int k) { return (const char *)A + (size_t)(k % nbuf) * bytes; };
            auto bufAabs = [&](int k) { return (const char *)Aabs + (size_t)(k % nbuf) * bytes; };
            const double read_ms = time_ms([&](int k) { run_read(bufA(k), bytes); }, batch, samples);
            const double one = 1.0, zero = 0.0;
            const float onef = 1.0f, zerof = 0.0f;
            /* cuBLAS C = op(A) * B with B in the data precision, C of the data precision */
            void *Cd = NULL;
            TU_CUDA_OK(cudaMalloc(&Cd, big_dim * 16 * es));
            auto run_blas = [&](int k, int trans, int64_t c, const void *B, const char *Abase) {
                const int64_t rows = trans ? n : m, kk = trans ? m : n;
                cublasOperation_t ta = trans ? CUBLAS_OP_T : CUBLAS_OP_N;
                if (isd)
                    TU_LIB_OK(cublasDgemm_64(blas, ta, CUBLAS_OP_N, rows, c, kk, &one,
                                      (const double *)Abase, lda, (const double *)B, big_dim,
                                      &zero, (double *)Cd, big_dim));
                else
                    TU_LIB_OK(cublasSgemm_64(blas, ta, CUBLAS_OP_N, rows, c, kk, &onef,
                                      (const float *)Abase, lda, (const float *)B, big_dim,
                                      &zerof, (float *)Cd, big_dim));
                (void)k;
            };
            auto ours_tsmm = [&](int k, int trans, int64_t c, const double *X, double *Yabs) {
                abft_tsmm_args_t a = {prec, trans, m, n, c, bufA(k), lda, X, big_dim, NULL, big_dim,
                                      Y, big_dim, Yabs, big_dim, 0};
                TU_ABFT_OK(abft_cuda_tsmm(&ctx, &a));
            };
            auto ours_dual = [&](int k) {
                abft_dual_args_t a = {prec, m, n, bufA(k), lda, 2, NULL, 0, NULL, 0, Y, big_dim,
                                      NULL, 0, 2, NULL, 0, NULL, 0, Y2, big_dim, NULL, 0, 0};
                TU_ABFT_OK(abft_cuda_dual(&ctx, &a));
            };
            auto add = [&](const char *name, int64_t c, double ms, double cub_ms, double rms) {
                record_t *r = &g_rec[g_nrec++];
                snprintf(r->name, sizeof r->name, "%s", name);
                r->prec = isd ? "fp64" : "fp32";
                r->m = m;
                r->n = n;
                r->c = c;
                r->ms = ms;
                r->gbs = (double)bytes / (ms * 1e-3) / 1e9;
                r->pct = 100.0 * rms / ms;
                r->ratio = cub_ms / ms;
                r->cublas_ms = cub_ms;
                r->read_ms = rms;
                printf("%-6s %-8s m=%-6lld c=%-2lld  %8.4f ms  %7.1f GB/s  %5.1f%% of read  %5.2fx cuBLAS (%.4f ms)\n",
                       r->prec, name, (long long)m, (long long)c, ms, r->gbs, r->pct, r->ratio,
                       cub_ms);
                fflush(stdout);
            };

            if (sweep) {
                /* Tile sweep: each override alone on top of the table row. */
                const int lanes_r[] = {8, 16, 32, 64, 128};
                const int lanes_c[] = {2, 4, 8, 16, 32};
                const int bps[] = {2, 3, 4, 5, 8, 16};
                for (int b = 0; b < 6; ++b) {
                    for (int l = 0; l < 5; ++l) {
                        abft_cuda_tune_override(lanes_r[l], lanes_c[l], bps[b]);
                        double tr = time_ms([&](int k) { ours_tsmm(k, 0, 2, NULL, NULL); }, batch, 9);
                        double tb = time_ms([&](int k) { ours_tsmm(k, 0, 2, NULL, Ya); }, batch, 9);
                        double tc = time_ms([&](int k) { ours_tsmm(k, 1, 2, NULL, NULL); }, batch, 9);
                        double td = time_ms([&](int k) { ours_dual(k); }, batch, 9);
                        char line[256];
                        snprintf(line, sizeof line,
                                 "sweep %s m=%lld bps=%d rows_lanes=%d: rows %.1f%% bound %.1f%% | cols_lanes=%d: cols %.1f%% | dual %.1f%%\n",
                                 isd ? "fp64" : "fp32", (long long)m, bps[b], lanes_r[l],
                                 100 * read_ms / tr, 100 * read_ms / tb, lanes_c[l],
                                 100 * read_ms / tc, 100 * read_ms / td);
                        fputs(line, stdout);
                        if (sweepf) fputs(line, sweepf);
                    }
                }
                abft_cuda_tune_override(0, 0, 0);
                fflush(stdout);
            } else {
                double t, tc;
                t = time_ms([&](int k) { ours_tsmm(k, 0, 2, NULL, NULL); }, batch, samples);
                tc = time_ms([&](int k) { run_blas(k, 0, 2, Vd, bufA(k)); }, batch, samples);
                add("rows", 2, t, tc, read_ms);
                t = time_ms([&](int k) { ours_tsmm(k, 1, 2, NULL, NULL); }, batch, samples);
                tc = time_ms([&](int k) { run_blas(k, 1, 2, Vd, bufA(k)); }, batch, samples);
                add("cols", 2, t, tc, read_ms);
                /* checksum + bound: cuBLAS needs A·V and |A|·V; |A| is given to it for free
                 * (precomputed), which flatters cuBLAS */
                t = time_ms([&](int k) { ours_tsmm(k, 0, 2, NULL, Ya); }, batch, samples);
                tc = time_ms([&](int k) {
                    run_blas(k, 0, 2, Vd, bufA(k));
                    run_blas(k, 0, 2, Vd, bufAabs(k));
                }, batch, samples);
                add("bound", 2, t, tc, read_ms);
                /* the passes of row checksums with the random checksum: four explicit
                 * weights [1, j+1, r0, r1] with |A| (bound4: |X| from X, as the passes over
                 * C; bound4x: an explicit |X| too, as the pass over A), against the same
                 * passes with two explicit weights (bound2x, the pass over A without it)
                 * and the implicit "bound" above (the passes over C without it) */
                auto ours_xa = [&](int k, int64_t c) {
                    abft_tsmm_args_t a = {prec, 0, m, n, c, bufA(k), lda, X64, big_dim, X64,
                                          big_dim, Y, big_dim, Ya, big_dim, 0};
                    TU_ABFT_OK(abft_cuda_tsmm(&ctx, &a));
                };
                auto blas_xa = [&](int k, int64_t c) {
                    run_blas(k, 0, c, Xd, bufA(k));
                    run_blas(k, 0, c, Xd, bufAabs(k));
                };
                t = time_ms([&](int k) { ours_tsmm(k, 0, 4, X64, Ya); }, batch, samples);
                tc = time_ms([&](int k) { blas_xa(k, 4); }, batch, samples);
                add("bound4", 4, t, tc, read_ms);
                t = time_ms([&](int k) { ours_xa(k, 2); }, batch, samples);
                tc = time_ms([&](int k) { blas_xa(k, 2); }, batch, samples);
                add("bound2x", 2, t, tc, read_ms);
                t = time_ms([&](int k) { ours_xa(k, 4); }, batch, samples);
                tc = time_ms([&](int k) { blas_xa(k, 4); }, batch, samples);
                add("bound4x", 4, t, tc, read_ms);
                t = time_ms([&](int k) { ours_dual(k); }, batch, samples);
                tc = time_ms([&](int k) {
                    run_blas(k, 0, 2, Vd, bufA(k));
                    run_blas(k, 1, 2, Vd, bufA(k));
                }, batch, samples);
                add("dual", 2, t, tc, read_ms);
                const int64_t cs[] = {2, 4, 8, 16};
                for (int ci = 0; ci < 4; ++ci) {
                    const int64_t c = cs[ci];
                    t = time_ms([&](int k) { ours_tsmm(k, 0, c, X64, NULL); }, batch, samples);
                    tc = time_ms([&](int k) { run_blas(k, 0, c, Xd, bufA(k)); }, batch, samples);
                    add("gen_n", c, t, tc, read_ms);
                    t = time_ms([&](int k) { ours_tsmm(k, 1, c, X64, NULL); }, batch, samples);
                    tc = time_ms([&](int k) { run_blas(k, 1, c, Xd, bufA(k)); }, batch, samples);
                    add("gen_t", c, t, tc, read_ms);
                }
            }
            TU_CUDA_OK(cudaFree(A));
            if (Aabs) TU_CUDA_OK(cudaFree(Aabs));
            TU_CUDA_OK(cudaFree(Vd));
            TU_CUDA_OK(cudaFree(Xd));
            TU_CUDA_OK(cudaFree(X64));
            TU_CUDA_OK(cudaFree(Y));
            TU_CUDA_OK(cudaFree(Ya));
            TU_CUDA_OK(cudaFree(Y2));
            TU_CUDA_OK(cudaFree(Cd));
        }
    }
    if (sweepf) fclose(sweepf);
    if (sweep) return 0;

    /* ---- JSON per precision and the markdown table ---- */
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    for (int pi = 0; pi < 2; ++pi) {
        const char *pn = pi == 0 ? "fp64" : "fp32";
        char path[512];
        snprintf(path, sizeof path, "%s/encode_%s.json", out_dir, pn);
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "cannot write %s\n", path);
            return 1;
        }
        fprintf(f, "[\n");
        int first = 1;
        for (int i = 0; i < g_nrec; ++i) {
            record_t *r = &g_rec[i];
            if (strcmp(r->prec, pn) != 0) continue;
            fprintf(f,
                    "%s  {\"case\": \"%s\", \"precision\": \"%s\", \"m\": %lld, \"k\": %lld, "
                    "\"c\": %lld, \"median_ms\": %.5f, \"gbs\": %.1f, \"pct_of_read\": %.1f, "
                    "\"ratio_to_cublas\": %.3f, \"cublas_ms\": %.5f, \"read_ms\": %.5f, "
                    "\"read_tbs_8gib\": %.3f, \"device\": \"%s\", \"date\": \"%s\", "
                    "\"commit\": \"%s\"}",
                    first ? "" : ",\n", r->name, r->prec, (long long)r->m, (long long)r->n,
                    (long long)r->c, r->ms, r->gbs, r->pct, r->ratio, r->cublas_ms, r->read_ms,
                    best_rate, prop.name, date, commit);
            first = 0;
        }
        fprintf(f, "\n]\n");
        fclose(f);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/encode.md", out_dir);
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    fprintf(f, "# Checksum encoding benchmark\n\n");
    fprintf(f, "- date: %s\n- device: %s (%d SMs)\n- commit: %s\n", date, prop.name, sms, commit);
    fprintf(f, "- streaming read reference (8 GiB, 16-byte loads, best of sweep): %.3f TB/s "
               "(blocks %d, threads %d, unroll %d)\n", best_rate, bb, bt, bu);
    fprintf(f, "- time: median per call of batched calls on rotated inputs (> L2), CUDA events\n");
    fprintf(f, "- %% of read: time of a streaming read of the same bytes (same run) / our time; "
               "x cuBLAS: cuBLAS time / our time (bound: A·V and |A|·V with |A| precomputed; "
               "dual: A·V and A^T·V)\n\n");
    fprintf(f, "| precision | case | m = k | c | ms | GB/s | %% of read | x cuBLAS | cuBLAS ms |\n");
    fprintf(f, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (int i = 0; i < g_nrec; ++i) {
        record_t *r = &g_rec[i];
        fprintf(f, "| %s | %s | %lld | %lld | %.4f | %.0f | %.1f | %.2f | %.4f |\n", r->prec,
                r->name, (long long)r->m, (long long)r->c, r->ms, r->gbs, r->pct, r->ratio,
                r->cublas_ms);
    }
    fclose(f);
    cublasDestroy(blas);
    if (scratch.ptr) abft_cuda_free(&ctx, scratch.ptr);
    abft_cuda_context_destroy(&ctx, 1, 1);
    printf("wrote %s/encode_fp64.json, encode_fp32.json, encode.md\n", out_dir);
    return 0;
}

// Probe: cuBLAS DGEMM captured into the body of a conditional graph node; a gate kernel sets
// the condition from a device flag. Correctness (runs when flag=0, C untouched when flag=1) and
// wall time against a host round trip before the GEMM.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1; } } while (0)
#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { printf("%s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)s_); return 1; } } while (0)
__global__ void gate(const volatile int *bad, cudaGraphConditionalHandle h) { cudaGraphSetConditional(h, *bad == 0 ? 1u : 0u); }
__global__ void screen(int *flag, int v) { *flag = v; __threadfence_system(); }
__global__ void fill(double *p, size_t n, double v) { size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) p[i] = v; }
__global__ void rnd(double *p, size_t n, unsigned s) { size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) p[i] = (double)((i * 2654435761u + s) % 1000) / 1000.0 - 0.5; }
static double now() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

static int build(cudaGraph_t *g, cudaGraphExec_t *ex, cublasHandle_t hb, cudaStream_t cap, cudaStream_t user,
                 int n, const double *A, const double *B, double *C, int *flag, double *t_inst, int use_ws, void *ws, size_t wsb) {
  CK(cudaGraphCreate(g, 0));
  cudaGraphConditionalHandle ch;
  CK(cudaGraphConditionalHandleCreate(&ch, *g, 0, cudaGraphCondAssignDefault));
  cudaGraphNode_t gn;
  cudaKernelNodeParams kp = {};
  void *args[2] = {&flag, &ch};
  kp.func = (void *)gate; kp.gridDim = dim3(1); kp.blockDim = dim3(1); kp.kernelParams = args;
  CK(cudaGraphAddKernelNode(&gn, *g, nullptr, 0, &kp));
  cudaGraphNodeParams cp = {};
  cp.type = cudaGraphNodeTypeConditional;
  cp.conditional.handle = ch; cp.conditional.type = cudaGraphCondTypeIf; cp.conditional.size = 1;
  cudaGraphNode_t cn;
  CK(cudaGraphAddNode(&cn, *g, &gn, nullptr, 1, &cp));
  cudaGraph_t body = cp.conditional.phGraph_out[0];
  CK(cudaStreamBeginCaptureToGraph(cap, body, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
  CB(cublasSetStream(hb, cap));
  if (use_ws) CB(cublasSetWorkspace(hb, ws, wsb));
  double al = 1.0, be = 0.0;
  cublasStatus_t s = cublasDgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &al, A, n, B, n, &be, C, n);
  cudaGraph_t outg = nullptr;
  cudaError_t ee = cudaStreamEndCapture(cap, &outg);
  CB(cublasSetStream(hb, user));
  if (s != CUBLAS_STATUS_SUCCESS) { printf("dgemm under capture: %d\n", (int)s); return 1; }
  CK(ee);
  size_t nn = 0; CK(cudaGraphGetNodes(body, nullptr, &nn));
  std::vector<cudaGraphNode_t> nodes(nn); CK(cudaGraphGetNodes(body, nodes.data(), &nn));
  printf("  body nodes: %zu:", nn);
  for (auto x : nodes) { cudaGraphNodeType t; cudaGraphNodeGetType(x, &t); printf(" type%d", (int)t); }
  printf("\n");
  double t0 = now();
  cudaError_t ie = cudaGraphInstantiate(ex, *g, 0);
  *t_inst = now() - t0;
  if (ie != cudaSuccess) { printf("  instantiate: %s\n", cudaGetErrorString(ie)); (void)cudaGetLastError(); return 1; }
  return 0;
}

int main() {
  cublasHandle_t hb; CB(cublasCreate(&hb));
  cudaStream_t user, cap; CK(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));
  CB(cublasSetStream(hb, user));
  int *hflag, *dflag; CK(cudaHostAlloc(&hflag, 64, cudaHostAllocMapped)); CK(cudaHostGetDevicePointer((void **)&dflag, hflag, 0));
  void *ws; size_t wsb = 32u << 20; CK(cudaMalloc(&ws, wsb));
  for (int n : {2048, 4096}) {
    size_t N = (size_t)n * n;
    double *A, *B, *C, *R;
    CK(cudaMalloc(&A, N * 8)); CK(cudaMalloc(&B, N * 8)); CK(cudaMalloc(&C, N * 8)); CK(cudaMalloc(&R, N * 8));
    rnd<<<(N + 255) / 256, 256, 0, user>>>(A, N, 1); rnd<<<(N + 255) / 256, 256, 0, user>>>(B, N, 7);
    double al = 1.0, be = 0.0;
    CB(cublasDgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &al, A, n, B, n, &be, R, n));
    CK(cudaStreamSynchronize(user));
    for (int use_ws = 0; use_ws < 2; ++use_ws) {
      cudaGraph_t g; cudaGraphExec_t ex; double ti = 0;
      printf("n=%d workspace=%s\n", n, use_ws ? "set" : "default");
      if (build(&g, &ex, hb, cap, user, n, A, B, C, dflag, &ti, use_ws, ws, wsb)) { (void)cudaGetLastError(); continue; }
      printf("  instantiate %.1f us\n", ti);
      // correctness: flag 0 -> runs, flag 1 -> untouched
      fill<<<(N + 255) / 256, 256, 0, user>>>(C, N, -7.0);
      screen<<<1, 1, 0, user>>>(dflag, 1);
      CK(cudaGraphLaunch(ex, user)); CK(cudaStreamSynchronize(user));
      std::vector<double> hc(N), hr(N);
      CK(cudaMemcpy(hc.data(), C, N * 8, cudaMemcpyDeviceToHost));
      size_t untouched = std::count(hc.begin(), hc.end(), -7.0);
      screen<<<1, 1, 0, user>>>(dflag, 0);
      CK(cudaGraphLaunch(ex, user)); CK(cudaStreamSynchronize(user));
      CK(cudaMemcpy(hc.data(), C, N * 8, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hr.data(), R, N * 8, cudaMemcpyDeviceToHost));
      size_t same = 0; for (size_t i = 0; i < N; ++i) same += hc[i] == hr[i];
      printf("  flag=1: untouched %zu/%zu; flag=0: equal to plain %zu/%zu\n", untouched, N, same, N);
      // timing
      std::vector<double> tp, ts, tg;
      for (int it = 0; it < 40; ++it) {
        double t0 = now();
        CB(cublasDgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &al, A, n, B, n, &be, C, n));
        CK(cudaStreamSynchronize(user)); tp.push_back(now() - t0);
        t0 = now();
        screen<<<1, 1, 0, user>>>(dflag, 0);
        CK(cudaStreamSynchronize(user));
        if (*(volatile int *)hflag == 0) CB(cublasDgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &al, A, n, B, n, &be, C, n));
        screen<<<1, 1, 0, user>>>(dflag, 0);
        CK(cudaStreamSynchronize(user)); ts.push_back(now() - t0);
        t0 = now();
        screen<<<1, 1, 0, user>>>(dflag, 0);
        CK(cudaGraphLaunch(ex, user));
        screen<<<1, 1, 0, user>>>(dflag, 0);
        CK(cudaStreamSynchronize(user)); tg.push_back(now() - t0);
      }
      printf("  wall us: plain %.1f  roundtrip %.1f (+%.1f)  graph %.1f (+%.1f)\n", med(tp), med(ts), med(ts) - med(tp), med(tg), med(tg) - med(tp));
      // update path: a graph for other pointers, then cudaGraphExecUpdate
      cudaGraph_t g2; cudaGraphExec_t ex2; double ti2;
      if (!build(&g2, &ex2, hb, cap, user, n, B, A, C, dflag, &ti2, use_ws, ws, wsb)) {
        cudaGraphExecUpdateResultInfo info;
        double t0 = now();
        cudaError_t ue = cudaGraphExecUpdate(ex, g2, &info);
        printf("  exec update: %s %.1f us (second instantiate %.1f us)\n", cudaGetErrorString(ue), now() - t0, ti2);
        (void)cudaGetLastError();
        cudaGraphExecDestroy(ex2); cudaGraphDestroy(g2);
      }
      cudaGraphExecDestroy(ex); cudaGraphDestroy(g);
    }
    cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(R);
  }
  printf("done\n");
  return 0;
}

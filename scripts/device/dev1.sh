#!/usr/bin/env bash
# On the device: build the kernel and GEMM tests and benchmarks (sm_90), run the kernel test
# (full sizes) and the GEMM test, memcheck + racecheck (RACE=0: none) of the kernel test
# (small mode).
# Logs to $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
cmake -S . -B build-dev -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
  -DABFT_BUILD_EXAMPLES=OFF -DABFT_BUILD_TESTS=ON > "$OUT/configure.log" 2>&1
cmake --build build-dev -j16 --target test_cuda_kernels test_gemm_gpu bench_gemm bench_encode \
  > "$OUT/build.log" 2>&1 || grep error "$OUT/build.log" | head
timeout 200 build-dev/tests/test_cuda_kernels > "$OUT/test_cuda_kernels.log" 2>&1
echo "test_cuda_kernels rc=$?"; grep -E "cases|check failed|seed|FAIL|pass" "$OUT/test_cuda_kernels.log" | head -30
timeout 250 build-dev/tests/test_gemm_gpu > "$OUT/test_gemm_gpu.log" 2>&1
echo "test_gemm_gpu rc=$?"; grep -E "check failed|seed|clean|faults|FAIL" "$OUT/test_gemm_gpu.log" | head -20
export ABFT_TEST_SMALL=1
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 build-dev/tests/test_cuda_kernels \
  > "$OUT/memcheck-kernels.log" 2>&1; echo "memcheck kernels rc=$?"; tail -2 "$OUT/memcheck-kernels.log"
[ "${RACE:-1}" = 1 ] && timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 build-dev/tests/test_cuda_kernels \
  > "$OUT/racecheck-kernels.log" 2>&1; echo "racecheck kernels rc=$?"; tail -2 "$OUT/racecheck-kernels.log"

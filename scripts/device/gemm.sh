#!/usr/bin/env bash
# On the device machine: build for sm_90, run every GPU test, compute-sanitizer on the GEMM
# GPU test, the GEMM benchmark; logs and results to $OUT (or ./out).
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export ABFT_COMMIT=${ABFT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
cmake -S . -B build-dev -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build build-dev -j16 > "$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head -30; exit 1; }
(cd build-dev && ctest -L gpu --output-on-failure) > "$OUT/gpu-tests.log" 2>&1; echo "gpu tests rc=$?"
grep -E "tests passed|FAILED|Failed|false positives|faults \(" "$OUT/gpu-tests.log" | head -20
ABFT_TEST_QUICK=1 compute-sanitizer --tool memcheck --error-exitcode 3 build-dev/tests/test_gemm_gpu > "$OUT/memcheck-gemm.log" 2>&1; echo "memcheck rc=$?"; tail -3 "$OUT/memcheck-gemm.log"
./build-dev/examples/split_gemm > "$OUT/split_gemm.log" 2>&1; echo "split_gemm rc=$?"; cat "$OUT/split_gemm.log"
./build-dev/bench/bench_gemm --out "$OUT" 2>&1 | tee "$OUT/bench-gemm.log" | tail -30

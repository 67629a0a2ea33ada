#!/usr/bin/env bash
# On the device machine, one call: build everything for sm_90, every GPU test, memcheck on the
# GEMM GPU test, the split-form example (TESTS=0: none of these), bench_gemm (BENCH=0: not) and
# bench_encode (ENCODE=0: not). Results (json/md) to
# $OUT/results, every log in $OUT/logs.tar.gz (the device returns at most 8 files).
set -uo pipefail
OUT=${OUT:-$PWD/out}
R=$OUT/results L=$OUT/logs
mkdir -p "$R" "$L"
export ABFT_COMMIT=${ABFT_COMMIT:-unknown}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$L/gpu.txt" 2>&1
cmake -S . -B build-dev -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
  -DABFT_BUILD_TOOLS=ON -DABFT_BUILD_EXAMPLES=ON -DABFT_BUILD_TESTS=ON > "$L/configure.log" 2>&1 \
  || { tail -30 "$L/configure.log"; }
cmake --build build-dev -j16 > "$L/build.log" 2>&1 || { grep -E "error" "$L/build.log" | head -30; }
if [ "${TESTS:-1}" = 1 ]; then # TESTS=0: no tests, memcheck or example
  (cd build-dev && timeout 300 ctest -L gpu --output-on-failure) > "$L/gpu-tests.log" 2>&1
  echo "gpu tests rc=$?"
  grep -E "tests passed|Test +#|check failed|false positives|faults \(" "$L/gpu-tests.log" | head -20
  ABFT_TEST_QUICK=1 compute-sanitizer --tool memcheck --error-exitcode 3 build-dev/tests/test_gemm_gpu \
    > "$L/memcheck-gemm.log" 2>&1
  echo "memcheck gemm rc=$?"; tail -2 "$L/memcheck-gemm.log"
  build-dev/examples/split_gemm > "$L/split_gemm.log" 2>&1; echo "split_gemm rc=$?"; cat "$L/split_gemm.log"
fi
if [ "${BENCH:-1}" = 1 ]; then # BENCH=0: no bench_gemm
  timeout 420 build-dev/bench/bench_gemm --out "$R" > "$L/bench-gemm.log" 2>&1; echo "bench_gemm rc=$?"
  grep -E "overhead" "$L/bench-gemm.log"
fi
if [ "${ENCODE:-1}" = 1 ]; then # ENCODE=0: no bench_encode (the call's 600 s)
  timeout 200 build-dev/bench/bench_encode "$R" > "$L/bench-encode.log" 2>&1; echo "bench_encode rc=$?"
  grep -E "streaming read" "$L/bench-encode.log"; grep -E " (rows|cols|bound|dual) " "$L/bench-encode.log" | tail -44
fi
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$L"
ls "$R"

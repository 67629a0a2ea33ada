#!/usr/bin/env bash
# On the device, one call: build everything (sm_90), every test (CPU and GPU),
# compute-sanitizer memcheck + racecheck on the kernel test (small mode) and memcheck on the
# LU GPU test, then bench_lu. STEP=bench2: bench_encode + bench_gemm instead (no tests;
# SWEEP=1: bench_encode's tile sweep first, to encode_sweep.txt).
# STEP=ab: the kernel and GEMM GPU tests, bench_encode's A/B of feature $AB (default xglobal)
# and bench_gemm --profile's wall times (encode / verify) for $PROF_SIZES; AB_ON: the "on"
# arm's feature mask (abft_cuda_tuning.h), when other features must stay off in both arms.
# STEP=gemm: the GEMM and kernel GPU tests, memcheck of the GEMM test (quick mode), then
# bench_gemm (ABFT_BENCH_AB=$AB when set, e.g. gate).
# Results (json/md) to $OUT/results, logs in $OUT/logs.tar.gz (the device returns <= 8 files).
set -uo pipefail
OUT=${OUT:-$PWD/out}
R=$OUT/results L=$OUT/logs
mkdir -p "$R" "$L"
export GIT_COMMIT=${GIT_COMMIT:-unknown} ABFT_COMMIT=${GIT_COMMIT:-unknown}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$L/gpu.txt" 2>&1
cmake -S . -B build-dev -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
  -DABFT_BUILD_TOOLS=ON -DABFT_BUILD_EXAMPLES=ON -DABFT_BUILD_TESTS=ON > "$L/configure.log" 2>&1 \
  || tail -30 "$L/configure.log"
if [ "${STEP:-tests}" = ab ] || [ "${STEP:-tests}" = gemm ]; then
  cmake --build build-dev -j16 --target test_cuda_kernels test_gemm_gpu bench_encode bench_gemm \
    > "$L/build.log" 2>&1 || { grep -E "error" "$L/build.log" | head -30; }
else
  cmake --build build-dev -j16 > "$L/build.log" 2>&1 || { grep -E "error" "$L/build.log" | head -30; }
fi
if [ "${STEP:-tests}" = ab ]; then
  for t in test_cuda_kernels test_gemm_gpu; do
    timeout 200 build-dev/tests/$t > "$L/$t.log" 2>&1; echo "$t rc=$?"; tail -4 "$L/$t.log"
  done
  env ${AB_ON:+ABFT_BENCH_AB_ON=$AB_ON} \
  ABFT_BENCH_AB=${AB:-xglobal} ABFT_BENCH_SIZES=${AB_SIZES:-2048,4096,8192,16384} \
    ABFT_BENCH_AB_LANES=${AB_LANES:-} timeout ${AB_TIMEOUT:-200} \
    build-dev/bench/bench_encode "$R" 2>&1 | grep -E "^ab|read" | tee "$R/ab-${AB:-xglobal}.txt"
  for n in ${PROF_SIZES:-4096 8192}; do for p in d s; do for k in ${PROF_KINDS:-row}; do
    timeout 60 build-dev/bench/bench_gemm --profile $p $n $k 0
  done; done; done 2>&1 | tee "$R/profile-wall.txt"
elif [ "${STEP:-tests}" = gemm ]; then
  timeout 300 build-dev/tests/test_gemm_gpu > "$L/test_gemm_gpu.log" 2>&1; echo "test_gemm_gpu rc=$?"
  grep -E "gate|clean GPU|GPU faults|check failed|seed" "$L/test_gemm_gpu.log" | head -20
  ABFT_TEST_SMALL=1 timeout 200 build-dev/tests/test_cuda_kernels > "$L/test_cuda_kernels.log" 2>&1
  echo "test_cuda_kernels rc=$?"; tail -3 "$L/test_cuda_kernels.log"
  ABFT_TEST_QUICK=1 timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
    build-dev/tests/test_gemm_gpu > "$L/memcheck-gemm.log" 2>&1; echo "memcheck gemm rc=$?"
  tail -3 "$L/memcheck-gemm.log"
  ABFT_BENCH_AB=${AB:-} timeout 400 build-dev/bench/bench_gemm --out "$R" > "$L/bench-gemm.log" 2>&1
  echo "bench_gemm rc=$?"; grep -E "overhead|^ab" "$L/bench-gemm.log" | head -60
  cp "$L/bench-gemm.log" "$R/bench-gemm.log"
elif [ "${STEP:-tests}" = tests ]; then
  (cd build-dev && timeout 300 ctest --output-on-failure) > "$L/tests.log" 2>&1
  echo "tests rc=$?"; grep -E "tests passed|Test +#|check failed|recovery" "$L/tests.log" | head -30
  export ABFT_TEST_SMALL=1
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 build-dev/tests/test_cuda_kernels \
    > "$L/memcheck-kernels.log" 2>&1; echo "memcheck kernels rc=$?"; tail -2 "$L/memcheck-kernels.log"
  timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 build-dev/tests/test_cuda_kernels \
    > "$L/racecheck-kernels.log" 2>&1; echo "racecheck kernels rc=$?"; tail -2 "$L/racecheck-kernels.log"
  unset ABFT_TEST_SMALL
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 build-dev/tests/test_getrf_gpu \
    > "$L/memcheck-getrf.log" 2>&1; echo "memcheck getrf rc=$?"; tail -2 "$L/memcheck-getrf.log"
  timeout 300 build-dev/bench/bench_lu --out "$R" > "$L/bench-lu.log" 2>&1; echo "bench_lu rc=$?"
  cat "$L/bench-lu.log" | tail -25
else
  if [ "${SWEEP:-0}" = 1 ]; then
    ABFT_BENCH_SWEEP=1 timeout 300 build-dev/bench/bench_encode "$R" > "$L/sweep.log" 2>&1
    echo "sweep rc=$?"
  fi
  timeout 260 build-dev/bench/bench_encode "$R" > "$L/bench-encode.log" 2>&1; echo "bench_encode rc=$?"
  grep -E "streaming read" "$L/bench-encode.log"; grep -E " (rows|cols|bound|dual) " "$L/bench-encode.log" | tail -48
  timeout 240 build-dev/bench/bench_gemm --out "$R" > "$L/bench-gemm.log" 2>&1; echo "bench_gemm rc=$?"
  grep -E "overhead" "$L/bench-gemm.log" | head -30
fi
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$L"
ls "$R"

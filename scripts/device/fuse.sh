#!/usr/bin/env bash
# On the device machine: build, every test, the in-kernel split reduction against the
# separate reduce launch (bench_encode ABFT_BENCH_AB=fuse), where the protected GEMM's passes
# spend their time (scripts/device/profile_gemm.sh without its own build), memcheck of the
# kernel test in its small mode. Logs to $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export ABFT_COMMIT=${ABFT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
cmake -S . -B build-dev -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
  -DABFT_BUILD_EXAMPLES=OFF -DABFT_BUILD_TESTS=ON > "$OUT/configure.log" 2>&1 || tail -30 "$OUT/configure.log"
cmake --build build-dev -j16 > "$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head -30; exit 1; }
echo "built $(date -u +%T)"
(cd build-dev && timeout 300 ctest --output-on-failure) > "$OUT/tests.log" 2>&1
echo "tests rc=$?"; grep -E "tests passed|Test +#|in-kernel = separate|FAIL" "$OUT/tests.log" | head -20
if [ "${AB:-1}" = 1 ]; then
  ABFT_BENCH_AB=fuse ABFT_BENCH_SIZES=${FUSE_SIZES:-2048,4096,8192,16384} build-dev/bench/bench_encode "$OUT" 2>&1 | grep -E "^ab|read" > "$OUT/fuse-ab.txt"
fi
SKIP_BUILD=1 bash scripts/device/profile_gemm.sh > /dev/null 2>&1
cat "$OUT/profile-gemm-wall.txt"; grep -E "==|sum" "$OUT/profile-gemm-ncu.txt"
ABFT_TEST_SMALL=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 build-dev/tests/test_cuda_kernels > "$OUT/memcheck.log" 2>&1; echo "memcheck rc=$?"
tail -2 "$OUT/memcheck.log"

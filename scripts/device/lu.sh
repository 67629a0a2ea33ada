#!/usr/bin/env bash
# Device run for the protected LU: build (sm_90) into build-dev, the LU tests (CPU and GPU),
# then bench_lu; logs and bench/results/lu.{json,md} to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
log="$OUT/lu_device.log"
: >"$log"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$log"
t0=$(date +%s)
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DABFT_BUILD_TOOLS=OFF -DABFT_BUILD_EXAMPLES=OFF >"$OUT/lu_configure.log" 2>&1 ||
  { tail -30 "$OUT/lu_configure.log"; exit 1; }
cmake --build build-dev -j"$(nproc)" --target test_getrf test_getrf_online test_getrf_gpu bench_lu \
  >"$OUT/lu_build.log" 2>&1 || { grep -E "error" "$OUT/lu_build.log" | head -30; tail -20 "$OUT/lu_build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s" | tee -a "$log"
(cd build-dev && ctest -R getrf --output-on-failure --timeout 300) 2>&1 | tail -40 | tee -a "$log"
GIT_COMMIT=${GIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)} \
  timeout 400 ./build-dev/bench/bench_lu --out "$OUT" 2>&1 | tee -a "$log"
cp "$OUT"/lu.json "$OUT"/lu.md bench/results/ 2>/dev/null || true

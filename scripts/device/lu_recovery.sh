#!/usr/bin/env bash
# On the device: build, the LU GPU test (recovery copy included), then the getrf campaigns
# (fp64 and fp32, n = 1024) with the recovery copy on. Results to $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
cmake -S . -B build-dev -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
  -DABFT_BUILD_TOOLS=ON -DABFT_BUILD_TESTS=ON > "$OUT/configure.log" 2>&1 || tail -30 "$OUT/configure.log"
cmake --build build-dev -j16 --target test_getrf_gpu test_getrf test_getrf_online abft_cli \
  > "$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head -30; exit 1; }
(cd build-dev && timeout 300 ctest -R getrf --output-on-failure) > "$OUT/lu-tests.log" 2>&1
echo "lu tests rc=$?"; grep -E "tests passed|Test +#|recovery|check failed" "$OUT/lu-tests.log" | head -20
OUT=$OUT/camp OPS=getrf LU_ARGS="--lu-recovery on" BUDGET_S=${BUDGET_S:-300} \
  bash scripts/device/campaign.sh 2>&1 | grep -vE "^\s*$" | tail -60

#!/usr/bin/env bash
# On the device: ncu details (speed of light, memory, warp stalls, scheduler, occupancy) of
# the passes that stay above the read kernel at 8192: the fp64 full checksums' second read of
# B (cols kernel, explicit X with |B|), the fp64 dual pass over A, and the fp32 row
# checksums' pass over A (rows kernel, explicit X with |A|, 2 rows per thread); one kernel
# each (the last split call's). SKIP_BUILD=1 reuses build-dev. Logs to $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cmake -S . -B build-dev -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
    -DABFT_BUILD_EXAMPLES=OFF -DABFT_BUILD_TESTS=ON > "$OUT/configure.log" 2>&1
  cmake --build build-dev -j16 --target bench_gemm > "$OUT/build.log" 2>&1 || grep error "$OUT/build.log" | head
fi
B=build-dev/bench/bench_gemm
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis"
run() { # name prec kind regex
  timeout 150 ncu --clock-control none $S --kernel-name-base demangled -k "regex:$4" -s 2 -c 1 $B --profile $2 8192 $3 2 \
    > "$OUT/ncu-$1.txt" 2>&1
  echo "== $1 rc=$?"; grep -E "Duration|Memory Throughput|DRAM Throughput|Issue Slots Busy|Registers Per|Achieved Occupancy|Theoretical Occ|Stall|Warp Cycles Per Issued|Eligible Warps|No Eligible|L1/TEX Hit|L2 Hit|Mem Pipes|Shared" "$OUT/ncu-$1.txt" | head -40
}
# (ncu's demangled names spell the template arguments as (int)2, (bool)1)
ONLY=${ONLY:-cols_d dual_d rows_s}
for w in $ONLY; do case $w in
  cols_d) run cols_d d full "tsmm_t_kernel" ;;
  dual_d) run dual_d d full "dual_kernel" ;;
  rows_s) run rows_s s row "tsmm_n_kernel<float, \\(int\\)2, \\(bool\\)1, \\(int\\)3" ;;
esac; done

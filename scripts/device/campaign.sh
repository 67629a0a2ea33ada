#!/usr/bin/env bash
# Device campaign: fp64 and fp32 protected GEMM at n = 1024 on the GPU, every bit position,
# every GEMM site, plus fault-free controls; results to $OUT (and bench/results/ when run
# from a checkout with OUT unset).
#
#   scripts/device/campaign.sh            # 10,000 faulty + 10,000 control trials each
#   TRIALS=2000 scripts/device/campaign.sh
#   OPS=getrf LU_ARGS="--lu-recovery on" scripts/device/campaign.sh   (LU only, with the copy)
#
# The two precisions run side by side on the one GPU. A short calibration run first
# measures the time per trial; when the full count would not fit in BUDGET_S seconds the
# trial count is lowered to what fits (the .md and the log say so).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-bench/results}
N=${N:-1024}
TRIALS=${TRIALS:-10000}
BUDGET_S=${BUDGET_S:-330}
SEED=${SEED:-20261122}
mkdir -p "$OUT"
log="$OUT/campaign_device.log"
: >"$log"

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$log" || true
t0=$(date +%s)
# build-dev is shared with the other device scripts: set what this one needs explicitly
# (the tool), and leave their options (tests, examples) as the cache has them.
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DABFT_ENABLE_CUDA=ON -DABFT_BUILD_TOOLS=ON >build-dev-configure.log 2>&1 ||
  { cat build-dev-configure.log; exit 1; }
cmake --build build-dev -j"$(nproc)" --target abft_cli >build-dev-build.log 2>&1 ||
  { tail -50 build-dev-build.log; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s" | tee -a "$log"
abft=./build-dev/tools/abft
$abft version | tee -a "$log"

# Calibration: 200 faulty + 200 control trials of each precision, one after the other.
per_trial=0
for p in d s; do
  c0=$(date +%s.%N)
  $abft campaign --backend cuda --precision "$p" --size "$N" --trials 200 --controls 200 \
    --seed 1 --quiet --out build-dev/calib --name "calib_$p" >/dev/null || true
  c1=$(date +%s.%N)
  per_trial=$(python3 -c "print(max($per_trial, ($c1 - $c0) / 400))")
done
# Both precisions run at once: budget each as if alone, with a 1.5x allowance for sharing.
fit=$(python3 -c "print(int($BUDGET_S / (2 * 1.5 * $per_trial)))")
n_trials=$TRIALS
if [ "$fit" -lt "$TRIALS" ]; then n_trials=$fit; fi
echo "calibration: $per_trial s per trial; running $n_trials faulty + $n_trials control trials" \
  "per precision (asked for $TRIALS)" | tee -a "$log"

OPS=${OPS:-gemm getrf}
LU_ARGS=${LU_ARGS:-}
rc=0
for op in $OPS; do
  pids=()
  for p in d s; do
    extra=""
    if [ "$op" != gemm ]; then extra=$LU_ARGS; fi
    # shellcheck disable=SC2086
    $abft campaign --op "$op" --backend cuda --precision "$p" --size "$N" --trials "$n_trials" \
      --controls "$n_trials" --refresh 100 --seed "$SEED" --quiet --out "$OUT" $extra \
      --name "campaign_${op}_$p" >"$OUT/campaign_${op}_$p.txt" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
  for p in d s; do
    cat "$OUT/campaign_${op}_$p.txt" | tee -a "$log"
    if [ "$n_trials" -lt "$TRIALS" ]; then
      printf '\nNote: %s faulty + %s control trials instead of %s each: the device time budget (%s s) allowed no more.\n' \
        "$n_trials" "$n_trials" "$TRIALS" "$BUDGET_S" >>"$OUT/campaign_${op}_$p.md"
    fi
  done
done
echo "total: $(( $(date +%s) - t0 )) s, exit $rc" | tee -a "$log"
exit $rc

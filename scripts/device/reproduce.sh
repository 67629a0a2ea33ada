#!/usr/bin/env bash
# Reproduces every committed GPU result in bench/results/ on a machine with an NVIDIA GPU:
# the build, every test (CPU and GPU), compute-sanitizer runs, bench_gemm, bench_encode,
# bench_lu and the fault-injection campaigns. Run from the repository root (or anywhere in
# the checkout):
#
#   scripts/device/reproduce.sh                       # every step
#   STEPS=build,tests,gemm scripts/device/reproduce.sh
#   STEPS=build,campaigns TRIALS=2000 scripts/device/reproduce.sh
#
# Steps (STEPS, a comma list, in this order; default all):
#   build      configure and build everything into $BUILD_DIR for $ARCH
#   tests      ctest: every test, the GPU ones included (logs/tests.log)
#   sanitize   compute-sanitizer: memcheck and racecheck of test_cuda_kernels (small mode),
#              memcheck of test_gemm_gpu (quick mode) and of test_getrf_gpu
#   gemm       bench_gemm   -> results/gemm.{md,json}
#   encode     bench_encode -> results/encode.md, encode_fp64.json, encode_fp32.json
#   lu         bench_lu     -> results/lu.{md,json}
#   bound      bench_bound --lib-only --backend cuda $BOUND_ARGS (default fp32 and fp64, n = k
#              = 1024, 2048, 4096, 2 products per case) -> results/bound_lib_cuda.{md,json}:
#              the tightness of the three bound modes on cuBLAS's results
#   dropin     bench_dropin --gpu: the drop-in staged to the GPU against NVBLAS ($NVBLAS, default
#              the toolkit's libnvblas.so), n = 4096-16384, beta 0 and 1 -> results/dropin_gpu.{md,json}
#   campaigns  abft campaign for each op in $OPS, fp64 and fp32 side by side on the GPU
#              -> results/campaign_<op>_<d|s>.{md,csv,svg,json.gz}
#   fullspace  abft campaign --space full for each op in $FULL_OPS (gemm getrf getrf-online),
#              fp64 and fp32, FULL_TRIALS (100000) faulty + a fifth as many controls, FULL_SEED
#              (20261126), precisions FULL_PRECISIONS ("d s")
#              -> results/campaign_full_<op>_<d|s>.{md,csv,svg,json.gz}; one after the
#              other (about 190 s gemm d, 110 s gemm s, 100 s getrf, 240 s getrf-online per
#              120,000 trials on the H100, so split them over calls of 600 s); six at once
#              on one GPU, beside a ctest, finished none in 17 min;
#              FULL_JOBS (default 1) worker threads per campaign, each with its own handle
#              and streams (the results are those of 1; on the H100 they gain nothing: 5,000
#              + 1,000 gemm trials took 10.8 s with 1 job, 12.0 s with 4, 12.9 s with 8).
#              The per-trial CSV and JSON (20-33 MB each) go to $OUT/trials, not results/
#
# Knobs (environment):
#   OUT=./out          results in $OUT/results (the files bench/results/ holds), logs in $OUT/logs
#   BUILD_DIR=build-dev, ARCH=90 (CMAKE_CUDA_ARCHITECTURES), JOBS=$(nproc)
#   COMMIT             the label written into the results (default: git rev-parse --short HEAD;
#                      pass it by hand where the checkout's .git is not the tree being built)
#   PACK=1             also pack the logs into $OUT/logs.tar.gz and remove $OUT/logs
#   campaigns: N=1024 (m = n = k), TRIALS=10000 (faulty, and as many controls), SEED=20261122,
#              OPS="gemm getrf", LU_ARGS="--lu-recovery on" (getrf only), BUDGET_S=330: a
#              calibration run measures the time per trial and lowers TRIALS to what fits in
#              BUDGET_S seconds (the summary says so)
#   benchmarks read their own variables, passed through: ABFT_BENCH_SIZES (bench_encode's
#              sizes), ABFT_BENCH_SWEEP=1 (bench_encode's tile sweep, written beside its
#              results); BENCH_GEMM_ARGS (e.g. --quick), BENCH_LU_ARGS
#
# Exit status: 0 when every step that ran succeeded, else 1 (every step still runs).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

STEPS=${STEPS:-build,tests,sanitize,gemm,encode,bound,lu,dropin,campaigns,fullspace}
OUT=${OUT:-$PWD/out}
BUILD_DIR=${BUILD_DIR:-build-dev}
ARCH=${ARCH:-90}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
export ABFT_COMMIT=$COMMIT GIT_COMMIT=$COMMIT # bench_gemm / bench_encode, bench_lu
R=$OUT/results L=$OUT/logs
mkdir -p "$R" "$L"
status=0

has() { case ",$STEPS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
# step NAME RC: one summary line per step; a failure makes the script's exit status 1.
step() {
  if [ "$2" = 0 ]; then echo "== $1: ok"; else echo "== $1: FAILED (exit $2)"; status=1; fi
}

device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu \
  --format=csv >"$L/gpu.txt" 2>&1
echo "device: ${device:-none found}; commit $COMMIT; $(date -u '+%Y-%m-%d %H:%M UTC')"

if has build; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCH" \
    -DABFT_ENABLE_CUDA=ON -DABFT_BUILD_TESTS=ON -DABFT_BUILD_EXAMPLES=ON \
    -DABFT_BUILD_TOOLS=ON >"$L/configure.log" 2>&1 &&
    cmake --build "$BUILD_DIR" -j"$JOBS" >"$L/build.log" 2>&1
  rc=$?
  [ $rc = 0 ] || grep -E "error|Error" "$L/configure.log" "$L/build.log" | head -30
  if [ $rc = 0 ] && [ ! -x "$BUILD_DIR/bench/bench_gemm" ]; then
    echo "   no CUDA backend was built (no CUDA compiler found?): see $L/configure.log"
    rc=1
  fi
  step build $rc
fi

B=$BUILD_DIR
if has tests; then
  (cd "$B" && timeout 900 ctest --output-on-failure) >"$L/tests.log" 2>&1
  rc=$?
  grep -E "tests passed|tests failed|Test +#" "$L/tests.log" | tail -30
  step tests $rc
fi

if has sanitize; then
  rc=0
  ABFT_TEST_SMALL=1 timeout 300 compute-sanitizer --tool memcheck --leak-check full \
    --error-exitcode 9 "$B/tests/test_cuda_kernels" >"$L/memcheck-kernels.log" 2>&1 || rc=1
  ABFT_TEST_SMALL=1 timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$B/tests/test_cuda_kernels" >"$L/racecheck-kernels.log" 2>&1 || rc=1
  ABFT_TEST_QUICK=1 timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$B/tests/test_gemm_gpu" >"$L/memcheck-gemm.log" 2>&1 || rc=1
  timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$B/tests/test_getrf_gpu" >"$L/memcheck-getrf.log" 2>&1 || rc=1
  grep -HE "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$L"/memcheck-*.log \
    "$L"/racecheck-*.log
  step sanitize $rc
fi

if has gemm; then
  # shellcheck disable=SC2086
  timeout 900 "$B/bench/bench_gemm" --out "$R" ${BENCH_GEMM_ARGS:-} >"$L/bench-gemm.log" 2>&1
  rc=$?
  grep -E "overhead|^ab" "$L/bench-gemm.log" | head -40
  step gemm $rc
fi

if has encode; then
  timeout 600 "$B/bench/bench_encode" "$R" >"$L/bench-encode.log" 2>&1
  rc=$?
  grep -E "streaming read|^ab| (rows|cols|bound|dual) " "$L/bench-encode.log" | tail -50
  step encode $rc
fi

if has bound; then
  # shellcheck disable=SC2086
  timeout 900 "$B/bench/bench_bound" --lib-only --backend cuda --out "$R" \
    ${BOUND_ARGS:---sizes 1024,2048,4096 --reps 2} >"$L/bench-bound.log" 2>&1
  rc=$?
  tail -80 "$L/bench-bound.log"
  step bound $rc
fi

if has lu; then
  # shellcheck disable=SC2086
  timeout 900 "$B/bench/bench_lu" --out "$R" ${BENCH_LU_ARGS:-} >"$L/bench-lu.log" 2>&1
  rc=$?
  tail -20 "$L/bench-lu.log"
  step lu $rc
fi

if has dropin; then
  NVBLAS=${NVBLAS:-$(ls /usr/local/cuda/lib64/libnvblas.so* 2>/dev/null | head -1)}
  bin=$(cd "$B" && pwd)/blas/bench_dropin r_abs=$(cd "$R" && pwd)
  mkdir -p "$L/dropin" # bench_dropin writes nvblas.conf and its report in the current directory
  (cd "$L/dropin" && timeout 600 "$bin" --gpu --nvblas "$NVBLAS" --sizes 4096,8192,16384 \
    --betas 0,1 --reps 5 --device "${device:-unknown}" --commit "$COMMIT" \
    --md "$r_abs/dropin_gpu.md" --json "$r_abs/dropin_gpu.json") >"$L/bench-dropin.log" 2>&1
  rc=$?
  cat "$L/bench-dropin.log"
  step dropin $rc
fi

if has campaigns; then
  N=${N:-1024} TRIALS=${TRIALS:-10000} BUDGET_S=${BUDGET_S:-330} SEED=${SEED:-20261122}
  OPS=${OPS:-gemm getrf} LU_ARGS=${LU_ARGS:---lu-recovery on}
  abft=$B/tools/abft
  log=$L/campaigns.log
  "$abft" version | tee "$log"
  # Calibration: 200 faulty + 200 control trials of each precision, one after the other.
  per_trial=0
  for p in d s; do
    c0=$(date +%s.%N)
    "$abft" campaign --backend cuda --precision "$p" --size "$N" --trials 200 --controls 200 \
      --seed 1 --quiet --out "$L/calib" --name "calib_$p" >/dev/null 2>&1 || true
    c1=$(date +%s.%N)
    per_trial=$(awk -v a="$per_trial" -v t0="$c0" -v t1="$c1" \
      'BEGIN { x = (t1 - t0) / 400; print (x > a ? x : a) }')
  done
  # Both precisions run at once: each budgeted as if alone, with 1.5x for the sharing.
  fit=$(awk -v b="$BUDGET_S" -v t="$per_trial" 'BEGIN { print int(b / (2 * 1.5 * t)) }')
  n_trials=$TRIALS
  [ "$fit" -lt "$TRIALS" ] && n_trials=$fit
  echo "calibration: $per_trial s per trial; $n_trials faulty + $n_trials control trials per" \
    "precision (asked for $TRIALS)" | tee -a "$log"
  rc=0
  for op in $OPS; do
    pids=()
    for p in d s; do
      extra=""
      [ "$op" = gemm ] || extra=$LU_ARGS
      # shellcheck disable=SC2086
      "$abft" campaign --op "$op" --backend cuda --precision "$p" --size "$N" \
        --trials "$n_trials" --controls "$n_trials" --refresh 100 --seed "$SEED" --quiet \
        --out "$R" --name "campaign_${op}_$p" $extra >"$L/campaign_${op}_$p.txt" 2>&1 &
      pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
    for p in d s; do
      md=$R/campaign_${op}_$p.md
      tee -a "$log" <"$L/campaign_${op}_$p.txt" | grep -E "^(PASS|FAIL)" | sed "s/^/$op $p: /"
      [ -f "$md" ] || continue
      # shellcheck disable=SC2016
      printf '\nDevice: %s; commit %s; `scripts/device/reproduce.sh` (step campaigns, N=%s, seed %s).\n' \
        "${device:-unknown}" "$COMMIT" "$N" "$SEED" >>"$md"
      if [ "$n_trials" -lt "$TRIALS" ]; then
        printf '\nNote: %s faulty + %s control trials instead of %s each: the time budget (%s s) allowed no more.\n' \
          "$n_trials" "$n_trials" "$TRIALS" "$BUDGET_S" >>"$md"
      fi
      # The tool records the date and configuration; the device and commit come from here.
      sed -i "0,/\"tool\": \"abft campaign\", /s//&\"device\": \"${device:-unknown}\", \"commit\": \"$COMMIT\", /" \
        "$R/campaign_${op}_$p.json" && gzip -f "$R/campaign_${op}_$p.json"
    done
  done
  step campaigns $rc
fi

if has fullspace; then
  # Full configuration space (docs/campaign.md): each trial draws its sizes (up to those
  # below), transposes, alpha, beta, leading dimensions, checksum kind, bound and math mode,
  # LU options, fault model and firing call. Controls: a fifth of the faulty trials.
  FULL_OPS=${FULL_OPS:-gemm getrf getrf-online} FULL_TRIALS=${FULL_TRIALS:-100000}
  FULL_SEED=${FULL_SEED:-20261126} FULL_PRECISIONS=${FULL_PRECISIONS:-d s}
  abft=$B/tools/abft
  rc=0
  for op in $FULL_OPS; do
    for p in $FULL_PRECISIONS; do
      sz="--n 96"
      [ "$op" = gemm ] && sz="--m 96 --n 80 --k 112"
      # shellcheck disable=SC2086
      "$abft" campaign --backend cuda --space full --op "$op" --precision "$p" $sz \
        --trials "$FULL_TRIALS" --controls $((FULL_TRIALS / 5)) --seed "$FULL_SEED" --quiet \
        --jobs "${FULL_JOBS:-1}" \
        --out "$R" --name "campaign_full_${op}_$p" >"$L/campaign_full_${op}_$p.txt" 2>&1 || rc=1
      grep -E "^(PASS|FAIL)" "$L/campaign_full_${op}_$p.txt" | sed "s/^/full $op $p: /"
      md=$R/campaign_full_${op}_$p.md
      # shellcheck disable=SC2016
      [ -f "$md" ] && printf '\nDevice: %s; commit %s; `scripts/device/reproduce.sh` (step fullspace, seed %s).\n' \
        "${device:-unknown}" "$COMMIT" "$FULL_SEED" >>"$md"
      # the per-trial CSV and JSON (20-33 MB each) go beside the results, not into them
      mkdir -p "$OUT/trials"
      [ -f "$R/campaign_full_${op}_$p.json" ] && gzip -f "$R/campaign_full_${op}_$p.json" &&
        mv "$R/campaign_full_${op}_$p.json.gz" "$OUT/trials/"
      [ -f "$R/campaign_full_${op}_$p.csv" ] && mv "$R/campaign_full_${op}_$p.csv" "$OUT/trials/"
    done
  done
  step fullspace $rc
fi

if [ "${PACK:-0}" = 1 ]; then
  tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$L"
fi
ls "$R"
exit $status

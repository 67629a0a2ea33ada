#!/bin/sh
# The drop-in's CPU overhead against the streaming read of its operands (docs/dropin.md,
# "Overhead"; issue 42): dgemm_ and sgemm_ (bench_dropin_cpu) and NumPy's matmul
# (bench_dropin_numpy.py), with one thread (OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1) and
# with every thread (both unset), one after the other into one Markdown file (and the C
# runs' JSON beside it).
#
# Usage: bench/dropin_overhead.sh BUILD_DIR OUT.md [SIZES] [REPS]
#   e.g. bench/dropin_overhead.sh build bench/results/dropin_cpu_overhead.md 1024,2048 15
# Exits 0 when every run met the limit, 3 when one missed it, 1 on a failure.
set -u
build=$1
out=$2
sizes=${3:-1024,2048}
reps=${4:-15}
here=$(cd "$(dirname "$0")" && pwd)
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
json=${out%.md}.json
: > "$out"
: > "$json"
{
  echo "# Drop-in CPU overhead against the streaming read (bench/dropin_overhead.sh)"
  echo
  echo "Command: bench/dropin_overhead.sh $build $out $sizes $reps. Load average at the start:"
  echo "$(cut -d' ' -f1-3 /proc/loadavg). Overhead: drop-in minus plain call, C = A·B,"
  echo "n x n, alpha = 1, beta = 0, every call protected (ABFT_BLAS_THRESHOLD=0, CPU"
  echo "backend). Limit (issue 42): at most 1.15 x the time to read A, B and C once at the"
  echo "machine's streaming rate, measured in the same run with the same threads."
  echo
} >> "$out"
status=0
for threads in 1 all; do
  if [ "$threads" = 1 ]; then
    set -- env OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
    label="one thread"
  else
    set -- env -u OPENBLAS_NUM_THREADS -u OMP_NUM_THREADS
    label="all threads"
  fi
  "$@" "$build/blas/bench_dropin_cpu" --sizes "$sizes" --precs ds --reps "$reps" \
    --md "$out" --json "$json" --commit "$commit" --label "dgemm_ and sgemm_, $label"
  rc=$?
  [ $rc -eq 1 ] && status=1
  [ $rc -eq 3 ] && [ $status -eq 0 ] && status=3
  "$@" python3 "$here/bench_dropin_numpy.py" --shim "$build/blas/libabft_blas.so" \
    --stream-bench "$build/blas/bench_dropin_cpu" --sizes "$sizes" --reps 7 --rounds 3 \
    --md "$out" --commit "$commit" --label "NumPy matmul, $label"
  rc=$?
  [ $rc -eq 1 ] && status=1
  [ $rc -eq 3 ] && [ $status -eq 0 ] && status=3
done
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)." >> "$out"
exit $status

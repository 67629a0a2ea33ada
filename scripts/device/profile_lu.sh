#!/usr/bin/env bash
# On the device machine: build, every GPU test, then where the online LU spends its time:
# wall time of one run of each variant (cuSOLVER, online with checks, online checks off) and
# the per-kernel sum from ncu (kernel durations only: the difference to the wall time is
# host round trips and launch gaps). Logs to $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
N=${N:-4096}
cmake -S . -B build-dev -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
  -DABFT_BUILD_TOOLS=ON -DABFT_BUILD_EXAMPLES=OFF -DABFT_BUILD_TESTS=ON > "$OUT/configure.log" 2>&1 \
  || tail -30 "$OUT/configure.log"
cmake --build build-dev -j16 > "$OUT/build.log" 2>&1 || grep -E "error" "$OUT/build.log" | head -30
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  (cd build-dev && timeout 300 ctest -L gpu --output-on-failure) > "$OUT/gpu-tests.log" 2>&1
  echo "gpu tests rc=$?"; grep -E "tests passed|Test +#" "$OUT/gpu-tests.log" | head -20
fi
B=build-dev/bench/bench_lu
for n in ${WALL_N:-4096 8192}; do for p in d s; do for v in cusolver online online0; do
  $B --profile $p $n $v
done; done; done 2>&1 | tee "$OUT/profile-wall.txt"
for v in ${NCU_VARIANTS:-cusolver online}; do
  timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum --csv --print-units base \
    $B --profile d $N $v --no-warmup > "$OUT/ncu-$v.csv" 2> "$OUT/ncu-$v.err"
  python3 - "$OUT/ncu-$v.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
hdr = rows[0]; ki = hdr.index("Kernel Name"); vi = hdr.index("Metric Value")
agg = collections.defaultdict(lambda: [0, 0.0])
for r in rows[1:]:
    try: ns = float(r[vi].replace(",", ""))
    except ValueError: continue
    k = r[ki][:70]; agg[k][0] += 1; agg[k][1] += ns
tot = sum(v[1] for v in agg.values())
print(f"== {sys.argv[1]}: {sum(v[0] for v in agg.values())} kernels, {tot/1e6:.3f} ms of kernel time")
for k, v in sorted(agg.items(), key=lambda x: -x[1][1])[:25]:
    print(f"{v[1]/1e6:9.3f} ms {v[0]:6d}x  {k}")
PY
done 2>&1 | tee "$OUT/profile-ncu.txt"

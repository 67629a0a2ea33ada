#!/usr/bin/env bash
# On the device machine: where the protected GEMM's passes spend their time. For each size:
# encode and verify timed apart (events, median of 20), then ncu's per-kernel durations of
# 3 split calls (the difference to the wall time is host round trips and launch gaps).
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cmake -S . -B build-dev -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
    -DABFT_BUILD_EXAMPLES=OFF -DABFT_BUILD_TESTS=ON > "$OUT/configure.log" 2>&1 || tail -30 "$OUT/configure.log"
  cmake --build build-dev -j16 > "$OUT/build.log" 2>&1 || grep -E "error" "$OUT/build.log" | head -30
fi
B=build-dev/bench/bench_gemm
which nsys ncu 2>&1 | head -3
for n in ${SIZES:-2048 4096 8192}; do for p in d s; do for k in row full; do
  $B --profile $p $n $k 0
done; done; done 2>&1 | tee "$OUT/profile-gemm-wall.txt"
for n in ${NCU_SIZES:-4096 8192}; do for p in d s; do for k in ${NCU_KINDS:-row}; do
  timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum --csv --print-units base \
    $B --profile $p $n $k 3 > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
  python3 - "$OUT/ncu.csv" "$p $n $k, 3 calls" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
hdr = rows[0]; ki = hdr.index("Kernel Name"); vi = hdr.index("Metric Value")
seq = []
for r in rows[1:]:
    try: ns = float(r[vi].replace(",", ""))
    except ValueError: continue
    seq.append((r[ki][:90], ns))
per = len(seq) // 4  # the first call (abft_dgemm to make C) then 3 split calls
print(f"== {sys.argv[2]}: {len(seq)} kernels")
for name, ns in seq[-per:] if per else seq:
    print(f"{ns/1e3:10.2f} us  {name}")
print(f"   sum of the last call's kernels: {sum(ns for _, ns in seq[-per:])/1e3:.2f} us")
PY
done; done; done 2>&1 | tee "$OUT/profile-gemm-ncu.txt"

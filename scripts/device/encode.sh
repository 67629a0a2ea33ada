#!/usr/bin/env bash
# Device run for the checksum-encoding kernels (issue 3): configure and build for sm_90 in
# build-dev, run the GPU tests, compute-sanitizer (memcheck, racecheck) on the kernel test in
# its small mode, the tile sweep and the benchmark; copy logs, JSON and markdown to $OUT.
#
#   scripts/device/encode.sh [steps]    steps: comma list of build,test,sanitize,sweep,bench
#                                       (default: all of them)
# On a machine without a system BLAS/LAPACK, carry .devlibs (libblas.so, liblapack.so and
# their runtime dependencies) with the call; it is used only when the system has none.
set -u -o pipefail
STEPS=${1:-build,test,bench,sweep,sanitize}
OUT=${OUT:-$PWD/out-encode}
mkdir -p "$OUT"
ROOT=$(pwd)
export ABFT_COMMIT=${ABFT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
has() { case ",$STEPS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
log() { echo "== $*"; }

{
  date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  nvcc --version | tail -2; cmake --version | head -1
} > "$OUT/build.log" 2>&1

EXTRA=()
if ! ldconfig -p | grep -q 'libblas\.so' && [ -d "$ROOT/.devlibs" ]; then
  export LD_LIBRARY_PATH="$ROOT/.devlibs:${LD_LIBRARY_PATH:-}"
  EXTRA=(-DCMAKE_LIBRARY_PATH="$ROOT/.devlibs")
  echo "using carried BLAS/LAPACK from .devlibs" >> "$OUT/build.log"
fi

if has build; then
  log "configure + build"
  cmake -S . -B build-dev -DCMAKE_CUDA_ARCHITECTURES=90 -DABFT_BUILD_EXAMPLES=OFF \
        -DABFT_BUILD_TOOLS=OFF "${EXTRA[@]}" >> "$OUT/build.log" 2>&1 || { log "configure FAILED"; tail -30 "$OUT/build.log"; }
  cmake --build build-dev -j16 --target test_cuda_kernels bench_encode >> "$OUT/build.log" 2>&1 \
    || { log "build of encode targets FAILED"; grep -E "error" "$OUT/build.log" | head -20; }
  # the other GPU tests of the tree (other engineers'), best effort; ENCODE_QUICK=1: only
  # the GEMM test, which runs these kernels as its passes
  if [ -n "${ENCODE_QUICK:-}" ]; then
    cmake --build build-dev -j16 --target test_gemm_gpu >> "$OUT/build.log" 2>&1 || log "test_gemm_gpu failed to build"
  else
    cmake --build build-dev -j16 -- -k >> "$OUT/build.log" 2>&1 || log "some other target failed to build (see build.log)"
  fi
  # what the compiler made of the kernels: registers, spills, 16-byte loads
  cuobjdump --dump-resource-usage build-dev/bench/bench_encode 2>/dev/null \
    | grep -A1 -E "tsmm_n_kernelI[df]Li2ELb0|tsmm_t_kernelI[df]Li2ELb0|dual_kernelI[df]Li2ELb0|tsmm_n_kernelI[df]Li2ELb1" \
    >> "$OUT/build.log" 2>&1
  echo "LDG.E.128 count in bench_encode SASS: $(cuobjdump --dump-sass build-dev/bench/bench_encode 2>/dev/null | grep -c 'LDG.E.128')" >> "$OUT/build.log"
  # instruction mix of the c = 2 rows kernels with |A| (general and implicit-weight paths)
  for f in _ZN9abft_cuda13tsmm_n_kernelIfLi2ELb1ELb0EEEvNS_11tsmm_paramsE \
           _ZN9abft_cuda13tsmm_n_kernelIfLi2ELb1ELb1EEEvNS_11tsmm_paramsE \
           _ZN9abft_cuda13tsmm_n_kernelIdLi2ELb0ELb1EEEvNS_11tsmm_paramsE; do
    echo "SASS mix $f:" $(cuobjdump --dump-sass --function "$f" build-dev/bench/bench_encode 2>/dev/null \
      | grep -oE "(LDG[.A-Z0-9]*|LDS[.A-Z0-9]*|F2F[.A-Z0-9]*|I2F[.A-Z0-9]*|DFMA|DADD|LDL|STL)" | sort | uniq -c | tr '\n' ' ')
  done >> "$OUT/build.log" 2>&1
fi

if has test; then
  log "ctest -L gpu"
  if [ -n "${ENCODE_QUICK:-}" ]; then
    (cd build-dev && timeout 240 ctest -R "test_cuda_kernels|test_gemm_gpu" --output-on-failure) > "$OUT/test.log" 2>&1
  else
    (cd build-dev && timeout 240 ctest -L gpu --output-on-failure) > "$OUT/test.log" 2>&1
  fi
  log "ctest rc=$?"; grep -E "tests passed|tests failed|Passed|Failed|\*\*\*" "$OUT/test.log" | tail -15
fi

if has bench; then
  log "bench_encode"
  timeout 240 build-dev/bench/bench_encode "$OUT" >> "$OUT/bench.log" 2>&1
  log "bench rc=$?"
  grep -E "streaming read|device:" "$OUT/bench.log"
  grep -E " (rows|cols|bound|dual) " "$OUT/bench.log" | tail -60
fi
if has sweep; then
  log "tile sweep"
  ABFT_BENCH_SWEEP=1 timeout 150 build-dev/bench/bench_encode "$OUT" >> "$OUT/bench.log" 2>&1
  log "sweep rc=$?"
fi

if has sanitize; then
  log "compute-sanitizer memcheck + racecheck (ABFT_TEST_SMALL=1)"
  export ABFT_TEST_SMALL=1
  timeout 150 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    build-dev/tests/test_cuda_kernels > "$OUT/sanitizer.log" 2>&1
  log "memcheck rc=$?"
  timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 \
    build-dev/tests/test_cuda_kernels >> "$OUT/sanitizer.log" 2>&1
  log "racecheck rc=$?"
  unset ABFT_TEST_SMALL
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|all checks passed|FAILED" "$OUT/sanitizer.log"
fi



#!/usr/bin/env bash
# abft quick start: `scripts/quickstart.sh run` builds and runs a short fault-injection
# campaign over protected GEMM and LU (on the GPU when one is present, else on the CPU; without
# a GPU it builds only the command line tool, CPU backend only, in build-cpu/, which takes
# seconds rather than the minutes the CUDA kernels take);
# `scripts/quickstart.sh test` builds and runs every test (GPU tests skip without a GPU),
# then the CPU tests again under AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-}
case "$what" in run|test) ;; *) echo "usage: $0 run|test" >&2; exit 2 ;; esac

# ---- what a fresh Debian machine lacks -------------------------------------------------
pkgs=()
command -v cmake >/dev/null 2>&1 || pkgs+=(cmake)
command -v cc >/dev/null 2>&1 || pkgs+=(gcc)
command -v make >/dev/null 2>&1 || pkgs+=(make)
# The install test builds a consumer through pkg-config.
[ "$what" = test ] && { command -v pkg-config >/dev/null 2>&1 || pkgs+=(pkg-config); }
# The drop-in library's tests run the reference BLAS/LAPACK test programs and NumPy.
[ "$what" = test ] && command -v dpkg >/dev/null 2>&1 && for p in libblas-test liblapack-test \
  python3-numpy; do dpkg -s "$p" >/dev/null 2>&1 || pkgs+=("$p"); done
# Their semantics tests link libabft_blas.so and the host BLAS alone, so that BLAS must carry
# LAPACK's dgetrf_/sgetrf_ too: OpenBLAS does (Debian makes it libblas.so.3 once installed),
# the reference libblas3 does not (a machine with libblas-dev and liblapack-dev but no OpenBLAS
# failed 11 drop-in tests with "dgetrf_ not found after libabft_blas.so").
[ "$what" = test ] && command -v dpkg >/dev/null 2>&1 && \
  { dpkg -s libopenblas-dev >/dev/null 2>&1 || pkgs+=(libopenblas-dev); }
if command -v dpkg >/dev/null 2>&1; then
  have_blas=0
  for p in libopenblas-dev libblas-dev; do dpkg -s "$p" >/dev/null 2>&1 && have_blas=1; done
  [ "$have_blas" = 1 ] && dpkg -s liblapack-dev >/dev/null 2>&1 || \
    { dpkg -s libopenblas-dev >/dev/null 2>&1 || pkgs+=(libopenblas-dev); \
      dpkg -s liblapack-dev >/dev/null 2>&1 || pkgs+=(liblapack-dev); }
fi
if [ ${#pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "quickstart: installing ${pkgs[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq "${pkgs[@]}" >/dev/null
  else
    echo "quickstart: missing packages; install them with:" >&2
    echo "  sudo apt-get install ${pkgs[*]}" >&2
    exit 1
  fi
fi

jobs=$(nproc 2>/dev/null || echo 2)
# `run` on a machine without a GPU: the CPU backend only and only the tool, in build-cpu/ (the
# `test` build in build/ keeps the CUDA backend). ABFT_CMAKE_ARGS still applies to both.
bdir=build
cfg=()
if [ "$what" = run ] && ! { nvidia-smi -L >/dev/null 2>&1 || [ -e /dev/nvidia0 ]; }; then
  bdir=build-cpu
  cfg=(-DABFT_ENABLE_CUDA=OFF -DABFT_BUILD_TESTS=OFF -DABFT_BUILD_EXAMPLES=OFF)
  echo "quickstart: no GPU found (nvidia-smi -L failed, no /dev/nvidia0): CUDA backend skipped;" \
       "build it with 'scripts/quickstart.sh test' or 'cmake -S . -B build && cmake --build build'"
fi
cmake -S . -B "$bdir" -DCMAKE_BUILD_TYPE=Release ${cfg[@]+"${cfg[@]}"} ${ABFT_CMAKE_ARGS:-} \
  >"$bdir-configure.log" 2>&1 || { cat "$bdir-configure.log"; exit 1; }
rm -f "$bdir-configure.log"

if [ "$what" = run ]; then
  cmake --build "$bdir" -j"$jobs" --target abft_cli >/dev/null
  # OpenBLAS's own threads fight the library's OpenMP threads on small matrices.
  export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
  # --space full: every trial draws its configuration (sizes, transposes, alpha, beta,
  # leading dimensions, checksum kind, bound and math mode, LU options) and its fault model
  # and firing call from the whole space the API accepts (docs/campaign.md)
  ./"$bdir"/tools/abft campaign --space full --op gemm --out "$bdir"/campaign
  ./"$bdir"/tools/abft campaign --space full --op getrf --out "$bdir"/campaign
  exec ./"$bdir"/tools/abft campaign --space full --op getrf-online --out "$bdir"/campaign
fi

cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")
# Sanitizers on the CPU tests (no CUDA in this build: the sanitizers check host code).
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DABFT_ENABLE_CUDA=OFF -DABFT_SANITIZE=ON \
  -DABFT_BUILD_EXAMPLES=OFF >build-asan-configure.log 2>&1 ||
  { cat build-asan-configure.log; exit 1; }
rm -f build-asan-configure.log
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j"$jobs" -L cpu -E test_install_consumer)

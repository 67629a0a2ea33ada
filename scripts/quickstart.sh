#!/usr/bin/env bash
# abft quick start: `scripts/quickstart.sh run` builds and runs a short fault-injection
# campaign over protected GEMM and LU (on the GPU when one is present, else on the CPU; without
# a GPU it builds only the command line tool, CPU backend only, in build-cpu/, which takes
# seconds rather than the minutes the CUDA kernels take);
# `scripts/quickstart.sh test` builds and runs every test (GPU tests skip without a GPU;
# ScaLAPACK's testers over OpenMPI under the drop-in, docs/scalapack.md, as a suite of their own),
# then the CPU tests again under AddressSanitizer and UndefinedBehaviorSanitizer, then the
# Python package's tests (docs/python.md), and ends with one summary naming every suite, their
# counts and their skips (exit status 0 when nothing failed). ABFT_CTEST_ARGS adds arguments to every ctest run (e.g. -R 'enum').
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-}
case "$what" in run|test) ;; *) echo "usage: $0 run|test" >&2; exit 2 ;; esac
t_start=$(date +%s)
if [ "$what" = test ]; then
  # Measured on a fresh copy, 2 cores, nvcc present, no GPU, nothing to install: 9 min in
  # all (Release build with the CUDA kernels 2.5 min, its 43 tests 1.2 min, the sanitizer
  # build under a minute, its 20 tests 5.2 min).
  echo "quickstart test: two builds and three test suites, then the Python package's; about 10 minutes on 2 cores" \
       "(measured 9 min), less with more cores, more on a loaded machine or when packages" \
       "must be installed first; one summary at the end"
fi

# ---- what a fresh Debian machine lacks -------------------------------------------------
# Only packages that are missing are installed, and nothing else of the system is changed
# (no update-alternatives, no package removed or upgraded). A BLAS is installed only where
# none is: OpenBLAS where the machine has no libblas.so.3 at all (it then sets up that
# alternative, nothing was there to change), else the reference libblas-dev, whose low
# alternatives priority (10) leaves the libblas.so.3 the machine uses as it is. The drop-in
# tests run with either: libabft_blas.so keeps the LAPACK it was linked with (liblapack.so.3)
# as its own dependency, so a host BLAS without LAPACK's getrf still finds it.
pkgs=()
command -v cmake >/dev/null 2>&1 || pkgs+=(cmake)
command -v cc >/dev/null 2>&1 || pkgs+=(gcc)
command -v make >/dev/null 2>&1 || pkgs+=(make)
# The install test builds a consumer through pkg-config.
[ "$what" = test ] && { command -v pkg-config >/dev/null 2>&1 || pkgs+=(pkg-config); }
if command -v dpkg >/dev/null 2>&1; then
  installed() { dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed'; }
  # The drop-in library's tests run the reference BLAS/LAPACK test programs and NumPy (each
  # test is skipped when its program is missing).
  [ "$what" = test ] && for p in libblas-test liblapack-test python3-numpy; do
    installed "$p" || pkgs+=("$p"); done
  # The ScaLAPACK suite runs ScaLAPACK's own testers on OpenMPI ranks with the drop-in preloaded
  # (docs/scalapack.md; each test is skipped when mpirun or its tester is missing).
  [ "$what" = test ] && for p in openmpi-bin scalapack-mpi-test; do
    installed "$p" || pkgs+=("$p"); done
  # The Python tests run in a virtual environment (python3 -m venv, Debian's python3-venv).
  [ "$what" = test ] && [ "$(command -v python3)" = /usr/bin/python3 ] &&
    ! python3 -c 'import ensurepip' >/dev/null 2>&1 && pkgs+=(python3-venv)
  if ! installed libopenblas-dev && ! installed libblas-dev; then
    arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || true)
    if update-alternatives --query "libblas.so.3${arch:+-$arch}" >/dev/null 2>&1; then
      pkgs+=(libblas-dev)
    else
      pkgs+=(libopenblas-dev)
    fi
  fi
  installed liblapack-dev || pkgs+=(liblapack-dev)
fi
if [ ${#pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "quickstart: installing what is missing: ${pkgs[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-upgrade "${pkgs[@]}" >/dev/null
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

# ---- test: two builds, two CTest suites, one summary -------------------------------------
# Each suite's ctest output goes to the screen and to <build dir>/quickstart-ctest.log; a
# failing suite does not stop the next one; the summary at the end names both.
gpu_found=0
{ nvidia-smi -L >/dev/null 2>&1 || [ -e /dev/nvidia0 ]; } && gpu_found=1
summary=()
failed_any=0

# suite NAME DIR CTEST-ARGS...: runs ctest in DIR and appends NAME's line to the summary.
suite() {
  local name=$1 dir=$2; shift 2
  local log=$dir/quickstart-ctest.log rc=0
  echo "quickstart: suite '$name' ($dir: ctest $*)"
  (cd "$dir" && ctest "$@" ${ABFT_CTEST_ARGS:-}) 2>&1 | tee "$log" || rc=$?
  local total failed
  total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -n1)
  failed=$(sed -n 's/.* \([0-9]*\) tests failed out of .*/\1/p' "$log" | tail -n1)
  if [ -z "$total" ]; then
    if grep -q 'No tests were found' "$log"; then total=0 failed=0
    else summary+=("$name: ctest did not finish (exit $rc); see $log"); failed_any=1; return; fi
  fi
  # Skipped tests: ctest lists them under "The following tests did not run:".
  local skipped gpu_tests gpu_skipped=() other_skipped=() t
  skipped=$(sed -n 's/^[[:space:]]*[0-9]* - \([^ ]*\) (Skipped)$/\1/p' "$log")
  gpu_tests=" $( (cd "$dir" && ctest -N -L gpu) | sed -n 's/^ *Test *#[0-9]*: \(.*\)$/\1/p' | tr '\n' ' ')"
  for t in $skipped; do
    case "$gpu_tests" in *" $t "*) gpu_skipped+=("$t") ;; *) other_skipped+=("$t") ;; esac
  done
  local nskip=$(( ${#gpu_skipped[@]} + ${#other_skipped[@]} ))
  local line="$name: $total tests, $((total - failed - nskip)) passed, $failed failed, $nskip skipped"
  if [ ${#gpu_skipped[@]} -gt 0 ]; then
    if [ "$gpu_found" = 0 ]; then
      line+=$'\n    '"skipped for want of a GPU (no nvidia-smi -L, no /dev/nvidia0): ${gpu_skipped[*]}"
    else
      line+=$'\n    '"GPU tests skipped although a GPU was found (see $log): ${gpu_skipped[*]}"
    fi
  fi
  [ ${#other_skipped[@]} -gt 0 ] && line+=$'\n    '"skipped by the test itself (a program it runs is not installed, or exit 77; see $log): ${other_skipped[*]}"
  if [ "$failed" != 0 ] || [ "$rc" != 0 ]; then
    failed_any=1
    line+=$'\n    '"failed: $(sed -n '/The following tests FAILED:/,$s/^[[:space:]]*[0-9]* - \([^ ]*\) .*/\1/p' "$log" | tr '\n' ' ')"
  fi
  summary+=("$line")
}

cmake --build build -j"$jobs"
if grep -q '^CMAKE_CUDA_COMPILER:[A-Z]*=.*nvcc' build/CMakeCache.txt 2>/dev/null; then
  cuda_note="GPU tests built (CUDA backend)"
else
  cuda_note="GPU tests not built: no CUDA compiler (nvcc) found, CPU backend only"
fi
suite "main (build/, every test but the ScaLAPACK suite)" build --output-on-failure -j"$jobs" -LE scalapack
# ScaLAPACK's testers on 2 and 4 MPI ranks, the drop-in preloaded in every rank (label scalapack).
suite "scalapack (build/, ScaLAPACK's testers over OpenMPI under the drop-in, docs/scalapack.md)" \
  build --output-on-failure -j"$jobs" -L scalapack
# Sanitizers on the CPU tests (no CUDA in this build: the sanitizers check host code).
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DABFT_ENABLE_CUDA=OFF -DABFT_SANITIZE=ON \
  -DABFT_BUILD_EXAMPLES=OFF >build-asan-configure.log 2>&1 ||
  { cat build-asan-configure.log; exit 1; }
rm -f build-asan-configure.log
cmake --build build-asan -j"$jobs"
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
suite "sanitizers (build-asan/, ASan+UBSan, CPU tests but the install test and the preloaded drop-in programs)" \
  build-asan --output-on-failure -j"$jobs" -L cpu -E test_install_consumer

# The Python package: `pip install .` with the CPU backend (the C tests above cover the CUDA
# build; this adds under a minute) into a virtual environment of its own, build-venv/ (the
# system's Python packages are not touched), then its pytest suite (docs/python.md, "Tests").
py_log=build-python/quickstart-pytest.log py_rc=0
mkdir -p build-python
{ [ -x build-venv/bin/python ] || python3 -m venv build-venv; } &&
  build-venv/bin/python -m pip install -q --disable-pip-version-check scikit-build-core numpy pytest &&
  CMAKE_BUILD_PARALLEL_LEVEL=$jobs build-venv/bin/python -m pip install -q --disable-pip-version-check \
    --no-build-isolation -C cmake.define.ABFT_ENABLE_CUDA=OFF -C build-dir=build-python/quickstart . ||
  py_rc=$?
if [ "$py_rc" = 0 ]; then
  echo "quickstart: suite 'python' (build-venv/: pytest python/tests)"
  build-venv/bin/python -m pytest -rs python/tests 2>&1 | tee "$py_log" || py_rc=$?
  line="python (build-venv/, pip install . with the CPU backend, pytest python/tests):$(tail -n1 "$py_log" | tr -d '=' | sed 's/  */ /g')"
  # pytest -rs: "SKIPPED [count] file:line: reason", summed per file and reason
  py_skips=$(awk '/^SKIPPED \[[0-9]+\] /{n=substr($2,2)+0; f=$3; sub(/:.*/,"",f); r=$0;
    sub(/^SKIPPED \[[0-9]+\] [^:]*:[0-9]*: /,"",r); k=f" ("r")"; c[k]+=n}
    END{for(k in c) printf "    %d skipped in %s\n", c[k], k}' "$py_log")
  [ -n "$py_skips" ] && line+=$'\n'"$py_skips"
else
  line="python: the package did not build or install (exit $py_rc; python3 -m venv needs python3-venv)"
fi
[ "$py_rc" = 0 ] || { failed_any=1; line+=$'\n    failed'; }
summary+=("$line")

elapsed=$(( $(date +%s) - t_start ))
echo
echo "==== quickstart test summary ($((elapsed / 60)) min $((elapsed % 60)) s, $jobs jobs) ===="
echo "  $cuda_note"
for l in "${summary[@]}"; do echo "  $l"; done
if [ "$failed_any" = 0 ]; then echo "  result: PASS"; else echo "  result: FAIL"; fi
exit "$failed_any"

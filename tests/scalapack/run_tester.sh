#!/usr/bin/env bash
# Runs one ScaLAPACK tester of Debian's scalapack-mpi-test (the OpenMPI build) on N ranks,
# plain or with libabft_blas.so preloaded in every rank, and checks the result
# (docs/scalapack.md):
#
#   run_tester.sh [--lib PATH] [--np N] [--env VAR=VALUE]... [--timeout S] [--work DIR]
#                 [--input FILE] [--tester-dir DIR] [--no-check] TESTER
#
# TESTER is dpb3tst, spb3tst (PBLAS level 3), xdlu, xslu (LU), xdllt, xsllt (Cholesky), or a
# PBLAS timer (dpb3tim, spb3tim). Its input file is the package's own (PBLAS), or for LU and
# LLT this directory's LU-<N>ranks.dat / LLT-<N>ranks.dat (the package's file with the
# changes docs/scalapack.md lists); --input replaces it. --lib preloads the library in each
# rank (mpirun -x LD_PRELOAD=...), each rank writing its own report, WORK/report.<rank> (an
# empty path: skipped, the build has no library);
# --env sets a variable in every rank (ABFT_BLAS_THRESHOLD=0, OMP_NUM_THREADS=1, ...); the
# run takes place in WORK (emptied first; default a new directory under $TMPDIR).
#
# The check (unless --no-check): mpirun exits 0 within the timeout; the tester printed its end
# line, passed tests and no failed one (LU, LLT: "N tests completed and passed residual
# checks", 0 failed, 0 skipped; PBLAS: every routine's summary line with 0 failed, no FAILED
# line); preloaded, every rank's report has a summary with protected > 0, detected = 0 and
# uncorrectable = 0, and the ranks together made protected calls of each local routine the
# tester is expected to reach (LLT: gemm, syrk, trsm; PBLAS, LU: gemm, trsm; PBLAS's PxSYRK
# computes its local blocks with xGEMM).
# The last line is "RESULT key=value ..." (wall time, counts; progress: the LU and LLT results
# or the PBLAS test problems printed, also by a run that timed out) for scripts; exit status 0 when
# the check passed, 1 when it failed, 77 (skipped) when mpirun or the tester is not installed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

lib= lib_given=0 np=4 timeout=300 work= input= check=1 tester= envs=()
arch=$(gcc -print-multiarch 2>/dev/null || dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
tester_dir=/usr/lib/$arch/scalapack/openmpi-tests
while [ $# -gt 0 ]; do
  case "$1" in
    --lib) lib=$2; lib_given=1; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --input) input=$2; shift 2 ;;
    --tester-dir) tester_dir=$2; shift 2 ;;
    --no-check) check=0; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run_tester: unknown option $1" >&2; exit 2 ;;
    *) tester=$1; shift ;;
  esac
done
[ -n "$tester" ] || { echo "run_tester: no tester given (--help)" >&2; exit 2; }

skip() { echo "SKIPPED: $*"; echo "RESULT tester=$tester np=$np skipped=1"; exit 77; }

# What the tester reads from its working directory, and the local routines it must reach.
case "$tester" in
  dpb3tst|spb3tst) prog=$tester_dir/PBLAS/$tester; kind=pblas
    name=P$(echo "${tester:0:1}" | tr ds DS)BLAS3TST.dat; default_input=$tester_dir/PBLAS/$name
    ops="gemm trsm" ;;
  dpb3tim|spb3tim) prog=$tester_dir/PBLAS/TIMING/$tester; kind=timer
    name=P$(echo "${tester:0:1}" | tr ds DS)BLAS3TIM.dat; default_input=$tester_dir/PBLAS/TIMING/$name
    ops="gemm" ;;
  xdlu|xslu) prog=$tester_dir/$tester; kind=lu name=LU.dat
    default_input=$here/LU-${np}ranks.dat ops="gemm trsm" ;;
  xdllt|xsllt) prog=$tester_dir/$tester; kind=lu name=LLT.dat
    default_input=$here/LLT-${np}ranks.dat ops="gemm syrk trsm" ;;
  *) echo "run_tester: unknown tester $tester" >&2; exit 2 ;;
esac
prec=${tester:0:1}; [ "$kind" = pblas ] || [ "$kind" = timer ] || prec=${tester:1:1}
[ -n "$input" ] || input=$default_input

# The testers are built for OpenMPI: its launcher first (mpirun may be MPICH's alternative).
mpirun=${ABFT_MPIRUN:-}
if [ -z "$mpirun" ]; then
  for m in mpirun.openmpi mpiexec.openmpi mpirun; do
    command -v "$m" >/dev/null 2>&1 && { mpirun=$(command -v "$m"); break; }
  done
fi
[ -n "$mpirun" ] || skip "no mpirun (Debian: apt-get install openmpi-bin)"
[ -x "$prog" ] || skip "$prog is not installed (Debian: apt-get install scalapack-mpi-test)"
[ -r "$input" ] || skip "no input file $input"
[ "$lib_given" = 0 ] || [ -n "$lib" ] || skip "no libabft_blas.so in this build (ABFT_BUILD_BLAS=OFF)"
if [ -n "$lib" ] && [ ! -r "$lib" ]; then echo "run_tester: $lib not found" >&2; exit 1; fi

[ -n "$work" ] || work=$(mktemp -d "${TMPDIR:-/tmp}/abft-scalapack.XXXXXX")
rm -rf "$work" && mkdir -p "$work" || exit 1
cp "$input" "$work/$name"
out=$work/output.txt

# Each rank its own report: the rank's number is OpenMPI's OMPI_COMM_WORLD_RANK (PMI_RANK
# under MPICH). The shell that sets it makes no BLAS call, so it writes nothing itself.
args=(--oversubscribe -np "$np")
[ "$(id -u)" = 0 ] && args+=(--allow-run-as-root)
for e in "${envs[@]+"${envs[@]}"}"; do args+=(-x "$e"); done
mode=plain
if [ -n "$lib" ]; then
  mode=preloaded
  args+=(-x "LD_PRELOAD=$lib")
fi
unset LD_PRELOAD ABFT_BLAS_REPORT
start=$(date +%s.%N)
(cd "$work" && timeout -k 10 "$timeout" "$mpirun" "${args[@]}" /bin/sh -c \
  'ABFT_BLAS_REPORT="$0/report.${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}"; export ABFT_BLAS_REPORT; exec "$@"' \
  "$work" "$prog") >"$out" 2>&1
rc=$?
wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f", e - s }')

# ---- the tester's own verdict ------------------------------------------------------------
tests=0 passed=0 failed=0 skipped=0 ended=0 failed_lines=0
case "$kind" in
  lu)
    tests=$(sed -n 's/^Finished *\([0-9][0-9]*\) tests.*/\1/p' "$out" | tail -n1)
    passed=$(sed -n 's/^ *\([0-9][0-9]*\) tests completed and passed.*/\1/p' "$out" | tail -n1)
    failed=$(sed -n 's/^ *\([0-9][0-9]*\) tests completed and failed.*/\1/p' "$out" | tail -n1)
    skipped=$(sed -n 's/^ *\([0-9][0-9]*\) tests skipped.*/\1/p' "$out" | tail -n1)
    grep -q '^END OF TESTS' "$out" && ended=1
    failed_lines=$(grep -c -E '^(WALL|CPU) .*FAILED *$' "$out") ;;
  pblas)
    # "  |  PDGEMM   16   16   0   0": total, passed, failed, skipped per routine
    read -r tests passed failed skipped < <(awk '/^ *\| *P[DS][A-Z0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ *$/ {
        t += $3; p += $4; f += $5; s += $6 } END { print t + 0, p + 0, f + 0, s + 0 }' "$out")
    grep -q 'End of Tests' "$out" && ended=1
    failed_lines=$(grep -c '[*][*][*][*][*].*FAILED' "$out") ;;
  timer)
    grep -q 'End of Tests' "$out" && ended=1 ;;
esac
tests=${tests:-0} passed=${passed:-0} failed=${failed:-0} skipped=${skipped:-0}
# progress, also of a run that timed out: LU, LLT tests printed; PBLAS test problems completed
case "$kind" in
  lu) progress=$(grep -c -E '^(WALL|CPU) .*(PASSED|FAILED) *$' "$out") ;;
  *) progress=$(grep -c 'Test number .* completed' "$out") ;;
esac

# ---- each rank's summary ------------------------------------------------------------------
problems=()
ranks_protected=() protected_sum=0 detected_sum=0 uncorrectable_sum=0 opsline=
declare -A opsum=()
if [ "$mode" = preloaded ]; then
  for ((r = 0; r < np; ++r)); do
    rep=$work/report.$r
    line=$( [ -r "$rep" ] && grep '^summary ' "$rep" | tail -n1 )
    if [ -z "$line" ]; then
      ranks_protected+=(none); problems+=("rank $r wrote no summary ($rep)"); continue
    fi
    val() { echo "$line" | sed -n "s/.* $1=\([0-9][0-9]*\).*/\1/p"; }
    p=$(val protected) d=$(val detected) u=$(val uncorrectable)
    ranks_protected+=("${p:-0}")
    protected_sum=$((protected_sum + ${p:-0})); detected_sum=$((detected_sum + ${d:-0}))
    uncorrectable_sum=$((uncorrectable_sum + ${u:-0}))
    [ "${p:-0}" -gt 0 ] || problems+=("rank $r: protected=${p:-?} (no local call protected)")
    [ "${d:-1}" = 0 ] || problems+=("rank $r: detected=${d:-?} in a clean run")
    [ "${u:-1}" = 0 ] || problems+=("rank $r: uncorrectable=${u:-?}")
    for op in gemm syrk trsm getrf getrs; do
      c=$(val "$prec$op"); opsum[$op]=$(( ${opsum[$op]:-0} + ${c:-0} ))
    done
  done
  for op in gemm syrk trsm getrf getrs; do
    [ "${opsum[$op]:-0}" -gt 0 ] && opsline+="${opsline:+,}$prec$op=${opsum[$op]}"
  done
  for op in $ops; do
    [ "${opsum[$op]:-0}" -gt 0 ] || problems+=("no protected $prec$op call on any rank")
  done
fi

[ "$rc" = 0 ] || problems+=("mpirun exited $rc$( [ "$rc" = 124 ] || [ "$rc" = 137 ] && echo " (timed out after $timeout s)")")
if [ "$kind" != timer ]; then
  [ "$ended" = 1 ] || problems+=("the tester did not print its end line")
  [ "$passed" -gt 0 ] || problems+=("no test passed")
  [ "$failed" = 0 ] || problems+=("$failed tests failed")
  [ "$failed_lines" = 0 ] || problems+=("$failed_lines FAILED lines in the output")
  [ "$kind" != lu ] || [ "$skipped" = 0 ] || problems+=("$skipped tests skipped (illegal input values)")
fi

envtext=${envs[*]+"${envs[*]}"}
echo "run_tester: $tester on $np ranks, $mode${lib:+ ($lib)}${envtext:+, $envtext}: exit $rc, wall $wall s"
[ "$kind" = timer ] || echo "run_tester: the tester: $tests tests, $passed passed, $failed failed, $skipped skipped"
[ "$mode" = preloaded ] && echo "run_tester: protected calls per rank: ${ranks_protected[*]} (all ranks: ${opsline:-none}); detected $detected_sum, uncorrectable $uncorrectable_sum"
echo "run_tester: output in $out"
echo "RESULT tester=$tester np=$np mode=$mode rc=$rc wall=$wall tests=$tests passed=$passed failed=$failed skipped=$skipped progress=$progress protected=$protected_sum ranks_protected=$(IFS=,; echo "${ranks_protected[*]:-}") ops=${opsline:-}"
[ "$check" = 1 ] || exit 0
if [ ${#problems[@]} -gt 0 ]; then
  echo "run_tester: FAILED:"; printf '  %s\n' "${problems[@]}"
  echo "---- the tester's output (last 40 lines) ----"; tail -n 40 "$out"
  for f in "$work"/report.*; do [ -r "$f" ] && { echo "---- $f"; tail -n 5 "$f"; }; done
  exit 1
fi
echo "run_tester: passed"
exit 0

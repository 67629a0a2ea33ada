#!/usr/bin/env bash
# ScaLAPACK under libabft_blas.so against the plain run, on the same ranks, side by side in one
# run (docs/scalapack.md): writes a Markdown summary (date, machine, commit, the numbers).
#
#   tests/scalapack/bench_scalapack.sh --lib build/blas/libabft_blas.so \
#       [--out bench/results/scalapack_cpu.md] [--reps 3] [--timeout 300] [--ranks "2 4"] \
#       [--testers "dpb3tst spb3tst xdlu xslu xdllt xsllt"] [--n 2048] [--commit ID] [--no-large]
#
# 1. The testers on their inputs (those of the tests: run_tester.sh), each on 2 and 4 ranks in
#    five settings: plain and preloaded (ABFT_BLAS_THRESHOLD=0: the testers' matrices are
#    tiny) with the environment as it is, plain and preloaded with OMP_NUM_THREADS=1 in every
#    rank, and preloaded with OMP_WAIT_POLICY=passive. Wall time of mpirun (start-up
#    included), median of --reps runs taken in turn; a setting whose first run took more than
#    60 s is not repeated, one that ran past --timeout is reported with the results it had
#    printed by then. Also xdlu with the package's own LU.dat on 4 ranks (the input of the
#    issue's report; its condition-estimation tests can deadlock ScaLAPACK 2.2.1 itself, see
#    docs/scalapack.md).
# 2. (unless --no-large) PxGEMM and PxGESV at n = --n (NB 64) in both precisions with
#    pdbench.c (built here with mpicc), plain and preloaded with the library's defaults (no
#    ABFT_BLAS_THRESHOLD), with the environment as it is and with OMP_NUM_THREADS=1: the
#    median of 3 timed repetitions inside each run, median over --reps runs taken in turn.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

lib= out= reps=3 timeout=300 ranks="2 4" testers="dpb3tst spb3tst xdlu xslu xdllt xsllt" n=2048
commit= large=1 slow=60
while [ $# -gt 0 ]; do
  case "$1" in
    --lib) lib=$(readlink -f "$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --testers) testers=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    --commit) commit=$2; shift 2 ;;
    --no-large) large=0; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench_scalapack: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$lib" ] && [ -r "$lib" ] || { echo "bench_scalapack: --lib libabft_blas.so needed" >&2; exit 2; }
[ -n "$commit" ] || commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
work=$(mktemp -d "${TMPDIR:-/tmp}/abft-scalapack-bench.XXXXXX")
md=$work/summary.md
log() { echo "bench_scalapack: $*" >&2; }

# ---- the machine ----------------------------------------------------------------------
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1)
{
  echo "# ScaLAPACK under libabft_blas.so: protected against plain, on the same ranks"
  echo
  echo "Written by \`tests/scalapack/bench_scalapack.sh\` (docs/scalapack.md) on $(date -u '+%Y-%m-%d %H:%M UTC')."
  echo
  echo "- library: \`$lib\`, commit $commit"
  echo "- machine: ${cpu:-unknown CPU}, $(nproc) cores, $(uname -sr); load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- OpenMPI $(mpirun --version 2>/dev/null | sed -n 's/.*(Open MPI) //p' | head -n1), ScaLAPACK $(dpkg-query -W -f '${Version}' libscalapack-openmpi2.2 2>/dev/null || echo '?') (Debian), host BLAS $(readlink -f /usr/lib/"$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)"/libblas.so.3 2>/dev/null || echo '?'), OpenMP: $(ldd "$lib" | sed -n 's/^[[:space:]]*\(libgomp[^ ]*\|libomp[^ ]*\) .*/\1/p' | head -n1)"
  echo "- mpirun --oversubscribe; OpenMPI binds each rank to a core when there are no more ranks than cores (2 ranks here) and binds nothing beyond that (4 ranks)"
  echo
} >"$md"

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" | tail -n1; }

# ---- 1. the testers ---------------------------------------------------------------------
settings=(plain plain_omp1 pre pre_omp1 pre_passive)
declare -A label=([plain]="plain" [plain_omp1]="plain, OMP_NUM_THREADS=1"
  [pre]="preloaded" [pre_omp1]="preloaded, OMP_NUM_THREADS=1"
  [pre_passive]="preloaded, OMP_WAIT_POLICY=passive")
setting_args() {
  case "$1" in
    plain) ;;
    plain_omp1) echo "--env OMP_NUM_THREADS=1" ;;
    pre) echo "--lib $lib --env ABFT_BLAS_THRESHOLD=0" ;;
    pre_omp1) echo "--lib $lib --env ABFT_BLAS_THRESHOLD=0 --env OMP_NUM_THREADS=1" ;;
    pre_passive) echo "--lib $lib --env ABFT_BLAS_THRESHOLD=0 --env OMP_WAIT_POLICY=passive" ;;
  esac
}
declare -A times=() status=() info=()
cases=()
for np in $ranks; do for t in $testers; do cases+=("$t:$np:"); done; done
case " $ranks " in *" 4 "*) case " $testers " in *" xdlu "*)
  cases+=("xdlu:4:/usr/share/scalapack/LU.dat") ;; esac ;; esac
for c in "${cases[@]}"; do
  IFS=: read -r t np input <<<"$c"
  for ((r = 1; r <= reps; ++r)); do
    for s in "${settings[@]}"; do
      key="$c|$s"
      [ "${status[$key]:-}" = stop ] && continue
      # shellcheck disable=SC2046
      res=$("$here/run_tester.sh" --no-check --np "$np" --timeout "$timeout" --work "$work/run" \
            ${input:+--input "$input"} $(setting_args "$s") "$t" | grep '^RESULT')
      rc=$(echo "$res" | field rc) wall=$(echo "$res" | field wall)
      log "$t np=$np${input:+ (package input)} $s run $r: exit $rc, $wall s"
      if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        status[$key]=stop times[$key]=" >$timeout"
        info[$key]="timed out after $timeout s with $(echo "$res" | field progress) results printed"
        continue
      fi
      times[$key]="${times[$key]:-} $wall"
      info[$key]="$( [ "$rc" = 0 ] || echo "exit $rc, ")$(echo "$res" | awk '{ for (i = 1; i <= NF; ++i)
        if ($i ~ /^(tests|passed|failed|protected|ranks_protected)=/) printf "%s ", $i }')"
      [ "$r" = 1 ] && awk -v w="$wall" -v s="$slow" 'BEGIN { exit !(w > s) }' && status[$key]=stop
    done
  done
done

{
  echo "## 1. The testers on their own inputs"
  echo
  echo "Wall seconds of \`mpirun\` (start-up included), median of up to $reps runs; preloaded with"
  echo "\`ABFT_BLAS_THRESHOLD=0\` (every local call with a product protected). The inputs are the"
  echo "tests' (\`tests/scalapack/\`: LU and LLT without the condition-estimation tests, grids of the"
  echo "rank count; the PBLAS testers' own files), and in the last row the package's own LU.dat."
  echo "Ratio: preloaded over plain in the same environment (passive: over plain)."
  echo
  echo "| tester | ranks | plain | preloaded | ratio | plain, OMP_NUM_THREADS=1 | preloaded, OMP_NUM_THREADS=1 | ratio | preloaded, OMP_WAIT_POLICY=passive | ratio |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  for c in "${cases[@]}"; do
    IFS=: read -r t np input <<<"$c"
    declare -A m=()
    for s in "${settings[@]}"; do
      v=${times[$c|$s]:-}
      case "$v" in " >"*) m[$s]=${v# } ;; *) m[$s]=$(echo "$v" | median) ;; esac
    done
    ratio() { case "$1$2" in *">"*|"") echo "-" ;; *) awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }' ;; esac; }
    echo "| $t${input:+ (package LU.dat)} | $np | ${m[plain]} | ${m[pre]} | $(ratio "${m[pre]}" "${m[plain]}") | ${m[plain_omp1]} | ${m[pre_omp1]} | $(ratio "${m[pre_omp1]}" "${m[plain_omp1]}") | ${m[pre_passive]} | $(ratio "${m[pre_passive]}" "${m[plain]}") |"
  done
  echo
  echo "What each run reported (the last run of each setting; protected: calls over all ranks):"
  echo
  for c in "${cases[@]}"; do
    IFS=: read -r t np input <<<"$c"
    for s in "${settings[@]}"; do
      v=${info[$c|$s]:-}
      echo "- $t${input:+ (package LU.dat)}, $np ranks, ${label[$s]}: runs${times[$c|$s]:-} s; $v"
    done
  done
  echo
} >>"$md"

# ---- 2. n = 2048 -----------------------------------------------------------------------
if [ "$large" = 1 ]; then
  mpicc=$(command -v mpicc.openmpi || command -v mpicc || true)
  if [ -z "$mpicc" ] || ! "$mpicc" -O2 "$here/pdbench.c" -o "$work/pdbench_d" -lscalapack-openmpi -lm 2>"$work/cc.log" ||
     ! "$mpicc" -O2 -DPDBENCH_FLOAT "$here/pdbench.c" -o "$work/pdbench_s" -lscalapack-openmpi -lm 2>>"$work/cc.log"; then
    log "pdbench.c did not build (mpicc, libopenmpi-dev, libscalapack-openmpi-dev): part 2 left out"
    { echo "## 2. n = $n"; echo; echo "Not measured: pdbench.c did not build ($(head -n1 "$work/cc.log"))."; echo; } >>"$md"
  else
    mr=(mpirun --oversubscribe); [ "$(id -u)" = 0 ] && mr+=(--allow-run-as-root)
    lsets=(plain pre plain_omp1 pre_omp1)
    declare -A lt=() lcheck=() lprot=()
    lfail=()
    for np in $ranks; do for prec in d s; do for op in gemm gesv; do
      for ((r = 1; r <= reps; ++r)); do for s in "${lsets[@]}"; do
        key="$np|$prec|$op|$s"
        [ "${lt[$key]:-}" = timeout ] && continue
        args=(-np "$np")
        case "$s" in *omp1) args+=(-x OMP_NUM_THREADS=1) ;; esac
        rm -f "$work"/rep.*
        case "$s" in pre*) args+=(-x "LD_PRELOAD=$lib") ;; esac
        line=$(cd "$work" && unset LD_PRELOAD && timeout -k 10 "$timeout" "${mr[@]}" "${args[@]}" /bin/sh -c \
          'ABFT_BLAS_REPORT="$0/rep.${OMPI_COMM_WORLD_RANK:-0}"; export ABFT_BLAS_REPORT; exec "$@"' "$work" \
          "$work/pdbench_$prec" --op "$op" --n "$n" --nb 64 --reps 3 2>&1 | grep '^pdbench:')
        if [ -z "$line" ]; then lt[$key]=timeout; log "n=$n p$prec$op np=$np $s: no result (timed out or failed)"; continue; fi
        med=$(echo "$line" | field median)
        lt[$key]="${lt[$key]:-} $med"
        lcheck[$key]=$(echo "$line" | sed -n 's/.* check=\([^ ]*\) \([a-zA-Z]*\)$/\1 \2/p')
        case "${lcheck[$key]}" in *ok) ;; *) lfail+=("p$prec$op on $np ranks, ${label[$s]}, run $r: check ${lcheck[$key]}") ;; esac
        [ "${s:0:3}" = pre ] && lprot[$key]=$(cat "$work"/rep.* 2>/dev/null | sed -n 's/^summary protected=\([0-9]*\).*/\1/p' | tr '\n' ',' | sed 's/,$//')
        log "n=$n p$prec$op np=$np $s run $r: median $med s (check ${lcheck[$key]})"
      done; done
    done; done; done
    {
      echo "## 2. PxGEMM and PxGESV at n = $n (NB 64), the library's defaults"
      echo
      echo "\`tests/scalapack/pdbench.c\`: seconds of one distributed call between barriers (median of 3"
      echo "timed repetitions after a warm-up, then the median over $reps runs taken in turn); 2 ranks:"
      echo "a 1 x 2 grid, 4 ranks: 2 x 2. Preloaded without \`ABFT_BLAS_THRESHOLD\` (the default"
      echo "threshold; the local calls of these sizes are above it). Every result checked (pdbench.c)."
      echo
      echo "| call | ranks | plain | preloaded | ratio | plain, OMP_NUM_THREADS=1 | preloaded, OMP_NUM_THREADS=1 | ratio | protected calls per rank (last run, OMP_NUM_THREADS=1) |"
      echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
      for np in $ranks; do for prec in d s; do for op in gemm gesv; do
        declare -A mm=()
        for s in "${lsets[@]}"; do
          v=${lt[$np|$prec|$op|$s]:-}
          case "$v" in timeout) mm[$s]=">$timeout" ;; *) mm[$s]=$(echo "$v" | median) ;; esac
        done
        rt() { case "$1$2" in *">"*|"") echo "-" ;; *) awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }' ;; esac; }
        echo "| p$prec$op | $np | ${mm[plain]} | ${mm[pre]} | $(rt "${mm[pre]}" "${mm[plain]}") | ${mm[plain_omp1]} | ${mm[pre_omp1]} | $(rt "${mm[pre_omp1]}" "${mm[plain_omp1]}") | ${lprot[$np|$prec|$op|pre_omp1]:-} |"
      done; done; done
      echo
      if [ ${#lfail[@]} -eq 0 ]; then echo "Every result passed its check."
      else echo "Results that failed their check:"; printf -- '- %s\n' "${lfail[@]}"; fi
      echo
      echo "Each run's medians (seconds):"
      echo
      for np in $ranks; do for prec in d s; do for op in gemm gesv; do
        line="- p$prec$op, $np ranks:"
        for s in "${lsets[@]}"; do line+=" ${label[$s]}:${lt[$np|$prec|$op|$s]:-};"; done
        echo "$line"
      done; done; done
      echo
    } >>"$md"
  fi
fi
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)." >>"$md"

if [ -n "$out" ]; then cp "$md" "$out" && log "wrote $out"; else cat "$md"; fi
rm -rf "$work"

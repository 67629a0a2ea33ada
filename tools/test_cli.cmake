# CTest script for the abft command line: cmake -DABFT=<path to abft> -DWORK_DIR=<dir> -P
# test_cli.cmake. Checks that every bad option is refused with exit status 2 and its own
# message naming the option, the value and what is accepted; that --help lists every value;
# that --version works; and that a campaign writes complete outputs (JSON schema, one SVG
# panel per site, every term defined on each screen, a full-space run saying what it drew,
# --trials 0 saying it ran controls only), writes the trials it finished marked partial when
# interrupted (SIGINT, SIGTERM), never leaves a killed run's partial files in place of an
# earlier run's, and does not fail on --row/--col positions some sites cannot hold.
cmake_minimum_required(VERSION 3.24)
set(ENV{OPENBLAS_NUM_THREADS} 1)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
function(fail msg)
  message(SEND_ERROR "FAIL: ${msg}")
endfunction()

# run(<name> <expected exit status> <regex the output must match> args...)
set(seen_messages "")
function(run name rc regex)
  execute_process(COMMAND ${ABFT} ${ARGN} WORKING_DIRECTORY ${WORK_DIR}
                  RESULT_VARIABLE got OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  set(all "${out}${err}")
  if(NOT "${got}" STREQUAL "${rc}")
    fail("${name}: exit status ${got}, want ${rc}; output:\n${all}")
  endif()
  if(NOT all MATCHES "${regex}")
    fail("${name}: output does not match '${regex}':\n${all}")
  endif()
  set(RUN_OUT "${out}" PARENT_SCOPE)
  set(RUN_ERR "${err}" PARENT_SCOPE)
endfunction()

# bad(<regex> args...): refused with status 2, a one-line message of its own
function(bad regex)
  run("abft ${ARGN}" 2 "${regex}" ${ARGN})
  string(STRIP "${RUN_ERR}" e)
  if(e STREQUAL "")
    fail("abft ${ARGN}: no message on stderr")
  endif()
  list(FIND seen_messages "${e}" dup)
  if(NOT dup EQUAL -1)
    fail("abft ${ARGN}: the same message as another mistake: ${e}")
  endif()
  list(APPEND seen_messages "${e}")
  set(seen_messages "${seen_messages}" PARENT_SCOPE)
endfunction()

# ---- mistakes: each names the option, the value and what is accepted ----------------------
bad("--bits: '64' is not a bit position of fp64 data \\(0\\.\\.63\\) or a class \\(any, sign, exponent, mant-high, mant-low\\)"
    campaign --bits 64)
bad("--bits: '32' is not a bit position of fp32 data \\(0\\.\\.31\\)" campaign --precision s --bits 32)
bad("--bits: '63' with --width 2 leaves the 64-bit word" campaign --bits 63 --width 2)
bad("--bits: 'mantissa' is not a bit position" campaign --bits mantissa)
bad("--m: '10' does not apply to --op getrf: it factors an n x n matrix" campaign --op getrf --m 10 --n 20)
bad("--k: '7' does not apply to --op getrf-online" campaign --op getrf-online --k 7)
bad("--checksum: 'full' does not apply to --op getrf" campaign --op getrf --checksum full)
bad("--lu-recovery: 'on' does not apply to --op gemm" campaign --lu-recovery on)
bad("--random-checksum: 'on' does not apply to --space full" campaign --space full --random-checksum on)
bad("--random-checksum: 'on' does not apply to --op getrf" campaign --op getrf --random-checksum on)
bad("--random-checksum: 'maybe' is not a switch" campaign --random-checksum maybe)
bad("--op: 'lu' is not an operation \\(accepted: gemm, getrf, getrf-online\\)" campaign --op lu)
bad("--m: '0' is out of range \\(accepted: 1\\.\\." campaign --m 0)
bad("--n: 'ten' is not a whole number" campaign --n ten)
bad("--size 4000000000 is too large: m.*n = 4000000000 x 4000000000 elements of 8 bytes do not fit in a 64-bit size"
    campaign --size 4000000000)
bad("--m 3037000500 --n 3037000500 --k 1 is too large" campaign --m 3037000500 --n 3037000500 --k 1)
bad("--m 4611686018427387904 --n 4 --k 1 is too large" campaign --m 4611686018427387904 --n 4 --k 1)
bad("--size 100000000 is too large: the campaign needs about .* GB of host memory" campaign --size 100000000)
bad("--trials: '0' with --controls 0 leaves nothing to run" campaign --trials 0 --controls 0)
bad("--refresh: '0' is out of range" campaign --refresh 0)
bad("--guarantee: '0.5' is out of range \\(accepted: a number >= 1\\)" campaign --guarantee 0.5)
bad("--bound-factor: '0' is out of range \\(accepted: a number > 0 and <= 1e\\+06\\)" campaign --bound-factor 0)
bad("--bound-factor: '2e6' is out of range \\(accepted: a number > 0 and <= 1e\\+06\\)" campaign --bound-factor 2e6)
# numbers as written: no leading space or '+'; site lists without empty entries or repeats
bad("--trials: ' 5' is not a whole number" campaign --trials " 5")
bad("--trials: '\\+5' is not a whole number" campaign --trials +5)
bad("--seed: '\\+5' is not a seed" campaign --seed +5)
bad("--guarantee: ' 2' is not a finite number" campaign --guarantee " 2")
bad("--sites: 'after,' has an empty entry" campaign --sites after,)
bad("--sites: 'after,after' names a site twice" campaign --sites after,after)
# what the full space draws per trial is refused with it, not echoed as if used
bad("--checksum: 'full' does not apply to --space full" campaign --space full --checksum full)
bad("--bound: 'prob' does not apply to --space full" campaign --space full --bound prob)
bad("--bound-factor: '2' does not apply to --space full" campaign --space full --bound-factor 2)
bad("--lu-recovery: 'on' does not apply to --space full" campaign --space full --op getrf --lu-recovery on)
# output paths longer than the tool holds are refused, not cut
string(REPEAT "a/" 2100 longdir)
bad("--out: '.*' is too long: the output paths in it would exceed 4095 characters" campaign --out ${longdir})
string(REPEAT "n" 300 longname)
bad("--name: '${longname}' is too long" campaign --name ${longname})
bad("--bound: 'fast' is not a bound mode \\(accepted: worst, prob, tight\\)" campaign --bound fast)
bad("--backend: 'gpu' is not a backend \\(accepted: auto, cpu, cuda\\)" campaign --backend gpu)
bad("--sites: 'after-lu' names after-lu, not a site of --op gemm \\(its sites: encode, mid, after, checksum\\)"
    campaign --sites after-lu)
bad("--sites: 'mid' names mid, not a site of --op getrf \\(its sites: checksum, after-lu\\)"
    campaign --op getrf --sites mid)
bad("--sites: 'nowhere' is not a list of sites" campaign --sites nowhere)
bad("--col: '5' is not a column of the row checksums \\(m x 2\\) at site checksum"
    campaign --col 5 --sites checksum)
bad("--row: '200' is not a row of C \\(m x n\\) at site after \\(128 x 128: rows 0\\.\\.127\\)"
    campaign --row 200 --sites after)
bad("--col: '40' is not a column of .* and no other site of gemm holds it" campaign --size 32 --col 40)
bad("--elems: '40' elements do not fit in C \\(m x n\\) at site after: it has 32 candidate elements"
    campaign --size 32 --row 3 --elems 40 --sites after)
bad("--elems: '65' is out of range \\(accepted: 1\\.\\.64\\)" campaign --elems 65)
bad("--width: '3' is not a width \\(accepted: 1 or 2" campaign --width 3)
bad("--precision: 'q' is not a precision \\(accepted: d for fp64, s for fp32\\)" campaign --precision q)
bad("--replay: '600' is not a trial of this campaign \\(trials 0\\.\\.599" campaign --replay 600)
bad("--seed: '-1' is not a seed" campaign --seed -1)
bad("--name: 'a/b' is not a file name stem" campaign --name a/b)
bad("--out: needs a value" campaign --out)
bad("unknown option '--frobnicate'" campaign --frobnicate)
bad("unexpected argument 'stray'" campaign stray)
bad("abft demo: --site: 'lu-panel' names lu-panel, not a site of --op gemm" demo --site lu-panel)
bad("abft demo: --bits: '40' is not a bit position of fp32 data" demo --precision s --bits 40)
bad("unknown command 'bogus'" bogus)
execute_process(COMMAND ${ABFT} version RESULT_VARIABLE vrc OUTPUT_VARIABLE vout)
if(vout MATCHES "CUDA backend not built")
  bad("--backend: 'cuda' is not available: the CUDA backend is not in this build" campaign --backend cuda)
elseif(vout MATCHES "no CUDA device present")
  bad("--backend: 'cuda' is not available: the CUDA backend is built, but no CUDA device is present"
      campaign --backend cuda)
endif()

# ---- help and version ----------------------------------------------------------------------
run("campaign --help" 0 "usage: abft campaign" campaign --help)
foreach(word gemm getrf getrf-online encode mid after checksum lu-panel after-lu any sign exponent
        mant-high mant-low "row\\|full" "worst\\|prob" "auto\\|cpu\\|cuda" "abft-campaign/2"
        "sites: checksum, lu-panel, after-lu")
  if(NOT RUN_OUT MATCHES "${word}")
    fail("campaign --help does not mention '${word}'")
  endif()
endforeach()
run("demo --help" 0 "usage: abft demo.*encode.*mid.*after.*checksum.*mant-high" demo --help)
run("--version" 0 "^abft [0-9]+\\.[0-9]+\\.[0-9]+ " --version)
run("version" 0 "^abft [0-9]+\\.[0-9]+\\.[0-9]+ " version)

# ---- a campaign: outputs, schema, the picture ----------------------------------------------
set(common --backend cpu --size 24 --trials 60 --controls 6 --refresh 20 --quiet --seed 3)
run("campaign" 0 "PASS: no SDC" campaign ${common} --out out --name c)
foreach(ext csv json svg md)
  if(NOT EXISTS ${WORK_DIR}/out/c.${ext})
    fail("campaign wrote no c.${ext}")
  endif()
endforeach()
file(READ ${WORK_DIR}/out/c.json json)
string(JSON schema ERROR_VARIABLE jerr GET "${json}" schema)
if(NOT schema STREQUAL "abft-campaign/2")
  fail("JSON schema is '${schema}' (${jerr}), want abft-campaign/2")
endif()
file(READ ${WORK_DIR}/out/c.svg svg)
foreach(site encode mid after checksum)
  if(NOT svg MATCHES "font-weight=\"bold\">${site}</tspan>")
    fail("the SVG has no panel for site ${site}")
  endif()
endforeach()
if(NOT svg MATCHES "no SDC, no miscorrection, no error")
  fail("the SVG panels carry no verdict")
endif()
file(GLOB leftovers ${WORK_DIR}/out/.*.tmp)
if(leftovers)
  fail("temporary files left after a complete run: ${leftovers}")
endif()

# Every screen defines its terms, one line each: the terminal summary and the Markdown (a
# "terms" block pointing to docs/campaign.md), the SVG (a line per term under its legend).
# The words beside a verdict never contradict it: "reported" counts are named "reported
# uncorrectable" and each panel's verdict line says what they and the undetected ones mean.
run("campaign (terms)" 0 "PASS: no SDC" campaign ${common} --out out --name terms)
foreach(term "tau +a row's checksum bound" "g·tau +the guarantee \\(g = 2\\)"
        "masked +nothing detected" "undetected +nothing detected; the change is beyond"
        "uncorrectable +detected and reported to the caller" "gray zone +nothing reported"
        "SDC +silent data corruption" "miscorrected +reported as resolved"
        "false positive +a detection in a fault-free run" "Wilson interval +the 95 % confidence"
        "PASS +no SDC")
  if(NOT RUN_OUT MATCHES "terms \\(docs/campaign.md, \"What the outcomes mean\"\\):\n(  [^\n]+\n)*  ${term}")
    fail("the terminal summary does not define '${term}' in its terms block:\n${RUN_OUT}")
  endif()
endforeach()
file(READ ${WORK_DIR}/out/terms.md md)
foreach(term tau masked undetected SDC "Wilson interval")
  if(NOT md MATCHES "\n- \\*\\*${term}\\*\\*: ")
    fail("the Markdown summary does not define '${term}'")
  endif()
endforeach()
file(READ ${WORK_DIR}/out/terms.svg svg)
foreach(term "tau: a row's checksum bound" "g·tau: the guarantee \\(g = 2\\)" "masked: "
        "undetected: " "reported uncorrectable: detected and handed to the caller"
        "SDC \\(silent data corruption\\): " "miscorrected: " "More: docs/campaign.md")
  if(NOT svg MATCHES ">${term}")
    fail("the SVG does not define '${term}'")
  endif()
endforeach()
if(svg MATCHES ">reported [0-9]")
  fail("the SVG shows a bare 'reported N' count")
endif()
string(REGEX MATCHALL "font-weight=\"bold\">reported uncorrectable [0-9]+<" rep_totals "${svg}")
string(REGEX MATCHALL ">reported uncorrectable [0-9]+: detected and handed to the caller, none silent"
       rep_why "${svg}")
list(LENGTH rep_totals nrep)
list(LENGTH rep_why nwhy)
if(nrep EQUAL 0 OR NOT nrep EQUAL nwhy)
  fail("${nrep} panels show a 'reported uncorrectable' count, ${nwhy} of them say what it means")
endif()
string(REGEX MATCHALL "font-weight=\"bold\">undetected [0-9]+ " und_totals "${svg}")
string(REGEX MATCHALL "undetected [0-9]+: within tau, not a failure" und_why "${svg}")
list(LENGTH und_totals nund)
list(LENGTH und_why nundwhy)
if(NOT nund EQUAL nundwhy)
  fail("${nund} panels show an 'undetected' count, ${nundwhy} of them say what it means")
endif()
string(REGEX MATCHALL ">verdict: no SDC, no miscorrection, no error<" verdicts "${svg}")
string(REGEX MATCHALL "</tspan>: " panels "${svg}")
list(LENGTH verdicts nverdicts)
list(LENGTH panels npanels)
if(npanels LESS 4 OR NOT nverdicts EQUAL npanels)
  fail("${nverdicts} panel verdict lines for ${npanels} panels")
endif()

# --trials 0 (controls only) says what it ran instead of a table of rates over no trials.
run("campaign --trials 0" 0 "faulty trials: none \\(--trials 0\\): this run checks fault-free runs for false positives only"
    campaign --backend cpu --size 24 --trials 0 --controls 6 --quiet --out out --name t0)
if(RUN_OUT MATCHES "undetected \\(beyond the noise|\nmasked \\(within|held in every trial")
  fail("--trials 0 prints rates or a guarantee over no faulty trial:\n${RUN_OUT}")
endif()
file(READ ${WORK_DIR}/out/t0.svg svg)
if(NOT svg MATCHES "no faulty trial in this run")
  fail("the SVG of --trials 0 does not say it has no faulty trial")
endif()

# A full-space LU campaign: the outcomes by configuration name each class once (the LU is
# classed by its recovery copy alone), in the table and in the JSON.
run("campaign getrf full" 0 "PASS: no SDC" campaign --backend cpu --space full --op getrf
    --n 24 --trials 300 --controls 20 --quiet --seed 9 --out out --name lu)
string(REGEX MATCHALL "\nrecovery copy off +[0-9]" offs "${RUN_OUT}")
list(LENGTH offs noffs)
if(NOT noffs EQUAL 1)
  fail("the LU table names 'recovery copy off' ${noffs} times, want 1:\n${RUN_OUT}")
endif()
# the full-space CSV names each column once
file(STRINGS ${WORK_DIR}/out/lu.csv csv_head LIMIT_COUNT 1)
string(REPLACE "," ";" csv_cols "${csv_head}")
list(LENGTH csv_cols ncols)
set(csv_uniq ${csv_cols})
list(REMOVE_DUPLICATES csv_uniq)
list(LENGTH csv_uniq nuniq)
if(NOT ncols EQUAL nuniq)
  fail("the full-space CSV header repeats a column name: ${csv_head}")
endif()
# A full-space run says what it drew, not a fixed configuration it did not use.
if(RUN_OUT MATCHES "row checksums|worst-case bound|1 element, width 1")
  fail("the full-space header names a fixed configuration:\n${RUN_OUT}")
endif()
if(NOT RUN_OUT MATCHES "space full: every trial draws its own configuration and fault.*drawn per trial: sizes, transposes.*checksum kind.*bound mode and factor.*fault model.*drawn per trial")
  fail("the full-space header does not say what each trial drew:\n${RUN_OUT}")
endif()
file(READ ${WORK_DIR}/out/lu.svg svg)
if(NOT svg MATCHES "abft campaign: getrf fp64, space full \\(each trial draws its sizes up to n = 24, its configuration and its fault\\)")
  fail("the full-space SVG title does not say what was drawn")
endif()
if(svg MATCHES "<text[^>]*font-weight=\"bold\">abft campaign:[^<]*checksums")
  fail("the full-space SVG title names a checksum kind")
endif()
file(READ ${WORK_DIR}/out/lu.json json)
string(JSON ncfg ERROR_VARIABLE jerr LENGTH "${json}" summary by_config)
if(NOT ncfg EQUAL 2)
  fail("the LU JSON has ${ncfg} configuration classes (${jerr}), want 2")
endif()

# --row/--col that some sites cannot hold: those sites are left out, the run passes
run("campaign --col 5" 0 "PASS: no SDC" campaign ${common} --col 5 --out out --name col5)
if(NOT RUN_ERR MATCHES "note: --col 5 is not a column of the row checksums.*leaving out checksum")
  fail("--col 5: no note that the checksum site is left out: ${RUN_ERR}")
endif()
file(READ ${WORK_DIR}/out/col5.json j5)
if(j5 MATCHES "\"site\": \"checksum\"")
  fail("--col 5 ran trials at the checksum site")
endif()
run("campaign --col 1 --sites checksum" 0 "PASS: no SDC"
    campaign ${common} --col 1 --sites checksum --out out --name col1)

# a killed run leaves the earlier run's files as they were
file(MD5 ${WORK_DIR}/out/c.csv csv_before)
file(MD5 ${WORK_DIR}/out/c.json json_before)
execute_process(COMMAND ${ABFT} campaign --backend cpu --size 96 --trials 100000000 --controls 0
                        --quiet --out out --name c
                WORKING_DIRECTORY ${WORK_DIR} TIMEOUT 2 RESULT_VARIABLE krc
                OUTPUT_QUIET ERROR_QUIET)
file(MD5 ${WORK_DIR}/out/c.csv csv_after)
file(MD5 ${WORK_DIR}/out/c.json json_after)
if(NOT csv_before STREQUAL csv_after OR NOT json_before STREQUAL json_after)
  fail("a killed run (${krc}) changed the earlier run's CSV/JSON")
endif()

# An interrupted campaign (SIGINT, then SIGTERM with workers) writes the trials it finished
# and a summary marked partial, with its own exit status (128 + the signal), instead of
# leaving nothing; faults in C only (--sites after), which the guarantee covers.
if(UNIX)
  foreach(sig INT TERM)
    if(sig STREQUAL "INT")
      set(jobs 1)
      set(want 130)
    else()
      set(jobs 2)
      set(want 143)
    endif()
    file(REMOVE_RECURSE ${WORK_DIR}/int)
    execute_process(COMMAND sh -c "\"$0\" campaign --backend cpu --size 24 --sites after --trials 100000000 --controls 5 --jobs ${jobs} --quiet --out int --name i >int.out 2>int.err & p=$!; sleep 1; kill -${sig} $p; wait $p; echo \"rc=$?\""
                            ${ABFT}
                    WORKING_DIRECTORY ${WORK_DIR} TIMEOUT 60 OUTPUT_VARIABLE irc)
    file(READ ${WORK_DIR}/int.out iout)
    file(READ ${WORK_DIR}/int.err ierr)
    if(NOT irc MATCHES "rc=${want}")
      fail("SIG${sig}: ${irc}, want rc=${want}:\n${iout}\n${ierr}")
    endif()
    foreach(ext csv json svg md)
      if(NOT EXISTS ${WORK_DIR}/int/i.${ext})
        fail("SIG${sig}: no i.${ext} written")
      endif()
    endforeach()
    if(NOT iout MATCHES "^PARTIAL: interrupted \\(SIG${sig}\\) after ([0-9]+) of 100000005 trials")
      fail("SIG${sig}: the summary does not start by saying it is partial:\n${iout}")
    endif()
    set(nrun ${CMAKE_MATCH_1})
    if(NOT iout MATCHES "\nPARTIAL \\(interrupted, SIG${sig}\\): no SDC, no miscorrection, no false positive in the ${nrun} trials run")
      fail("SIG${sig}: no partial verdict:\n${iout}")
    endif()
    if(NOT ierr MATCHES "interrupted \\(SIG${sig}\\) after ${nrun} of 100000005 trials: writing them, marked partial")
      fail("SIG${sig}: no note on stderr: ${ierr}")
    endif()
    file(STRINGS ${WORK_DIR}/int/i.csv icsv)
    list(LENGTH icsv nlines)
    math(EXPR nlines "${nlines} - 1")
    if(NOT nlines EQUAL nrun)
      fail("SIG${sig}: the CSV holds ${nlines} trials, the summary ${nrun}")
    endif()
    file(READ ${WORK_DIR}/int/i.json ijson)
    string(JSON ipart ERROR_VARIABLE jerr GET "${ijson}" summary partial)
    string(JSON itr ERROR_VARIABLE jerr2 GET "${ijson}" summary trials_run)
    string(JSON injs ERROR_VARIABLE jerr3 LENGTH "${ijson}" trials)
    if(NOT ipart STREQUAL "ON" OR NOT itr EQUAL nrun OR NOT injs EQUAL nrun)
      fail("SIG${sig}: JSON summary.partial '${ipart}' (${jerr}), trials_run '${itr}', ${injs} trials; want true, ${nrun}, ${nrun}")
    endif()
    file(READ ${WORK_DIR}/int/i.md imd)
    if(NOT imd MATCHES "^# abft campaign: gemm fp64 \\([0-9-]+\\), partial\n\nPARTIAL: interrupted")
      fail("SIG${sig}: the Markdown summary is not marked partial")
    endif()
    file(READ ${WORK_DIR}/int/i.svg isvg)
    if(NOT isvg MATCHES "\\(PARTIAL: interrupted after ${nrun} of 100000005 trials\\)")
      fail("SIG${sig}: the SVG title is not marked partial")
    endif()
    file(GLOB leftovers ${WORK_DIR}/int/.*)
    if(leftovers)
      fail("SIG${sig}: temporary files left: ${leftovers}")
    endif()
  endforeach()
endif()

# Buffers are sized for what each space needs: a lopsided GEMM (once sized max(m, k)^2, 25 GB
# here) runs in a few MB, in both spaces.
run("campaign lopsided" 0 "PASS: no SDC" campaign --backend cpu --m 56210 --n 1 --k 1 --trials 20
    --controls 2 --quiet --out out --name lop)
run("campaign lopsided full" 0 "PASS: no SDC" campaign --backend cpu --space full --m 56210 --n 1
    --k 1 --trials 20 --controls 2 --quiet --out out --name lopf)

# A long --out (beyond 1024 characters, within what the system takes) is used as given.
string(REPEAT "d" 250 d250)
set(longout "${WORK_DIR}/${d250}/${d250}/${d250}/${d250}/${d250}")
file(MAKE_DIRECTORY "${WORK_DIR}/${d250}/${d250}/${d250}/${d250}")
run("campaign long --out" 0 "PASS: no SDC" campaign ${common} --out ${longout} --name long)
if(NOT EXISTS "${longout}/long.md")
  fail("a long --out did not get the files")
endif()

# Memory stays bounded whatever --trials is: 10^12 trials start running within 1 GB of
# address space (the block table was once made up front: about trials/refresh x 40 bytes).
if(UNIX)
  execute_process(COMMAND sh -c "ulimit -v 1000000 && exec \"$0\" campaign --backend cpu --size 8 --trials 1000000000000 --controls 0 --quiet --out big --name big"
                          ${ABFT}
                  WORKING_DIRECTORY ${WORK_DIR} TIMEOUT 3 RESULT_VARIABLE brc
                  OUTPUT_VARIABLE bout ERROR_VARIABLE berr)
  if("${berr}" MATCHES "could not run" OR "${brc}" STREQUAL "2")
    fail("--trials 1000000000000 did not start (${brc}): ${berr}")
  endif()
endif()

# Committing the outputs is all or nothing: when one cannot be put in place (here the .md is
# a directory), the earlier run's files all stay, and the message says so.
file(GLOB killed ${WORK_DIR}/out/.c.*) # the killed run's temporary files
if(killed)
  file(REMOVE ${killed})
endif()
file(MD5 ${WORK_DIR}/out/c.svg svg_before)
file(RENAME ${WORK_DIR}/out/c.md ${WORK_DIR}/out/c.md.keep)
file(MAKE_DIRECTORY ${WORK_DIR}/out/c.md/sub)
run("campaign, .md a directory" 2 "cannot replace .*c\\.md: it is not a regular file.*files of an earlier run in out are unchanged"
    campaign ${common} --seed 4 --out out --name c)
file(MD5 ${WORK_DIR}/out/c.csv csv_after)
file(MD5 ${WORK_DIR}/out/c.json json_after)
file(MD5 ${WORK_DIR}/out/c.svg svg_after)
if(NOT csv_before STREQUAL csv_after OR NOT json_before STREQUAL json_after OR
   NOT svg_before STREQUAL svg_after)
  fail("a run whose .md could not be put in place replaced the earlier CSV/JSON/SVG")
endif()
file(GLOB leftovers ${WORK_DIR}/out/.c.*)
if(leftovers)
  fail("temporary or moved-aside files left after a failed commit: ${leftovers}")
endif()
file(REMOVE_RECURSE ${WORK_DIR}/out/c.md)
file(RENAME ${WORK_DIR}/out/c.md.keep ${WORK_DIR}/out/c.md)

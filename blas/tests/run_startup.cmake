# Runs a program with libabft_blas.so preloaded and checks what a process that has it pays
# and sees (cmake -P; docs/dropin.md, "What a process pays for the preload").
#
#   PROGRAM       the program; ARGS its arguments (list)
#   PRELOAD       libabft_blas.so
#   ENV           VAR=VALUE pairs (list) set for the program
#   WORK_DIR      where it runs (made empty first); ABFT_BLAS_REPORT=WORK_DIR/report.txt is set
#   OUTPUT_EMPTY  ON: stdout and stderr must be empty
#   PASS_REGEX    regexes that must each match stdout and stderr (list)
#   REPORT        ABSENT: the report file must not exist (nothing was written, not even an
#                 empty file); otherwise regexes that must each match it (list)
cmake_minimum_required(VERSION 3.24)

if(NOT EXISTS "${PROGRAM}")
  message("SKIPPED: ${PROGRAM} is not installed")
  return()
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(report "${WORK_DIR}/report.txt")
execute_process(COMMAND ${CMAKE_COMMAND} -E env "ABFT_BLAS_REPORT=${report}" ${ENV}
                        "LD_PRELOAD=${PRELOAD}" "${PROGRAM}" ${ARGS}
                WORKING_DIRECTORY "${WORK_DIR}"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("stdout:\n${out}\nstderr:\n${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with '${rc}'")
endif()
if(OUTPUT_EMPTY AND NOT "${out}${err}" STREQUAL "")
  message(FATAL_ERROR "the program printed something; expected nothing")
endif()
foreach(re IN LISTS PASS_REGEX)
  if(NOT "${out}\n${err}" MATCHES "${re}")
    message(FATAL_ERROR "output does not match '${re}'")
  endif()
endforeach()
if(REPORT STREQUAL "ABSENT")
  if(EXISTS "${report}")
    file(READ "${report}" rep)
    message(FATAL_ERROR "a report file was written:\n${rep}")
  endif()
elseif(REPORT)
  if(NOT EXISTS "${report}")
    message(FATAL_ERROR "no report file")
  endif()
  file(READ "${report}" rep)
  message("report:\n${rep}")
  foreach(re IN LISTS REPORT)
    if(NOT rep MATCHES "${re}")
      message(FATAL_ERROR "the report does not match '${re}'")
    endif()
  endforeach()
endif()
message("passed")

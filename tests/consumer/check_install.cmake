# The install test (CTest test_install_consumer), run with cmake -P:
#   1. installs the build tree to a fresh prefix;
#   2. runs the installed `abft --version` and a short installed campaign (no LD_LIBRARY_PATH
#      into the build tree: the tool must find the installed library through its RPATH);
#   3. configures and builds tests/consumer through find_package(abft), one program linked to
#      abft::abft and one to abft::abft_static, and runs both (each checks a corrected GEMM);
#   4. builds the same program through pkg-config with nothing added to what it prints:
#      abft.pc (shared; run with LD_LIBRARY_PATH unset, so its run path must find libabft.so)
#      and abft-static.pc (--static; run with libabft.so moved aside), then again through
#      abft.pc from a copy of the prefix moved elsewhere, the first prefix gone;
#   5. builds and runs the C programs of the README (the GEMM example, the LU and solve) and
#      of docs/lu.md (the LU and solve), each the C block after its marker, as printed.
# The static programs run with the installed shared library moved aside, so they cannot lean
# on it. Any failure stops the test with a message.
#
# Variables: ABFT_BINARY_DIR, CONSUMER_SOURCE_DIR, WORK_DIR, C_COMPILER, ABFT_VERSION,
# INSTALL_LIBDIR (CMAKE_INSTALL_LIBDIR of the build), INSTALL_BINDIR, INSTALL_DOCDIR, README,
# LU_DOC (docs/lu.md).

cmake_minimum_required(VERSION 3.24)

function(must_run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${rc}):\n${ARGN}\n--- stdout\n${out}\n--- stderr\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(RUN_OUT "${out}" PARENT_SCOPE)
endfunction()

function(must_match what regex text)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: output does not match '${regex}':\n${text}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
set(libdir ${prefix}/${INSTALL_LIBDIR})

# Nothing from the build tree on the loader's path.
if(DEFINED ENV{LD_LIBRARY_PATH})
  string(REPLACE ":" ";" ldpath "$ENV{LD_LIBRARY_PATH}")
  list(FILTER ldpath EXCLUDE REGEX "^${ABFT_BINARY_DIR}")
  list(JOIN ldpath ":" ldpath)
  set(ENV{LD_LIBRARY_PATH} "${ldpath}")
endif()

# ---- 1. install ----------------------------------------------------------------------
must_run("install" ${CMAKE_COMMAND} --install ${ABFT_BINARY_DIR} --prefix ${prefix})
file(GLOB shared_libs ${libdir}/libabft.so*)
foreach(f ${prefix}/${INSTALL_BINDIR}/abft ${libdir}/libabft.a ${libdir}/pkgconfig/abft.pc
          ${libdir}/cmake/abft/abftConfig.cmake ${prefix}/include/abft/abft.h
          ${prefix}/include/abft/abft_version.h ${prefix}/${INSTALL_DOCDIR}/LICENSE
          ${prefix}/${INSTALL_DOCDIR}/docs/api.md)
  if(NOT EXISTS ${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
if(NOT shared_libs)
  message(FATAL_ERROR "not installed: ${libdir}/libabft.so*")
endif()

# ---- 2. the installed tool -------------------------------------------------------------
set(abft ${prefix}/${INSTALL_BINDIR}/abft)
must_run("abft --version" ${abft} --version)
string(REPLACE "." "\\." vre "${ABFT_VERSION}")
must_match("abft --version" "^abft ${vre}[ \n]" "${RUN_OUT}")
set(ENV{OPENBLAS_NUM_THREADS} 1)
foreach(op gemm getrf)
  must_run("abft campaign --op ${op}" ${abft} campaign --op ${op} --size 32 --trials 24
           --controls 8 --refresh 8 --backend cpu --quiet --seed 7 --out ${WORK_DIR}/campaign)
  must_match("abft campaign --op ${op}" "PASS: no SDC" "${RUN_OUT}")
  foreach(ext md json csv)
    if(NOT EXISTS ${WORK_DIR}/campaign/campaign_${op}_d.${ext})
      message(FATAL_ERROR "abft campaign --op ${op} wrote no campaign_${op}_d.${ext}")
    endif()
  endforeach()
endforeach()

# Runs a static consumer with the installed libabft.so* moved aside.
function(run_static what exe)
  file(MAKE_DIRECTORY ${WORK_DIR}/aside)
  file(GLOB libs ${libdir}/libabft.so*)
  foreach(l ${libs})
    get_filename_component(n ${l} NAME)
    file(RENAME ${l} ${WORK_DIR}/aside/${n})
  endforeach()
  execute_process(COMMAND ${exe} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  foreach(l ${libs})
    get_filename_component(n ${l} NAME)
    file(RENAME ${WORK_DIR}/aside/${n} ${l})
  endforeach()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${rc}):\n${out}\n${err}")
  endif()
  must_match("${what}" "consumer OK" "${out}")
  message(STATUS "${what}: ${out}")
endfunction()

# ---- 3. find_package(abft) -------------------------------------------------------------
must_run("consumer configure" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build
         -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER}
         -DCMAKE_BUILD_TYPE=Release)
must_run("consumer build" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
must_run("consumer_shared (abft::abft)" ${WORK_DIR}/build/consumer_shared)
must_match("consumer_shared" "consumer OK" "${RUN_OUT}")
message(STATUS "consumer_shared: ${RUN_OUT}")
run_static("consumer_static (abft::abft_static)" ${WORK_DIR}/build/consumer_static)

# ---- 4. pkg-config ---------------------------------------------------------------------
# Nothing added to what pkg-config prints: abft.pc's Libs must carry the run path of the
# library directory, and abft-static.pc must link libabft.a, not libabft.so.
find_program(PKG_CONFIG NAMES pkg-config pkgconf)
if(NOT PKG_CONFIG)
  message(FATAL_ERROR "pkg-config not found: install pkg-config (or pkgconf) to test abft.pc")
endif()
set(ENV{PKG_CONFIG_PATH} ${libdir}/pkgconfig)
must_run("pkg-config --modversion abft" ${PKG_CONFIG} --modversion abft)
must_match("pkg-config --modversion abft" "^${vre}\n" "${RUN_OUT}")
must_run("pkg-config --modversion abft-static" ${PKG_CONFIG} --modversion abft-static)
must_match("pkg-config --modversion abft-static" "^${vre}\n" "${RUN_OUT}")
must_run("pkg-config --cflags abft" ${PKG_CONFIG} --cflags abft)
separate_arguments(pc_cflags UNIX_COMMAND "${RUN_OUT}")
must_run("pkg-config --libs abft" ${PKG_CONFIG} --libs abft)
separate_arguments(pc_libs UNIX_COMMAND "${RUN_OUT}")
must_match("pkg-config --libs abft (a run path)" "-Wl,-rpath," "${RUN_OUT}")
must_run("pkg-config --variable=rpath abft" ${PKG_CONFIG} --variable=rpath abft)
must_match("pkg-config --variable=rpath abft" "^-Wl,-rpath,[^ ]+/lib" "${RUN_OUT}")
must_run("pkg-config --static --libs abft-static" ${PKG_CONFIG} --static --libs abft-static)
separate_arguments(pc_static_libs UNIX_COMMAND "${RUN_OUT}")
must_match("pkg-config --static --libs abft-static" "/libabft\\.a( |$)" "${RUN_OUT}")
if("${RUN_OUT}" MATCHES "-labft( |$)")
  message(FATAL_ERROR "pkg-config --static --libs abft-static names -labft: ${RUN_OUT}")
endif()
must_run("pkg-config --libs abft-static" ${PKG_CONFIG} --libs abft-static)
must_match("pkg-config --libs abft-static" "/libabft\\.a( |$)" "${RUN_OUT}")

# Runs a program with LD_LIBRARY_PATH unset: only run paths and the system's directories.
function(run_no_ldpath what exe)
  must_run("${what}" ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${exe})
  must_match("${what}" "consumer OK" "${RUN_OUT}")
  message(STATUS "${what}: ${RUN_OUT}")
endfunction()

file(MAKE_DIRECTORY ${WORK_DIR}/pc)
must_run("cc with pkg-config abft (shared)" ${C_COMPILER} -std=c11 ${pc_cflags}
         ${CONSUMER_SOURCE_DIR}/consumer.c -o ${WORK_DIR}/pc/consumer_shared ${pc_libs} -lm)
run_no_ldpath("pkg-config consumer (shared, no LD_LIBRARY_PATH)" ${WORK_DIR}/pc/consumer_shared)
must_run("cc with pkg-config --static abft-static" ${C_COMPILER} -std=c11 ${pc_cflags}
         ${CONSUMER_SOURCE_DIR}/consumer.c -o ${WORK_DIR}/pc/consumer_static ${pc_static_libs}
         -lm)
run_static("pkg-config consumer (static)" ${WORK_DIR}/pc/consumer_static)

# The same tree moved elsewhere (the .pc files climb from their own directory) with the
# first prefix gone: a shared program built there starts from there.
set(moved ${WORK_DIR}/moved/abft-prefix)
file(MAKE_DIRECTORY ${WORK_DIR}/moved)
file(RENAME ${prefix} ${moved})
set(ENV{PKG_CONFIG_PATH} ${moved}/${INSTALL_LIBDIR}/pkgconfig)
must_run("pkg-config --cflags abft (moved)" ${PKG_CONFIG} --cflags abft)
separate_arguments(moved_cflags UNIX_COMMAND "${RUN_OUT}")
must_run("pkg-config --libs abft (moved)" ${PKG_CONFIG} --libs abft)
separate_arguments(moved_libs UNIX_COMMAND "${RUN_OUT}")
must_run("cc with pkg-config abft (moved prefix)" ${C_COMPILER} -std=c11 ${moved_cflags}
         ${CONSUMER_SOURCE_DIR}/consumer.c -o ${WORK_DIR}/pc/consumer_moved ${moved_libs} -lm)
run_no_ldpath("pkg-config consumer (moved prefix, no LD_LIBRARY_PATH)"
              ${WORK_DIR}/pc/consumer_moved)
file(RENAME ${moved} ${prefix})
set(ENV{PKG_CONFIG_PATH} ${libdir}/pkgconfig)

# ---- 5. the documents' C programs, as printed --------------------------------------------
# doc_example(<file> <marker> <name> <regex>): the C block after <!-- <marker> in <file>,
# compiled with -Wall -Werror through abft.pc alone and run (LD_LIBRARY_PATH unset); its
# output must match <regex>.
function(doc_example file marker name regex)
  file(READ ${file} text)
  string(FIND "${text}" "<!-- ${marker}" at)
  if(at LESS 0)
    message(FATAL_ERROR "${file}: no <!-- ${marker} --> marker")
  endif()
  string(SUBSTRING "${text}" ${at} -1 text)
  string(FIND "${text}" "```c\n" open)
  if(open LESS 0)
    message(FATAL_ERROR "${file}: no C block after <!-- ${marker}")
  endif()
  math(EXPR open "${open} + 5")
  string(SUBSTRING "${text}" ${open} -1 text)
  string(FIND "${text}" "\n```" close)
  string(SUBSTRING "${text}" 0 ${close} example)
  file(WRITE ${WORK_DIR}/pc/${name}.c "${example}\n")
  must_run("cc ${name}" ${C_COMPILER} -std=c11 -Wall -Werror ${pc_cflags}
           ${WORK_DIR}/pc/${name}.c -o ${WORK_DIR}/pc/${name} ${pc_libs})
  must_run("${name}" ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${WORK_DIR}/pc/${name})
  must_match("${name}" "${regex}" "${RUN_OUT}")
  message(STATUS "${name}: ${RUN_OUT}")
endfunction()

if(README)
  doc_example(${README} minimal-example readme_example "checksums checked")
  doc_example(${README} lu-example readme_lu_example
              "LU: [0-9]+ checksum entries compared, 0 detected.*\nsolve: [0-9]+ checksum entries compared, max")
endif()
if(LU_DOC)
  doc_example(${LU_DOC} lu-example lu_doc_example
              "LU: [0-9]+ checksum entries compared, 0 detected.*\nsolve: [0-9]+ checksum entries compared, max")
endif()

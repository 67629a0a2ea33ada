# Generates abft.pc (the shared library) and abft-static.pc (the static one), installed to
# <libdir>/pkgconfig, from cmake/abft.pc.in and cmake/abft-static.pc.in.
#
# The prefix is written relative to the .pc file (${pcfiledir}), so the file stays right
# wherever the tree is installed (cmake --install --prefix, DESTDIR, a relocated copy).
# abft.pc's Libs carries -Wl,-rpath,${libdir} (option ABFT_PKGCONFIG_RPATH), so a program
# linked through it finds libabft.so without LD_LIBRARY_PATH; its Libs.private lists what a
# static link of libabft.a needs: LAPACK, BLAS, libm, threads, OpenMP, and with the CUDA
# backend the CUDA runtime, cuBLAS, cuSOLVER, cuRAND and the C++ runtime that nvcc-compiled
# objects call into. abft-static.pc's Libs names libabft.a itself, then the same list, with a
# run path for each of its directories outside the system's.
option(ABFT_PKGCONFIG_RPATH
       "abft.pc's Libs carries -Wl,-rpath,<libdir>: programs start without LD_LIBRARY_PATH" ON)

# Turns a CMake link list (full paths, -l / -L / other flags, plain names) into pkg-config
# words: /dir/libfoo.so -> -L/dir -lfoo.
function(abft_pc_link_words out)
  set(words "")
  foreach(item IN LISTS ARGN)
    if(item STREQUAL "" OR item MATCHES "^(optimized|debug|general)$")
      continue()
    elseif(item MATCHES "^-")
      list(APPEND words "${item}")
    elseif(IS_ABSOLUTE "${item}")
      get_filename_component(dir "${item}" DIRECTORY)
      get_filename_component(name "${item}" NAME)
      if(name MATCHES "^lib(.+)\\.(so|a|dylib)(\\..*)?$")
        set(lib "${CMAKE_MATCH_1}")
        if(NOT dir MATCHES "^/(usr/)?lib(64)?(/[^/]*-linux-gnu)?$")
          list(APPEND words "-L${dir}")
        endif()
        list(APPEND words "-l${lib}")
      else()
        list(APPEND words "${item}")
      endif()
    else()
      list(APPEND words "-l${item}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES words)
  set(${out} "${words}" PARENT_SCOPE)
endfunction()

set(_abft_pc_items ${LAPACK_LIBRARIES} ${BLAS_LIBRARIES} m)
if(CMAKE_THREAD_LIBS_INIT)
  list(APPEND _abft_pc_items ${CMAKE_THREAD_LIBS_INIT}) # -pthread (campaign workers)
endif()
if(OpenMP_C_FOUND)
  # The compiler's own flag (-fopenmp) links its runtime, wherever that compiler keeps it.
  separate_arguments(_abft_pc_omp UNIX_COMMAND "${OpenMP_C_FLAGS}")
  list(APPEND _abft_pc_items ${_abft_pc_omp})
endif()
if(ABFT_HAVE_CUDA)
  list(APPEND _abft_pc_items "-L${CUDAToolkit_LIBRARY_DIR}" cudart cublas cusolver curand
       stdc++)
endif()
abft_pc_link_words(_abft_pc_words ${_abft_pc_items})
list(JOIN _abft_pc_words " " ABFT_PC_LIBS_PRIVATE)
# The static library's Libs: the same words, and a run path for every -L directory (the
# dependencies stay shared libraries, e.g. the CUDA runtime outside the loader's default).
set(_abft_pc_static ${_abft_pc_words})
foreach(w IN LISTS _abft_pc_words)
  if(w MATCHES "^-L(.+)$")
    list(APPEND _abft_pc_static "-Wl,-rpath,${CMAKE_MATCH_1}")
  endif()
endforeach()
list(JOIN _abft_pc_static " " ABFT_PC_LIBS_STATIC)
if(ABFT_PKGCONFIG_RPATH)
  set(ABFT_PC_SHARED_RPATH "\${rpath} ")
else()
  set(ABFT_PC_SHARED_RPATH "")
endif()

# ${pcfiledir} is <prefix>/<libdir>/pkgconfig: climb back to the prefix.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(ABFT_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(ABFT_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH _abft_pc_up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" _abft_pc_up "${_abft_pc_up}")
  set(ABFT_PC_PREFIX "\${pcfiledir}/${_abft_pc_up}")
  set(ABFT_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(ABFT_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(ABFT_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()

configure_file(${CMAKE_CURRENT_LIST_DIR}/abft.pc.in ${CMAKE_BINARY_DIR}/abft.pc @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/abft-static.pc.in ${CMAKE_BINARY_DIR}/abft-static.pc
               @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/abft.pc ${CMAKE_BINARY_DIR}/abft-static.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

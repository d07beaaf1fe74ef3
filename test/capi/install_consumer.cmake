# cmake -DBUILD_DIR= -DPREFIX= -DSRC= -DCC= -DSAN= -DSAN_LINK= -DGENERATOR= -DPKG_CONFIG= -DNM= -DLIBDIR= -P install_consumer.cmake
# Installs the build into PREFIX, checks what was installed, then builds and runs the consumer
# in SRC against the installed files only: once with pkg-config, once with find_package(CONFIG).
function(run)
  cmake_parse_arguments(A "" "OUT" "CMD" ${ARGN})
  execute_process(COMMAND ${A_CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    if(SAN AND "${out}${err}" MATCHES "runtime does not come first|cannot preload|LD_PRELOAD")
      # Stops the script; ctest reports the test as skipped (SKIP_REGULAR_EXPRESSION).
      message(FATAL_ERROR "SKIP: the sanitizer runtime cannot be loaded for the consumer:\n${err}")
    endif()
    string(REPLACE ";" " " cmd "${A_CMD}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  if(A_OUT)
    set(${A_OUT} "${out}" PARENT_SCOPE)
  endif()
endfunction()

file(REMOVE_RECURSE ${PREFIX})
run(CMD ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})

set(lib ${PREFIX}/${LIBDIR})
foreach(f bin/kacct ${LIBDIR}/libkacct.so include/kacct/kacct.h ${LIBDIR}/pkgconfig/kacct.pc
          ${LIBDIR}/cmake/kacct/kacctConfig.cmake ${LIBDIR}/cmake/kacct/kacctConfigVersion.cmake
          ${LIBDIR}/cmake/kacct/kacctTargets.cmake)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
# The static internal libraries must not reach the consumer's link line.
file(GLOB exported ${lib}/cmake/kacct/*.cmake)
foreach(f ${exported} ${lib}/pkgconfig/kacct.pc)
  file(READ ${f} s)
  if(s MATCHES "kacct_model|kacct_trace|kacct_proofs")
    message(FATAL_ERROR "${f} names an internal library:\n${s}")
  endif()
endforeach()
# Only the C API is exported from the shared library.
if(NM)
  run(CMD ${NM} -D --defined-only ${lib}/libkacct.so OUT syms)
  string(REGEX MATCHALL "[^\n]+" lines "${syms}")
  foreach(l ${lines})
    if(NOT l MATCHES " kacct_[a-z_0-9]+(@@KACCT_1)?$" AND NOT l MATCHES " A KACCT_1(@@KACCT_1)?$")
      message(FATAL_ERROR "libkacct.so exports a symbol outside the C API: ${l}")
    endif()
  endforeach()
endif()
# The installed CLI runs.
run(CMD ${PREFIX}/bin/kacct list cpus OUT out)
if(NOT out MATCHES "x86-64")
  message(FATAL_ERROR "installed kacct list cpus: ${out}")
endif()

set(ENV{LD_LIBRARY_PATH} "${lib}")
separate_arguments(san UNIX_COMMAND "${SAN}")
separate_arguments(san_link UNIX_COMMAND "${SAN_LINK}")

# 1. pkg-config
if(NOT PKG_CONFIG)
  message("SKIP: no pkg-config")
  return()
endif()
set(ENV{PKG_CONFIG_PATH} "${lib}/pkgconfig")
run(CMD ${PKG_CONFIG} --cflags --libs kacct OUT flags)
string(STRIP "${flags}" flags)
if(NOT flags MATCHES "-I${PREFIX}/include" AND NOT flags MATCHES "-I[^ ]*/include")
  message(FATAL_ERROR "pkg-config --cflags: ${flags}")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
run(CMD ${CC} -std=c99 -Wall -Wextra -Werror -pedantic ${san} ${SRC}/consumer.c ${flags} ${san_link} -o ${PREFIX}/consumer-pc)
run(CMD ${PREFIX}/consumer-pc OUT out)
message("pkg-config consumer: ${out}")
if(NOT out MATCHES "^ok - ")
  message(FATAL_ERROR "pkg-config consumer: ${out}")
endif()

# 2. find_package(kacct CONFIG)
run(CMD ${CMAKE_COMMAND} -S ${SRC} -B ${PREFIX}/consumer-build -G "${GENERATOR}" -DCMAKE_PREFIX_PATH=${PREFIX}
        -DCMAKE_C_COMPILER=${CC} "-DCMAKE_C_FLAGS=${SAN}" "-DCMAKE_EXE_LINKER_FLAGS=${SAN} ${SAN_LINK}"
        -DCMAKE_C_COMPILER_LAUNCHER=)
run(CMD ${CMAKE_COMMAND} --build ${PREFIX}/consumer-build)
run(CMD ${PREFIX}/consumer-build/consumer OUT out)
message("CMake consumer: ${out}")
if(NOT out MATCHES "^ok - ")
  message(FATAL_ERROR "CMake consumer: ${out}")
endif()

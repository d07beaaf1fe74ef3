# The kernel's own accounting functions as object files, for test/kernel_diff (label kernel-diff)
# and the fuzz target fuzz/kerneldiff (the sanitizer build): at build time
# tools/kernel-diff/extract.py cuts them out of Debian's linux-source-6.1 / linux-source-6.12
# tarballs into the build tree (once per build, whoever asks first); kdiff_glue.c compiles them
# with the shims in shim/, once per tree and mul_u64_u64_div_u64() flavour. Never committed.
include_guard(GLOBAL)
set(KACCT_LINUX_SOURCE_6_1 "/usr/src/linux-source-6.1.tar.xz" CACHE FILEPATH "Debian linux-source-6.1 tarball")
set(KACCT_LINUX_SOURCE_6_12 "/usr/src/linux-source-6.12.tar.xz" CACHE FILEPATH "Debian linux-source-6.12 tarball")
set(KACCT_KDIFF_DIR ${CMAKE_CURRENT_LIST_DIR})

# What is missing to build them ("" = nothing) in <var>.
function(kacct_kdiff_missing var)
  set(missing "")
  foreach(t ${KACCT_LINUX_SOURCE_6_1} ${KACCT_LINUX_SOURCE_6_12})
    if(NOT EXISTS ${t})
      list(APPEND missing ${t})
    endif()
  endforeach()
  if(NOT KACCT_PYTHON3)
    list(APPEND missing python3)
  endif()
  set(${var} "${missing}" PARENT_SCOPE)
endfunction()

# <var>: the object files (trap handler, 2 trees x 2 flavours of the glue), compiled with the
# extra options given; <prefix> names their libraries.
function(kacct_kdiff_objects var prefix)
  set(extract ${PROJECT_SOURCE_DIR}/tools/kernel-diff/extract.py)
  add_library(${prefix}_trap OBJECT ${KACCT_KDIFF_DIR}/kdiff_trap.c)
  target_compile_options(${prefix}_trap PRIVATE ${ARGN})
  set(libs $<TARGET_OBJECTS:${prefix}_trap>)
  foreach(tree 61 612)
    if(tree STREQUAL "61")
      set(tarball ${KACCT_LINUX_SOURCE_6_1})
      set(tname "6.1.192")
    else()
      set(tarball ${KACCT_LINUX_SOURCE_6_12})
      set(tname "6.12.118")
    endif()
    set(out ${PROJECT_BINARY_DIR}/kernel-diff-src/linux-${tree})
    if(NOT TARGET kdiff_extract_${tree})
      set(gen ${out}/cputime.inc ${out}/div64_generic.inc ${out}/div64_x86.inc ${out}/math64.inc ${out}/macros.h
              ${out}/rename.h ${out}/psi.inc ${out}/psi_tree.h ${out}/tree.h)
      add_custom_command(OUTPUT ${gen}
        COMMAND ${KACCT_PYTHON3} ${extract} --tarball ${tarball} --out ${out}
        DEPENDS ${extract} ${tarball}
        COMMENT "kernel-diff: extracting the accounting functions of ${tarball}")
      add_custom_target(kdiff_extract_${tree} DEPENDS ${gen})
    endif()
    foreach(flavour x86 gen)
      set(lib ${prefix}_k${tree}${flavour})
      add_library(${lib} OBJECT ${KACCT_KDIFF_DIR}/kdiff_glue.c)
      add_dependencies(${lib} kdiff_extract_${tree})
      target_include_directories(${lib} PRIVATE ${KACCT_KDIFF_DIR}/shim ${KACCT_KDIFF_DIR} ${out})
      target_compile_definitions(${lib} PRIVATE HZ=250 KD_PFX=k${tree}${flavour}_ "KD_NAME=\"${tname} ${flavour}\""
                                                $<$<STREQUAL:${flavour},x86>:KD_X86>)
      # The kernel's own C dialect and the flags it is built with; its code is not ours to warn about.
      set_target_properties(${lib} PROPERTIES C_STANDARD 11 C_EXTENSIONS ON)
      target_compile_options(${lib} PRIVATE -w -fno-strict-overflow -fno-strict-aliasing
                                            -fno-delete-null-pointer-checks ${ARGN})
      list(APPEND libs $<TARGET_OBJECTS:${lib}>)
    endforeach()
  endforeach()
  set(${var} ${libs} PARENT_SCOPE)
endfunction()

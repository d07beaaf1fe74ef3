#!/bin/bash -eu
# Builds every libFuzzer target fuzz/fuzz_<x>.cpp as $OUT/fuzz_<x>, with the OSS-Fuzz / ClusterFuzzLite
# environment: $CC/$CXX, $CFLAGS/$CXXFLAGS (sanitizer and coverage flags), $LIB_FUZZING_ENGINE,
# $SRC (the checkout is $SRC/kacct), $WORK (objects) and $OUT (binaries, <target>_seed_corpus.zip,
# <target>.dict, <target>.options). Plain compiler calls, not CMake: the model's sources compiled
# once into one archive, then each target linked against it. tools/fuzz/oss-fuzz-build.sh runs
# this file with the same environment, without Docker.
cd "$SRC/kacct"
version=$(sed -n 's/^project(kacct VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
flags=(-std=c++20 -I. -Icapi/include -DKACCT_CONCRETE_ONLY "-DKACCT_PROJECT_VERSION=\"$version\"")
obj="$WORK/kacct-obj"
mkdir -p "$obj"
# The model (every model/<mech>/*.cpp, the trace library among them), the arch table and the C API.
srcs=(model/*/*.cpp arch/*.cpp capi/kacct.cpp)
pids=()
for s in "${srcs[@]}"; do
  $CXX $CXXFLAGS "${flags[@]}" -c "$s" -o "$obj/$(echo "$s" | tr / _).o" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$(nproc)" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p"; done
rm -f "$WORK/libkacct_fuzz.a"
ar rcs "$WORK/libkacct_fuzz.a" "$obj"/*.o
# fuzz_tracedat also needs the trace.dat reader (tools/tracedat*.c*) and Debian's/Ubuntu's
# libtracecmd and libtraceevent, linked as the shared libraries they are (not instrumented).
td_cflags=$(pkg-config --cflags libtracecmd libtraceevent)
td_libs=$(pkg-config --libs libtracecmd libtraceevent)
tdobj="$WORK/tracedat-obj"
mkdir -p "$tdobj"
# shellcheck disable=SC2086
$CC $CFLAGS $td_cflags -c tools/tracedat_c.c -o "$tdobj/tracedat_c.o"
# shellcheck disable=SC2086
$CXX $CXXFLAGS "${flags[@]}" $td_cflags -c tools/tracedat.cpp -o "$tdobj/tracedat_cpp.o"
for src in fuzz/fuzz_*.cpp; do
  name=$(basename "$src" .cpp)
  x=${name#fuzz_}
  extra=()
  if [ "$x" = tracedat ]; then
    # shellcheck disable=SC2206
    extra=(-Itools "$tdobj/tracedat_cpp.o" "$tdobj/tracedat_c.o" $td_libs)
  fi
  $CXX $CXXFLAGS "${flags[@]}" "$src" -o "$OUT/$name" "${extra[@]}" $LIB_FUZZING_ENGINE "$WORK/libkacct_fuzz.a" -lfmt \
    '-Wl,-rpath,$ORIGIN/lib'
  # The runner image (base-runner) has neither libfmt (every target) nor libtracecmd
  # (fuzz_tracedat; Ubuntu ships no static one): the shared libraries go to $OUT/lib, found
  # through the rpath $ORIGIN/lib (tools/fuzz/oss-fuzz-build.sh checks with ldd).
  mkdir -p "$OUT/lib"
  ldd "$OUT/$name" | awk -v lib="$OUT/lib/" '$1 ~ /^lib(fmt|tracecmd|traceevent|tracefs|zstd)\.so/ && index($3, lib) != 1 {print $3}' |
    xargs -r cp -L -t "$OUT/lib"
  (cd "fuzz/corpus-$x" && rm -f "$OUT/${name}_seed_corpus.zip" && zip -q -r "$OUT/${name}_seed_corpus.zip" .)
  for ext in dict options; do
    if [ -f "fuzz/$name.$ext" ]; then cp "fuzz/$name.$ext" "$OUT/"; fi
  done
done

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
for src in fuzz/fuzz_*.cpp; do
  name=$(basename "$src" .cpp)
  x=${name#fuzz_}
  $CXX $CXXFLAGS "${flags[@]}" "$src" -o "$OUT/$name" $LIB_FUZZING_ENGINE "$WORK/libkacct_fuzz.a" -lfmt
  (cd "fuzz/corpus-$x" && rm -f "$OUT/${name}_seed_corpus.zip" && zip -q -r "$OUT/${name}_seed_corpus.zip" .)
  for ext in dict options; do
    if [ -f "fuzz/$name.$ext" ]; then cp "fuzz/$name.$ext" "$OUT/"; fi
  done
done

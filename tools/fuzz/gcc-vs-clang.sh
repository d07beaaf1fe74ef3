#!/usr/bin/env bash
# Differential: the same fuzz inputs through the trace target built by g++ (build-gcc/, -O2) and by
# clang (build-asan/, ASan+UBSan): with KACCT_FUZZ_DUMP=1 each prints, per input, the kcpustat,
# task times, reads and verdict of its run (or why the input was rejected); the two outputs
# must be byte-identical. Any difference is a compiler-dependent result (undefined or
# implementation-defined behaviour in the model), printed with the first input that shows it.
# Usage: tools/fuzz/gcc-vs-clang.sh [DIR|FILE]...   (default: fuzz/corpus-trace fuzz/corpus-tracemut)
# Builds fuzz_trace_replay in both trees first: g++ in build-gcc/ (the default preset with only
# the unit and fuzz-smoke programs: the default build's labels leave the replayers out), clang in
# build-asan/ (the asan preset must be configured).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
inputs=("$@")
if [ ${#inputs[@]} -eq 0 ]; then inputs=(fuzz/corpus-trace fuzz/corpus-tracemut); fi
if [ ! -f build-gcc/CMakeCache.txt ]; then
  cmake --preset default -B build-gcc -DKACCT_TEST_LABELS="unit;fuzz-smoke" -DKACCT_BENCH=OFF -DKACCT_UNIT_NEEDS_PROVER=OFF > /dev/null
fi
cmake --build build-gcc --target fuzz_trace_replay > /dev/null
cmake --build build-asan --target fuzz_trace_replay > /dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
files=()
for i in "${inputs[@]}"; do
  if [ -d "$i" ]; then while IFS= read -r f; do files+=("$f"); done < <(find "$i" -type f | sort); else files+=("$i"); fi
done
# One process per batch of inputs (the replayer takes many), the same batches for both builds.
printf '%s\n' "${files[@]}" > "$out/list"
split -l 500 "$out/list" "$out/batch."
for b in "$out"/batch.*; do
  mapfile -t batch < "$b"
  KACCT_FUZZ_DUMP=1 build-gcc/fuzz/fuzz_trace_replay "${batch[@]}" >> "$out/gcc" 2> "$out/gcc.err"
  KACCT_FUZZ_DUMP=1 ASAN_OPTIONS=detect_leaks=0 build-asan/fuzz/fuzz_trace_replay "${batch[@]}" >> "$out/clang" 2> "$out/clang.err"
done
if cmp -s "$out/gcc" "$out/clang"; then
  echo "gcc vs clang: ${#files[@]} inputs, $(wc -l < "$out/gcc") lines of output, byte-identical"
  exit 0
fi
echo "gcc vs clang: outputs differ; first difference:"
diff "$out/gcc" "$out/clang" | head -n 20
line=$(cmp "$out/gcc" "$out/clang" | sed -n 's/.* line \([0-9]*\)$/\1/p')
echo "input: $(tail -n +"$line" "$out/gcc" | grep -m1 '^ok ' | cut -d' ' -f2)"
exit 1

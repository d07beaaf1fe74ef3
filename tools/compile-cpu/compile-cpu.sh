#!/usr/bin/env bash
# Where a clean build's CPU goes (docs/performance.md, "Clean build: where the CPU goes"): a
# clean default-preset build in DIR with ccache off, every compile and link run under GNU time
# (this script is its own compiler and linker launcher), then the CPU seconds summed by part.
# Load-independent enough to compare trees on a shared machine (wall times are not).
#   tools/compile-cpu/compile-cpu.sh DIR [JOBS]      build, then print the summary
#   tools/compile-cpu/compile-cpu.sh --sum LOG       print the summary of an earlier LOG
set -euo pipefail
if [ "${1:-}" = "--launch" ]; then  # launcher mode: --launch LOG compiler args...
  log=$2; shift 2
  out="" prev=""
  for a in "$@"; do [ "$prev" = "-o" ] && out=$a; prev=$a; done
  exec /usr/bin/time -a -o "$log" -f "%U %S %e $out" "$@"
fi
summary() {
  awk '{c = $1 + $2; o = $4; g = "other objects"
    if (o ~ /^proofs\//) g = "proofs library"
    else if (o ~ /^tools\/CMakeFiles\/kacct\.dir/) g = "kacct CLI"
    else if (o ~ /^CMakeFiles\/kacct_model|^model\/trace/) g = "model and trace libraries"
    else if (o ~ /^bench\/CMakeFiles/) g = "benchmarks"
    else if (o ~ /^test\/.*\.o$/) g = "test programs"
    else if (o !~ /\.o$/) g = "links"
    s[g] += c; n[g]++; t += c}
    END {for (k in s) printf "%8.1f s %4d  %s\n", s[k], n[k], k; printf "%8.1f s %4d  total (user + sys)\n", t, NR}' "$1" | sort -rn
  echo "costliest steps (user + sys, s):"
  awk '{printf "%8.1f  %s\n", $1 + $2, $4}' "$1" | sort -rn | head -15
}
if [ "${1:-}" = "--sum" ]; then summary "$2"; exit 0; fi
dir=$(realpath -m "${1:?usage: compile-cpu.sh DIR [JOBS]}")
jobs=${2:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
self="$root/tools/compile-cpu/compile-cpu.sh"
log="$dir/cpu.log"
# DIR is removed first: only an earlier build directory (or nothing, or an empty one) is accepted.
if [ -e "$dir" ] && [ ! -f "$dir/CMakeCache.txt" ] && [ -n "$(ls -A "$dir")" ]; then
  echo "compile-cpu.sh: $dir is not empty and not a build directory" >&2
  exit 1
fi
case "$root/" in "$dir"/*) echo "compile-cpu.sh: $dir holds the source tree" >&2; exit 1 ;; esac
rm -rf "$dir"
mkdir -p "$dir"
cd "$root"
l="$self;--launch;$log"
cmake --preset default -B "$dir" -DCMAKE_CXX_COMPILER_LAUNCHER="$l" -DCMAKE_C_COMPILER_LAUNCHER="$l" \
  -DCMAKE_CXX_LINKER_LAUNCHER="$l" -DCMAKE_C_LINKER_LAUNCHER="$l" > "$dir/configure.log"
CCACHE_DISABLE=1 /usr/bin/time -o "$dir/build.time" -f "build: %U user %S sys %e wall" \
  ninja -C "$dir" -j "$jobs" > "$dir/build.log"
cat "$dir/build.time"
summary "$log"

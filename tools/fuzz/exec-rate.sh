#!/usr/bin/env bash
# Per-input cost of the libFuzzer targets: each target runs a fixed number of executions with a
# fixed seed (-runs=N -seed=1, its .options and .dict, the committed seeds read into an empty
# scratch corpus) at nice 15, one process, and its CPU time (user + sys, not wall: the machine is
# shared) is measured. Prints target, executions, CPU seconds, executions per CPU second, and
# libFuzzer's final cov/ft. The same N and seed on two builds compare their per-input cost.
# (MAX_SECONDS, default 300, caps a run by wall time; NICE, default 15; FUZZ_ARGS, more libFuzzer
# options, e.g. FUZZ_ARGS=-entropic=0 to compare one.)
# Usage: tools/fuzz/exec-rate.sh BINDIR RUNS [TARGET...]   (BINDIR: build-asan/fuzz, or an $OUT
# of tools/fuzz/oss-fuzz-build.sh; default targets: every fuzz/fuzz_<x>.cpp, and kerneldiff if built)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bindir=$(cd "$1" && pwd) runs=$2
shift 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for s in "$root"/fuzz/fuzz_*.cpp; do x=$(basename "$s" .cpp); targets+=("${x#fuzz_}"); done
  if [ -x "$bindir/fuzz_kerneldiff" ]; then targets+=(kerneldiff); fi
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf 'target\texecs\tcpu_s\texec/s\tcov\tft\n'
for t in "${targets[@]}"; do
  bin=$bindir/fuzz_$t
  seeds=$root/fuzz/corpus-$t
  [ "$t" = kerneldiff ] && seeds=$root/fuzz/kerneldiff/corpus
  opts=()
  if [ -f "$root/fuzz/fuzz_$t.options" ]; then
    while IFS= read -r l; do
      case $l in *=*) k=${l%%=*} v=${l#*=}; k=${k// /}; v=${v# }; opts+=("-$k=$v") ;; esac
    done < <(grep -v '^\[' "$root/fuzz/fuzz_$t.options")
  fi
  if [ -f "$root/fuzz/fuzz_$t.dict" ]; then opts+=("-dict=$root/fuzz/fuzz_$t.dict"); fi
  rm -rf "$scratch/c" && mkdir -p "$scratch/c"
  /usr/bin/time -f '%U %S' -o "$scratch/time" nice -n "${NICE:-15}" "$bin" -runs="$runs" -seed=1 -max_total_time="${MAX_SECONDS:-300}" -print_final_stats=1 \
    -artifact_prefix="$scratch/" "${opts[@]}" ${FUZZ_ARGS:-} "$scratch/c" "$seeds" > "$scratch/log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/log")
  cpu=$(awk '{printf "%.2f", $1 + $2}' "$scratch/time")
  last=$(grep -E '^#[0-9]+' "$scratch/log" | tail -n 1)
  cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
  eps=$(awk -v e="${execs:-0}" -v c="$cpu" 'BEGIN { printf "%.0f", (c > 0 ? e / c : 0) }')
  printf '%s\t%s\t%s\t%s\t%s\t%s%s\n' "$t" "${execs:-?}" "$cpu" "$eps" "${cov:-?}" "${ft:-?}" \
    "$([ $rc -ne 0 ] && echo "	exit $rc: $(grep -m1 -E 'ERROR|kacct fuzz' "$scratch/log")")"
done

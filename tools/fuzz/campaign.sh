#!/usr/bin/env bash
# One measured libFuzzer campaign of one target (docs/fuzzing.md): the ASan+UBSan binary of the
# sanitizer build (build-asan/fuzz/fuzz_<x>), one process at nice 15 (a shared machine), for a
# wall-clock budget, on a scratch copy of the committed corpus; then the grown corpus merged
# (minimised) into DIR/min. Prints one table row: target, seconds (the wall budget), CPU seconds
# (user + sys of the fuzzing process), executions, exec/s (wall, libFuzzer's), exec per CPU
# second, edge coverage (cov:) and features (ft:), corpus before -> after, crashes (artifacts in
# DIR). Extra options such as -runs=10000000 end a campaign at that many executions.
# Usage: tools/fuzz/campaign.sh TARGET SECONDS [DIR] [libFuzzer options...]   (DIR default build-asan/campaign/TARGET)
# FUZZ_BIN_DIR: where fuzz_<x> is (default build-asan/fuzz; an $OUT of tools/fuzz/oss-fuzz-build.sh
# with SANITIZER=address,undefined is the same ASan+UBSan build). The target's .options and .dict
# are passed; TARGET kerneldiff is fuzz/kerneldiff/ (its corpus fuzz/kerneldiff/corpus).
# ASAN_OPTIONS from the environment are added after detect_leaks=1 (to compare a runtime option;
# docs/fuzzing.md "Fourth round" says which were measured and what each gives up). The targets'
# own defaults (__asan_default_options, e.g. fuzz_tracedat's allocation cap) apply under both.
# FUZZ_SEEDS: the corpus a campaign starts from (default the committed one); a previous
# campaign's DIR/min continues it (its executions add up; docs/fuzzing.md). FUZZ_NICE: the
# niceness (default 15), which fuzz_tracedat's reader server and readers inherit.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
t=$1 secs=$2
dir=${3:-$root/build-asan/campaign/$t}
shift $(( $# >= 3 ? 3 : 2 ))
mkdir -p "$dir" && dir=$(cd "$dir" && pwd)
bin=${FUZZ_BIN_DIR:-$root/build-asan/fuzz}/fuzz_$t
[ -x "$bin" ] || { echo "campaign.sh: no fuzzer $bin (build-asan: ninja -C build-asan fuzz/fuzz_$t)" >&2; exit 2; }
seeds=$root/fuzz/corpus-$t
[ "$t" = kerneldiff ] && seeds=$root/fuzz/kerneldiff/corpus
seeds=${FUZZ_SEEDS:-$seeds}
nice=${FUZZ_NICE:-15}
[ -d "$seeds" ] && [ -n "$(ls -A "$seeds")" ] || { echo "campaign.sh: no corpus in $seeds" >&2; exit 2; }
case $(cd "$seeds" && pwd)/ in "$dir"/*) echo "campaign.sh: $seeds is inside $dir, which is emptied first: copy it or use another DIR" >&2; exit 2 ;; esac
rm -rf "$dir" && mkdir -p "$dir/corpus" "$dir/min" && cp "$seeds"/* "$dir/corpus/"
opts=()
if [ -f "$root/fuzz/fuzz_$t.options" ]; then
  while IFS= read -r l; do
    case $l in *=*) k=${l%%=*} v=${l#*=}; k=${k// /}; v=${v# }; [ "$k" = dict ] && v=$root/fuzz/$v; opts+=("-$k=$v") ;; esac
  done < <(grep -v '^\[' "$root/fuzz/fuzz_$t.options")
fi
if [ -f "$root/fuzz/fuzz_$t.dict" ]; then opts+=("-dict=$root/fuzz/fuzz_$t.dict"); fi
before=$(find "$dir/corpus" -type f | wc -l)
(cd "$dir" && ASAN_OPTIONS=detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS} /usr/bin/time -f '%U %S' -o cpu nice -n "$nice" "$bin" -max_total_time="$secs" \
  -print_final_stats=1 -artifact_prefix="$dir/" "${opts[@]}" "$@" corpus > log 2>&1)
rc=$?
cpu=$(tail -n 1 "$dir/cpu" | awk '{printf "%.1f", $1 + $2}')  # time prints an exit-status line first when the fuzzer stops non-zero
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log")
last=$(grep -E '^#[0-9]+' "$dir/log" | tail -n 1)
cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
crashes=$(find "$dir" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' -o -maxdepth 1 -name 'timeout-*' -o -maxdepth 1 -name 'oom-*' | wc -l)
(cd "$dir" && nice -n "$nice" "$bin" -merge=1 "${opts[@]}" min corpus > merge.log 2>&1)
after=$(find "$dir/min" -type f | wc -l)
cpueps=$(awk -v e="${execs:-0}" -v c="$cpu" 'BEGIN { printf "%.0f", (c > 0 ? e / c : 0) }')
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s -> %s (%s)\t%s\trc=%s\n' "$t" "$secs" "$cpu" "${execs:-?}" "${eps:-?}" "$cpueps" \
  "${cov:-?}" "${ft:-?}" \
  "$before" "$after" "$(du -sh "$dir/min" | cut -f1)" "$crashes" "$rc"

#!/usr/bin/env bash
# Record one run of the conformance workload twice at once: with `perf record` (as record.sh) and
# with ftrace into trace-cmd's trace.dat, the same tracepoints, so that both inputs of
# `kacct perf-convert` come from one recording (docs/perf.md, "trace-cmd input").
#   tools/record-perf/record-tracedat.sh OUTDIR MODE [kacct-workload options]
# OUTDIR gets full.perf.xz (the whole `perf script` text, not reduced), trace.dat.xz,
# trace.dat.tgids (tracefs saved_tgids: trace.dat has no thread groups), values.jsonl, meta.json.
# ftrace is set up by hand and saved with `trace-cmd extract`: `trace-cmd record` insists on
# writing /proc/sys/kernel/ftrace_enabled, which a container may refuse. Its clock is `perf`
# (perf's own), and the stacktrace trigger gives the timer interrupt its kernel stack, the
# callchain perf takes. Every tracefs setting changed is restored on exit. Needs root, linux-perf,
# trace-cmd, xz-utils and a built tree (KACCT_BUILD, default ./build). Not run by CI.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,6p "$0"; exit 2; }
out=$1; shift
build=${KACCT_BUILD:-$(dirname "$0")/../../build}
workload=$build/tools/workload/kacct-workload
here=$(cd "$(dirname "$0")" && pwd)
for c in perf trace-cmd xz; do command -v $c > /dev/null || { echo "record-tracedat.sh: $c not found" >&2; exit 1; }; done
[ -x "$workload" ] || { echo "record-tracedat.sh: build first (./build.sh)" >&2; exit 1; }
T=/sys/kernel/tracing
[ -w $T/trace_clock ] || { echo "record-tracedat.sh: $T not writable (root, tracefs)" >&2; exit 1; }
. "$here/events.sh"
mkdir -p "$out"
tmp=$(mktemp -d)
clock0=$(sed -n 's/.*\[\(.*\)\].*/\1/p' $T/trace_clock) size0=$(cat $T/buffer_size_kb)
tgid0=$(cat $T/options/record-tgid) on0=$(cat $T/tracing_on)
timer_ev=$T/events/${timer_tracepoint/://}
restore() {
	echo 0 > $T/tracing_on
	echo '!stacktrace' > "$timer_ev/trigger" 2> /dev/null || true
	for e in "${tracepoints[@]}" "$timer_tracepoint"; do echo 0 > "$T/events/${e/://}/enable"; done
	echo "$clock0" > $T/trace_clock
	echo "$tgid0" > $T/options/record-tgid
	echo "$size0" > $T/buffer_size_kb
	echo > $T/trace
	echo "$on0" > $T/tracing_on
	rm -rf "$tmp"
}
trap restore EXIT
echo 0 > $T/tracing_on
echo > $T/trace
echo perf > $T/trace_clock
echo 1 > $T/options/record-tgid
echo 65536 > $T/buffer_size_kb
for e in "${tracepoints[@]}" "$timer_tracepoint"; do echo 1 > "$T/events/${e/://}/enable"; done
echo stacktrace > "$timer_ev/trigger"
events=$(IFS=,; echo "${tracepoints[*]}")
echo 1 > $T/tracing_on
perf record -q -a -m 4096 --kernel-callchains -o "$tmp/perf.data" -e "$events" \
  -e "$timer_tracepoint/call-graph=fp/" -- "$workload" "$@" > "$out/values.jsonl"
echo 0 > $T/tracing_on
trace-cmd extract -o "$tmp/trace.dat" > "$tmp/extract.log" 2>&1 || { cat "$tmp/extract.log" >&2; exit 1; }
cp $T/saved_tgids "$out/trace.dat.tgids"
grep -h 'overrun: [1-9]' $T/per_cpu/cpu*/stats && echo "record-tracedat.sh: ftrace lost events (see above)" >&2
perf script -i "$tmp/perf.data" --show-lost-events --ns -F comm,pid,tid,cpu,time,event,trace,ip,sym \
  2> /dev/null | xz -9 > "$out/full.perf.xz"
# trace-cmd compresses its sections itself; xz of the plain file is a third smaller
trace-cmd convert -i "$tmp/trace.dat" -o "$tmp/plain.dat" --compression none > /dev/null 2>&1
xz -9 -c "$tmp/plain.dat" > "$out/trace.dat.xz"
chmod 644 "$out/trace.dat.tgids"
pid=$(head -1 "$out/values.jsonl" | sed 's/.*"pid": \([0-9]*\).*/\1/')
reads=$(python3 - "$out/values.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])][1:]
print(" ".join(f'{r["kind"]}:{r["tid"]}@{r["marker"]}' if r["kind"] == "task_stat" else f'{r["kind"]}@{r["marker"]}' for r in lines))
PY
)
echo "{\"pid\": $pid, \"args\": \"$*\", \"kernel\": \"$(uname -r)\", \"reads\": \"$reads\", \"recorded\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}" > "$out/meta.json"
echo "recorded $out: $(xz -dc "$out/full.perf.xz" | wc -l) perf lines, trace.dat $(stat -c %s "$tmp/trace.dat") bytes"

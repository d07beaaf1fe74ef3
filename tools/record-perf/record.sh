#!/usr/bin/env bash
# Record the conformance workload under `perf record` on this machine and keep a reduced,
# xz-compressed `perf script` text with what the kernel reported (docs/conformance.md).
#   tools/record-perf/record.sh OUTDIR MODE [kacct-workload options, e.g. -t 1 -n 10]
# Needs root (perf record -a with tracepoints and kernel callchains), linux-perf, xz-utils,
# python3, and a built tree (KACCT_BUILD, default ./build). Not run by CI.
# Tick steal: with bpftrace (and BTF) the steal the kernel took out of each tick is recorded
# too (steal.bt, steal.sh; docs/perf.md, "Steal"); KACCT_STEAL=0 records without it.
# OUTDIR/identify: what `kacct identify --root` reads; meta.json's config is what it names.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,6p "$0"; exit 2; }
out=$1; shift
build=${KACCT_BUILD:-$(dirname "$0")/../../build}
workload=$build/tools/workload/kacct-workload
kacct=$build/tools/kacct
here=$(cd "$(dirname "$0")" && pwd)
command -v perf >/dev/null || { echo "record.sh: perf not found (apt-get install linux-perf)" >&2; exit 1; }
[ -x "$workload" ] && [ -x "$kacct" ] || { echo "record.sh: build first (./build.sh)" >&2; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d)
here_steal=$here
. "$here/steal.sh"
trap 'steal_stop >/dev/null 2>&1; rm -rf "$tmp"' EXIT

. "$here/events.sh"
events=$(IFS=,; echo "${tracepoints[*]}")
steal() { awk '/^cpu /{print $9}' /proc/stat; }   # USER_HZ ticks, all CPUs
# Tick steal: steal.bt runs for the whole recording (started first, stopped after perf).
steal_start
steal0=$(steal)
# Large per-CPU buffers (-m) so that perf does not lose events; losses are recorded anyway
# (--show-lost-events) and reads after a loss are not compared.
perf record -q -a -m 4096 --kernel-callchains -o "$tmp/perf.data" -e "$events" \
  -e "$timer_tracepoint/call-graph=fp/" -- "$workload" "$@" > "$out/values.jsonl"
steal1=$(steal)
steal_stop
pid=$(head -1 "$out/values.jsonl" | sed 's/.*"pid": \([0-9]*\).*/\1/')
perf script -i "$tmp/perf.data" --show-lost-events --ns -F comm,pid,tid,cpu,time,event,trace,ip,sym \
  2>/dev/null > "$tmp/full.txt"
python3 "$here/reduce.py" "$pid" $steal_txt < "$tmp/full.txt" | xz -9 > "$out/trace.perf.xz"
# Tick steal in ns: all ticks seen by steal.bt, and the ticks of the recorded process.
tick_steal=$(steal_all_json)
own_steal=$(steal_kept_json "$out/trace.perf.xz")
identify_input "$out"
machine=$(identify_meta "$out")
reads=$(python3 - "$out/values.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])][1:]
print(" ".join(f'{r["kind"]}:{r["tid"]}@{r["marker"]}' if r["kind"] == "task_stat" else f'{r["kind"]}@{r["marker"]}' for r in lines))
PY
)
cat > "$out/meta.json" <<JSON
{"pid": $pid, "args": "$*", "kernel": "$(uname -r)", $machine,
 "reads": "$reads", "steal_ticks": $((steal1 - steal0)),
 "tick_steal_all": $tick_steal, "tick_steal_recorded": $own_steal,
 "recorded": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "full_lines": $(wc -l < "$tmp/full.txt")}
JSON
args=()
for r in $reads; do args+=(--read "$r"); done
"$kacct" perf-replay "$out/trace.perf.xz" --pid "$pid" "${args[@]}" --json > "$out/predicted.json" || true
echo "recorded $out: pid $pid, $(wc -l < "$tmp/full.txt") perf lines, $(xz -l --robot "$out/trace.perf.xz" | awk '/^totals/{print $4}') bytes compressed"

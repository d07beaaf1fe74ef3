#!/usr/bin/env bash
# Record the conformance workload under `perf record` on this machine and keep a reduced,
# xz-compressed `perf script` text with what the kernel reported (docs/conformance.md).
#   tools/record-perf/record.sh OUTDIR MODE [kacct-workload options, e.g. -t 1 -n 10]
# Needs root (perf record -a with tracepoints and kernel callchains), linux-perf, xz-utils,
# python3, and a built tree (KACCT_BUILD, default ./build). Not run by CI.
# Tick steal: with bpftrace (and BTF) the steal the kernel took out of each tick is recorded
# too (steal.bt; docs/perf.md, "Steal"); KACCT_STEAL=0 records without it. Room for 262144
# ticks (HZ * CPUs * seconds of recording); ticks beyond are not known (reads after: unverifiable).
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
bt_pid=
trap 'rm -rf "$tmp"; [ -z "$bt_pid" ] || kill -INT $bt_pid 2>/dev/null || true' EXIT

events=sched:sched_switch,sched:sched_stat_runtime,sched:sched_process_fork,sched:sched_process_exit
events+=,raw_syscalls:sys_enter,raw_syscalls:sys_exit,irq:irq_handler_entry,irq:irq_handler_exit
events+=,irq:softirq_entry,irq:softirq_exit,timer:hrtimer_expire_entry
steal() { awk '/^cpu /{print $9}' /proc/stat; }   # USER_HZ ticks, all CPUs
# Tick steal: steal.bt runs for the whole recording (started first, stopped after perf).
if [ "${KACCT_STEAL:-1}" != 0 ]; then
  command -v bpftrace >/dev/null || { echo "record.sh: bpftrace not found (apt-get install bpftrace; or KACCT_STEAL=0)" >&2; exit 1; }
  tick_fn=tick_nohz_handler
  grep -q ' tick_nohz_handler$' /proc/kallsyms || tick_fn=tick_sched_timer
  { printf 'BEGIN\n{\n  printf("ready\\n");\n}\n'; sed "s/TICK_FN/$tick_fn/" "$here/steal.bt"; } > "$tmp/steal.bt"
  BPFTRACE_MAP_KEYS_MAX=262144 stdbuf -oL bpftrace "$tmp/steal.bt" > "$tmp/steal.txt" 2> "$tmp/steal.err" &
  bt_pid=$!
  for _ in $(seq 600); do grep -q '^ready$' "$tmp/steal.txt" && break; kill -0 $bt_pid 2>/dev/null || break; sleep 0.1; done
  grep -q '^ready$' "$tmp/steal.txt" || { echo "record.sh: bpftrace did not start:" >&2; cat "$tmp/steal.err" >&2; exit 1; }
fi
steal0=$(steal)
# Large per-CPU buffers (-m) so that perf does not lose events; losses are recorded anyway
# (--show-lost-events) and reads after a loss are not compared.
perf record -q -a -m 4096 --kernel-callchains -o "$tmp/perf.data" -e "$events" \
  -e 'irq_vectors:local_timer_entry/call-graph=fp/' -- "$workload" "$@" > "$out/values.jsonl"
steal1=$(steal)
steal_arg=()
if [ -n "$bt_pid" ]; then
  # SIGINT makes bpftrace print the map and exit; one was seen lost once: repeated every 5 s.
  for _ in $(seq 12); do
    kill -INT $bt_pid 2>/dev/null || break
    for _ in $(seq 50); do kill -0 $bt_pid 2>/dev/null || break; sleep 0.1; done
  done
  wait $bt_pid || true
  bt_pid_done=$bt_pid
  bt_pid=
  steal_arg=("$tmp/steal.txt")
  grep -i 'lost' "$tmp/steal.err" >&2 || true   # bpftrace reports lost output events on stderr
fi
pid=$(head -1 "$out/values.jsonl" | sed 's/.*"pid": \([0-9]*\).*/\1/')
perf script -i "$tmp/perf.data" --show-lost-events --ns -F comm,pid,tid,cpu,time,event,trace,ip,sym \
  2>/dev/null > "$tmp/full.txt"
python3 "$here/reduce.py" "$pid" "${steal_arg[@]}" < "$tmp/full.txt" | xz -9 > "$out/trace.perf.xz"
# Tick steal in ns: all ticks seen by steal.bt, and the ticks of the recorded process.
tick_steal=$([ -n "${bt_pid_done:-}" ] && awk '/^@steal\[/{n++; s+=$NF} END{printf "{\"ticks\": %d, \"ns\": %d}", n, s}' "$tmp/steal.txt" || echo null)
own_steal=$(xz -dc "$out/trace.perf.xz" | awk '/kacct:tick_steal:/{n++; sub(/.*steal=/, ""); s+=$0} END{printf "{\"ticks\": %d, \"ns\": %d}", n, s}')
reads=$(python3 - "$out/values.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])][1:]
print(" ".join(f'{r["kind"]}:{r["tid"]}@{r["marker"]}' if r["kind"] == "task_stat" else f'{r["kind"]}@{r["marker"]}' for r in lines))
PY
)
cat > "$out/meta.json" <<JSON
{"pid": $pid, "args": "$*", "kernel": "$(uname -r)", "hz": 250, "config": "6.12-tick-steal-hz250",
 "cpu": "x86-64", "reads": "$reads", "steal_ticks": $((steal1 - steal0)),
 "tick_steal_all": $tick_steal, "tick_steal_recorded": $own_steal,
 "recorded": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "full_lines": $(wc -l < "$tmp/full.txt")}
JSON
args=()
for r in $reads; do args+=(--read "$r"); done
"$kacct" perf-replay "$out/trace.perf.xz" --pid "$pid" "${args[@]}" --json > "$out/predicted.json" || true
echo "recorded $out: pid $pid, $(wc -l < "$tmp/full.txt") perf lines, $(xz -l --robot "$out/trace.perf.xz" | awk '/^totals/{print $4}') bytes compressed"

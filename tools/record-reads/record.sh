#!/usr/bin/env bash
# Record an unmodified program: the perf trace kacct predicts from, and every CPU-time read the
# program made with what the kernel returned to it (strace -ff -v -y), no markers needed
# (docs/oracle.md, docs/conformance.md).
#   tools/record-reads/record.sh OUTDIR CMD [ARGS...]
# Writes OUTDIR/trace.perf.xz (the process tree's perf script text, reduced, with the steal of
# each tick as tools/record-perf/record.sh records it), OUTDIR/reads.jsonl
# (tools/record-reads/decode.py), OUTDIR/identify/ (`kacct identify --root` input) and
# OUTDIR/meta.json (its "config" is identify's); then replay:
#   kacct perf-replay OUTDIR/trace.perf.xz --recorded OUTDIR/reads.jsonl
# Needs root, linux-perf, strace, bpftrace (KACCT_STEAL=0: without steal), xz-utils, python3, and
# a built kacct (KACCT_BUILD, default ./build). Not run by CI.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,13p "$0"; exit 2; }
out=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
for t in perf strace xz python3; do
  command -v "$t" >/dev/null || { echo "record-reads: $t not found" >&2; exit 1; }
done
kacct=${KACCT_BUILD:-$here/../../build}/tools/kacct
[ -x "$kacct" ] || { echo "record-reads: build first (./build.sh)" >&2; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d)
here_steal=$here/../record-perf
. "$here_steal/steal.sh"
trap 'steal_stop >/dev/null 2>&1; rm -rf "$tmp"' EXIT

# The tracepoints are those of tools/record-perf/record.sh, taken from it so that the two
# recordings stay the same (its `events=` lines); this list is the fallback.
events=
eval "$(grep -E '^events\+?=' "$here/../record-perf/record.sh" 2>/dev/null)" || events=
if [ -z "$events" ]; then
  events=sched:sched_switch,sched:sched_stat_runtime,sched:sched_process_fork,sched:sched_process_exit
  events+=,raw_syscalls:sys_enter,raw_syscalls:sys_exit,irq:irq_handler_entry,irq:irq_handler_exit
  events+=,irq:softirq_entry,irq:softirq_exit,timer:hrtimer_expire_entry
fi
steal() { awk '/^cpu /{print $9}' /proc/stat; }   # USER_HZ ticks, all CPUs
# strace stops the program only at the syscalls it traces (--seccomp-bpf); read is traced
# whole so that every thread's read() calls are counted the same way as in the perf trace.
# wait4: the rusage it returns with a reap (the child's times, RUSAGE_BOTH).
trace=getrusage,times,clock_gettime,read,wait4,clock_nanosleep
steal_start
steal0=$(steal)
rc=0
perf record -q -a -m 4096 --kernel-callchains -o "$tmp/perf.data" -e "$events" \
  -e 'irq_vectors:local_timer_entry/call-graph=fp/' -- \
  strace -ff -qq -v -y -s 256 --seccomp-bpf -e trace=$trace -e signal=none -o "$tmp/st" \
  sh -c 'echo $$ > "$0"; exec "$@"' "$tmp/root" "$@" > "$out/output.txt" 2>&1 || rc=$?
steal1=$(steal)
steal_stop
root=$(cat "$tmp/root")
perf script -i "$tmp/perf.data" --show-lost-events --ns -F comm,pid,tid,cpu,time,event,trace,ip,sym \
  2>/dev/null > "$tmp/full.txt"
python3 "$here/../record-perf/reduce.py" --tree "$root" $steal_txt < "$tmp/full.txt" | xz -9 > "$out/trace.perf.xz"
python3 "$here/decode.py" "$root" "$tmp"/st.* > "$out/reads.jsonl"
identify_input "$out"
machine=$(identify_meta "$out")
tick_steal=$(steal_kept_json "$out/trace.perf.xz")
lost=$(grep -c 'PERF_RECORD_LOST' "$tmp/full.txt" || true)   # reads after a loss: unverifiable
cat > "$out/meta.json" <<JSON
{"root": $root, "command": "$*", "exit": $rc, "kernel": "$(uname -r)", $machine,
 "steal_ticks": $((steal1 - steal0)), "tick_steal_all": $(steal_all_json), "tick_steal_recorded": $tick_steal,
 "recorded": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "full_lines": $(wc -l < "$tmp/full.txt"),
 "perf_lost_records": $lost, "reads": $(($(wc -l < "$out/reads.jsonl") - 1))}
JSON
echo "recorded $out: root $root, exit $rc, $(($(wc -l < "$out/reads.jsonl") - 1)) reads," \
  "$(xz -l --robot "$out/trace.perf.xz" | awk '/^totals/{print $4}') bytes compressed, steal $((steal1 - steal0)) ticks, tick steal $tick_steal, $lost perf loss records"

#!/bin/sh
# Guest side of record.sh (runs from the 9p share). /share/params sets:
#   MODES="spin syscall ..." SECONDS_PER_RUN=1 READS=12 KINDS=... CPU=1 CPUS= PERF_MMAP=16M
# For each mode: kprobes from /share/probes.txt, perf record on every CPU the workload runs on
# (CPUS, default $CPU, and CPU 0 too for the migrate mode; perf itself stays on CPU 0), the
# workload pinned to $CPU; its JSON output, /proc/stat before/after, perf.data.
set -u
. /share/params
O=/share/out
T=/sys/kernel/tracing
mkdir -p $O
{
	echo "uname=$(uname -r) $(uname -m)"
	echo "cmdline=$(cat /proc/cmdline)"
	echo "nohz_full=$(cat /sys/devices/system/cpu/nohz_full)"
	echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	dmesg | grep -iE 'NO_HZ|sched_clock|clocksource|tsc' | head -20
} > $O/guest-info.txt
# `kacct identify --root OUTDIR/out/identify` input (record.sh adds boot/config-*).
mkdir -p $O/identify/proc/sys/kernel
for f in sys/kernel/osrelease version cmdline cpuinfo; do cat /proc/$f > $O/identify/proc/$f; done
echo 0 > /proc/sys/kernel/kptr_restrict
echo -1 > /proc/sys/kernel/perf_event_paranoid
cat /proc/kallsyms > $O/kallsyms
while read -r line; do
	echo "$line" >> $T/kprobe_events || echo "kprobe failed: $line"
done < /share/probes.txt
cat $T/kprobe_events > $O/kprobe_events.txt
EV=""
for e in $(sed -n 's/^p:\(kprobes\/[a-z_]*\) .*/\1/p' $T/kprobe_events); do EV="$EV -e ${e%%/*}:${e#*/}"; done
for e in sched:sched_switch sched:sched_wakeup sched:sched_wakeup_new sched:sched_stat_runtime \
	sched:sched_process_fork sched:sched_process_exit raw_syscalls:sys_enter raw_syscalls:sys_exit \
	timer:tick_stop $TIMER_EVENTS; do
	grep -q "^${e}$" $T/available_events 2>/dev/null || [ -d "$T/events/${e%%:*}/${e#*:}" ] && EV="$EV -e $e"
done
echo "$EV" > $O/perf-events.txt
for mode in $MODES; do
	cat /proc/stat > $O/$mode.proc_stat.before
	C=${CPUS:-$CPU}
	case $mode in migrate*) C=${CPUS:-0,$CPU} ;; esac
	echo "$mode: perf record -C $C"
	taskset -c 0 perf record -q -m "${PERF_MMAP:-16M}" -C "$C" $EV -o /tmp/$mode.perf.data -- \
		/bin/kacct-workload "$mode" -t "$SECONDS_PER_RUN" -n "$READS" -k "$KINDS" -c "$CPU" \
		> $O/$mode.workload.jsonl 2> $O/$mode.record.err
	echo "$mode: rc=$?"
	cat /proc/stat > $O/$mode.proc_stat.after
	cp /tmp/$mode.perf.data $O/ && rm -f /tmp/$mode.perf.data
done

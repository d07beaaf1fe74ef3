#!/bin/sh
# Guest side of reads-record.sh (runs from the 9p share; guest-job.sh's set-up, other runs): each
# MODE is an unmodified program (an LTP test or a stress-ng run, below) run pinned to CPU $CPU
# (nohz_full: gen vtime) under strace -ff -v -y (tools/record-reads/record.sh's options) and
# perf record -C $CPU with the gen vtime kprobes; strace and perf's own work stays off the
# program's CPU only for perf (strace is its parent and runs beside it on $CPU).
# Writes /share/out/MODE.{perf.data,output.txt,root,rc} and /share/out/MODE.strace/st.TID. The
# programs and strace's options: reads-programs.sh (reads-record.sh puts it beside this job).
set -u
. /share/params
O=/share/out
T=/sys/kernel/tracing
mkdir -p $O /dev/shm
mount -t tmpfs shm /dev/shm
{
	echo "uname=$(uname -r) $(uname -m)"
	echo "cmdline=$(cat /proc/cmdline)"
	echo "nohz_full=$(cat /sys/devices/system/cpu/nohz_full)"
	echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	echo "strace=$(strace -V | head -1)"
	echo "stress-ng=$(stress-ng --version 2>&1 | head -1)"
} > $O/guest-info.txt
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
export PATH=/ltp:/usr/bin:/bin:/usr/sbin:/sbin TMPDIR=/tmp LTP_TIMEOUT_MUL=${LTP_TIMEOUT_MUL:-30}
. /share/reads-programs.sh
for mode in $MODES; do
	reads_begin $mode $O
	echo "$mode: $cmd"
	# perf's -C: the program's CPU only; perf itself reads its buffers from CPU 0.
	taskset -c 0 perf record -q -m "${PERF_MMAP:-16M}" -C "$CPU" $EV -o /tmp/$mode.perf.data -- \
		taskset -c "$CPU" $READS_STRACE -o $S/st sh -c 'echo $$ > "$0"; exec "$@"' $S/root $cmd > $O/$mode.output.txt 2>&1
	echo "$?" > $O/$mode.rc
	echo "$mode: rc=$(cat $O/$mode.rc)"
	reads_end $mode $O
	cp /tmp/$mode.perf.data $O/ && rm -f /tmp/$mode.perf.data
done

#!/bin/sh
# Guest side of reads-record.sh (runs from the 9p share; guest-job.sh's set-up, other runs): each
# MODE is an unmodified program (an LTP test or a stress-ng run, below) run pinned to CPU $CPU
# (nohz_full: gen vtime) under strace -ff -v -y (tools/record-reads/record.sh's options) and
# perf record -C $CPU with the gen vtime kprobes; strace and perf's own work stays off the
# program's CPU only for perf (strace is its parent and runs beside it on $CPU).
# Writes /share/out/MODE.{perf.data,output.txt,root,rc} and /share/out/MODE.strace/st.TID.
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
for mode in $MODES; do
	case $mode in
	stress-cpu) cmd="stress-ng --cpu 1 --timeout 1s --metrics-brief" ;;
	stress-fork) cmd="stress-ng --fork 1 --fork-ops 20 --timeout 2s --metrics-brief" ;;
	stress-wait) cmd="stress-ng --wait 1 --wait-ops 10 --timeout 2s --metrics-brief" ;;
	stress-get) cmd="stress-ng --get 1 --get-ops 10 --metrics-brief" ;;
	*) cmd=./$mode ;;   # from /ltp: LTP copies resources (getrusage03_child) from where it started
	esac
	cd /ltp
	S=/tmp/$mode.strace
	mkdir -p $S
	echo "$cmd" > $O/$mode.cmd
	echo "$mode: $cmd"
	# perf's -C: the program's CPU only; perf itself reads its buffers from CPU 0.
	taskset -c 0 perf record -q -m "${PERF_MMAP:-16M}" -C "$CPU" $EV -o /tmp/$mode.perf.data -- \
		taskset -c "$CPU" strace -ff -qq -v -y -s 256 --seccomp-bpf -e trace=getrusage,times,clock_gettime,read,wait4,clock_nanosleep \
		-e signal=none -o $S/st sh -c 'echo $$ > "$0"; exec "$@"' $S/root $cmd > $O/$mode.output.txt 2>&1
	echo "$?" > $O/$mode.rc
	echo "$mode: rc=$(cat $O/$mode.rc)"
	cp $S/root $O/$mode.root
	mkdir -p $O/$mode.strace && cp $S/st.* $O/$mode.strace/
	cp /tmp/$mode.perf.data $O/ && rm -rf /tmp/$mode.perf.data $S
done

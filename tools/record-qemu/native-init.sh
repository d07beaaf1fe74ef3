#!/bin/busybox sh
# /init of the native vtime recording guest (native-record.sh builds the initramfs with
# /probes.txt and /native-work). Probes every native accounting hook on both CPUs (kprobe and
# kretprobe: the paca's cpu_accounting_data, kernel_cpustat, the task's times), the sched
# tracepoints and trace_marker, with the timebase as the trace clock (ppc-tb), while
# native-work runs on CPU 1 (a spinner keeps CPU 0 half busy). The ftrace text goes
# gzip+uuencode to /dev/hvc1 (a second sPAPR VTY), framed by "==== NAME" sections; console lines
# start with "NAT:".
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tracefs tracefs /sys/kernel/tracing
T=/sys/kernel/tracing
say() { echo "NAT: $*"; }
arg() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" /proc/cmdline; }
MS=$(arg native_phase_ms)
: "${MS:=40}"
taskset -p 1 $$ > /dev/null
say "kernel $(uname -r) cpus $(cat /sys/devices/system/cpu/online) phase_ms $MS"
say "config $(zcat /proc/config.gz | grep -E '^CONFIG_(VIRT_CPU_ACCOUNTING_NATIVE|ARCH_HAS_SCALED_CPUTIME|PPC_SPLPAR|HZ)=' | tr '\n' ' ')"
say "trace clocks: $(cat $T/trace_clock)"
grep -E 'purr|tbr|dispatch' /proc/powerpc/lparcfg 2> /dev/null | sed 's/^/NAT: lparcfg /'
O=/dev/hvc1
[ -e $O ] || say "no $O"
sect() { echo "==== $1" > $O; }
# per-CPU offset of kernel_cpustat from r13 (a fetch offset is 32-bit): r13-offsets.sh
. /kcs.env
. /r13-offsets.sh
r13_offsets vtime_flush "$DOFF"
for c in 0 1; do
	eval "d=\${D$c:-}"
	[ -n "$d" ] || continue
	k=$((KCS_S + d))
	[ $k -ge -2147483648 ] && [ $k -lt 2147483640 ] || say "kernel_cpustat of cpu $c is $k from r13: out of range"
	say "cpu $c kcs_from_r13 $k"
	eval "K$c=$k"
done
while read -r l; do
	case $l in
	*@KCS*)
		for c in 0 1; do
			eval "k=\$K$c"
			n=$(echo "$l" | sed "s|^\([pr]\):kacct/\([a-z_]*\) .*|\2$c|")
			echo "$l" | sed -e "s|^\([pr]\):kacct/\([a-z_]*\) |\1:kacct/\2$c |" -e "s/@KCS0@/$k/" \
				-e "s/@KCS1@/$((k + 8))/" -e "s/@KCS2@/$((k + 16))/" -e "s/@KCS3@/$((k + 24))/" \
				-e "s/@KCS4@/$((k + 32))/" -e "s/@KCS5@/$((k + 40))/" -e "s/@KCS6@/$((k + 48))/" \
				-e "s/@KCS7@/$((k + 56))/" >> $T/kprobe_events || say "kprobe failed: $l"
			echo "cpu == $c" > $T/events/kacct/$n/filter
		done ;;
	*) echo "$l" >> $T/kprobe_events || say "kprobe failed: $l" ;;
	esac
done < /probes.txt
grep . $T/error_log 2> /dev/null | sed "s/^/NAT: error_log /"
echo ppc-tb > $T/trace_clock || say "no ppc-tb trace clock"
echo 16384 > $T/buffer_size_kb
echo 1 > $T/options/record-tgid
# reads_modes=A,B,...: unmodified programs (reads-programs.sh's names) instead of native-work, each
# pinned to CPU 1 under strace -ff -v -y (tools/record-reads/record.sh's options) with the probes,
# the sched tracepoints (sched_stat_runtime: update_curr()'s delta, the CPU clocks' sum_exec_runtime)
# and the raw syscalls a read is found in (read, wait4, getrusage, times,
# clock_gettime, clock_nanosleep, waitid); no spinner on CPU 0. Per program the sections
# "tasks MODE" and "trace MODE"; at the end "out" (tar+gzip: MODE.{strace/,root,rc,cmd,output.txt},
# guest-info.txt).
MODES=$(sed -n 's/.*reads_modes=\([^ ]*\).*/\1/p' /proc/cmdline | tr , ' ')
tasks() {
	for d in /proc/[0-9]*; do
		[ -r $d/stat ] || continue
		s=$(cat $d/stat 2> /dev/null) || continue
		rest=${s##*) }
		set -- $rest
		echo "${d#/proc/} $7 $(sed -n 's/^Tgid:\t*//p' $d/status) ${s#*(}" | sed 's/) .*//' > $O
	done
}
if [ -n "$MODES" ]; then
	. /reads-programs.sh
	export PATH=/usr/bin:/bin:/usr/sbin:/sbin TMPDIR=/tmp LTP_TIMEOUT_MUL=${LTP_TIMEOUT_MUL:-30}
	mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm
	echo "${NATIVE_BUFFER_KB:-65536}" > $T/buffer_size_kb
	OUT=/tmp/out
	mkdir -p $OUT
	{
		echo "uname=$(uname -r) $(uname -m)"
		echo "cmdline=$(cat /proc/cmdline)"
		echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
		echo "strace=$(strace -V | head -1)"
		echo "stress-ng=$(stress-ng --version 2>&1 | head -1)"
	} > $OUT/guest-info.txt
	sed 's/^/NAT: /' $OUT/guest-info.txt
	SYSF='id==3||id==114||id==77||id==43||id==246||id==265||id==272'
	for e in sys_enter sys_exit; do echo "$SYSF" > $T/events/raw_syscalls/$e/filter; done
	for mode in $MODES; do
		sect "tasks $mode"
		tasks
		echo 0 > $T/tracing_on
		echo > $T/trace
		for e in kacct sched/sched_switch sched/sched_wakeup sched/sched_wakeup_new sched/sched_process_fork \
			sched/sched_process_exit sched/sched_stat_runtime raw_syscalls/sys_enter raw_syscalls/sys_exit; do
			echo 1 > $T/events/$e/enable
		done
		reads_begin $mode $OUT
		say "$mode: $cmd at $(cut -d' ' -f1 /proc/uptime)"
		echo 1 > $T/tracing_on
		taskset -c 1 $READS_STRACE -o $S/st sh -c 'echo $$ > "$0"; exec "$@"' $S/root $cmd > $OUT/$mode.output.txt 2>&1
		echo "$?" > $OUT/$mode.rc
		echo 0 > $T/tracing_on
		say "$mode: rc=$(cat $OUT/$mode.rc) at $(cut -d' ' -f1 /proc/uptime), trace lines $(wc -l < $T/trace)"
		grep -E 'overrun|dropped' $T/per_cpu/cpu*/stats 2> /dev/null | grep -v ': 0$' | sed "s/^/NAT: $mode /"
		reads_end $mode $OUT
		sect "trace $mode"
		gzip -c $T/trace | uuencode -m trace.gz > $O
	done
	cd /tmp
	sect probes
	cat $T/kprobe_profile > $O
	sect out
	tar cf - out | gzip -9 | uuencode -m out.tgz > $O
	sect end
	usleep 300000
	say done
	reboot -f
fi
# a half-busy task on CPU 0 (user time, sleeps, wakeups there too)
taskset 1 sh -c 'while :; do i=0; while [ $i -lt 200 ]; do i=$((i + 1)); done; usleep 3000; done' &
BG=$!
usleep 100000
sect tasks
tasks
sect proc_stat_before
cat /proc/stat > $O
echo 0 > $T/tracing_on
echo > $T/trace
for e in kacct sched/sched_switch sched/sched_wakeup sched/sched_wakeup_new sched/sched_process_fork \
	sched/sched_process_exit; do
	echo 1 > $T/events/$e/enable
done
echo 1 > $T/tracing_on
taskset 2 /native-work "$MS" > /tmp/values
echo 0 > $T/tracing_on
kill $BG 2> /dev/null
sect proc_stat_after
cat /proc/stat > $O
sect values
cat /tmp/values > $O
sect probes
cat $T/kprobe_profile > $O
say "values $(wc -l < /tmp/values) trace lines $(wc -l < $T/trace)"
grep -E 'overrun|dropped' $T/per_cpu/cpu*/stats 2> /dev/null | sed 's/^/NAT: /'
sed 's/^/NAT: probe /' $T/kprobe_profile
sect trace
gzip -c $T/trace | uuencode -m trace.gz > $O
sect end
usleep 300000
say done
reboot -f

#!/bin/busybox sh
# /init of the reads job in the irq-time guests (irq-reads-record.sh: irq-record.sh with this
# init and an initramfs extra of strace, stress-ng, perf and LTP tests). Each program named by
# reads_modes=A,B,... (kernel argument; reads-programs.sh's names) runs pinned to CPU 1 under strace
# -ff -v -y (tools/record-reads/record.sh's options) and `perf record -C 1` with irq-record.sh's
# CPU-1 probes (kacct:ia1 irqtime_account_irq at every irq/softirq boundary, kacct:tk1
# account_process_tick with user_tick), the sched tracepoints and raw syscalls. perf and the
# shell stay on CPU 0. Everything goes tar+gzip+base64 to ttyS2 (hvc1 on ppc64le) in the section
# "==== out": MODE.{perf.data,output.txt,root,rc,cmd}, MODE.strace/st.TID, guest-info (no
# kallsyms: the 8250 runs at its baud rate under QEMU, so it is set to 115200; perf script on the
# host takes the build's System.map).
/bin/busybox --install -s /bin
export PATH=/usr/bin:/bin:/usr/sbin:/sbin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm
mount -t tracefs tracefs /sys/kernel/tracing
T=/sys/kernel/tracing
say() { echo "READS: $*"; }
arg() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
MODES=$(arg reads_modes | tr , ' ')
CPU=1
taskset -p 1 $$ > /dev/null
O=/dev/ttyS2
[ -e /dev/ttyS2 ] || O=/dev/hvc1
stty -F $O raw 115200 2> /dev/null
. /irq-probes.sh
irq_probes
OUT=/tmp/out
mkdir -p $OUT
{
	echo "uname=$(uname -r) $(uname -m)"
	echo "cmdline=$(cat /proc/cmdline)"
	echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	echo "strace=$(strace -V | head -1)"
	echo "stress-ng=$(stress-ng --version 2>&1 | head -1)"
	echo "perf=$(perf --version 2>&1)"
	dmesg | grep -i -E 'tsc.*(unstable|reliable)|irq time|sched_clock'
} > $OUT/guest-info.txt
cat $OUT/guest-info.txt | sed 's/^/READS: /'
echo 0 > /proc/sys/kernel/kptr_restrict
echo -1 > /proc/sys/kernel/perf_event_paranoid
cat $T/kprobe_events > $OUT/kprobe_events.txt
SYSF='id==0||id==61||id==98||id==100||id==228||id==230||id==247'
[ "$(uname -m)" = ppc64le ] && SYSF='id==3||id==114||id==77||id==43||id==246||id==265||id==272'
EV=""
# the tick probe with its kernel callchain: where the timer interrupted (the converter's rule
# for a group read whose task_sched_runtime() took a tick at its rq unlock needs it)
for e in $(sed -n "s/^p:kacct\/\([a-z_]*$CPU\) .*/\1/p" $T/kprobe_events); do
	case $e in tk*) EV="$EV -e kacct:$e/call-graph=fp/" ;; *) EV="$EV -e kacct:$e" ;; esac
done
for e in sched:sched_switch sched:sched_wakeup sched:sched_wakeup_new sched:sched_stat_runtime \
	sched:sched_process_fork sched:sched_process_exit raw_syscalls:sys_enter raw_syscalls:sys_exit \
	timer:hrtimer_expire_entry; do
	[ -d "$T/events/${e%%:*}/${e#*:}" ] || continue
	EV="$EV -e $e"
	# only the syscalls the reads are found in (irq-reads-reduce.py keeps no other): read, wait4,
	# getrusage, times, clock_gettime, clock_nanosleep, waitid; every other one (strace's ptrace
	# calls above all) made the perf.data 10 times larger, and it leaves through a slow 8250
	case $e in raw_syscalls:*) EV="$EV --filter $SYSF" ;; esac
done
echo "$EV" > $OUT/perf-events.txt
say "events:$EV"
export TMPDIR=/tmp LTP_TIMEOUT_MUL=${LTP_TIMEOUT_MUL:-30}
. /reads-programs.sh
for mode in $MODES; do
	reads_begin $mode $OUT
	say "$mode: $cmd at $(cut -d' ' -f1 /proc/uptime)"
	taskset -c 0 perf record -q -m "${PERF_MMAP:-16M}" --kernel-callchains -C "$CPU" $EV -o $OUT/$mode.perf.data -- \
		taskset -c "$CPU" $READS_STRACE -o $S/st sh -c 'echo $$ > "$0"; exec "$@"' $S/root $cmd > $OUT/$mode.output.txt 2>&1
	echo "$?" > $OUT/$mode.rc
	say "$mode: rc=$(cat $OUT/$mode.rc) at $(cut -d' ' -f1 /proc/uptime), perf.data $(wc -c < $OUT/$mode.perf.data)"
	reads_end $mode $OUT
done
cd /tmp
echo "==== out" > $O
tar cf - out | gzip -9 | uuencode -m out.tgz > $O
echo "==== end" > $O
usleep 500000
say done
reboot -f

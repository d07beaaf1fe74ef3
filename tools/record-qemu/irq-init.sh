#!/bin/busybox sh
# /init of the irq-time recording guest (irq-record.sh builds the initramfs with /probes.txt).
# Traces irq_record_ms (kernel argument, default 1500) ms of: a user spinner on CPU 0 (cgroup
# A), a timer sleeper (2 ms read timeouts, cgroup B) and a fork loop (RCU softirq work, cgroup
# B/C: nested, so B's irq pressure has a child's) on CPU 1, and a serial flood written from CPU 0 whose irq runs on CPU 1 (cross-CPU wakeups, IPIs). The ftrace text goes gzip+uuencode to ttyS2
# (QEMU -serial file:), framed by "==== NAME" sections; console lines start with "IRQ:".
# ppc64le (no 8250; /pcpu.env present): the trace goes to hvc1, a CPU-0 task wakes the CPU-1
# sleeper every ms, and a reader on CPU 1 drains hvc2 (the host feeds it; its irq bound to CPU 1).
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tracefs tracefs /sys/kernel/tracing
mount -t cgroup2 cgroup2 /sys/fs/cgroup
T=/sys/kernel/tracing
say() { echo "IRQ: $*"; }
arg() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" /proc/cmdline; }
MS=$(arg irq_record_ms)
: "${MS:=1500}"
taskset -p 1 $$ > /dev/null
say "kernel $(uname -r) cpus $(cat /sys/devices/system/cpu/online) record_ms $MS"
say "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
dmesg | grep -i -E 'tsc.*(unstable|reliable)|irq time|sched_clock' | sed 's/^/IRQ: dmesg /'
O=/dev/ttyS2
[ -e /dev/ttyS2 ] || O=/dev/hvc1 # ppc64le: a second sPAPR VTY
stty -F $O raw 2> /dev/null
sect() { echo "==== $1" > $O; }
# irq-record.sh's /probes.txt into kprobe_events (ppc64le: per-CPU fetches made relative to r13)
. /irq-probes.sh
irq_probes
for c in 0 1; do
	for e in ia tk; do echo "cpu == $c" > $T/events/kacct/$e$c/filter; done
done
# gen vtime kernels: the vtime hooks' probes, on the nohz_full CPU 1 only
for f in $T/events/kacct/*_in/filter $T/events/kacct/*_out/filter; do [ ! -e "$f" ] || echo "cpu == 1" > "$f"; done
say "nohz_full $(cat /sys/devices/system/cpu/nohz_full 2> /dev/null)"
echo 16384 > $T/buffer_size_kb
if [ -e /sys/class/tty/ttyS1/irq ]; then
	IRQ=$(cat /sys/class/tty/ttyS1/irq)
	echo 2 > "/proc/irq/$IRQ/smp_affinity" || say "cannot bind irq $IRQ"
elif [ -e /dev/hvc2 ]; then
	# ppc64le: a VTY fed from a file; opening it requests its irq (the last hvc_console one),
	# bound to CPU 1; read from CPU 1 in the traced window
	exec 4< /dev/hvc2
	stty -F /dev/hvc2 raw -echo 2> /dev/null
	HVCIRQ=$(sed -n 's/^ *\([0-9]*\):.*hvc_console.*/\1/p' /proc/interrupts | tail -1)
	echo 2 > "/proc/irq/$HVCIRQ/smp_affinity" || say "cannot bind hvc irq $HVCIRQ"
	say "hvc2 irq $HVCIRQ affinity $(cat /proc/irq/$HVCIRQ/smp_affinity 2> /dev/null)"
fi
mkfifo /tmp/fifo
# cgroups for PSI irq: A has the spinner, B the sleeper, B/C the fork loop, the rest is in the root
mkdir /sys/fs/cgroup/A /sys/fs/cgroup/B /sys/fs/cgroup/B/C
# background load, started before tracing so that the trace sees running tasks
taskset 1 sh -c 'echo $$ > /sys/fs/cgroup/A/cgroup.procs; while :; do :; done' &
SPIN=$!
taskset 2 sh -c 'echo $$ > /sys/fs/cgroup/B/cgroup.procs; exec 3<> /tmp/fifo; while :; do read -t 0.002 x <&3; done' &
SLEEPER=$!
taskset 2 sh -c 'echo $$ > /sys/fs/cgroup/B/C/cgroup.procs; while :; do /bin/true; usleep 1000; done' &
FORKER=$!
usleep 300000
sect tasks
for d in /proc/[0-9]*; do
	[ -r $d/stat ] || continue
	# pid flags(9th field after the comm) tgid comm
	s=$(cat $d/stat 2> /dev/null) || continue
	rest=${s##*) }
	set -- $rest
	echo "${d#/proc/} $7 $(sed -n 's/^Tgid:\t*//p' $d/status) ${s#*(}" | sed 's/) .*//' > $O
done
sect cgroups
for d in /proc/[0-9]*; do echo "${d#/proc/} $(cat $d/cgroup 2> /dev/null)" > $O; done
sect proc_stat_before
cat /proc/stat > $O
sect pressure_before
cat /proc/pressure/irq > $O 2>&1
sect interrupts_before
cat /proc/interrupts > $O
echo 0 > $T/tracing_on # all events on at once (irq-reduce.py starts at the first switch anyway)
echo > $T/trace
for e in kacct sched/sched_switch sched/sched_wakeup sched/sched_process_fork sched/sched_process_exit; do
	echo 1 > $T/events/$e/enable
done
echo 1 > $T/tracing_on
# irq.pressure totals (us) of the root, A, B and B/C (named C), read inside the traced window by
# the shell's own `read` (no fork), each between two trace_marker lines "kacct read MARK.GROUP.lo"
# and ".hi" (irq-reduce.py puts the model's reads there)
psi() {
	echo "kacct psi $1" > $T/trace_marker
	line=$1
	for g in root:/proc/pressure/irq A:/sys/fs/cgroup/A/irq.pressure B:/sys/fs/cgroup/B/irq.pressure \
		C:/sys/fs/cgroup/B/C/irq.pressure; do
		echo "kacct read $1.${g%%:*}.lo" > $T/trace_marker
		read -r l < "${g#*:}"
		echo "kacct read $1.${g%%:*}.hi" > $T/trace_marker
		line="$line ${g%%:*} ${l##*total=}"
	done
	echo "$line" >> /tmp/psi
}
if [ -n "${IRQ:-}" ]; then
	taskset 1 dd if=/dev/zero of=/dev/ttyS1 bs=4096 count=8 2> /dev/null &
else
	# no 8250 (ppc64le): CPU 0 wakes the sleeper on CPU 1 every ms (IPIs to an idle CPU 1)
	taskset 1 sh -c 'exec 3> /tmp/fifo; while :; do echo x >&3; usleep 1000; done' &
	PINGER=$!
	if [ -n "${HVCIRQ:-}" ]; then
		taskset 2 cat <&4 > /dev/null &
		READER=$!
	fi
fi
usleep 100000 # each CPU's irq time pending at the trace's start is charged before the first read
psi start
usleep $((MS * 1000))
psi end
# keep tracing: each CPU's events after the reads resolve the clocks up to them (irq-reduce.py
# cuts the trace at the earliest CPU's last exact clock; a read after it would miss charges)
usleep 100000
echo 0 > $T/tracing_on
kill $SPIN $SLEEPER $FORKER ${PINGER:-} ${READER:-} 2> /dev/null
sect proc_stat_after
cat /proc/stat > $O
sect pressure_after
cat /proc/pressure/irq > $O 2>&1
sect interrupts_after
cat /proc/interrupts > $O
sect psi
cat /tmp/psi > $O
say "trace lines $(wc -l < $T/trace), lost $(grep -c LOST $T/trace)"
grep -E 'entries-in-buffer|overrun' $T/per_cpu/cpu*/stats 2> /dev/null | sed 's/^/IRQ: /'
sect trace
gzip -c $T/trace | uuencode -m trace.gz > $O
sect end
usleep 500000
say done
reboot -f

#!/bin/busybox sh
# /init of the psi-irq guest (psi-irq.sh builds the initramfs): does irq time that ran while
# CPU 1 idled end up in irq.pressure of the cgroup whose task runs next on CPU 1?
# Each trial: cgroup A's task sleeps on CPU 1; flood trials write FLOOD_KB to ttyS1, whose irq is
# bound to CPU 1 (transmit interrupts on the idle CPU), control trials sleep as long; then A's
# task spins SPIN_CS centiseconds on CPU 1. Snapshots before the idle period (S0), after it
# (S1) and after the spin (S2): A's and the root's irq.pressure total= (us), CPU 1's
# /proc/stat irq+softirq (USER_HZ ticks) and ttyS1 interrupts on CPU 1. All output lines start
# with "PSI:"; the guest reboots at the end (QEMU -no-reboot exits).
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup
say() { echo "PSI: $*"; }
arg() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" /proc/cmdline; }
FLOOD_KB=$(arg psi_flood_kb)
SPIN_CS=$(arg psi_spin_cs)
TRIALS=$(arg psi_trials)
: "${FLOOD_KB:=1024}" "${SPIN_CS:=10}" "${TRIALS:=3}"
taskset -p 1 $$ > /dev/null
say "kernel $(uname -r) cpus $(cat /sys/devices/system/cpu/online) flood_kb $FLOOD_KB spin_cs $SPIN_CS trials $TRIALS"
zcat /proc/config.gz | grep -E '^CONFIG_(IRQ_TIME_ACCOUNTING|PSI|TICK_CPU_ACCOUNTING|HZ|NO_HZ_IDLE)=' |
	sed 's/^/PSI: /'
say "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
dmesg | grep -i -E 'tsc.*(unstable|reliable)|irq time' | sed 's/^/PSI: dmesg /'
dmesg | grep -i -E 'smp: (brought|allowed)|tsc: (detected|refined)' | sed 's/^/PSI: dmesg /'
say "/proc/pressure/irq: $(cat /proc/pressure/irq)"
if [ "$(cat /sys/devices/system/cpu/online)" != 0-1 ] || [ ! -e /proc/pressure/irq ]; then
	say "need 2 CPUs and /proc/pressure/irq; stop"
	reboot -f
fi
mkdir /sys/fs/cgroup/A
IRQ=$(cat /sys/class/tty/ttyS1/irq)
echo 1 > /proc/irq/4/smp_affinity 2> /dev/null # console ttyS0 on CPU 0
echo 2 > "/proc/irq/$IRQ/smp_affinity" || say "cannot bind irq $IRQ"
say "ttyS1 irq $IRQ affinity $(cat /proc/irq/$IRQ/smp_affinity)"

# snapshot: uptime(s) A_total(us) root_total(us) cpu1_irq cpu1_softirq ttyS1_irqs_on_cpu1
snap() {
	echo "$(cut -d' ' -f1 /proc/uptime)" \
		"$(sed -n 's/.*total=//p' /sys/fs/cgroup/A/irq.pressure)" \
		"$(sed -n 's/.*total=//p' /proc/pressure/irq)" \
		"$(awk '$1 == "cpu1" {print $7, $8}' /proc/stat)" \
		"$(awk -v i="$IRQ:" '$1 == i {n = $3} END {print n + 0}' /proc/interrupts)"
}

trial() { # trial KIND IDLE_CS
	rm -f /tmp/go /tmp/spin
	mkfifo /tmp/go
	# A's task: join A on CPU 1, sleep on the fifo, then spin SPIN_CS centiseconds (no forks)
	taskset 2 sh -c 'echo $$ > /sys/fs/cgroup/A/cgroup.procs; read x < /tmp/go
		read u _ < /proc/uptime; t0=${u/./}; t=$t0
		while [ $((t - t0)) -lt '"$SPIN_CS"' ]; do read u _ < /proc/uptime; t=${u/./}; done
		echo $t0 $t > /tmp/spin' &
	A=$!
	sleep 1
	S0=$(snap)
	if [ "$1" = flood ]; then
		# the tty's close waits until all is sent, so dd returns once CPU 1's irqs are done
		taskset 1 dd if=/dev/zero of=/dev/ttyS1 bs=4096 count=$((FLOOD_KB / 4)) 2> /dev/null
	else
		usleep $(($2 * 10000))
	fi
	usleep 200000
	S1=$(snap)
	timeout 60 sh -c 'echo go > /tmp/go'
	wait $A
	usleep 200000
	S2=$(snap)
	set -- "$1" $S0 $S1 $S2
	# fields: 2..7 S0, 8..13 S1, 14..19 S2
	say "trial $1 S0 $2 $3 $4 $5 $6 $7 | S1 $8 $9 ${10} ${11} ${12} ${13} | S2 ${14} ${15} ${16} ${17} ${18} ${19} | spin $(cat /tmp/spin)"
	IDLE_CS=$(awk -v a="$2" -v b="$8" 'BEGIN {printf "%d", (b - a) * 100}')
	say "result $1 idle_s $(awk -v a="$2" -v b="$8" 'BEGIN {print b - a}')" \
		"cpu1_irq+softirq_ms idle $(((${11} + ${12} - $5 - $6) * 10)) run $(((${17} + ${18} - ${11} - ${12}) * 10))" \
		"ttyS1_irqs_cpu1 idle $((${13} - $7)) run $((${19} - ${13}))" \
		"A_irq_us idle $((${9} - $3)) run $((${15} - ${9}))" \
		"root_irq_us idle $((${10} - $4)) run $((${16} - ${10}))"
}

i=0
while [ $i -lt "$TRIALS" ]; do
	trial flood
	trial control "$IDLE_CS"
	i=$((i + 1))
done
say done
reboot -f

#!/bin/bash
# Record irq time accounting on a kernel from tools/kernel-build (amd64, IRQ_TIME_ACCOUNTING).
#   irq-record.sh KERNEL_DIR OUTDIR [KERNEL_ARGS...]
# KERNEL_DIR: build.sh's output (bzImage, System.map, meta). Boots QEMU TCG (-smp 2), runs
# irq-init.sh as /init: kprobes on irqtime_account_irq (every hardirq/softirq boundary) and
# account_process_tick read the per-CPU irqtime and kcpustat through __per_cpu_offset, plus
# sched tracepoints, under a load of timers, a fork loop, a serial flood (irq bound to CPU 1) and
# a user spinner, in cgroups A, B and B/C (irq.pressure read inside the traced window). On a gen
# vtime kernel (config VIRT_CPU_ACCOUNTING_GEN) CPU 1 boots nohz_full and its vtime hooks are
# probed too (below). OUTDIR gets
# trace.txt (the guest's sections: tasks, cgroups, /proc/stat, psi, the ftrace text),
# console.log, meta, probes.txt (offsets.txt: the task_struct offsets the tick probes fetch).
# Needs busybox-static and qemu-system-x86; one guest at a time. The tick never stops
# (nohz=off): the nohz idle catch-up (account_idle_ticks) is not recorded.
set -euo pipefail
K=$(readlink -f "$1") OUT=$(readlink -f "$2"); shift 2
HERE=$(dirname "$(readlink -f "$0")")
mkdir -p "$OUT"
R=$(mktemp -d /tmp/irq-rec.XXXX)
trap 'rm -rf "$R"' EXIT
sym() { awk -v s="$1" '$3 == s {print "0x" $1; exit}' "$K/System.map"; }
# the preempt count: per-CPU __preempt_count (6.1), pcpu_hot.preempt_count after current_task
# (x86 from 6.2 on, so 6.12)
PCPU_PC=$(sym __preempt_count) IRQT=$(sym cpu_irqtime) KCS=$(sym kernel_cpustat)
[ -n "$PCPU_PC" ] || { h=$(sym pcpu_hot) && [ -n "$h" ] && PCPU_PC=$((h + 8)); }
for v in PCPU_PC IRQT KCS; do [ -n "${!v}" ] || { echo "no symbol for $v in System.map" >&2; exit 1; }; done
# per-CPU fetches: +ADDR(@__per_cpu_offset+8*cpu); struct irqtime {total, tick_delta,
# irq_start_time}; kernel_cpustat.cpustat[user nice system softirq irq idle iowait steal].
fetch() { # fetch CPU -> that CPU's argument list (the event is filtered to run on it)
	local b="@__per_cpu_offset+$((8 * $1))"
	printf ' pc=+%d(%s):u32' $((PCPU_PC)) "$b"
	printf ' st=+%d(%s):u64 td=+%d(%s):u64' $((IRQT + 16)) "$b" $((IRQT + 8)) "$b"
	local i=0
	for n in us ni sy si hi id; do printf ' %s=+%d(%s):u64' $n $((KCS + 8 * i)) "$b"; i=$((i + 1)); done
}
# The ticked task's pid, utime and stime (account_process_tick's p, in %di), with offsets from
# task-offsets.sh when the build tree is there (recordings before it have no task fields).
TASK=""
if [ -d "$K/build" ] && "$HERE/task-offsets.sh" "$K" > "$OUT/offsets.txt"; then
	o() { awk -v n="$1" '$1 == n {print $2}' "$OUT/offsets.txt"; }
	TASK=" tp=+$(o task_pid)(%di):s32 tu=+$(o task_utime)(%di):u64 ts=+$(o task_stime)(%di):u64"
	[[ $TASK != *"+("* ]] || { echo "missing task offsets in $OUT/offsets.txt" >&2; exit 1; }
else
	echo "no task offsets (no $K/build tree?): task times not recorded" >&2
fi
# Gen vtime (the kernel's config has VIRT_CPU_ACCOUNTING_GEN): CPU 1 boots nohz_full and runs
# vtime. Its three vtime hooks get an entry probe (the kernel's state before: kcpustat, tick_delta,
# the task's vtime and counters; at the switch also the next task's vtime.starttime, which is the
# clock of its last switch-out flush) and a return probe (vtime.starttime of current: the clock
# that hook read; at the switch, next's). current is pcpu_hot.current_task (x86 6.2+).
GEN=""
if grep -q '^CONFIG_VIRT_CPU_ACCOUNTING_GEN=y' "$K/config" 2> /dev/null; then
	GEN=1
	[ -n "$TASK" ] || { echo "gen vtime needs the task offsets (build tree)" >&2; exit 1; }
	HOT=$(sym pcpu_hot)
	[ -n "$HOT" ] || { echo "no pcpu_hot in System.map" >&2; exit 1; }
	TV=$(o task_vtime)
	vt() { echo $((TV + $(o "vtime_$1"))); }
	cur="+$((HOT))(@__per_cpu_offset+8)"
	vtask() { # vtime state and counters of the task at $1
		printf ' p=+%d(%s):s32 vs=+%d(%s):u64 vst=+%d(%s):u32 vu=+%d(%s):u64 vss=+%d(%s):u64 tu=+%d(%s):u64 ts=+%d(%s):u64' \
			"$(o task_pid)" "$1" "$(vt starttime)" "$1" "$(vt state)" "$1" "$(vt utime)" "$1" "$(vt stime)" "$1" \
			"$(o task_utime)" "$1" "$(o task_stime)" "$1"
	}
fi
# ia<N>: each hardirq/softirq entry and exit on CPU N (off: HARDIRQ_OFFSET, SOFTIRQ_OFFSET or 0);
# tk<N>: the tick's accounting on CPU N (ut: user_tick). sco: sched_clock_cpu() - sched_clock().
{
	for c in 0 1; do
		echo "p:kacct/ia$c irqtime_account_irq off=%si:u32$(fetch $c)"
		echo "p:kacct/tk$c account_process_tick ut=%si:u32 sco=@__sched_clock_offset:u64$(fetch $c)$TASK"
	done
	if [ -n "$GEN" ]; then
		for h in vtime_user_enter vtime_user_exit vtime_task_switch_generic; do
			n=${h#vtime_}
			n=${n%_generic}
			extra=""
			[ "$h" != vtime_task_switch_generic ] || extra=" nst=+$(vt starttime)($cur):u64 np=+$(o task_pid)($cur):s32"
			echo "p:kacct/${n}_in $h$(fetch 1)$(vtask %di)$extra"
			echo "r:kacct/${n}_out $h$(fetch 1)$(vtask "$cur")"
		done
		# prev's flush clock: vtime_task_switch_generic() right after its `vtime->cpu = -1` store,
		# where prev's starttime is the clock the flush read (found in the build's vmlinux: the
		# store's base register holds prev or &prev->vtime). Without it the converter bounds it.
		d=$((TV + $(o vtime_cpu)))
		objdump -d --no-show-raw-insn "$K/build/vmlinux" --disassemble=vtime_task_switch_generic 2> /dev/null |
			awk -v a="$(printf '0x%x' $d)" -v b="$(printf '0x%x' "$(o vtime_cpu)")" '
				found { sub(/:$/, "", $1); print $1; exit }
				$2 == "movl" && $3 ~ /^\$0xffffffff,/ {
					split($3, x, /[,()]/); if (x[2] == a || x[2] == b) { print (x[2] == a ? "task" : "vtime"), x[3]; found = 1 }
				}' > "$R/flush"
		if [ "$(wc -l < "$R/flush")" = 2 ]; then
			read -r base reg < "$R/flush"
			addr=$(sed -n 2p "$R/flush")
			fn=$(awk '$3 == "vtime_task_switch_generic" {print $1}' "$K/System.map")
			off=$((0x$addr - 0x$fn))
			[ "$base" = task ] && pb=0 || pb=$((-TV))
			echo "p:kacct/flush1 vtime_task_switch_generic+$off p=+$((pb + $(o task_pid)))($reg):s32 fs=+$((pb + TV + $(o vtime_starttime)))($reg):u64"
		else
			echo "no vtime->cpu = -1 store found in vtime_task_switch_generic: flush clocks bounded" >&2
		fi
	fi
} > "$OUT/probes.txt"
cp "$K/meta" "$OUT/meta"
[ -z "$GEN" ] || set -- nohz_full=1 "$@"
mkdir -p "$R/root"/{bin,proc,sys,dev,tmp}
cp /bin/busybox "$R/root/bin/busybox"
cp "$HERE/irq-init.sh" "$R/root/init"
cp "$OUT/probes.txt" "$R/root/probes.txt"
chmod 755 "$R/root/init" "$R/root/bin/busybox"
(cd "$R/root" && find . | cpio -o -H newc --quiet | gzip -1) > "$R/initrd.cpio.gz"
# As psi-irq.sh: tsc=reliable and tsc_early_khz keep irq time accounting on under a loaded TCG.
KHZ=$(awk -F: '/^cpu MHz/ {printf "%d", $2 * 1000; exit}' /proc/cpuinfo)
rm -f "$OUT/trace.txt"
timeout "${IRQ_TIMEOUT:-900}" qemu-system-x86_64 -accel tcg -M pc -cpu max -smp 2,sockets=2,cores=1,threads=1 -m 512M -nographic \
	-serial mon:stdio -serial null -serial file:"$OUT/trace.txt" -no-reboot -kernel "$K/bzImage" \
	-initrd "$R/initrd.cpio.gz" -append "console=ttyS0 tsc=reliable tsc_early_khz=$KHZ nohz=off $*" \
	< /dev/null | tr -d '\r' > "$OUT/console.log"
grep -a '^IRQ:' "$OUT/console.log" || true
ls -la "$OUT"

#!/bin/bash
# Record irq time accounting on a kernel from tools/kernel-build (amd64 or ppc64le, IRQ_TIME_ACCOUNTING).
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
# Env IRQ_INIT: another guest /init with the same probes (irq-reads-record.sh's); IRQ_EXTRA: a
# cpio.gz appended to the initramfs; IRQ_MEM: guest memory (default 512M amd64, 1G ppc64le).
# Needs busybox-static and qemu-system-x86; one guest at a time. The tick never stops
# (nohz=off): the nohz idle catch-up (account_idle_ticks) is not recorded.
# ppc64le kernels (meta "arch ppc64le"): QEMU pseries POWER9 (as native-record.sh; env BUSYBOX, a
# static ppc64el busybox), probe arguments in %gpr3/%gpr4, the preempt count from the current
# task's thread_info (irqtime_account_irq's curr), per-CPU fetches relative to r13 (irq-init.sh
# measures each CPU's paca), no __sched_clock_offset; the trace goes to hvc1, and wakeups of a
# CPU-1 task from CPU 0 plus input on hvc2 (IRQ_HVC_IN_KB) replace the serial flood (no 8250).
set -euo pipefail
K=$(readlink -f "$1") OUT=$(readlink -f "$2"); shift 2
HERE=$(dirname "$(readlink -f "$0")")
mkdir -p "$OUT"
R=$(mktemp -d /tmp/irq-rec.XXXX)
trap 'rm -rf "$R"' EXIT
sym() { awk -v s="$1" '$3 == s {print "0x" $1; exit}' "$K/System.map"; }
ARCH=$(awk '$1 == "arch" {print $2}' "$K/meta")
IRQT=$(sym cpu_irqtime) KCS=$(sym kernel_cpustat)
# the preempt count: per-CPU __preempt_count (6.1), pcpu_hot.preempt_count after current_task
# (x86 from 6.2 on, so 6.12); powerpc: thread_info.preempt_count, first in the task
PCPU_PC=$(sym __preempt_count)
[ -n "$PCPU_PC" ] || { h=$(sym pcpu_hot) && [ -n "$h" ] && PCPU_PC=$((h + 8)); }
[ "$ARCH" != ppc64le ] || PCPU_PC=ppc
for v in PCPU_PC IRQT KCS; do [ -n "${!v}" ] || { echo "no symbol for $v in System.map" >&2; exit 1; }; done
# per-CPU fetches: +ADDR(@__per_cpu_offset+8*cpu); struct irqtime {total, tick_delta,
# irq_start_time}; kernel_cpustat.cpustat[user nice system softirq irq idle iowait steal].
# powerpc: the per-CPU symbols are 0xc000... addresses, too wide for a fetch offset (an int):
# +@ADDR@(%gpr13), which irq-init.sh rewrites per CPU to ADDR + data_offset - r13.
fetch() { # fetch CPU -> that CPU's argument list (the event is filtered to run on it)
	local b="@__per_cpu_offset+$((8 * $1))" f='+%d(%s)'
	if [ "$ARCH" = ppc64le ]; then
		b=%gpr13 f='+@%d@(%s)'
	else
		printf ' pc=+%d(%s):u32' $((PCPU_PC)) "$b"
	fi
	printf " st=$f:u64 td=$f:u64" $((IRQT + 16)) "$b" $((IRQT + 8)) "$b"
	local i=0
	for n in us ni sy si hi id; do printf " %s=$f:u64" $n $((KCS + 8 * i)) "$b"; i=$((i + 1)); done
}
# the probed functions' arguments (irqtime_account_irq(curr, offset), account_process_tick(p,
# user_tick)) and the clock offset of the ftrace timestamps
A1=%di A2=%si SCO=' sco=@__sched_clock_offset:u64' PC=''
if [ "$ARCH" = ppc64le ]; then
	A1=%gpr3 A2=%gpr4 SCO='' PC=' pc=+0(%gpr3):u32'
fi
# The ticked task's pid, utime and stime (account_process_tick's p, in %di), with offsets from
# task-offsets.sh when the build tree is there (recordings before it have no task fields).
TASK=""
if [ -d "$K/build" ] && "$HERE/task-offsets.sh" "$K" > "$OUT/offsets.txt"; then
	o() { awk -v n="$1" '$1 == n {print $2}' "$OUT/offsets.txt"; }
	TASK=" tp=+$(o task_pid)($A1):s32 tu=+$(o task_utime)($A1):u64 ts=+$(o task_stime)($A1):u64"
	[[ $TASK != *"+("* ]] || { echo "missing task offsets in $OUT/offsets.txt" >&2; exit 1; }
else
	echo "no task offsets (no $K/build tree?): task times not recorded" >&2
fi
# Gen vtime (the kernel's config has VIRT_CPU_ACCOUNTING_GEN): CPU 1 boots nohz_full and runs
# vtime. Its three vtime hooks get an entry probe (the kernel's state before: kcpustat, tick_delta,
# the task's vtime and counters; at the switch also the next task's vtime.starttime, which is the
# clock of its last switch-out flush) and a return probe (vtime.starttime of current: the clock
# that hook read; at the switch, next's). current is pcpu_hot.current_task (x86 6.2+), current_task
# before.
GEN=""
if grep -q '^CONFIG_VIRT_CPU_ACCOUNTING_GEN=y' "$K/config" 2> /dev/null; then
	GEN=1
	[ -n "$TASK" ] || { echo "gen vtime needs the task offsets (build tree)" >&2; exit 1; }
	HOT=$(sym pcpu_hot)
	[ -n "$HOT" ] || HOT=$(sym current_task) # 6.1: the per-CPU current_task (pcpu_hot is 6.2+)
	[ -n "$HOT" ] || { echo "no pcpu_hot or current_task in System.map" >&2; exit 1; }
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
		echo "p:kacct/ia$c irqtime_account_irq off=$A2:u32$PC$(fetch $c)"
		echo "p:kacct/tk$c account_process_tick ut=$A2:u32$SCO$(fetch $c)$TASK"
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
		# GCC 12 (6.12 amd64-irqtime-gen) merges `state = VTIME_INACTIVE; cpu = -1` into one 8-byte
		# store of 0xffffffff00000000 at state's offset (cpu right after state): matched too.
		d=$((TV + $(o vtime_cpu)))
		[ $(($(o vtime_cpu) - $(o vtime_state))) = 4 ] && ds=$((TV + $(o vtime_state))) vs=$(o vtime_state) || ds=-1 vs=-1
		objdump -d --no-show-raw-insn "$K/build/vmlinux" --disassemble=vtime_task_switch_generic 2> /dev/null |
			awk -v a="$(printf '0x%x' $d)" -v b="$(printf '0x%x' "$(o vtime_cpu)")" \
				-v sa="$(printf '0x%x' $ds)" -v sb="$(printf '0x%x' $vs)" '
				found { sub(/:$/, "", $1); print $1; exit }
				$2 == "movl" && $3 ~ /^\$0xffffffff,/ {
					split($3, x, /[,()]/); if (x[2] == a || x[2] == b) { print (x[2] == a ? "task" : "vtime"), x[3]; found = 1 }
				}
				$2 == "movabs" && $3 ~ /^\$0xffffffff00000000,%/ { split($3, x, /,/); wide = x[2]; next }
				wide != "" && $2 == "mov" && index($3, wide ",") == 1 {
					split($3, x, /[,()]/); if (x[2] == sa || x[2] == sb) { print (x[2] == sa ? "task" : "vtime"), x[3]; found = 1 }
				}
				{ wide = "" }' > "$R/flush"
		if [ "$(wc -l < "$R/flush")" = 2 ]; then
			read -r base reg < "$R/flush"
			reg=$(echo "$reg" | sed -E 's/^%r([a-z]{2})$/%\1/')  # pt_regs names: %rbx -> %bx, %r12 stays
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
if [ "$ARCH" = ppc64le ]; then
	cp "${BUSYBOX:?set BUSYBOX to a static ppc64el busybox}" "$R/root/bin/busybox"
	o() { awk -v n="$1" '$1 == n {print $2}' "$OUT/offsets.txt"; }
	[ -n "$(o paca_data_offset)" ] || { echo "no paca_data_offset in $OUT/offsets.txt" >&2; exit 1; }
	echo "DOFF=$(o paca_data_offset)" > "$R/root/pcpu.env"
	cp "$HERE/r13-offsets.sh" "$R/root/r13-offsets.sh"
else
	cp /bin/busybox "$R/root/bin/busybox"
fi
cp "${IRQ_INIT:-$HERE/irq-init.sh}" "$R/root/init"
cp "$HERE/irq-probes.sh" "$R/root/irq-probes.sh"
cp "$OUT/probes.txt" "$R/root/probes.txt"
chmod 755 "$R/root/init" "$R/root/bin/busybox"
(cd "$R/root" && find . | cpio -o -H newc --quiet | gzip -1) > "$R/initrd.cpio.gz"
[ -z "${IRQ_EXTRA:-}" ] || cat "$IRQ_EXTRA" >> "$R/initrd.cpio.gz" # the kernel unpacks concatenated archives
rm -f "$OUT/trace.txt"
if [ "$ARCH" = ppc64le ]; then
	# hvc0: console; a second sPAPR VTY (hvc1) carries the trace; a third (hvc2) reads
	# IRQ_HVC_IN_KB (default 256, 0: none) of text from a file: device interrupts (the VTY
	# raises one when its empty input buffer gets data)
	# (a pipe chardev: QEMU 7.2's file chardev has no input-path; the feeders are ours to end)
	HVC=() FEED=()
	if [ "${IRQ_HVC_IN_KB:-256}" -gt 0 ]; then
		mkfifo "$R/hvc.in" "$R/hvc.out"
		(yes kacct || :) | head -c $((${IRQ_HVC_IN_KB:-256} * 1024)) > "$R/hvc.in" &
		FEED+=($!)
		cat "$R/hvc.out" > /dev/null &
		FEED+=($!)
		trap 'kill "${FEED[@]}" 2> /dev/null || :; rm -rf "$R"' EXIT
		HVC=(-chardev pipe,id=inp,path="$R/hvc" -device spapr-vty,chardev=inp)
	fi
	timeout "${IRQ_TIMEOUT:-900}" qemu-system-ppc64 -accel tcg -M pseries,x-vof=on -cpu POWER9 -smp 2 \
		-m "${IRQ_MEM:-1G}" -nographic -no-reboot -chardev file,id=trc,path="$OUT/trace.txt" \
		-device spapr-vty,chardev=trc "${HVC[@]}" -kernel "$K/vmlinux" -initrd "$R/initrd.cpio.gz" \
		-append "console=hvc0 nohz=off $*" < /dev/null 2>&1 | tr -d '\r' > "$OUT/console.log" || true
	grep -a '^IRQ:' "$OUT/console.log" || tail -20 "$OUT/console.log"
	ls -la "$OUT"
	exit 0
fi
# As psi-irq.sh: tsc=reliable and tsc_early_khz keep irq time accounting on under a loaded TCG.
KHZ=$(awk -F: '/^cpu MHz/ {printf "%d", $2 * 1000; exit}' /proc/cpuinfo)
timeout "${IRQ_TIMEOUT:-900}" qemu-system-x86_64 -accel tcg -M pc -cpu max -smp 2,sockets=2,cores=1,threads=1 -m "${IRQ_MEM:-512M}" -nographic \
	-serial mon:stdio -serial null -serial file:"$OUT/trace.txt" -no-reboot -kernel "$K/bzImage" \
	-initrd "$R/initrd.cpio.gz" -append "console=ttyS0 tsc=reliable tsc_early_khz=$KHZ nohz=off $*" \
	< /dev/null | tr -d '\r' > "$OUT/console.log"
grep -a '^IRQ:' "$OUT/console.log" || true
ls -la "$OUT"

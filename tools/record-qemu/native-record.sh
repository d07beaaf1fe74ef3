#!/bin/bash
# Record native vtime accounting (VIRT_CPU_ACCOUNTING_NATIVE, scaled cputime) on a ppc64le
# kernel from tools/kernel-build, under QEMU TCG (-M pseries,x-vof=on -cpu POWER9 -smp 2).
#   native-record.sh KERNEL_DIR OUTDIR [KERNEL_ARGS...]
# KERNEL_DIR: build.sh's output (vmlinux, System.map, meta, build/). Env BUSYBOX: a static
# ppc64el busybox (Debian busybox-static for ppc64el: `apt-get -oAPT::Architecture=ppc64el
# download busybox-static`, then dpkg-deb -x). Needs gcc-powerpc64le-linux-gnu,
# libc6-dev-ppc64el-cross and qemu-system-ppc; one guest at a time. OUTDIR gets trace.txt (the
# guest's sections: tasks, /proc/stat before and after, the workload's read values, the probe
# hit counts, the ftrace text), console.log, meta, probes.txt, offsets.
# Probes, on every hook that reads the timebase (vtime_account_{kernel,idle,hardirq,softirq},
# vtime_task_switch) and on vtime_flush: at entry the paca's cpu_accounting_data (through r13), this CPU's
# kernel_cpustat (relative to r13, see native-init.sh), the preempt count and the task's pid and
# times (its argument, r3 at entry); at return the accounting data again, whose
# starttime/startspurr are the TB and SPURR values the hook read. release_task (entry):
# __exit_signal() (inlined) in it joins an exiting thread's times to its group's.
# Env NATIVE_TIMEOUT (s, default 600); NATIVE_EXTRA_PROBE: one more kprobe_events line (debugging).
# Kernel argument native_phase_ms=N: the workload's phase length (default 40).
# Unmodified programs instead of native-work: env NATIVE_READS="PROGRAM..." (reads-programs.sh's
# names: LTP tests, stress-ng runs) and NATIVE_LTP (a cross-built static LTP tree), with
# WORK/ppc64el/reads-extra.cpio.gz (reads-setup.sh's strace and stress-ng) and WORK/ppc64el/perfroot (setup.sh's: its ld64.so.2; WORK defaults to
# /tmp/kacct-qemu): native-init.sh runs each under strace on CPU 1; OUTDIR/out/ gets the strace
# files (then native-reduce.py --reads).
set -euo pipefail
K=$(readlink -f "$1") OUT=$(readlink -f "$2"); shift 2
HERE=$(dirname "$(readlink -f "$0")")
BUSYBOX=${BUSYBOX:?set BUSYBOX to a static ppc64el busybox}
mkdir -p "$OUT"
R=$(mktemp -d /tmp/native-rec.XXXX)
trap 'rm -rf "$R"' EXIT
"$HERE/native-offsets.sh" "$K" > "$OUT/offsets"
o() { awk -v n="$1" '$1 == n {print $2}' "$OUT/offsets"; }
ACC=$(o paca_accounting) DOFF=$(o paca_data_offset) KCS=$(($(o kernel_cpustat)))
# kernel_cpustat's address is above 2^63 and a fetch offset is an int: the guest fetches it
# relative to r13 (the paca), with a per-CPU offset (kernel_cpustat + paca->data_offset - r13)
# it measures first; @KCSi@ stands for offset + 8i (native-init.sh), kcs.env passes the inputs.
KCS_S=$(python3 -c "print($KCS - (1 << 64) if $KCS >= 1 << 63 else $KCS)")
acct() {
	local n
	for n in utime stime utime_scaled stime_scaled hardirq_time softirq_time idle_time steal_time starttime \
		starttime_user startspurr utime_sspurr; do
		printf ' a_%s=+%d(%%gpr13):u64' "$n" $((ACC + $(o "acct_$n")))
	done
}
# kcpustat[user nice system softirq irq idle iowait steal] of this CPU
kcs() {
	local i=0 n
	for n in us ni sy si hi id io st; do
		printf ' k_%s=+@KCS%d@(%%gpr13):u64' "$n" $i
		i=$((i + 1))
	done
}
task() {
	printf ' pc=+0(%%gpr3):u32 tpid=+%d(%%gpr3):s32' "$(o task_pid)"
	printf ' t_ut=+%d(%%gpr3):u64 t_st=+%d(%%gpr3):u64 t_us=+%d(%%gpr3):u64 t_ss=+%d(%%gpr3):u64' \
		"$(o task_utime)" "$(o task_stime)" "$(o task_utimescaled)" "$(o task_stimescaled)"
}
{
	for h in kernel:kk idle:ki hardirq:kh softirq:ks flush:fl; do
		n=${h##*:} f=vtime_account_${h%%:*}
		[ "${h%%:*}" = flush ] && f=vtime_flush
		echo "p:kacct/${n}_in $f$(task)$(acct)$(kcs)"
		echo "r:kacct/${n}_out $f$(acct)$(kcs)"
	done
	# the context switch's accounting and flush: 6.12 moved vtime_task_switch() into
	# arch/powerpc/kernel/time.c, where vtime_account_{kernel,idle} and vtime_flush can be inlined
	# into it (no probe hit at a switch then); the reducer takes the switch from these two and
	# ignores the hooks nested in them (6.1: in kernel/sched/cputime.c, they are calls)
	echo "p:kacct/ts_in vtime_task_switch$(task)$(acct)$(kcs)"
	echo "r:kacct/ts_out vtime_task_switch$(acct)$(kcs)"
	# __exit_signal() (a thread's times join its group's) is inside release_task()
	# (entry only: with a kretprobe on release_task the 6.1.192 guest missed the hook probes of
	# the next irqs on that CPU after strace's wait4() released a child, nmissed 2-9 per probe;
	# the reducer never used the return)
	echo "p:kacct/rt_in release_task$(task)$(acct)"
	[ -z "${NATIVE_EXTRA_PROBE:-}" ] || echo "$NATIVE_EXTRA_PROBE"
} > "$OUT/probes.txt"
cp "$K/meta" "$OUT/meta"
powerpc64le-linux-gnu-gcc -O2 -static -Wall -pthread -o "$R/native-work" "$HERE/native-work.c"
mkdir -p "$R/root"/{bin,proc,sys,dev,tmp}
cp "$BUSYBOX" "$R/root/bin/busybox"
cp "$HERE/native-init.sh" "$R/root/init"
cp "$OUT/probes.txt" "$R/root/probes.txt"
echo "KCS_S=$KCS_S DOFF=$DOFF" > "$R/root/kcs.env"
cp "$HERE/r13-offsets.sh" "$R/root/r13-offsets.sh"
cp "$R/native-work" "$R/root/native-work"
chmod 755 "$R/root/init" "$R/root/bin/busybox" "$R/root/native-work"
(cd "$R/root" && find . | cpio -o -H newc --quiet | gzip -1) > "$R/initrd.cpio.gz"
extra=()
if [ -n "${NATIVE_READS:-}" ]; then
	W=$(readlink -m "${WORK:-/tmp/kacct-qemu}")/ppc64el
	[ -f "$W/reads-extra.cpio.gz" ] && [ -f "$W/perfroot/lib64/ld64.so.2" ] || { echo "native-record.sh: no $W/reads-extra.cpio.gz or perfroot (reads-setup.sh, setup.sh)" >&2; exit 2; }
	. "$HERE/reads-bins.sh"
	reads_cpio "$K" "${NATIVE_LTP:?set NATIVE_LTP to a cross-built LTP tree}" ppc64le "$W" "$R/extra.cpio.gz" 0
	cat "$R/extra.cpio.gz" >> "$R/initrd.cpio.gz" # the kernel unpacks concatenated archives
	extra=("reads_modes=$(echo $NATIVE_READS | tr ' ' ,)")
	echo "$NATIVE_READS" > "$OUT/programs"
fi
rm -f "$OUT/trace.txt"
timeout "${NATIVE_TIMEOUT:-600}" nice -n 19 qemu-system-ppc64 -accel tcg -M pseries,x-vof=on -cpu POWER9 -smp 2 \
	-m 1G -nographic -no-reboot -chardev file,id=trc,path="$OUT/trace.txt" \
	-device spapr-vty,chardev=trc -kernel "$K/vmlinux" -initrd "$R/initrd.cpio.gz" \
	-append "console=hvc0 $* ${extra[*]}" < /dev/null 2>&1 | tr -d '\r' > "$OUT/console.log" || true
grep -a '^NAT:' "$OUT/console.log" || tail -20 "$OUT/console.log"
[ -z "${NATIVE_READS:-}" ] || python3 -c 'import sys; sys.path.insert(0, sys.argv[2]); import guestlog; guestlog.extract_out(sys.argv[1])' "$OUT" "$HERE"
ls -la "$OUT"

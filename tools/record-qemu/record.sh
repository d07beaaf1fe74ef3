#!/bin/bash
# Boot Debian's stock 6.1 kernel under QEMU (TCG; KVM here is kvm_pvm, which cannot run stock
# kernels) with nohz_full=1, run the workload pinned to CPU 1 (gen vtime) under perf, and bring
# the traces and the kernel's answers out through a 9p share.
#   record.sh ARCH OUTDIR [MODE...]       ARCH: amd64 | ppc64el; MODE default: all five
# OUTDIR must not exist or be empty: record.sh never deletes what it did not create, so each run
# needs its own directory (reduce.py names the fixtures after the run's RUN_ID).
# Env: WORK (setup.sh's directory, default /tmp/kacct-qemu), SECONDS_PER_RUN (1), READS (12),
#      KINDS (all six read kinds), ICOUNT (ppc64el: 1 = -icount shift=0,sleep=off, deterministic),
#      JOB (the guest job, default guest-job.sh), JOB_LIB (files the job sources, put beside it),
#      INITRD (default WORK/ARCH/initrd.cpio.gz).
# OUTDIR/out/MODE.{perf.data,perf.script.xz,workload.jsonl,proc_stat.*} + guest-info, console,
# out/identify/ (what `kacct identify --root` reads: the guest's /proc files, the kernel config).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: record.sh ARCH OUTDIR [MODE...]" >&2; exit 2; }
A=$1 OUT=$(readlink -m "$2"); shift 2
MODES=${*:-spin syscall mixed yield sleep}
W=$(readlink -m "${WORK:-/tmp/kacct-qemu}")
HERE=$(dirname "$(readlink -f "$0")")
K=$W/$A
if [ -e "$OUT" ] && { [ ! -d "$OUT" ] || [ -n "$(ls -A "$OUT")" ]; }; then
	echo "record.sh: $OUT exists and is not an empty directory; give a new OUTDIR (nothing was changed)" >&2
	exit 2
fi
INITRD=${INITRD:-$K/initrd.cpio.gz}
[ -f "$INITRD" ] || { echo "record.sh: run setup.sh first ($INITRD)" >&2; exit 1; }
mkdir -p "$OUT"
cp "${JOB:-$HERE/guest-job.sh}" "$OUT/job.sh" && cp "$K/probes.txt" "$K/versions.txt" ${JOB_LIB:-} "$OUT/"
TIMER=irq_vectors:local_timer_entry
[ "$A" = ppc64el ] && TIMER="powerpc:timer_interrupt_entry powerpc:timer_interrupt_exit"
cat > "$OUT/params" <<P
RUN_ID=$(date -u +%Y%m%dT%H%M%SZ)
ARCH=$A
WORK=$W
MODES="$MODES"
SECONDS_PER_RUN=${SECONDS_PER_RUN:-1}
READS=${READS:-12}
KINDS=${KINDS:-proc_stat,task_stat,rusage_self,rusage_thread,process_cputime,taskstats}
CPU=${CPU:-1}
CPUS=${CPUS:-}
TIMER_EVENTS="$TIMER"
P
V="-virtfs local,path=$OUT,mount_tag=share,security_model=none,id=share"
case $A in
amd64) # the TSC is declared unstable under TCG without tsc=reliable (then the vDSO falls back to syscalls)
	Q=(qemu-system-x86_64 -accel tcg -M pc -cpu max -smp 2 -m 1G -nographic -no-reboot -kernel "$K/kernel"
		-initrd "$INITRD" $V -append "console=ttyS0 nohz_full=1 quiet tsc=reliable") ;;
ppc64el)
	Q=(qemu-system-ppc64 -accel tcg -M pseries,x-vof=on -cpu POWER9 -smp 2 -m 1G -nographic -no-reboot
		-kernel "$K/kernel" -initrd "$INITRD" $V -append "console=hvc0 nohz_full=1 quiet")
	[ "${ICOUNT:-1}" = 1 ] && Q+=(-icount shift=0,sleep=off) ;;
*) echo "record.sh: ARCH is amd64 or ppc64el" >&2; exit 2 ;;
esac
echo "${Q[*]}" > "$OUT/qemu-cmd.txt"
# amd64 under MTTCG on a loaded 2-core host sometimes stalls in early boot (RCU stall, no /init
# within minutes): a boot that has not started the job after BOOT_TIMEOUT s is retried.
t0=$(date +%s.%N)
for try in 1 2 3; do
	rm -rf "$OUT/out" "$OUT/job.log"   # this run's own, from a failed boot
	timeout 1200 "${Q[@]}" < /dev/null > "$OUT/console.log" 2>&1 &
	q=$!
	for _ in $(seq "${BOOT_TIMEOUT:-90}"); do [ -f "$OUT/job.log" ] || ! kill -0 $q 2>/dev/null && break; sleep 1; done
	if [ -f "$OUT/job.log" ]; then wait $q || echo "record.sh: qemu rc=$?" >&2; break; fi
	kill $q 2>/dev/null; wait $q 2>/dev/null || true
	echo "record.sh: boot $try did not reach the job, retrying" >&2
done
t1=$(date +%s.%N)
echo "host wall: $(python3 -c "print(round($t1 - $t0, 1))") s" | tee -a "$OUT/console.log"
cat "$OUT/job.log" 2>/dev/null || true
# The booted kernel's config beside the guest's /proc files: `kacct identify --root OUTDIR/out/identify`.
[ -d "$OUT/out/identify" ] && mkdir -p "$OUT/out/identify/boot" && cp "$K"/kimg/boot/config-* "$OUT/out/identify/boot/"
for m in $MODES; do
	[ -f "$OUT/out/$m.perf.data" ] || { echo "record.sh: no trace for $m" >&2; continue; }
	# --show-lost-events: a PERF_RECORD_LOST line where the ring buffer overflowed, so a loss
	# reaches the fixture (reduce.py counts them; the conformance test fails on them).
	perf script -i "$OUT/out/$m.perf.data" --kallsyms "$OUT/out/kallsyms" --ns --show-lost-events \
		-F comm,pid,tid,cpu,time,event,trace 2> "$OUT/out/$m.script.err" | xz -T1 -6 > "$OUT/out/$m.perf.script.xz"
	lost=$(xz -dc "$OUT/out/$m.perf.script.xz" | grep -c 'PERF_RECORD_LOST' || true)
	[ "$lost" = 0 ] || echo "record.sh: $m: perf lost events ($lost PERF_RECORD_LOST records)" >&2
done
ls -la "$OUT/out"

#!/bin/bash
# Record unmodified programs (reads-programs.sh's: LTP CPU-time tests, stress-ng) on a tick kernel
# with IRQ_TIME_ACCOUNTING from tools/kernel-build (amd64 or ppc64le): irq-record.sh's probes and
# guest with irq-reads-init.sh as /init, then per program the perf script and strace files.
#   [BUSYBOX=...] [WORK=...] irq-reads-record.sh KERNEL_DIR LTP_BUILD OUTDIR PROGRAM...
# LTP_BUILD: a built LTP tree (reads-setup.sh's; ppc64le: cross-built static). OUTDIR gets
# irq-record.sh's files plus out/ (the guest's MODE.perf.data, MODE.perf.script.xz, MODE.strace/,
# ...). Then irq-reads-reduce.py. amd64: the host's strace, stress-ng and perf go into the guest
# with the libraries ldd names. ppc64le: Debian's ppc64el perf (WORK/ppc64el/perfroot, setup.sh's)
# and strace + stress-ng (WORK/ppc64el/reads-extra.cpio.gz, reads-setup.sh's), BUSYBOX as
# irq-record.sh's; WORK defaults to /tmp/kacct-qemu.
set -euo pipefail
[ $# -ge 4 ] || { sed -n 2,12p "$0"; exit 2; }
K=$(readlink -f "$1") L=$(readlink -f "$2") OUT=$(readlink -m "$3"); shift 3
HERE=$(dirname "$(readlink -f "$0")")
ARCH=$(awk '$1 == "arch" {print $2}' "$K/meta")
W=$(readlink -m "${WORK:-/tmp/kacct-qemu}")/ppc64el
if [ "$ARCH" = ppc64le ]; then
	[ -x "$W/perfroot/usr/bin/perf" ] && [ -f "$W/reads-extra.cpio.gz" ] ||
		{ echo "irq-reads-record.sh: no $W/perfroot or reads-extra.cpio.gz (setup.sh, reads-setup.sh LTP WORK ppc64el)" >&2; exit 2; }
elif [ "$ARCH" != amd64 ]; then
	echo "irq-reads-record.sh: arch $ARCH: amd64 or ppc64le kernels only" >&2
	exit 2
fi
. "$HERE/reads-bins.sh"
R=$(mktemp -d /tmp/irq-reads.XXXX)
trap 'rm -rf "$R"' EXIT
reads_cpio "$K" "$L" "$ARCH" "$W" "$R/extra.cpio.gz" 1
modes=$(IFS=,; echo "$*")
IRQ_INIT=$HERE/irq-reads-init.sh IRQ_EXTRA=$R/extra.cpio.gz IRQ_MEM=${IRQ_MEM:-1G} IRQ_TIMEOUT=${IRQ_TIMEOUT:-3000} \
	"$HERE/irq-record.sh" "$K" "$OUT" "reads_modes=$modes"
echo "$*" > "$OUT/programs"
python3 -c 'import sys; sys.path.insert(0, sys.argv[2]); import guestlog; guestlog.extract_out(sys.argv[1])' "$OUT" "$HERE"
# kallsyms' format is System.map's (the guest's lines are not sent: the serial line is slow)
cp "$K/System.map" "$OUT/out/kallsyms"
# where the read syscalls had sampled (read-sites.py; amd64 only): perf-replay places a read with no
# runtime update of its own before a tick that came after its sample (irq-reads-reduce.py copies it)
[ "$ARCH" != amd64 ] || python3 "$HERE/read-sites.py" "$K/build/vmlinux" > "$OUT/out/read-sites.txt"
for m in "$@"; do
	[ -f "$OUT/out/$m.perf.data" ] || { echo "irq-reads-record.sh: no trace for $m" >&2; continue; }
	perf script -i "$OUT/out/$m.perf.data" --kallsyms "$OUT/out/kallsyms" --ns --show-lost-events \
		-F comm,pid,tid,cpu,time,event,trace,ip,sym 2> "$OUT/out/$m.script.err" | xz -T1 -6 > "$OUT/out/$m.perf.script.xz"
	lost=$(xz -dc "$OUT/out/$m.perf.script.xz" | grep -c 'PERF_RECORD_LOST' || true)
	echo "$m: rc $(cat "$OUT/out/$m.rc" 2> /dev/null), $(xz -dc "$OUT/out/$m.perf.script.xz" | wc -l) perf lines, $lost loss records"
done

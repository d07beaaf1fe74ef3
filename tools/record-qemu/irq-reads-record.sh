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
mkdir -p "$R/x/ltp" "$R/x/usr/bin" "$R/x/boot"
bins=(/usr/bin/strace /usr/bin/stress-ng /usr/bin/perf)
reads_ltp irq-reads-record.sh "$L" "$R/x/ltp"
if [ "$ARCH" = ppc64le ]; then
	# perf and its libraries (usr/bin, lib, lib64: no merged /usr); the LTP tests are static
	cp -a "$W/perfroot/." "$R/x/"
else
	cp "${bins[@]:0:3}" "$R/x/usr/bin/"
	reads_libs "$R/x" "${bins[@]}"
fi
# LTP's kconfig checks (clock_gettime02) read /boot/config-$(uname -r)
cp "$K/config" "$R/x/boot/config-$(awk '$1 == "kernel_version" {print $2}' "$K/meta")"
reads_no_virt "$R/x"
# the programs' commands, shared with the gen guests' job
cp "$HERE/reads-programs.sh" "$R/x/"
# ppc64le: reads-setup.sh's archive (strace, stress-ng, their libraries) first, ours after it
# (the kernel unpacks them in order: the LTP tests and /boot here replace its)
if [ "$ARCH" = ppc64le ]; then cp "$W/reads-extra.cpio.gz" "$R/extra.cpio.gz"; else : > "$R/extra.cpio.gz"; fi
(cd "$R/x" && find . | cpio -o -H newc --quiet | gzip -1) >> "$R/extra.cpio.gz"
modes=$(IFS=,; echo "$*")
IRQ_INIT=$HERE/irq-reads-init.sh IRQ_EXTRA=$R/extra.cpio.gz IRQ_MEM=${IRQ_MEM:-1G} IRQ_TIMEOUT=${IRQ_TIMEOUT:-3000} \
	"$HERE/irq-record.sh" "$K" "$OUT" "reads_modes=$modes"
echo "$*" > "$OUT/programs"
python3 -c '
import base64, io, sys, tarfile
sys.path.insert(0, sys.argv[2])
from guestlog import sections
sec = sections(sys.argv[1] + "/trace.txt")
body = [l for l in sec.get("out", []) if l and not l.startswith("begin-base64") and l != "===="]
tarfile.open(fileobj=io.BytesIO(base64.b64decode("".join(body))), mode="r:gz").extractall(sys.argv[1])
' "$OUT" "$HERE"
# kallsyms' format is System.map's (the guest's lines are not sent: the serial line is slow)
cp "$K/System.map" "$OUT/out/kallsyms"
for m in "$@"; do
	[ -f "$OUT/out/$m.perf.data" ] || { echo "irq-reads-record.sh: no trace for $m" >&2; continue; }
	perf script -i "$OUT/out/$m.perf.data" --kallsyms "$OUT/out/kallsyms" --ns --show-lost-events \
		-F comm,pid,tid,cpu,time,event,trace,ip,sym 2> "$OUT/out/$m.script.err" | xz -T1 -6 > "$OUT/out/$m.perf.script.xz"
	lost=$(xz -dc "$OUT/out/$m.perf.script.xz" | grep -c 'PERF_RECORD_LOST' || true)
	echo "$m: rc $(cat "$OUT/out/$m.rc" 2> /dev/null), $(xz -dc "$OUT/out/$m.perf.script.xz" | wc -l) perf lines, $lost loss records"
done

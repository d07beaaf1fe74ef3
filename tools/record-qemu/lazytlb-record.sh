#!/bin/bash
# Record lazy-TLB mm references (mm_users, mm_count, mm_cpumask) on an amd64 or ppc64le kernel
# under QEMU TCG (-smp 2; powerpc: -M pseries,x-vof=on -cpu POWER9): context switches, forks, exits and execs, each with the current task's active_mm
# counters (lazytlb-init.sh lists the probes). Not run by CI.
#   lazytlb-record.sh KERNEL_DIR OUTDIR [KERNEL_ARGS...]
# KERNEL_DIR: tools/kernel-build output (bzImage or vmlinux, meta, build/), or a directory with
# a Debian stock kernel: amd64 bzImage plus its vmlinux (extract-vmlinux; BTF for the offsets),
# ppc64el vmlinux (the image itself, with BTF; Debian's 6.1 has none: add the -dbg package's
# usr/lib/debug/boot/vmlinux-* as vmlinux-dbg, lazytlb-offsets.sh reads its DWARF). powerpc needs env BUSYBOX, a static ppc64el
# busybox (native-record.sh says where from), gcc-powerpc64le-linux-gnu and qemu-system-ppc. OUTDIR gets trace.txt (the
# guest's sections: header with init_mm and the probe lines, the gzip+base64 ftrace text),
# console.log, offsets and meta (if KERNEL_DIR has one). Needs busybox-static, gcc and
# qemu-system-x86; ~1 min a run. Env LTLB_TIMEOUT (s, default 600).
set -euo pipefail
K=$(readlink -f "$1") OUT=$(readlink -f "$2"); shift 2
HERE=$(dirname "$(readlink -f "$0")")
mkdir -p "$OUT"
R=$(mktemp -d /tmp/ltlb-rec.XXXX)
trap 'rm -rf "$R"' EXIT
"$HERE/lazytlb-offsets.sh" "$K" > "$OUT/offsets"
[ -r "$K/meta" ] && cp "$K/meta" "$OUT/meta"
mkdir -p "$R/root"/{bin,proc,sys,dev,tmp}
PPC=0
if [ -r "$K/vmlinux" ] && file -L "$K/vmlinux" | grep -q PowerPC; then PPC=1; fi
if [ $PPC = 1 ]; then
	cp "${BUSYBOX:?set BUSYBOX to a static ppc64el busybox}" "$R/root/bin/busybox"
	powerpc64le-linux-gnu-gcc -O2 -Wall -static -o "$R/root/lazytlb-work" "$HERE/lazytlb-work.c" -lpthread
else
	cp /bin/busybox "$R/root/bin/busybox"
	gcc -O2 -Wall -static -o "$R/root/lazytlb-work" "$HERE/lazytlb-work.c" -lpthread
fi
cp "$HERE/lazytlb-init.sh" "$R/root/init"
cp "$OUT/offsets" "$R/root/offsets"
chmod 755 "$R/root/init" "$R/root/bin/busybox"
(cd "$R/root" && find . | cpio -o -H newc --quiet | gzip -1) > "$R/initrd.cpio.gz"
rm -f "$OUT/trace.txt"
if [ $PPC = 1 ]; then
	timeout "${LTLB_TIMEOUT:-600}" qemu-system-ppc64 -accel tcg -M pseries,x-vof=on -cpu POWER9 -smp 2 -m 1G \
		-nographic -no-reboot -chardev file,id=trc,path="$OUT/trace.txt" -device spapr-vty,chardev=trc \
		-kernel "$K/vmlinux" -initrd "$R/initrd.cpio.gz" -append "console=hvc0 $*" < /dev/null 2>&1 |
		tr -d '\r' > "$OUT/console.log" || true
else
	timeout "${LTLB_TIMEOUT:-600}" qemu-system-x86_64 -accel tcg -M pc -cpu max -smp 2,sockets=2,cores=1,threads=1 \
		-m 512M -nographic -serial mon:stdio -serial null -serial file:"$OUT/trace.txt" -no-reboot \
		-kernel "$K/bzImage" -initrd "$R/initrd.cpio.gz" -append "console=ttyS0 nokaslr $*" < /dev/null |
		tr -d '\r' > "$OUT/console.log"
fi
grep -a '^LTLB:' "$OUT/console.log" || true
ls -la "$OUT"

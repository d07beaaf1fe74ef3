#!/bin/bash
# Host set-up of the QEMU recorder (Debian 12 x86-64, root). Idempotent; about 4 min the first
# time (1.6 GB of -dbg packages are downloaded and one file is taken out of each), seconds after.
#   setup.sh [WORK=/tmp/kacct-qemu]
# Result, per ARCH in amd64 ppc64el: WORK/ARCH/{kernel,initrd.cpio.gz,probes.txt,versions.txt}.
# Kernel: Debian's stock linux-image-$KV-{amd64,powerpc64le} (env KV, default 6.1.0-50).
set -euo pipefail
W=${1:-/tmp/kacct-qemu}
KV=${KV:-6.1.0-50}
HERE=$(dirname "$(readlink -f "$0")")
SRC=$(readlink -f "$HERE/../..")
export DEBIAN_FRONTEND=noninteractive
T0=$(date +%s)
say() { echo "setup.sh: [$(($(date +%s) - T0))s] $*" >&2; }   # progress: some steps take minutes
pkgs="qemu-system-x86 qemu-system-ppc busybox-static linux-perf cpio gcc libc6-dev linux-libc-dev
  gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross kmod dwarves binutils xz-utils python3"
# shellcheck disable=SC2086
if ! dpkg -s $pkgs >/dev/null 2>&1; then
	say "installing host packages (apt-get install; a few minutes the first time)"
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends $pkgs >/dev/null
fi
D=$W/debs
mkdir -p "$D/lists/partial" "$W/amd64" "$W/ppc64el"
P="-oAPT::Architecture=ppc64el -oAPT::Architectures=ppc64el -oDir::State::Lists=$D/lists"
[ -f "$D/lists/.updated" ] || { say "ppc64el package lists"
	 apt-get $P update -q >/dev/null 2>&1 || true; touch "$D/lists/.updated"; }
get() { # get APTOPTS PACKAGE: download the .deb into $D once
	local o=$1 p=$2
	ls "$D/${p}"_*.deb >/dev/null 2>&1 && return
	say "downloading $p ($(apt-cache $o show --no-all-versions "$p" 2>/dev/null | sed -n 's/^Size: //p' | head -1 |
		awk '{printf "%d MB", $1 / 1048576}'))"
	(cd "$D" && apt-get $o download "$p" >/dev/null 2>&1) ||
		{ echo "setup.sh: cannot download $p (the archive may have moved on: set KV to a current ABI)" >&2; exit 1; }
}
get "" linux-image-$KV-amd64
get "" linux-image-$KV-amd64-dbg
get "$P" linux-image-$KV-powerpc64le
get "$P" linux-image-$KV-powerpc64le-dbg
get "$P" busybox-static

kernel() { # kernel ARCH FLAVOUR APTOPTS
	local a=$1 f=$2 o=$3 k=$W/$1
	if [ ! -f "$k/probes.txt" ]; then
		say "$a: extracting the kernel and its -dbg vmlinux, kprobe offsets from DWARF"
		rm -rf "$k/kimg" && dpkg-deb -x "$D"/linux-image-$KV-${f}_*.deb "$k/kimg"
		depmod -b "$k/kimg" "$KV-$f"
		dpkg-deb --fsys-tarfile "$D"/linux-image-$KV-$f-dbg_*.deb |
			tar -xO ./usr/lib/debug/boot/vmlinux-$KV-$f > "$k/vmlinux-dbg"
		"$HERE/probes.sh" "$k/vmlinux-dbg" "$a" > "$k/probes.tmp" && mv "$k/probes.tmp" "$k/probes.txt"
		rm -f "$k/vmlinux-dbg"   # 270-630 MB; only the offsets were needed
	fi
	{
		echo "kernel=$(dpkg-deb -f "$D"/linux-image-$KV-${f}_*.deb Package Version | paste -sd' ')"
		echo "qemu=$(dpkg-query -W -f '${Version}' qemu-system-x86)"
	} > "$k/versions.txt"
}
kernel amd64 amd64 ""
kernel ppc64el powerpc64le "$P"
ln -sf kimg/boot/vmlinuz-$KV-amd64 "$W/amd64/kernel"
ln -sf kimg/boot/vmlinux-$KV-powerpc64le "$W/ppc64el/kernel"

# The workload, static, for both arches.
say "building the workload, perf sysroots and initramfs images"
gcc -O2 -Wall -static -o "$W/amd64/kacct-workload" "$SRC/tools/workload/kacct-workload.c" -lpthread
powerpc64le-linux-gnu-gcc -O2 -Wall -static -o "$W/ppc64el/kacct-workload" "$SRC/tools/workload/kacct-workload.c" -lpthread

# perf for the guest: the host's (amd64), Debian's ppc64el build with its shared libraries.
"$HERE/perf-sysroot.sh" amd64 "" "$W/amd64/perfroot"
[ -x "$W/ppc64el/perfroot/usr/bin/perf" ] || "$HERE/perf-sysroot.sh" ppc64el "$D" "$W/ppc64el/perfroot"
rm -rf "$W/ppc64el/bbx" && dpkg-deb -x "$D"/busybox-static_*_ppc64el.deb "$W/ppc64el/bbx"
"$HERE/mkinitramfs.sh" "$W/amd64" /bin/busybox
"$HERE/mkinitramfs.sh" "$W/ppc64el" "$W/ppc64el/bbx/bin/busybox"
echo "setup.sh: ready in $W"

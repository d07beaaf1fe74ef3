#!/bin/bash
# The initramfs of the unmodified-program recordings (reads-record.sh), amd64: setup.sh's image
# plus a second cpio archive (the kernel unpacks concatenated archives) with strace, stress-ng
# and LTP test binaries, each with the shared libraries ldd names (the host's, as for perf).
#   reads-setup.sh LTP_BUILD [WORK=/tmp/kacct-qemu]
# LTP_BUILD: a built LTP tree (github:linux-test-project/ltp; only the tests below are needed).
# Result: WORK/amd64/initrd-reads.cpio.gz; the binaries are /ltp/NAME in the guest.
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,7p "$0"; exit 2; }
L=$(readlink -f "$1") W=$(readlink -m "${2:-/tmp/kacct-qemu}")
K=$W/amd64
[ -f "$K/initrd.cpio.gz" ] || { echo "reads-setup.sh: run setup.sh first ($K)" >&2; exit 1; }
S=$L/testcases/kernel/syscalls
R=$(mktemp -d /tmp/reads-initramfs.XXXX)
trap 'rm -rf "$R"' EXIT
mkdir -p "$R/ltp" "$R/usr/bin"
bins=(/usr/bin/strace /usr/bin/stress-ng)
for t in getrusage/getrusage01 getrusage/getrusage02 getrusage/getrusage03 getrusage/getrusage03_child \
	getrusage/getrusage04 times/times01 times/times03 clock_gettime/clock_gettime01 clock_gettime/clock_gettime02; do
	[ -x "$S/$t" ] || { echo "reads-setup.sh: $S/$t not built (skipped)" >&2; continue; }
	cp "$S/$t" "$R/ltp/" && bins+=("$S/$t")
done
cp /usr/bin/strace /usr/bin/stress-ng "$R/usr/bin/"
# LTP's kconfig checks (clock_gettime02) read /boot/config-$(uname -r).
mkdir -p "$R/boot" && cp "$K"/kimg/boot/config-* "$R/boot/"
# getrusage04 refuses virtual machines (TCONF) when systemd-detect-virt names one; none here.
printf '#!/bin/sh\necho none\nexit 1\n' > "$R/usr/bin/systemd-detect-virt"
chmod 755 "$R/usr/bin/systemd-detect-virt"
for b in "${bins[@]}"; do ldd "$b" | grep -o '/[^ ]*' ; done | sort -u | while read -r lib; do
	[ -f "$lib" ] || continue
	dest=$R$lib
	case $lib in /usr/lib/*) dest=$R${lib#/usr} ;; esac   # the initramfs has no merged /usr
	mkdir -p "$(dirname "$dest")" && cp -L "$lib" "$dest"
done
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$K/reads-extra.cpio.gz"
cat "$K/initrd.cpio.gz" "$K/reads-extra.cpio.gz" > "$K/initrd-reads.cpio.gz"
echo "reads-setup.sh: $K/initrd-reads.cpio.gz ($(du -h "$K/initrd-reads.cpio.gz" | cut -f1)): $(ls "$R/ltp" | tr '\n' ' ')"

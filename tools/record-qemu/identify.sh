#!/bin/bash
# Capture what `kacct identify` reads from a QEMU guest running a Debian kernel, and run it there.
#   identify.sh ARCH KERNEL_DEB OUTDIR [KACCT]
# ARCH: amd64 | ppc64el. KERNEL_DEB: Debian's linux-image-*-{amd64-unsigned,powerpc64le} .deb.
# KACCT (amd64 only): a kacct binary; it and its shared libraries go into the initramfs and
# `kacct identify` (text and --json) runs in the guest. The guest boots with record.sh's
# command line (nohz_full=1) and prints proc/sys/kernel/osrelease, proc/version, proc/cmdline,
# proc/cpuinfo between markers on its console; OUTDIR/root/ gets them plus boot/config-$KV from
# the .deb (the booted kernel's config), the layout `kacct identify --root` reads.
# Env: BUSYBOX (default: /bin/busybox for amd64; ppc64el needs a static ppc64el busybox).
set -euo pipefail
A=$1 DEB=$(readlink -f "$2") OUT=$3 KACCT=${4:-}
mkdir -p "$OUT" && OUT=$(readlink -f "$OUT")
W=$(mktemp -d /tmp/kacct-identify.XXXX)
trap 'rm -rf "$W"' EXIT
dpkg-deb -x "$DEB" "$W/kimg"
KV=$(ls "$W/kimg/lib/modules")
R=$W/root
mkdir -p "$R"/{bin,proc,sys,dev,tmp,boot}
cp "${BUSYBOX:-/bin/busybox}" "$R/bin/busybox"
cp "$W/kimg/boot/config-$KV" "$R/boot/"
if [ -n "$KACCT" ]; then
	cp "$KACCT" "$R/bin/kacct"
	for lib in $(ldd "$KACCT" | grep -o '/[^ ]*'); do mkdir -p "$R$(dirname "$lib")" && cp -L "$lib" "$R$lib"; done
fi
cat > "$R/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
for f in sys/kernel/osrelease version cmdline cpuinfo; do
	echo "=== BEGIN proc/$f"; cat /proc/$f; echo "=== END"
done
if [ -x /bin/kacct ]; then
	echo "=== BEGIN identify.txt"; /bin/kacct identify; echo "rc=$?"; echo "=== END"
	echo "=== BEGIN identify.json"; /bin/kacct identify --json; echo "=== END"
fi
poweroff -f
INIT
chmod 755 "$R/init" "$R/bin/busybox"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$W/initrd.cpio.gz"
case $A in
amd64) Q=(qemu-system-x86_64 -accel tcg -M pc -cpu max -smp 2 -m 1G -nographic -no-reboot
	-kernel "$W/kimg/boot/vmlinuz-$KV" -initrd "$W/initrd.cpio.gz"
	-append "console=ttyS0 nohz_full=1 quiet tsc=reliable") ;;
ppc64el) Q=(qemu-system-ppc64 -accel tcg -M pseries,x-vof=on -cpu POWER9 -smp 2 -m 1G -nographic -no-reboot
	-kernel "$W/kimg/boot/vmlinux-$KV" -initrd "$W/initrd.cpio.gz" -append "console=hvc0 nohz_full=1 quiet") ;;
*) echo "identify.sh: ARCH is amd64 or ppc64el" >&2; exit 2 ;;
esac
echo "${Q[*]}" > "$OUT/qemu-cmd.txt"
timeout "${TIMEOUT:-900}" "${Q[@]}" < /dev/null | tr -d '\r' > "$OUT/console.log" || true
mkdir -p "$OUT/root/boot"
cp "$R/boot/config-$KV" "$OUT/root/boot/"
awk -v out="$OUT/root" '
	/=== BEGIN / { sub(/.*=== BEGIN /, ""); d = out "/" $1; sub(/\/[^\/]*$/, "", d); system("mkdir -p " d); f = out "/" $1; next }
	/^=== END/ { if (f) close(f); f = ""; next }
	f { print > f }' "$OUT/console.log"
for x in identify.txt identify.json; do [ -f "$OUT/root/$x" ] && mv "$OUT/root/$x" "$OUT/"; done
ls -R "$OUT/root"

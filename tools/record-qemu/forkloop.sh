#!/bin/bash
# Real-kernel reproduction of the gen vtime fork-residue finding (docs/findings/
# gen-vtime-fork-residues.md): Debian's stock 6.1 amd64 kernel under QEMU/TCG with nohz_full=1
# runs forkloop.c on CPU 1 in the modes nocopy and copy (the same work; the parent forks with
# its user residue flushed or below TICK_NSEC) and prints cpu1's /proc/stat growth against wall
# time. No perf, no 9p: the results come on the console.
#   forkloop.sh [WORKDIR=/tmp/kacct-forkloop]     env KV (default 6.1.0-50), SECONDS_PER_RUN (5)
set -euo pipefail
W=${1:-/tmp/kacct-forkloop}
KV=${KV:-6.1.0-50}
HERE=$(dirname "$(readlink -f "$0")")
mkdir -p "$W" && cd "$W"
ls linux-image-"$KV"-amd64_*.deb >/dev/null 2>&1 || apt-get download linux-image-"$KV"-amd64
[ -d kimg ] || dpkg-deb -x linux-image-"$KV"-amd64_*.deb kimg
gcc -O2 -static -o forkloop "$HERE/forkloop.c"
rm -rf root && mkdir -p root/bin root/proc root/sys
cp /usr/bin/busybox forkloop root/bin/
for a in sh mount cat echo poweroff; do ln -s busybox root/bin/$a; done
S=${SECONDS_PER_RUN:-5}
cat > root/init <<I
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
echo "KERNEL \$(cat /proc/version)"
for m in nocopy copy nocopy copy; do /bin/forkloop \$m 1 $S 3000 4500; done
poweroff -f
I
chmod +x root/init
(cd root && find . | cpio -o -H newc 2>/dev/null | gzip -1 > ../initrd.gz)
timeout 600 nice -n 5 qemu-system-x86_64 -accel tcg -M pc -cpu max -smp 2 -m 512M -nographic -no-reboot \
	-kernel kimg/boot/vmlinuz-"$KV"-amd64 -initrd initrd.gz \
	-append "console=ttyS0 nohz_full=1 quiet tsc=reliable" < /dev/null | tee console.log | grep -E "^(KERNEL|RESULT)"

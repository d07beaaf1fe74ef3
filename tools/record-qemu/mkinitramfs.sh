#!/bin/bash
# The guest's initramfs: busybox, the virtio/9p modules in dependency order, perf, the workload,
# guest-init as /init.   mkinitramfs.sh ARCHDIR BUSYBOX   ->  ARCHDIR/initrd.cpio.gz
set -euo pipefail
K=$(readlink -f "$1") BB=$2
HERE=$(dirname "$(readlink -f "$0")")
KV=$(ls "$K/kimg/lib/modules")
R=$(mktemp -d /tmp/initramfs.XXXX)
mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,share}
cp "$BB" "$R/bin/busybox"
cp "$HERE/guest-init" "$R/init"
cp "$K/kacct-workload" "$R/bin/kacct-workload"
cp -a "$K/perfroot/." "$R/"
: > "$R/modules.order"
for m in virtio_pci 9pnet_virtio 9p; do
	modprobe -d "$K/kimg" -S "$KV" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
	rel=${ko#"$K/kimg"}
	mkdir -p "$R$(dirname "$rel")" && cp "$ko" "$R$rel" && echo "$rel" >> "$R/modules.order"
done
chmod 755 "$R/init" "$R/bin/busybox"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$K/initrd.cpio.gz"
rm -rf "$R"

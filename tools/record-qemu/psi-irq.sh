#!/bin/bash
# Real-kernel check of the PSI idle-irq charge (docs/findings/psi-irq-idle-charge.md).
#   psi-irq.sh BZIMAGE [KERNEL_ARGS...]   -> the guest's "PSI:" lines on stdout
# BZIMAGE: an amd64 kernel built from allnoconfig + psi-irq.config (tick accounting,
# IRQ_TIME_ACCOUNTING, PSI, cgroups, 8250). KERNEL_ARGS are appended to the command line, e.g.
# psi_flood_kb=1024 psi_spin_cs=10 psi_trials=3 (defaults in psi-irq-init.sh).
# Needs busybox-static and qemu-system-x86; TCG, one guest at a time.
set -euo pipefail
K=$(readlink -f "$1")
shift
HERE=$(dirname "$(readlink -f "$0")")
R=$(mktemp -d /tmp/psi-irq.XXXX)
trap 'rm -rf "$R"' EXIT
mkdir -p "$R/root"/{bin,proc,sys,dev,tmp}
cp /bin/busybox "$R/root/bin/busybox"
cp "$HERE/psi-irq-init.sh" "$R/root/init"
chmod 755 "$R/root/init" "$R/root/bin/busybox"
(cd "$R/root" && find . | cpio -o -H newc --quiet | gzip -1) > "$R/initrd.cpio.gz"
# ttyS0: console; ttyS1 (irq 3): the flood's null sink. An unstable TSC switches irq time
# accounting off: tsc=reliable keeps the clocksource watchdog quiet, and tsc_early_khz skips a
# calibration that fails under a loaded TCG (TCG's TSC runs at the host's rate).
KHZ=$(awk -F: '/^cpu MHz/ {printf "%d", $2 * 1000; exit}' /proc/cpuinfo)
timeout "${PSI_TIMEOUT:-600}" qemu-system-x86_64 -accel tcg -M q35 -cpu max -smp 2 -m 512M -nographic \
	-serial mon:stdio -serial null -no-reboot -kernel "$K" -initrd "$R/initrd.cpio.gz" \
	-append "console=ttyS0 tsc=reliable tsc_early_khz=$KHZ $*" | tr -d '\r' | grep -a --line-buffered '^PSI:'

# Sourced by the host sides of the unmodified-program recordings (reads-setup.sh: the gen vtime
# guests' initramfs; irq-reads-record.sh and native-record.sh: the built-kernel guests', through
# reads_cpio): what goes into the guest.

# reads_ltp TOOL LTP_BUILD DEST: the LTP tests the recordings run, from a built LTP tree into
# DEST; each one copied is appended to the array bins, one not built is skipped (said on stderr)
reads_ltp() {
	local s=$2/testcases/kernel/syscalls t
	for t in getrusage/getrusage01 getrusage/getrusage02 getrusage/getrusage03 getrusage/getrusage03_child \
		getrusage/getrusage04 times/times01 times/times03 clock_gettime/clock_gettime01 clock_gettime/clock_gettime02; do
		[ -x "$s/$t" ] || { echo "$1: $s/$t not built (skipped)" >&2; continue; }
		cp "$s/$t" "$3/" && bins+=("$s/$t")
	done
}

# reads_libs ROOT BIN...: the shared libraries ldd names for the (host's) BINs, into ROOT
reads_libs() {
	local root=$1 b lib dest
	shift
	for b in "$@"; do ldd "$b" | grep -o '/[^ ]*'; done | sort -u | while read -r lib; do
		[ -f "$lib" ] || continue
		dest=$root$lib
		case $lib in /usr/lib/*) dest=$root${lib#/usr} ;; esac # the initramfs has no merged /usr
		mkdir -p "$(dirname "$dest")" && cp -L "$lib" "$dest"
	done
}

# reads_no_virt ROOT: getrusage04 refuses virtual machines (TCONF) that systemd-detect-virt names:
# a stand-in in ROOT/usr/bin that names none
reads_no_virt() {
	printf '#!/bin/sh\necho none\nexit 1\n' > "$1/usr/bin/systemd-detect-virt"
	chmod 755 "$1/usr/bin/systemd-detect-virt"
}

# reads_cpio KERNEL_DIR LTP_BUILD ARCH W OUT.cpio.gz PERF: the initramfs extra of the built-kernel
# guests (irq-reads-record.sh, native-record.sh): the LTP tests, strace, stress-ng, /boot/config
# and reads-programs.sh. ARCH: the kernel meta's arch (amd64: the host's strace, stress-ng and,
# PERF=1, perf with the libraries ldd names; ppc64le: W/reads-extra.cpio.gz (reads-setup.sh's
# strace + stress-ng) and, PERF=1, Debian's ppc64el perf from W/perfroot (setup.sh's)). Needs a
# scratch dir R and HERE (this directory).
reads_cpio() {
	local K=$1 L=$2 arch=$3 W=$4 out=$5 perf=$6 lib
	mkdir -p "$R/x/ltp" "$R/x/usr/bin" "$R/x/boot"
	local bins=(/usr/bin/strace /usr/bin/stress-ng)
	[ "$perf" = 1 ] && bins+=(/usr/bin/perf)
	local nhost=${#bins[@]}
	reads_ltp reads_cpio "$L" "$R/x/ltp"
	if [ "$arch" = ppc64le ]; then
		# perf and its libraries (usr/bin, lib, lib64: no merged /usr); the LTP tests are static.
		# Without perf still the glibc part of its libraries, which reads-extra.cpio.gz leaves to
		# it: ld64.so.2 (the program interpreter), libc, libm, libcrypt, libz, liblzma, libzstd,
		# libexpat (strace's, stress-ng's and their libraries' DT_NEEDED)
		if [ "$perf" = 1 ]; then
			cp -a "$W/perfroot/." "$R/x/"
		else
			mkdir -p "$R/x/lib64" "$R/x/lib/powerpc64le-linux-gnu"
			cp "$W/perfroot/lib64/ld64.so.2" "$R/x/lib64/"
			for lib in ld64.so.2 libc.so.6 libm.so.6 libcrypt.so.1 libz.so.1 liblzma.so.5 libzstd.so.1 libexpat.so.1; do
				cp -L "$W/perfroot/lib/powerpc64le-linux-gnu/$lib" "$R/x/lib/powerpc64le-linux-gnu/"
			done
		fi
	else
		cp "${bins[@]:0:$nhost}" "$R/x/usr/bin/"
		reads_libs "$R/x" "${bins[@]}"
	fi
	# LTP's kconfig checks (clock_gettime02) read /boot/config-$(uname -r)
	cp "$K/config" "$R/x/boot/config-$(awk '$1 == "kernel_version" {print $2}' "$K/meta")"
	reads_no_virt "$R/x"
	# the programs' commands, shared with the gen guests' job
	cp "$HERE/reads-programs.sh" "$R/x/"
	# ppc64le: reads-setup.sh's archive (strace, stress-ng, their libraries) first, ours after it
	# (the kernel unpacks them in order: the LTP tests and /boot here replace its)
	if [ "$arch" = ppc64le ]; then cp "$W/reads-extra.cpio.gz" "$out"; else : > "$out"; fi
	(cd "$R/x" && find . | cpio -o -H newc --quiet | gzip -1) >> "$out"
}

# Sourced by the host sides of the unmodified-program recordings (reads-setup.sh: the gen vtime
# guests' initramfs; irq-reads-record.sh: the irq-time guests'): what goes into the guest.

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

#!/bin/bash
# The initramfs of the unmodified-program recordings (reads-record.sh): setup.sh's image plus a
# second cpio archive (the kernel unpacks concatenated archives) with strace, stress-ng and LTP
# test binaries, each with the shared libraries it loads.
#   reads-setup.sh LTP_BUILD [WORK=/tmp/kacct-qemu] [ARCH=amd64|ppc64el]
# LTP_BUILD: a built LTP tree (github:linux-test-project/ltp; only the tests below are needed);
# for ppc64el cross-built (configure --host=powerpc64le-linux-gnu, LDFLAGS=-static).
# amd64: the host's strace and stress-ng with the libraries ldd names; ppc64el: Debian's ppc64el
# strace and stress-ng (downloaded into setup.sh's WORK/debs with its ppc64el lists) with the
# libraries their DT_NEEDED entries name, walked in the extracted packages.
# Result: WORK/ARCH/initrd-reads.cpio.gz; the binaries are /ltp/NAME in the guest.
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,11p "$0"; exit 2; }
L=$(readlink -f "$1") W=$(readlink -m "${2:-/tmp/kacct-qemu}") A=${3:-amd64}
K=$W/$A
[ -f "$K/initrd.cpio.gz" ] || { echo "reads-setup.sh: run setup.sh first ($K)" >&2; exit 1; }
. "$(dirname "$(readlink -f "$0")")/reads-bins.sh"
R=$(mktemp -d /tmp/reads-initramfs.XXXX)
trap 'rm -rf "$R"' EXIT
mkdir -p "$R/ltp" "$R/usr/bin"
bins=(/usr/bin/strace /usr/bin/stress-ng)
reads_ltp reads-setup.sh "$L" "$R/ltp"
if [ "$A" = ppc64el ]; then
	# Debian's ppc64el builds and the closure of their library packages (as perf-sysroot.sh).
	D=$W/debs X=$R.sysroot
	P="-oAPT::Architecture=$A -oAPT::Architectures=$A -oDir::State::Lists=$D/lists"
	mkdir -p "$X"
	for p in $(apt-cache $P depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
		--no-replaces --no-enhances strace stress-ng | grep -E '^(strace|stress-ng|lib|zlib)' |
		grep -vE 'dev$|-bin$|data$' | sort -u); do
		ls "$D/${p}"_*.deb >/dev/null 2>&1 || (cd "$D" && apt-get $P download "$p" >/dev/null 2>&1) || true
		for f in "$D/${p}"_*.deb; do [ -f "$f" ] && dpkg-deb -x "$f" "$X"; done
	done
	bins=() && cp "$X/usr/bin/strace" "$X/usr/bin/stress-ng" "$R/usr/bin/"
	need() { readelf -d "$1" 2>/dev/null | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'; }
	todo="$(need "$X/usr/bin/strace") $(need "$X/usr/bin/stress-ng")" seen=""
	while [ -n "${todo// /}" ]; do
		set -- $todo; l=$1; shift; todo="$*"
		case " $seen " in *" $l "*) continue ;; esac
		seen="$seen $l"
		# libc, libm, ld64 and libgcc_s are perf's too (setup.sh's perfroot, already in /lib)
		[ -e "$K/perfroot/lib/powerpc64le-linux-gnu/$l" ] && continue
		src=$(find "$X/lib" "$X/usr/lib" -name "$l" \( -type f -o -type l \) 2>/dev/null | sort | head -n 1 || true)
		[ -n "$src" ] || { echo "reads-setup.sh: missing $l" >&2; exit 1; }
		rel=${src#"$X"}; rel=${rel#/usr}   # the initramfs has no merged /usr
		mkdir -p "$R$(dirname "$rel")" && cp -L "$src" "$R$rel"
		todo="$todo $(need "$src")"
	done
	rm -rf "$X"
else
	cp /usr/bin/strace /usr/bin/stress-ng "$R/usr/bin/"
fi
# LTP's kconfig checks (clock_gettime02) read /boot/config-$(uname -r).
mkdir -p "$R/boot" && cp "$K"/kimg/boot/config-* "$R/boot/"
reads_no_virt "$R"
[ "$A" = ppc64el ] || reads_libs "$R" "${bins[@]}"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$K/reads-extra.cpio.gz"
cat "$K/initrd.cpio.gz" "$K/reads-extra.cpio.gz" > "$K/initrd-reads.cpio.gz"
echo "reads-setup.sh: $K/initrd-reads.cpio.gz ($(du -h "$K/initrd-reads.cpio.gz" | cut -f1)): $(ls "$R/ltp" | tr '\n' ' ')"

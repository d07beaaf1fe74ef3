#!/bin/bash
# A directory tree with perf and exactly the shared libraries it loads (DT_NEEDED, walked with
# readelf), for the guest's initramfs.
#   perf-sysroot.sh amd64 "" OUT          the host's /usr/bin/perf
#   perf-sysroot.sh ppc64el DEBDIR OUT    Debian's ppc64el linux-perf and its dependency closure
set -euo pipefail
A=$1 D=$2 OUT=$3
rm -rf "$OUT" && mkdir -p "$OUT/usr/bin"
if [ "$A" = amd64 ]; then
	X=/ BIN=/usr/bin/perf
else
	X=$(mktemp -d /tmp/perfroot.XXXX)
	P="-oAPT::Architecture=$A -oAPT::Architectures=$A -oDir::State::Lists=$D/lists"
	for p in $(apt-cache $P depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
		--no-replaces --no-enhances linux-perf | grep -E '^(linux-perf|lib|zlib)' | grep -vE 'dev$|-bin$|data$' | sort -u); do
		ls "$D/${p}"_*.deb >/dev/null 2>&1 || (cd "$D" && apt-get $P download "$p" >/dev/null 2>&1) || true
		for f in "$D/${p}"_*.deb; do [ -f "$f" ] && dpkg-deb -x "$f" "$X"; done
	done
	BIN=$X/usr/bin/perf
fi
cp "$BIN" "$OUT/usr/bin/perf"
need() { readelf -d "$1" 2>/dev/null | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'; }
find_lib() { find "$X/lib" "$X/usr/lib" -name "$1" \( -type f -o -type l \) 2>/dev/null | sort | head -n 1 || true; }
interp=$(readelf -l "$BIN" | sed -n 's/.*interpreter: \(.*\)\]/\1/p')
todo="$(need "$BIN") $(basename "$interp")" seen=""
while [ -n "${todo// /}" ]; do
	set -- $todo; l=$1; shift; todo="$*"
	case " $seen " in *" $l "*) continue ;; esac
	seen="$seen $l"
	src=$(find_lib "$l")
	[ -n "$src" ] || { echo "perf-sysroot.sh: missing $l" >&2; exit 1; }
	rel=${src#"$X"}; rel=/${rel#/}; rel=${rel#/usr}   # all under /lib (the initramfs has no merged /usr)
	mkdir -p "$OUT$(dirname "$rel")" && cp -L "$src" "$OUT$rel"
	todo="$todo $(need "$src")"
done
mkdir -p "$OUT$(dirname "$interp")"
[ -e "$OUT$interp" ] || cp -L "$(find_lib "$(basename "$interp")")" "$OUT$interp"
[ "$X" = / ] || rm -rf "$X"

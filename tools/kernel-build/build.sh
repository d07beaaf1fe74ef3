#!/bin/bash
# Builds a kernel for the real-kernel recorders from Debian's linux-source packages (not run by CI).
#   build.sh TARGET SERIES            e.g. build.sh amd64-irqtime-tick 6.1, build.sh ppc64le-native 6.1
# TARGET names configs/TARGET.config (merged after configs/ARCH-base.config onto allnoconfig);
# SERIES picks /usr/src/linux-source-SERIES.tar.xz. Output in $KACCT_KERNELS (default
# ~/.cache/kacct-kernels)/TARGET-VERSION/: bzImage, System.map, config, meta. meta records the
# Debian package version, the kernel version and the sha256 of every fragment and of the result;
# recorders copy it into their fixtures. Every symbol of the fragments is checked in the final
# .config (Kconfig drops unmet ones silently). Builds with nice -n 19 make -j${JOBS:-2},
# incrementally.
set -euo pipefail
[ $# -eq 2 ] || { sed -n 2,9p "$0"; exit 2; }
TARGET=$1 SERIES=$2
HERE=$(dirname "$(readlink -f "$0")")
CACHE=${KACCT_KERNELS:-$HOME/.cache/kacct-kernels}
ARCHNAME=${TARGET%%-*}
case $ARCHNAME in
amd64) KARCH=x86_64 CROSS="" IMAGE=bzImage IMAGE_PATH=arch/x86/boot/bzImage ;;
ppc64le) KARCH=powerpc CROSS=powerpc64le-linux-gnu- IMAGE=vmlinux IMAGE_PATH=vmlinux ;;
*) echo "unknown arch in target $TARGET" >&2; exit 2 ;;
esac
FRAGS=("$HERE/configs/$ARCHNAME-base.config" "$HERE/configs/$TARGET.config")
for f in "${FRAGS[@]}"; do [ -r "$f" ] || { echo "missing $f" >&2; exit 2; }; done
TAR=/usr/src/linux-source-$SERIES.tar.xz
[ -r "$TAR" ] || { echo "missing $TAR (apt-get install linux-source-$SERIES)" >&2; exit 2; }
DEBVER=$(dpkg-query -W -f='${Version}' "linux-source-$SERIES")
SRC=$CACHE/src/linux-source-$SERIES-$DEBVER
if [ ! -f "$SRC/.extracted" ]; then
	mkdir -p "$CACHE/src"
	rm -rf "$SRC" "$CACHE/src/linux-source-$SERIES"
	tar -C "$CACHE/src" -xf "$TAR"
	mv "$CACHE/src/linux-source-$SERIES" "$SRC"
	touch "$SRC/.extracted"
fi
KVER=$(make -s -C "$SRC" kernelversion)
OUT=$CACHE/$TARGET-$DEBVER
mkdir -p "$OUT/build"
M=(make -s -C "$SRC" ARCH=$KARCH CROSS_COMPILE=$CROSS O="$OUT/build")
# The fragments decide everything: start from allnoconfig each time (a changed fragment must
# not inherit the last .config), merge, fill defaults.
"${M[@]}" allnoconfig > /dev/null
(cd "$SRC" && ARCH=$KARCH CROSS_COMPILE=$CROSS scripts/kconfig/merge_config.sh -O "$OUT/build" \
	-m "$OUT/build/.config" "${FRAGS[@]}" > "$OUT/merge.log" 2>&1)
"${M[@]}" olddefconfig > /dev/null
bad=0
while read -r line; do
	case $line in
	CONFIG_*=*)
		grep -qxF "$line" "$OUT/build/.config" || { echo "not in .config: $line (got: $(grep "^${line%%=*}=" "$OUT/build/.config" || echo unset))" >&2; bad=1; } ;;
	"# CONFIG_"*" is not set")
		sym=${line#\# }; sym=${sym%% *}
		! grep -q "^$sym=" "$OUT/build/.config" || { echo "set although the fragment unsets it: $(grep "^$sym=" "$OUT/build/.config")" >&2; bad=1; } ;;
	esac
done < <(cat "${FRAGS[@]}")
[ $bad -eq 0 ] || exit 1
start=$(date +%s)
nice -n 19 "${M[@]}" -j"${JOBS:-2}" $IMAGE > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log" >&2; exit 1; }
cp "$OUT/build/$IMAGE_PATH" "$OUT/$IMAGE"
cp "$OUT/build/System.map" "$OUT/System.map"
cp "$OUT/build/.config" "$OUT/config"
{
	echo "target $TARGET"
	echo "arch $ARCHNAME"
	echo "debian_package linux-source-$SERIES $DEBVER"
	echo "kernel_version $KVER"
	for f in "${FRAGS[@]}"; do echo "fragment $(basename "$f") $(sha256sum < "$f" | cut -d' ' -f1)"; done
	echo "config_sha256 $(sha256sum < "$OUT/config" | cut -d' ' -f1)"
	echo "image $IMAGE $(sha256sum < "$OUT/$IMAGE" | cut -d' ' -f1)"
	echo "gcc $(${CROSS}gcc -dumpfullversion)"
} > "$OUT/meta"
echo "$OUT/$IMAGE ($(($(date +%s) - start)) s)"

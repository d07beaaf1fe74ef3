#!/usr/bin/env bash
# Runs .clusterfuzzlite/build.sh exactly as OSS-Fuzz's `compile` does, without Docker: the same
# environment variables, $SRC/kacct the checkout (a symlink), then checks the $OUT layout the
# runners expect (what `helper.py check_build` checks): every fuzz/fuzz_<x>.cpp built, a seed
# corpus zip next to it, and each target runs its whole seed corpus without a crash.
# Usage: tools/fuzz/oss-fuzz-build.sh [DIR]   (default build-oss-fuzz/; SANITIZER=address|undefined|address,undefined|none|coverage)
# Writes DIR/src, DIR/work, DIR/out. CC/CXX default to clang-14 (Debian 12; through ccache when it
# is installed: build.sh compiles everything each time, as OSS-Fuzz does); OSS-Fuzz's own clang is
# newer, so a warning here may be an error there, not the reverse.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mkdir -p "${1:-$root/build-oss-fuzz}" && cd "${1:-$root/build-oss-fuzz}" && pwd)
export SANITIZER=${SANITIZER:-address} FUZZING_ENGINE=libfuzzer ARCHITECTURE=x86_64 FUZZING_LANGUAGE=c++
export SRC=$dir/src WORK=$dir/work OUT=$dir/out
cc=""
if command -v ccache > /dev/null; then cc="ccache "; fi
export CC=${CC:-${cc}clang-14} CXX=${CXX:-${cc}clang++-14}
# The flags base-builder sets per sanitizer (its SANITIZER_FLAGS_* and COVERAGE_FLAGS), -O1 -gline-tables-only.
base="-O1 -fno-omit-frame-pointer -gline-tables-only"
case $SANITIZER in
  address) san="-fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link" ;;
  undefined) san="-fsanitize=array-bounds,bool,builtin,enum,float-divide-by-zero,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unsigned-integer-overflow,unreachable,vla-bound,vptr -fno-sanitize-recover=array-bounds,bool,builtin,enum,float-divide-by-zero,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unreachable,vla-bound,vptr -fsanitize=fuzzer-no-link" ;;
  # ASan+UBSan in one binary: how the local campaigns run (docs/fuzzing.md).
  address,undefined) san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link" ;;
  # No sanitizer, -O2: the plain libFuzzer build the per-input cost is measured on
  # (tools/fuzz/exec-rate.sh, docs/fuzzing.md); OSS-Fuzz's `none` with our optimisation level.
  none) san="-fsanitize=fuzzer-no-link"; base="-O2 -fno-omit-frame-pointer -gline-tables-only" ;;
  coverage) san="-fprofile-instr-generate -fcoverage-mapping -pthread -Wl,--no-as-needed -Wl,-ldl -Wl,-lm -Wno-unused-command-line-argument" ;;
  *) echo "SANITIZER=$SANITIZER: address, undefined, address,undefined, none or coverage" >&2; exit 2 ;;
esac
export CFLAGS="$base $san" CXXFLAGS="$base $san"
export LIB_FUZZING_ENGINE=-fsanitize=fuzzer
mkdir -p "$SRC" "$WORK" "$OUT"
ln -sfn "$root" "$SRC/kacct"
cp "$root/.clusterfuzzlite/build.sh" "$SRC/build.sh"
(cd "$SRC/kacct" && bash -eu "$SRC/build.sh")

# The layout check.
bad=0
for src in "$root"/fuzz/fuzz_*.cpp; do
  name=$(basename "$src" .cpp)
  if [ ! -x "$OUT/$name" ]; then echo "missing: \$OUT/$name"; bad=1; continue; fi
  if [ ! -s "$OUT/${name}_seed_corpus.zip" ]; then echo "missing: \$OUT/${name}_seed_corpus.zip"; bad=1; continue; fi
  # The libraries base-runner lacks resolve to the copies in $OUT/lib (build.sh), not the build's.
  for l in $(ldd "$OUT/$name" | awk '$1 ~ /^lib(fmt|tracecmd|traceevent|tracefs|zstd)\.so/ {print $1 "=" $3}'); do
    if [ "${l#*=}" != "$OUT/lib/${l%%=*}" ]; then echo "FAIL $name: ${l%%=*} is ${l#*=}, not in \$OUT/lib"; bad=1; fi
  done
  seeds="$WORK/seeds-$name"
  rm -rf "$seeds" && mkdir -p "$seeds" && (cd "$seeds" && unzip -q "$OUT/${name}_seed_corpus.zip")
  opts=()
  if [ -f "$OUT/$name.dict" ]; then opts+=("-dict=$OUT/$name.dict"); fi
  n=$(find "$seeds" -type f | wc -l)
  if (cd "$WORK" && "$OUT/$name" -runs=0 "${opts[@]}" "$seeds" > "$WORK/$name.check.log" 2>&1); then
    echo "ok $name: $n seeds"
  else
    echo "FAIL $name: its seed corpus (log: $WORK/$name.check.log)"; tail -n 20 "$WORK/$name.check.log"; bad=1
  fi
done
exit $bad

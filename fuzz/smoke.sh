#!/bin/sh
# Bounded libFuzzer run for ctest (fuzz_<x>_smoke): fuzz a scratch copy of the corpus (libFuzzer
# adds to the corpus it is given) and keep the log. On failure print what CI must show (the
# log's tail holds the reason) and keep the input that failed, with the command that replays it:
# the full log of a failing run is too long for CI's excerpt and hid the reason once.
# Usage: smoke.sh FUZZER REPLAYER CORPUS WORKDIR libFuzzer-options...
set -u
fuzzer=$1 replayer=$2 corpus=$3 work=$4
shift 4
rm -rf "$work" "$work.log" "$work.crash" && cp -r "$corpus" "$work" || exit 2
"$fuzzer" -seed=1 -verbosity=0 -print_funcs=0 -exact_artifact_path="$work.crash" "$@" "$work" >"$work.log" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
  tail -n 1 "$work.log"
  exit 0
fi
echo "libFuzzer exit $rc; the end of its log ($work.log):"
tail -n 60 "$work.log"
if [ -f "$work.crash" ]; then
  echo "failing input ($(wc -c <"$work.crash") bytes), as hex:"
  od -An -tx1 -v "$work.crash" | head -n 40
  echo "replay: $replayer $work.crash"
fi
exit 1

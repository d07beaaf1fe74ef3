#!/bin/sh
# Runs the benchmark programs and compares them with the committed baseline
# (bench/baseline/<program>.json) using the compare.py that Debian's libbenchmark-tools ships.
#   bench/compare.sh BUILD_DIR [PROGRAM...]      (default: every program with a baseline)
#   KACCT_BENCH_ARGS="--benchmark_filter=..."    extra arguments for the programs
#   KACCT_BENCH_SAVE=1                           write the new runs as the baseline instead
# The machine is shared and loaded: read ratios, and note `uptime`'s load average with them.
# Not run in CI (minutes of CPU).
set -eu
build=${1:?usage: bench/compare.sh BUILD_DIR [PROGRAM...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
compare=/usr/share/benchmark/compare.py
# Debian's python (its scipy), not one earlier in PATH (pyenv, venvs).
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if [ -z "${KACCT_BENCH_SAVE:-}" ] && [ ! -f "$compare" ]; then
  echo "compare.sh: $compare not found: KACCT_BENCH_TOOLS=1 ./setup.sh (libbenchmark-tools, python3-scipy)" >&2
  exit 3
fi
if [ $# -eq 0 ]; then
  for f in "$here"/baseline/bench_*.json; do set -- "$@" "$(basename "$f" .json)"; done
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for b in "$@"; do
  exe="$build/bench/$b"
  [ -x "$exe" ] || { echo "compare.sh: $exe not built (cmake --build $build --target $b)" >&2; exit 3; }
  # shellcheck disable=SC2086
  nice -n 5 "$exe" --benchmark_min_time=0.3 --benchmark_out="$out/$b.json" --benchmark_out_format=json \
    ${KACCT_BENCH_ARGS:-} > /dev/null
  if [ -n "${KACCT_BENCH_SAVE:-}" ]; then
    cp "$out/$b.json" "$here/baseline/$b.json"
    echo "saved $here/baseline/$b.json"
  else
    "$py" "$compare" benchmarks "$here/baseline/$b.json" "$out/$b.json"
  fi
done

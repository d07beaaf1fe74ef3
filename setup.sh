#!/usr/bin/env bash
# Installs what kacct needs on Debian 12 (idempotent: apt-get is skipped when all is there).
set -euo pipefail
pkgs=(cmake ninja-build pkg-config g++ clang-14 libclang-rt-14-dev clang-format-14 libgtest-dev librapidcheck-dev
      libz3-dev z3 libboost-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev libfmt-dev xz-utils liblzma-dev
      zlib1g-dev libtracecmd-dev libtraceevent-dev libtracefs-dev  # perf-convert of trace-cmd's trace.dat
      python3 linux-source-6.1 linux-source-6.12  # the last two: the kernel-diff tests (test/kernel_diff)
      chromium fonts-dejavu-core)  # the browser tests of kacct report's pages (test/report)
# bench/compare.sh (Google Benchmark's compare.py and the statistics it imports): only on request,
# so that the clean build's package install does not grow.
if [ -n "${KACCT_BENCH_TOOLS:-}" ]; then pkgs+=(libbenchmark-tools python3-scipy); fi
missing=()
for p in "${pkgs[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

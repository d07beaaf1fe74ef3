#!/usr/bin/env bash
# The whole test suite, each test program compiled once where it is worth most: the default
# build (g++ -O2) runs proof, conformance, kernel-diff, fuzz-smoke and cli tests and the unit
# programs that need the prover; the sanitizer build (clang ASan+UBSan, with the libFuzzer
# targets; no prover or CLI: KACCT_PROVER=OFF) runs the other unit programs and the prop,
# differential and fuzz-smoke tests. Line-table debug info only (-g1): full -g cost ~40% of the
# compile time; unity builds (batches of 8 files) parse the heavy headers (CLI11, JSON) once.
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh
./build.sh default
ctest --preset default
./build.sh asan
ctest --preset asan

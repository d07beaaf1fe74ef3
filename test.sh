#!/usr/bin/env bash
# The whole test suite, each test run once, where it is worth most: the default build (g++ -O2; its test programs -O1 without debug info)
# runs proof, conformance, kernel-diff and cli tests, the format check and the unit programs
# that need the prover; the sanitizer build (clang ASan+UBSan, with the libFuzzer targets; no
# prover or CLI: KACCT_PROVER=OFF) runs the other unit programs and the prop, differential and
# fuzz-smoke tests (the corpus replays only there: the default build compiles no fuzz program).
# domain_differential_test is built in both: its Z3-bound 8-bit exhaustive run (~9 s CPU at -O2,
# several times that under the sanitizers) runs in the default build, its other tests (the same
# primitives at the 32/64-bit edges, where UBSan sees the shifts) in the sanitizer build; the
# presets' test filters say which (CMakePresets.json). Line-table debug info only (-g1): full -g
# cost ~40% of the compile time; unity builds (batches of 8 files) parse the heavy headers
# (CLI11, JSON) once.
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh
./build.sh default
ctest --preset default
./build.sh asan
ctest --preset asan

#!/usr/bin/env bash
# The whole test suite: default build, all labels; then the sanitizer build's unit and prop tests.
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh
./build.sh default
ctest --preset default
./build.sh asan
ctest --preset asan

#!/usr/bin/env bash
# A kernel-diff campaign: the kernel's own accounting functions (Debian's linux-source-6.1 and
# linux-source-6.12, extracted at build time) against the model on N inputs per function, tree
# and division flavour (default 10,000,000). Prints one summary line per comparison and exits
# non-zero on an unexplained disagreement (each printed with its input and a replay command).
#   tools/kernel-diff/campaign.sh [N] [build dir]      (build the target kernel_diff_test first)
set -uo pipefail
n=${1:-10000000}
build=${2:-build}
exe=$build/test/kernel_diff/kernel_diff_test
if [ ! -x "$exe" ]; then
  echo "campaign: $exe not built (cmake --build $build --target kernel_diff_test; needs linux-source-6.1 and linux-source-6.12)" >&2
  exit 2
fi
start=$(date +%s)
KACCT_KERNEL_DIFF_N=$n "$exe" --gtest_brief=1 2>&1 | tee /tmp/kernel-diff-campaign.$$.log |
  grep -E '^[a-z_0-9]+ .*inputs|^  [0-9]+ (documented|unexplained)|^DISAGREEMENT|^  (input|kernel|model|likely|replay)'
rc=${PIPESTATUS[0]}
echo "campaign: N=$n per function/tree/flavour, $(( $(date +%s) - start )) s, exit $rc (full log /tmp/kernel-diff-campaign.$$.log)"
exit "$rc"

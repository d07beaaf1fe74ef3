#!/bin/bash
# Record unmodified programs (LTP's CPU-time tests, stress-ng) in a gen vtime guest (ARCH):
# record.sh with reads-job.sh and reads-setup.sh's initramfs, then one fixture per program
# (reads-reduce.py: trace.perf.xz, reads.jsonl by tools/record-reads/decode.py, meta.json).
#   [ARCH=amd64|ppc64el] reads-record.sh OUTDIR FIXTURES_DIR PROGRAM...
# PROGRAM: an LTP test in the image (getrusage01, times01, ...) or stress-cpu, stress-fork,
# stress-wait, stress-get, stress-pthread (reads-programs.sh names their options). OUTDIR: as
# record.sh's.
# Env: WORK (setup.sh's, default /tmp/kacct-qemu), as record.sh. Then replay each fixture:
#   kacct perf-replay FIXTURE/trace.perf.xz --recorded FIXTURE/reads.jsonl --config 6.1-gen-hz250 \
#     [--cpu POWER9 for ppc64el]
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,11p "$0"; exit 2; }
OUT=$1 DEST=$2; shift 2
HERE=$(dirname "$(readlink -f "$0")")
W=$(readlink -m "${WORK:-/tmp/kacct-qemu}")
A=${ARCH:-amd64}
[ -f "$W/$A/initrd-reads.cpio.gz" ] || { echo "reads-record.sh: run reads-setup.sh first ($A)" >&2; exit 1; }
JOB=$HERE/reads-job.sh JOB_LIB=$HERE/reads-programs.sh INITRD=$W/$A/initrd-reads.cpio.gz WORK=$W "$HERE/record.sh" "$A" "$OUT" "$@"
python3 "$HERE/reads-reduce.py" "$OUT" "$DEST" "$@"

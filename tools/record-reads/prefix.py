#!/usr/bin/env python3
"""Cut a recording of tools/record-reads/record.sh to its first N reads: a fixture small enough
to commit (times03: 94236 reads, 6.3 MB). The trace keeps every line up to the sys_exit of the
Nth read in trace order (the reads of all threads, as perf saw them), the reads file
(reads.jsonl.xz: perf-replay --recorded reads xz) keeps exactly the reads whose syscalls lie in
that prefix, so `kacct perf-replay --recorded` finds the same reads on both sides and predicts
each one from the same events as in the whole run (a read is placed at or before its sys_exit).
  prefix.py IN_DIR OUT_DIR N
IN_DIR: record.sh's output (trace.perf.xz, reads.jsonl, meta.json). Refuses a cut that another
thread's read straddles (its sys_enter before the cut, its sys_exit after), an N beyond the
reads, and a read of the file the trace does not have."""
import json
import lzma
import os
import re
import sys

# perf script -F comm,pid,tid,cpu,time,event,trace,ip,sym: "COMM PID/TID [CPU] SECS.NS: EVENT: ..."
head_re = re.compile(r'^\s*.*?\s+(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+\d+\.\d+:\s+(\S+):\s?(.*)$')
nr_re = re.compile(r'NR (\d+)')


def fail(msg):
    sys.exit('prefix.py: ' + msg)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(os.path.join(src, 'reads.jsonl')) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    header, reads = lines[0], lines[1:]
    if 'recorder' not in header:
        fail(f'{src}/reads.jsonl: no header line first')
    if not 1 <= n <= len(reads):
        fail(f'N={n}: the recording has {len(reads)} reads')
    want = {(r['tid'], r['nr'], r['seq']) for r in reads}
    seq, open_read, done, kept = {}, {}, set(), []
    cut = None
    with lzma.open(os.path.join(src, 'trace.perf.xz'), 'rt') as f:
        for lineno, line in enumerate(f, 1):
            m = head_re.match(line)
            if cut is not None:
                if m:  # the first record after the cut: stop (callchain lines before it are the cut's)
                    break
                kept.append(line)
                continue
            kept.append(line)
            if not m or m.group(4) not in ('raw_syscalls:sys_enter', 'raw_syscalls:sys_exit'):
                continue
            tid, nr = int(m.group(2)), nr_re.match(m.group(5))
            if not nr:
                continue
            nr = int(nr.group(1))
            if m.group(4).endswith('sys_enter'):
                k = (tid, nr, seq.get((tid, nr), 0) + 1)
                seq[(tid, nr)] = k[2]
                if k in want:
                    open_read[tid] = k
                else:
                    open_read.pop(tid, None)
            elif tid in open_read and open_read[tid][1] == nr:
                done.add(open_read.pop(tid))
                if len(done) == n:
                    cut = lineno
    if cut is None:
        fail(f'the trace has {len(done)} of the reads, fewer than N={n}')
    if open_read:
        k = sorted(open_read.values())[0]
        fail(f'a read straddles the cut at trace line {cut}: tid {k[0]} syscall {k[1]} #{k[2]}; choose another N')
    os.makedirs(dst, exist_ok=True)
    with lzma.open(os.path.join(dst, 'trace.perf.xz'), 'wt', preset=9 | lzma.PRESET_EXTREME) as f:
        f.writelines(kept)
    # The reads file's header lists the followed threads; those the prefix never reached stay listed
    # (a thread with no syscall in the trace has no read to miss).
    with lzma.open(os.path.join(dst, 'reads.jsonl.xz'), 'wt', preset=9) as f:
        f.write(json.dumps(header) + '\n')
        for r in reads:
            if (r['tid'], r['nr'], r['seq']) in done:
                f.write(json.dumps(r) + '\n')
    with open(os.path.join(src, 'meta.json')) as f:
        meta = json.load(f)
    meta['prefix'] = {'reads': n, 'of_reads': len(reads), 'trace_lines': len(kept), 'cut_after_line': cut,
                      'perf_lost_records': sum('PERF_RECORD_LOST' in line for line in kept)}
    with open(os.path.join(dst, 'meta.json'), 'w') as f:
        json.dump(meta, f, indent=1)
        f.write('\n')
    print(f'prefix {dst}: {n} of {len(reads)} reads, {len(kept)} trace lines (cut after line {cut})')


main()

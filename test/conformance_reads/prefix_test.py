#!/usr/bin/env python3
"""tools/record-reads/prefix.py on a small made-up recording: the cut trace ends at the Nth
read's sys_exit (its callchain lines kept, nothing after), the reads file keeps exactly the
reads before the cut, and a cut another thread's read straddles, or an N beyond the reads, is
refused with nothing written.
  prefix_test.py TOOLS_RECORD_READS_DIR"""
import json
import lzma
import os
import subprocess
import sys
import tempfile

prefix = os.path.join(sys.argv[1], 'prefix.py')
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checks import check, finish  # noqa: E402  (test/checks.py)


def line(tid, ts, event, rest):
    return f'            prog {tid}/{tid} [000] {ts}: {event}: {rest}\n'


# Thread 10 reads times() twice (NR 100), thread 11 reads getrusage (NR 98) once; thread 11's
# read straddles thread 10's second read (enter before its exit, exit after).
trace = [
    line(10, '1.000000001', 'raw_syscalls:sys_enter', 'NR 100 (7ffd0)'),
    line(10, '1.000000002', 'raw_syscalls:sys_exit', 'NR 100 = 5'),                    # read 1 of 10
    line(10, '1.000000003', 'irq_vectors:local_timer_entry', 'vector=236'),
    '\tffffffff81000000 asm_sysvec_apic_timer_interrupt\n',
    line(10, '1.000000004', 'raw_syscalls:sys_enter', 'NR 0 (3)'),                      # not a read
    line(10, '1.000000005', 'raw_syscalls:sys_exit', 'NR 0 = 1'),
    line(11, '1.000000006', 'raw_syscalls:sys_enter', 'NR 98 (0)'),
    line(10, '1.000000007', 'raw_syscalls:sys_enter', 'NR 100 (7ffd0)'),
    line(10, '1.000000008', 'raw_syscalls:sys_exit', 'NR 100 = 6'),                    # read 2 of 10
    line(11, '1.000000009', 'raw_syscalls:sys_exit', 'NR 98 = 0'),                     # read 1 of 11
    line(10, '1.000000010', 'sched:sched_switch', 'prev_pid=10 ==> next_pid=0'),
]
reads = [{'recorder': 'strace', 'root': 10, 'tids': [10, 11]},
         {'tid': 10, 'nr': 100, 'seq': 1, 'read': 'times', 'utime': 1, 'stime': 0},
         {'tid': 10, 'nr': 100, 'seq': 2, 'read': 'times', 'utime': 1, 'stime': 1},
         {'tid': 11, 'nr': 98, 'seq': 1, 'arg0': 0, 'read': 'rusage_self', 'utime': 3, 'stime': 4}]

with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(tmp, 'rec')
    os.makedirs(src)
    with lzma.open(os.path.join(src, 'trace.perf.xz'), 'wt') as f:
        f.writelines(trace)
    with open(os.path.join(src, 'reads.jsonl'), 'w') as f:
        f.writelines(json.dumps(r) + '\n' for r in reads)
    with open(os.path.join(src, 'meta.json'), 'w') as f:
        json.dump({'root': 10, 'reads': 3}, f)

    def run(n, out):
        return subprocess.run([sys.executable, prefix, src, os.path.join(tmp, out), str(n)], capture_output=True,
                              text=True)

    r = run(1, 'p1')
    check(r.returncode == 0, f'N=1 cut: {r.stdout.strip()} {r.stderr.strip()}')
    if r.returncode == 0:
        with lzma.open(os.path.join(tmp, 'p1', 'trace.perf.xz'), 'rt') as f:
            got = f.readlines()
        check(got == trace[:2], f'N=1: the trace ends at the first read\'s sys_exit ({len(got)} lines)')
        with lzma.open(os.path.join(tmp, 'p1', 'reads.jsonl.xz'), 'rt') as f:
            got = [json.loads(x) for x in f]
        check(got == reads[:2], 'N=1: the header and the first read, nothing else')
        meta = json.load(open(os.path.join(tmp, 'p1', 'meta.json')))
        check(meta.get('prefix') == {'reads': 1, 'of_reads': 3, 'trace_lines': 2, 'cut_after_line': 2,
                                     'perf_lost_records': 0}, f'N=1: meta.json prefix {meta.get("prefix")}')

    r = run(2, 'p2')
    check(r.returncode != 0 and 'straddles' in r.stderr and 'tid 11 syscall 98 #1' in r.stderr,
          f'N=2: thread 11\'s read straddles the cut: refused ({r.stderr.strip()})')
    check(not os.path.exists(os.path.join(tmp, 'p2')), 'N=2: nothing written')

    r = run(3, 'p3')
    check(r.returncode == 0, f'N=3 cut: {r.stderr.strip()}')
    if r.returncode == 0:
        with lzma.open(os.path.join(tmp, 'p3', 'trace.perf.xz'), 'rt') as f:
            got = f.readlines()
        check(got == trace[:10], f'N=3: every line up to thread 11\'s sys_exit ({len(got)} lines)')
        with lzma.open(os.path.join(tmp, 'p3', 'reads.jsonl.xz'), 'rt') as f:
            check(len(f.readlines()) == 4, 'N=3: all three reads')

    r = run(4, 'p4')
    check(r.returncode != 0 and 'has 3 reads' in r.stderr, f'N=4: more than the reads: refused ({r.stderr.strip()})')

finish()

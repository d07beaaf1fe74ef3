#!/usr/bin/env python3
"""irq-reduce.py's gen vtime path without a kernel: the hand-written ftrace text of
handwritten/gen-irqtime/ftrace.txt (its header derives the kernel's struct vtime at each hook)
reduced as a recording; the trace and vtime checkpoints it writes must be the committed ones
(which conformance_irq_test replays), and the gen CPU's clocks, gaps and declared residues the
constructed ones.
  reduce_gen_test.py TOOLS_RECORD_QEMU_DIR HANDWRITTEN_DIR"""
import base64
import gzip
import lzma
import os
import subprocess
import sys
import tempfile

tools, hand = sys.argv[1], sys.argv[2]
src = os.path.join(hand, 'gen-irqtime')
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checks import check, finish  # noqa: E402  (test/checks.py)


with tempfile.TemporaryDirectory() as tmp:
    rec, out = os.path.join(tmp, 'rec'), os.path.join(tmp, 'out')
    os.makedirs(rec)
    text = open(os.path.join(src, 'ftrace.txt')).read()
    body = base64.b64encode(gzip.compress(text.encode(), mtime=0)).decode()
    with open(os.path.join(rec, 'trace.txt'), 'w') as f:
        f.write('==== tasks\n1 0 1 init\n59 0 59 sh\n==== trace\nbegin-base64 644 trace.gz\n' + body + '\n====\n')
    # the reducer knows a gen recording by its vtime probes
    open(os.path.join(rec, 'probes.txt'), 'w').write('p:kacct/user_enter_in vtime_user_enter\n')
    open(os.path.join(rec, 'meta'), 'w').write('kernel_version 6.12.118\n')
    r = subprocess.run([sys.executable, os.path.join(tools, 'irq-reduce.py'), rec, out, '--config',
                        '6.12.117-gen-irqtime-hz250'], capture_output=True, text=True)
    check(r.returncode == 0, f'irq-reduce.py reduces it: {r.stderr.strip()[-300:]}')
    if r.returncode == 0:
        def xz(d, n):
            return lzma.open(os.path.join(d, n), 'rt').read()
        for n in ('trace.xz', 'vtime-checkpoints.xz'):
            check(xz(out, n) == xz(src, n), f'{n} is the committed one')
        trace = xz(out, 'trace.xz').splitlines()
        events = trace[trace.index('events') + 1:]
        cpu1 = [l for l in events if l.split()[1:2] == ['1']]
        s = int(cpu1[0].split()[0]) + 6000  # task 59's starttime: the start switch's gap ends there
        want = [f'{s - 6000} 1 switch prev=0 next=59 prev_state=R gap=6000', f'{s + 9500} 1 syscall_exit',
                f'{s + 19500} 1 syscall_enter nr=0', f'{s + 21500} 1 tick', f'{s + 21500} 1 irq_enter',
                f'{s + 29500} 1 irq_exit', f'{s + 39500} 1 syscall_exit', f'{s + 49500} 1 syscall_enter nr=0',
                f'{s + 59500} 1 switch prev=59 next=0 prev_state=R gap=500']
        check(cpu1[:len(want)] == want, 'CPU 1: user exits/entries and the flush at their clocks, gap= to '
              f'next\'s starttime: {cpu1[:len(want)]}')
        check(any(l.startswith('task 59 ') and l.endswith(' vtime_utime=1000 vtime_stime=2000') for l in trace),
              'task 59 declared with the residues CPU 1 first found')
        rows = [l.split() for l in xz(out, 'vtime-checkpoints.xz').splitlines() if not l.startswith('#')]
        got = [tuple(int(x) for x in r_[2:]) for r_ in rows]
        check(got == [(59, s, 1000, 2000), (59, s + 9500, 1000, 11500), (59, s + 19500, 11000, 11500),
                      (59, s + 39500, 11000, 23500), (59, s + 49500, 21000, 23500)],
              f'vtime checkpoints as the header derives them: {got}')
        meta = open(os.path.join(out, 'meta')).read()
        check('nohz_full 1\n' in meta, 'meta names the nohz_full CPU')
        check('gen_flush_probe=1 ' in meta, 'the switch flush clock came from the flush probe')

finish()

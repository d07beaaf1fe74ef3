#!/usr/bin/env python3
"""irq-reads-reduce.py's conversion without a kernel: hand-written perf script lines of CPU 1
with the irq recorder's probes. Each irq boundary must come out at the clock the next
irqtime_account_irq() shows (st=), a tick whose interrupt came from process context just before
that interrupt's entry with its user_tick, the pending irq time as one irq before the first line,
the syscalls of other processes dropped, and a count that disagrees with the tracked context
refused.
  irq_reduce_test.py TOOLS_RECORD_QEMU_DIR"""
import importlib.util
import os
import sys

sys.path.insert(0, sys.argv[1])  # its shared modules (guestlog.py, readsfix.py)
spec = importlib.util.spec_from_file_location('irr', os.path.join(sys.argv[1], 'irq-reads-reduce.py'))
irr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(irr)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checks import check, finish  # noqa: E402  (test/checks.py)


def line(ts, event, fields, pid=80):
    return f'       prog {pid:5d}/{pid:<5d} [001] {ts // 10**9}.{ts % 10**9:09d}:  {event}: {fields}'


def ia(ts, off, pc, st, td):
    return line(ts, 'kacct:ia1', f'(ffffffff81096d80) off={off} pc={pc} st={st} td={td} us=0 ni=0 sy=0 si=0 hi=0 id=0')


H, S = 0x10000, 0x100
rec = [
    line(1_000_000_000, 'raw_syscalls:sys_enter', 'NR 98 (0, 7ffd, 0, 0, 0, 0)'),
    line(1_000_000_100, 'raw_syscalls:sys_enter', 'NR 98 (0, 7ffd, 0, 0, 0, 0)', pid=99),  # not the tree's
    ia(1_000_001_000, H, H | 0x80000000, 999_000_000, 5000),  # timer irq from process context
    line(1_000_001_500, 'kacct:tk1', '(ffffffff81097230) ut=1 sco=0 pc=65536 st=1000001200 td=5000 tp=80 tu=4 ts=8'),
    '\tffffffff81097230 account_process_tick',  # its callchain: to the timer's entry stub
    '\tffffffff81000e06 asm_sysvec_apic_timer_interrupt',
    ia(1_000_002_000, 0, H, 1_000_001_200, 0),  # its exit: entry's clock 1000001200
    ia(1_000_003_000, S, S, 1_000_002_300, 300),  # softirq: the exit's clock 1000002300
    ia(1_000_004_000, 0, S, 1_000_003_400, 300),  # softirq exit; its clock from the next
    line(1_000_004_500, 'sched:sched_stat_runtime', 'comm=prog pid=80 runtime=100 [ns]'),
    ia(1_000_005_000, H, H, 1_000_004_100, 1000),  # an irq whose exit never comes: cut here
    line(1_000_005_500, 'sched:sched_stat_runtime', 'comm=prog pid=80 runtime=100 [ns]'),
]
counts = {k: 0 for k in ('ia', 'ia_from_nmi', 'ia_before_start', 'irq_enter', 'irq_exit', 'softirq_enter', 'softirq_exit',
                         'tk', 'tk_before_start', 'tk_before_its_irq', 'tk_in_irq', 'hrtimer_dropped',
                         'syscall_lines_dropped', 'before_start')}
text, tt, lost = irr.convert(rec, 'amd64', {'80'}, counts)
frames = [l for l in text if l.startswith('\t')]
text = [l for l in text if not l.startswith('\t')]
ev = [(l.split('[001] ')[1].split(':')[0], ':'.join(l.split(': ', 1)[1].strip().split(':', 2)[:2])) for l in text]
print(''.join(text))
want = [('0.999994999', 'irq:irq_handler_entry'), ('0.999999999', 'irq:irq_handler_exit'),
        ('1.000000000', 'raw_syscalls:sys_enter'),
        ('1.000001200', 'irq_vectors:local_timer_entry'), ('1.000001200', 'kacct:tick_steal'), ('1.000001200', 'timer:hrtimer_expire_entry'),
        ('1.000001200', 'irq:irq_handler_entry'), ('1.000002300', 'irq:irq_handler_exit'),
        ('1.000003400', 'irq:softirq_entry'), ('1.000004100', 'irq:softirq_exit'),
        ('1.000004500', 'sched:sched_stat_runtime')]
check(ev == want, f'events and clocks: {ev}')
check('user=1' in text[4], 'the tick carries user_tick as user=')
check(len(frames) == 2 and 'asm_sysvec' in frames[1], f'the timer entry carries the probe\'s callchain: {frames}')
check(counts['syscall_lines_dropped'] == 1 and counts['cut_lines'] == 2, f'dropped and cut: {counts}')
check(tt == ['8 80 4 8\n'], f'task tick at its line: {tt}')  # after 2 irq lines, the syscall, 3+2 tick lines
bad = rec[:3] + [ia(1_000_002_000, S, S, 1_000_001_200, 0)]  # a softirq entry inside the hardirq
try:
    irr.convert(bad, 'amd64', {'80'}, dict(counts))
    check(False, 'a preempt count the tracking disagrees with is refused')
except SystemExit as e:
    check('preempt count' in str(e), f'a preempt count the tracking disagrees with is refused: {e}')
finish()

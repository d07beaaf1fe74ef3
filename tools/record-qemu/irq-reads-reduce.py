#!/usr/bin/env python3
"""Turn an irq-reads-record.sh run (unmodified programs on a tick kernel with IRQ_TIME_ACCOUNTING)
into reads fixtures: per program FIXTURES_DIR/ARCH-VERSION-irqtime-PROGRAM/{trace.perf.xz,
reads.jsonl, meta.json}, replayed by `kacct perf-replay --recorded` under VERSION-tick-irqtime-hz250.
  irq-reads-reduce.py RUNDIR FIXTURES_DIR PROGRAM... [--config NAME]
reads.jsonl: tools/record-reads/decode.py on the guest's strace files. trace.perf.xz: the perf
script text of CPU 1 with irq-record.sh's probes made into the events kacct's perf converter
reads, at the kernel's own clocks:
* each kacct:ia1 (irqtime_account_irq) becomes irq:irq_handler_entry/exit or irq:softirq_entry/exit
  (the kind from its offset argument and preempt count, as irq-reduce.py) at the sched_clock_cpu()
  value that call read, which the next ia1 shows as irq_start_time (st=). Irq time is charged at
  these boundaries only, so each tick's tick_delta is the model's to the ns. The trace starts at
  the first irq entry from process context; the irq time still pending there (its td=) is one
  synthetic irq before the trace's first line. The last boundary (no clock) and what follows go.
* each kacct:tk1 (account_process_tick, user_tick) becomes the tick (timer:hrtimer_expire_entry
  function=tick_sched_timer) with kacct:tick_steal steal=0 user=UT before it: the kernel's mode;
  before both an irq_vectors:local_timer_entry with the probe's kernel callchain (where the timer
  interrupted: the converter places a group read whose task_sched_runtime() took the tick at its
  rq unlock at sys_exit, docs/conformance.md).
  A tick whose interrupt came from process context goes just before that interrupt's entry at
  its clock (the entry charges nothing there: irq-reduce.py's placement), else where it fired.
* the recorded hrtimer expiries are dropped (the ticks come from tk1); syscalls as reads-reduce.py:
  the traced tree's read, wait4, getrusage, times, clock_gettime, waitid, nothing of strace's.
The tick probes' task fields (tp, tu, ts: the ticked task's utime/stime before the tick) go to
RUNDIR/out/PROGRAM.task-ticks ("LINE TID utime stime", LINE of the tick in trace.perf.xz), not
to the fixture: for checking the model's task times by hand.
An existing fixture is never overwritten."""
import datetime
import lzma
import os
import re
import shutil
import sys

from guestlog import HARDIRQ_MASK, SOFTIRQ_OFFSET, IrqContext
from readsfix import CPU, Lost, Tree, deb_arch, programs, write_fixture

NMI_OFFSET = 0x100000
NMI_ENTER = 0x110000  # __nmi_enter(): NMI_OFFSET + HARDIRQ_OFFSET (an int3 kprobe runs as an NMI)
LINE = re.compile(r'^(\s*(.+?)\s+(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+)(\d+)\.(\d{9}):(\s+(\S+):(?:\s(.*))?)$')
KV = re.compile(r'(\w+)=(\S+)')
FRAME = re.compile(r'^\s+[0-9a-f]{6,16} \S')  # a callchain frame (perf script -F ...,ip,sym)


def fmt_ts(ns):
    return f'{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}'


class Out:
    """One output line: a head (comm pid/tid [cpu]), a clock (ns; None until an exact one is known
    for an irq boundary) and the rest (': event: fields')."""
    __slots__ = ('head', 'ts', 'rest', 'exact_from', 'chain')

    def __init__(self, head, ts, rest):
        self.head, self.ts, self.rest, self.exact_from, self.chain = head, ts, rest, None, []


def convert(lines, arch, pids, counts):
    out, pending, started = [], None, False
    irq = IrqContext()
    last_enter = None  # (Out of the irq entry, from process context)
    first_td, first_head = None, None
    task_ticks = []
    tree = Tree(arch, *pids)
    lost = Lost()
    owner = None  # the output line the callchain frames that follow belong to (None: dropped)
    for raw in lines:
        lm = lost.see(raw)
        m = LINE.match(raw)
        if not m:
            if FRAME.match(raw):
                if owner is not None:
                    owner.chain.append(raw.rstrip('\n'))
            elif raw.strip() and lm:
                out.append(Out(None, None, raw))
            continue
        owner = None
        head, comm, pid, tid, cpu = m.group(1), m.group(2), m.group(3), m.group(4), int(m.group(5))
        ts = int(m.group(6)) * 1_000_000_000 + int(m.group(7))
        event, fields = m.group(9), m.group(10) or ''
        if cpu != 1:
            raise SystemExit(f'a line of CPU {cpu}; the job records CPU 1 only: {raw}')
        if event == 'kacct:ia1':
            counts['ia'] += 1
            kv = dict(KV.findall(fields))
            off, pc = int(kv['off']), int(kv['pc']) & 0x7FFFFFFF
            if pc & NMI_OFFSET:
                pc -= NMI_ENTER
                counts['ia_from_nmi'] += 1
            if pending is not None:
                pending.ts = int(kv['st'])
                pending = None
            outer = IrqContext.outer(off, pc)
            if not started:
                if off == 0 or outer & (HARDIRQ_MASK | SOFTIRQ_OFFSET):
                    counts['ia_before_start'] += 1
                    continue
                started = True
                first_td, first_head = int(kv['td']), head
            kind, from_task = irq.step(off, pc, '', raw)
            text = {'irq_enter': 'irq:irq_handler_entry: irq=0 name=kacct',
                    'irq_exit': 'irq:irq_handler_exit: irq=0 ret=handled',
                    'softirq_enter': 'irq:softirq_entry: vec=0 [action=HI]',
                    'softirq_exit': 'irq:softirq_exit: vec=0 [action=HI]'}[kind]
            o = Out(head, None, f' {text}')
            out.append(o)
            pending = o
            counts[kind] += 1
            if kind == 'irq_enter':
                last_enter = (o, from_task)
            continue
        if event == 'kacct:tk1':
            kv = dict(KV.findall(fields))
            if not started:
                counts['tk_before_start'] += 1
                continue
            counts['tk'] += 1
            ut = int(kv['ut'])
            # the timer interrupt's entry with the probe's callchain (where the interrupt came), the
            # kernel's mode of the tick, the tick
            tick = [Out(head, None, ' irq_vectors:local_timer_entry: vector=236'),
                    Out(' kacct-irqtime   -1/-1    [001] ', None, f' kacct:tick_steal: now={ts} steal=0 user={ut}'),
                    Out(head, None, f' timer:hrtimer_expire_entry: hrtimer=0 function=tick_sched_timer now={ts}')]
            owner = tick[0]
            if last_enter is not None and irq.depth == 1 and not irq.soft and last_enter[1]:
                enter = last_enter[0]
                i = next(k for k in range(len(out) - 1, -1, -1) if out[k] is enter)
                for t in tick:
                    t.exact_from = enter
                out[i:i] = tick
                counts['tk_before_its_irq'] += 1
            else:
                if ut:
                    raise SystemExit(f'user tick outside process context: {raw}')
                for t in tick:
                    t.ts = ts
                out.extend(tick)
                counts['tk_in_irq'] += 1
            if 'tp' in kv:
                task_ticks.append((tick[2], int(kv['tp']), int(kv['tu']), int(kv['ts'])))
            continue
        if event.startswith('kacct:'):
            raise SystemExit(f'unexpected probe {event}: {raw}')
        if event == 'timer:hrtimer_expire_entry':
            counts['hrtimer_dropped'] += 1
            continue
        if event == 'sched:sched_process_fork':
            tree.fork(pid, fields)
        if event.startswith('raw_syscalls:') and not tree.keep_syscall(pid, fields):
            counts['syscall_lines_dropped'] += 1
            continue
        if not started:
            counts['before_start'] += 1
        out.append(Out(head, ts, m.group(8)))
        owner = out[-1]
    if not started:
        raise SystemExit('no irq entry from process context: nothing to start at')
    # the last boundary has no clock: cut the trace there
    if pending is not None:
        i = out.index(pending)
        counts['cut_lines'] = len(out) - i
        out = out[:i]
    for o in out:
        if o.exact_from is not None:
            o.ts = o.exact_from.ts
    # recordings without the tick's callchain: no timer entry line (it would carry nothing)
    out = [o for o in out if o.chain or 'irq_vectors:local_timer_entry' not in o.rest]
    # the irq time pending at the start: one irq just before the first line
    t0 = next(o.ts for o in out if o.ts is not None)
    if first_td:
        out[0:0] = [Out(first_head, t0 - first_td - 1, ' irq:irq_handler_entry: irq=0 name=kacct-pending'),
                    Out(first_head, t0 - 1, ' irq:irq_handler_exit: irq=0 ret=handled')]
    counts['start_tick_delta'] = first_td
    prev = None
    text = []
    for o in out:
        if o.head is None:
            text.append(o.rest + '\n')
            continue
        if prev is not None and o.ts < prev:
            raise SystemExit(f'clock goes back {prev - o.ts} ns at: {o.head}{fmt_ts(o.ts)}{o.rest}')
        prev = o.ts
        text.append(f'{o.head}{fmt_ts(o.ts)}:{o.rest}\n')
        text.extend(f + '\n' for f in o.chain)
    index, k = {}, 0
    for o in out:
        index[id(o)] = k
        k += 1 + len(o.chain)
    tt = [f'{index[id(o)] + 1} {p} {u} {s}\n' for o, p, u, s in task_ticks if id(o) in index]
    return text, tt, lost


def main():
    args = [a for a in sys.argv[1:]]
    config = None
    if '--config' in args:
        k = args.index('--config')
        config = args[k + 1]
        del args[k:k + 2]
    if len(args) < 3:
        sys.exit(__doc__)
    run, dest, progs = os.path.abspath(args[0]), args[1], args[2:]
    out = os.path.join(run, 'out')
    kmeta = dict(l.split(' ', 1) for l in open(os.path.join(run, 'meta')).read().splitlines() if ' ' in l)
    arch = kmeta['arch'].strip()
    kver = kmeta.get('kernel_version', '').strip()
    # 6.12.118 has no rows in the arch table: 6.12.117's configs (the same accounting code)
    config = config or f'{"6.12.117" if kver.startswith("6.12.") else kver}-tick-irqtime-hz250'
    info = open(os.path.join(out, 'guest-info.txt')).read()
    def name(p):
        return f'{arch}-{kver}-irqtime-{p}'

    for p, d, script, root, reads in programs('irq-reads-reduce.py', out, dest, progs, name, arch):
        counts = {k: 0 for k in ('ia', 'ia_from_nmi', 'ia_before_start', 'irq_enter', 'irq_exit', 'softirq_enter',
                                 'softirq_exit', 'tk', 'tk_before_start', 'tk_before_its_irq', 'tk_in_irq',
                                 'hrtimer_dropped', 'syscall_lines_dropped', 'before_start')}
        lines = lzma.open(script, 'rt').read().splitlines()
        text, tt, lost = convert(lines, arch, {root}, counts)
        with open(os.path.join(out, p + '.task-ticks'), 'w') as f:
            f.writelines(tt)
        rc = open(os.path.join(out, p + '.rc')).read().strip()
        meta = {
            'root': int(root), 'command': open(os.path.join(out, p + '.cmd')).read().strip(), 'exit': int(rc),
            'arch': arch, 'cpu': CPU[deb_arch(arch)], 'config': config, 'kernel': f'{kmeta.get("target", "").strip()} {kver}',
            'kernel_package': kmeta.get('debian_package', '').strip(), 'run': os.path.basename(run),
            'clocksource': (re.search(r'clocksource=(\S+)', info) or re.search('', '')).group(1) if 'clocksource=' in info else '',
            'strace': (re.search(r'strace=(.*)', info).group(1) if 'strace=' in info else ''),
            'reduced': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'),
            'full_lines': len(lines), 'kept_lines': len(text), 'lost_events': lost.events, 'lost_records': lost.records,
            'reads': len(reads.splitlines()) - 1, 'task_ticks': len(tt), 'conversion': counts,
        }
        write_fixture(d, text, reads, meta)
        sites = os.path.join(out, 'read-sites.txt')  # irq-reads-record.sh's (amd64): perf-replay reads it
        if os.path.exists(sites):
            shutil.copyfile(sites, os.path.join(d, 'read-sites.txt'))
        print(f'{os.path.basename(d)}: exit {rc}, {meta["reads"]} reads, {len(text)} of {len(lines)} lines kept, '
              f'{lost.events} lost events, {counts}')


if __name__ == '__main__':
    main()

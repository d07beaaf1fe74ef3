#!/usr/bin/env python3
"""Turn a reads-record.sh run into fixtures of unmodified programs under gen vtime: per program,
FIXTURES_DIR/ARCH-PROGRAM/{trace.perf.xz, reads.jsonl, meta.json} (ARCH: the run's, amd64 or ppc64el).
  reads-reduce.py RUNDIR FIXTURES_DIR PROGRAM...
reads.jsonl: tools/record-reads/decode.py on the guest's strace files (what the kernel returned
at every CPU-time read). trace.perf.xz: the guest's perf script text of the program's CPU, every
line kept but the timer interrupt and tick_stop lines (a nohz_full CPU does not account ticks)
and the system calls kacct does not count: of the traced process tree (root and the processes
it forks), the syscalls it finds reads and reaps in (read, wait4, getrusage, times,
clock_gettime, waitid) are kept, every other syscall line is dropped, and so are all of strace's
(its wait4() calls are ptrace stops, not reaps). An existing fixture is never overwritten.
perf's PERF_RECORD_LOST lines are kept and counted in meta.json."""
import datetime
import lzma
import os
import re
import sys

from readsfix import CPU, Lost, Tree, programs, write_fixture

if len(sys.argv) < 4:
    sys.exit(__doc__)
run, dest, progs = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
out = os.path.join(run, 'out')
head = re.compile(r'^\s*.+?\s+(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+[\d.]+:\s+(\S+?):?\s')
drop = ('irq_vectors:local_timer_entry', 'powerpc:timer_interrupt_entry', 'powerpc:timer_interrupt_exit',
        'timer:tick_stop')
params = dict(re.findall(r'^(\w+)="?([^"\n]*)"?$', open(os.path.join(run, 'params')).read(), re.M))
arch = params.get('ARCH', 'amd64')
versions = dict(l.strip().split('=', 1) for l in open(os.path.join(run, 'versions.txt')) if '=' in l)
info = open(os.path.join(out, 'guest-info.txt')).read()
rid = re.fullmatch(r'(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z', params.get('RUN_ID', ''))
recorded = '{}-{}-{}T{}:{}:{}Z'.format(*rid.groups()) if rid else ''
for p, d, script, root, reads in programs('reads-reduce.py', out, dest, progs, lambda p: f'{arch}-{p}', arch):
    tree = Tree(arch, root)
    kept, total, lost = [], 0, Lost()
    for line in lzma.open(script, 'rt'):
        total += 1
        lost.see(line)
        m = head.match(line)
        if not m:
            kept.append(line)
            continue
        spid, event = m.group(1), m.group(4)
        if event in drop:
            continue
        if event == 'sched:sched_process_fork':
            tree.fork(spid, line)
        if event.startswith('raw_syscalls:') and not tree.keep_syscall(spid, line):
            continue
        kept.append(line)
    rc = open(os.path.join(out, p + '.rc')).read().strip()
    meta = {
        'root': int(root), 'command': open(os.path.join(out, p + '.cmd')).read().strip(), 'exit': int(rc),
        'arch': arch, 'cpu': CPU[arch], 'config': '6.1-gen-hz250', 'nohz_full': params.get('CPU', '1'),
        'kernel': versions.get('kernel', ''), 'qemu': versions.get('qemu', ''), 'run': os.path.basename(run),
        'clocksource': re.search(r'clocksource=(\S+)', info).group(1),
        'strace': re.search(r'strace=(.*)', info).group(1),
        'recorded': recorded,
        'reduced': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'),
        'full_lines': total, 'kept_lines': len(kept), 'lost_events': lost.events, 'lost_records': lost.records,
        'reads': len(reads.splitlines()) - 1,
    }
    write_fixture(d, kept, reads, meta)
    print(f'{os.path.basename(d)}: exit {rc}, {meta["reads"]} reads, {len(kept)} of {total} lines kept, '
          f'{os.path.getsize(os.path.join(d, "trace.perf.xz"))} bytes, {lost.events} lost events')

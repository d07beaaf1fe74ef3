#!/usr/bin/env python3
"""Cut `perf script --ns -F comm,pid,tid,cpu,time,event,trace,ip,sym` output down to what kacct
needs to predict one process's CPU times: every sample of that process (with its callchain),
every scheduler switch/fork/exit (who is current on each CPU), runtime updates of its threads,
and perf's lost-event records. Usage: reduce.py [--tree] PID [STEAL] < full.txt > reduced.txt

--tree: the process tree below PID (tools/record-reads/): a forked child is a member too, not only
its threads.

STEAL: steal.bt's output ("@steal[CPU, NOW]: NS" per tick): each kept tick (hrtimer_expire_entry of the
tick function) is preceded by a `kacct:tick_steal: now=NOW steal=NS` line of the same CPU and
time, the steal the kernel took out of that tick (docs/perf.md, "Steal")."""
import re
import sys

import tick_steal

args = sys.argv[1:]
tree = bool(args) and args[0] == '--tree'
if tree:
    args = args[1:]
if not args:
    sys.exit(__doc__)
pid = args[0]
steal = tick_steal.load(args[1] if len(args) > 1 else None)  # (cpu, now) -> ns
head = re.compile(r'^\s*.+?\s+(-?\d+)/(-?\d+)\s+\[\d+\]\s+[\d.]+:\s+(\S+?):?\s')
keep_always = ('sched:sched_switch', 'sched:sched_process_fork', 'sched:sched_process_exit')
keeping = False
pids = {pid}  # thread groups followed (with --tree, forked children join)
group = {pid}  # their tids: samples say pid/tid; forks by a member add the child
out = sys.stdout
for line in sys.stdin:
    if line.startswith(('\t', ' ')) and re.match(r'^\s+[0-9a-f]{6,}\s', line):
        if keeping:
            out.write(line)
        continue
    if not line.strip():
        if keeping:
            out.write(line)
        continue
    m = head.match(line)
    if not m:
        keeping = True  # unknown shape: keep it, the parser will judge
        out.write(line)
        continue
    spid, stid, event = m.group(1), m.group(2), m.group(3)
    if spid in pids:
        group.add(stid)
    if event == 'sched:sched_process_fork' and spid in pids:
        c = re.search(r'child_pid=(\d+)', line)
        if c:  # a thread, or with --tree a process too
            group.add(c.group(1))
            if tree:
                pids.add(c.group(1))
    keeping = spid in pids or event in keep_always or event.startswith('PERF_RECORD_LOST')
    if event == 'sched:sched_stat_runtime':
        # A runtime update of one of our threads can be emitted from another task's context
        # (an update_curr() of a remote runqueue, e.g. at wakeup): keep it by its pid= field.
        r = re.search(r' pid=(\d+) ', line)
        keeping = bool(r) and r.group(1) in group
    if keeping:
        out.write(tick_steal.line_before(steal, event, line) or '')
        out.write(line)

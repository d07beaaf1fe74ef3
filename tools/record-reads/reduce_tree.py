#!/usr/bin/env python3
"""Cut `perf script --ns -F comm,pid,tid,cpu,time,event,trace,ip,sym` output down to what kacct
needs to predict the CPU times of a process tree (tools/record-perf/reduce.py does one process):
every sample of the tree (with its callchain), every scheduler switch/fork/exit, runtime updates
of its threads (by their pid= field: update_curr() of a remote runqueue runs in another task's
context), perf's lost-event records, and the tick steal lines of tools/record-perf/tick_steal.py.
Usage: reduce_tree.py ROOT_PID [STEAL] < full.txt > reduced.txt (STEAL: steal.bt's output)"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'record-perf'))
import tick_steal  # noqa: E402

root = sys.argv[1]
steal = tick_steal.load(sys.argv[2] if len(sys.argv) > 2 else None)  # (cpu, now) -> ns
head = re.compile(r'^\s*.+?\s+(-?\d+)/(-?\d+)\s+\[\d+\]\s+[\d.]+:\s+(\S+?):?\s')
keep_always = ('sched:sched_switch', 'sched:sched_process_fork', 'sched:sched_process_exit')
keeping = False
pids = {root}   # thread groups of the tree
tids = {root}   # their threads
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
        tids.add(stid)
    if event == 'sched:sched_process_fork' and spid in pids:
        c = re.search(r'child_pid=(\d+)', line)
        if c:  # a thread or a process: either way part of the tree
            tids.add(c.group(1))
            pids.add(c.group(1))
    keeping = spid in pids or event in keep_always or event.startswith('PERF_RECORD_LOST')
    if event == 'sched:sched_stat_runtime':
        r = re.search(r' pid=(\d+) ', line)
        keeping = bool(r) and r.group(1) in tids
    if keeping:
        out.write(tick_steal.line_before(steal, event, line) or '')
        out.write(line)

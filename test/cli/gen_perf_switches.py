#!/usr/bin/env python3
"""Write N lines of `perf script` sched_switch samples (two tasks taking turns on CPU 0, 10 us
apart): a long valid perf input for the ingestion progress test.
Usage: gen_perf_switches.py OUT N"""
import sys

out, n = sys.argv[1], int(sys.argv[2])
tasks = [("alpha", 1001), ("beta", 1002)]
with open(out, "w") as f:
    for i in range(n):
        (pc, pp), (nc, np) = tasks[i % 2], tasks[(i + 1) % 2]
        ns = 1_000_000_000 + 10_000 * i
        f.write(f"{pc:>16} {pp}/{pp} [000] {ns // 10**9}.{ns % 10**9:09d}:            sched:sched_switch: "
                f"prev_comm={pc} prev_pid={pp} prev_prio=120 prev_state=R ==> next_comm={nc} next_pid={np} "
                f"next_prio=120\n")

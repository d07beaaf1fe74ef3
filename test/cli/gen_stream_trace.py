#!/usr/bin/env python3
"""Write a long valid kacct trace to stdout with a fixed set of tasks (two threads of one
process taking turns on CPU 0 through syscalls, ticks and a read every 64 rounds), so that a
streamed consumer's memory must not grow with it. Usage: gen_stream_trace.py EVENTS"""
import sys

n = int(sys.argv[1])
out = sys.stdout
out.write("kacct-trace 1\ncpu x86-64\nncpus 1\nclock ns\n"
          "task 100 pid=100 comm=a nice=0 mm=1\ntask 101 pid=100 comm=b nice=0 mm=1\nevents\n"
          "0 0 switch prev=0 next=100\n")
written, r, buf = 1, 0, []
while written < n:
    t = r * 40000 + 1000
    lines = [f"{t} 0 syscall_exit\n", f"{t + 10000} 0 syscall_enter nr=158\n", f"{t + 15000} 0 tick\n",
             f"{t + 20000} 0 switch prev=100 next=101\n", f"{t + 21000} 0 syscall_exit\n",
             f"{t + 30000} 0 syscall_enter nr=158\n"]
    if r % 64 == 0:
        lines.append(f"{t + 35000} 0 read kind=task_stat tid=100 id={r}\n")
    lines.append(f"{t + 39000} 0 switch prev=101 next=100\n")
    lines = lines[:n - written]
    buf.extend(lines)
    written += len(lines)
    r += 1
    if len(buf) >= 65536:
        out.write("".join(buf))
        buf.clear()
out.write("".join(buf))

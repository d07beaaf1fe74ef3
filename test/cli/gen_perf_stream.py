#!/usr/bin/env python3
"""Write a long `perf script` text (as tools/record-perf/ records it) to stdout with a fixed set
of tasks: on each of 2 CPUs two threads of one process take turns through syscalls, runtime
updates, ticks (a local_timer_entry with its callchain, then the tick hrtimer) and softirqs,
so that a streamed converter's memory must not grow with it. With --marker, alpha (pid 2000)
makes one marked read early on (marker syscall 100001, then getrusage), for perf-replay
--read rusage_self@1. Usage: gen_perf_stream.py MB [--marker]"""
import sys

limit = int(sys.argv[1]) << 20
marker = "--marker" in sys.argv[2:]
out = sys.stdout
TICK_CHAIN = ("\tffffffff813300d2 __sysvec_apic_timer_interrupt\n"
              "\tffffffff8225f790 sysvec_apic_timer_interrupt\n"
              "\tffffffff81000e06 asm_sysvec_apic_timer_interrupt\n")
tasks = {0: (("alpha", 2000, 2000), ("alpha-w", 2000, 2001)), 1: (("beta", 3000, 3000), ("beta-w", 3000, 3001))}
cur = {0: 0, 1: 0}


def ts(ns):
    return f"{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}"


def sample(task, cpu, ns, event, fields, frame=None):
    comm, pid, tid = task
    tail = f" {frame}" if frame else ""
    return f"{comm:>16} {pid}/{tid} [{cpu:03d}] {ts(ns)}: {event:>30}: {fields}{tail}\n"


written, r, buf, size = 0, 0, [], 0
ns = 10_000_000_000
while written < limit:
    for cpu in (0, 1):
        a = tasks[cpu][cur[cpu]]
        b = tasks[cpu][1 - cur[cpu]]
        t = ns + cpu * 997
        lines = [
            sample(a, cpu, t, "raw_syscalls:sys_enter", "NR 0 (6, 7fff72af6ac0, 1000, 7fb3c3729b60, 0, 0)",
                   "ffffffff81423c90 syscall_trace_enter"),
            sample(a, cpu, t + 3000, "raw_syscalls:sys_exit", "NR 0 = 4096", "ffffffff81423dbc syscall_exit_work"),
        ]
        if marker and r == 1 and cpu == 0:  # the marked read: marker syscall, then getrusage(RUSAGE_SELF)
            lines += [
                sample(a, cpu, t + 5000, "raw_syscalls:sys_enter", "NR 100001 (0, 0, 0, 0, 0, 0)",
                       "ffffffff81423c90 syscall_trace_enter"),
                sample(a, cpu, t + 5500, "raw_syscalls:sys_exit", "NR 100001 = -38", "ffffffff81423dbc syscall_exit_work"),
                sample(a, cpu, t + 6000, "raw_syscalls:sys_enter", "NR 98 (0, 7fff72af6ac0, 0, 0, 0, 0)",
                       "ffffffff81423c90 syscall_trace_enter"),
                sample(a, cpu, t + 7000, "sched:sched_stat_runtime", f"comm={a[0]} pid={a[2]} runtime=2000 [ns]",
                       "ffffffff813b972a update_se"),
                sample(a, cpu, t + 8000, "raw_syscalls:sys_exit", "NR 98 = 0", "ffffffff81423dbc syscall_exit_work"),
            ]
        if r % 4 == 0:  # a user-mode tick
            lines.append(f"{a[0]} {a[1]}/{a[2]} [{cpu:03d}] {ts(t + 20000)}: irq_vectors:local_timer_entry: "
                         f"vector=236\n{TICK_CHAIN}\n")
            lines.append(sample(a, cpu, t + 21000, "timer:hrtimer_expire_entry",
                                f"hrtimer=0xffff888627c1c6f8 function=tick_nohz_handler now={t + 20500}",
                                "ffffffff8142d2b5 __hrtimer_run_queues"))
            lines.append(sample(a, cpu, t + 22000, "sched:sched_stat_runtime",
                                f"comm={a[0]} pid={a[2]} runtime=30000 [ns]", "ffffffff813b972a update_se"))
            lines.append(sample(a, cpu, t + 23000, "irq:softirq_entry", "vec=9 [action=RCU]",
                                "ffffffff813697c3 handle_softirqs"))
            lines.append(sample(a, cpu, t + 24000, "irq:softirq_exit", "vec=9 [action=RCU]",
                                "ffffffff81369779 handle_softirqs"))
        lines.append(sample(a, cpu, t + 30000, "raw_syscalls:sys_enter", "NR 24 (0, 0, 0, 0, 0, 0)",
                            "ffffffff81423c90 syscall_trace_enter"))
        lines.append(sample(a, cpu, t + 31000, "sched:sched_stat_runtime",
                            f"comm={a[0]} pid={a[2]} runtime=9000 [ns]", "ffffffff813b972a update_se"))
        lines.append(sample(a, cpu, t + 32000, "sched:sched_switch",
                            f"prev_comm={a[0]} prev_pid={a[2]} prev_prio=120 prev_state=R ==> "
                            f"next_comm={b[0]} next_pid={b[2]} next_prio=120", "ffffffff82265ec8 __schedule"))
        lines.append(sample(b, cpu, t + 33000, "raw_syscalls:sys_exit", "NR 24 = 0",
                            "ffffffff81423dbc syscall_exit_work"))
        cur[cpu] = 1 - cur[cpu]
        chunk = "".join(lines)
        buf.append(chunk)
        size += len(chunk)
        written += len(chunk)
    ns += 40000
    r += 1
    if size >= 1 << 20:
        out.write("".join(buf))
        buf.clear()
        size = 0
out.write("".join(buf))

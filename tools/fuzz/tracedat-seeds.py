#!/usr/bin/env python3
"""Writes small trace.dat seeds for fuzz/fuzz_tracedat.cpp (fuzz/corpus-tracedat/).

The fixture trace.dat (test/tracedat/fixtures/mixed) is 17 MB with all 2,305 event formats of its
kernel and its whole kallsyms: far too large to mutate. This keeps only the formats of the events
the converter reads (taken from the fixture with `trace-cmd dump`, Debian's trace-cmd), writes
them as a version 6 trace.dat (trace-cmd.dat.v6(5): header page/event, ftrace and event formats,
kallsyms, printk formats, saved cmdlines, cpus, options, flyrecord) and fills one ring-buffer page
per CPU with records built from those formats' field offsets.
Usage: tools/fuzz/tracedat-seeds.py [FIXTURE.trace.dat(.xz)] [OUTDIR]
"""
import lzma
import os
import re
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "test/tracedat/fixtures/mixed/trace.dat.xz")
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "fuzz/corpus-tracedat")
SYSTEMS = {
    "raw_syscalls": ["sys_enter", "sys_exit"],
    "sched": ["sched_switch", "sched_stat_runtime", "sched_process_fork", "sched_process_exit", "sched_wakeup"],
    "irq": ["softirq_entry", "softirq_exit", "irq_handler_entry", "irq_handler_exit"],
    "irq_vectors": ["local_timer_entry"],
    "timer": ["hrtimer_expire_entry"],
}
PAGE = 4096


def dump(path, what):
    out = subprocess.run(["trace-cmd", "dump", what, path], capture_output=True, text=True, check=True).stdout
    return "".join(l + "\n" for l in out.split("\n") if not re.match(r"^\s*\[", l)).rstrip("\n") + "\n"


def formats(text):
    """name -> (format file text, id, {field: (offset, size)})"""
    res = {}
    for block in re.split(r"\n(?=name: )", text):
        m = re.match(r"name: (\S+)\nID: (\d+)\n", block)
        if not m:
            continue
        body = block.split("\n\n\n")[0].rstrip("\n") + "\n"
        fields = {}
        for f in re.finditer(r"field:([^;]*);\toffset:(\d+);\tsize:(\d+);", body):
            name = re.sub(r"\[.*", "", f.group(1).split()[-1])
            fields[name] = (int(f.group(2)), int(f.group(3)))
        res[m.group(1)] = (body, int(m.group(2)), fields)
    return res


def record(fmt, common_pid, vals):
    body, eid, fields = fmt
    size = max(o + s for o, s in fields.values())
    data = bytearray(size)
    struct.pack_into("<HBBi", data, 0, eid, 0, 0, common_pid)
    tail = b""
    for k, v in vals.items():
        o, s = fields[k]
        if isinstance(v, str):  # a char array, or a __data_loc string after the fixed fields
            line = next(l for l in body.split("\n") if re.search(r"[ \]]%s(\[\d*\])?;" % k, l))
            if "__data_loc" in line:
                loc = size + len(tail)
                raw = v.encode() + b"\0"
                struct.pack_into("<I", data, o, loc | (len(raw) << 16))
                tail += raw
            else:
                data[o:o + s] = v.encode()[:s - 1].ljust(s, b"\0")
        elif isinstance(v, list):
            for i, x in enumerate(v):
                struct.pack_into("<Q", data, o + 8 * i, x & (2**64 - 1))
        else:
            data[o:o + s] = (v & (2**(8 * s) - 1)).to_bytes(s, "little")
    data += tail
    while len(data) % 4:
        data += b"\0"
    return bytes(data)


def page(ts0, events):
    """events: [(delta_ns, payload)] as one ring-buffer page (type_len = payload words, <= 28)."""
    body = b""
    for delta, payload in events:
        assert len(payload) % 4 == 0 and len(payload) // 4 <= 28 and delta < 2**27
        body += struct.pack("<I", (len(payload) // 4) | (delta << 5)) + payload
    assert 16 + len(body) <= PAGE
    return (struct.pack("<QQ", ts0, len(body)) + body).ljust(PAGE, b"\0")


def tracedat(hp, he, ftrace, events, kallsyms, cmdlines, cpu_pages):
    out = b"\x17\x08\x44tracing6\0" + bytes([0, 8]) + struct.pack("<I", PAGE)
    out += b"header_page\0" + struct.pack("<Q", len(hp)) + hp.encode()
    out += b"header_event\0" + struct.pack("<Q", len(he)) + he.encode()
    out += struct.pack("<I", len(ftrace)) + b"".join(struct.pack("<Q", len(f)) + f.encode() for f in ftrace)
    out += struct.pack("<I", len(events))
    for sysname, fmts in events:
        out += sysname.encode() + b"\0" + struct.pack("<I", len(fmts))
        out += b"".join(struct.pack("<Q", len(f)) + f.encode() for f in fmts)
    out += struct.pack("<I", len(kallsyms)) + kallsyms.encode()
    out += struct.pack("<I", 0)  # no trace_printk formats
    out += struct.pack("<Q", len(cmdlines)) + cmdlines.encode()
    out += struct.pack("<I", len(cpu_pages)) + b"options  \0" + struct.pack("<H", 0) + b"flyrecord\0"
    start = (len(out) + 16 * len(cpu_pages) + PAGE - 1) // PAGE * PAGE
    for i, p in enumerate(cpu_pages):
        out += struct.pack("<QQ", start + i * PAGE, len(p))
    return out.ljust(start, b"\0") + b"".join(cpu_pages)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = FIX
        if FIX.endswith(".xz"):
            path = os.path.join(tmp, "trace.dat")
            with lzma.open(FIX) as f, open(path, "wb") as g:
                g.write(f.read())
        hp, he = dump(path, "--head-page"), dump(path, "--head-event")
        ev = formats(dump(path, "--events"))
        ft = formats(dump(path, "--ftrace-events"))
    stack = ft["kernel_stack"]
    kall = ("ffffffff81000000 T _stext\nffffffff81100000 T do_syscall_64\nffffffff81200000 T sysvec_apic_timer_interrupt\n"
            "ffffffff81200100 T asm_sysvec_apic_timer_interrupt\nffffffff81300000 T tick_nohz_handler\n")
    cmd = "100 worker\n101 worker\n102 child\n"
    events = [(s, [ev[n][0] for n in names]) for s, names in SYSTEMS.items()]
    E = lambda n, common_pid, **kw: record(ev[n], common_pid, kw)
    S = lambda *addrs: record(stack, 100, {"size": len(addrs), "caller": list(addrs) + [0] * (8 - len(addrs))})
    user_tick = [(1000, E("local_timer_entry", 100, vector=236)),
                 (200, S(0xffffffff81200010, 0xffffffff81200110)),
                 (300, E("hrtimer_expire_entry", 100, hrtimer=0xffff888000001000, now=5_000_000,
                         function=0xffffffff81300000))]
    sys = lambda pid, nr, ret: [(2000, E("sys_enter", pid, id=nr, args=[1, 2, 3, 0, 0, 0])),
                                (500, E("sys_exit", pid, id=nr, ret=ret))]
    seeds = {}
    cpu0 = sys(100, 0, 5) + user_tick + sys(100, 228, 0) + sys(100, 98, 0) + user_tick
    cpu1 = sys(101, 1, 7) + user_tick + sys(101, 39, 101)
    seeds["syscalls-ticks.dat"] = [page(5_000_000, cpu0), page(5_000_100, cpu1)]
    sched0 = [(100, E("sched_process_fork", 100, parent_comm="worker", parent_pid=100, child_comm="child",
                      child_pid=102)),
              (300, E("sched_wakeup", 100, comm="child", pid=102, prio=120, target_cpu=0)),
              (900, E("sched_stat_runtime", 100, comm="worker", pid=100, runtime=250_000)),
              (50, E("sched_switch", 100, prev_comm="worker", prev_pid=100, prev_prio=120, prev_state=1,
                     next_comm="child", next_pid=102, next_prio=120))] + sys(102, 60, 0) + [
              (400, E("sched_process_exit", 102, comm="child", pid=102, prio=120)),
              (80, E("sched_switch", 102, prev_comm="child", prev_pid=102, prev_prio=120, prev_state=16,
                     next_comm="swapper/0", next_pid=0, next_prio=120))]
    seeds["fork-switch-exit.dat"] = [page(7_000_000, sched0), page(7_000_000, sys(101, 0, 1))]
    irq = [(100, E("irq_handler_entry", 101, irq=24, name="virtio0")),
           (700, E("irq_handler_exit", 101, irq=24, ret=1)),
           (100, E("softirq_entry", 101, vec=3)), (900, E("softirq_exit", 101, vec=3))]
    seeds["irq-softirq.dat"] = [page(9_000_000, sys(101, 0, 4) + irq + user_tick), page(9_000_050, irq)]
    os.makedirs(OUT, exist_ok=True)
    for name, pages in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(tracedat(hp, he, [stack[0]], events, kall, cmd, pages))


main()

#!/usr/bin/env python3
"""Where, inside the read syscalls' kernel functions, a CPU-time read has already sampled.

    read-sites.py VMLINUX [FUNCTION...] > read-sites.txt

A read that makes no runtime update of its own (getrusage(RUSAGE_THREAD), a /proc stat read of a
thread) copies the stored times in a call to a sampler (task_cputime_adjusted(),
thread_group_cputime_adjusted(); 6.1 and 6.12 kernel/sys.c getrusage(), fs/proc/array.c
do_task_stat(), kernel/sys.c do_sys_times()). A tick that interrupts the syscall came after the
sample if every path from the function's entry to the interrupted address returned from a
sampler call. This walks each function's amd64 disassembly (objdump -d of the build's vmlinux):
the instructions reachable from the entry without passing a sampler call are "before"; the
others reachable from a sampler call's return are "done". One line per function that calls a
sampler (kacct perf-replay --read-sites reads it):

    FUNCTION SAMPLER[,SAMPLER...] LO-HI [LO-HI...]

LO-HI: hex, half-open ranges of the "done" instructions' addresses (a range whose last
instruction is the function's last ends one byte past that instruction's start: an interrupted
address is an instruction's start). A function with an indirect jump is left
out (its paths cannot be followed here), said on stderr.
"""
import os
import re
import subprocess
import sys

SAMPLERS = ("task_cputime_adjusted", "thread_group_cputime_adjusted")
FUNCTIONS = ("getrusage", "__do_sys_getrusage", "do_task_stat", "do_sys_times", "__do_sys_times")
INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
TARGET = re.compile(r"^([0-9a-f]+) <([^>+]+)(\+0x[0-9a-f]+)?>")


def disassemble(vmlinux, fn):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", vmlinux, f"--disassemble={fn}"],
                         check=True, capture_output=True, text=True).stdout
    return parse(out, fn)


def parse(out, fn):
    """objdump -d --no-show-raw-insn text -> fn's [(address, mnemonic, operands)]."""
    insns, inside = [], False
    for line in out.splitlines():
        if line.endswith(f"<{fn}>:"):
            inside = True
            continue
        if inside and not line.strip():
            if insns:
                break
            continue
        m = INSN.match(line) if inside else None
        if m:
            insns.append((int(m.group(1), 16), m.group(2), m.group(3).strip()))
    return insns


def sites(insns, fn):
    """(samplers called, done ranges) or None where the paths cannot be followed."""
    addrs = [a for a, _, _ in insns]
    at = {a: i for i, a in enumerate(addrs)}
    called = set()

    def successors(i, stop_at_samplers):
        _, op, arg = insns[i]
        t = TARGET.match(arg)
        nxt = [i + 1] if i + 1 < len(insns) else []
        if op.startswith("ret") or op in ("ud2", "int3", "hlt"):
            return []
        if op.startswith("j"):
            if not t:
                return None  # indirect
            inner = int(t.group(1), 16) in at and t.group(2) == fn
            tgt = [at[int(t.group(1), 16)]] if inner else []
            return tgt if op == "jmp" else tgt + nxt
        if op == "call" and t and t.group(2) in SAMPLERS:
            called.add(t.group(2))
            return [] if stop_at_samplers else nxt
        return nxt

    def walk(starts, stop_at_samplers):
        seen, todo = set(), list(starts)
        while todo:
            i = todo.pop()
            if i in seen:
                continue
            seen.add(i)
            s = successors(i, stop_at_samplers)
            if s is None:
                return None
            todo.extend(s)
        return seen

    before = walk([0], True)
    if before is None:
        return None
    rets = [i + 1 for i, (_, op, arg) in enumerate(insns)
            if op == "call" and (t := TARGET.match(arg)) and t.group(2) in SAMPLERS and i + 1 < len(insns)]
    after = walk(rets, False)
    if after is None:
        return None
    done = sorted(after - before)
    ranges = []
    for i in done:
        end = addrs[i + 1] if i + 1 < len(addrs) else addrs[i] + 1
        if ranges and ranges[-1][1] == addrs[i]:
            ranges[-1][1] = end
        else:
            ranges.append([addrs[i], end])
    return sorted(called), ranges


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    vmlinux, fns = sys.argv[1], sys.argv[2:] or FUNCTIONS
    where = os.path.abspath(vmlinux).split(os.sep)
    print(f"# kacct read sites (tools/record-qemu/read-sites.py) of {os.sep.join(where[-3:])}")
    print("# FUNCTION SAMPLERS LO-HI...: a tick at [LO,HI) in FUNCTION came after the read sampled")
    for fn in fns:
        insns = disassemble(vmlinux, fn)
        if not insns:
            continue
        r = sites(insns, fn)
        if r is None:
            print(f"read-sites.py: {fn}: an indirect jump, left out", file=sys.stderr)
            continue
        called, ranges = r
        if called and ranges:
            print(fn, ",".join(called), " ".join(f"{lo:x}-{hi:x}" for lo, hi in ranges))


if __name__ == "__main__":
    main()

"""Shared by the reducers of the unmodified-program recordings (reads-reduce.py: gen vtime guests,
irq-reads-reduce.py: irq-time guests): the fixture directories, each program's guest output, the
reads file (tools/record-reads/decode.py on the strace files), which syscall lines the fixture
keeps (the traced process tree's reads and reaps, nothing of strace's) and the fixture's files."""
import json
import lzma
import os
import re
import subprocess
import sys

# read, wait4, getrusage, times, clock_gettime, waitid (kacct's arch/syscalls.hpp), by Debian
# arch (ppc64el; the kernel builds' meta says ppc64le)
COUNTED = {'amd64': {0, 61, 98, 100, 228, 247}, 'ppc64el': {3, 114, 77, 43, 246, 272}}
CPU = {'amd64': 'x86-64', 'ppc64el': 'POWER9'}  # the guests' QEMU -cpu max / -cpu POWER9
lost_line = re.compile(r'PERF_RECORD_LOST(?:_SAMPLES)?\s+lost\s+(\d+)')
HERE = os.path.dirname(os.path.abspath(__file__))


def deb_arch(arch):
    return 'ppc64el' if arch == 'ppc64le' else arch


def fixture_dirs(tool, dest, progs, name):
    """[(program, FIXTURES_DIR/name(program))]; exits if one exists (nothing is overwritten)."""
    todo = []
    for p in progs:
        d = os.path.join(dest, name(p))
        if os.path.exists(d):
            sys.exit(f'{tool}: {d} exists; nothing written')
        todo.append((p, d))
    return todo


def program_output(out, p):
    """(perf script file, root pid) of program p in the guest's out/, or None (said on stderr)."""
    script = os.path.join(out, p + '.perf.script.xz')
    if not os.path.exists(script) or not os.path.exists(os.path.join(out, p + '.root')):
        print(f'{p}: missing output, skipped', file=sys.stderr)
        return None
    return script, open(os.path.join(out, p + '.root')).read().strip()


def decode(tool, out, p, arch, root):
    """decode.py's reads file (text) of program p's strace files."""
    sdir = os.path.join(out, p + '.strace')
    files = [os.path.join(sdir, f) for f in os.listdir(sdir) if f.startswith('st.')]
    dec = subprocess.run([sys.executable, os.path.join(HERE, '..', 'record-reads', 'decode.py'), '--arch',
                          deb_arch(arch), root] + files, capture_output=True, text=True)
    if dec.returncode != 0:
        sys.exit(f'{tool}: {p}: {dec.stderr.strip()}')
    return dec.stdout


def programs(tool, out, dest, progs, name, arch):
    """Per program with guest output (fixture_dirs() first: nothing is overwritten): (program, its
    fixture directory, its perf script file, its root pid, its reads file text)."""
    for p, d in fixture_dirs(tool, dest, progs, name):
        got = program_output(out, p)
        if got is None:
            continue
        script, root = got
        yield p, d, script, root, decode(tool, out, p, arch, root)


class Lost:
    """perf's loss records among the script lines (PERF_RECORD_LOST, PERF_RECORD_LOST_SAMPLES):
    the events lost and the records, counted as the reducer passes each line to see()."""

    def __init__(self):
        self.events = self.records = 0

    def see(self, line):
        """The line's loss match (counted), or None."""
        m = lost_line.search(line)
        if m:
            self.events += int(m.group(1))
            self.records += 1
        return m


class Tree:
    """The traced process tree (the root and what it forks) and the syscall lines a fixture keeps."""

    def __init__(self, arch, *roots):
        self.counted, self.pids = COUNTED[deb_arch(arch)], set(roots)

    def fork(self, pid, fields):
        """A sched_process_fork line of pid: its child joins the tree when pid is in it."""
        if pid in self.pids:
            c = re.search(r'child_pid=(\d+)', fields)
            if c:
                self.pids.add(c.group(1))

    def keep_syscall(self, pid, fields):
        """A raw_syscalls line of pid: kept when the tree made it and kacct counts that syscall."""
        nr = re.search(r'NR (\d+)', fields)
        return pid in self.pids and bool(nr) and int(nr.group(1)) in self.counted


def write_fixture(d, lines, reads, meta):
    """FIXTURE/{trace.perf.xz, reads.jsonl, meta.json}."""
    os.makedirs(d)
    with lzma.open(os.path.join(d, 'trace.perf.xz'), 'wt', preset=9) as f:
        f.writelines(lines)
    with open(os.path.join(d, 'reads.jsonl'), 'w') as f:
        f.write(reads)
    with open(os.path.join(d, 'meta.json'), 'w') as f:
        json.dump(meta, f, indent=1)
        f.write('\n')

"""Shared by the reducers of the built-kernel guests (irq-reduce.py, native-reduce.py): the guest
console log's `==== name` sections, the base64 gzip trace in one of them, and task names as a
kacct trace accepts them."""
import base64
import gzip
import io
import tarfile


def sections(path):
    """{name: [lines]} of every `==== name` section of the console log."""
    out, name = {}, None
    with open(path, 'rb') as f:
        for raw in f:
            line = raw.decode('latin-1').rstrip('\r\n')
            if line.startswith('==== '):
                name = line[5:].strip()
                out[name] = []
            elif name is not None:
                out[name].append(line)
    return out


def decode_trace(lines):
    """The ftrace text a section carries as base64 of its gzip."""
    body = [l for l in lines if l and not l.startswith('begin-base64') and l != '====']
    data = base64.b64decode(''.join(body))
    return gzip.GzipFile(fileobj=io.BytesIO(data)).read().decode('latin-1').splitlines()


def extract_out(rundir):
    """The reads jobs' "out" section (tar+gzip, base64) of RUNDIR/trace.txt, unpacked into RUNDIR."""
    body = [l for l in sections(rundir + '/trace.txt').get('out', []) if l and not l.startswith('begin-base64') and l != '====']
    tarfile.open(fileobj=io.BytesIO(base64.b64decode(''.join(body))), mode='r:gz').extractall(rundir)


def sane_comm(c):
    """A comm as the trace format takes it: printable, no '#', 1..15 characters."""
    c = ''.join(ch if '!' <= ch <= '~' and ch != '#' else '_' for ch in c)
    return (c or '_')[:15]


HARDIRQ_OFFSET, SOFTIRQ_OFFSET, HARDIRQ_MASK = 0x10000, 0x100, 0xF0000


class IrqContext:
    """One CPU's irq nesting as irqtime_account_irq(curr, offset) calls show it (the irq recorders'
    ia<N> probes: offset, and the preempt count the probe read): each call's boundary kind, checked
    against the tracked context. powerpc replays soft-masked interrupts inside an extra
    irq_enter(), so hardirq entries nest there."""

    def __init__(self):
        self.depth, self.soft = 0, False

    @staticmethod
    def outer(off, pc):
        """The count of the context the call leaves or enters from (an entry's count has its own
        offset added already)."""
        return (pc - off) if off else pc

    def step(self, off, pc, prefix, raw):
        """The boundary's kind (irq_enter, irq_exit, softirq_enter, softirq_exit) and whether it is
        a hardirq entry from process context; SystemExit when the count disagrees with the tracked
        context ("PREFIXpreempt count ...: RAW")."""
        if off == HARDIRQ_OFFSET:
            kind = 'irq_enter'
        elif off == SOFTIRQ_OFFSET:
            kind = 'softirq_enter'
        else:
            kind = 'irq_exit' if pc & HARDIRQ_MASK else 'softirq_exit'
        want = self.depth * HARDIRQ_OFFSET + (SOFTIRQ_OFFSET if self.soft else 0)
        outer = self.outer(off, pc)
        if (outer & (HARDIRQ_MASK | SOFTIRQ_OFFSET)) != want:
            raise SystemExit(f'{prefix}preempt count {outer:#x}, tracked {want:#x}: {raw}')
        from_task = kind == 'irq_enter' and self.depth == 0 and not self.soft
        if kind == 'irq_enter':
            self.depth += 1
        elif kind == 'irq_exit':
            self.depth -= 1
        else:
            self.soft = kind == 'softirq_enter'
        return kind, from_task

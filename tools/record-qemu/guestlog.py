"""Shared by the reducers of the built-kernel guests (irq-reduce.py, native-reduce.py): the guest
console log's `==== name` sections, the base64 gzip trace in one of them, and task names as a
kacct trace accepts them."""
import base64
import gzip
import io


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


def sane_comm(c):
    """A comm as the trace format takes it: printable, no '#', 1..15 characters."""
    c = ''.join(ch if '!' <= ch <= '~' and ch != '#' else '_' for ch in c)
    return (c or '_')[:15]

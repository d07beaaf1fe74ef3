"""Tick steal lines for the reduced perf traces (tools/record-perf/reduce.py and
reduce.py --tree for tools/record-reads/): steal.bt's output ("@steal[CPU, NOW]: NS" per tick) is
joined to perf's hrtimer_expire_entry of the tick function on the same CPU with the same `now`,
and a `kacct:tick_steal: now=NOW steal=NS [user=0|1]` line is written before that tick
(docs/perf.md, "Steal"); user= is the mode the kernel accounted the tick in (@user rows)."""
import re

TICK_FNS = ('tick_nohz_handler', 'tick_sched_timer')
_row = re.compile(r'@(steal|user)\[(\d+), (-?\d+)\]: (\d+)$')
_stamp = re.compile(r'\[(\d+)\]\s+([\d.]+):')


def load(path):
    """(cpu, now) -> (steal ns, mode or None) of steal.bt's output at path; {} without one."""
    steal, user = {}, {}
    if path:
        for row in open(path):
            m = _row.match(row.strip())
            if m:
                (steal if m.group(1) == 'steal' else user)[(int(m.group(2)), m.group(3))] = m.group(4)
    return {k: (ns, user.get(k)) for k, ns in steal.items()}


def line_before(steal, event, line):
    """The kacct:tick_steal line to write before a kept perf line, or None."""
    if not steal or event != 'timer:hrtimer_expire_entry':
        return None
    fn, now, at = re.search(r' function=(\S+)', line), re.search(r' now=(\d+)', line), _stamp.search(line)
    if not (fn and now and at and fn.group(1) in TICK_FNS):
        return None
    got = steal.get((int(at.group(1)), now.group(1)))
    if got is None:
        return None
    ns, mode = got
    user = f' user={mode}' if mode in ('0', '1') else ''  # the kernel's mode of the tick (2: neither)
    return f'     kacct-steal   -1/-1    [{at.group(1)}] {at.group(2)}: kacct:tick_steal: now={now.group(1)} steal={ns}{user}\n'

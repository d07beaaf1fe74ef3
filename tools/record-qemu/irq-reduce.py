#!/usr/bin/env python3
"""Turn an irq-record.sh recording into a kacct trace plus the kernel's per-CPU checkpoints.

  irq-reduce.py RECDIR FIXTUREDIR [--config NAME]     (default: KERNEL_VERSION-tick-irqtime-hz250)

RECDIR/trace.txt holds the guest's "==== NAME" sections (tasks, the gzip+uuencoded ftrace
text). Every kacct/ia<N> probe (irqtime_account_irq on CPU N) becomes irq_enter / irq_exit /
softirq_enter / softirq_exit at the sched_clock_cpu() value that call read, which the next probe
on that CPU shows as irq_start_time (so each boundary's clock is exact; a CPU's last call is
dropped). Each probe's kcpustat and tick_delta are the kernel's state *before* that call: a
checkpoint before the event. kacct/tk<N> (account_process_tick, user_tick) becomes a tick at the
clock of the timer interrupt's entry; when that interrupt came from process context the tick is
put before the irq_enter (equivalent: the entry charges nothing there) with syscall_exit /
syscall_enter first so that the task's mode matches user_tick. sched tracepoints give switch,
fork and exit (and the psi script's wakeups); their ftrace clock has only us resolution and
sched_clock()'s base, so they get ftrace_ns + __sched_clock_offset, clamped between their CPU's
exact neighbours (tick accounting with irq time reads no clock at switches) and kept in ftrace
order across CPUs; sleeps are written as preemptions (see the switch case). Each CPU starts at its first irq entry from
process context; irq time still pending for the tick there (tick_delta) is put before it as one
synthetic irq, so the model starts with the kernel's tick_delta. Writes FIXTUREDIR/trace.xz,
checkpoints.xz ("EVENT_INDEX CPU user nice system softirq irq idle tick_delta", kernel ns),
task-checkpoints.xz when the tick probes fetched the task ("EVENT_INDEX CPU TID utime stime": the
ticked task's times before each tick, idle ticks left out),
psi-irq.psi.xz (the same events as a `kacct psi-irq` script), psi-kernel (the guest's
irq.pressure reads), interrupts (/proc/interrupts around the window, when recorded) and meta.

Gen vtime recordings (probes.txt has the vtime hooks; default config KERNEL_VERSION-gen-irqtime-
hz250): CPU 1 is nohz_full. It starts at the first vtime switch-in of a task with no irq time
pending (declared with the residues the probe shows, a synthetic switch whose gap= ends at the
kernel's starttime); each vtime_user_enter/exit becomes syscall_exit/syscall_enter at the clock
its return probe shows (vtime.starttime), each switch goes to prev's flush clock (the flush1
probe, else next's starttime at prev's next switch-in there, else clamped as above) with gap= to
next's starttime; the hooks' entry probes are checkpoints, and vtime-checkpoints.xz ("EVENT_INDEX
CPU TID starttime vtime_utime vtime_stime", starttime on the trace's clock) holds the task's
struct vtime before each. meta gets "nohz_full 1". The tick's mode fixes are not used there.
"""
import lzma
import os
import re
import sys

from guestlog import HARDIRQ_MASK, SOFTIRQ_OFFSET, IrqContext, decode_trace, sane_comm, sections

PF_KTHREAD = 0x00200000
LINE = re.compile(r'^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+(\d+)\.(\d+):\s+(\w+):\s*(.*)$')
NMI_ENTER = 0x110000  # __nmi_enter(): NMI_OFFSET + HARDIRQ_OFFSET
KV = re.compile(r'(\w+)=(\S+)')


class Ev:
    __slots__ = ('cpu', 'kind', 'args', 'ts', 'exact', 'approx', 'seq', 'snap', 'psi', 'ub', 'task', 'vt', 'startnext')

    def __init__(self, cpu, kind, args='', exact=None, approx=None, seq=0):
        self.cpu, self.kind, self.args = cpu, kind, args
        self.ts, self.exact, self.approx, self.seq, self.snap, self.psi, self.ub = None, exact, approx, seq, None, None, None
        self.task = None  # a tick's (pid, utime, stime) of the ticked task, before the tick
        self.vt = None  # gen vtime: (pid, vtime.starttime, .utime, .stime) before the event
        self.startnext = None  # gen vtime switch: next's vtime.starttime (the second clock read)


def psi_script(out, marks, group_of, tasks, ncpus, pids, version):
    """The same events as a `kacct psi-irq` script: irq boundaries at their exact clocks (softirq
    in ksoftirqd is not irq time), ticks, schedules and wakeups; '# mark NAME' comments where the
    guest read irq.pressure (the test cuts the script there)."""
    groups = {'/': 0}
    for g in sorted(set(group_of.values())):
        # ancestors first (a nested group's parent needs its id)
        parts = g.strip('/').split('/')
        for k in range(1, len(parts) + 1):
            groups.setdefault('/' + '/'.join(parts[:k]), len(groups))
    # script task ids (at most 256): an exited task's id is reused by a later fork of its group
    ids, free, next_id, decl = {}, {}, 1, {}

    def tid(pid):
        nonlocal next_id
        if pid not in ids:
            g = groups[group_of.get(pid, '/')]
            if free.get(g):
                ids[pid] = free[g].pop()
            else:
                ids[pid] = next_id
                decl[next_id] = (g, pid)
                next_id += 1
        return ids[pid]
    h = ['psi v1', '# reduced by tools/record-qemu/irq-reduce.py from the irq-time recording', f'version {version}',
         f'cpus {ncpus}']
    for g, i in groups.items():
        if i:
            h.append(f'group {i} parent {groups.get(g.rsplit("/", 1)[0] or "/", 0)}  # cgroup {g}')
    ev, now, cur, soft_ks, in_soft = [], None, [0] * ncpus, [False] * ncpus, [False] * ncpus
    hard = [0] * ncpus  # hardirq depth: powerpc replays soft-masked interrupts inside an irq_enter()
    ms = list(marks)
    for ts, _, e in out:
        while ms and ms[0][0] <= ts:
            if now is not None and ms[0][0] > now:
                ev.append(f'wait {ms[0][0] - now}')
                now = ms[0][0]
            ev.append(f'# mark {ms[0][1]}')
            ms.pop(0)
        if e.kind == 'mark':
            continue
        if now is not None and ts > now:
            ev.append(f'wait {ts - now}')
        now = ts
        c = e.cpu
        ks = sane_comm(tasks.get(cur[c], (0, 0, ''))[2]).startswith('ksoftirqd/')
        # the psi model does not nest irqs: a hardirq inside a softirq closes the softirq stretch
        # and reopens it after (irq_time_read() sums both kinds alike)
        # (and a nested hardirq is part of the outer one's stretch: irq_time_read() has both)
        if e.kind == 'irq_enter':
            hard[c] += 1
            if hard[c] > 1:
                continue
            if in_soft[c]:
                ev.append(f'irq_exit {c}')
            ev.append(f'irq_enter {c}')
        elif e.kind == 'irq_exit':
            hard[c] -= 1
            if hard[c]:
                continue
            ev.append(f'irq_exit {c}')
            if in_soft[c]:
                ev.append(f'irq_enter {c} soft')
        elif e.kind == 'softirq_enter':
            soft_ks[c] = ks
            if not ks:
                ev.append(f'irq_enter {c} soft')
                in_soft[c] = True
        elif e.kind == 'softirq_exit':
            if not soft_ks[c]:
                ev.append(f'irq_exit {c}')
            in_soft[c] = False
        elif e.kind == 'tick':
            ev.append(f'tick {c}')
        elif e.kind == 'switch':
            prev = int(e.args.split('prev=')[1].split()[0])
            nxt = int(e.args.split('next=')[1].split()[0])
            cur[c] = nxt
            ev.append(f'schedule {c} {tid(nxt)}' if nxt else f'idle {c}')
            if 'prev_state=X' in e.args and prev in ids:
                free.setdefault(decl[ids[prev]][0], []).append(ids.pop(prev))
        elif e.kind == 'psi_wakeup' and e.psi:
            ev.append(e.psi)
    for m in ms:
        ev.append(f'# mark {m[1]}')
    for i, (g, pid) in sorted(decl.items()):
        h.append(f'task {i} group {g}  # first pid {pid} {sane_comm(tasks.get(pid, (0, 0, "?"))[2])}')
    return '\n'.join(h + ev) + '\n'


def main():
    if len(sys.argv) < 3 or sys.argv[1].startswith('-') or sys.argv[2].startswith('-'):
        sys.exit(__doc__)
    rec, fix = sys.argv[1], sys.argv[2]
    # the kernel's version from the builder's meta: 6.1.192 -> config 6.1.192-tick-irqtime-hz250,
    # psi version 6.1.192 (Debian's revision is not a version kacct models)
    kmeta = dict(l.split(' ', 1) for l in open(rec + '/meta').read().splitlines() if ' ' in l)
    kver = kmeta.get('kernel_version', '6.1.192').strip()
    gen_kernel = 'vtime_user_enter' in (open(rec + '/probes.txt').read() if os.path.exists(rec + '/probes.txt') else '')
    config = (sys.argv[sys.argv.index('--config') + 1] if '--config' in sys.argv else
              f'{kver}-{"gen" if gen_kernel else "tick"}-irqtime-hz250')
    sec = sections(rec + '/trace.txt')
    tasks = {}  # pid -> (kthread, tgid, comm)
    for l in sec.get('tasks', []):
        p = l.split(' ', 3)
        if len(p) == 4 and p[0].isdigit():
            tasks[int(p[0])] = (int(p[1]) & PF_KTHREAD != 0, int(p[2] or p[0]), p[3])
    group_of = {}  # pid -> cgroup path ('/' is the root)
    for l in sec.get('cgroups', []):
        p = l.split(' ', 1)
        if len(p) == 2 and p[0].isdigit() and '::' in p[1]:
            group_of[int(p[0])] = p[1].split('::', 1)[1].strip() or '/'
    lines = decode_trace(sec['trace'])
    # the groups the guest read, in its order: "MARK root N A N B N ..." (irq-init.sh)
    psi_lines = [l.split() for l in sec.get('psi', []) if l.strip()]
    read_order = psi_lines[0][1::2] if psi_lines else ['root', 'A', 'B']
    # since session 13 the guest reads with its shell's `read` between "kacct read" marks; before,
    # each read was a forked sed whose fork and exit bracket it
    builtin_reads = any('kacct read ' in l for l in lines)
    sco = None
    ncpus = 2
    # gen vtime kernels (irq-record.sh probes the vtime hooks): CPU 1 is nohz_full and runs vtime
    probes = open(rec + '/probes.txt').read() if os.path.exists(rec + '/probes.txt') else ''
    G = 1 if 'vtime_user_enter' in probes else None
    switch_out = {}  # gen CPU: pid -> its last switch-out there, whose flush clock is not known yet
    child_first = {}  # gen CPU: forked pid -> its (vtime utime, stime) at its first switch-in there
    vt_decl = {}  # gen CPU: pid -> (vtime utime, stime) residues when the trace first sees it there
    pending_vt = None  # gen CPU: the vtime event whose clock the return probe gives
    started = [False] * ncpus
    irq = [IrqContext() for _ in range(ncpus)]  # each CPU's irq nesting
    cur = [0] * ncpus
    mode = {}  # pid -> 'user' | 'kernel'
    created, exited, seen = set(), set(), set()
    per_cpu = [[] for _ in range(ncpus)]  # events in order
    pending = [None] * ncpus  # ia event whose clock the next ia gives
    last_enter = [None] * ncpus  # (irq_enter event, outer was process context)
    first = [None] * ncpus  # (event, tick_delta)
    ticked = [None] * ncpus  # the irq_enter of each CPU's last tick
    counts = {'ia': 0, 'tk': 0, 'switch': 0, 'wakeup': 0, 'fork': 0, 'exit': 0, 'mode_fix': 0}
    seq = 0
    sched_on = False
    pending_reads, readers = [], {}
    sleeping = set()

    def kthread(pid):
        return tasks.get(pid, (False,))[0]

    def add(c, e):
        nonlocal seq
        e.seq = seq
        seq += 1
        per_cpu[c].append(e)
        return e

    def set_mode(c, pid, want, approx, where=None):
        if pid == 0 or kthread(pid) or mode.get(pid, 'kernel') == want:
            return []
        mode[pid] = want
        counts['mode_fix'] += 1
        return [Ev(c, 'syscall_exit' if want == 'user' else 'syscall_enter', '' if want == 'user' else 'nr=0',
                   approx=approx)]

    # gen vtime reads sched_clock() (vtime_delta(), kernel/sched/cputime.c), irq time and the
    # trace's clock sched_clock_cpu() = sched_clock() + __sched_clock_offset (x86, stable clock):
    # vtime clocks move by the offset the first tick probe fetched
    gco = 0
    if G is not None:
        tk = next((dict(KV.findall(m.group(8))) for m in map(LINE.match, lines)
                   if m and m.group(7).startswith('tk')), {})
        gco = int(tk.get('sco', 0))
        gco -= (1 << 64) if gco >= 1 << 63 else 0
    for raw in lines:
        m = LINE.match(raw)
        if not m:
            continue
        comm, pid, c, flags, s, us, ev, rest = (m.group(1).strip(), int(m.group(2)), int(m.group(3)), m.group(4),
                                                m.group(5), m.group(6), m.group(7), m.group(8))
        if not sched_on:
            # the kprobe events were enabled first: start where the sched tracepoints are on
            if ev != 'sched_switch':
                continue
            sched_on = True
        ftrace_ns = int(s) * 1_000_000_000 + int(us) * 1000
        kv = dict(KV.findall(rest))
        if ev.startswith('tk') and sco is None:
            # __sched_clock_offset is an s64 (negative when sched_clock() ran ahead of the TSC's
            # base), fetched as u64: before this, every approximate clock was 2^64 too high
            # and so clamped to its CPU's next exact boundary. powerpc has none:
            # sched_clock_cpu() is sched_clock(), ftrace's clock
            sco = int(kv.get('sco', 0))
            sco -= (1 << 64) if sco >= 1 << 63 else 0
        approx = ftrace_ns + (sco or 0)
        if ev.startswith('ia'):
            counts['ia'] += 1
            off, pc = int(kv['off']), int(kv['pc']) & 0x7FFFFFFF
            # an unoptimized kprobe runs from int3, which x86 enters as an NMI (ftrace flag Z):
            # the count it reads has the NMI entry's offsets on top of the probed context's
            if flags[2:3] in ('Z', 'z'):
                pc -= NMI_ENTER
            snap = [int(kv[k]) for k in ('us', 'ni', 'sy', 'si', 'hi', 'id', 'td')]
            if pending[c] is not None:
                pending[c].exact = int(kv['st'])
                pending[c] = None
            outer = IrqContext.outer(off, pc)
            if not started[c] and c == G:
                continue  # the gen CPU starts at a vtime switch (below)
            if not started[c]:
                if off == 0 or outer & (HARDIRQ_MASK | SOFTIRQ_OFFSET):
                    continue
                started[c] = True
                cur[c] = pid
                seen.add(pid)
                e0 = Ev(c, 'start', str(pid) if pid else '')
                first[c] = (e0, snap[6])
                add(c, e0)
            if pid != cur[c]:
                raise SystemExit(f'cpu {c}: probe in {pid}, model has {cur[c]}: {raw}')
            # the kernel's count of the context being left must match the tracked one
            nested = irq[c].depth > 0
            kind, from_task = irq[c].step(off, pc, f'cpu {c}: ', raw)
            e = add(c, Ev(c, kind, 'vec=0' if kind == 'softirq_enter' else ''))
            e.snap = snap
            pending[c] = e
            if kind == 'irq_enter':
                if nested:  # powerpc: a replayed soft-masked interrupt inside the replay's irq_enter()
                    counts['irq_nested'] = counts.get('irq_nested', 0) + 1
                last_enter[c] = (e, from_task)
            continue
        if G is not None and ev == 'flush1' and c == G:
            # inside vtime_task_switch_generic(): prev's starttime is now its flush clock
            if started[c]:
                sw = per_cpu[c][-1]
                if sw.kind != 'switch' or int(kv['p']) != int(sw.args.split('prev=')[1].split()[0]):
                    raise SystemExit(f'cpu {c}: flush of {kv["p"]} without its switch: {raw}')
                sw.exact = int(kv['fs']) + gco
                counts['gen_flush_probe'] = counts.get('gen_flush_probe', 0) + 1
            continue
        if G is not None and ev.endswith(('_in', '_out')) and c == G:
            hook, side = ev.rsplit('_', 1)
            vt = (int(kv['p']), int(kv['vs']) + gco, int(kv['vu']), int(kv['vss']))
            if hook == 'task_switch' and side == 'out':
                sw = per_cpu[c][-1] if per_cpu[c] else None
                if not started[c]:
                    if vt[0] == 0 or int(kv['td']):
                        # start where a task (not idle) is switched in, its vtime declared, and no
                        # irq time pending (a trace has no event inside a switch's gap to seed it)
                        continue
                    started[c] = True
                    cur[c] = vt[0]
                    seen.add(vt[0])
                    mode[vt[0]] = 'kernel'
                    vt_decl.setdefault(vt[0], vt[2:])
                    e0 = Ev(c, 'start', str(vt[0]), exact=vt[1])
                    first[c] = (e0, int(kv['td']))
                    add(c, e0)
                    counts['gen_start_clock'] = vt[1]
                    continue
                if sw is None or sw.kind != 'switch' or vt[0] != cur[c]:
                    raise SystemExit(f'cpu {c}: vtime switch to {vt[0]} without its sched_switch: {raw}')
                sw.startnext = vt[1]
                if vt[0] not in created and vt[0] not in vt_decl:
                    vt_decl[vt[0]] = vt[2:]  # existed before the trace: its residues as found
                if vt[0] in created:
                    child_first.setdefault(vt[0], vt[2:])  # a child's residues: the parent's at the copy
                prev = int(sw.args.split('prev=')[1].split()[0])
                if prev:
                    switch_out[prev] = sw
                counts['gen_switch'] = counts.get('gen_switch', 0) + 1
                continue
            if not started[c]:
                continue
            if side == 'out':
                if pending_vt is None or vt[0] != cur[c]:
                    raise SystemExit(f'cpu {c}: vtime return without its entry: {raw}')
                pending_vt.exact = vt[1]  # get_vtime_delta() moved starttime to the clock it read
                pending_vt = None
                continue
            snap = [int(kv[k]) for k in ('us', 'ni', 'sy', 'si', 'hi', 'id', 'td')]
            if hook == 'task_switch':
                sw = per_cpu[c][-1]
                if sw.kind != 'switch' or vt[0] != int(sw.args.split('prev=')[1].split()[0]):
                    raise SystemExit(f'cpu {c}: vtime switch from {vt[0]} without its sched_switch: {raw}')
                sw.snap, sw.vt = snap, vt
                sw.task = (vt[0], int(kv['tu']), int(kv['ts']))
                # next's starttime is still the clock of its last switch-out flush
                np_, nst = int(kv['np']), int(kv['nst']) + gco
                if np_ in switch_out:
                    o = switch_out.pop(np_)
                    if isinstance(o.exact, int) and o.exact != nst:
                        raise SystemExit(f'cpu {c}: flush clock {o.exact} of {np_}, its starttime at switch-in {nst}')
                    o.exact = nst
                    counts['gen_flush_exact'] = counts.get('gen_flush_exact', 0) + 1
                continue
            if vt[0] != cur[c] or irq[c].depth or irq[c].soft:
                raise SystemExit(f'cpu {c}: vtime {hook} of {vt[0]}, tracked {cur[c]} depth {irq[c].depth}: {raw}')
            want = 'kernel' if hook == 'user_exit' else 'user'
            if mode.get(vt[0], 'kernel') == want:  # the trace's mode disagrees: switch it at the same clock
                counts['gen_mode_fix'] = counts.get('gen_mode_fix', 0) + 1
                add(c, Ev(c, 'syscall_exit' if want == 'kernel' else 'syscall_enter', '' if want == 'kernel' else 'nr=0',
                          exact=('link', None)))
            mode[vt[0]] = want
            e = add(c, Ev(c, 'syscall_enter' if want == 'kernel' else 'syscall_exit', 'nr=0' if want == 'kernel' else ''))
            if per_cpu[c][-2].exact == ('link', None):
                per_cpu[c][-2].exact = ('link', e)
            e.snap, e.vt, e.task = snap, vt, (vt[0], int(kv['tu']), int(kv['ts']))
            pending_vt = e
            counts['gen_' + hook] = counts.get('gen_' + hook, 0) + 1
            continue
        if not started[c]:
            if ev == 'sched_wakeup':
                pass  # emitted below on a started CPU
            else:
                continue
        if ev.startswith('tk'):
            counts['tk'] += 1
            ut = int(kv['ut'])
            snap = [int(kv[k]) for k in ('us', 'ni', 'sy', 'si', 'hi', 'id', 'td')]
            task = None
            if 'tp' in kv:  # the ticked task's times (recordings with task offsets)
                task = (int(kv['tp']), int(kv['tu']), int(kv['ts']))
                if task[0] != cur[c]:
                    raise SystemExit(f'cpu {c}: tick of {task[0]}, model has {cur[c]}: {raw}')
                counts['task_ticks'] = counts.get('task_ticks', 0) + 1
            enter, outer_proc = last_enter[c]
            # its index now: ticks put before it move it (6.12 under TCG, amd64 and ppc64le:
            # hrtimer_interrupt() can run tick_sched_timer twice in one interrupt when the
            # forwarded expiry has passed)
            idx = next(i for i in range(len(per_cpu[c]) - 1, -1, -1) if per_cpu[c][i] is enter)
            if ticked[c] is enter:  # more than one account_process_tick() in one interrupt
                counts['ticks_same_irq'] = counts.get('ticks_same_irq', 0) + 1
            ticked[c] = enter
            if outer_proc:
                # the gen CPU's modes come from its vtime hooks (its tick accounts nothing)
                fixes = [] if c == G else set_mode(c, cur[c], 'user' if ut else 'kernel', None)
                tick = Ev(c, 'tick')
                tick.snap = snap  # the entry from process context charged nothing
                tick.task = task
                enter.snap = None
                new = fixes + [tick]
                for k, n in enumerate(new):
                    n.seq = enter.seq  # same clock as the entry, before it
                    n.exact = ('link', enter)
                per_cpu[c][idx:idx] = new
            else:
                counts['tick_not_from_process'] = counts.get('tick_not_from_process', 0) + 1
                if ut and c != G:
                    raise SystemExit(f'cpu {c}: user tick outside process context: {raw}')
                tick = add(c, Ev(c, 'tick'))
                tick.snap = snap
                tick.task = task
                tick.exact = ('link', enter)
            continue
        if ev == 'sched_switch':
            counts['switch'] += 1
            prev, nxt = int(kv['prev_pid']), int(kv['next_pid'])
            st = kv['prev_state'].rstrip('+')
            if prev != cur[c] or irq[c].depth or irq[c].soft:
                raise SystemExit(f'cpu {c}: switch from {prev}, tracked {cur[c]} depth {irq[c].depth} soft {irq[c].soft}: {raw}')
            state = {'R': 'R', 'S': 'S', 'D': 'D', 'X': 'X', 'Z': 'X', 'I': 'D'}.get(st[:1], 'S')
            if prev == 0:
                state = 'R'
            if state == 'X' and prev not in exited:
                state = 'S'
            if state == 'X':
                for e in set_mode(c, prev, 'kernel', approx):
                    add(c, e)
                add(c, Ev(c, 'exit', approx=approx))
                if prev in readers:
                    add(c, Ev(c, 'mark', readers.pop(prev) + '.hi', approx=approx))
            seen.update((prev, nxt))
            if nxt in sleeping:  # its wakeup came before the wakeup tracepoint was on
                counts['wakeup_assumed'] = counts.get('wakeup_assumed', 0) + 1
                add(c, Ev(c, 'wakeup', f'tid={nxt}', approx=approx))
                sleeping.discard(nxt)
            if state in ('S', 'D'):
                sleeping.add(prev)
            # Sleeps are written as preemptions (prev_state=R): tick accounting with irq time does not
            # depend on them (no task here waits for I/O), and a wakeup's order against a switch on
            # another CPU is not known to the us. The psi script keeps the wakeups.
            add(c, Ev(c, 'switch', f'prev={prev} next={nxt} prev_state={"X" if state == "X" else "R"}',
                      approx=approx))
            cur[c] = nxt
            continue
        if ev == 'sched_wakeup':
            counts['wakeup'] += 1
            t = int(kv['pid'])
            if t in exited or t == 0:
                continue
            seen.add(t)
            sleeping.discard(t)
            # on the CPU the task will run on, so that it stays before the switch-in there (each
            # CPU's events keep their order; clocks from two CPUs' ftrace buffers are only us)
            tgt = int(kv.get('target_cpu', c))
            tc = tgt if started[tgt] else next((i for i in range(ncpus) if started[i]), None)
            if tc is not None:
                e = add(tc, Ev(tc, 'wakeup', f'tid={t}', approx=approx))
                e.kind = 'psi_wakeup'  # only in the psi script
                e.psi = f'wakeup {tgt} by {c}'
            continue
        if ev == 'tracing_mark_write' and rest.startswith('kacct read '):
            # the guest's shell read a group's irq.pressure itself between these two marks
            add(c, Ev(c, 'mark', rest.split()[-1], approx=approx))
            continue
        if ev == 'tracing_mark_write' and rest.startswith('kacct psi '):
            add(c, Ev(c, 'mark', rest.split()[-1], approx=approx))
            if not builtin_reads:
                pending_reads[:] = [f'{rest.split()[-1]}.{g}' for g in read_order]
            continue
        if ev == 'sched_process_fork':
            counts['fork'] += 1
            parent, child = int(kv['pid']), int(kv['child_pid'])
            for e in set_mode(c, parent, 'kernel', approx):
                add(c, e)
            if parent == 1 and pending_reads:
                # the guest's shell reads each irq.pressure in a forked child: the read is between
                # the fork and that child's exit
                name = pending_reads.pop(0)
                readers[child] = name
                add(c, Ev(c, 'mark', name + '.lo', approx=approx))
            kt = kthread(parent) or parent == 2
            tasks[child] = (kt, child, kv.get('child_comm', comm))
            created.add(child)
            group_of[child] = group_of.get(parent, '/')
            extra = ' kthread' if kt else f' mm={child}'
            add(c, Ev(c, 'fork', f'parent={parent} child={child}{extra} comm={sane_comm(tasks[child][2])}', approx=approx))
            continue
        if ev == 'sched_process_exit':
            counts['exit'] += 1
            exited.add(pid)  # `exit` goes right before its final switch: it may be preempted first
            continue

    # gen CPU: dup_task_struct() copies the parent's struct vtime and copy_process() resets only
    # starttime and state (kernel/fork.c, 6.12), so a child starts with the parent's residues at
    # the copy. A parent preempted inside copy_process() flushes (switch-out) after the copy and
    # before sched_process_fork, where the fork was put: the fork moves to just before the
    # parent's latest event on the gen CPU whose pre-state has the child's first-seen residues.
    if G is not None:
        evs = per_cpu[G]
        for f in [e for e in evs if e.kind == 'fork']:
            kv_f = dict(x.split('=', 1) for x in f.args.split() if '=' in x)
            parent, child = int(kv_f['parent']), int(kv_f['child'])
            if child not in child_first:
                continue
            i = next(j for j, e in enumerate(evs) if e is f)
            want = tuple(child_first[child])
            # the parent's residues at the fork: the pre-state of its next event here
            after = next((evs[j].vt for j in range(i + 1, len(evs)) if evs[j].vt is not None and evs[j].vt[0] == parent), None)
            if after is None or tuple(after[2:]) == want:
                continue
            m = next((j for j in range(i - 1, -1, -1) if evs[j].vt is not None and evs[j].vt[0] == parent
                      and tuple(evs[j].vt[2:]) == want), None)
            if m is None:
                raise SystemExit(f'cpu {G}: child {child} starts with residues {want}, never the parent {parent}\'s here')
            evs.remove(f)
            evs.insert(m, f)
            f.seq = evs[m + 1].seq - 0.5  # before that event in the cross-CPU order too
            counts['gen_fork_moved'] = counts.get('gen_fork_moved', 0) + 1
    # resolve clocks: exact (ia), linked (tick at its entry's clock), approximate (clamped)
    for c in range(ncpus):
        evs = per_cpu[c]
        # drop the unresolved tail (the CPU's last probe and what follows)
        last = max((i for i, e in enumerate(evs) if isinstance(e.exact, int)), default=-1)
        if pending[c] is not None and pending[c] in evs:
            # the CPU's last irq boundary has no clock (no later irqtime_account_irq() call): on
            # the gen CPU vtime clocks may follow it, but the trace ends before it
            last = min(last, next(i for i, e in enumerate(evs) if e is pending[c]) - 1)
        tail_marks = [e for e in evs[last + 1:] if e.kind == 'mark']
        del evs[last + 1:]
        for e in evs:
            if isinstance(e.exact, tuple):
                e.exact = e.exact[1].exact
        prev = None
        nxt_exact = [None] * len(evs)
        nx = None
        for i in range(len(evs) - 1, -1, -1):
            if isinstance(evs[i].exact, int):
                nx = evs[i].exact
            nxt_exact[i] = nx
        for i, e in enumerate(evs):
            if e.kind == 'start' and not isinstance(e.exact, int):
                e.ts = nxt_exact[i]
            elif isinstance(e.exact, int):
                e.ts = e.ub = e.exact  # ub: the cross-CPU order below never moves it
            else:
                t = e.approx
                if t is None:
                    raise SystemExit(f"cpu {c}: {e.kind} {e.args} has no clock (exact={e.exact}) after {prev}")
                if prev is not None:
                    t = max(t, prev)
                if nxt_exact[i] is not None:
                    t = min(t, nxt_exact[i])
                if e.startnext is not None:  # a gen switch flushes prev before it reads next's clock
                    t = min(t, e.startnext)
                e.ts, e.ub = t, min(x for x in (nxt_exact[i], e.startnext, 1 << 64) if x is not None)
            if prev is not None and e.ts < prev:
                raise SystemExit(f'cpu {c}: clock went back at {e.kind} {e.ts} < {prev}')
            prev = e.ts
        for e in tail_marks:  # a read after the CPU's last resolved boundary: at its ftrace clock
            e.ts = max(e.approx, prev or 0)
            evs.append(e)
    # switches, forks and exits of all CPUs keep their (ftrace) order: a task's switch-out on one
    # CPU before its switch-in on another, a fork before the child runs
    last, conflicts = 0, 0
    for e in sorted((e for c in range(ncpus) for e in per_cpu[c] if e.kind in ('switch', 'fork', 'exit')),
                    key=lambda e: e.seq):
        if e.ts < last:
            if e.ub is not None and e.ub < last:
                conflicts += 1
                continue
            # raise it and every later event of its CPU up to the next exact one
            e.ts = last
        last = e.ts
    for c in range(ncpus):
        prev = None
        for e in per_cpu[c]:
            if prev is not None and e.ts < prev and not isinstance(e.exact, int):
                e.ts = prev
            prev = e.ts
            if e.startnext is not None and e.ts > e.startnext:
                raise SystemExit(f'cpu {c}: switch at {e.ts} after its next clock {e.startnext}')
    counts['order_conflicts'] = conflicts
    end = min(per_cpu[c][-1].ts for c in range(ncpus) if per_cpu[c])
    for c in range(ncpus):
        per_cpu[c] = [e for e in per_cpu[c] if e.ts <= end or e.kind == 'mark']
    starts = [first[c] for c in range(ncpus) if first[c]]
    origin = min(e.ts - td for e, td in starts) - (10000 if G is None else 20000)
    out = []
    for c in range(ncpus):
        if not first[c]:
            continue
        e0, td = first[c]
        t0 = e0.ts - origin
        if c == G:
            # the gen CPU starts where a task was switched in with no irq time pending: a switch
            # from idle whose gap ends at the kernel's starttime for it (t0)
            out.append((t0 - 6000, -1, Ev(c, 'switch', f'prev=0 next={e0.args} prev_state=R gap=6000')))
        else:
            # pending tick_delta as one irq before the start, then the task found running
            out.append((t0 - td - 4000, -3, Ev(c, 'irq_enter')))
            out.append((t0 - 4000, -2, Ev(c, 'irq_exit')))
            if e0.args:
                out.append((t0 - 2000, -1, Ev(c, 'switch', f'prev=0 next={e0.args} prev_state=R')))
        for e in per_cpu[c]:
            if e.kind != 'start':
                out.append((e.ts - origin, e.seq, e))
    out.sort(key=lambda x: (x[0], x[1]))
    lastseq, inv = {}, 0
    for ts, sq, e in out:
        if sq >= 0 and sq < lastseq.get(e.cpu, -1):
            inv += 1
        if sq >= 0:
            lastseq[e.cpu] = max(sq, lastseq.get(e.cpu, -1))
    counts['cpu_order_inversions'] = inv
    marks_all = sorted((e.ts - origin, e.args) for c in range(ncpus) for e in per_cpu[c] if e.kind == 'mark')
    psi_text = psi_script(out, marks_all, group_of, tasks, ncpus, set(seen) | created, kver)
    seen -= created
    seen.discard(0)
    cpu_model = {'amd64': 'x86-64', 'ppc64le': 'POWER9'}[kmeta.get('arch', 'amd64').strip()]  # QEMU's -cpu
    hdr = ['kacct-trace 1', f'cpu {cpu_model}', f'ncpus {ncpus}', 'clock ns']
    for pid in sorted(seen):
        kt, tgid, comm = tasks.get(pid, (False, pid, 'task'))
        # gen: the residues its struct vtime had when the gen CPU first switched it in
        vd = f' vtime_utime={vt_decl[pid][0]} vtime_stime={vt_decl[pid][1]}' if pid in vt_decl else ''
        hdr.append(f'task {pid} pid={tgid} kthread comm={sane_comm(comm)}{vd}' if kt else
                   f'task {pid} pid={tgid} comm={sane_comm(comm)} mm={tgid}{vd}')
    hdr.append('events')
    out = [x for x in out if x[2].kind not in ('mark', 'psi_wakeup')]
    body, cps, tcps, vcps = [], [], [], []
    for i, (ts, _, e) in enumerate(out):
        if e.startnext is not None:  # gen: next's starttime is read gap ns after prev's flush
            e.args += f' gap={e.startnext - origin - ts}'
        if e.vt is not None:  # gen: the task's (or idle's) vtime before the event (starttime on the trace's clock)
            vcps.append(f'{i} {e.cpu} {e.vt[0]} {e.vt[1] - origin} {e.vt[2]} {e.vt[3]}')
        body.append(f'{ts} {e.cpu} {e.kind}' + (f' {e.args}' if e.args else ''))
        if e.snap is not None:
            cps.append(f'{i} {e.cpu} ' + ' '.join(map(str, e.snap)))
        if e.task is not None and e.task[0] != 0:  # the idle tasks' times do not move
            tcps.append(f'{i} {e.cpu} ' + ' '.join(map(str, e.task)))
    os.makedirs(fix, exist_ok=True)

    def xz(name, text):
        with open(f'{fix}/{name}.xz', 'wb') as f:
            f.write(lzma.compress(text.encode(), preset=6))
    xz('trace', '\n'.join(hdr + body) + '\n')
    xz('checkpoints', '# event_index cpu user nice system softirq irq idle tick_delta (kernel ns, before the event)\n'
       + '\n'.join(cps) + '\n')
    xz('psi-irq.psi', psi_text)
    if vcps:
        xz('vtime-checkpoints', '# event_index cpu tid starttime vtime_utime vtime_stime (trace ns; the task before the '
           'event: its vtime hook or its switch-out)\n' + '\n'.join(vcps) + '\n')
    if tcps:
        xz('task-checkpoints', '# event_index cpu tid utime stime (kernel ns, the ticked task before the tick)\n'
           + '\n'.join(tcps) + '\n')
    with open(fix + '/psi-kernel', 'w') as f:
        f.write(f'# irq.pressure full total= (us) read at the marks: {", ".join(read_order)}{" (C is /B/C)" if "C" in read_order else ""}\n')
        f.write('\n'.join(sec.get('psi', [])) + '\n')
    if 'interrupts_before' in sec:  # what raised the irqs (not compared)
        with open(fix + '/interrupts', 'w') as f:
            f.write('# the guest\'s /proc/interrupts before and after the traced window (not compared)\n')
            f.write('\n'.join(['==== before'] + sec['interrupts_before'] + ['==== after'] + sec.get('interrupts_after', []))
                    + '\n')
    meta = open(rec + '/meta').read() if os.path.exists(rec + '/meta') else ''
    with open(fix + '/meta', 'w') as f:
        f.write(meta)
        f.write(f'config {config}\nsched_clock_offset {sco}\norigin {origin}\n')
        if G is not None:
            f.write(f'nohz_full {G}\n')
        f.write('counts ' + ' '.join(f'{k}={v}' for k, v in counts.items()) + '\n')
        f.write(f'events {len(body)} checkpoints {len(cps)} task_checkpoints {len(tcps)}'
                + (f' vtime_checkpoints {len(vcps)}' if vcps else '') + '\n')
    print(f'{fix}: {len(body)} events, {len(cps)} checkpoints, {len(tcps)} task checkpoints, {counts}')


if __name__ == '__main__':
    main()

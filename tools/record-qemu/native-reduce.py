#!/usr/bin/env python3
"""Turn a native-record.sh recording into a kacct trace plus the kernel's checkpoints.

  native-reduce.py RECDIR FIXTUREDIR [--config NAME] [--reads PROGRAM]
                                                        (config default: KERNEL_VERSION-native-steal-hz250)

Every accounting hook the kernel ran (vtime_account_{kernel,idle,hardirq,softirq},
vtime_task_switch) becomes a trace event at the timebase and SPURR values it read: the hook's
return probe shows them as the paca's starttime and startspurr. Which event a hook is follows
from the hook and the preempt count at its entry (HARDIRQ count one above the tracked depth: an
irq entry; equal: its exit; softirq entry and exit likewise; kernel/idle with no irq count
after a sched_switch, or vtime_task_switch: the switch, whose nested hooks are ignored).
vtime_flush inside an irq is a tick (at the TB of that irq's entry hook: the flush reads no
clock); the switch's flush is part of `switch`. The user/kernel transitions between two hooks
(account_cpu_user_entry/exit are inline, no probe) are rebuilt from the pending utime/stime and
starttime/starttime_user at the next hook's entry: the last exit and entry at their exact TBs,
all earlier ones folded into one exit/entry pair of the same user and system total (the native
accounting only adds intervals, so the pending values and every clock a later hook reads are
the kernel's). Each CPU starts at its first context-switch flush (all buckets zero there); TB
and SPURR are rebased per CPU to that flush's starttime/startspurr (the model's boot values,
0). ts is the TB in ns (512 MHz). Forks and the workload's reads (its trace_marker lines) touch
no accounting data: they are put at the clock of the CPU's last hook, before any rebuilt
transition (the model is in kernel mode there, as the kernel is at them); a sleeping task's
wakeup right before its switch-in, a thread's exit (__exit_signal(), inlined into
release_task(), which adds its times to its group's) at its release_task() entry probe after
the user time before it (a leader reaped by its parent: right before its final switch). A
thread preempted after its release_task() is switched out R and runs again before its final
switch (the trace format allows that). /proc/stat reads ("kacct pstat/pdone" markers) are
placed by their markers' TBs. Writes FIXTUREDIR/trace.xz, checkpoints.xz and meta:
  C EVENT CPU user nice system softirq irq idle iowait steal   kernel_cpustat (ns) before the event
  T EVENT TID utime stime utimescaled stimescaled               the task's times (ns) before the flush
  R ID KIND TID A B [C D]                                       the workload's read values
  S ID N_BEFORE N_AFTER READER_CPU CPU user nice system idle iowait irq softirq steal
                                                                a /proc/stat cpuN line (clock ticks)
--reads PROGRAM: a native-record.sh NATIVE_READS run; its sections "tasks PROGRAM" and "trace
PROGRAM" and RECDIR/out/PROGRAM.* (strace files: tools/record-reads/decode.py via readsfix.py).
Every CPU-time read the program made is found at its syscall (raw_syscalls sys_enter/sys_exit of
the traced process tree, matched to the strace record by thread, syscall and count: a read on
one side only is an error) and goes into the trace twice, at the clock of the CPU's last hook
before its sys_enter (id N) and before its sys_exit (id N + 100000): under native accounting a
task's times change only at the flushes (hooks), so the kernel's value lies between the two and
equals both when no flush came in between. N: the read's line in reads.jsonl (1-based). The
CPU clocks (clock_gettime of a process or thread CPUCLOCK_SCHED clock) read sum_exec_runtime: the
traced tree's sched_stat_runtime lines become `runtime` events (header `rtime events`), and a
read of the reader's own thread or process clock goes (both ids) right after the reader's own
update_curr() inside the call (Syscalls.clock()). The checkpoints file gets, beside C and T:
  R N KIND TID A B           rusage_self, rusage_thread (us), task_stat (its process), thread_stat,
                             times (its process; clock ticks)
  R N KIND TID NS            process_cputime, thread_cputime (ns)
  F N TID A B                /proc/TID/stat of another process (clock ticks): a foreign group read
  K N TID UNIT A B           the reaped children's times of TID's process (getrusage(RUSAGE_CHILDREN)
                             us, times()' tms_cutime/tms_cstime ticks) at the sys_exit
  W ID REAPER CHILD RUSAGE [A B]  a wait4() that returned CHILD, before the anchor ID: a reap (or
                             a stop/continue report), RUSAGE 1 if it asked for the child's
                             rusage; A B the kernel's (us) when recorded
  U N TID READ CALL          a read kacct does not compare here (failed call, a CPU clock of a
                             task outside the tree; CPU-clock prof/virt, schedstat and
                             /proc/stat reads: Syscalls.UNCOMPARED)
  A EXIT TID ID              thread TID (exit at event EXIT, before its final switch) released by
                             another task (its ptracer, strace) before the anchor ID
F, K, W and A are placed at reads of the reader's own RUSAGE_THREAD (no side effect under native
accounting) with ids N / N + 100000 (W without a recorded rusage: 200000 + its count; A: 300000 +
its count).
"""
import bisect
import json
import lzma
import os
import re
import sys

from guestlog import decode_trace, sane_comm, sections
from readsfix import COUNTED, Tree, decode

TB_HZ = 512_000_000
PF_KTHREAD = 0x00200000
HARDIRQ_SHIFT, SOFTIRQ_OFFSET = 16, 0x100
LINE = re.compile(r'^\s*(.*?)-(\d+)\s+(?:\(\s*([-\d]+)\)\s+)?\[(\d+)\]\s+(\S+)\s+(\d+)(?:\.(\d+))?:\s+([\w.]+):\s*(.*)$')
KV = re.compile(r'(\w+)=(\S+)')
KINDS = {'task_stat': 'proc_stat', 'thread_stat': 'task_stat', 'rusage_self': 'rusage_self',
         'rusage_thread': 'rusage_thread', 'taskstats': 'taskstats'}
KCS = ('us', 'ni', 'sy', 'si', 'hi', 'id', 'io', 'st')
READS_CPU = 1  # native-init.sh runs the programs there


class Fail(Exception):
    pass


class Cpu:
    def __init__(self, n):
        self.n = n
        self.started = False
        self.cur = 0
        self.depth = 0
        self.soft = False
        self.tb0 = self.sp0 = 0
        self.after = None  # the accounting data after the last hook (or rebuilt transition)
        self.entry = None  # (hook, entry probe fields, what the hook is)
        self.switch = None  # pending sched_switch (prev, next, state)
        self.last_tb = self.last_sp = 0
        self.last_hook = None  # (tb, sp) of the last hook: a tick's flush reads no clock
        self.exiting = None  # the task whose sched_process_exit came, exit not yet written
        self.last_idx = None  # index in out of this CPU's last event


class Syscalls:
    """--reads: the program's CPU-time syscalls (raw_syscalls lines of its process tree) matched
    with the strace record (readsfix.decode), and what the fixture gets for each (see above)."""
    NR = {'read': 3, 'wait4': 114, 'getrusage': 77, 'times': 43, 'clock_gettime': 246, 'waitid': 272}
    UNCOMPARED = {'cpuclock_prof': 'a CPU clock of another process: not placed',
                  'cpuclock_virt': 'a CPU clock of another process: not placed',
                  'schedstat': 'sum_exec_runtime: no probe reads it', 'sys_stat': '/proc/stat: no values recorded',
                  'failed': 'the call failed'}

    def __init__(self, rec, prog):
        out = os.path.join(rec, 'out')
        self.root = open(os.path.join(out, prog + '.root')).read().strip()
        text = decode('native-reduce.py', out, prog, 'ppc64le', self.root)
        self.jsonl = text
        self.reads = {}
        for n, l in enumerate(text.splitlines()[1:], 1):
            r = json.loads(l)
            self.reads[(r['tid'], r['nr'], r['seq'])] = (n, r)
        self.tree = Tree('ppc64le', self.root)
        self.counted = COUNTED['ppc64el']
        self.seq, self.open, self.found = {}, {}, set()
        self.out = []  # R/F/K/W/U lines
        self.group = None  # tid -> tgid, set by main()
        self.reaps = self.releases = 0
        self.stats = {'syscalls': 0, 'exit_without_enter': 0, 'waitid_no_reap': 0, 'runtime_current': 0,
                      'clock_own_update': 0, 'clock_bounded': 0}
        self.own = {}  # tid -> (tb, sp, sort key) of its last runtime update in process context

    def runtime(self, tid, pos):
        """A sched_stat_runtime of tid on its CPU in process context, put at pos (tb, sp, sort key):
        inside a CPU-clock read of tid's own thread or process it may be the read's own update."""
        self.stats['runtime_current'] += 1
        self.own[tid] = pos

    def switched_out(self, tid):
        self.own.pop(tid, None)  # an update before a switch is the switch's, not the read's

    def line(self, ev, pid, rest, ok, raw, pos):
        """The events to put at the CPU's last hook for one sys_enter/sys_exit line: (kind, args), or
        (kind, args, (tb, sp, sort key)) for one placed at an earlier point (a CPU-clock read); pos:
        this line's point (the CPU's last hook, after every event so far)."""
        w = rest.split()
        if len(w) < 2 or w[0] != 'NR' or not self.tree.keep_syscall(str(pid), rest):
            return []
        nr = int(w[1])
        if ev == 'sys_enter':
            args = [int(a, 16) for a in re.findall(r'[0-9a-f]+', rest.split('(', 1)[1])] if '(' in rest else []
            k = (pid, nr)
            self.seq[k] = self.seq.get(k, 0) + 1
            self.stats['syscalls'] += 1
            got = self.reads.get((pid, nr, self.seq[k]))
            if got is None:
                clk = (args[0] & 0xFFFFFFFF) - ((args[0] & 0x80000000) << 1) if args else 0
                if nr in (self.NR['getrusage'], self.NR['times']) or (
                        nr == self.NR['clock_gettime'] and (clk in (2, 3) or (clk < 0 and clk & 3 != 3))):
                    raise Fail(f'in the trace but not recorded: tid {pid} syscall {nr} #{self.seq[k]}: {raw}')
                # waitid(which, pid, infop, options): without WEXITED (4), or with WNOWAIT
                # (0x01000000), wait_task_zombie() reaps nothing (6.1/6.12 kernel/exit.c); a
                # reaping one names its child only in infop, which the trace lacks
                if nr == self.NR['waitid'] and len(args) > 3 and args[3] & 4 and not args[3] & 0x01000000:
                    raise Fail(f'a reaping waitid() of the traced tree (its child is not in the trace): {raw}')
                self.stats['waitid_no_reap'] += nr == self.NR['waitid']
            self.open[pid] = (nr, self.seq[k], got, args, pos)
            self.own.pop(pid, None)
            if got is None:
                return []
            n, r = got
            self.found.add((pid, nr, self.seq[k]))
            kind = self.kind(pid, r)
            if kind[0] == 'C':
                if not ok:
                    raise Fail(f'read {n} (tid {pid}) before its CPU started or not by the running task: {raw}')
                return []  # placed at its sys_exit (below)
            if kind[0] == 'U':
                self.out.append(f'U {n} {pid} {r["read"]} {r.get("call", r["read"]).replace(" ", "")}')
            if kind[0] in ('R', 'F') and not ok:
                raise Fail(f'read {n} (tid {pid}) before its CPU started or not by the running task: {raw}')
            return [self.event(kind, pid, r, n)] if kind[0] in ('R', 'F') else []
        o = self.open.pop(pid, None)
        if o is None or o[0] != nr:
            self.stats['exit_without_enter'] += 1
            return []
        _, seq, got, args, enter = o
        ret = int(w[-1]) if w[-2] == '=' else 0
        evs = []
        if got is not None:
            n, r = got
            kind = self.kind(pid, r)
            if kind[0] != 'U' and not ok:
                raise Fail(f'read {n} (tid {pid}) returns while its CPU has not started: {raw}')
            t = r.get('target', pid)
            if kind[0] == 'C':
                evs += self.clock(pid, t, kind[1], n, enter, pos)
                self.out.append(f'R {n} {kind[1]} {t} {r["value"]}')
            elif kind[0] != 'U':
                evs.append(self.event(kind, pid, r, n + 100000))
            if kind[0] == 'R':
                self.out.append(f'R {n} {kind[1]} {t} {r["utime"]} {r["stime"]}')
                if kind[1] == 'times':
                    self.out.append(f'K {n} {pid} ticks {r["cutime"]} {r["cstime"]}')
            elif kind[0] == 'F':
                self.out.append(f'F {n} {t} {r["utime"]} {r["stime"]}')
            elif kind[0] == 'K':
                self.out.append(f'K {n} {pid} us {r["utime"]} {r["stime"]}')
        if nr == self.NR['wait4'] and ret > 0:
            rusage = int(len(args) > 3 and args[3] != 0)
            if got is not None and got[1]['read'] == 'wait4_rusage':
                n, r = got
                self.out.append(f'W {n + 100000} {pid} {ret} {rusage} {r["utime"]} {r["stime"]}')
            else:
                self.reaps += 1
                anchor = 200000 + self.reaps
                if not ok:
                    raise Fail(f'a reap by {pid} while its CPU has not started: {raw}')
                evs.append(('read', f'kind=rusage_thread tid={pid} id={anchor}'))
                self.out.append(f'W {anchor} {pid} {ret} {rusage}')
        return evs

    def kind(self, pid, r):
        """('R', R kind, trace kind) / ('F',) / ('K',) / ('W',) / ('U',) of a recorded read."""
        read = r['read']
        t = r.get('target', pid)
        if read in ('rusage_self', 'rusage_thread'):
            return ('R', read, read)
        if read in ('process_cputime', 'thread_cputime'):
            if str(t) not in self.tree.pids:
                return ('U',)  # its runtime before the trace is not in it
            return ('C', read)
        if read == 'times':
            return ('R', 'times', 'rusage_self')
        if read == 'task_stat':
            return ('R', 'thread_stat', 'task_stat')
        if read == 'proc_stat':
            return ('R', 'task_stat', 'proc_stat') if self.group(t) == self.group(pid) else ('F',)
        if read == 'rusage_children':
            return ('K',)
        if read == 'wait4_rusage':
            return ('W',)
        if read in self.UNCOMPARED:
            return ('U',)
        raise Fail(f'a recorded read kacct does not know: {r}')

    def clock(self, pid, target, read, n, enter, exit_pos):
        """A CPU-clock read (sum_exec_runtime: the model's runtime events, 'rtime events'): placed at
        ids n and n + 100000. Its own thread's clock and its own process's (no CPU timer armed:
        thread_group_cputime()) call task_sched_runtime(current), whose update_curr() emits the
        reader's sched_stat_runtime under the rq lock (irqs off) right before the value is taken
        (6.1/6.12 kernel/sched/core.c, cputime.c): both ids go right after the reader's last
        runtime update in process context since its sys_enter and its last switch-in (exact). A
        clock of another task of the tree (not running: the tree runs on one CPU) or a read whose
        update left no tracepoint (delta 0): at sys_enter and sys_exit (the flush bound)."""
        own = (read == 'thread_cputime' and target == pid or
               read == 'process_cputime' and self.group(target) == self.group(pid))
        args = lambda rid: f'kind={read} tid={target} id={rid}'
        if own and pid in self.own:
            at = self.own.pop(pid)
            self.stats['clock_own_update'] += 1
            return [('read', args(n), (at[0], at[1], at[2] + 0.25)),
                    ('read', args(n + 100000), (at[0], at[1], at[2] + 0.5))]
        self.stats['clock_bounded'] += 1
        return [('read', args(n), enter), ('read', args(n + 100000), exit_pos)]

    def event(self, kind, pid, r, rid):
        if kind[0] == 'R' and kind[2] == 'proc_stat':  # the reader's own process: no tid
            return ('read', f'kind=proc_stat id={rid}')
        if kind[0] == 'R':
            return ('read', f'kind={kind[2]} tid={r.get("target", pid)} id={rid}')
        return ('read', f'kind=rusage_thread tid={pid} id={rid}')  # an anchor: no side effect

    def finish(self):
        if self.stats['clock_own_update'] + self.stats['clock_bounded'] and not self.stats['runtime_current']:
            raise Fail('CPU-clock reads but no sched_stat_runtime of the traced tree in the recording '
                       '(native-init.sh enables it since session 17): re-record')
        missing = sorted(set(self.reads) - self.found)
        if missing:
            raise Fail(f'recorded but not in the trace ({len(missing)}): ' +
                       '; '.join(f'tid {t} syscall {nr} #{q}' for t, nr, q in missing[:10]))


def main():
    if len(sys.argv) < 3 or sys.argv[1].startswith('-') or sys.argv[2].startswith('-'):
        sys.exit(__doc__)
    rec, fix = sys.argv[1], sys.argv[2]
    prog = sys.argv[sys.argv.index('--reads') + 1] if '--reads' in sys.argv else None
    suffix = f' {prog}' if prog else ''
    kmeta = dict(l.split(' ', 1) for l in open(rec + '/meta').read().splitlines() if ' ' in l)
    kver = kmeta.get('kernel_version', '6.1.192').strip()
    config = sys.argv[sys.argv.index('--config') + 1] if '--config' in sys.argv else f'{kver}-native-steal-hz250'
    sec = sections(rec + '/trace.txt')
    if prog and 'trace' + suffix not in sec:
        raise Fail(f'{rec}/trace.txt has no section "trace{suffix}"')
    syscalls = Syscalls(rec, prog) if prog else None
    if syscalls:
        syscalls.group = lambda t: tasks.get(t, [False, t])[1]
    tasks = {}  # pid -> [kthread, tgid, comm]
    for l in sec.get('tasks' + suffix, []):
        p = l.split(' ', 3)
        if len(p) == 4 and p[0].isdigit():
            tasks[int(p[0])] = [int(p[1]) & PF_KTHREAD != 0, int(p[2] or p[0]), p[3]]
    lines = decode_trace(sec['trace' + suffix])
    parsed = []
    for raw in lines:
        m = LINE.match(raw)
        if m:
            parsed.append(m)
    # thread groups of tasks created during the trace (record-tgid column)
    tgid_of = {}
    for m in parsed:
        if m.group(3) and m.group(3).lstrip('-').isdigit():
            tgid_of[int(m.group(2))] = int(m.group(3))
    ncpus = 2
    cpus = [Cpu(c) for c in range(ncpus)]
    out = []  # (tb_raw, seq, cpu, kind, args, tb_rebased, sp_rebased)
    cps, tcps = [], []  # ('C', out index, cpu, vals) / ('T', out index, tid, vals)
    sleeping, exited, created, seen, dead = set(), set(), set(), set(), set()
    exit_written = set()  # threads whose `exit` is in at their release_task()
    exit_at = {}  # tid -> index in out of its `exit` written at its final switch
    releases = []  # A lines (--reads)
    pstat = {}  # /proc/stat read id -> {'pstat'|'pdone': (raw TB, reader's CPU)}
    counts = {k: 0 for k in ('irq', 'softirq', 'tick', 'switch', 'fork', 'exit', 'read', 'rebuilt_pairs',
                             'folded_pairs', 'hooks', 'wakeup')}
    if syscalls is not None:
        counts['runtime'] = 0
    seq = 0

    def kthread(pid):
        return tasks.get(pid, [False])[0]

    def emit(c, tb, sp, kind, args=''):
        nonlocal seq
        cp = cpus[c]
        if tb < cp.last_tb or sp < cp.last_sp:
            raise Fail(f'cpu {c}: counter back at {kind}: tb {tb} < {cp.last_tb} or spurr {sp} < {cp.last_sp}')
        cp.last_tb, cp.last_sp = tb, sp
        out.append((tb, seq, c, kind, args, tb - cp.tb0, sp - cp.sp0))
        cp.last_idx = len(out) - 1
        seq += 1
        return len(out) - 1

    def acct(kv):
        return {k[2:]: int(v) for k, v in kv.items() if k.startswith('a_')}

    def sync(c, kin):
        """Rebuild the user/kernel transitions since the last hook from the kernel's accounting
        data at this hook's entry; the model is in kernel mode at every hook."""
        cp = cpus[c]
        a, b = cp.after, kin
        du, ds = b['utime'] - a['utime'], b['stime'] - a['stime']
        t0, e, s = a['starttime'], b['starttime_user'], b['starttime']
        if s == t0 and e == a['starttime_user']:
            if du or ds:
                raise Fail(f'cpu {c}: utime/stime moved by {du}/{ds} without a transition')
            return
        if e == a['starttime_user'] or not (t0 <= e <= s):
            raise Fail(f'cpu {c}: transitions without a user exit: starttime {t0}->{s}, starttime_user '
                       f'{a["starttime_user"]}->{e}')
        if du + ds != s - t0:
            raise Fail(f'cpu {c}: utime+stime moved by {du}+{ds}, TB by {s - t0}')
        if cp.cur == 0 or kthread(cp.cur) or cp.depth or cp.soft:
            raise Fail(f'cpu {c}: user transitions of task {cp.cur} (depth {cp.depth}, soft {cp.soft})')
        u1 = du - (s - e)  # user time of the earlier round trips, folded into one pair
        if u1 < 0:
            raise Fail(f'cpu {c}: last user interval {s - e} > utime moved {du}')
        sp = cp.last_sp  # the user transitions read no SPURR: the last value holds
        if u1:
            emit(c, t0, sp, 'syscall_exit')
            emit(c, t0 + u1, sp, 'syscall_enter', 'nr=0')
            counts['folded_pairs'] += 1
        emit(c, e, sp, 'syscall_exit')
        emit(c, s, sp, 'syscall_enter', 'nr=0')
        counts['rebuilt_pairs'] += 1

    def start(c, aout):
        """The first flush at a switch to a task: every bucket is zero; the CPU starts here. Not at a
        switch to idle: the trace would have no event there, and the model's CPU (6.12.101+:
        vtime_reset() at its first event) would start at the next one, losing the idle between."""
        cp = cpus[c]
        cp.started = True
        cp.depth, cp.soft = 0, False
        cp.tb0, cp.sp0 = aout['starttime'], aout['startspurr']
        cp.last_tb, cp.last_sp = cp.tb0, cp.sp0
        cp.after = aout
        cp.last_hook = (cp.tb0, cp.sp0)
        prev, nxt, _ = cp.switch
        cp.cur = nxt
        cp.switch = None
        seen.add(nxt)
        if nxt in sleeping:  # slept on the CPU that started first (e.g. migrated here by taskset)
            emit(c, cp.tb0, cp.sp0, 'wakeup', f'tid={nxt}')
            counts['wakeup'] += 1
            sleeping.discard(nxt)
        emit(c, cp.tb0, cp.sp0, 'switch', f'prev=0 next={nxt} prev_state=R')

    def switch(c, tb, sp, kin):
        """The context switch at the TB/SPURR its accounting read; kin: the data before it."""
        cp = cpus[c]
        prev, nxt, state = cp.switch
        cp.switch = None
        if prev != cp.cur or cp.depth or cp.soft:
            raise Fail(f'cpu {c}: switch from {prev}, tracked {cp.cur} depth {cp.depth} soft {cp.soft}')
        if prev in exit_written and state not in ('R', 'X'):
            raise Fail(f'cpu {c}: task {prev} sleeps ({state}) after its release_task()')
        if prev in exit_written:
            pass  # its exit is in already; preempted in do_exit() (R) it runs again later
        elif state == 'X' and cp.exiting != prev:
            cp.exiting = prev  # exit tracepoint before the CPU started
        if state == 'X' and prev not in exited:
            state = 'S'
        if nxt in dead:
            raise Fail(f'cpu {c}: task {nxt} runs again after its final switch')
        if nxt in sleeping:  # woken before: the wakeup itself does not touch the accounting
            emit(c, tb, sp, 'wakeup', f'tid={nxt}')
            counts['wakeup'] += 1
            sleeping.discard(nxt)
        if state in ('S', 'D'):
            sleeping.add(prev)
        if state == 'X' and cp.exiting == prev:
            counts['exit'] += 1
            exit_at[prev] = emit(c, tb, sp, 'exit')
        if state != 'R':
            cp.exiting = None
        seen.update((prev, nxt))
        if state == 'X':
            dead.add(prev)
        idx = emit(c, tb, sp, 'switch', f'prev={prev} next={nxt} prev_state={state}')
        checkpoint(idx, c, kin)
        counts['switch'] += 1
        cp.cur = nxt
        return idx

    def checkpoint(idx, c, kv):
        cps.append(f'C {idx} {c} ' + ' '.join(kv['k_' + k] for k in KCS))

    for m in parsed:
        comm, pid, c, ts, ev, rest = (m.group(1).strip(), int(m.group(2)), int(m.group(4)), int(m.group(6)),
                                      m.group(8), m.group(9))
        if m.group(7) is not None:
            raise Fail(f'trace clock is not the timebase (ppc-tb): {m.group(0)}')
        cp = cpus[c]
        kv = dict(KV.findall(rest))
        if ev == 'sched_process_fork':
            if syscalls is not None:
                syscalls.tree.fork(str(pid), rest)
            parent, child = int(kv['pid']), int(kv['child_pid'])
            kt = kthread(parent) or parent == 2
            tasks[child] = [kt, tgid_of.get(child, child), kv.get('child_comm', comm)]
            if not cp.started:
                continue
            created.add(child)
            counts['fork'] += 1
            if kt:
                extra = ' kthread'
            elif tasks[child][1] != child:
                extra = f' pid={tasks[child][1]} mm={tasks[child][1]}'
            else:
                extra = f' mm={child}'
            emit(c, cp.last_tb, cp.last_sp, 'fork',
                 f'parent={parent} child={child}{extra} comm={sane_comm(tasks[child][2])}')
            continue
        if ev == 'sched_switch':
            prev, nxt = int(kv['prev_pid']), int(kv['next_pid'])
            st = kv['prev_state'].rstrip('+')
            state = {'R': 'R', 'S': 'S', 'D': 'D', 'X': 'X', 'Z': 'X', 'I': 'D'}.get(st[:1], 'S')
            if prev == 0:
                state = 'R'
            cp.switch = (prev, nxt, state)
            if syscalls is not None:
                syscalls.switched_out(prev)
            if syscalls is not None and str(nxt) in syscalls.tree.pids and c != READS_CPU:
                # the reads are placed at the reader's CPU's last hook: the group's other
                # threads must not move meanwhile on another CPU (strace runs pinned to CPU 1)
                raise Fail(f'task {nxt} of the traced tree runs on cpu {c}: {m.group(0)}')
            continue
        if ev == 'sched_stat_runtime':
            # update_curr()'s delta of sum_exec_runtime ('rtime events'): the CPU clocks' value;
            # the traced tree's only (the runtime of tasks from before the trace is unknown)
            tid = int(kv['pid'])
            if syscalls is None or str(tid) not in syscalls.tree.pids:
                continue
            if not cp.started:
                raise Fail(f'runtime of {tid} of the traced tree before cpu {c} started: {m.group(0)}')
            seen.add(tid)
            idx = emit(c, cp.last_tb, cp.last_sp, 'runtime', f'tid={tid} ns={int(kv["runtime"])}')
            counts['runtime'] += 1
            if not cp.depth and not cp.soft and tid == cp.cur:
                syscalls.runtime(tid, (cp.last_tb, cp.last_sp, out[idx][1]))
            continue
        if ev == 'sched_process_exit':
            exited.add(pid)
            if cp.started and pid == cp.cur:
                cp.exiting = pid  # `exit` at the next hook, after the user time before it
            continue
        if ev == 'tracing_mark_write':
            w = rest.split()
            if len(w) >= 5 and w[0] == 'kacct' and w[1] in ('pstat', 'pdone'):
                # a /proc/stat read (per-CPU lines): placed by its markers' own TBs (ppc-tb
                # clock), as the state of both CPUs after every event at or before them
                pstat.setdefault(int(w[2]), {})[w[1]] = (ts, c)
                continue
            if len(w) >= 5 and w[0] == 'kacct' and w[1] in ('read', 'done') and cp.started:
                if pid != cp.cur:
                    raise Fail(f'cpu {c}: read by {pid}, tracked {cp.cur}')
                # the read happened between the two markers: one read event at each (a flush in
                # between leaves the kernel's value at one of them); the second has id + 100000
                counts['read'] += w[1] == 'read'
                tid = '' if KINDS[w[3]] == 'proc_stat' else f' tid={w[4]}'  # proc_stat: the reader's process
                rid = int(w[2]) + (100000 if w[1] == 'done' else 0)
                emit(c, cp.last_tb, cp.last_sp, 'read', f'kind={KINDS[w[3]]}{tid} id={rid}')
            continue
        if ev in ('sys_enter', 'sys_exit'):
            if syscalls is not None:
                for e in syscalls.line(ev, pid, rest, cp.started and pid == cp.cur, m.group(0),
                                       (cp.last_tb, cp.last_sp, seq - 0.5)):
                    if len(e) == 3:  # at an earlier point of this CPU: no counter moves
                        tb, sp, key = e[2]
                        out.append((tb, key, c, e[0], e[1], tb - cp.tb0, sp - cp.sp0))
                    else:
                        emit(c, cp.last_tb, cp.last_sp, *e)
                    counts['read'] += 1
            continue
        if not ev.rstrip('0123456789').endswith(('_in', '_out')):
            continue
        hook, side = ev.rstrip('0123456789').rsplit('_', 1)  # one probe per CPU: kk_in0, kk_in1
        if hook != 'ts' and cp.entry is not None and cp.entry[0] == 'ts':
            continue  # vtime_account_{kernel,idle} and vtime_flush called (not inlined) by vtime_task_switch
        if hook == 'ts':
            # vtime_task_switch(prev): vtime_account_{idle,kernel}(prev) and vtime_flush(prev) in
            # one; its entry has the data before (and prev's times before the flush), its return
            # the TB/SPURR read (starttime/startspurr) with every bucket flushed
            if side == 'in':
                if int(kv['pc']) >> HARDIRQ_SHIFT & 0xF or cp.switch is None:
                    if cp.started:
                        raise Fail(f'cpu {c}: vtime_task_switch outside a switch: {m.group(0)}')
                    continue
                cp.entry = ('ts', kv, 'switch')
                if cp.started:
                    counts['hooks'] += 1
                    sync(c, acct(kv))
                continue
            if cp.entry is None or cp.entry[0] != 'ts':
                if cp.started:
                    raise Fail(f'cpu {c}: return of vtime_task_switch without its entry: {m.group(0)}')
                continue
            _, kin, _ = cp.entry
            cp.entry = None
            aout = acct(kv)
            if not cp.started:
                if cp.depth == 0 and not cp.soft and cp.switch and cp.switch[1]:
                    start(c, aout)
                continue
            idx = switch(c, aout['starttime'], aout['startspurr'], kin)
            tcps.append(f'T {idx} {int(kin["tpid"])} {kin["t_ut"]} {kin["t_st"]} {kin["t_us"]} {kin["t_ss"]}')
            cp.after = aout
            cp.last_hook = (aout['starttime'], aout['startspurr'])
            continue

        if hook == 'rt':
            # release_task(): __exit_signal() (inlined) of the current thread (self-reaping) lies
            # between its entry and return; a leader reaped by its parent gets its exit before
            # its final switch
            if side == 'out':
                continue
            tp = int(kv['tpid'])
            if (syscalls is not None and cp.started and tp != cp.cur and tp in exit_at and
                    tasks.get(tp, [False, tp])[1] != tp):
                # a thread released by another task (its ptracer's wait: strace's), after its
                # final switch: __exit_signal() adds its times with the final switch's flush,
                # which the model's `exit` (before that switch) leaves out; group reads after
                # this anchor add the model's own flush of the thread since its exit (the A lines)
                if kthread(cp.cur) or cp.depth or cp.soft:
                    raise Fail(f'cpu {c}: release of {tp} by {cp.cur} outside its process context')
                syscalls.releases += 1
                anchor = 300000 + syscalls.releases
                emit(c, cp.last_tb, cp.last_sp, 'read', f'kind=rusage_thread id={anchor}')
                releases.append(f'A {exit_at[tp]} {tp} {anchor}')
            if cp.started and tp == cp.cur and cp.exiting == cp.cur:
                sync(c, acct(kv))
                cp.after = acct(kv)  # the transitions up to here are in
                counts['exit'] += 1
                emit(c, cp.last_tb, cp.last_sp, 'exit')
                exit_written.add(cp.cur)
                cp.exiting = None
            continue
        if side == 'in':
            pc = int(kv['pc'])
            hc = (pc >> HARDIRQ_SHIFT) & 0xF
            sc = bool(pc & SOFTIRQ_OFFSET)
            what = None
            if hook == 'fl':
                what = 'tick' if hc else 'switch_flush'
            elif hook in ('kk', 'ki'):
                if hc == cp.depth + 1 and cp.depth == 0 and not cp.soft:
                    what = 'irq_enter'
                elif hc == 0 and sc and not cp.soft and cp.depth == 0:
                    what = 'softirq_enter'
                elif hc == 0 and cp.switch is not None:
                    what = 'switch'
            elif hook == 'kh':
                if hc == cp.depth + 1 and cp.depth > 0:
                    what = 'irq_enter'
                elif hc == cp.depth and cp.depth > 0:
                    what = 'irq_exit'
            elif hook == 'ks':
                if hc == cp.depth + 1 and cp.soft and cp.depth == 0:
                    what = 'irq_enter'
                elif hc == 0 and cp.soft:
                    what = 'softirq_exit'
            if what is None and cp.started:
                raise Fail(f'cpu {c}: cannot place {hook} with preempt count {pc:#x} (depth {cp.depth}, soft '
                           f'{cp.soft}, switch {cp.switch}): {m.group(0)}')
            cp.entry = (hook, kv, what)
            if not cp.started:
                # track the context before the start too, so that the start is in process context
                if what == 'irq_enter':
                    cp.depth += 1
                elif what == 'irq_exit':
                    cp.depth -= 1
                elif what == 'softirq_enter':
                    cp.soft = True
                elif what == 'softirq_exit':
                    cp.soft = False
                elif what is None and hook == 'kh':
                    cp.depth = max(cp.depth - 1, 0)
                elif what is None and hook == 'ks':
                    cp.soft = False
                continue
            counts['hooks'] += 1
            kin = acct(kv)
            if what == 'tick':
                if kin['starttime'] != cp.after['starttime']:
                    raise Fail(f'cpu {c}: clock moved between the irq entry and its flush')
                tb, sp = cp.last_hook
                idx = emit(c, tb, sp, 'tick')
                counts['tick'] += 1
                checkpoint(idx, c, kv)
                tcps.append(f'T {idx} {int(kv["tpid"])} {kv["t_ut"]} {kv["t_st"]} {kv["t_us"]} {kv["t_ss"]}')
            elif what == 'switch_flush':
                tcps.append(f'T {cp.switch_idx} {int(kv["tpid"])} {kv["t_ut"]} {kv["t_st"]} {kv["t_us"]} '
                            f'{kv["t_ss"]}')
            else:
                sync(c, kin)
            continue
        # return probe: the TB and SPURR the hook read
        if cp.entry is None or cp.entry[0] != hook:
            if cp.started:
                raise Fail(f'cpu {c}: return of {hook} without its entry: {m.group(0)}')
            continue
        _, kin, what = cp.entry
        cp.entry = None
        aout = acct(kv)
        if not cp.started:
            if hook == 'fl' and what == 'switch_flush' and cp.depth == 0 and not cp.soft and cp.switch and cp.switch[1]:
                start(c, aout)
            elif hook in ('kk', 'ki') and what == 'switch':
                pass
            continue
        if hook == 'fl':
            cp.after = aout
            continue
        tb, sp = aout['starttime'], aout['startspurr']
        cp.last_hook = (tb, sp)
        if what == 'switch':
            cp.switch_idx = switch(c, tb, sp, kin)
        else:
            idx = emit(c, tb, sp, what, 'vec=0' if what == 'softirq_enter' else '')
            checkpoint(idx, c, kin)
            if what == 'irq_enter':
                cp.depth += 1
                counts['irq'] += 1
            elif what == 'irq_exit':
                cp.depth -= 1
            elif what == 'softirq_enter':
                cp.soft = True
                counts['softirq'] += 1
            elif what == 'softirq_exit':
                cp.soft = False
        cp.after = aout

    if syscalls:
        syscalls.finish()
    hdr = ['kacct-trace 1', 'cpu POWER9', f'ncpus {ncpus}', 'clock ns']
    if counts.get('runtime'):
        hdr.append('rtime events')
    decl = sorted(seen - created - {0})
    # a declared task's times at the start: those before its first flush in the trace (nothing
    # was added to them in between); its scaled times are not known (the format has no field)
    first_t = {}
    for l in tcps:
        w = l.split()
        first_t.setdefault(int(w[2]), (w[3], w[4]))
    for pid in decl:
        kt, tgid, comm = tasks.get(pid, [False, pid, 'task'])
        init = f' utime={first_t[pid][0]} stime={first_t[pid][1]}' if pid in first_t else ''
        hdr.append(f'task {pid} pid={tgid} kthread comm={sane_comm(comm)}{init}' if kt else
                   f'task {pid} pid={tgid} comm={sane_comm(comm)} mm={tgid}{init}')
    hdr.append('events')
    origin = min(o[0] for o in out)
    order = sorted(range(len(out)), key=lambda i: (out[i][0], out[i][1]))
    pos = {i: n for n, i in enumerate(order)}
    body = []
    for i in order:
        tb, _, c, kind, args, rtb, rsp = out[i]
        ts = (tb - origin) * 1_000_000_000 // TB_HZ
        body.append(f'{ts} {c} {kind}' + (f' {args}' if args else '') + f' tb={rtb} spurr={rsp}')
    # checkpoint event indices in the sorted order
    def reindex(lines):
        res = []
        for l in lines:
            w = l.split()
            w[1] = str(pos[int(w[1])])
            res.append(' '.join(w))
        return res
    vals = [l for l in sec.get('values', []) if l.startswith('V ')]
    # /proc/stat reads: the events at or before each marker's TB (the model's state after them)
    tbs = sorted(o[0] for o in out)
    pst = []
    for l in sec.get('values', []):
        w = l.split()
        if w[0] != 'P' or len(w) != 11 or int(w[1]) not in pstat or len(pstat[int(w[1])]) != 2:
            continue
        if not 0 <= int(w[2]) < ncpus:
            raise Fail(f'/proc/stat read {w[1]}: cpu {w[2]} is not one of the {ncpus} CPUs')
        (t0, c0), (t1, c1) = pstat[int(w[1])]['pstat'], pstat[int(w[1])]['pdone']
        if c0 != c1 or not cpus[c0].started:
            continue
        pst.append(f'S {w[1]} {bisect.bisect_right(tbs, t0)} {bisect.bisect_right(tbs, t1)} {c0} ' + ' '.join(w[2:]))
    os.makedirs(fix, exist_ok=True)

    def xz(name, text):
        with open(f'{fix}/{name}.xz', 'wb') as f:
            f.write(lzma.compress(text.encode(), preset=9))
    xz('trace', '\n'.join(hdr + body) + '\n')
    xz('checkpoints', '# C event cpu user nice system softirq irq idle iowait steal (kernel_cpustat ns before the event)\n'
       '# T event tid utime stime utimescaled stimescaled (task ns before the flush in that event)\n'
       '# R id kind tid values (stat: clock ticks; rusage, taskstats: us)\n'
       '# S id n_before n_after reader_cpu cpu user nice system idle iowait irq softirq steal: a /proc/stat\n'
       '#   cpuN line (clock ticks) read between the states after the first n_before and n_after events\n'
       + ('# R/F/K/W/U: the program\'s reads found at its syscalls (native-reduce.py --reads)\n' if syscalls else '')
       + '\n'.join(reindex(cps) + reindex(tcps)
                   + ['R' + v[1:] for v in vals] + pst + (syscalls.out if syscalls else []) + reindex(releases)) + '\n')
    meta = open(rec + '/meta').read() if os.path.exists(rec + '/meta') else ''
    with open(fix + '/meta', 'w') as f:
        f.write(meta)
        f.write(f'config {config}\ntb_origin {origin}\n')
        if syscalls:
            cmd = open(os.path.join(rec, 'out', prog + '.cmd')).read().strip()
            rc = open(os.path.join(rec, 'out', prog + '.rc')).read().strip()
            kinds = {}
            for l in syscalls.out:
                kinds[l[0]] = kinds.get(l[0], 0) + 1
            f.write(f'program {prog}\ncommand {cmd}\nexit {rc}\nroot {syscalls.root}\nrecorded_reads {len(syscalls.reads)}\n'
                    'found ' + ' '.join(f'{k}={v}' for k, v in sorted(kinds.items())) + ' ' +
                    ' '.join(f'{k}={v}' for k, v in syscalls.stats.items()) + '\n')
        f.write('tb_base ' + ' '.join(f'{cp.tb0}' for cp in cpus) + '\nspurr_base ' +
                ' '.join(f'{cp.sp0}' for cp in cpus) + '\n')
        f.write('counts ' + ' '.join(f'{k}={v}' for k, v in counts.items()) + '\n')
        f.write(f'events {len(body)} checkpoints {len(cps)} task_checkpoints {len(tcps)} reads {len(vals)} '
                f'proc_stat_lines {len(pst)}\n')
    print(f'{fix}: {len(body)} events, {len(cps)} checkpoints, {len(tcps)} task checkpoints, {len(vals)} reads, '
          f'{len(pst)} /proc/stat lines, {counts}')


if __name__ == '__main__':
    try:
        main()
    except Fail as e:
        raise SystemExit(f'native-reduce.py: {e}')

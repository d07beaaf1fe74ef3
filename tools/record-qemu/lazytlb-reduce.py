#!/usr/bin/env python3
"""Turn a lazytlb-record.sh recording into a lazy-TLB script plus the kernel's counts after each
step (docs/conformance.md, lazy-TLB section).

  lazytlb-reduce.py RECDIR FIXTUREDIR [--arch generic|ppc64-radix|ppc64-hash] [--version X.Y]

Every probe is a step of the model (lazytlb-init.sh lists them): fs<N> (finish_task_switch entry)
is `switch N TASK` / `idle N`, fr<N> (its return) `finish N`, wf<N> (wake_up_new_task) `fork` /
`forkvm` (the child's mm is the parent's: CLONE_VM), ex<N> (exit_files, in do_exit after
exit_mm) `exit N` when the task had an mm, xc<N> (setup_new_exec) `exec N`, in the trace clock's
order (`counter`: an atomic increment per event, the order the events really had). After each
step the probe's view is an expectation: the CPU's current task, its active_mm (an mm slot, or
init_mm), that mm's mm_users, mm_count and first mm_cpumask word. Tasks and mms get model
slots: a pointer names an mm slot from the step that creates it (fork, exec) on.

The state at the trace's start is rebuilt by a prefix of events from the model's initial world
(derived from each CPU's first probe; fs also gives rq->prev_mm): the one user process alive
(the init shell, slot 0), the kernel threads seen (forked from the initial kthread slot), mms
already dead but still held lazily by CPUs (a ghost task per such mm forks from the shell, runs
on each holding CPU and exits on the last), then each CPU's current task.

The model's `exit` is atomic; the kernel's task can be switched out between exit_mm() setting
mm = NULL and exit_files() (inside mmput()'s exit_mmap(), say) and run again. Such a task's exit
becomes `mmget CPU MM` + `exit CPU` before that switch (its pending mmput() held as an outside
reference) and `mmput CPU MM` at its exit_files(); when it runs again it does so in a spare
kernel-thread slot (forked in the prefix): with mm NULL it borrows active_mm as a kthread does.

On shootdown kernels xf<N>/sd<N> (the IPI handlers of the radix exit flush and of __mmdrop's
shootdown, their argument the mm) run inside the mmput() of an exit, exec or such held-back
mmput: that step goes at the mm's first handler (on its task's CPU), and the later probe only
observes. An xf<N> whose mm still has users is a
trim flush (flush_type_needed() with the trim clock firing), the step `flush SENDER MM` at its
return (2 CPUs: the sender is the other one). After each of these steps a row `STEP ipis N`
gives the IPIs so far (handlers on other CPUs than the step's). Writes FIXTUREDIR/script.lts,
expect (`lazytlb-expect 1` lines: STEP CPU TASK MM USERS COUNT MASK, STEP the 1-based event
index the line follows; `exit@S` after a row taken while a task holding that mm on another CPU
was on its way to exit_files(), S its exit step: the comparison then also accepts the kernel's
states inside exit_mm()/mmput(); also rows on the mm of a task preempted inside its
exit_mm()/mmput(), S its held-back `mmput` step; `fork@S` after a row taken while a task on that mm ran on
another CPU with its CLONE_VM fork's wake_up_new_task() as its next probe there, S the fork's
step: copy_mm()'s mmget() may already have counted the new user), meta, and prints counts.
"""
import argparse
import os
import re
import sys

from guestlog import decode_trace, sections

PF_KTHREAD = 0x00200000
PF_EXITING = 0x00000004
LINE = re.compile(r'^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+(\d+)(?:\.(\d+))?:\s+(\w+):\s*(.*)$')
KV = re.compile(r'(\w+)=(\S+)')


class Reject(Exception):
    pass


def parse(rec):
    s = sections(os.path.join(rec, 'trace.txt'))
    hdr = dict(l.split(' ', 1) for l in s['header'] if ' ' in l and not l.startswith(('p:', 'r:')))
    hdr['probes'] = [l for l in s['header'] if l.startswith(('p:', 'r:'))]
    init_mm = int(hdr['init_mm'], 16)
    ncpu = int(hdr['ncpu'])
    evs = []
    for l in decode_trace(s['trace']):
        m = LINE.match(l)
        if not m or not m.group(7)[:2] in ('fs', 'fr', 'wf', 'ex', 'xc', 'xf', 'xr', 'sd', 'sr'):
            continue
        kind, cpu = m.group(7)[:2], int(m.group(7)[2:])
        if cpu != int(m.group(3)):
            raise Reject(f'probe {m.group(7)} on CPU {m.group(3)}')
        a = {k: int(v, 0) for k, v in KV.findall(m.group(8))}
        # trace clock `counter` (one number, the global order) or an ns clock (s.us)
        ts = int(m.group(5)) if m.group(6) is None else int(m.group(5)) * 10**6 + int(m.group(6))
        evs.append((ts, len(evs), kind, cpu, a))
    evs.sort()
    return hdr, init_mm, ncpu, evs


def kthread(flags):
    return bool(flags & PF_KTHREAD)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('rec')
    ap.add_argument('out')
    ap.add_argument('--arch', default='generic')
    ap.add_argument('--version')
    o = ap.parse_args()
    hdr, init_mm, ncpu, evs = parse(o.rec)
    kver = hdr['kernel']
    hdr_lines = hdr['probes']
    ver = o.version or '.'.join(re.match(r'(\d+)\.(\d+)', kver).groups())

    # ---- pass 1: who exists before the trace, each CPU's state at its first probe ----------
    forked = set()
    pre = {}  # pid -> kthread? for tasks that ran before the trace
    first = {}  # cpu -> (task pid, active_mm pointer)
    shell = None

    def seen(pid, flags, mmp):
        nonlocal shell
        if pid == 0 or pid in forked or pid in pre:
            return
        pre[pid] = kthread(flags)
        if not kthread(flags):
            if shell is not None and shell[0] != pid:
                raise Reject(f'two user tasks before the trace: {shell[0]} and {pid}')
            shell = (pid, mmp)

    for _, _, k, c, a in evs:
        if k in ('xf', 'xr', 'sd', 'sr'):
            continue
        if k == 'fs':
            seen(a['pp'], a['pf'], a['pm'])
            if c not in first:
                # prev's active_mm before the switch: its own mm, or what the switch moved on
                # (to next, if next has no mm; to rq->prev_mm, if it has)
                if a['pm']:
                    y = a['pm']
                elif a['cm'] == 0:
                    y = a['ca']
                else:
                    y = a['rp'] or init_mm
                first[c] = (a['pp'], y)
        seen(a['cp'], a['cf'], a['cm'])
        if c not in first:
            if k in ('fr', 'xc'):
                raise Reject(f'CPU {c} starts with {k} (inside a switch or an exec)')
            first[c] = (a['cp'], a['ca'])
        if k == 'wf':
            if a['ch'] in pre:
                raise Reject(f'task {a["ch"]} ran before it was forked')
            forked.add(a['ch'])
    if shell is None:
        raise Reject('no user task before the trace')
    # tasks preempted between exit_mm() and exit_files() that run again: each continues in a
    # spare kernel-thread slot (below)
    preempted, reserve = set(), []
    for _, _, k, c, a in evs:
        if k != 'fs':
            continue
        if a['pp'] and not kthread(a['pf']) and a['pf'] & PF_EXITING and a['pm'] == 0:
            preempted.add(a['pp'])
        if a['cp'] in preempted and a['cp'] not in reserve:
            reserve.append(a['cp'])
    for c in range(ncpu):
        first.setdefault(c, (0, init_mm))

    # ---- slots --------------------------------------------------------------------------------
    zombies = []  # pointers of dead mms held lazily at the start
    for c in range(ncpu):
        y = first[c][1]
        if y not in (init_mm, shell[1]) and y not in zombies:
            zombies.append(y)
    kthreads = [p for p, kt in pre.items() if kt]
    ntasks = 1 + len(zombies) + len(kthreads) + len(forked) + len(reserve)
    nmms_guess = 1 + len(zombies)
    if not kthreads:
        kthreads = [None]
        ntasks += 1
    slot = {shell[0]: 0}
    ghosts = list(range(1, 1 + len(zombies)))
    nxt = 1 + len(zombies)
    slot[kthreads[0]] = ntasks - 1
    for p in kthreads[1:]:
        slot[p] = nxt
        nxt += 1
    spare = list(range(nxt, nxt + len(reserve)))
    nxt += len(reserve)
    script, expect = [], []
    mmslot = {shell[1]: 0}  # pointer -> mm slot
    nmm = 1

    def ev(text):
        script.append(text)

    def tname(c, pid):
        return f'idle {c}' if pid == 0 else f'switch {c} {slot[pid]}'

    # ---- prefix: the state at the trace's start -------------------------------------------
    ev('# prefix: the state at the trace start (not compared)')
    k0 = ntasks - 1
    if len(kthreads) > 1 or spare:
        ev(f'switch 0 {k0}')
        ev('finish 0')
        for p in kthreads[1:]:
            ev(f'fork 0 {slot[p]}')
        for r in spare:
            ev(f'fork 0 {r}  # spare: a task preempted inside its exit runs on here')
        ev('idle 0')
        ev('finish 0')
    # the shell forks the ghosts on a CPU that ends on a user mm (no CPU returns to init_mm)
    users_cpus = [c for c in range(ncpu) if first[c][1] != init_mm]
    if zombies:
        c = users_cpus[0]
        ev(f'switch {c} 0')
        ev(f'finish {c}')
        for i, z in enumerate(zombies):
            ev(f'fork {c} {ghosts[i]}')
            mmslot[z] = nmm
            nmm += 1
        ev(f'idle {c}')
        ev(f'finish {c}')
    for i, z in enumerate(zombies):
        holders = [c for c in range(ncpu) if first[c][1] == z]
        g = ghosts[i]
        for c in holders[:-1]:
            ev(f'switch {c} {g}')
            ev(f'finish {c}')
            ev(f'idle {c}')
            ev(f'finish {c}')
        c = holders[-1]
        ev(f'switch {c} {g}')
        ev(f'finish {c}')
        ev(f'exit {c}')
        ev(f'idle {c}')
        ev(f'finish {c}')
    # CPUs lazy on the shell's mm, then the CPUs' current tasks (the shell's last)
    for c in range(ncpu):
        p, y = first[c]
        if y == shell[1] and p != shell[0]:
            ev(f'switch {c} 0')
            ev(f'finish {c}')
            ev(f'idle {c}')
            ev(f'finish {c}')
    order = sorted(range(ncpu), key=lambda c: first[c][0] == shell[0])
    for c in order:
        p, _ = first[c]
        if p != 0:
            ev(tname(c, p))
            ev(f'finish {c}')
    nprefix = sum(1 for l in script if not l.startswith('#'))
    ev('# the trace')

    # ---- pass 2: the steps and the expectations --------------------------------------------
    curr = {c: first[c][0] for c in range(ncpu)}
    hasmm = {shell[0]: True}
    for p in pre:
        hasmm.setdefault(p, False)
    nstep = nprefix
    counts = {k: 0 for k in ('fs', 'fr', 'wf', 'ex', 'xc', 'xf', 'xr', 'sd', 'sr', 'expect', 'ipi_rows')}
    ipi_probes = any(l.startswith('p:kacct/xf') for l in hdr_lines)
    ipis = 0
    early = {}  # pid -> cpu: its exit/exec step was emitted at the first IPI handler of its mm
    owner = {}  # mm pointer -> (pid, cpu) of that early step
    new_slot = {}  # pid -> the mm slot its early exec created (the pointer comes at setup_new_exec)
    exited = set()  # pids whose model exit ran and whose final switch-out has not been seen
    out_after_exit = set()  # of them, switched out (dead in the model) and not yet run again

    window = {}  # pid -> indexes in expect of rows taken while that task's exit was in flight

    def in_flight(c, m, i):
        # a task holding m that runs on another CPU and reaches exit_files() before it is
        # switched out: its exit_mm()/mmput() may be under way (not atomic in the kernel)
        for t, mp in mm_of.items():
            if mp != m or not hasmm.get(t) or t not in curr.values() or curr.get(c) == t:
                continue
            for e in evs[i + 1:]:
                if e[2] == 'ex' and e[4]['cp'] == t:
                    return t
                if e[2] == 'fs' and e[4]['pp'] == t:
                    break
        return None

    def exit_step(t):
        for r in window.pop(t, []):
            expect[r] += f' exit@{nstep}'

    fwindow = {}  # pid -> indexes in expect of rows taken while that task's CLONE_VM fork was in flight

    def fork_flight(c, m, i):
        # a task on m running on another CPU whose next probe there is its CLONE_VM fork's
        # wake_up_new_task(): copy_mm()'s mmget() came earlier, at a moment no probe shows
        for c2, t in curr.items():
            if c2 == c or mm_of.get(t) != m or not hasmm.get(t):
                continue
            for e in evs[i + 1:]:
                if e[3] != c2:
                    continue
                if e[2] == 'wf' and e[4]['cp'] == t and e[4]['chm'] == e[4]['cm'] == m:
                    return t
                break
        return None

    def fork_step(t):
        for r in fwindow.pop(t, []):
            expect[r] += f' fork@{nstep}'

    def observe(c, a, k, i=None):
        ca = a['ca']
        if ca == init_mm:
            mm = 'init'
        elif ca in mmslot:
            mm = str(mmslot[ca])
        else:
            raise Reject(f'step {nstep}: CPU {c} on an mm never created ({ca:#x}, {k})')
        t = 'idle' if a['cp'] == 0 else str(slot[a['cp']])
        if mm == 'init':
            expect.append(f'{nstep} {c} {t} init - - -')
        else:
            expect.append(f'{nstep} {c} {t} {mm} {a["mu"]} {a["mc"]} {a["mk"]:x}')
            w = in_flight(c, ca, i) if i is not None else None
            if w is None:
                # a task preempted inside its exit_mm()/mmput() of this mm (held back): its
                # mmput() may be past the decrement, inside __mmput(), until its mmput step
                w = next((t for t, mp in pending_put.items() if mp == ca), None)
            if w is not None:
                window.setdefault(w, []).append(len(expect) - 1)
            f = fork_flight(c, ca, i) if i is not None else None
            if f is not None:
                if w is not None:
                    raise Reject(f'step {nstep}: a row inside both an exit and a fork')
                fwindow.setdefault(f, []).append(len(expect) - 1)
        counts['expect'] += 1

    trim = {}  # cpu -> mm pointer of a trim flush IPI being handled there
    mm_of = {shell[0]: shell[1]}  # pid -> its mm pointer
    pending_put = {}  # pid -> mm pointer: preempted between exit_mm() and its mmput() completing
    counts['exit_preempted'] = 0
    for i, (ts, _, k, c, a) in enumerate(evs):
        counts[k] += 1
        if k == 'xf' and a.get('fu', 0) > 0:
            # radix flush_type_needed() trimming mm_cpumask (the mm still has users): a `flush`
            # step by the sender, at the handler's return
            if ncpu != 2:
                raise Reject('a trim flush IPI with more than 2 CPUs: the sender is not known')
            trim[c] = a['fm']
            continue
        if k == 'xr' and c in trim:
            m = trim.pop(c)
            if m not in mmslot:
                raise Reject(f'trim flush of an mm never created ({m:#x})')
            ev(f'flush {1 - c} {mmslot[m]}  # {ts} trim IPI to CPU {c}')
            nstep += 1
            observe(c, a, k)
            ipis += 1
            counts['trim'] = counts.get('trim', 0) + 1
            if ipi_probes:
                expect.append(f'{nstep} ipis {ipis}')
                counts['ipi_rows'] += 1
            continue
        if k in ('xf', 'sd'):
            # the exit flush (xf) and __mmdrop's shootdown (sd) of mm M run inside the mmput()
            # that drops M's last user: an exit or an exec of the task T holding M, on T's CPU.
            # T's step goes here, at its first handler (its exit_files()/setup_new_exec() can
            # come much later, after other CPUs' steps that the handlers already changed).
            m = a['fm']
            if m not in owner:
                ts_ = [t for t, mp in mm_of.items() if mp == m and (hasmm.get(t) or t in pending_put)]
                if len(ts_) != 1:
                    raise Reject(f'IPI handler {k}{c} for mm {m:#x}: holders {ts_}')
                t = ts_[0]
                cs = [x for x in range(ncpu) if curr[x] == t]
                if len(cs) != 1:
                    raise Reject(f'IPI handler {k}{c}: task {t} is not running')
                nx = next((e for e in evs[i:] if e[2] in ('ex', 'xc') and e[4]['cp'] == t), None)
                if nx is None:
                    raise Reject(f'IPI handler {k}{c}: task {t} neither exits nor execs')
                if t in pending_put:
                    ev(f'mmput {cs[0]} {mmslot[pending_put.pop(t)]}  # at the first IPI handler of its mm')
                elif nx[2] == 'ex':
                    ev(f'exit {cs[0]}  # at the first IPI handler of its mm')
                else:
                    ev(f'exec {cs[0]}  # at the first IPI handler of its old mm')
                    new_slot[t] = nmm
                    nmm += 1
                nstep += 1
                if nx[2] == 'ex':
                    exited.add(t)
                    exit_step(t)
                hasmm[t] = False
                early[t] = cs[0]
                owner[m] = (t, cs[0])
            ipis += owner[m][1] != c
            continue
        if k in ('xr', 'sr'):
            continue
        if k == 'fs':
            if curr[c] != a['pp']:
                raise Reject(f'CPU {c}: switch from {a["pp"]} but {curr[c]} is current')
            p = a['pp']
            if p and hasmm.get(p) and a['pf'] & PF_EXITING and a['pm'] == 0:
                # switched out after exit_mm() set mm = NULL and before exit_files(): the
                # model's exit is atomic, so its mmput() is held back by an outside reference
                # (mmget) and dropped (mmput) at the task's exit_files()
                m = mm_of[p]
                ev(f'mmget {c} {mmslot[m]}  # task {p} preempted inside exit_mm()/mmput()')
                ev(f'exit {c}')
                nstep += 2
                exit_step(p)
                hasmm[p] = False
                pending_put[p] = m
                exited.add(p)
                counts['exit_preempted'] += 1
            if p in exited:
                out_after_exit.add(p)  # the model's task died here (its next switch-out)
            n = a['cp']
            if n in out_after_exit:
                if n not in reserve or slot[n] == spare[reserve.index(n)]:
                    raise Reject(f'task {n} runs again after its exit twice')
                slot[n] = spare[reserve.index(n)]
                out_after_exit.discard(n)
                exited.discard(n)
                counts['run_again'] = counts.get('run_again', 0) + 1
            if n != 0 and n not in slot:
                raise Reject(f'task {n} runs before the trace shows where it came from')
            ev(tname(c, n) + f'  # {ts}')
            curr[c] = n
            if a['cm']:
                mm_of[n] = a['cm']
        elif k == 'fr':
            ev(f'finish {c}')
        elif k == 'wf':
            ch = a['ch']
            slot[ch] = nxt
            nxt += 1
            if hasmm.get(a['cp'], False) and a['cm']:
                if a['chm'] == a['cm']:
                    ev(f'forkvm {c} {slot[ch]}')
                    nstep += 1
                    fork_step(a['cp'])
                    nstep -= 1
                else:
                    ev(f'fork {c} {slot[ch]}')
                    mmslot[a['chm']] = nmm
                    nmm += 1
                hasmm[ch] = True
                mm_of[ch] = a['chm']
            else:
                ev(f'fork {c} {slot[ch]}')
                hasmm[ch] = False
        elif k == 'ex':
            if a['cp'] in early:
                del early[a['cp']]
                observe(c, a, k)  # the step came at its first IPI handler
                if ipi_probes:
                    expect.append(f'{nstep} ipis {ipis}')
                    counts['ipi_rows'] += 1
                continue
            if a['cp'] in pending_put:
                ev(f'mmput {c} {mmslot[pending_put.pop(a["cp"])]}')
                nstep += 1
                exit_step(a['cp'])
                nstep -= 1
            elif not hasmm.get(a['cp'], False):
                continue  # a kernel thread's exit touches no mm
            else:
                ev(f'exit {c}')
                exited.add(a['cp'])
                nstep += 1
                exit_step(a['cp'])
                nstep -= 1
            hasmm[a['cp']] = False
        elif k == 'xc':
            if a['cp'] in early:
                del early[a['cp']]
                mmslot[a['ca']] = new_slot.pop(a['cp'])
                hasmm[a['cp']] = True
                mm_of[a['cp']] = a['ca']
                observe(c, a, k)
                if ipi_probes:
                    expect.append(f'{nstep} ipis {ipis}')
                    counts['ipi_rows'] += 1
                continue
            ev(f'exec {c}')
            mmslot[a['ca']] = nmm
            nmm += 1
            hasmm[a['cp']] = True
            mm_of[a['cp']] = a['ca']
        nstep += 1
        observe(c, a, k, i)
        if k not in ('ex', 'xc'):
            continue
        if ipi_probes:
            expect.append(f'{nstep} ipis {ipis}')
            counts['ipi_rows'] += 1

    if ntasks > 64 or nmm > 16:
        raise Reject(f'{ntasks} tasks, {nmm} mms: over the script limits (64, 16)')
    os.makedirs(o.out, exist_ok=True)
    meta = open(os.path.join(o.rec, 'meta')).read() if os.path.exists(os.path.join(o.rec, 'meta')) else ''
    with open(os.path.join(o.out, 'script.lts'), 'w') as f:
        f.write(f'lazytlb 1\n# {kver}: lazytlb-record.sh + lazytlb-reduce.py ({counts["expect"]} expectations)\n')
        f.write(f'cpus {ncpu}\ntasks {ntasks}\nmms {nmm}\narch {o.arch}\nversion {ver}\nevents\n')
        f.write('\n'.join(script) + '\n')
    with open(os.path.join(o.out, 'expect'), 'w') as f:
        f.write('lazytlb-expect 1\n# STEP CPU TASK MM USERS COUNT MASK (after the STEP-th event; MM init: not counted)\n')
        f.write(f'prefix {nprefix}\n')
        f.write('\n'.join(expect) + '\n')
    with open(os.path.join(o.out, 'meta'), 'w') as f:
        f.write(meta)
        f.write(f'kernel {kver}\nprobes ' + ' '.join(f'{k} {counts[k]}' for k in ('fs', 'fr', 'wf', 'ex', 'xc', 'xf', 'sd')) + '\n')
        f.write(f'ipis {ipis} in {counts["ipi_rows"]} rows, trim flushes {counts.get("trim", 0)}\n')
        f.write(f'prefix_events {nprefix}\ntrace_events {nstep - nprefix}\nexpectations {counts["expect"]}\n')
        f.write(f'start shell pid {shell[0]}, kthreads {len(kthreads)}, dead mms held lazily {len(zombies)}\n')
        f.write(f'exits preempted between exit_mm() and the end of mmput() {counts["exit_preempted"]}; '
                f'tasks run again after their exit step {counts.get("run_again", 0)}\n')
    print(f'{o.out}: {nprefix} prefix + {nstep - nprefix} events, {counts["expect"]} expectations, '
          f'{ntasks} tasks, {nmm} mms')


if __name__ == '__main__':
    try:
        main()
    except Reject as e:
        print(f'lazytlb-reduce: {e}', file=sys.stderr)
        sys.exit(1)

#!/usr/bin/env python3
"""native-reduce.py --reads on hand-written recordings (no kernel, no QEMU): one CPU that starts at
a switch to the program (pid 345), then the program's syscalls. The clean recordings reduce, the
reads placed as the reducer's docstring says (a CPU-clock read right after the reader's own
runtime update, before a tick's; without an own update, at both ends); each doctored one (a read
on one side only, a read kacct does not know, a reaping waitid(), CPU clocks without
sched_stat_runtime) must exit non-zero with its message and write nothing.
  reduce_reads_test.py TOOLS_RECORD_QEMU_DIR"""
import base64
import gzip
import importlib.util
import json
import lzma
import os
import subprocess
import sys
import tempfile

tools = sys.argv[1]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checks import check, finish  # noqa: E402  (test/checks.py)


ACCT = ('utime', 'stime', 'utime_scaled', 'stime_scaled', 'hardirq_time', 'softirq_time', 'idle_time',
        'steal_time', 'starttime', 'starttime_user', 'startspurr', 'utime_sspurr')
KCS = ('us', 'ni', 'sy', 'si', 'hi', 'id', 'io', 'st')


def acct(tb):
    a = dict.fromkeys(ACCT, 0)
    a.update(starttime=tb, startspurr=tb, starttime_user=tb)
    return ' '.join(f'a_{k}={v}' for k, v in a.items()) + ' ' + ' '.join(f'k_{k}=0' for k in KCS)


def line(comm, pid, tb, ev, rest):
    return f'{comm:>16}-{pid:<7} ({pid:>7}) [001] d....   {tb}: {ev}: {rest}'


def start():
    """The switch to 345 on CPU 1: its vtime_task_switch() flush starts the CPU (TB 1000)."""
    return [line('<idle>', 0, 990, 'sched_switch', 'prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R '
                 '==> next_comm=prog next_pid=345 next_prio=120'),
            line('prog', 345, 995, 'ts_in1', '(vtime_task_switch+0x8/0x80) pc=0 tpid=0 t_ut=0 t_st=0 t_us=0 '
                 't_ss=0 ' + acct(900)),
            line('prog', 345, 1005, 'ts_out1', '(finish_task_switch+0x7c/0x350 <- vtime_task_switch) ' + acct(1000))]


def syscall(tb, nr, args, ret=0):
    return [line('prog', 345, tb, 'sys_enter', f'NR {nr} ({args})'),
            line('prog', 345, tb + 50, 'sys_exit', f'NR {nr} = {ret}')]


def runtime(tb, ns):
    return line('prog', 345, tb, 'sched_stat_runtime', f'comm=prog pid=345 runtime={ns} [ns]')


GETRUSAGE = 'getrusage(RUSAGE_SELF, {ru_utime={tv_sec=0, tv_usec=0}, ru_stime={tv_sec=0, tv_usec=0}, ' \
            'ru_maxrss=512}) = 0'
CLOCK = 'clock_gettime(CLOCK_THREAD_CPUTIME_ID, {tv_sec=0, tv_nsec=3000}) = 0'
GOOD_TRACE = (start() + syscall(2000, 77, '0, 7fff83eaff70, 1, 1, 1, 7fff83ec0038') +
              [line('prog', 345, 3000, 'sys_enter', 'NR 246 (3, 7fff83eaff70, 0, 0, 0, 0)'),
               runtime(3010, 3000),
               # a tick's update after the read's own (inside the irq: not the read's)
               line('prog', 345, 3021, 'kk_in1', '(vtime_account_kernel) pc=65536 tpid=345 t_ut=0 t_st=0 '
                    't_us=0 t_ss=0 ' + acct(1000)),
               line('prog', 345, 3022, 'kk_out1', '(irq_enter <- vtime_account_kernel) ' + acct(3021)),
               runtime(3030, 700),
               line('prog', 345, 3040, 'kh_in1', '(vtime_account_hardirq) pc=65536 tpid=345 t_ut=0 t_st=0 '
                    't_us=0 t_ss=0 ' + acct(3021)),
               line('prog', 345, 3041, 'kh_out1', '(irq_exit <- vtime_account_hardirq) ' + acct(3040)),
               line('prog', 345, 3100, 'sys_exit', 'NR 246 = 0')])
GOOD_STRACE = [GETRUSAGE, CLOCK]


def recording(d, trace, strace, meta='kernel_version 6.12.118\n'):
    os.makedirs(os.path.join(d, 'out', 'prog.strace'))
    body = base64.b64encode(gzip.compress(('\n'.join(trace) + '\n').encode(), mtime=0)).decode()
    with open(os.path.join(d, 'trace.txt'), 'w') as f:
        f.write('==== tasks prog\n1 4194304 1 init\n345 0 345 prog\n==== trace prog\nbegin-base64 644 trace.gz\n' +
                body + '\n====\n')
    open(os.path.join(d, 'meta'), 'w').write(meta)
    for n, v in (('root', '345'), ('cmd', './prog'), ('rc', '0')):
        open(os.path.join(d, 'out', 'prog.' + n), 'w').write(v + '\n')
    open(os.path.join(d, 'out', 'prog.strace', 'st.345'), 'w').write('\n'.join(strace) + '\n')


def reduce(tmp, name, trace, strace):
    rec, fix = os.path.join(tmp, name), os.path.join(tmp, name + '-fixture')
    recording(rec, trace, strace)
    r = subprocess.run([sys.executable, os.path.join(tools, 'native-reduce.py'), rec, fix, '--reads', 'prog'],
                       capture_output=True, text=True)
    return r, fix


with tempfile.TemporaryDirectory() as tmp:
    r, fix = reduce(tmp, 'good', GOOD_TRACE, GOOD_STRACE)
    check(r.returncode == 0, f'the clean recording reduces: {r.stderr.strip()[-300:]}')
    if r.returncode == 0:
        trace = lzma.open(os.path.join(fix, 'trace.xz'), 'rt').read().splitlines()
        check('rtime events' in trace[:trace.index('events')], 'header says rtime events')
        ev = [' '.join(w for w in l.split()[2:] if not w.startswith(('tb=', 'spurr=')))
              for l in trace[trace.index('events') + 1:]]
        want = ['switch prev=0 next=345 prev_state=R', 'read kind=rusage_self tid=345 id=1',
                'read kind=rusage_self tid=345 id=100001', 'runtime tid=345 ns=3000',
                'read kind=thread_cputime tid=345 id=2', 'read kind=thread_cputime tid=345 id=100002',
                'irq_enter', 'runtime tid=345 ns=700', 'irq_exit']
        check(ev == want, f'the clock read right after its own runtime update, before the tick\'s: {ev}')
        cps = lzma.open(os.path.join(fix, 'checkpoints.xz'), 'rt').read().splitlines()
        check('R 2 thread_cputime 345 3000' in cps and 'R 1 rusage_self 345 0 0' in cps,
              f'R lines of both reads: {[l for l in cps if l.startswith("R")]}')

    # no runtime update of the reader inside the call (delta 0: no tracepoint): the one before its
    # sys_enter is not the read's; the read goes to both ends (the flush bound)
    r, fix = reduce(tmp, 'no-own-update',
                    start() + [runtime(2990, 500)] + syscall(3000, 246, '3, 7fff83eaff70, 0, 0, 0, 0'), [CLOCK])
    check(r.returncode == 0, f'no-own-update reduces: {r.stderr.strip()[-300:]}')
    if r.returncode == 0:
        trace = lzma.open(os.path.join(fix, 'trace.xz'), 'rt').read().splitlines()
        ev = [' '.join(w for w in l.split()[2:] if not w.startswith(('tb=', 'spurr=')))
              for l in trace[trace.index('events') + 1:]]
        check(ev == ['switch prev=0 next=345 prev_state=R', 'runtime tid=345 ns=500',
                     'read kind=thread_cputime tid=345 id=1', 'read kind=thread_cputime tid=345 id=100001'],
              f'no-own-update: the read at its sys_enter and sys_exit: {ev}')
        check('clock_own_update=0 clock_bounded=1' in open(os.path.join(fix, 'meta')).read(), 'no-own-update: meta')

    def refused(name, trace, strace, message):
        r, fix = reduce(tmp, name, trace, strace)
        check(r.returncode != 0 and message in r.stderr and not os.path.exists(fix),
              f'{name}: exit {r.returncode}, "{message}" in: {r.stderr.strip()[-300:]}')

    refused('strace-only', start() + syscall(2000, 77, '0, 7fff83eaff70, 1, 1, 1, 0'), [GETRUSAGE, GETRUSAGE],
            'native-reduce.py: recorded but not in the trace (1): tid 345 syscall 77 #2')
    refused('trace-only', start() + syscall(2000, 77, '0, 0, 0, 0, 0, 0') + syscall(2200, 77, '0, 0, 0, 0, 0, 0'),
            [GETRUSAGE], 'native-reduce.py: in the trace but not recorded: tid 345 syscall 77 #2')
    # a CPU clock strace did not record (CPUCLOCK_MAKE of 345's thread sched clock: (~345 << 3) | 4 | 2)
    refused('trace-only-clock', start() + syscall(2000, 246, 'fffff536, 7fff83eaff70, 0, 0, 0, 0'), [],
            'native-reduce.py: in the trace but not recorded: tid 345 syscall 246 #1')
    refused('reaping-waitid', start() + syscall(2000, 272, '0, 0, 7fff83eaff70, 4, 0, 0'), [],
            'native-reduce.py: a reaping waitid() of the traced tree')
    refused('clock-without-runtime', start() + syscall(3000, 246, '3, 7fff83eaff70, 0, 0, 0, 0'), [CLOCK],
            'native-reduce.py: CPU-clock reads but no sched_stat_runtime of the traced tree')
    # a read decode.py would never write (its reads file doctored): the reducer's own check
    spec = importlib.util.spec_from_file_location('native_reduce', os.path.join(tools, 'native-reduce.py'))
    sys.path.insert(0, tools)
    nr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(nr)
    rec = os.path.join(tmp, 'unknown-read')
    recording(rec, start() + syscall(2000, 77, '0, 0, 0, 0, 0, 0'), [GETRUSAGE])
    nr.decode = lambda *a: '\n'.join([json.dumps({'recorder': 'strace', 'root': 345, 'tids': [345]}), json.dumps(
        {'tid': 345, 'nr': 77, 'seq': 1, 'read': 'rusage_both', 'utime': 0, 'stime': 0})]) + '\n'
    sys.argv = ['native-reduce.py', rec, os.path.join(tmp, 'unknown-read-fixture'), '--reads', 'prog']
    try:
        nr.main()
        check(False, 'unknown-read: refused')
    except nr.Fail as e:
        check("a recorded read kacct does not know: {'tid': 345, 'nr': 77, 'seq': 1, 'read': 'rusage_both'" in str(e)
              and not os.path.exists(os.path.join(tmp, 'unknown-read-fixture')), f'unknown-read: refused: {e}')

finish()

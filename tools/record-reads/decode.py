#!/usr/bin/env python3
"""Decode `strace -ff -v -y -s 256 -e trace=getrusage,times,clock_gettime,read,wait4,clock_nanosleep` output (one file
per thread, PREFIX.TID) into the reads file `kacct perf-replay --recorded` takes: a header line
{"recorder", "root", "tids"}, then one line per CPU-time read, what the kernel returned:
  {"tid", "nr", "seq", "read", "call", "arg0", "target", "utime"/"stime" or "value"}
seq counts the thread's syscalls of that name (1-based), as the perf trace counts them.
read: rusage_self|rusage_thread|rusage_children (us), times (clock ticks), process_cputime|
thread_cputime|cpuclock_prof|cpuclock_virt (ns), proc_stat|task_stat (clock ticks, fields 14/15
of /proc/PID/stat and /proc/PID/task/TID/stat), schedstat (first field, ns), sys_stat (/proc/stat,
no values), wait4_rusage (the child's times wait4() returned with a reap: "target" is the
child, us), failed (the syscall returned an error: nothing to compare; "errno" names it).
Usage: decode.py [--arch amd64|ppc64el] ROOT_PID PREFIX.TID... > reads.jsonl
--arch: whose syscall numbers "nr" gives (default amd64; kacct's arch/syscalls.hpp)."""
import json
import re
import sys

# x86-64 syscall_64.tbl; ppc64 syscall.tbl (common/64 rows)
NRS = {'amd64': {'read': 0, 'wait4': 61, 'getrusage': 98, 'times': 100, 'clock_gettime': 228},
       'ppc64el': {'read': 3, 'wait4': 114, 'getrusage': 77, 'times': 43, 'clock_gettime': 246}}
NR = NRS['amd64']
WHO = {'RUSAGE_SELF': (0, 'rusage_self'), 'RUSAGE_THREAD': (1, 'rusage_thread'),
       'RUSAGE_CHILDREN': (0xffffffff, 'rusage_children')}
call_re = re.compile(r'^(\w+)\((.*)\)\s+=\s+(-?\d+|\?)(.*)$')
tv = lambda s, k: re.search(k + r'=\{tv_sec=(\d+), tv_usec=(\d+)\}', s)


def unescape(s):
    out, i = bytearray(), 0
    while i < len(s):
        c = s[i]
        if c != '\\':
            out += c.encode()
            i += 1
            continue
        n = s[i + 1]
        if n in 'nrtvfab':
            out += {'n': b'\n', 'r': b'\r', 't': b'\t', 'v': b'\v', 'f': b'\f', 'a': b'\a', 'b': b'\b'}[n]
            i += 2
        elif n == 'x':
            out.append(int(s[i + 2:i + 4], 16))
            i += 4
        elif n.isdigit():
            j = i + 1
            while j < len(s) and j < i + 4 and s[j].isdigit():
                j += 1
            out.append(int(s[i + 1:j], 8) & 0xff)
            i = j
        else:
            out += n.encode()
            i += 2
    return out.decode('latin-1')


def clock(tid, pid, arg):
    """clock_gettime's clock id: (arg0, read, target) or None for a clock that is not CPU time."""
    if arg.startswith('CLOCK_PROCESS_CPUTIME_ID'):
        return 2, 'process_cputime', pid
    if arg.startswith('CLOCK_THREAD_CPUTIME_ID'):
        return 3, 'thread_cputime', tid
    m = re.match(r'(0x[0-9a-f]+|-?\d+)', arg)
    if not m:
        return None
    v = int(m.group(1), 0) & 0xffffffff
    s = v - (1 << 32) if v >> 31 else v
    if s >= 0 or (s & 3) == 3:
        return None  # not a CPU clock (or a dynamic fd clock)
    target = ~(s >> 3)
    thread = bool(s & 4)
    which = s & 3
    if target == 0:
        target = tid if thread else pid
    name = {0: 'cpuclock_prof', 1: 'cpuclock_virt', 2: 'thread_cputime' if thread else 'process_cputime'}[which]
    return v, name, target


def proc_file(path):
    """(read, target) for the /proc files of CPU time, else None."""
    m = re.fullmatch(r'/proc/(\d+)/task/(\d+)/(stat|schedstat)', path)
    if m:
        return ('task_stat' if m.group(3) == 'stat' else 'schedstat'), int(m.group(2))
    m = re.fullmatch(r'/proc/(\d+)/(stat|schedstat)', path)
    if m:
        return ('proc_stat' if m.group(2) == 'stat' else 'schedstat'), int(m.group(1))
    if path == '/proc/stat':
        return 'sys_stat', 0
    return None


def cpu_nanosleep(tid, m, f):
    """clock_nanosleep() on a CPU clock: the kernel refuses a thread clock of the caller
    (posix_cpu_nsleep(): EINVAL; CLOCK_THREAD_CPUTIME_ID has no nsleep: EOPNOTSUPP; 6.1 and 6.12
    kernel/time/posix-cpu-timers.c, posix-timers.c) before it samples anything: not a read. Any
    other outcome sampled the clock (the wake, the remaining time): kacct does not predict CPU-clock
    sleeps, so the recording is refused rather than passed with the read left out."""
    c = clock(tid, tid, m.group(2))
    if c is None:
        return
    e = re.match(r'\s*(E[A-Z0-9]+)', m.group(4))
    if m.group(3).startswith('-') and e and e.group(1) in ('EINVAL', 'EOPNOTSUPP'):
        return  # refused before a sample
    sys.exit(f'decode.py: {f}: clock_nanosleep() on a CPU clock ({c[1]}) that the kernel ran '
             f'(= {m.group(3)}{m.group(4)}): kacct does not predict CPU-clock sleeps')


def main():
    global NR
    args = sys.argv[1:]
    if args[:1] == ['--arch']:
        if len(args) < 2 or args[1] not in NRS:
            sys.exit('decode.py: --arch is one of ' + ', '.join(NRS))
        NR, args = NRS[args[1]], args[2:]
    if not args or not args[0].isdigit():
        sys.exit(__doc__)
    root = int(args[0])
    files = sorted(args[1:], key=lambda f: int(f.rsplit('.', 1)[1]))
    tids = [int(f.rsplit('.', 1)[1]) for f in files]
    # A thread's process: the thread group whose file names it first is unknown to strace;
    # /proc/PID paths and clock ids name it. Without one, the tid is taken (exact for
    # single-threaded processes; threads read their group through the same prev_cputime).
    reads = []
    for f, tid in zip(files, tids):
        seq = {}
        for line in open(f, errors='replace'):
            m = call_re.match(line.rstrip('\n'))
            if m and m.group(1) == 'clock_nanosleep':
                cpu_nanosleep(tid, m, f)
            if not m or m.group(1) not in NR:
                continue
            name, args, ret = m.group(1), m.group(2), m.group(3)
            seq[name] = seq.get(name, 0) + 1
            r = {'tid': tid, 'nr': NR[name], 'seq': seq[name]}
            failed = ret == '?' or ret.startswith('-')
            if name == 'getrusage':
                who = args.split(',', 1)[0]
                if who not in WHO:
                    r.update(read='failed', call=f'getrusage({who})')
                else:
                    r.update(arg0=WHO[who][0], read=WHO[who][1], call=f'getrusage({who})')
                    u, s = tv(args, 'ru_utime'), tv(args, 'ru_stime')
                    if failed or not u or not s:
                        r['read'] = 'failed'
                    else:
                        r['utime'] = int(u.group(1)) * 1000000 + int(u.group(2))
                        r['stime'] = int(s.group(1)) * 1000000 + int(s.group(2))
            elif name == 'wait4':
                u, s_ = tv(args, 'ru_utime'), tv(args, 'ru_stime')
                if failed or not u or not s_ or int(ret) <= 0:
                    continue  # no rusage asked for, or nothing reaped: not a read (counted in seq)
                r.update(read='wait4_rusage', target=int(ret), call='wait4()')
                r['utime'] = int(u.group(1)) * 1000000 + int(u.group(2))
                r['stime'] = int(s_.group(1)) * 1000000 + int(s_.group(2))
            elif name == 'times':
                r.update(arg0=None, read='times', call='times()')
                u, s = re.search(r'tms_utime=(\d+)', args), re.search(r'tms_stime=(\d+)', args)
                if not u or not s:
                    r['read'] = 'failed'
                else:
                    r['utime'], r['stime'] = int(u.group(1)), int(s.group(1))
                    r['cutime'] = int(re.search(r'tms_cutime=(\d+)', args).group(1))
                    r['cstime'] = int(re.search(r'tms_cstime=(\d+)', args).group(1))
            elif name == 'clock_gettime':
                c = clock(tid, tid, args)
                if c is None:
                    continue  # not CPU time: counted in seq only
                r.update(arg0=c[0], read=c[1], target=c[2], call=f'clock_gettime({args.split(",", 1)[0].split(" ", 1)[0]})')
                t = re.search(r'\{tv_sec=(\d+), tv_nsec=(\d+)\}', args)
                if failed or not t:
                    r['read'] = 'failed'
                else:
                    r['value'] = int(t.group(1)) * 1000000000 + int(t.group(2))
            else:  # read(FD</path>, "data"..., N)
                m2 = re.match(r'\d+<([^>]*)>, "((?:[^"\\]|\\.)*)"', args)
                if not m2 or failed or int(ret) <= 0:
                    continue
                p = proc_file(m2.group(1))
                if p is None:
                    continue
                data = unescape(m2.group(2))
                r.update(read=p[0], target=p[1], call=f'read({m2.group(1)})')
                if p[0] in ('proc_stat', 'task_stat'):
                    f2 = data[data.rfind(')') + 2:].split(' ') if ')' in data else []
                    if len(f2) < 13 or not data[:1].isdigit():
                        continue  # a later chunk of the file, not its start
                    r['utime'], r['stime'] = int(f2[11]), int(f2[12])
                elif p[0] == 'schedstat':
                    if not data[:1].isdigit():
                        continue
                    r['value'] = int(data.split()[0])
            if r.get('arg0', 0) is None:
                del r['arg0']
            e = re.match(r'\s*(E[A-Z0-9]+)', m.group(4))
            if r['read'] == 'failed' and failed and e:
                r['errno'] = e.group(1)  # EFAULT: the kernel computed the times (kacct places the read)
            reads.append(r)
    print(json.dumps({'recorder': 'strace', 'root': root, 'tids': tids}))
    for r in reads:
        print(json.dumps(r))


main()

#!/usr/bin/env python3
"""tools/record-reads/decode.py on made-up strace files: clock_nanosleep() on a CPU clock that
the kernel refused before sampling (a thread clock: EOPNOTSUPP, EINVAL; LTP clock_nanosleep01's
case) is not a read and leaves the reads file as it was; one the kernel ran (a process CPU clock
that slept, or was interrupted) is refused with a message, never dropped; sleeps on other clocks
are not reads.
  decode_test.py TOOLS_RECORD_READS_DIR"""
import json
import os
import subprocess
import sys
import tempfile

decode = os.path.join(sys.argv[1], 'decode.py')
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checks import check, finish  # noqa: E402  (test/checks.py)


def run(lines):
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, 'st.100')
        with open(f, 'w') as o:
            o.write(''.join(l + '\n' for l in lines))
        return subprocess.run([sys.executable, decode, '100', f], capture_output=True, text=True)


times = 'times({tms_utime=3, tms_stime=1, tms_cutime=0, tms_cstime=0}) = 4295'
refused = [
    'clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, {tv_sec=0, tv_nsec=500000000}, 0x7f0) = -1 EOPNOTSUPP (Operation not supported)',
    'clock_nanosleep(0xfffffffe /* CPUCLOCK_THREAD_SELF */, 0, {tv_sec=1, tv_nsec=0}, NULL) = -1 EINVAL (Invalid argument)',
    'clock_nanosleep(CLOCK_REALTIME, 0, {tv_sec=0, tv_nsec=500000000}, NULL) = 0',
    'clock_nanosleep(CLOCK_MONOTONIC, 0, {tv_sec=10, tv_nsec=0}, {tv_sec=9, tv_nsec=1}) = ? ERESTART_RESTARTBLOCK (Interrupted by signal)',
    times,
]
r = run(refused)
check(r.returncode == 0, f'refused CPU-clock sleeps and other clocks: exit 0 ({r.returncode}: {r.stderr.strip()})')
out = [json.loads(l) for l in r.stdout.splitlines()]
check(len(out) == 2 and out[1]['read'] == 'times' and out[1]['seq'] == 1,
      'only the times() read is in the reads file')
for line, what in [
        ('clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, 0, {tv_sec=0, tv_nsec=10000000}, 0x7f0) = 0', 'a process clock sleep'),
        ('clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, 0, {tv_sec=1, tv_nsec=0}, {tv_sec=0, tv_nsec=5}) = ? '
         'ERESTART_RESTARTBLOCK (Interrupted by signal)', 'an interrupted one (remaining time written)'),
        ('clock_nanosleep(0xfffff9ba /* CPUCLOCK_SCHED of pid 200 */, 1, {tv_sec=2, tv_nsec=0}, NULL) = 0',
         "another process's clock")]:
    r = run([times, line])
    check(r.returncode != 0 and 'does not predict CPU-clock sleeps' in r.stderr and not r.stdout,
          f'{what}: refused, nothing written ({r.returncode}: {r.stderr.strip()})')
finish()

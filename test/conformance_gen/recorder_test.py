#!/usr/bin/env python3
"""The QEMU recorder as a careful tool, without QEMU: record.sh refuses an output directory it
did not create (and changes nothing in it); reduce.py names each fixture after its run, never
overwrites one, writes no host path into meta.json and counts perf's lost events.
  recorder_test.py TOOLS_RECORD_QEMU_DIR"""
import json
import lzma
import os
import subprocess
import sys
import tempfile

here = sys.argv[1]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checks import check, finish  # noqa: E402  (test/checks.py)


with tempfile.TemporaryDirectory() as tmp:
    # record.sh: a non-empty OUTDIR is refused before anything else, and left as it was.
    keep = os.path.join(tmp, 'mine')
    os.makedirs(keep)
    open(os.path.join(keep, 'precious'), 'w').write('x')
    r = subprocess.run(['bash', os.path.join(here, 'record.sh'), 'amd64', keep, 'spin'], capture_output=True,
                       text=True, env=dict(os.environ, WORK=os.path.join(tmp, 'nowork')))
    check(r.returncode == 2 and 'not an empty directory' in r.stderr, f'record.sh refuses a non-empty OUTDIR: {r.stderr.strip()}')
    check(os.listdir(keep) == ['precious'], 'record.sh left the non-empty OUTDIR alone')
    fresh = os.path.join(tmp, 'fresh')
    r = subprocess.run(['bash', os.path.join(here, 'record.sh'), 'amd64', fresh, 'spin'], capture_output=True,
                       text=True, env=dict(os.environ, WORK=os.path.join(tmp, 'nowork')))
    check(r.returncode == 1 and 'setup.sh first' in r.stderr and not os.path.exists(fresh),
          'record.sh without setup creates nothing')

    # A fake record.sh run: two modes, one with a perf loss.
    work = os.path.join(tmp, 'work')
    run = os.path.join(tmp, 'run1')
    os.makedirs(os.path.join(run, 'out'))
    open(os.path.join(run, 'params'), 'w').write(
        f'RUN_ID=20261202T110000Z\nARCH=amd64\nWORK={work}\nMODES="spin threads"\nSECONDS_PER_RUN=1\nREADS=1\n'
        'KINDS=proc_stat\nCPU=1\nCPUS=\nTIMER_EVENTS="irq_vectors:local_timer_entry"\n')
    open(os.path.join(run, 'versions.txt'), 'w').write('kernel=Package: k Version: 1\nqemu=7.2\n')
    open(os.path.join(run, 'out', 'guest-info.txt'), 'w').write('clocksource=tsc\n')
    open(os.path.join(run, 'qemu-cmd.txt'), 'w').write(
        f'qemu-system-x86_64 -kernel {work}/amd64/kernel -virtfs local,path={run},mount_tag=share\n')
    for mode, lost in (('spin', False), ('threads', True)):
        lines = ['w 7/7 [001] 1.000000100: raw_syscalls:sys_enter: NR 100001 (0, 0)\n',
                 'w 7/7 [001] 1.000000200: raw_syscalls:sys_exit: NR 100001 = -38\n',
                 'w 7/7 [001] 1.000000300: irq_vectors:local_timer_entry: vector=236\n']
        if lost:
            lines.insert(1, 'perf 9/9 [001] 1.000000150: PERF_RECORD_LOST lost 17\n')
        with lzma.open(os.path.join(run, 'out', mode + '.perf.script.xz'), 'wt') as f:
            f.writelines(lines)
        open(os.path.join(run, 'out', mode + '.workload.jsonl'), 'w').write(
            '{"pid": 7, "mode": "%s"}\n{"marker": 1, "kind": "proc_stat", "utime": 0, "stime": 0}\n' % mode)
    fx = os.path.join(tmp, 'fixtures')
    red = [sys.executable, os.path.join(here, 'reduce.py'), run, 'amd64', fx]
    r = subprocess.run(red, capture_output=True, text=True)
    check(r.returncode == 0, f'reduce.py runs: {r.stderr.strip()}')
    names = sorted(os.listdir(fx)) if os.path.isdir(fx) else []
    check(names == ['amd64-spin-20261202T110000Z', 'amd64-threads-20261202T110000Z'], f'fixtures named by run: {names}')
    if len(names) == 2:
        spin = json.load(open(os.path.join(fx, names[0], 'meta.json')))
        thr = json.load(open(os.path.join(fx, names[1], 'meta.json')))
        text = json.dumps(spin) + json.dumps(thr)
        check(tmp not in text, 'meta.json names no host path')
        check('WORK/amd64/kernel' in spin['qemu_cmd'] and 'path=RUNDIR,' in spin['qemu_cmd'],
              f"qemu_cmd relative: {spin['qemu_cmd']}")
        check(spin['lost_events'] == 0 and thr['lost_events'] == 17 and thr['lost_records'] == 1,
              'lost events counted')
        check('lost 17' in r.stderr, 'reduce.py warns about the loss')
        kept = lzma.open(os.path.join(fx, names[1], 'trace.perf.xz'), 'rt').read()
        check('PERF_RECORD_LOST lost 17' in kept, 'the loss stays in the reduced trace')
        before = open(os.path.join(fx, names[0], 'meta.json')).read()
        r = subprocess.run(red, capture_output=True, text=True)
        check(r.returncode != 0 and 'exists' in r.stderr, 'a second reduce of the same run is refused')
        check(open(os.path.join(fx, names[0], 'meta.json')).read() == before, 'and overwrites nothing')
        r = subprocess.run(red + ['again'], capture_output=True, text=True)
        check(r.returncode == 0 and os.path.isdir(os.path.join(fx, 'amd64-spin-again')), 'another NAME is kept beside it')

finish()

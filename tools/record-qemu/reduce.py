#!/usr/bin/env python3
"""Turn one record.sh run into conformance fixtures: per mode, a reduced perf script text
(every line kacct's gen vtime replay uses; the system calls only where they mark a read or are
the read), the kernel's answers and a meta.json.
  reduce.py RUNDIR ARCH FIXTURES_DIR [NAME]   (RUNDIR = record.sh's OUTDIR)
Each mode becomes FIXTURES_DIR/ARCH-MODE-NAME (NAME default: the run's RUN_ID, a UTC time); an
existing fixture is never overwritten (exit 1). meta.json holds no host path: the QEMU command
line names WORK/... and RUNDIR/... relative to setup.sh's and record.sh's directories.
perf's PERF_RECORD_LOST lines are kept and counted (meta lost_events, lost_records): the
conformance test fails a fixture with losses unless its meta.json has a "lost_allowance" saying
why they do not matter.
Drops, on the CPUs with vtime probes only: raw_syscalls lines other than the marker syscalls
(NR >= 100000) and the syscall right after each marker in the same thread; timer interrupt and
tick_stop lines (the model does not use them on a nohz_full CPU). A tick-accounting CPU keeps
every line (its ticks and the mode each one charges). Keeps everything else (kprobes, sched_*), so the reduced trace
replays to the same predictions (checked by record.sh's caller, docs/conformance.md)."""
import datetime
import json
import lzma
import os
import re
import sys

if len(sys.argv) not in (4, 5):
    sys.exit(__doc__)
run, arch, dest = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
out = os.path.join(run, 'out')
head = re.compile(r'^\s*.+?\s+(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+[\d.]+:\s+(\S+?):?\s')
drop = ('powerpc:timer_interrupt_entry', 'powerpc:timer_interrupt_exit', 'irq_vectors:local_timer_entry',
        'timer:tick_stop')
params = dict(re.findall(r'^(\w+)="?([^"\n]*)"?$', open(os.path.join(run, 'params')).read(), re.M))
versions = dict(l.strip().split('=', 1) for l in open(os.path.join(run, 'versions.txt')) if '=' in l)
info = open(os.path.join(out, 'guest-info.txt')).read()
qemu = open(os.path.join(run, 'qemu-cmd.txt')).read().strip()
name = sys.argv[4] if len(sys.argv) == 5 else params.get('RUN_ID') or os.path.basename(run)
if not re.fullmatch(r'[\w.-]+', name):
    sys.exit(f'reduce.py: bad fixture name {name!r}')


def relative(cmd):
    """The QEMU command with setup.sh's and record.sh's directories as WORK/ and RUNDIR/."""
    roots = [(run, 'RUNDIR')]
    if params.get('WORK'):
        roots.append((os.path.abspath(params['WORK']), 'WORK'))
    for root, label in roots:
        cmd = re.sub(re.escape(root) + r'(?=[/,\s]|$)', label, cmd)
    return cmd


rid = re.fullmatch(r'(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z', params.get('RUN_ID', ''))
recorded = '{}-{}-{}T{}:{}:{}Z'.format(*rid.groups()) if rid else ''
lost_line = re.compile(r'PERF_RECORD_LOST(?:_SAMPLES)?\s+lost\s+(\d+)')
todo = []
for mode in params['MODES'].split():
    d = os.path.join(dest, f'{arch}-{mode}-{name}')
    if os.path.exists(d):
        sys.exit(f'reduce.py: {d} exists; nothing written (give another NAME)')
    todo.append((mode, d))
for mode, d in todo:
    script = os.path.join(out, mode + '.perf.script.xz')
    values = os.path.join(out, mode + '.workload.jsonl')
    if not os.path.exists(script) or not os.path.exists(values):
        print(f'{mode}: missing output, skipped', file=sys.stderr)
        continue
    lines = open(values).read().splitlines()
    first = json.loads(lines[0])
    reads = [json.loads(l) for l in lines[1:]]
    spec = ' '.join(f"{r['kind']}:{r['tid']}@{r['marker']}" if r['kind'] in ('task_stat', 'taskstats')
                    else f"{r['kind']}@{r['marker']}" for r in reads)
    after_marker = set()  # tids whose next syscall is a read
    kept, total, lost, lost_records = [], 0, 0, 0
    # Only CPUs with vtime probes (nohz_full) are reduced: a tick-accounting CPU (CPU 0 in the
    # migrate mode) needs its ticks and the system calls that set the mode they charge.
    vcpus = set()
    for line in lzma.open(script, 'rt'):
        m = head.match(line)
        if m and m.group(4).startswith('kprobes:vtime_'):
            vcpus.add(m.group(3))
    for line in lzma.open(script, 'rt'):
        total += 1
        lm = lost_line.search(line)
        if lm:
            lost += int(lm.group(1))
            lost_records += 1
        m = head.match(line)
        if m and m.group(3) not in vcpus:
            kept.append(line)
            continue
        if m and m.group(4) in drop:
            continue
        if m and m.group(4).startswith('raw_syscalls:'):
            tid = m.group(2)
            if m.group(4) == 'raw_syscalls:sys_enter':
                nr = re.search(r'NR (\d+)', line)
                nr = int(nr.group(1)) if nr else -1
                if nr >= 100000:
                    after_marker.add(tid)
                elif tid in after_marker:
                    after_marker.discard(tid)
                    after_marker.add(tid + '/read')
                else:
                    continue
            else:  # sys_exit: keep the marker's and the read's
                nr = re.search(r'NR (\d+)', line)
                if nr and int(nr.group(1)) >= 100000:  # powerpc traces no sys_enter for it
                    after_marker.add(tid)
                elif tid + '/read' in after_marker:
                    after_marker.discard(tid + '/read')
                elif tid not in after_marker:
                    continue
        kept.append(line)
    os.makedirs(d)
    with lzma.open(os.path.join(d, 'trace.perf.xz'), 'wt', preset=9) as f:
        f.writelines(kept)
    with open(os.path.join(d, 'values.jsonl'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    meta = {
        'pid': first['pid'], 'mode': mode, 'arch': arch,
        'args': f"{mode} -t {params['SECONDS_PER_RUN']} -n {params['READS']} -k {params['KINDS']} -c {params['CPU']}",
        'kernel': versions.get('kernel', ''), 'qemu': versions.get('qemu', ''), 'qemu_cmd': relative(qemu),
        'run': os.path.basename(run),
        'cpu': 'POWER9' if arch == 'ppc64el' else 'x86-64', 'config': '6.1-gen-hz250', 'nohz_full': params['CPU'],
        'clocksource': re.search(r'clocksource=(\S+)', info).group(1), 'reads': spec,
        'recorded': recorded,
        'reduced': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'),
        'full_lines': total, 'kept_lines': len(kept), 'lost_events': lost, 'lost_records': lost_records,
    }
    if lost:
        print(f'{arch}-{mode}: perf lost {lost} events in {lost_records} records: the conformance test fails '
              'this fixture unless meta.json gets a "lost_allowance" saying why', file=sys.stderr)
    with open(os.path.join(d, 'meta.json'), 'w') as f:
        json.dump(meta, f, indent=1)
        f.write('\n')
    print(f'{os.path.basename(d)}: {len(kept)} of {total} lines kept, {os.path.getsize(os.path.join(d, "trace.perf.xz"))} bytes')

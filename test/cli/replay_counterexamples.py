#!/usr/bin/env python3
"""Runs `kacct validate --save-counterexamples` on patches with violated claims, then every
saved command, and checks that each reports exactly what its verdict says (the invariant, the
exit status). Fails if no command ran, or if a kind of counterexample expected is missing.

usage: replay_counterexamples.py KACCT DIR KINDS PATCH...   (KINDS: comma list of trace,psi,lts)
The validate JSON is kept as DIR/validate.json.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

kacct, out_dir, kinds, patches = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4:]
shutil.rmtree(out_dir, ignore_errors=True)
v = subprocess.run([kacct, "validate", "-j", "2", "--json", "--save-counterexamples", out_dir] + patches,
                   capture_output=True, text=True)
if v.returncode not in (0, 1):
    sys.exit(f"validate exited {v.returncode}:\n{v.stderr}")
# The verdicts as judged, for .ci/run's smoke checks and HTML report (no second validate run).
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "validate.json"), "w") as f:
    f.write(v.stdout)
ran, seen, failures = 0, set(), []
for rep in json.loads(v.stdout):
    for c in rep["claims"]:
        if c["verdict"] != "violated" or "command" not in c:
            continue
        cmd = c["command"]
        f = c.get("counterexample_file")
        if not f or not os.path.exists(f) or f not in cmd["line"]:
            failures.append(f"{rep['patch']} {c['name']}: command {cmd['line']!r} does not name a saved file")
            continue
        argv = shlex.split(cmd["line"])
        if argv[0] != "kacct":
            failures.append(f"{rep['patch']} {c['name']}: not a kacct command: {cmd['line']}")
            continue
        r = subprocess.run([kacct] + argv[1:], capture_output=True, text=True)
        ran += 1
        seen.add(cmd["ext"])
        text = r.stdout + r.stderr
        where = f"{rep['patch']} {c['name']}: `{cmd['line']}`"
        if r.returncode != cmd["exit"]:
            failures.append(f"{where} exited {r.returncode}, the verdict says {cmd['exit']}\n{text}")
        inv = cmd["invariant"]
        if inv:
            # check: "invariant X violated"; psi-irq run: "VIOLATED X"; lazy-tlb run: "line N: X:"
            found = re.findall(r"invariant (\S+) violated|VIOLATED (\S+)|line \d+: ([\w.]+):", text)
            names = {n for g in found for n in g if n}
            if inv not in names:
                failures.append(f"{where} reports {sorted(names)}, the verdict names {inv}\n{text}")
            # a cputime_adjust trace trips exactly the claimed invariant
            if c["name"].startswith("cputime_adjust.") and inv != c["name"]:
                failures.append(f"{where}: invariant {inv} is not the claim {c['name']}")
        elif re.search(r"violated|VIOLATED", text):
            failures.append(f"{where} reports a violation, the verdict names none\n{text}")
        # a kernel finding (the kernel's own behaviour, e.g. native vtime's split) is printed
        m = re.search(r"prints `kernel finding (\S+)`", cmd.get("note", ""))
        if m and f"kernel finding {m.group(1)}" not in text:
            failures.append(f"{where} does not print kernel finding {m.group(1)}\n{text}")
        print(f"ok {where} -> exit {r.returncode}{', ' + inv if inv else ''}")
for k in kinds:
    if k not in seen:
        failures.append(f"no command replayed a counterexample of kind {k}")
if ran == 0:
    failures.append("no command was run")
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)

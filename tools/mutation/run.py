#!/usr/bin/env python3
"""Mutation testing of the model (docs/testing.md).

Builds the mutation build once (CMake preset `mutation`, build-mutation/: every mutant of
model/mutation.hpp compiled in), runs the chosen test steps once without a mutant (all must
pass; their times set the time limits), then for each mutant of tools/mutation/catalogue.tsv
runs the steps that execute its source area with KACCT_MUTANT=<id>, in STEPS order, and stops
at the first failing test: the mutant is killed (by that test), or it survives every step. A
step that exceeds its time limit (3x its baseline + 20 s) or crashes kills the mutant too
(the mutant made the model loop or abort). Writes <out>.json and <out>.md.

  tools/mutation/run.py                      # build, then the whole catalogue
  tools/mutation/run.py --ids 101,702        # some mutants
  tools/mutation/run.py --no-build -j2 --survivors-of R.json --steps mutation_kill,psi_proofs
  tools/mutation/run.py --sample --no-build --build-dir build-asan   # the CI sample (SAMPLE)
  tools/mutation/run.py --list               # the catalogue with file:line, no run
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "tools/mutation/catalogue.tsv"

# Source areas (model/<area>/) whose code a step executes. A mutant runs only the steps that
# execute its area: a test that never runs the mutated code cannot kill it.
ALL = {"tick", "cputime", "gen", "native", "lazytlb", "psi", "sim"}
MACHINE = {"tick", "cputime", "gen", "native", "sim"}  # everything the trace simulator runs
# A step: (name, program relative to the build dir, gtest filter or None, areas). Program
# "ctest:<regex>" runs ctest entries (the CLI tests). Cheapest first within an area.
STEPS = [
    # existing unit and property tests, cheapest first (seconds on the 2-core box, unloaded)
    ("native", "test/native/kacct_native_test", None, MACHINE),  # 0.1
    ("psi", "test/psi/kacct_psi_test", None, {"psi", "tick"}),  # 0.3
    ("prop_psi", "props/prop_psi", None, {"psi", "tick"}),  # 0.1
    ("prop_lazytlb", "props/prop_lazytlb", None, {"lazytlb"}),  # 0.2
    ("arch", "test/arch/kacct_arch_test", None, MACHINE),  # 0.9
    ("sim", "test/sim/kacct_sim_test", None, MACHINE),  # 1.8
    # the tests written for the survivors (test/mutation/), < 1 s
    ("mutation_kill", "test/mutation/kacct_mutation_kill_test", None, ALL),
    ("replay", "test/proofs_replay_test", None, {"cputime"}),
    ("prop_gen", "props/prop_gen", None, MACHINE),  # 0.7
    ("prop_machine_outcome", "props/prop_machine_outcome", None, MACHINE),  # 3.3
    ("prop_hotplug", "props/prop_hotplug", None, MACHINE),  # 4.1
    ("prop_native", "props/prop_native", None, MACHINE),  # 6.4
    ("gen", "test/gen/kacct_gen_test", None, MACHINE),  # 7.4
    # the expensive ones, for what is left
    ("lazytlb", "test/lazytlb/kacct_lazytlb_test", None, {"lazytlb"}),  # 16-59
    ("conformance_gen", "test/conformance_gen/conformance_gen_test", None, MACHINE),  # 26
    ("conformance", "test/conformance/conformance_perf_test", None, MACHINE),  # 45
    ("prop_machine_check", "props/prop_machine_check", None, MACHINE),  # 83
    ("native_proofs", "test/native/kacct_native_proofs_test", None, {"native", "tick", "cputime"}),
    ("psi_proofs", "test/psi/kacct_psi_proof_test", None, {"psi", "tick"}),
    ("lazytlb_proofs", "test/lazytlb/kacct_lazytlb_proof_test", None, {"lazytlb"}),
    # the CLI tests (~3 min, mostly `kacct validate`)
    ("cli", "ctest:^cli\\.", None, ALL),
]
# Off unless named with --steps (the second pass, --survivors-of): the CLI tests and, under
# load, the minutes-long ones: a survivor of the rest would spend ~6 min in them.
DEFAULT_OFF = {"cli", "prop_machine_check", "native_proofs", "psi_proofs", "lazytlb_proofs"}
# The CI sample (ctest mutation.sample in the build with KACCT_MUTATION on, the asan preset):
# one mutant per mechanism family, each with the step and test that must kill it. No
# baseline run: those programs run unmutated as their own ctest entries.
SAMPLE = {
    110: ("mutation_kill", "TickFixture.SystemTimeByContext"),
    127: ("mutation_kill", "TickFixture.IrqBoundaryPerCategory"),
    136: ("mutation_kill", "TickFixture.RqClockSplit"),
    409: ("mutation_kill", "GenKill.ResiduesPerCategory"),
    602: ("mutation_kill", "PsiKill.ChargesInRqClock"),
    716: ("mutation_kill", "AdjustKill.Loop32MatchesReference"),
    801: ("mutation_kill", "AdjustKill.EraAndDivisionPerRelease"),
    530: ("mutation_kill", "GatesKill.LazyTlbSettings"),
}


def catalogue():
    rows = {}
    for line in CATALOGUE.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        i, mech, desc = line.split("\t")
        rows[int(i)] = {"id": int(i), "mechanism": mech, "description": desc, "where": []}
    # (clang-format may break the line right after the parenthesis: the id's line counts)
    pat = re.compile(r"KACCT_MUTANT(?:_DROP)?\(\s*(\d+),")
    for base in ("model", "arch"):
        for p in sorted((ROOT / base).rglob("*")):
            if p.suffix not in (".hpp", ".cpp") or p.name == "mutation.hpp":
                continue
            text = p.read_text()
            for m in pat.finditer(text):
                n = text.count("\n", 0, m.start(1)) + 1
                i = int(m.group(1))
                if i not in rows:
                    sys.exit(f"{p.relative_to(ROOT)}:{n}: mutant {i} is not in {CATALOGUE.name}")
                rows[i]["where"].append(f"{p.relative_to(ROOT)}:{n}")
    missing = [i for i, r in rows.items() if not r["where"]]
    if missing:
        sys.exit(f"catalogue ids not in the source: {missing}")
    return rows


def run_step(build, step, mutant, limit):
    name, prog, flt, _ = step
    env = dict(os.environ)
    env.pop("KACCT_MUTANT", None)
    if mutant:
        env["KACCT_MUTANT"] = str(mutant)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    if prog.startswith("ctest:"):
        cmd = ["ctest", "--test-dir", str(build), "-R", prog[6:], "--stop-on-failure", "-j1", "--output-on-failure"]
    else:
        cmd = [str(build / prog), "--gtest_fail_fast", "--gtest_brief=1"]
        if flt:
            cmd.append(f"--gtest_filter={flt}")
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return {"ok": False, "why": f"timeout after {limit:.0f} s", "test": name, "seconds": time.monotonic() - t0}
    dt = time.monotonic() - t0
    if p.returncode == 0:
        return {"ok": True, "seconds": dt}
    out = p.stdout + p.stderr
    failed = re.findall(r"\[  FAILED  \] ([\w/.<>:-]+)", out)
    if prog.startswith("ctest:"):
        failed = re.findall(r"\d+/\d+ Test +#\d+: (\S+) \.+\**(?:Failed|Exception|Timeout)", out) or failed
    test = f"{name}: {failed[0]}" if failed else name
    why = "failed" if failed else f"exit {p.returncode}"
    if p.returncode < 0 or "Assertion" in out or "runtime error" in out:
        why = "crashed" if not failed else why
    return {"ok": False, "why": why, "test": test, "seconds": dt}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=str(ROOT / "build-mutation"))
    ap.add_argument("--no-build", action="store_true", help="use the build dir as it is")
    ap.add_argument("--ids", help="comma-separated mutant ids (default: all)")
    ap.add_argument("--sample", action="store_true", help="the CI sample on the steps of the asan build")
    ap.add_argument("--steps", help="comma-separated step names (default: all that are built)")
    ap.add_argument("--survivors-of", metavar="REPORT.json",
                    help="run only the survivors of an earlier report, merging the results into it")
    ap.add_argument("--baseline-from", metavar="REPORT.json",
                    help="take the unmutated step times from an earlier report instead of a baseline run")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="mutants run in parallel")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--out", default=None, help="report path without extension (default: <build>/mutation-report)")
    a = ap.parse_args()
    rows = catalogue()
    if a.list:
        for r in rows.values():
            print(f"{r['id']}\t{r['mechanism']}\t{' '.join(r['where'])}\t{r['description']}")
        return 0
    build = Path(a.build_dir)
    if not a.no_build:
        subprocess.run(["cmake", "--preset", "mutation"], cwd=ROOT, check=True)
        subprocess.run(["cmake", "--build", "--preset", "mutation"], cwd=ROOT, check=True)
    steps = [s for s in STEPS if s[1].startswith("ctest:") or (build / s[1]).exists()]
    if a.sample:
        return run_sample(build, rows)
    if a.steps:
        want = set(a.steps.split(","))
        steps = [s for s in steps if s[0] in want]
    else:
        steps = [s for s in steps if s[0] not in DEFAULT_OFF]
    ids = [int(x) for x in a.ids.split(",")] if a.ids else sorted(rows)
    earlier = {}
    if a.survivors_of:
        prev = json.loads(Path(a.survivors_of).read_text())
        earlier = {r["id"]: r for r in prev["mutants"]}
        ids = [i for i, r in earlier.items() if r["status"] == "survived" and i in rows]
    out = Path(a.out) if a.out else build / ("mutation-sample" if a.sample else "mutation-report")

    # Baseline: no mutant; every step must pass.
    base = {}
    if a.baseline_from:
        base = json.loads(Path(a.baseline_from).read_text())["baseline_seconds"]
        steps = [s for s in steps if s[0] in base]
    for s in [s for s in steps if s[0] not in base]:
        r = run_step(build, s, 0, 1800)
        if not r["ok"]:
            print(f"baseline step {s[0]} fails without a mutant: {r}", file=sys.stderr)
            return 2
        base[s[0]] = r["seconds"]
        print(f"baseline {s[0]}: {r['seconds']:.1f} s", flush=True)

    results = []
    t_all = time.monotonic()
    done = set()
    lock = threading.Lock()

    def one(i):
        row = rows[i]
        areas = {w.split("/")[1] for w in row["where"]}
        order = [s for s in steps if areas & s[3]]
        t0 = time.monotonic()
        res = {"id": i, "mechanism": row["mechanism"], "where": row["where"], "description": row["description"],
               "status": "survived", "killed_by": None, "why": None}
        for s in order:
            r = run_step(build, s, i, 3 * base[s[0]] + 20)
            if not r["ok"]:
                res.update(status="killed", killed_by=r["test"], why=r["why"])
                break
        res["seconds"] = round(time.monotonic() - t0, 1)
        if i in earlier:
            res["seconds"] = round(res["seconds"] + earlier[i].get("seconds", 0), 1)
        with lock:
            results.append(res)
            done.add(i)
            print(f"{i} {res['status']:8} {res['seconds']:6.1f} s  {res['killed_by'] or ''}  [{row['description']}]",
                  flush=True)
            write_reports(out, sorted(results + [r for j, r in earlier.items() if j not in done], key=lambda r: r["id"]),
                          steps, base, time.monotonic() - t_all)

    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        list(ex.map(one, ids))
    results += [r for j, r in earlier.items() if j not in done]
    results.sort(key=lambda r: r["id"])
    write_reports(out, results, steps, base, time.monotonic() - t_all)
    killed = sum(r["status"] == "killed" for r in results)
    print(f"{killed}/{len(results)} killed in {time.monotonic() - t_all:.0f} s")
    if a.sample:
        return 0 if killed == len(results) else 1
    return 0


def run_sample(build, rows):
    byname = {s[0]: s for s in STEPS}
    bad = 0
    t_all = time.monotonic()
    for i, (step, flt) in SAMPLE.items():
        name, prog, _, areas = byname[step]
        if not (build / prog).exists():
            print(f"{i}: {prog} is not built", file=sys.stderr)
            return 2
        r = run_step(build, (name, prog, flt, areas), i, 300)
        status = "killed" if not r["ok"] else "SURVIVED"
        bad += r["ok"]
        print(f"{i} {status} by {flt} in {r['seconds']:.1f} s  [{rows[i]['description']}]", flush=True)
    print(f"{len(SAMPLE) - bad}/{len(SAMPLE)} sampled mutants killed in {time.monotonic() - t_all:.1f} s")
    return 1 if bad else 0


def write_reports(out, results, steps, base, seconds):
    killed = sum(r["status"] == "killed" for r in results)
    doc = {"steps": [s[0] for s in steps], "baseline_seconds": base, "mutants": results, "killed": killed,
           "total": len(results), "seconds": round(seconds)}
    Path(str(out) + ".json").write_text(json.dumps(doc, indent=1) + "\n")
    lines = [f"{killed}/{len(results)} killed in {seconds:.0f} s; steps: {', '.join(doc['steps'])}", "",
             "| id | mechanism | where | mutant | status | killed by | s |", "|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['id']} | {r['mechanism']} | {' '.join(r['where'])} | {r['description']} | {r['status']} | "
                     f"{(r['killed_by'] or '') + (' (' + r['why'] + ')' if r['why'] and r['why'] != 'failed' else '')} | {r['seconds']} |")
    Path(str(out) + ".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())

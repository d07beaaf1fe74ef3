#!/usr/bin/env python3
"""`kacct report` draws what `kacct run` computes: the sum of each config's charge bars per CPU
and bucket (the totals table's data-ns) equals `kacct run --json`'s cpustat_ns, the charge
groups of one config add up to its totals, and the page refers to nothing outside itself.

usage: totals_check.py KACCT TRACE OUT.html CONFIG...
"""
import json
import re
import subprocess
import sys


def main():
    kacct, trace, out, configs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    args = [kacct, "report", trace, "-o", out]
    for c in configs:
        args += ["--config", c]
    subprocess.run(args, check=True)
    html = open(out, encoding="utf-8").read()
    bad = []
    if re.search(r"https?://", html) or re.search(r'\bsrc\s*=', html):
        bad.append("the page refers to something outside itself")
    totals = {(int(k), int(c), b): int(v)
              for k, c, b, v in re.findall(r'id="total-(\d+)-cpu(\d+)-(\w+)" data-ns="(\d+)"', html)}
    bars = {}
    for k, c, v in re.findall(r'<g id="chg-(\d+)-cpu(\d+)-L\d+" class="chg b-\w+" data-ns="(\d+)"', html):
        bars[(int(k), int(c))] = bars.get((int(k), int(c)), 0) + int(v)
    compared = 0
    for k, cfg in enumerate(configs):
        run = json.loads(subprocess.run([kacct, "run", "--config", cfg, trace, "--json"], check=True,
                                        stdout=subprocess.PIPE).stdout)
        for cpu in run["cpus"]:
            c = cpu["cpu"]
            s = 0
            for b, v in cpu["cpustat_ns"].items():
                got = totals.get((k, c, b))
                if got != v:
                    bad.append(f"{cfg} cpu {c} {b}: report {got}, run {v}")
                compared += 1
                s += v
            if bars.get((k, c), 0) != s:
                bad.append(f"{cfg} cpu {c}: the bars add up to {bars.get((k, c), 0)} ns, run charged {s}")
    for b in bad:
        print("FAIL:", b)
    print(f"{compared} totals compared with kacct run over {len(configs)} configs; {len(bad)} differ")
    return 1 if bad or compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

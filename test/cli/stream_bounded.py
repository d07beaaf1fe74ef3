#!/usr/bin/env python3
"""Streams a generated input far larger than a memory limit through a kacct command and fails
unless the command's peak RSS stays below the limit and its output looks complete.

usage: stream_bounded.py LIMIT_MB MIN_INPUT_MB MATCH GENERATOR... -- COMMAND...
MATCH is a regular expression searched in the command's stdout and stderr together.
The generator's stdout goes, through this script (which counts the bytes), to the command's
stdin; the command's peak RSS is its own (os.wait4), not the generator's.
"""
import os
import re
import subprocess
import sys


def main():
    args = sys.argv[1:]
    limit_mb, min_input_mb, match = int(args[0]), int(args[1]), args[2]
    sep = args.index("--")
    gen, cmd = args[3:sep], args[sep + 1:]
    g = subprocess.Popen(gen, stdout=subprocess.PIPE)
    c = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    total = 0
    # Read the command's output concurrently would need threads; its output is small (a report),
    # and a pipe buffer holds it until the input ends, unless it is large: then it blocks and the
    # test times out rather than passing.
    while True:
        b = g.stdout.read(1 << 20)
        if not b:
            break
        total += len(b)
        try:
            c.stdin.write(b)
        except BrokenPipeError:
            break
    c.stdin.close()
    g.wait()
    out = c.stdout.read().decode(errors="replace")
    err = c.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(c.pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    peak_mb = ru.ru_maxrss / 1024.0  # kB on Linux
    print(f"input {total / 2**20:.1f} MB, peak RSS {peak_mb:.1f} MB (limit {limit_mb} MB), exit {rc}")
    ok = True
    if g.returncode != 0:
        print(f"FAIL: generator exited {g.returncode}")
        ok = False
    if total < min_input_mb * 2**20:
        print(f"FAIL: input {total} bytes, expected at least {min_input_mb} MB")
        ok = False
    if peak_mb >= limit_mb:
        print(f"FAIL: peak RSS {peak_mb:.1f} MB >= {limit_mb} MB")
        ok = False
    if not re.search(match, out + err):  # a report on stdout, or statistics on stderr
        print(f"FAIL: output does not match {match!r}:\n{out[:2000]}\n{err[:2000]}")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Progress goes to stderr only when stderr is a terminal (a pseudo-terminal here), never with
--quiet and never into stdout; a pipe gets nothing extra.
Usage: progress_tty.py KACCT EXPECTED_PROGRESS ARG..."""
import os
import pty
import re
import subprocess
import sys


def run(argv, tty):
    if not tty:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return p.returncode, p.stdout, p.stderr
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        err += chunk
    out = p.stdout.read()
    p.wait()
    os.close(master)
    return p.returncode, out, err


def main():
    kacct, expected, args = sys.argv[1], sys.argv[2].encode(), sys.argv[3:]
    rc_tty, out_tty, err_tty = run([kacct] + args, True)
    rc_pipe, out_pipe, err_pipe = run([kacct] + args, False)
    rc_quiet, out_quiet, err_quiet = run([kacct] + args + ["--quiet"], True)
    fails = []
    if expected not in err_tty:
        fails.append(f"no progress {expected!r} on a terminal's stderr: {err_tty[:300]!r}")
    if b"\r" in out_tty or expected in out_tty:
        fails.append("progress went to stdout")
    if expected in err_pipe or b"\r" in err_pipe:
        fails.append(f"progress on a piped stderr: {err_pipe[:300]!r}")
    if expected in err_quiet:
        fails.append("progress despite --quiet")
    if not (rc_tty == rc_pipe == rc_quiet):
        fails.append(f"exit codes differ: {rc_tty} {rc_pipe} {rc_quiet}")
    def shape(out):  # the table; timings (and a timed-out query's reason) differ from run to run
        return re.sub(rb"[0-9]+\.[0-9]+", b"N", out.split(b"\n\n")[0])
    if shape(out_tty) != shape(out_pipe):
        fails.append("stdout differs between a terminal and a pipe for stderr")
    for f in fails:
        print("not ok:", f)
    print("ok" if not fails else "FAILED")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

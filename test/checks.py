"""check() for the Python tests: one ok/FAIL line per check; finish() exits non-zero when one
failed, and also when none ran (a test that compares nothing must not pass).
A test imports it with its own directory's parent on sys.path (test/)."""
import sys

failures = []
ran = 0


def check(cond, what):
    global ran
    ran += 1
    print(('ok   ' if cond else 'FAIL ') + what)
    if not cond:
        failures.append(what)


def finish():
    if not ran:
        sys.exit('no check ran')
    if failures:
        sys.exit(f'{len(failures)} of {ran} checks failed')
    print(f'all {ran} checks passed')

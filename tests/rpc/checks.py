"""The tally both Python clients keep: each check printed, failures counted."""
import sys

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def finish():
    """Exit non-zero, naming the count, when any check failed."""
    if failures:
        print("%d failed" % len(failures))
        sys.exit(1)

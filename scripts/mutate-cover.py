#!/usr/bin/python3
# Which test programs cover which product file, measured: the tree built
# with gcov's counters (make BUILD=build/cover SAN=--coverage), each test
# program of make test run alone, and a file counted for a test when a
# line of it ran in any process of that test (metalcapd, metalcapctl, the
# probe, the shim in a job, the simulators).  What mutate-sample.py's map
# (SOURCES) is checked against:
#
#   scripts/mutate-cover.py [BUILD [TEST ...]]
#
# (TESTs: only those programs, for a quick look) prints "FILE: TEST ..."
# for each product file, and then each file whose
# covering tests the map leaves out.  A process killed by SIGKILL writes
# no counts, so a file only such processes ran is under-counted.
import collections
import glob
import importlib.util
import json
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sampler():
    spec = importlib.util.spec_from_file_location(
        "mutate_sample", os.path.join(TOP, "scripts", "mutate-sample.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_programs():
    """make test's test programs, from the Makefile's TEST_BINS."""
    text = open(os.path.join(TOP, "Makefile")).read()
    block = re.search(r"^TEST_BINS\s*:=((?:.*\\\n)*.*)$", text, re.M)
    return re.findall(r"tests/(test_\w+)", block.group(1))


def executed(build):
    """The product files with a line run, from the counts gcov finds."""
    files = set()
    for gcda in glob.glob(os.path.join(build, "**", "*.gcda"),
                          recursive=True):
        out = subprocess.run(["gcov", "--json-format", "--stdout", gcda],
                             cwd=TOP, capture_output=True, text=True).stdout
        for chunk in out.splitlines():
            try:
                doc = json.loads(chunk)
            except ValueError:
                continue
            for f in doc.get("files", []):
                rel = os.path.relpath(os.path.join(TOP, f["file"]), TOP)
                if any(line["count"] > 0 for line in f["lines"]):
                    files.add(rel)
    return files


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build/cover"
    tests = sys.argv[2:] or test_programs()
    subprocess.run(["make", "-s", "-j2", "BUILD=" + build, "OPT=-O0 -g",
                    "SAN=--coverage", "all"] +
                   [build + "/tests/" + t for t in tests], cwd=TOP,
                   check=True)
    cover = collections.defaultdict(set)
    for t in tests:
        for gcda in glob.glob(os.path.join(TOP, build, "**", "*.gcda"),
                              recursive=True):
            os.unlink(gcda)
        rc = subprocess.run([os.path.join(build, "tests", t)], cwd=TOP,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL).returncode
        if rc != 0:
            print("mutate-cover: %s failed (%d): its cover is partial" %
                  (t, rc), file=sys.stderr)
        for rel in executed(os.path.join(TOP, build)):
            cover[rel].add(t)
    ms = sampler()
    ms.SRC = TOP
    missing = []
    for rel in ms.sources():
        print("%s: %s" % (rel, " ".join(sorted(cover[rel]))))
        left = cover[rel] - set(ms.tests_for(rel))
        if left:
            missing.append("%s: %s" % (rel, " ".join(sorted(left))))
    print("\nleft out of mutate-sample.py's map:" if missing else
          "\nmutate-sample.py's map has every covering test")
    for line in missing:
        print("  " + line)


if __name__ == "__main__":
    main()

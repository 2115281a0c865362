#!/usr/bin/python3
# Mutants nobody wrote: sites found in the product code with libclang
# (Debian's python3-clang, so they are syntax-aware), a random sample of
# them applied one at a time, each built and run against the tests that
# cover its file.  A mutant is killed when a test fails (or the test
# program dies or hangs), stillborn when it does not compile (not
# counted), and survives otherwise.  Equivalent mutants, judged by hand,
# are listed in tests/mutations/equivalent.txt and excluded.
#
#   scripts/mutate-sample.py [--jobs N] [--only ID,...] [--asan]
#       [--sample-commit REV] SEED COUNT [BUILD]
#
# Each worker mutates its own copy of the committed tree (BUILD/wN/tree,
# from git archive HEAD), so the tree you work in is never touched; N workers judge mutants side by side (the tests wait on
# processes far more than they compute).  A kill is confirmed by running
# the failing test a second time: a test that failed once under load and
# then passed is not taken as a kill.  --only re-judges the listed
# mutants of the same sample (after tests were added for survivors), and
# --sample-commit REV draws the sample from REV while judging on HEAD,
# each mutant on its own line found again by its text.  --asan builds and
# runs the tests as make check-asan does (part of the suite too), for
# mutants whose harm is a write past a buffer.
#
# Kinds: relational operators (< <= > >= == !=, each to its boundary and
# its negation), logical operators (&& ||), integer constants (n+1, n-1),
# negated conditions (if (c) -> if (!(c))), dropped negations (!c -> c),
# dropped calls whose result is checked (f(...) == -1 -> 0 == -1), and
# swapped arguments of calls with two arguments of one type.
import argparse
import hashlib
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

import clang.cindex as ci

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = TOP	# the committed tree the sites are found in (main sets it)

# Product code, and the tests that cover each folder or file (fast ones
# first; a mutant is killed by the first failure).  "Cover" is measured:
# the tests whose run executed a line of the file, by gcov with each test
# program run alone (scripts/mutate-cover.py prints it).  Every program
# of make test that runs metalcapd also runs the probe it starts, the
# shim its jobs load and metalcapctl: a test the map leaves out is a
# mutant counted a survivor that make test would kill.
E2E = ["test_daemon_e2e", "test_evidence_e2e", "test_edges",
       "test_removed_e2e", "test_invalid_e2e", "test_fleet_e2e", "test_hostile", "test_faults",
       "test_io_faults", "test_rpc_clients", "test_invariants_e2e",
       "test_abuse", "test_bench_e2e", "test_install_e2e", "test_probe",
       "test_measure_e2e", "test_allowlist_e2e"]
SOURCES = {
    "shim": ["test_shim_config", "test_shim_inject", "test_objc4_model",
             "test_lifecycle", "test_daemon"] + E2E,
    "probe": ["test_probe"] + [t for t in E2E if t != "test_probe"],
    "common/mc_inject.c": ["test_inject_judge", "test_inject_arch",
                           "test_daemon"] + E2E,
    "common/mc_macho.c": ["test_inject_judge", "test_inject_arch",
                          "test_daemon"] + E2E,
    "common/mc_sha256.c": ["test_bench", "test_bench_e2e"],
    "common/mc_bench.c": ["test_bench", "test_bench_e2e"],
    "common/mc_kld.c": ["test_bench", "test_bench_e2e"],
    "common": ["test_protocol", "test_mc_client", "test_files",
               "test_launchctl_sim", "test_bench", "test_daemon",
               "test_inject_judge", "test_shim_inject"] + E2E,
    "daemon": ["test_daemon", "test_files", "test_lifecycle",
               "test_protocol"] + E2E,
    # The policy both programs apply: every program that runs either.
    "policy": ["test_daemon", "test_files", "test_protocol",
               "test_mc_client", "test_inject_judge",
               "test_shim_inject"] + E2E,
    # exec, bench and verify's own tests first, then every command's.
    "client": ["test_inject_judge", "test_bench_e2e", "test_rpc_clients",
               "test_daemon", "test_shim_inject"] +
              [t for t in E2E if t not in ("test_bench_e2e",
                                           "test_rpc_clients")],
}
# make test's scripts that read these files' text (a path, run as it is):
# the protocol's man page against the method table, the codes and the
# fields.  Run first, being quick.
SCRIPTS = {
    "daemon/rpc.c": ["tests/rpc/check-protocol-doc.py"],
    "daemon/rpc_pack.c": ["tests/rpc/check-protocol-doc.py"],
    "common/mc_rpc.c": ["tests/rpc/check-protocol-doc.py"],
}
# Symmetric where the code uses them (== 0, != 0): a swap is equivalent.
SYMMETRIC = {"strcmp", "strncmp", "memcmp", "strcasecmp"}
# Not built or not run on Linux: the macOS backends.
SKIP = {"probe/probe_metal.c", "policy/platform_darwin.c"}
TEST_SECONDS = 600
# --asan: judged as make check-asan builds and runs the suite, so that a
# mutant whose only effect is a byte written past a buffer is seen.
ASAN = None
ASAN_MAKE = ["BUILD=build", "OPT=-O1 -g",
             "SAN=-fsanitize=address,undefined -fno-omit-frame-pointer "
             "-fno-sanitize-recover=all"]

RELATIONAL = {"<": ["<=", ">="], "<=": ["<", ">"], ">": [">=", "<="],
              ">=": [">", "<"], "==": ["!="], "!=": ["=="]}
LOGICAL = {"&&": ["||"], "||": ["&&"]}


def tests_for(path):
    for key in sorted(SOURCES, key=len, reverse=True):
        if path == key or path.startswith(key + "/"):
            return SCRIPTS.get(path, []) + SOURCES[key]
    return []


def test_command(t):
    """A test program of the build, or one of make test's scripts."""
    return [t] if "/" in t else ["build/tests/" + t]


def sources():
    out = []
    for key in SOURCES:
        full = os.path.join(SRC, key)
        if os.path.isfile(full):
            continue
        for name in sorted(os.listdir(full)):
            rel = key + "/" + name
            if name.endswith(".c") and rel not in SKIP:
                out.append(rel)
    return out


def cflags():
    pkg = subprocess.run(["pkg-config", "--cflags", "libuv", "msgpack",
                          "libplist-2.0", "jansson"], capture_output=True,
                         text=True).stdout.split()
    return ["-std=c11", "-D_GNU_SOURCE", "-DMC_VERSION=\"0\""] + \
        ["-I" + os.path.join(SRC, d) for d in
         ("common", "policy", "daemon", "client", "shim", "probe",
          "tests/sim")] + pkg


def token_after(tu_tokens, offset):
    """The first token starting at or after offset."""
    for t in tu_tokens:
        if t.extent.start.offset >= offset:
            return t
    return None


def sites(rel, index, flags):
    """Every mutation site of one file: (start, end, replacement, what)."""
    path = os.path.join(SRC, rel)
    tu = index.parse(path, args=flags)
    text = open(path, "rb").read()
    tokens = list(tu.cursor.get_tokens())
    found = []

    def here(c):
        return c.location.file is not None and \
            os.path.samefile(c.location.file.name, path)

    def add(start, end, new, what):
        line = text.count(b"\n", 0, start) + 1
        found.append((start, end, new, "%s:%d: %s" % (rel, line, what)))

    def walk(c):
        for k in c.get_children():
            if here(k):
                visit(k)
            walk(k)

    def visit(c):
        kind = c.kind
        kids = list(c.get_children())
        if kind == ci.CursorKind.BINARY_OPERATOR and len(kids) == 2:
            op = token_after(tokens, kids[0].extent.end.offset)
            if op is None:
                return
            s = op.spelling
            for new in RELATIONAL.get(s, []) + LOGICAL.get(s, []):
                add(op.extent.start.offset, op.extent.end.offset, new,
                    "%s -> %s" % (s, new))
            # A call whose result is compared: the call dropped.
            if s in ("==", "!=", "<", ">=") and \
                    kids[0].kind == ci.CursorKind.CALL_EXPR:
                add(kids[0].extent.start.offset, kids[0].extent.end.offset,
                    "0", "call %s dropped (its result 0)" %
                    kids[0].spelling)
        elif kind == ci.CursorKind.INTEGER_LITERAL:
            tok = list(c.get_tokens())
            if len(tok) == 1 and tok[0].spelling.isdigit():
                n = int(tok[0].spelling)
                for new in (n + 1, n - 1):
                    if new >= 0:
                        add(c.extent.start.offset, c.extent.end.offset,
                            str(new), "%d -> %d" % (n, new))
        elif kind == ci.CursorKind.IF_STMT and kids:
            cond = kids[0]
            add(cond.extent.start.offset, cond.extent.end.offset,
                "!(" + text[cond.extent.start.offset:
                            cond.extent.end.offset].decode() + ")",
                "if condition negated")
        elif kind == ci.CursorKind.UNARY_OPERATOR and kids:
            first = list(c.get_tokens())
            if first and first[0].spelling == "!":
                add(first[0].extent.start.offset,
                    first[0].extent.end.offset, "", "! dropped")
        elif kind == ci.CursorKind.CALL_EXPR:
            args = list(c.get_arguments())
            if len(args) == 2 and c.spelling not in SYMMETRIC and \
                    args[0].type.spelling == args[1].type.spelling:
                a = text[args[0].extent.start.offset:
                         args[0].extent.end.offset]
                b = text[args[1].extent.start.offset:
                         args[1].extent.end.offset]
                if a != b and args[0].extent.end.offset < \
                        args[1].extent.start.offset:
                    mid = text[args[0].extent.end.offset:
                               args[1].extent.start.offset]
                    add(args[0].extent.start.offset,
                        args[1].extent.end.offset,
                        (b + mid + a).decode(),
                        "arguments of %s swapped" % c.spelling)

    walk(tu.cursor)
    # Sites inside macros have extents that overlap: keep the first.
    return found


def apply(tree, rel, site):
    path = os.path.join(tree, rel)
    data = open(path, "rb").read()
    start, end, new, _ = site
    open(path, "wb").write(data[:start] + new.encode() + data[end:])
    return data


LAST_FAILED = threading.local()


def run(cmd, cwd, seconds, env=None):
    """
    cmd in a session of its own, which is killed whole afterwards: a
    mutant's daemon that ignores SIGTERM, or a test killed at its
    deadline, must not outlive its judgement.
    """
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=seconds)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        out, err, rc = b"", b"", "timeout"
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if rc == "timeout":
        p.communicate()
        LAST_FAILED.names = ["(past its deadline)"]
        return rc
    # cmocka's error lines, for a baseline that fails.
    LAST_FAILED.errors = [line.decode(errors="replace") for line in
                          (out + err).splitlines()
                          if b"ERROR" in line or b"LINE" in line][:6]
    # Which cmocka tests failed, for a failure that does not repeat.
    LAST_FAILED.names = sorted(set(
        line.split(b"]", 1)[1].strip().decode(errors="replace")
        for line in out.splitlines() + err.splitlines()
        if line.startswith(b"[  FAILED  ] test_")))
    return rc


def every_test():
    return sorted({t for v in SOURCES.values() for t in v})


def export_head(dst, rev="HEAD"):
    """A committed tree: a run says which commit it judged."""
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    os.makedirs(dst)
    archive = subprocess.run(["git", "archive", rev], cwd=TOP,
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", dst], input=archive, check=True)


JUDGED = None	# the tree mutants are judged in, when not SRC


def relocate(rel, site):
    """
    A site found in SRC, moved to the same line of JUDGED (the line found
    again by its text, which must be there once); None if it is not.
    """
    if JUDGED is None:
        return site
    old = open(os.path.join(SRC, rel), "rb").read()
    new = open(os.path.join(JUDGED, rel), "rb").read()
    start, end, repl, what = site
    first = old.rfind(b"\n", 0, start) + 1
    if old.find(b"\n", first, end) != -1:
        return None	# a site over several lines
    old_lines = old.split(b"\n")
    lines = new.split(b"\n")
    k = old.count(b"\n", 0, first)
    # The line, then with more of its neighbours until it is found once.
    for ctx in range(0, 6):
        want = old_lines[max(0, k - ctx):k + ctx + 1]
        lead = k - max(0, k - ctx)
        hits = [i for i in range(len(lines)) if lines[i:i + len(want)] ==
                want]
        if len(hits) == 1:
            at = sum(len(text) + 1 for text in lines[:hits[0] + lead])
            return (at + start - first, at + end - first, repl, what)
        if not hits:
            return None
    return None


def test_env():
    env = dict(os.environ, MC_TEST_DEADLINE=str(TEST_SECONDS))
    if ASAN:
        env.update(ASAN)
    return env


def make_tree(build, n, baseline):
    """
    Worker n's copy of the tree, built once with every covering test;
    the first worker also runs the tests on it unmutated: a test that
    fails there would count every mutant it judges as killed.
    """
    tree = os.path.abspath(os.path.join(build, "w%d" % n, "tree"))
    if os.path.isdir(tree):
        shutil.rmtree(tree)
    shutil.copytree(JUDGED or SRC, tree, symlinks=True)
    subprocess.run(["make", "-s", "-j2"] + (ASAN_MAKE if ASAN else []) +
                   ["build/tests/" + t for t in every_test()],
                   cwd=tree, check=True, stdout=subprocess.DEVNULL)
    scripts = sorted({t for v in SCRIPTS.values() for t in v})
    for t in every_test() + scripts if baseline else []:
        # Twice, as a kill is confirmed: once may be the load.
        if run(test_command(t), tree, TEST_SECONDS, test_env()) != 0 \
                and run(test_command(t), tree, TEST_SECONDS,
                        test_env()) != 0:
            print("mutate-sample: %s fails on the unmutated tree (%s): "
                  "no mutant can be judged by it\n  %s" %
                  (t, ", ".join(getattr(LAST_FAILED, "names", [])),
                   "\n  ".join(getattr(LAST_FAILED, "errors", []))),
                  flush=True)
            os._exit(2)
    return tree


def judge(tree, rel, site):
    """killed / survived / stillborn, and by what."""
    tests = tests_for(rel)
    original = apply(tree, rel, site)
    try:
        targets = ["build/tests/" + t for t in tests if "/" not in t]
        if run(["make", "-s"] + (ASAN_MAKE if ASAN else ["O=build"]) +
               targets, tree, 900) != 0:
            return "stillborn", "does not build"
        env = test_env()
        for t in tests:
            if run(test_command(t), tree, TEST_SECONDS, env) == 0:
                continue
            first = ", ".join(getattr(LAST_FAILED, "names", [])) or "?"
            if run(test_command(t), tree, TEST_SECONDS, env) != 0:
                return "killed", t
            print("    (%s failed once (%s), then passed: not a kill)" %
                  (t, first), flush=True)
        return "survived", ""
    finally:
        open(os.path.join(tree, rel), "wb").write(original)
        # The next mutant's build must not take this one's objects.
        now = time.time()
        os.utime(os.path.join(tree, rel), (now, now))


def show(rel, site):
    """The mutant's line as it is and as the mutant has it."""
    data = open(os.path.join(SRC, rel), "rb").read()
    start, end, new, what = site
    first = data.rfind(b"\n", 0, start) + 1
    last = data.find(b"\n", end)
    line = data[first:last].decode(errors="replace")
    mutated = (data[first:start] + new.encode() +
               data[end:last]).decode(errors="replace")
    print("%s %s\n  - %s\n  + %s" % (site_id(site), what, line.strip(),
                                     mutated.strip()))


def site_id(site):
    return hashlib.sha256(site[3].encode() + site[2].encode()).hexdigest()[:12]


def read_equivalent():
    equivalent = set()
    eq_file = os.path.join(TOP, "tests/mutations/equivalent.txt")
    if os.path.exists(eq_file):
        for line in open(eq_file):
            if line.strip() and not line.startswith("#"):
                equivalent.add(line.split()[0])
    return equivalent


def worker(n, build, todo, results, lock):
    tree = make_tree(build, n, n == 0)
    while True:
        try:
            k, rel, s = todo.get_nowait()
        except queue.Empty:
            return
        moved = relocate(rel, s)
        began = time.time()
        if moved is None:
            verdict, by = "stillborn", "its line is not in the judged tree"
        else:
            verdict, by = judge(tree, rel, moved)
        with lock:
            results[k] = (verdict, by)
            print("%3d %-10s %s %s%s %.0f s" % (k, verdict, site_id(s), s[3],
                                            " (" + by + ")" if by else "",
                                            time.time() - began),
                  flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--show", action="store_true",
                    help="print the --only mutants' lines, before and "
                    "after, and judge nothing")
    ap.add_argument("--asan", action="store_true",
                    help="build and run as make check-asan does")
    ap.add_argument("--sample-commit", default="HEAD",
                    help="draw the sample from this commit's sites, and "
                    "judge the mutants on HEAD, each on its line there")
    ap.add_argument("--paths", default="",
                    help="sample only from these files or folders "
                    "(comma-separated, as SOURCES names them)")
    ap.add_argument("seed", type=int)
    ap.add_argument("count", type=int)
    ap.add_argument("build", nargs="?", default="build/mutate")
    a = ap.parse_args()
    only = set(x for x in a.only.split(",") if x)
    global SRC, JUDGED, ASAN
    if a.asan:
        # As make check-asan sets them: full stacks on malloc, or the
        # suppressions of libobjc's leaks do not match and every probe
        # run fails.
        ASAN = {"ASAN_OPTIONS": "verify_asan_link_order=0:detect_leaks=1:"
                "fast_unwind_on_malloc=0",
                "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
                "LSAN_OPTIONS": "suppressions=" + os.path.join(
                    TOP, "tests/lsan.supp") + ":print_suppressions=0",
                "MC_TEST_TIME_SCALE": "4"}
    # The commit judged, named as it is exported (work may go on).
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=TOP,
                          capture_output=True, text=True).stdout.strip()
    SRC = os.path.abspath(os.path.join(a.build, "src"))
    export_head(SRC, a.sample_commit)
    if a.sample_commit != "HEAD":
        JUDGED = os.path.abspath(os.path.join(a.build, "head"))
        export_head(JUDGED)
    equivalent = read_equivalent()
    index = ci.Index.create()
    flags = cflags()
    every = []
    paths = [x.rstrip("/") for x in a.paths.split(",") if x]
    for rel in sources():
        if paths and not any(rel == x or rel.startswith(x + "/")
                             for x in paths):
            continue
        for s in sites(rel, index, flags):
            every.append((rel, s))
    rng = random.Random(a.seed)
    sample = rng.sample(every, min(a.count, len(every)))
    if a.show:
        for rel, s in sample:
            if site_id(s) in only:
                show(rel, s)
        return
    counts = {"killed": 0, "survived": 0, "stillborn": 0, "equivalent": 0}
    results = {}
    todo = queue.Queue()
    for k, (rel, s) in enumerate(sample, 1):
        if site_id(s) in equivalent:
            results[k] = ("equivalent", "tests/mutations/equivalent.txt")
        elif not only or site_id(s) in only:
            todo.put((k, rel, s))
    start = time.time()
    print("mutate-sample: seed %d, %d of %d sites, %d to judge, %d workers, "
          "commit %s%s" % (a.seed, len(sample), len(every), todo.qsize(),
                           a.jobs, head, ", under ASan" if ASAN else ""),
          flush=True)
    lock = threading.Lock()
    threads = [threading.Thread(target=worker, args=(n, a.build, todo,
                                                     results, lock))
               for n in range(a.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    survivors = []
    for k, (rel, s) in enumerate(sample, 1):
        if k not in results:
            continue
        verdict = results[k][0]
        counts[verdict] += 1
        if verdict == "survived":
            survivors.append("%s %s -> %r" % (site_id(s), s[3], s[2]))
    judged = counts["killed"] + counts["survived"]
    print("\nmutate-sample: seed %d: %d killed, %d survived, %d stillborn, "
          "%d equivalent; score %.0f%% of %d judged, %.0f s" %
          (a.seed, counts["killed"], counts["survived"], counts["stillborn"],
           counts["equivalent"],
           100.0 * counts["killed"] / judged if judged else 0.0, judged,
           time.time() - start))
    for line in survivors:
        print("survivor " + line)


if __name__ == "__main__":
    main()

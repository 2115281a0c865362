#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The layers of the tree, checked from what the compiler and nm say.

Each file is compiled on its own: it depends on another file when it uses
a symbol the other defines (read with nm), and on a folder when it
includes a header there (read with -MM).  A call through a function
pointer is no edge, which is the point of a seam.  Files are given in
programs (":daemon a.c b.c :client c.c ..."), since two programs may each
define a symbol (main); a file two programs share is read once.

Exits 1, naming the files and symbols, when
  - any files form a circle, within a program or across the tree;
  - a folder reaches one below it is not allowed to (LAYERS): the policy
    library and common/ know nothing of the programs built on them, and
    metalcapctl nothing of the daemon's runtime;
  - a program compiles a file of a folder its layer may not reach (the
    client a daemon/ file);
  - the policy library uses libuv (a symbol uv_*, or a header uv*.h).

usage: check-layers.py [--graph] CC CFLAGS... -- :PROGRAM FILE.c... ...
"""
import os
import subprocess
import sys
import tempfile

# What each folder may use, besides itself: bottom up.
LAYERS = {
    "common": set(),
    "policy": {"common"},
    "daemon": {"policy", "common"},
    "client": {"policy", "common"},
    "shim": set(),
    "probe": {"tests/sim"},	# the simulated Metal device on Linux
    "tests/sim": set(),
}
# Programs, by the folder of their own files.
PROGRAM_FOLDER = {"daemon": "daemon", "client": "client", "probe": "probe",
                  "shim": "shim"}
NO_EVENT_LOOP = "policy"
# Headers any layer may include, the self-contained shim too: they define
# no symbol (macros and static inline functions over libc).  The seam
# between macOS and Linux (common/mc_os.h) is one.
EVERYWHERE = {"common/mc_os.h"}


def folder(path):
    path = os.path.relpath(path)
    for f in sorted(LAYERS, key=len, reverse=True):
        if path.startswith(f + "/"):
            return f
    return None


def read(cc, cflags, src, tmp):
    """(defined symbols, used symbols, headers included) of one file."""
    obj = os.path.join(tmp, src.replace("/", "_") + ".o")
    subprocess.run([cc, *cflags, "-c", src, "-o", obj], check=True)
    nm = subprocess.run(["nm", "--defined-only", "-g", obj],
                        capture_output=True, text=True, check=True).stdout
    defined = {l.split()[-1] for l in nm.splitlines() if l.strip()}
    nm = subprocess.run(["nm", "-u", obj], capture_output=True, text=True,
                        check=True).stdout
    used = {l.split()[-1] for l in nm.splitlines() if l.strip()}
    mm = subprocess.run([cc, *cflags, "-M", src], capture_output=True,
                        text=True, check=True).stdout
    headers = [h for h in mm.replace("\\\n", " ").split()[1:]
               if h.endswith(".h")]
    return defined, used, headers


def circles(graph):
    """Tarjan's strongly connected components with more than one node."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def parse_programs(args):
    programs, name = {}, None
    for a in args:
        if a.startswith(":"):
            name = a[1:]
            programs.setdefault(name, [])
        elif name is None:
            sys.exit("check-layers: a file before any :PROGRAM: " + a)
        else:
            programs[name].append(a)
    return programs


def edges(programs, table):
    """File-to-file edges over every program, with the symbols why."""
    graph, why = {}, {}
    for files in programs.values():
        owner = {}
        for f in files:
            graph.setdefault(f, set())
            for s in table[f][0]:
                owner[s] = f
        for f in files:
            for s in table[f][1]:
                g = owner.get(s)
                if g is not None and g != f:
                    graph[f].add(g)
                    why.setdefault((f, g), set()).add(s)
    return graph, why


def layer_errors(programs, table, graph, why):
    errors = []
    for prog, files in programs.items():
        home = PROGRAM_FOLDER.get(prog)
        allowed = LAYERS.get(home, set()) | {home}
        for f in files:
            if folder(f) not in allowed:
                errors.append(f"{prog} compiles {f}: {home}/ may use only "
                              f"{', '.join(sorted(allowed - {home}))}")
    for f in sorted(table):
        mine = folder(f)
        allowed = LAYERS.get(mine, set()) | {mine}
        for g in sorted(graph.get(f, ())):
            if folder(g) not in allowed:
                errors.append(f"{f} -> {g}: {mine}/ may not use "
                              f"{folder(g)}/ "
                              f"({', '.join(sorted(why[(f, g)]))})")
        for h in table[f][2]:
            theirs = folder(h)
            if os.path.relpath(h) in EVERYWHERE:
                continue
            if theirs is not None and theirs not in allowed:
                errors.append(f"{f} includes {h}: {mine}/ may not use "
                              f"{theirs}/")
        if mine == NO_EVENT_LOOP:
            uv = sorted(s for s in table[f][1] if s.startswith("uv_"))
            uvh = [h for h in table[f][2]
                   if os.path.basename(h).startswith("uv")]
            if uv or uvh:
                errors.append(f"{f} uses libuv ({', '.join(uv + uvh)}): "
                              f"{NO_EVENT_LOOP}/ runs no event loop")
    return errors


def main(argv):
    show = "--graph" in argv
    argv = [a for a in argv if a != "--graph"]
    sep = argv.index("--")
    cc, cflags = argv[0], argv[1:sep]
    programs = parse_programs(argv[sep + 1:])
    every = sorted({f for files in programs.values() for f in files})
    with tempfile.TemporaryDirectory() as tmp:
        table = {f: read(cc, cflags, f, tmp) for f in every}
    graph, why = edges(programs, table)
    if show:
        for f in sorted(graph):
            for g in sorted(graph[f]):
                print(f"{f} -> {g}: {', '.join(sorted(why[(f, g)]))}")
    bad = circles(graph)
    for comp in bad:
        print("circle of files: " + " ".join(comp), file=sys.stderr)
        for f in comp:
            for g in sorted(graph[f] & set(comp)):
                print(f"  {f} -> {g}: {', '.join(sorted(why[(f, g)]))}",
                      file=sys.stderr)
    errors = layer_errors(programs, table, graph, why)
    for e in errors:
        print("layers: " + e, file=sys.stderr)
    return 1 if bad or errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

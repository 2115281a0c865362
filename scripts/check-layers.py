#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Which daemon file calls which, and whether any of them form a circle.

Each file is compiled on its own and read with nm: a file depends on
another when it uses a symbol the other defines.  A call through a function
pointer is no edge, which is the point of a seam.  Exits 1 and names the
files of every circle (strongly connected component with more than one
file, or a file in a loop with itself through others).

usage: check-layers.py [--graph] CC CFLAGS... -- FILE.c...
"""
import os
import subprocess
import sys
import tempfile


def symbols(cc, cflags, src, tmp):
    obj = os.path.join(tmp, os.path.basename(src) + ".o")
    subprocess.run([cc, *cflags, "-c", src, "-o", obj], check=True)
    out = subprocess.run(["nm", "--defined-only", "-g", obj],
                         capture_output=True, text=True, check=True).stdout
    defined = {l.split()[-1] for l in out.splitlines() if l.strip()}
    out = subprocess.run(["nm", "-u", obj], capture_output=True, text=True,
                         check=True).stdout
    used = {l.split()[-1] for l in out.splitlines() if l.strip()}
    return defined, used


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


def main(argv):
    show = "--graph" in argv
    argv = [a for a in argv if a != "--graph"]
    sep = argv.index("--")
    cc, cflags, files = argv[0], argv[1:sep], argv[sep + 1:]
    with tempfile.TemporaryDirectory() as tmp:
        table = {f: symbols(cc, cflags, f, tmp) for f in files}
    owner = {}
    for f, (defined, _) in table.items():
        for s in defined:
            owner[s] = f
    graph = {f: set() for f in files}
    why = {}
    for f, (_, used) in table.items():
        for s in used:
            g = owner.get(s)
            if g is not None and g != f:
                graph[f].add(g)
                why.setdefault((f, g), []).append(s)
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
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Put a generated block into a file, in place of the old one.

usage: replace-block.py FILE BLOCK

BLOCK's first and last lines are its markers (roff comments such as
'.\\" BEGIN lifecycle table'); FILE must hold both already.
"""
import sys


def main(path, block_path):
    block = open(block_path).read()
    lines = block.splitlines(keepends=True)
    begin, end = lines[0], lines[-1]
    text = open(path).read()
    a = text.find(begin)
    b = text.find(end, a + 1) if a != -1 else -1
    if a == -1 or b == -1:
        sys.exit(f"{path}: no {begin.strip()!r} ... {end.strip()!r} to replace")
    new = text[:a] + block + text[b + len(end):]
    if new != text:
        open(path, "w").write(new)
        print(f"{path}: lifecycle table updated")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])

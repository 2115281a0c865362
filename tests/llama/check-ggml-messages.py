#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Every failure message of the pinned ggml-metal is classified.

    check-ggml-messages.py [LLAMA_SOURCE SCAN_LINES TABLE]

(By default: scripts/llama.sh's source, $MC_BUILD/tests/scan-lines and the
table beside this file, as make test runs it.)

Reads the format strings of every GGML_LOG_ERROR and GGML_ABORT in
LLAMA_SOURCE/ggml/src/ggml-metal/ (the source scripts/llama.sh pinned) and
fails when one is not in TABLE (ggml-metal-messages.tsv), when TABLE lists
one the source no longer has, or when metalcapd's scanner (SCAN_LINES, the
product's policy/scan.c) does not make of it what TABLE says: the named
failure signature, in every form llama.cpp's log writes an error in
(common/log.cpp: timestamp and level, --no-log-timestamps, --no-log-prefix,
--log-colors on), or, for a message TABLE ignores, nothing in any of them.
GGML_ABORT's message is written by ggml_abort straight to stderr after its
file and line (ggml/src/ggml.c), with a build path that may hold a blank.
Ends with "N passed, N failed".
"""
import os
import re
import subprocess
import sys

CALL = re.compile(r"\b(GGML_LOG_ERROR|GGML_ABORT)\s*\(")
# A function's definition: its name at the start of a line, then "(".
DEFINITION = re.compile(r"^(?:static\s+|inline\s+)*[A-Za-z_][\w\s\*:<>,]*?"
                        r"\b([A-Za-z_]\w*)\s*\([^;]*$", re.M)
CONVERSION = re.compile(
    r"%[-+ #0]*(\d+|\*)?(\.\d+)?(hh|h|ll|l|z|j|t|L)?([diouxXeEfgGscp%])")
LOG_FORMS = (
    "0.01.234.567 E {}",
    "E {}",
    "{}",
    "\033[34m0.01.234.567\033[0m \033[31mE {}\033[0m",
    "\033[0m0.01.234.567 E {}",      # the last line's colour reset first
)
ABORT_PATHS = (
    "/Users/runner/work/llama.cpp/ggml/src/ggml-metal/{}:{}: {}",
    "/Users/me/My Projects/llama.cpp/ggml/src/ggml-metal/{}:{}: {}",
)


def literals(text, i):
    """The adjacent C string literals from text[i:], joined, as written."""
    out = []
    while True:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i >= len(text) or text[i] != '"':
            return "".join(out)
        j = i + 1
        while text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        out.append(text[i + 1:j])
        i = j + 1


def enclosing(text, pos):
    """The name of the function the call at pos is in (its __func__)."""
    name = "-"
    for m in DEFINITION.finditer(text, 0, pos):
        if m.group(1) not in ("if", "for", "while", "switch", "return"):
            name = m.group(1)
    return name


def messages(source):
    """(kind, function, format as written, file, line) of each call."""
    folder = os.path.join(source, "ggml", "src", "ggml-metal")
    found = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith((".m", ".cpp", ".c", ".h")):
            continue
        text = open(os.path.join(folder, name), encoding="utf-8").read()
        for m in CALL.finditer(text):
            fmt = literals(text, m.end())
            if fmt:
                line = text.count("\n", 0, m.start()) + 1
                found.append((m.group(1), enclosing(text, m.start()), fmt,
                              name, line))
    return found


def render(func, fmt):
    """The first line the format makes, __func__ its own, values made up."""
    text = fmt.encode().decode("unicode_escape")
    text = text.split("\n")[0]
    if text.startswith("%s: "):
        text = func + ": " + text[4:]

    def value(m):
        return {"s": "x", "c": "x", "%": "%", "p": "0x1"}.get(m.group(4),
                                                             "1")
    return CONVERSION.sub(value, text)


def forms(kind, func, fmt, name, line):
    text = render(func, fmt)
    if kind == "GGML_ABORT":
        return [p.format(name, line, text) for p in ABORT_PATHS]
    return [f.format(text) for f in LOG_FORMS]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    if len(sys.argv) == 4:
        source, scan_lines, table_path = sys.argv[1:]
    elif len(sys.argv) == 1:
        top = os.path.dirname(os.path.dirname(here))
        where = subprocess.run([os.path.join(top, "scripts", "llama.sh"),
                                "where"], capture_output=True, text=True,
                               check=True).stdout.strip()
        source = os.path.join(where, "src")
        scan_lines = os.path.join(os.environ.get("MC_BUILD",
                                                 os.path.join(top, "build")),
                                  "tests", "scan-lines")
        table_path = os.path.join(here, "ggml-metal-messages.tsv")
    else:
        sys.exit("usage: check-ggml-messages.py [LLAMA_SOURCE SCAN_LINES "
                 "TABLE]")
    table = {}
    for n, row in enumerate(open(table_path, encoding="utf-8"), 1):
        if row.startswith("#") or not row.strip():
            continue
        kind, func, fmt, verdict = row.rstrip("\n").split("\t")
        table[(kind, func, fmt)] = (verdict, n)
    found = messages(source)
    passed = failed = 0
    seen = set()
    lines, checks = [], []
    for kind, func, fmt, name, line in found:
        where = "%s:%d" % (name, line)
        key = (kind, func, fmt)
        if key not in table:
            print("FAIL %s: %s(\"%s\") in %s is not classified in %s" %
                  (where, kind, fmt, func, table_path))
            failed += 1
            continue
        if key in seen:
            continue
        seen.add(key)
        verdict = table[key][0]
        for text in forms(kind, func, fmt, name, line):
            lines.append(text)
            checks.append((where, kind, fmt, verdict, text))
    answers = subprocess.run([scan_lines], input="\n".join(lines) + "\n",
                             capture_output=True, text=True,
                             check=True).stdout.splitlines()
    for (where, kind, fmt, verdict, text), got in zip(checks, answers):
        want = verdict[len("recognised: "):] if verdict.startswith(
            "recognised: ") else "-"
        if got != want:
            print("FAIL %s: %r: the scanner says %s, %s says %s" %
                  (where, text, got, os.path.basename(table_path), verdict))
            failed += 1
        else:
            passed += 1
    for (kind, func, fmt), (verdict, n) in table.items():
        if (kind, func, fmt) not in seen:
            print("FAIL %s:%d: %s(\"%s\") in %s is not in the pinned "
                  "source: drop it, or keep it with the version that "
                  "printed it" % (table_path, n, kind, fmt, func))
            failed += 1
    print("ggml-metal: %d messages, %d distinct, each in every log form" %
          (len(found), len(seen)))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Every message of the pinned ggml-metal is classified.

    check-ggml-messages.py [LLAMA_SOURCE SCAN_LINES TABLE]

(By default: scripts/llama.sh's source, $MC_BUILD/tests/scan-lines and the
table beside this file, as make test runs it.)

Reads every GGML_LOG_ERROR, GGML_LOG_WARN, GGML_LOG_INFO, GGML_LOG_DEBUG,
GGML_ABORT and GGML_ASSERT in LLAMA_SOURCE/ggml/src/ggml-metal/ (the
source scripts/llama.sh pinned; comments left out) and renders each as
ggml writes it: its arguments filled in (__func__ the function's name, an
NSError's description or localizedDescription each of the real texts in
NSERRORS, in turn, with their line breaks), in every form llama.cpp's log
writes a line of its level (common/log.cpp: timestamp and level,
--no-log-timestamps, --no-log-prefix, --log-colors on), and an abort as
ggml_abort writes it straight to stderr after its file and line
(ggml/src/ggml.c; GGML_ASSERT(x) is GGML_ABORT("GGML_ASSERT(%s) failed",
#x), ggml.h), with a build path that may hold a blank.

Then metalcapd's scanner (SCAN_LINES, the product's policy/scan.c) must
make of each line what TABLE (ggml-metal-messages.tsv) says: an ERROR or
GGML_ABORT must be in TABLE; a WARN, INFO or DEBUG line not in it must be
no failure; every GGML_ASSERT is a "ggml Metal abort" unless TABLE says
otherwise; the lines an NSError adds after the first are no failure.  It
fails when TABLE lists a message the source no longer has, and when the
scanner answers another number of lines than it was given.  Ends with
"N passed, N failed"; exits 1 on any failure.
"""
import itertools
import os
import re
import subprocess
import sys

CALL = re.compile(r"\b(GGML_LOG_ERROR|GGML_LOG_WARN|GGML_LOG_INFO|"
                  r"GGML_LOG_DEBUG|GGML_ABORT|GGML_ASSERT)\s*\(")
LEVEL = {"GGML_LOG_ERROR": "E", "GGML_LOG_WARN": "W", "GGML_LOG_INFO": "I",
         "GGML_LOG_DEBUG": "D"}
# common/log.cpp's colours for each level's letter; INFO resets at once,
# the others after the message (so at the start of the next line).
COLOUR = {"E": "\033[31m", "W": "\033[35m", "I": "\033[32m",
          "D": "\033[33m"}
# A function's definition: its name at the start of a line, then "(".
DEFINITION = re.compile(r"^(?:static\s+|inline\s+)*[A-Za-z_][\w\s\*:<>,]*?"
                        r"\b([A-Za-z_]\w*)\s*\([^;]*$", re.M)
CONVERSION = re.compile(r"%([-+ #0]*(?:\d+|\*)?(?:\.\d+)?)"
                        r"(hh|h|ll|l|z|j|t|L)?([diouxXeEfgGscp@%])")
PRI = {"PRIu64": "lu", "PRId64": "ld", "PRIi64": "li", "PRIx64": "lx",
       "PRIu32": "u", "PRId32": "d"}
ABORT_PATHS = (
    "/Users/runner/work/llama.cpp/ggml/src/ggml-metal/{}:{}: {}",
    "/Users/me/My Projects/llama.cpp/ggml/src/ggml-metal/{}:{}: {}",
)
STAMP = "0.01.234.567"

# Real NSError texts, as ggml prints them with [[error description]
# UTF8String] ("Error Domain=D Code=N \"...\" UserInfo={...}") and with
# .localizedDescription, from public reports of llama.cpp and others on
# Macs.  A compile error spans lines.
NSERRORS = {
    "description": (
        # kherud/java-llama.cpp#6 (ggml_metal_init: error: %s)
        "Error Domain=MTLLibraryErrorDomain Code=3 \"program_source:41:9: "
        "error: invalid type 'const constant int64_t &' (aka 'const "
        "constant long &') for buffer declaration\n        constant   "
        "int64_t & nb,\n        ^~~~~~~~~~~~~~~~~~~~~~~\n\" UserInfo="
        "{NSLocalizedDescription=program_source:41:9: error: invalid type "
        "'const constant int64_t &' (aka 'const constant long &') for "
        "buffer declaration\n        constant   int64_t & nb,\n        "
        "^~~~~~~~~~~~~~~~~~~~~~~\n}",
        # withcatai/node-llama-cpp#629 (error compiling source: %s)
        "Error Domain=MTLLibraryErrorDomain Code=3\nprogram_source:7:17: "
        "error: use of undeclared identifier 'mpp'\nusing namespace "
        "mpp::tensor_ops;\n                ^",
        # tinygrad test_linearizer_failures.py, ../shared/docs/probe.md
        # (newComputePipelineStateWithFunction:error: on an M1)
        "Error Domain=AGXMetalG13X Code=3 \"Threadgroup memory size "
        "(65536) exceeds the maximum threadgroup memory allowed (32768)\" "
        "UserInfo={NSLocalizedDescription=Threadgroup memory size (65536) "
        "exceeds the maximum threadgroup memory allowed (32768)}",
        # LostRuins/koboldcpp#964 (a library file that is not there)
        "Error Domain=NSCocoaErrorDomain Code=260 \"The file "
        "\u201cggml-metal.metal\u201d couldn\u2019t be opened because there "
        "is no such file.\" UserInfo={NSFilePath=ggml-metal.metal, "
        "NSUnderlyingError=0x600001c4af40 {Error Domain=NSPOSIXErrorDomain "
        "Code=2 \"No such file or directory\"}}",
    ),
    "localizedDescription": (
        # ggml-org/llama.cpp#7010, ml-explore/mlx#479
        "Insufficient Memory (00000008:"
        "kIOGPUCommandBufferCallbackErrorOutOfMemory)",
        # ggml-org/llama.cpp#8886
        "Ignored (for causing prior/excessive GPU errors) (00000004:"
        "kIOAccelCommandBufferCallbackErrorSubmissionsIgnored)",
        "Threadgroup memory size (65536) exceeds the maximum threadgroup "
        "memory allowed (32768)",
        "program_source:41:9: error: invalid type 'const constant int64_t "
        "&' (aka 'const constant long &') for buffer declaration\n"
        "        constant   int64_t & nb,\n        ^~~~~~~~~~~~~~~~~~~~~~~\n",
    ),
}


def uncommented(text):
    """text with its comments blanked (line breaks kept), strings kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def arguments(text, i):
    """The call's arguments from text[i:] (just past its "("), raw."""
    args, depth, start, n = [], 0, i, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                args.append(text[start:i].strip())
                return args
            depth -= 1
        elif c == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
        i += 1
    raise ValueError("a call without its end")


def literal(arg):
    """The format a C argument of adjacent literals (and PRI macros) is,
    as written, or None when it is not one."""
    out, i = [], 0
    while i < len(arg):
        if arg[i] in " \t\r\n":
            i += 1
        elif arg[i] == '"':
            j = i + 1
            while arg[j] != '"':
                j += 2 if arg[j] == "\\" else 1
            out.append(arg[i + 1:j])
            i = j + 1
        else:
            m = re.match(r"PRI\w+", arg[i:])
            if not m or m.group(0) not in PRI:
                return None
            out.append(PRI[m.group(0)])
            i += m.end()
    return "".join(out) if out else None


def enclosing(text, pos):
    """The name of the function the call at pos is in (its __func__)."""
    name = "-"
    for m in DEFINITION.finditer(text, 0, pos):
        if m.group(1) not in ("if", "for", "while", "switch", "return"):
            name = m.group(1)
    return name


def messages(source):
    """(kind, function, format as written, args, file, line) of each."""
    folder = os.path.join(source, "ggml", "src", "ggml-metal")
    found = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith((".m", ".cpp", ".c", ".h")):
            continue
        text = uncommented(open(os.path.join(folder, name),
                                encoding="utf-8").read())
        for m in CALL.finditer(text):
            args = arguments(text, m.end())
            line = text.count("\n", 0, m.start()) + 1
            if m.group(1) == "GGML_ASSERT":
                # #x: the expression, its blanks made one (cpp).
                fmt = "GGML_ASSERT(%s) failed" % re.sub(r"\s+", " ",
                                                          args[0])
                found.append(("GGML_ASSERT", enclosing(text, m.start()),
                              fmt, [], name, line))
                continue
            fmt = literal(args[0])
            if fmt is None:
                sys.exit("%s:%d: %s's format is not a literal: %s"
                         % (name, line, m.group(1), args[0]))
            found.append((m.group(1), enclosing(text, m.start()), fmt,
                          args[1:], name, line))
    return found


def slot_values(conversion, arg, func):
    """What ggml may put in one conversion for this argument."""
    if conversion in "s@":
        if arg == "__func__":
            return [func]
        for key in ("localizedDescription", "description"):
            if key in arg:
                return list(NSERRORS[key])
        if "name" in arg or "base" in arg:
            return ["kernel_mul_mm_f16_f32"]
        return ["x"]
    if conversion == "p":
        return ["0x600001c4af40"]
    if conversion == "c":
        return ["x"]
    if conversion in "eEfgG":
        return [1.5]
    return [1]


def renders(kind, func, fmt, args):
    """Each text the format makes, a variant per real NSError."""
    if kind == "GGML_ASSERT":
        return [fmt]
    text = fmt.encode().decode("unicode_escape")
    convs = [m for m in CONVERSION.finditer(text) if m.group(3) != "%"]
    if len(convs) != len(args):
        sys.exit("%s: %d conversions, %d arguments in %r" %
                 (func, len(convs), len(args), fmt))
    # Python's % with the C length modifiers out, %p and %@ as strings.
    pyfmt = CONVERSION.sub(lambda m: "%%" if m.group(3) == "%" else
                           "%" + m.group(1) + ("s" if m.group(3) in "p@"
                                               else m.group(3)), text)
    choices = [slot_values(m.group(3), a, func) for m, a in zip(convs,
                                                                  args)]
    return [pyfmt % values for values in itertools.product(*choices)]


def forms(kind, name, line, text):
    """The lines each form writes: (the first line, the lines after)."""
    if kind in ("GGML_ABORT", "GGML_ASSERT"):
        out = [p.format(name, line, text) for p in ABORT_PATHS]
    else:
        lv = LEVEL[kind]
        reset_now = "\033[0m" if lv == "I" else ""
        out = ["%s %s %s" % (STAMP, lv, text), "%s %s" % (lv, text), text,
               "\033[34m%s\033[0m %s%s %s%s" % (STAMP, COLOUR[lv], lv,
                                                 reset_now, text),
               # the last line's colour reset first
               "\033[0m%s %s %s" % (STAMP, lv, text)]
    result = []
    for whole in out:
        lines = whole.split("\n")
        if len(lines) > 1 and lines[-1] == "":
            lines.pop()
        result.append((lines[0], lines[1:]))
    return result


def expected(kind, verdict):
    """The scanner's answer the verdict asks for."""
    if verdict is None:
        return "ggml Metal abort" if kind == "GGML_ASSERT" else "-"
    if verdict.startswith("recognised: "):
        return verdict[len("recognised: "):]
    return "-"


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
    for kind, func, fmt, args, name, line in found:
        where = "%s:%d" % (name, line)
        key = (kind, func, fmt)
        verdict = table[key][0] if key in table else None
        if verdict is None and kind in ("GGML_LOG_ERROR", "GGML_ABORT"):
            print("FAIL %s: %s(\"%s\") in %s is not classified in %s" %
                  (where, kind, fmt, func, table_path))
            failed += 1
            continue
        if key in seen:
            continue
        seen.add(key)
        for text in renders(kind, func, fmt, args):
            for first, after in forms(kind, name, line, text):
                lines.append(first)
                checks.append((where, expected(kind, verdict), first,
                               verdict or "(not listed)"))
                for more in after:
                    lines.append(more)
                    checks.append((where, "-", more, "a line after the "
                                   "first is no failure"))
    answers = subprocess.run([scan_lines], input="\n".join(lines) + "\n",
                             capture_output=True, text=True,
                             check=True).stdout.splitlines()
    if len(answers) != len(checks):
        print("FAIL %s answered %d lines of %d" % (scan_lines, len(answers),
                                                    len(checks)))
        failed += 1
    for (where, want, text, why), got in zip(checks, answers):
        if got != want:
            print("FAIL %s: %r: the scanner says %s, %s says %s" %
                  (where, text, got, os.path.basename(table_path), why))
            failed += 1
        else:
            passed += 1
    for (kind, func, fmt), (verdict, n) in table.items():
        if (kind, func, fmt) not in seen:
            print("FAIL %s:%d: %s(\"%s\") in %s is not in the pinned "
                  "source: drop it, or keep it with the version that "
                  "printed it" % (table_path, n, kind, fmt, func))
            failed += 1
    kinds = {k: sum(1 for f in found if f[0] == k) for k in
             ("GGML_LOG_ERROR", "GGML_ABORT", "GGML_ASSERT", "GGML_LOG_WARN",
              "GGML_LOG_INFO", "GGML_LOG_DEBUG")}
    if kinds["GGML_LOG_ERROR"] == 0 or kinds["GGML_ASSERT"] == 0:
        print("FAIL %s: no GGML_LOG_ERROR or GGML_ASSERT read: not "
              "ggml's source" % source)
        failed += 1
    print("ggml-metal: %d messages (%s), %d distinct, %d lines in every "
          "log form" % (len(found), ", ".join("%d %s" % (v, k[5:]) for k, v
                                              in kinds.items()),
                        len(seen), len(lines)))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

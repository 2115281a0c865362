#!/usr/bin/python3
"""Keep docs/metalcap-rpc.7 and the code in step: the methods, their
parameter counts (daemon/rpc.c's table), the error codes and their types
(common/protocol.h, common/mc_rpc.c), the event types, the job map's
fields (rpc_pack_job) and the protocol version; and every worked example
is JSON whose request names its method and whose response answers it.
Ends with "N passed, N failed"."""
import json
import os
import re
import sys

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
results = []


def read(path):
    with open(os.path.join(TOP, path), encoding="utf-8") as f:
        return f.read()


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    results.append(ok)


def defines(text, prefix):
    return dict(re.findall(r'#define\s+(%s\w+)\s+"([^"]+)"' % prefix, text))


proto = read("common/protocol.h")
rpc = read("daemon/rpc.c")
pack = read("daemon/rpc_pack.c")
framing = read("common/mc_rpc.c")
page = read("docs/metalcap-rpc.7")

methods = defines(proto, "MC_M_")
codes = defines(proto, "MC_E_")
events = defines(proto, "MC_EV_")
version = int(re.search(r"#define\s+MC_PROTOCOL_VERSION\s+(\d+)", proto)[1])

# The daemon's method table: name -> (min, max).
table = {}
for const, lo, hi in re.findall(
        r"\.name = (MC_M_\w+), \.min_params = (\d+),\s*\.max_params = (\d+)",
        rpc):
    table[methods[const]] = (int(lo), int(hi))
check(set(table) == set(methods.values()),
      "every method in protocol.h is in rpc.c's table and no other")


def section(name):
    """The text of .Sh NAME up to the next .Sh."""
    m = re.search(r"^\.Sh %s\n(.*?)(?=^\.Sh |\Z)" % name, page, re.M | re.S)
    return m[1] if m else ""


# Methods: one .Ss each, with the parameter counts of the table.
msec = section("METHODS")
parts = re.split(r"^\.Ss (\S+)\n", msec, flags=re.M)
documented = dict(zip(parts[1::2], parts[2::2]))
check(set(documented) == set(methods.values()),
      "METHODS has a section for each method: %s"
      % sorted(set(documented) ^ set(methods.values())))
for name, text in sorted(documented.items()):
    m = re.search(r"Takes (\d+) to (\d+) parameters", text)
    want = table.get(name)
    check(m is not None and want == (int(m[1]), int(m[2])),
          "%s: the page says %s parameters, the daemon takes %s"
          % (name, m and "%s to %s" % (m[1], m[2]), want))

# Errors: every code, with its type (1 validation, 0 exception).
validation = set(re.search(r"validation\[\] = \{(.*?)\}", framing,
                           re.S)[1].replace("\n", " ").replace("\t", " ")
                 .replace(",", " ").split())
listed = dict(re.findall(r"^\.It Er (E[A-Z]+)\n(\d):", page, re.M))
check(set(listed) == set(codes.values()),
      "the page lists every error code: %s"
      % sorted(set(listed) ^ set(codes.values())))
for const, code in sorted(codes.items()):
    want = "1" if const in validation else "0"
    check(listed.get(code) == want,
          "%s has error type %s on the page" % (code, want))

# Events: the types and nothing else.
esec = section("EVENTS")
types = re.findall(r"^\.It Li (\w+)$", esec, re.M)
check(set(types) == set(events.values()),
      "EVENTS lists every event type: %s" % types)
check('"%s"' % defines(proto, "MC_N_")["MC_N_EVENT"] in esec and
      defines(proto, "MC_N_")["MC_N_CALL"] in esec,
      "EVENTS names both notification methods")

# The job map: every field rpc_pack_job sends is described.
body = re.search(r"^rpc_pack_job\(.*?^}", pack, re.M | re.S)[0]
fields = set(re.findall(r'(?:rpc_pack_kv|mc_rpc_pack_str|'
                        r'rpc_pack_incident)\(pk, "(\w+)"', body))
fields |= {"shim"} if "rpc_pack_shim" in body else set()
jsec = re.search(r"^\.Ss Job map\n(.*?)^\.Sh", page, re.M | re.S)[1]
described = set(re.findall(r"\b(\w+)\b", " ".join(
    re.findall(r"^\.(?:It )?Li (.*)$", jsec, re.M))))
check(fields <= described, "the job map describes every field: missing %s"
      % sorted(fields - described))

# The version.
check(re.search(r"returns protocol version %d\." % version, page) is not None,
      "the page states protocol version %d" % version)

# Worked examples: JSON, a request naming its section, its response.
for name, text in sorted(documented.items()):
    blocks = re.findall(r"^\.Bd -literal\n(.*?)^\.Ed", text, re.M | re.S)
    ok = bool(blocks)
    for block in blocks:
        msgs, cur = [], None
        for line in block.splitlines():
            if line.startswith(("-> ", "<- ")):
                cur = [line[:2], line[3:]]
                msgs.append(cur)
            elif cur is not None:
                cur[1] += " " + line.strip()
        # As mandoc renders them: roff's \\ and \e are one backslash.
        msgs = [(d, re.sub(r"\\[\\e]", lambda m: "\\", t))
                for d, t in msgs]
        try:
            parsed = [(d, json.loads(t)) for d, t in msgs]
        except ValueError as e:
            check(False, "%s: an example is not JSON: %s" % (name, e))
            ok = False
            continue
        req = [m for d, m in parsed if d == "->"]
        resp = [m for d, m in parsed if d == "<-"]
        if not req or not resp or req[0][0] != 0 or \
                resp[0][:2] != [1, req[0][1]]:
            ok = False
        elif req[0][2] != name and resp[0][2] is None:
            ok = False
        elif resp[0][2] is not None:
            err = resp[0][2]
            ok = ok and err[0] in (0, 1) and \
                err[1].split(":")[0] in codes.values()
    check(ok, "%s: a worked example, request and response" % name)

passed = sum(results)
print("%d passed, %d failed" % (passed, len(results) - passed))
sys.exit(0 if all(results) else 1)

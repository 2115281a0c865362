#!/usr/bin/env python3
"""Check a metalcapctl bench evidence folder with independent code.

usage: check-evidence.py DIR ROUNDS MODEL COMMAND...

Python's hashlib, csv, statistics and shlex stand in for the C under
test: every SHA256SUMS line is recomputed, every median and ratio in
results.csv is recomputed from the raw llama-bench JSON of the runs,
and metadata.md must name the binary's and the model's real SHA-256,
the profile, the probe's verdict, the exact command and the runs in
their interleaved order.  Exit 0 and "ok", or an AssertionError.
"""
import csv
import hashlib
import json
import os
import re
import shlex
import statistics
import sys


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def check_sums(folder):
    listed = {}
    with open(os.path.join(folder, "SHA256SUMS")) as f:
        for line in f:
            digest, name = line.rstrip("\n").split("  ", 1)
            listed[name] = digest
    present = sorted(n for n in os.listdir(folder) if n != "SHA256SUMS")
    assert sorted(listed) == present, (sorted(listed), present)
    for name, digest in listed.items():
        assert sha256(os.path.join(folder, name)) == digest, name


def samples(folder, side, rounds):
    """Every sample of every test on one side, from the raw JSON."""
    tests = {}
    for r in range(1, rounds + 1):
        with open(os.path.join(folder, "%s-%d.json" % (side, r))) as f:
            for t in json.load(f):
                # llama-bench's own names: pp512, tg128, pp512+tg128
                name = "+".join(["pp%d" % t["n_prompt"]] * (t["n_prompt"] > 0)
                                + ["tg%d" % t["n_gen"]] * (t["n_gen"] > 0))
                tests.setdefault(name, []).extend(t["samples_ts"])
    return tests


def check_results(folder, rounds):
    stock = samples(folder, "stock", rounds)
    unlocked = samples(folder, "unlocked", rounds)
    with open(os.path.join(folder, "results.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["metric"] for r in rows] == list(stock), rows
    for row in rows:
        s = statistics.median(stock[row["metric"]])
        u = statistics.median(unlocked[row["metric"]])
        assert len(stock[row["metric"]]) > 0
        assert abs(float(row["stock_guest"]) - s) < 1e-4 + 1e-9 * s, row
        assert abs(float(row["safe_shim_guest"]) - u) < 1e-4 + 1e-9 * u, row
        assert abs(float(row["guest_ratio"]) - u / s) < 1e-4, row
        assert row["unit"] == "tokens/s" and row["host_baremetal"] == ""
        assert row["workload"].endswith(" (llama.cpp)"), row


def check_metadata(folder, rounds, model, command):
    with open(os.path.join(folder, "metadata.md")) as f:
        text = f.read()

    def field(name):
        m = re.search(r"^- %s: (.*)$" % re.escape(name), text, re.M)
        assert m, "metadata.md has no %r" % name
        return m.group(1)

    assert field("Result") == "ratios in results.csv", field("Result")
    assert field("Benchmark binary SHA-256") == "`%s`" % sha256(command[0])
    assert field("Model SHA-256") == "`%s`" % sha256(model)
    assert field("Profile").startswith("apple9 (AppleFamilyMax 1009, "
                                       "MaxThreadgroupMemory 65536")
    assert field("Probe verdict").startswith("pass, by ")
    assert field("Command") == shlex.join(command), field("Command")
    assert field("GPU as llama-bench reports it") == \
        "Apple Paravirtual device"
    assert field("GPU as metalcap-probe reports it") == \
        "Apple Paravirtual device"
    # The guest, as this machine describes itself (Linux here; sysctl's
    # kern.osproductversion, kern.osversion and hw.model on a Mac).
    pretty = "Linux"
    with open("/etc/os-release") as f:
        for line in f:
            if line.startswith("PRETTY_NAME="):
                pretty = line.split("=", 1)[1].strip().strip('"')
                break
    u = os.uname()
    assert field("OS") == "%s, %s %s (%s)" % (pretty, u.sysname, u.release,
                                              u.machine), field("OS")
    try:
        with open("/sys/class/dmi/id/product_name") as f:
            model = f.readline().strip()
    except OSError:
        model = "unknown"
    assert field("Hardware model") == "`%s`" % model, field("Hardware model")
    with open(os.path.join(os.path.dirname(__file__), "..", "..",
                           "VERSION")) as f:
        assert field("Version") == f.read().strip()
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", field("Date"))
    runs = re.findall(r"^- round (\d+), (stock|unlocked): exit 0, `([^`]*)`",
                      text, re.M)
    order = []
    for r in range(1, rounds + 1):
        sides = ["stock", "unlocked"] if r % 2 else ["unlocked", "stock"]
        order += [(str(r), s, "%s-%d.json" % (s, r)) for s in sides]
    assert runs == order, runs
    assert len(re.findall(r"saw Apple families up to 1009", text)) == rounds


def main():
    folder, rounds, model, command = sys.argv[1], int(sys.argv[2]), \
        sys.argv[3], sys.argv[4:]
    check_sums(folder)
    check_results(folder, rounds)
    check_metadata(folder, rounds, model, command)
    print("ok")


if __name__ == "__main__":
    main()

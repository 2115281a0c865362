#!/usr/bin/env python3
"""summary.json of an acceptance run (scripts/mac-acceptance.sh).

    mac-acceptance-summary.py OUT_DIR MODE PROFILE STATUS

Read back from the raw files the run kept in OUT_DIR (the probe's JSON,
metalcapctl's --json answers, the shim's report, steps.tsv), so that the
summary says nothing the files do not: families stock and unlocked, the
probe's verdicts, check's verdict, the job and its proof of injection,
tokens/s and ratios, the KL-divergence verdict.  A part whose step did
not run is null.
"""
import json
import os
import sys

# Every step of the run: passed only when each is there and ok.
REQUIRED = {"probe-stock", "check", "add", "probe-unlocked", "job", "shim",
            "health", "bench", "verify"}


def load(out, name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def apple_max(report):
    """The highest Apple family (1001-1999) the device said yes to."""
    fams = [int(k) for k, v in report.get("families", {}).items()
            if v and 1001 <= int(k) <= 1999]
    return max(fams) if fams else None


def probe_part(report):
    if report is None:
        return None
    return {"device": report.get("device"),
            "apple_family_max": apple_max(report),
            "threadgroup_memory": report.get("threadgroup_memory"),
            "verdict": report.get("verdict"),
            "checks_passed": [c["name"] for c in report.get("checks", [])
                              if c.get("correct")],
            "checks_skipped": [c["name"] for c in report.get("checks", [])
                               if c.get("skipped")],
            "shim": report.get("shim")}


def steps_of(out):
    steps = []
    with open(os.path.join(out, "steps.tsv")) as f:
        for line in f:
            name, state, detail = line.rstrip("\n").split("\t", 2)
            steps.append({"name": name, "ok": state == "ok",
                          "detail": detail})
    return steps


def job_part(out):
    status = load(out, "status.json")
    job = status[0] if isinstance(status, list) and status else None
    try:
        with open(os.path.join(out, "shim.report")) as f:
            report = f.read().strip()
    except OSError:
        report = None
    if job is None and report is None:
        return None
    return {"label": job and job.get("label"),
            "state": job and job.get("state"),
            "pid": job and job.get("pid"),
            "shim": job and job.get("shim"),
            "shim_report": report}


def bench_part(bench):
    if bench is None:
        return None
    return {"model_type": bench.get("model_type"),
            "rounds": bench.get("rounds"),
            "evidence": "bench/",
            "tests": [{"name": t["name"],
                       "stock_tokens_per_s": t["stock"]["median"],
                       "unlocked_tokens_per_s": t["unlocked"]["median"],
                       "ratio": t.get("ratio")}
                      for t in bench.get("tests", [])]}


def verify_part(verify):
    if verify is None:
        return None
    figures = verify.get("figures") or {}
    return {"verdict": verify.get("verdict"),
            "evidence": "verify/",
            "figures": {k: v.get("value") for k, v in figures.items()},
            "limits": verify.get("limits"),
            "failed": verify.get("failed")}


def main():
    out, mode, profile, status = sys.argv[1:5]
    steps = steps_of(out)
    failed = [s["name"] for s in steps if not s["ok"]]
    unlocked = load(out, "probe-unlocked.json")
    check = load(out, "check.json")
    done = {s["name"] for s in steps if s["ok"]}
    summary = {
        "mode": mode,
        "profile": profile,
        "passed": status == "0" and not failed and REQUIRED <= done,
        "failed_step": failed[0] if failed else None,
        "steps": steps,
        "probe_stock": probe_part(load(out, "probe-stock.json")),
        "probe_unlocked": probe_part(unlocked and unlocked.get("report")),
        "check": check and {"verdict": check.get("verdict"),
                            "machine": check.get("machine"),
                            "slice": check.get("slice")},
        "job": job_part(out),
        "bench": bench_part(load(out, "bench.json")),
        "verify": verify_part(load(out, "verify.json")),
    }
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2, sort_keys=True)
        f.write("\n")
    return 0 if status != "0" or summary["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())

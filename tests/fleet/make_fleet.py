#!/usr/bin/env python3
"""A fleet of simulated guests for metalcapctl fleet allowlist's tests.

  make_fleet.py TEMPLATE N SEED DIR
  make_fleet.py jamf METALCAPCTL DIR

TEMPLATE is a status.plist metalcapd wrote, holding at least one verdict
(verdicts keyed vSEQ, as daemon/fleet.c writes them): it is one guest of
the fleet, as it is (user "self").  Each of N other guests
gets DIR/Users/gK/Library/Application Support/metalcap/state/status.plist:
the template's document with its own instance id, guest id and
verdicts, drawn by SEED from a few hosts (M1 to M4), two OS builds, two
llama.cpp builds and two models, mostly passes.  Every seventh is another
user of the guest before it, with that guest's id and verdicts of its own
on the same combinations, which must count once; the ninth and tenth of
each ten ran an older metalcapd (no guest id), the tenth a clone of the
ninth's image that kept its instance id, and count once as well.  Three
more users, of two guests, passed a model no one else ran.
Then the rows osquery would return for pkg/fleet/metalcap.sql's query 4
over all of them (tests/fleet/osquery_plist.py) go to DIR/rows.json, an
osqueryi --json array, and the rule metalcapctl applies, computed here
independently, to DIR/want.json: each combination's guests passed,
failures, and whether it is allowed (--min-guests 3, the last 30 days).
After the array, rows.json has osquery's differential result lines: the
rows of one guest in ten from before its upgrade (no guest id), which
must count with its later ones, and rows "removed", which must not
count.
"""
import copy
import json
import os
import plistlib
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import osquery_plist as oq  # noqa: E402

HOSTS = [("Apple M1 (Virtual)", "VirtualMac2,1"),
         ("Apple M1 Ultra (Virtual)", "VirtualMac2,1"),
         ("Apple M2 (Virtual)", "VirtualMac2,1"),
         ("Apple M4 Max (Virtual)", "VirtualMac2,1")]
OS = ["25B78", "25C56"]
BUILDS = ["build 10167, commit 5e1f0c3a", "build 10200, commit abcdef1"]
KEYS = ["profile", "llama_build", "model_sha256", "os_build", "cpu_brand",
        "hw_model", "shim_version"]
DAY = 86400


def guests(template, n, seed, now):
    rnd = random.Random(seed)
    base = next(iter(template["verdicts"].values()))
    models = [base["model_sha256"], "ab" * 32]
    last = None
    for k in range(n):
        doc = copy.deepcopy(template)
        doc["instance_id"] = "%032x" % rnd.getrandbits(128)
        doc["guest_id"] = "%032x" % rnd.getrandbits(128)
        cpu, hw = HOSTS[rnd.randrange(len(HOSTS))]
        os_build = OS[rnd.randrange(2)]
        verdicts = {}
        for seq in range(1, rnd.randrange(1, 4) + 1):
            v = dict(base)
            v.update(seq=seq, cpu_brand=cpu, hw_model=hw,
                     os_build=os_build,
                     profile=rnd.choice(["apple9", "apple7"]),
                     llama_build=BUILDS[rnd.randrange(2)],
                     model_sha256=models[rnd.randrange(2)],
                     verdict="fail" if rnd.random() < 0.08 else "pass",
                     # Some outside the window: they do not count.
                     date=now - rnd.randrange(0, 45) * DAY - seq)
            verdicts["v%d" % seq] = v
        if k % 10 in (8, 9):
            del doc["guest_id"]     # an older metalcapd
            if k % 10 == 9:         # a clone of the ninth's image
                doc["instance_id"] = last["instance_id"]
        elif k % 7 == 6 and "guest_id" in last:
            # Another user of the guest before: its verdicts, a minute before.
            doc["guest_id"] = last["guest_id"]
            verdicts = copy.deepcopy(last["verdicts"])
            for v in verdicts.values():
                v["date"] -= 60
        doc["verdicts"] = verdicts
        last = doc
        yield "g%d" % k, doc
    # A model only two guests passed, one of them with two users: three
    # users, two guests, not allowed.
    for k, guest_id in enumerate(["%032x" % rnd.getrandbits(128)] * 2 +
                                 ["%032x" % rnd.getrandbits(128)]):
        doc = copy.deepcopy(template)
        doc["instance_id"] = "%032x" % rnd.getrandbits(128)
        doc["guest_id"] = guest_id
        v = dict(base)
        v.update(seq=1, model_sha256="cd" * 32, verdict="pass",
                 date=now - DAY)
        doc["verdicts"] = {"v1": v}
        yield "rare%d" % k, doc


def write_json(home, doc):
    """status.json beside status.plist, as metalcapd writes both: jobs
    and verdicts as arrays (the plist keys them by name and vSEQ)."""
    j = dict(doc)
    j["jobs"] = list(doc.get("jobs", {}).values())
    j["verdicts"] = sorted(doc.get("verdicts", {}).values(),
                           key=lambda v: v["seq"])
    with open(os.path.join(os.path.dirname(home + oq.STATUS),
                           "status.json"), "w") as f:
        json.dump(j, f)


def by_guest(rows):
    """Each row's guest: its guest id, or, for a row without (from before
    its guest's upgrade), the one another row of its instance id has."""
    known = {r["instance_id"]: r["guest_id"] for r in rows
             if r.get("guest_id")}
    return lambda r: r.get("guest_id") or known.get(r["instance_id"]) or \
        r["instance_id"]


def rule(rows, now, min_guests=3, window_days=30, guest=None):
    """The allowlist's rule, written from metalcap(5), not from C."""
    guest = guest or by_guest(rows)
    combos = {}
    seen = set()
    for r in rows:
        if int(r["date"]) < now - window_days * DAY:
            continue
        key = tuple(r[k] for k in KEYS)
        # A verdict's copies (logged again) are one verdict.
        copy_of = (key, r["date"], guest(r), r["verdict"])
        if copy_of in seen:
            continue
        seen.add(copy_of)
        combos.setdefault(key, []).append(r)
    out = {}
    for key, rs in combos.items():
        passes = [r for r in rs if r["verdict"] == "pass"]
        last = max((int(r["date"]) for r in passes), default=None)
        failed_since = [r for r in rs if r["verdict"] == "fail" and
                        last is not None and int(r["date"]) >= last]
        guests_passed = len({guest(r) for r in passes})
        out["|".join(key)] = {
            "guests_passed": guests_passed,
            "failed": len(rs) - len(passes),
            "allowed": guests_passed >= min_guests and last is not None and
            not failed_since}
    return out


def jamf(ctl, out):
    """DIR/jamf.csv: Jamf Pro's export of the extension attribute, one
    computer a line, its cell what pkg/fleet/metalcap-jamf-ea.sh puts in
    <result>: "USER: LINE" of metalcapctl report --user-home. And one
    more computer whose job's reason (text a client can make a server
    log) carries a forged verdict after the ';', for a combination no
    guest has, and one more after a comma there: they must not be
    read."""
    import csv
    import subprocess
    users = sorted(os.listdir(os.path.join(out, "Users")))
    # Short enough to stand whole in report's 200 bytes of reason, so
    # that only the rule (nothing after ';' is read) keeps it out.
    fake = ",".join(["f" * 8, "apple9", "pass", str(int(time.time())),
                     "build%20999%2C%20commit%20f0f0f0f", "0" * 8,
                     "25B78", "Apple%20M1", "VirtualMac2%2C1", "0.1.0"])
    # And one in another column (a computer's name), outside any entry.
    named = fake.replace("f0f0f0f", "e0e0e0e")
    # And one after a comma in the reason, dressed as a user's entry of
    # its own (a comma in a quoted cell is no cell's end: issue 48, 4).
    comma = fake.replace("f0f0f0f", "d0d0d0d")
    # And one after a lone quote, in a plain export (DIR/plain.txt, the
    # report lines as they are): no quote of a reason ends an entry.
    quote = fake.replace("f0f0f0f", "c0c0c0c")
    reasons = {"forger": "log: x verdict=" + fake,
               "forger2": "log: x, y: ok version=0.1.0 jobs=1 verdict=" +
               comma,
               "forger3": 'log: x" y: ok version=0.1.0 jobs=1 verdict=' +
               quote}
    for name, reason in reasons.items():
        state = os.path.dirname(os.path.join(out, "Users", name) +
                                oq.STATUS)
        os.makedirs(state, exist_ok=True)
        with open(os.path.join(state, "status.json"), "w") as f:
            json.dump({"instance_id": "e" * 32, "version": "0.1.0",
                       "jobs": [{"name": "llama", "state": "reverted",
                                 "reason": reason}],
                       "verdicts": []}, f)
    lines = {}
    for name in users + sorted(reasons):
        r = subprocess.run([ctl, "report", "--user-home",
                            os.path.join(out, "Users", name)],
                           capture_output=True, text=True)
        lines[name] = "%s: %s" % (name, r.stdout.strip())
    with open(os.path.join(out, "jamf.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Computer Name", "Serial Number", "metalcap"])
        for name in users + sorted(reasons):
            w.writerow([name if name != "forger" else
                        "forger verdict=" + named, "VM" + name.upper(),
                        lines[name]])
    with open(os.path.join(out, "plain.txt"), "w") as f:
        f.write("".join(lines[n] + "\n" for n in users + ["forger3"]))


def main(argv):
    if argv and argv[0] == "jamf":
        jamf(argv[1], argv[2])
        return
    template_path, n, seed, out = argv[0], int(argv[1]), int(argv[2]), argv[3]
    with open(template_path, "rb") as f:
        template = plistlib.load(f)
    now = int(time.time())
    # The guest whose file the template is, as it is.
    home = os.path.join(out, "Users", "self")
    os.makedirs(os.path.dirname(home + oq.STATUS), exist_ok=True)
    with open(home + oq.STATUS, "wb") as f:
        plistlib.dump(template, f)
    write_json(home, template)
    users = [("self", home)]
    for name, doc in guests(template, n, seed, now):
        home = os.path.join(out, "Users", name)
        state = os.path.dirname(home + oq.STATUS)
        os.makedirs(state, exist_ok=True)
        with open(home + oq.STATUS, "wb") as f:
            plistlib.dump(doc, f)
        write_json(home, doc)
        users.append((name, home))
    queries = oq.run_queries(os.path.join(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))), "pkg", "fleet",
        "metalcap.sql"), users)
    columns = ["username", "instance_id", "verdict_id", "profile",
               "verdict", "date", "llama_build", "program_sha256",
               "model_sha256", "os_build", "cpu_brand", "hw_model",
               "shim_version", "guest_id"]
    rows = [dict(zip(columns, r)) for r in queries[3]]
    # One guest in ten upgraded within the window: its rows of before,
    # with no guest id, come again from osquery's differential log.
    before = [dict(r, guest_id="") for r in rows
              if r["username"][1:].isdigit() and int(r["username"][1:]) %
              10 == 5]
    # And rows osquery reports removed, which no guest has: failures on
    # a combination allowed, which must not count.
    allowed = [r for r in rows if r["verdict"] == "pass" and
               rule(rows, now)["|".join(r[k] for k in KEYS)]["allowed"]]
    gone = [dict(r, verdict="fail", date=str(now - 10))
            for r in allowed[:2]]
    with open(os.path.join(out, "rows.json"), "w") as f:
        json.dump(rows, f)
        f.write("\n")
        for r in before[:len(before) // 2]:
            f.write(json.dumps({"name": "metalcap_verdicts",
                                "action": "added", "columns": r}) + "\n")
        f.write(json.dumps({"name": "metalcap_verdicts",
                            "action": "removed", "columns": gone[0]}) + "\n")
        f.write(json.dumps({"name": "metalcap_verdicts", "diffResults": {
            "added": before[len(before) // 2:],
            "removed": gone[1:]}}) + "\n")
    if not before or len(gone) < 2:
        sys.exit("make_fleet.py: no upgraded guest or allowed combination")
    rows = rows + before
    want = rule(rows, now)
    # The fleet is one where counting users, not guests, would differ.
    by_user = rule(rows, now, guest=lambda r: r["instance_id"])
    if not any(by_user[k]["allowed"] != want[k]["allowed"] for k in want):
        sys.exit("make_fleet.py: no combination that counting users "
                 "instead of guests would allow")
    with open(os.path.join(out, "want.json"), "w") as f:
        json.dump(want, f, sort_keys=True)
    print(len(rows))


if __name__ == "__main__":
    main(sys.argv[1:])

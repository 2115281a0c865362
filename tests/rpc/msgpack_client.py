#!/usr/bin/python3
"""metalcapd driven by python3-msgpack over a raw socket: every method, the
error shape, events, and the malformed shapes other client libraries send.

    msgpack_client.py SOCKET JOB

Exits 0 when every check holds; each failure is printed.  Uses Debian's
python3-msgpack (an implementation no one here wrote)."""
import socket
import sys

import msgpack

from checks import check, finish

SOCK, JOB = sys.argv[1], sys.argv[2]


class Conn:
    def __init__(self):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(20)
        self.s.connect(SOCK)
        self.u = msgpack.Unpacker(raw=False)
        self.events = []
        self.msgid = 100

    def send(self, obj, use_bin_type=True):
        self.s.sendall(msgpack.packb(obj, use_bin_type=use_bin_type))

    def next(self):
        """The next message from the daemon; None at EOF."""
        for msg in self.u:
            return msg
        while True:
            data = self.s.recv(65536)
            if not data:
                return None
            self.u.feed(data)
            for msg in self.u:
                return msg

    def reply(self, msgid):
        """The response to msgid; notifications on the way are kept."""
        while True:
            msg = self.next()
            if msg is None:
                return None
            if msg[0] == 2:
                self.events.append(msg)
            elif msg[0] == 1 and msg[1] == msgid:
                return msg

    def call(self, method, *params):
        self.msgid += 1
        self.send([0, self.msgid, method, list(params)])
        return self.reply(self.msgid)

    def alive(self):
        r = self.call("hello")
        return r is not None and r[2] is None


def is_error(resp, code):
    """[1, id, [type, "CODE: message"], nil] with type 0 or 1."""
    if resp is None or resp[3] is not None:
        return False
    err = resp[2]
    return (isinstance(err, list) and len(err) == 2 and err[0] in (0, 1)
            and isinstance(err[1], str) and err[1].startswith(code + ": "))


c = Conn()

# --- every method --------------------------------------------------------
r = c.call("hello")
check(r[2] is None and r[3]["protocol"] == 3 and r[3]["pid"] > 0,
      "hello: protocol 3 and a pid")
r = c.call("status")
check(any(j["name"] == JOB for j in r[3]), "status lists the job")
r = c.call("status", JOB)
check(len(r[3]) == 1 and r[3][0]["state"] == "unlocked", "status JOB")
r = c.call("profile.list")
check({"stock", "apple7", "apple9"} <= {p["name"] for p in r[3]},
      "profile.list has the built-in profiles")
r = c.call("probe", {"profile": "apple9"})
check(r[2] is None and r[3]["status"] == "pass", "probe {profile}")
r = c.call("probe", JOB)
check(r[2] is None and r[3]["profile"] == "apple9", "probe JOB")
quiet = Conn()  # never subscribes: it hears no event
check(quiet.alive(), "a second connection")
r = c.call("subscribe")
check(r[2] is None and r[3] is True, "subscribe")

# --- replies describe the job with the change applied ----------------------
r = c.call("disable", JOB)[3]
check(r["unlocked"] is False and r["desired"] == "stock" and
      r["next_state"] == "stock", "disable answers the job as disabled: %s"
      % {k: r[k] for k in ("state", "next_state", "desired", "unlocked")})
r = c.call("enable", JOB)[3]
check(r["unlocked"] is True and r["desired"] == "unlocked" and
      r["next_state"] in ("unlocked", "probing"),
      "enable answers the job as enabled: %s"
      % {k: r[k] for k in ("state", "next_state", "desired", "unlocked")})
r = c.call("profile.set", JOB, "apple7")[3]
check(r["profile"] == "apple7", "profile.set answers with the new profile")
r = c.call("stop", JOB)[3]
check(r["desired"] == "stopped" and r["next_state"] == "stopped",
      "stop answers the job as stopping")
r = c.call("start", JOB)[3]
check(r["desired"] == "unlocked" and r["next_state"] != "stopped",
      "start answers the job as starting")
r = c.call("restart", JOB)
check(r[2] is None and r[3]["name"] == JOB, "restart")
r = c.call("reload")
check(r[2] is None and r[3] is True, "reload")
changes = [e[2][0]["request"] for e in c.events
           if e[1] == "event" and e[2][0]["type"] == "change"]
check(changes == ["disable", "enable", "profile.set", "stop", "start",
                  "restart"], "a change event for every change: %s" % changes)
check(all(e[2][0]["job"]["name"] == JOB for e in c.events),
      "events carry the job")
# Sent before this reply, any event for it would have come first.
check(quiet.alive() and quiet.events == [],
      "no event for a connection that did not subscribe: %s" % quiet.events)

# --- errors: [type, "CODE: message"] -------------------------------------
check(is_error(c.call("status", "nosuchjob"), "ENOJOB"), "ENOJOB")
check(is_error(c.call("frobnicate"), "EPROTO"), "unknown method: EPROTO")
check(is_error(c.call("enable"), "EINVAL"), "too few params: EINVAL")
check(is_error(c.call("profile.set", JOB, "nosuch"), "ENOPROFILE"),
      "ENOPROFILE")
# Names are 1 to 64 bytes: 64 is a name (of no profile here), 65 is not.
check(is_error(c.call("probe", {"profile": "p" * 64}), "ENOPROFILE"),
      "a profile name of 64 bytes: ENOPROFILE")
check(is_error(c.call("probe", {"profile": "p" * 65}), "EINVAL"),
      "a profile name of 65 bytes: EINVAL")
check(is_error(c.call("subscribe", {"call": "no spaces"}), "EINVAL"),
      "subscribe with a bad function name: EINVAL")

# Each method's count of parameters, as metalcap-rpc(7) states it: one
# fewer than the least and one more than the most are EINVAL, and name
# the counts; nothing is done (the job stays as it was).
ARITY = {"hello": (0, 1), "status": (0, 1), "enable": (1, 2),
         "disable": (1, 1), "profile.set": (2, 2), "profile.list": (0, 0),
         "start": (1, 1), "stop": (1, 1), "restart": (1, 1),
         "reload": (0, 0), "subscribe": (0, 1), "probe": (1, 1)}
before = c.call("status", JOB)[3][0]
for method, (least, most) in sorted(ARITY.items()):
    counts = [most + 1] + ([least - 1] if least > 0 else [])
    for n in counts:
        r = c.call(method, *([JOB] * n))
        check(is_error(r, "EINVAL") and
              ("takes %d to %d parameters, got %d" % (least, most, n))
              in r[2][1], "%s with %d parameters: EINVAL (%s)" %
              (method, n, r[2] if r else None))
after = c.call("status", JOB)[3][0]
# What a request would change, not the state (a restart before may
# still be on its way, under valgrind for seconds).
check(all(before[k] == after[k] for k in ("desired", "profile",
                                          "unlocked")),
      "requests of the wrong count changed nothing: %s, then %s" %
      ({k: before[k] for k in ("desired", "profile", "unlocked")},
       {k: after[k] for k in ("desired", "profile", "unlocked")}))

# --- strings as bin or raw, as older packers write them ------------------
c.send([0, 7, b"hello", []])
r = c.reply(7)
check(r is not None and r[2] is None, "a method name sent as bin")
c.send([0, 8, b"status", [b"%s" % JOB.encode()]])
r = c.reply(8)
check(r is not None and r[2] is None and r[3][0]["name"] == JOB,
      "a job name sent as bin")
c.send([0, 9, "status", [JOB]], use_bin_type=False)
r = c.reply(9)
check(r is not None and r[2] is None, "strings sent as old raw")

# --- malformed requests: an error reply, the connection stays ------------
for msgid, msg, what in [
        (20, [0, 20, "status", {"job": JOB}], "params a map"),
        (21, [0, 21, "status", None], "params nil"),
        (22, [0, 22, "status", 5], "params a scalar"),
        (23, [0, 23, "hello"], "3 elements"),
        (24, [0, 24, "hello", [], "extra"], "5 elements"),
        (25, [0, 25, 42, []], "method an integer"),
        (26, [0, 26, "x" * 65, []], "method over 64 bytes")]:
    c.send(msg)
    check(is_error(c.reply(msgid), "EPROTO"), "malformed (%s): EPROTO" % what)
check(c.alive(), "the connection still serves")

# Pipelined around a bad one: every request answered, in order.
c.s.sendall(msgpack.packb([0, 30, "hello", []]) +
            msgpack.packb([0, 31, "hello", None]) +
            msgpack.packb([0, 32, "hello", []]))
got = [c.next() for _ in range(3)]
check([m[1] for m in got] == [30, 31, 32] and got[1][2] is not None and
      got[0][2] is None and got[2][2] is None,
      "pipelined requests around a bad one all answered in order")

# More than the daemon queues at once (64), in one write that it reads
# whole: every one answered, in order, and the connection kept.
c.s.sendall(b"".join(msgpack.packb([0, 1000 + i, "hello", []])
                     for i in range(200)))
got = [c.next() for _ in range(200)]
check([m[1] if m else None for m in got] == list(range(1000, 1200)) and
      all(m[2] is None for m in got),
      "200 requests in one write all answered in order")
check(c.alive(), "the connection still serves after 200 pipelined")

# --- notifications, responses and other msgpack from a client: ignored ---
for msg in [[2, "hello", []], [2, b"nvim_set_client_info", ["x", {}]],
            [2, "x"], [2, 5, 6, 7], [1, 3, None, True], [1, "x"],
            42, "text", {"a": 1}, [], [9, 1, 2, 3], [0, -1, "hello", []]]:
    c.send(msg)
check(c.alive(), "notifications, responses and stray msgpack are ignored")

# --- bytes that are not msgpack close the connection ---------------------
c.s.sendall(b"\xc1")
check(c.next() is None, "bytes that are not msgpack close the connection")

# --- and the daemon serves a new one -------------------------------------
check(Conn().alive(), "a new connection is served")

finish()

#!/usr/bin/python3
"""metalcapd driven by pynvim's msgpack-RPC session, as a pynvim user would:
socket_session(path), then request(); errors raise NvimError with the
message (pynvim's own error_wrapper, as Nvim.from_session sets it), and
events arrive as notifications from next_message().

    pynvim_client.py SOCKET JOB

Uses Debian's python3-pynvim, which no one here wrote."""
import sys

from pynvim import socket_session
from pynvim.api.common import NvimError, decode_if_bytes

from checks import check, finish

SOCK, JOB = sys.argv[1], sys.argv[2]


# socket_session() opens with a nvim_set_client_info notification whose
# method name is msgpack bin; the first request must still be answered.
session = socket_session(SOCK)
session.error_wrapper = lambda e: NvimError(decode_if_bytes(e[1]))

hello = session.request("hello")
check(hello["protocol"] == 3, "hello: %r" % hello)
check(any(j["name"] == JOB for j in session.request("status")), "status")
check(session.request("status", JOB)[0]["name"] == JOB, "status JOB")
check(len(session.request("profile.list")) >= 3, "profile.list")
check(session.request("probe", {"profile": "stock"})["status"] == "pass",
      "probe {profile}")
check(session.request("probe", JOB)["profile"] == "apple9", "probe JOB")
check(session.request("subscribe") is True, "subscribe")
check(session.request("disable", JOB)["unlocked"] is False, "disable")
check(session.request("enable", JOB, {"profile": "apple9"})["unlocked"]
      is True, "enable {profile}")
check(session.request("profile.set", JOB, "apple9")["profile"] == "apple9",
      "profile.set")
check(session.request("stop", JOB)["desired"] == "stopped", "stop")
check(session.request("start", JOB)["desired"] == "unlocked", "start")
check(session.request("restart", JOB)["name"] == JOB, "restart")
check(session.request("reload") is True, "reload")

try:
    session.request("status", "nosuchjob")
    check(False, "an unknown job raises")
except NvimError as e:
    check(str(e) == "ENOJOB: no job named nosuchjob",
          "an error raises NvimError with the message: %s" % e)

# A notification from the client is ignored; the session goes on.
session.request("hello", async_=True)
check(session.request("hello")["protocol"] == 3, "after a notification")

requests = []
while True:
    msg = session.next_message()
    if msg is None or msg[0] != "notification":
        break
    ev = msg[2][0]
    if msg[1] == "event" and ev["type"] == "change":
        requests.append(ev["request"])
    if requests and requests[-1] == "restart":
        break
check(requests == ["disable", "enable", "profile.set", "stop", "start",
                   "restart"], "change events: %s" % requests)
session.close()

finish()

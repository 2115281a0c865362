#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""make bench-supervisor: metalcapd beside supervisord, in one run.

The same 100 long-running programs (/usr/bin/sleep) under each manager, in
a temporary folder, talking over unix sockets only (nothing listens on the
network).  metalcapd drives the launchctl SIMULATOR, which stands in for
launchd; the figures are the managers' own.  Debian's supervisor and
python3-msgpack are installed by this script when missing (and so it runs
with Debian's own /usr/bin/python3, which sees them).

Compared, each pair with its ratio (metalcapd / supervisord):
  - status of all programs from the CLI (metalcapctl status, supervisorctl
    status): wall time per run, median of 20
  - a control-plane round trip from a client library, one program's status
    on a kept connection: msgpack-RPC over metalcapd's socket against
    XML-RPC getProcessInfo over supervisord's: median of 2000
  - resident memory of the manager process
  - idle CPU of the manager over BENCH_IDLE_S seconds (default 60)

    bench/bench_supervisor.py BUILD_DIR
"""
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import xmlrpc.client

N = 100
SLEEP = "/usr/bin/sleep"


def ensure_packages():
    missing = [p for p in ("supervisor", "python3-msgpack")
               if subprocess.run(["dpkg-query", "-W", "-f=${Status}", p],
                                 capture_output=True, text=True).stdout
               != "install ok installed"]
    if not missing:
        return
    root = [] if os.geteuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    print("bench-supervisor: installing " + " ".join(missing), flush=True)
    subprocess.run(root + ["apt-get", "update", "-qq"], check=True, env=env)
    # Installed, not started: the package's own service stays off.
    subprocess.run(root + ["apt-get", "install", "-y", "-qq",
                           "--no-install-recommends"] + missing, check=True,
                   env=env, stdout=subprocess.DEVNULL)
    subprocess.run(root + ["sh", "-c", "service supervisor stop || true"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def proc_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def proc_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def timed_runs(argv, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


class MetalcapClient:
    """msgpack-RPC over metalcapd's unix socket (common/protocol.h)."""

    def __init__(self, path):
        import msgpack
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.unpacker = msgpack.Unpacker(raw=False)
        self.packb = msgpack.packb
        self.msgid = 0

    def call(self, method, *params):
        self.msgid += 1
        self.sock.sendall(self.packb([0, self.msgid, method, list(params)]))
        while True:
            for msg in self.unpacker:
                if msg[0] == 1 and msg[1] == self.msgid:
                    if msg[2] is not None:
                        raise RuntimeError(msg[2])
                    return msg[3]
            self.unpacker.feed(self.sock.recv(65536))


def start_metalcapd(tmp, build):
    home = os.path.join(tmp, "mc")
    os.makedirs(os.path.join(home, "jobs.d"))
    for i in range(N):
        with open(os.path.join(home, "jobs.d", f"p{i}.plist"), "w") as f:
            f.write('<plist version="1.0"><dict><key>ProgramArguments</key>'
                    f'<array><string>{SLEEP}</string><string>100000</string>'
                    '</array><key>Unlocked</key><false/></dict></plist>\n')
    env = dict(os.environ, LAUNCHCTL_SIM_DIR=os.path.join(tmp, "launchd"),
               LAUNCHCTL_SIM_THROTTLE="1")
    proc = subprocess.Popen([os.path.join(build, "bin/metalcapd"), "--home",
                             home, "--launchctl",
                             os.path.join(build, "tests/launchctl-sim")],
                            env=env, stderr=subprocess.DEVNULL)
    sock = os.path.join(home, "metalcapd.sock")
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            jobs = MetalcapClient(sock).call("status")
            if sum(1 for j in jobs if j["pid"]) == N:
                return proc, home, env
        except (OSError, RuntimeError):
            pass
        time.sleep(0.1)
    raise SystemExit("bench-supervisor: metalcapd did not start its jobs")


def start_supervisord(tmp):
    conf = os.path.join(tmp, "supervisord.conf")
    sock = os.path.join(tmp, "supervisor.sock")
    with open(conf, "w") as f:
        f.write(f"""[unix_http_server]
file={sock}
chmod=0700

[supervisord]
logfile={tmp}/supervisord.log
pidfile={tmp}/supervisord.pid
childlogdir={tmp}
nodaemon=false

[rpcinterface:supervisor]
supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface

[supervisorctl]
serverurl=unix://{sock}

[program:p]
command={SLEEP} 100000
process_name=%(program_name)s%(process_num)d
numprocs={N}
autostart=true
autorestart=true
stdout_logfile={tmp}/%(program_name)s%(process_num)d.out.log
stderr_logfile={tmp}/%(program_name)s%(process_num)d.err.log
""")
    subprocess.run(["supervisord", "-c", conf], check=True)
    from supervisor.xmlrpc import SupervisorTransport
    server = xmlrpc.client.ServerProxy(
        "http://127.0.0.1", transport=SupervisorTransport(
            None, None, "unix://" + sock))
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if sum(1 for p in server.supervisor.getAllProcessInfo()
                   if p["statename"] == "RUNNING") == N:
                break
        except (OSError, xmlrpc.client.Fault):
            pass
        time.sleep(0.1)
    else:
        raise SystemExit("bench-supervisor: supervisord did not start its "
                         "programs")
    with open(os.path.join(tmp, "supervisord.pid")) as f:
        pid = int(f.read())
    return pid, conf, server


def round_trips(call, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        call()
        times.append((time.perf_counter() - t) * 1e6)
    return statistics.median(times)


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: bench_supervisor.py BUILD_DIR")
    build = os.path.abspath(sys.argv[1])
    idle_s = int(os.environ.get("BENCH_IDLE_S", "60"))
    ensure_packages()
    tmp = tempfile.mkdtemp(prefix="mc-vs-supervisor.")
    mc = sup_pid = conf = None
    try:
        mc, home, env = start_metalcapd(tmp, build)
        sup_pid, conf, server = start_supervisord(tmp)
        time.sleep(2)
        rows = []
        rows.append(("status of 100 programs, CLI (ms)",
                     timed_runs([os.path.join(build, "bin/metalcapctl"),
                                 "--home", home, "status"], 20),
                     timed_runs(["supervisorctl", "-c", conf, "status"], 20)))
        client = MetalcapClient(os.path.join(home, "metalcapd.sock"))
        rows.append(("one program's status, client library (us)",
                     round_trips(lambda: client.call("status", "p0"), 2000),
                     round_trips(lambda: server.supervisor.getProcessInfo(
                         "p:p0"), 2000)))
        rows.append(("manager RSS (KiB)", proc_rss_kib(mc.pid),
                     proc_rss_kib(sup_pid)))
        t_mc, t_sup = proc_ticks(mc.pid), proc_ticks(sup_pid)
        time.sleep(idle_s)
        rows.append((f"manager CPU idle {idle_s} s (ticks)",
                     proc_ticks(mc.pid) - t_mc, proc_ticks(sup_pid) - t_sup))
        print(f"metalcapd vs supervisord, {N} programs "
              f"(supervisor {subprocess.run(['supervisord', '--version'], capture_output=True, text=True).stdout.strip()})")
        print("\n| figure | metalcapd | supervisord | ratio |\n"
              "|---|---|---|---|")
        for name, a, b in rows:
            ratio = f"{a / b:.2f}" if b else ("-" if a == 0 else "inf")
            print(f"| {name} | {a:.1f} | {b:.1f} | {ratio} |")
    finally:
        if sup_pid:
            subprocess.run(["supervisorctl", "-c", conf, "shutdown"],
                           stdout=subprocess.DEVNULL)
        if mc:
            mc.terminate()
            mc.wait()
            sim = os.path.join(build, "tests/launchctl-sim")
            listed = subprocess.run([sim, "list"], env=env,
                                    capture_output=True, text=True).stdout
            for line in listed.splitlines()[1:]:
                subprocess.run([sim, "bootout", f"gui/{os.getuid()}/"
                                + line.split("\t")[2]], env=env,
                               stderr=subprocess.DEVNULL)
        time.sleep(1)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

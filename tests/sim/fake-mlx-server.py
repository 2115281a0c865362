#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""SIMULATOR workload: a stand-in for mlx_lm.server, for tests of what
metalcapd makes of an MLX job's stderr.  MLX cannot run on Linux; what is
modelled is what mlx_lm.server writes (tests/sim/README.md, "MLX"):

  - Python's logging to stderr in the server's own format,
    "%(asctime)s - %(levelname)s - %(message)s" (mlx_lm/server.py:1861-1864);
  - a body that is not JSON logged raw, newlines and all:
    logging.error(f"JSONDecodeError: {e} - Raw body: {raw_body.decode()}")
    (mlx_lm/server.py:1084-1088), so every line of the body a client sent
    starts a line of the log, the last one last;
  - the device made at start, as `import mlx.core` makes it (here through
    the simulated Metal the shim loaded, so the shim reports the process).

  fake-mlx-server.py [--body FILE] [--die-once FILE SIG]
    --body      a client's request body, handled once at start
    --die-once  its first run (FILE does not exist yet; it is made) dies
                of SIG (ABRT, SEGV) right after the body is logged: a
                request that crashes the server; later runs serve
Otherwise it serves (sleeps) until SIGTERM.
"""

import ctypes
import json
import logging
import os
import signal
import sys
import time


def make_device():
    # The shim (LD_PRELOAD) links the simulated Metal: its symbols are in
    # the process's global scope, as Metal.framework is in MLX's.
    metal = ctypes.CDLL(None)
    metal.MTLCreateSystemDefaultDevice.restype = ctypes.c_void_p
    if not metal.MTLCreateSystemDefaultDevice():
        sys.exit("fake-mlx-server: no Metal device")


def handle(raw_body):
    # mlx_lm/server.py:1084-1088, the same words.
    try:
        json.loads(raw_body.decode())
    except json.JSONDecodeError as e:
        logging.error(f"JSONDecodeError: {e} - Raw body: {raw_body.decode()}")


def main(argv):
    body = die_file = None
    die_sig = signal.SIGABRT
    i = 1
    while i < len(argv):
        if argv[i] == "--body" and i + 1 < len(argv):
            body = argv[i + 1]
            i += 2
        elif argv[i] == "--die-once" and i + 2 < len(argv):
            die_file, die_sig = argv[i + 1], getattr(signal, "SIG" +
                                                     argv[i + 2])
            i += 3
        else:
            sys.stderr.write("usage: fake-mlx-server.py [--body FILE] "
                             "[--die-once FILE SIG]\n")
            return 2
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s - %(levelname)s - %(message)s")
    make_device()
    logging.info("Starting httpd at 127.0.0.1 on port 8080...")
    if body is not None:
        with open(body, "rb") as f:
            handle(f.read())
    if die_file is not None and not os.path.exists(die_file):
        open(die_file, "w").close()
        signal.signal(die_sig, signal.SIG_DFL)
        os.kill(os.getpid(), die_sig)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

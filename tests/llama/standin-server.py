#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A stand-in for llama-server that test_llama_e2e must refuse.

    standin-server.py [llama-server's arguments]

The audit's 50-line stand-in (issue 46, finding 16): it takes
llama-server's arguments, says the lines and answers the routes the tests
read (/health, /props, /v1/models, /completion), ends with status 0 on
SIGTERM and prints a --version of another build; it loads no model and
predicts no token.  test_llama_e2e points its harness at a folder where
this is llama-server, and the provenance check must refuse it.  Knobs of
the test: STANDIN_PIDS=FILE appends its pid to FILE; STANDIN_UNREADY=1
answers /health with 503 (loading) for ever.
"""
import http.server
import json
import os
import signal
import sys

BUILD, COMMIT = 10167, "5e1f0c3a"


def main():
    args = sys.argv[1:]
    if "--version" in args:
        sys.stderr.write("version: 0.4.0-dev (build %d, commit %s)\n"
                         "built with GNU 12.2.0 for Linux x86_64\n"
                         % (BUILD, COMMIT))
        return 0
    model = args[args.index("-m") + 1] if "-m" in args else ""
    port = int(args[args.index("--port") + 1]) if "--port" in args else 8080
    if os.environ.get("STANDIN_PIDS"):
        with open(os.environ["STANDIN_PIDS"], "a") as f:
            f.write("%d\n" % os.getpid())
    unready = os.environ.get("STANDIN_UNREADY") == "1"
    answers = {
        "/health": {"status": "ok"},
        "/props": {"build_info": "b%d-%s" % (BUILD, COMMIT),
                   "model_path": model},
        "/v1/models": {"data": [{"id": model, "meta": {}}]},
    }

    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/health" and unready:
                self.answer(503, {"error": {"message": "Loading model"}})
            else:
                self.answer(200, answers.get(self.path, {}))

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.answer(200, {"content": "", "tokens_predicted": 0})

        def log_message(self, *_):
            pass

    server = http.server.HTTPServer(("127.0.0.1", port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sys.stderr.write("main: server is listening on http://127.0.0.1:%d\n"
                     % port)
    sys.stderr.flush()
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())

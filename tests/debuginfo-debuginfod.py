#!/usr/bin/env python3
"""debuginfod: perfhubd --debuginfod URL fetches what no upload and no local
file gives, from the workers, with a timeout, and keeps it. A small HTTP
server on loopback plays debuginfod (/buildid/ID/debuginfo). The program
recorded now is gone from its path: the first parse fetches it and names
every frame (>= 99% agreement with perf script folded while it was in
place), the file is then in the store (HEAD 200); an unknown build-id is a
404 there and the profile still parses; a server that never answers costs
at most the timeout."""
import http.server
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfhubd_harness import SKIP, Daemon, builddir  # noqa: E402
from debuginfo_common import Recording, check, finish, resymbolize  # noqa: E402

class Debuginfod(http.server.BaseHTTPRequestHandler):
    files = {}          # build-id -> path
    asked = []
    stall = 0.0         # seconds to wait before answering

    def do_GET(self):
        Debuginfod.asked.append(self.path)
        if Debuginfod.stall:
            time.sleep(Debuginfod.stall)
        parts = self.path.strip("/").split("/")
        path = None
        if len(parts) == 3 and parts[0] == "buildid" and parts[2] == "debuginfo":
            path = Debuginfod.files.get(parts[1])
        if not path:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with open(path, "rb") as f:
            data = f.read()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    with open(os.path.join(builddir(), "config.h")) as f:
        if "#define HAVE_DEBUGINFOD 1" not in f.read():
            print("perfhubd was built without libdebuginfod")
            return SKIP
    rec = Recording()
    os.environ["HOME"] = rec.daemon_env()
    for k in ("DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH", "DEBUGINFOD_TIMEOUT",
              "DEBUGINFOD_MAXTIME", "DEBUGINFOD_RETRY_LIMIT"):
        os.environ.pop(k, None)
    os.environ["DEBUGINFOD_TIMEOUT"] = "3"
    os.environ["DEBUGINFOD_MAXTIME"] = "3"
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Debuginfod)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d" % httpd.server_address[1]
    Debuginfod.files[rec.build_id] = rec.binary
    try:
        with Daemon(args=["--debuginfod", url, "--local-uploads"]) as d:
            st, r = d.upload(rec.data)
            p = d.wait(r["id"])
            asked = [a for a in Debuginfod.asked if rec.build_id in a]
            print("debuginfod asked %d times (%d for the program)" %
                  (len(Debuginfod.asked), len(asked)))
            check(p["status"] == "ready", "parse: %r" % p)
            check(len(asked) == 1, "the program was fetched once: %r" % Debuginfod.asked)
            rec.check_named(d, r["id"], "debuginfod", p)
            st, _, _ = d.request("HEAD", "/api/v1/debuginfo/" + rec.build_id)
            check(st == 200, "the fetched file is kept in the store: HEAD %d" % st)
            # parsed again: the store answers, debuginfod is not asked again
            n = len(Debuginfod.asked)
            resymbolize(d, r["id"])
            check(not [a for a in Debuginfod.asked[n:] if rec.build_id in a],
                  "debuginfod asked again for a stored build-id")

        # a debuginfod that never answers in time: the parse still ends
        Debuginfod.files.clear()
        Debuginfod.stall = 30
        with Daemon(args=["--debuginfod", url, "--local-uploads"]) as d:
            t0 = time.time()
            st, r = d.upload(rec.data)
            p = d.wait(r["id"], timeout=120)
            took = time.time() - t0
            print("with a stalled debuginfod the parse took %.1f s" % took)
            check(p["status"] == "ready", "parse with a stalled debuginfod: %r" % p)
            check(took < 20, "the timeout bounds the wait: %.1f s" % took)
    finally:
        Debuginfod.stall = 0
        httpd.shutdown()

    return finish(rec)


if __name__ == "__main__":
    sys.exit(main())

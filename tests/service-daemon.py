#!/usr/bin/env python3
"""perfhubd as systemd runs it, without systemd:

- readiness (this test): a datagram socket as $NOTIFY_SOCKET; perfhubd
  must send READY=1, then serve GET / (the page, from --web-root) and
  /healthz; on SIGTERM it must send STOPPING=1 and exit 0.
  Then the example configuration, every setting uncommented, must be
  accepted by perfhubd.
- socket activation (tests/service-activation.py runs this file with
  --activation): systemd-socket-activate binds a port and passes it in
  LISTEN_FDS; perfhubd must answer on it although --listen names another
  port. Needs systemd-socket-activate.

Skips (77) when daemon/perfhubd is not built."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

SRC = os.environ.get("top_srcdir", os.path.join(os.path.dirname(__file__), ".."))
BLD = os.environ.get("top_builddir", ".")
DAEMON = os.path.join(BLD, "daemon", "perfhubd")
TMP = os.environ.get("PERFHUB_TEST_TMP", tempfile.gettempdir())


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read()


def wait_http(url, deadline):
    while time.time() < deadline:
        try:
            return get(url, 2)
        except OSError:
            time.sleep(0.1)
    return None


def daemon_args(work, port):
    return [os.path.abspath(DAEMON), "--listen", "127.0.0.1:%d" % port,
            "--db", os.path.join(work, "perfhub.db"), "--spool", os.path.join(work, "spool"),
            "--web-root", os.path.abspath(os.path.join(SRC, "web")), "--workers", "1"]


def readiness(work):
    sock_path = os.path.join(work, "notify.sock")
    ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ns.bind(sock_path)
    ns.settimeout(0.2)
    port = free_port()
    env = dict(os.environ, NOTIFY_SOCKET=sock_path)
    p = subprocess.Popen(daemon_args(work, port), env=env, stderr=open(os.path.join(work, "stderr.log"), "wb"))
    got = []
    try:
        deadline = time.time() + 15
        while time.time() < deadline and not any("READY=1" in m for m in got):
            if p.poll() is not None:
                print("FAIL: perfhubd exited with %d before READY=1" % p.returncode)
                return False
            try:
                got.append(ns.recv(4096).decode(errors="replace"))
            except socket.timeout:
                pass
        if not any("READY=1" in m for m in got):
            print("FAIL: no READY=1 on NOTIFY_SOCKET within 15 s (got %r)" % got)
            return False
        print("ok: READY=1 received")
        # ready means serving: no retry needed
        st, body = get("http://127.0.0.1:%d/" % port)
        page = open(os.path.join(SRC, "web", "index.html"), "rb").read()
        if st != 200 or body != page:
            print("FAIL: GET / did not return web/index.html (status %d, %d bytes)" % (st, len(body)))
            return False
        for asset in ("app.js", "flame.js", "style.css"):
            st, body = get("http://127.0.0.1:%d/%s" % (port, asset))
            if body != open(os.path.join(SRC, "web", asset), "rb").read():
                print("FAIL: GET /%s differs from web/%s" % (asset, asset))
                return False
        st, body = get("http://127.0.0.1:%d/healthz" % port)
        if st != 200 or b'"ok"' not in body:
            print("FAIL: /healthz: %d %r" % (st, body[:200]))
            return False
        print("ok: serves the page and /healthz after READY=1")
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=30)
        while True:
            try:
                got.append(ns.recv(4096).decode(errors="replace"))
            except (socket.timeout, OSError):
                break
        if rc != 0:
            print("FAIL: SIGTERM: exit status %d" % rc)
            return False
        if not any("STOPPING=1" in m for m in got):
            print("FAIL: SIGTERM: no STOPPING=1 on NOTIFY_SOCKET (got %r)" % got)
            return False
        print("ok: SIGTERM: STOPPING=1 sent, exit 0")
        return True
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        ns.close()


def activation(work):
    ssa = shutil.which("systemd-socket-activate")
    port, other = free_port(), free_port()
    args = [ssa, "-l", "127.0.0.1:%d" % port] + daemon_args(work, other)
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "activate.log"), "wb"))
    try:
        r = wait_http("http://127.0.0.1:%d/healthz" % port, time.time() + 15)
        if not r or r[0] != 200:
            print("FAIL: no answer on the socket passed in LISTEN_FDS (port %d)" % port)
            return False
        print("ok: socket activation: answers on the passed socket")
        return True
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def example_config(work):
    """Every setting of systemd/perfhubd.conf, uncommented (paths and the
    port pointed at the test's own), must be one perfhubd accepts."""
    port = free_port()
    values = {"listen": "127.0.0.1:%d" % port, "db": os.path.join(work, "perfhub.db"),
              "spool": os.path.join(work, "spool"), "watch": os.path.join(work, "watch"),
              "web-root": os.path.abspath(os.path.join(SRC, "web")),
              "token-file": os.path.join(work, "tokens")}
    os.makedirs(values["watch"], exist_ok=True)
    with open(values["token-file"], "w") as f:
        f.write("")
    keys = []
    conf = os.path.join(work, "perfhubd.conf")
    with open(os.path.join(SRC, "systemd", "perfhubd.conf")) as src, open(conf, "w") as out:
        for line in src:
            m = re.match(r"^#([a-z][a-z-]*) = (.*)$", line.rstrip("\n"))
            if m:
                keys.append(m.group(1))
                line = "%s = %s\n" % (m.group(1), values.get(m.group(1), m.group(2)))
            out.write(line)
    if not keys:
        print("FAIL: no settings found in systemd/perfhubd.conf")
        return False
    log = os.path.join(work, "config.log")
    p = subprocess.Popen([os.path.abspath(DAEMON), "--config", conf], stderr=open(log, "wb"))
    try:
        r = wait_http("http://127.0.0.1:%d/healthz" % port, time.time() + 15)
        if not r:
            print("FAIL: perfhubd --config with the example's settings did not start:")
            print(open(log).read()[-2000:])
            return False
        print("ok: example config accepted (%s)" % ", ".join(keys))
        return True
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def main():
    if not os.access(DAEMON, os.X_OK):
        print("SKIP: %s not built" % DAEMON)
        return 77
    if "--activation" in sys.argv[1:]:
        if not shutil.which("systemd-socket-activate"):
            print("SKIP: no systemd-socket-activate")
            return 77
        return 0 if activation(tempfile.mkdtemp(prefix="service-activate.", dir=TMP)) else 1
    ok = readiness(tempfile.mkdtemp(prefix="service-daemon.", dir=TMP))
    ok = example_config(tempfile.mkdtemp(prefix="service-config.", dir=TMP)) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

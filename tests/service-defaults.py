#!/usr/bin/env python3
"""perfhubd's defaults as a new user meets them:

- `--help`: every option's name stands apart from its description (a
  name wider than the column gets a line of its own, never
  "SECONDSseconds").
- the example perfhubd.conf names each setting once.
- `--db DIR/x.db` without --spool keeps the spool in DIR/spool, not in
  ./perfhub-data/spool.
- a start that cannot listen ("Address already in use") exits non-zero and
  creates neither the database nor the spool.
- the build tree's daemon/perfhubd without --web-root serves the page
  (web/index.html) at GET /.
Skips (77) when daemon/perfhubd is not built."""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfhubd_harness as H  # noqa: E402

SRC = os.environ.get("top_srcdir", os.path.join(os.path.dirname(__file__), ".."))
DAEMON = os.path.abspath(os.path.join(H.builddir(), "daemon", "perfhubd"))
check = H.Failures()


def help_text():
    out = subprocess.run([DAEMON, "--help"], capture_output=True, text=True, timeout=30).stdout
    bad = []
    for line in out.splitlines():
        m = re.match(r"  (--[a-z0-9-]+)( [A-Z][^ ]*)?(.*)$", line)
        if not m:
            continue
        rest = m.group(3)
        # the description starts after at least two spaces, or on the next line
        if rest and not rest.startswith("  "):
            bad.append(line.strip())
    check(out.count("--connection-timeout") == 1 and not bad,
          "--help runs option names into their descriptions: %r" % bad)
    print("ok: --help lists %d options, each name apart" % len(re.findall(r"^  --", out, re.M)))


def example_config():
    keys = re.findall(r"^#?([a-z-]+) = ", open(os.path.join(SRC, "systemd", "perfhubd.conf")).read(),
                      re.M)
    twice = sorted({k for k in keys if keys.count(k) > 1})
    check(not twice, "systemd/perfhubd.conf names %s more than once" % twice)
    print("ok: perfhubd.conf names %d settings once each" % len(keys))


def start(args, cwd):
    """(process, log text once listening, or None)."""
    p = subprocess.Popen([DAEMON, "--listen", "127.0.0.1:0", "--workers", "1"] + args, cwd=cwd,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = ""
    deadline = time.time() + 20
    while time.time() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        log += line
        if 'msg="listening"' in line:
            return p, log
    p.kill()
    p.wait()
    return p, None


def spool_beside_db(work):
    db = os.path.join(work, "state", "profiles.db")
    p, log = start(["--db", db], work)
    try:
        if not check(log is not None, "perfhubd --db did not start"):
            return
        spool = re.search(r'spool="([^"]*)"', log).group(1)
        check(os.path.abspath(os.path.join(work, spool)) == os.path.join(work, "state", "spool"),
              "--db %s put the spool at %s" % (db, spool))
        check(os.path.isdir(os.path.join(work, "state", "spool")), "no spool beside the database")
        check(not os.path.exists(os.path.join(work, "perfhub-data")),
              "--db alone created ./perfhub-data")
        print("ok: --db alone keeps the spool beside the database (%s)" % spool)
    finally:
        p.terminate()
        p.wait(30)


def address_in_use(work):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    try:
        r = subprocess.run([DAEMON, "--listen", "127.0.0.1:%d" % s.getsockname()[1],
                            "--db", os.path.join(work, "busy", "perfhub.db")], cwd=work,
                           capture_output=True, text=True, timeout=30)
    finally:
        s.close()
    check(r.returncode != 0, "perfhubd on a taken port exited %d" % r.returncode)
    check("Address already in use" in r.stderr, "no 'Address already in use' in: %s" % r.stderr)
    busy = os.path.join(work, "busy")
    check(not os.path.exists(busy), "a start that could not listen created %s: %s" %
          (busy, os.listdir(busy) if os.path.isdir(busy) else "a file"))
    print("ok: a start on a taken port exits %d and creates nothing" % r.returncode)


def page_from_build_tree(work):
    p, log = start(["--db", os.path.join(work, "page", "perfhub.db")], work)
    try:
        if not check(log is not None, "perfhubd without --web-root did not start"):
            return
        port = int(re.search(r"port=(\d+)", log).group(1))
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=10) as r:
                st, body = r.status, r.read()
        except OSError as e:
            st, body = str(e), b""
        want = open(os.path.join(SRC, "web", "index.html"), "rb").read()
        check(st == 200 and body == want,
              "GET / of the build tree's perfhubd without --web-root: %s, %d bytes" % (st, len(body)))
        print("ok: the build tree's perfhubd serves web/ without --web-root")
    finally:
        p.terminate()
        p.wait(30)


def main():
    if not os.access(DAEMON, os.X_OK):
        print("SKIP: %s not built" % DAEMON)
        return 77
    work = tempfile.mkdtemp(prefix="service-defaults.", dir=H.tmpdir("service-"))
    help_text()
    example_config()
    spool_beside_db(work)
    address_in_use(work)
    page_from_build_tree(work)
    return check.status()


if __name__ == "__main__":
    sys.exit(main())

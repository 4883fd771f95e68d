#!/usr/bin/env python3
"""perfhubd access: --token-file roles (401 without a token, 403 for a
read-only token on a write), reads open unless the file says otherwise,
SIGHUP reloads the file; static files only from the web root."""
import http.client
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import Daemon, check, tmpdir


def raw_get(d, path):
    """GET without any client-side path normalisation."""
    c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
    c.putrequest("GET", path, skip_accept_encoding=True)
    c.endheaders()
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def main():
    work = tmpdir("access-")
    tokfile = os.path.join(work, "tokens")
    with open(tokfile, "w") as f:
        f.write("# test tokens\nw-secret write\nr-secret read\n")
    web = os.path.join(work, "web")
    os.makedirs(web)
    with open(os.path.join(web, "index.html"), "w") as f:
        f.write("<html>perfhub</html>\n")
    with open(os.path.join(work, "secret.txt"), "w") as f:
        f.write("outside the web root\n")
    os.symlink(os.path.join(work, "secret.txt"), os.path.join(web, "link.txt"))
    body = b"PERFILE2 but not a recording"

    with Daemon(args=["--token-file", tokfile, "--web-root", web]) as d:
        st, r = d.upload(body)
        check(st == 401 and "error" in r, "no token: %s %r" % (st, r))
        st, r = d.upload(body, headers={"Authorization": "Bearer wrong"})
        check(st == 401, "bad token: %s" % st)
        st, r = d.upload(body, headers={"Authorization": "Bearer r-secret"})
        check(st == 403, "read token writing: %s" % st)
        st, r = d.upload(body, headers={"Authorization": "Bearer w-secret"})
        check(st == 202, "write token: %s %r" % (st, r))
        pid = r["id"]
        st, _ = d.json("GET", "/api/v1/profiles/%d" % pid)
        check(st == 200, "reads are open by default: %s" % st)
        st, _, _ = d.request("DELETE", "/api/v1/profiles/%d" % pid,
                             headers={"Authorization": "Bearer r-secret"})
        check(st == 403, "read token deleting: %s" % st)

        # the file now asks for tokens on reads too; SIGHUP reloads it
        with open(tokfile, "a") as f:
            f.write("require-read-token\n")
        d.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while time.time() < deadline:
            st, _ = d.json("GET", "/api/v1/profiles")
            if st == 401:
                break
            time.sleep(0.1)
        check(st == 401, "reload did not take: %s" % st)
        st, _ = d.json("GET", "/api/v1/profiles", headers={"Authorization": "Bearer r-secret"})
        check(st == 200, "read token reading: %s" % st)

        # static files: the web root only
        h = {"Authorization": "Bearer r-secret"}
        st, _, page = d.request("GET", "/", headers=h)
        check(st == 200 and b"perfhub" in page, "index: %s" % st)
        with open(tokfile, "w") as f:
            f.write("w-secret write\nr-secret read\n")
        d.proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        for path in ("/../secret.txt", "/%2e%2e/secret.txt", "/link.txt", "/../../etc/passwd",
                     "/nothing-here.html"):
            st, got = raw_get(d, path)
            check(st == 404 and b"outside" not in got and b"root:" not in got,
                  "%s served: %s" % (path, st))
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

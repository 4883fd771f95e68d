#!/usr/bin/env python3
"""Hostile HTTP: oversized headers and URIs, header floods, bad methods,
bad HTTP versions, path traversal against the web root (a secret beside
it is never served), bad and out-of-range parameters, bad ids and tags:
each answers the fitting 4xx/5xx status (JSON with an "error" where
perfhubd answers itself), and the daemon keeps serving."""
import json
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stress_lib as S  # noqa: E402
from perfhubd_harness import SKIP, Daemon, check, have_perf_record, tmpdir  # noqa: E402

SECRET = b"perfhub-secret-beside-the-web-root"


def raw(port, req, timeout=10):
    """Sends raw bytes; returns (status or None, body bytes)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    out = b""
    try:
        s.sendall(req)
        s.shutdown(socket.SHUT_WR)
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except (OSError, socket.timeout):
        pass
    finally:
        s.close()
    if not out.startswith(b"HTTP/1."):
        return None, out
    head, _, body = out.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def get(path):
    return b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    rec = S.make_recordings(tmpdir("http-"), 1)[0]
    root = tmpdir("webroot-")
    web = os.path.join(root, "web")
    os.mkdir(web)
    with open(os.path.join(web, "index.html"), "w") as f:
        f.write("<!doctype html><title>perfhub</title>")
    with open(os.path.join(root, "secret.txt"), "wb") as f:
        f.write(SECRET)
    os.symlink(os.path.join(root, "secret.txt"), os.path.join(web, "link.txt"))
    failures = []
    n = 0
    with Daemon(args=["--web-root", web]) as d:
        st, r = d.upload(rec.data)
        check(st == 202, "upload: %s" % st)
        pid = r["id"]
        check(d.wait(pid)["status"] == "ready", "profile ready")
        P = ("/api/v1/profiles/%d" % pid).encode()

        def expect(what, req, statuses, json_error=True):
            nonlocal n
            n += 1
            st, body = raw(d.port, req)
            if st not in statuses:
                failures.append("%s: got %s, want %s (%r)" % (what, st, statuses, body[:80]))
            elif json_error and st is not None and st >= 400:
                try:
                    if "error" not in json.loads(body):
                        raise ValueError
                except ValueError:
                    failures.append("%s: %s without a JSON error: %r" % (what, st, body[:80]))
            if SECRET in body or b"root:x:0:" in body:
                failures.append("%s: served a file outside the web root" % what)

        # sizes: the request head is capped (MHD's connection memory limit).
        # The answer comes while the client is still sending; the close that
        # follows may reset the connection before the client reads it (None).
        expect("300 KB header", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " +
               b"a" * 300000 + b"\r\n\r\n", (413, 431, None), False)
        expect("20000 headers", b"GET /healthz HTTP/1.1\r\nHost: x\r\n" +
               b"".join(b"X-H%d: v\r\n" % i for i in range(20000)) + b"\r\n",
               (413, 431, None), False)
        expect("300 KB URI", get(b"/" + b"a" * 300000), (414, 431, None), False)
        expect("300 KB header, read", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " +
               b"a" * 300000, (413, 431), False)
        expect("HTTP/9.9", b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", (505,), False)
        expect("no request line", b"garbage\r\n\r\n", (400, None), False)

        # methods
        for m, path in ((b"FOO", b"/api/v1/profiles"), (b"PATCH", P + b"/top"), (b"TRACE", b"/"),
                        (b"PUT", b"/api/v1/profiles"), (b"DELETE", b"/api/v1/profiles"),
                        (b"POST", P + b"/flamegraph"), (b"DELETE", b"/healthz"),
                        (b"POST", b"/metrics"), (b"POST", b"/index.html")):
            expect(m.decode() + " " + path.decode(), m + b" " + path +
                   b" HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", (405,))

        # path traversal against the web root; the secret sits beside it
        for path in (b"/../secret.txt", b"/%2e%2e/secret.txt", b"/..%2fsecret.txt",
                     b"/index.html/../../secret.txt", b"//secret.txt", b"/./../secret.txt",
                     b"/%2e%2e%2f%2e%2e%2fetc%2fpasswd", b"/../../../../etc/passwd",
                     b"/link.txt", b"/%00", b"/index.html%00.png", b"/index.html%00", b"/.", b"/..",
                     b"/..\\secret.txt", b"/%5c..%5csecret.txt"):
            expect("GET " + path.decode(), get(path), (400, 403, 404))
        st, body = raw(d.port, get(b"/index.html"))
        check(st == 200 and b"perfhub" in body, "the web root itself is served: %s" % st)

        # parameters
        bad = [b"/api/v1/profiles?limit=abc", b"/api/v1/profiles?limit=-1",
               b"/api/v1/profiles?limit=99999999999999999999", b"/api/v1/profiles?offset=x",
               b"/api/v1/profiles?status=bogus", b"/api/v1/profiles?since=yesterday",
               b"/api/v1/profiles?until=-3", b"/api/v1/profiles?tag=noequals",
               b"/api/v1/profiles?tag==v", b"/api/v1/profiles?tag=a=1&tag=b=2",
               P + b"/flamegraph?weight=bogus", P + b"/flamegraph?pid=-1",
               P + b"/flamegraph?tid=abc", P + b"/flamegraph?from_ns=x",
               P + b"/flamegraph?to_ns=-1", P + b"/collapsed?weight=", P + b"/collapsed?pid=1e3",
               P + b"/timeline?bucket_ms=0", P + b"/timeline?bucket_ms=abc",
               P + b"/top?limit=abc", P + b"/top?limit=0", P + b"/flamegraph?pid=1%00",
               b"/api/v1/diff", b"/api/v1/diff?base=abc&target=1",
               b"/api/v1/diff?base=%d" % pid, b"/api/v1/aggregate?group_by=bogus",
               b"/api/v1/aggregate?limit=x"]
        for path in bad:
            expect("GET " + path.decode(), get(path), (400,))
        for path in (b"/api/v1/profiles/abc", b"/api/v1/profiles/0", b"/api/v1/profiles/-1",
                     b"/api/v1/profiles/99999999999999999999", b"/api/v1/profiles/1x",
                     b"/api/v1/profiles/999999", b"/api/v1/profiles/999999/flamegraph",
                     P + b"/nonexistent", b"/api/v2/profiles", b"/api/v1/"):
            expect("GET " + path.decode(), get(path), (404,))
        # an upload's bad query is refused before anything is stored
        for q in (b"?tag=noequals", b"?" + b"&".join(b"tag=k%d=v" % i for i in range(40))):
            body = S.with_hostname(rec.data, "badquery")
            expect("POST tags " + q[:30].decode(), b"POST /api/v1/profiles" + q +
                   b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                   b"Content-Length: %d\r\n\r\n" % len(body) + body, (400,))
        st, lst = d.json("GET", "/api/v1/profiles")
        check(lst["total"] == 1, "a refused upload was stored: %s" % lst["total"])
        st, _ = d.json("GET", "/healthz")
        check(st == 200 and d.proc.poll() is None, "daemon down after hostile requests")
        check(not S.spool_litter(d.state), "spool litter")
    if failures:
        raise AssertionError("%d of %d requests answered wrongly:\n  %s" %
                             (len(failures), n, "\n  ".join(failures)))
    print("%d hostile requests: all answered as they should; daemon healthy" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""perfhubd against the findings of a security review (issue 18), one check
per finding, each run even when another fails:

  origin-host   a foreign Origin cannot POST or DELETE, a foreign Host is not
                served on loopback; --allowed-origin and --allowed-host let
                them in
  zstd-256k     a zstd body decoding to an exact multiple of 256 KiB is taken
  log-forgery   quotes in a tar entry name cannot add keys to a log line
  headers       Content-Security-Policy with frame-ancestors 'none' and
                nosniff on the page and the API
  page-token    with require-read-token the page loads without a token,
                the API asks for one
  roles         a write token cannot DELETE, an admin token can; with
                protect-metrics /metrics wants an admin token
  debuginfo     a PUT trickling 150 B/s is cut; two-digit build-ids and
                kallsyms under a short key or with garbage are refused;
                DELETE of debuginfo needs the admin role
  names         a 100 KB name and a control character are refused before
                the body; errors show no spool path; an empty path is 404
  bomb          a small zstd body that decodes far beyond its size is refused
                and a failed recording's decoded bytes leave the spool
"""
import hashlib
import io
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import time

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import (BUSY, SKIP, Daemon, have_perf_record, perf_record,  # noqa: E402
                              raw_http, tmpdir)

ADMIN = {"Authorization": "Bearer a-secret"}
WRITE = {"Authorization": "Bearer w-secret"}
TIMEOUT = 3      # --connection-timeout: the upload rate floor starts after it

failures = []


def finding(name):
    """Runs one finding's check; a failure is noted and the next goes on."""
    def wrap(fn):
        def run(*args):
            try:
                fn(*args)
                print("ok   %s" % name)
            except Exception as e:  # noqa: BLE001 - every failure is reported
                failures.append("%s: %s" % (name, e))
                print("FAIL %s: %s" % (name, e))
        return run
    return wrap


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def wait(d, pid, timeout=120):
    """The profile once ready or failed (reads need the read token here)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        st, p = d.json("GET", "/api/v1/profiles/%d" % pid, headers=WRITE)
        if st == 200 and p["status"] in ("ready", "failed"):
            return p
        time.sleep(0.1)
    raise AssertionError("profile %d not done after %d s" % (pid, timeout))


def raw(d, data):
    return raw_http(d.port, data)


def request(d, method, path, body=b"", headers=()):
    h = "".join("%s: %s\r\n" % kv for kv in headers)
    return raw(d, ("%s %s HTTP/1.1\r\nConnection: close\r\nContent-Length: %d\r\n%s\r\n" %
                   (method, path, len(body), h)).encode() + body)


@finding("origin-host")
def origin_host(d, data):
    auth = ("Authorization", "Bearer a-secret")
    host = ("Host", "127.0.0.1:%d" % d.port)
    st, _, body = request(d, "POST", "/api/v1/profiles", data,
                          [auth, host, ("Origin", "http://evil.example"),
                           ("Content-Type", "application/octet-stream")])
    expect(st == 403, "POST from a foreign Origin: %s %r" % (st, body[:80]))
    st, _, body = request(d, "DELETE", "/api/v1/profiles/1",
                          headers=[auth, host, ("Origin", "http://evil.example")])
    expect(st == 403, "DELETE from a foreign Origin: %s" % st)
    st, _, _ = request(d, "GET", "/api/v1/profiles",
                       headers=[auth, ("Host", "rebound.example:%d" % d.port)])
    expect(st == 403, "a foreign Host on loopback: %s" % st)
    for h in ("localhost:%d" % d.port, "127.0.0.1", "app.localhost", "[::1]:%d" % d.port):
        st, _, _ = request(d, "GET", "/api/v1/profiles", headers=[auth, ("Host", h)])
        expect(st == 200, "Host %s: %s" % (h, st))
    # the page's own origin, and the configured ones
    st, _, body = request(d, "POST", "/api/v1/profiles", data,
                          [auth, host, ("Origin", "http://127.0.0.1:%d" % d.port),
                           ("Content-Type", "application/octet-stream")])
    expect(st in (200, 202), "POST from the server's own origin: %s %r" % (st, body[:80]))
    st, _, _ = request(d, "GET", "/api/v1/profiles",
                       headers=[auth, ("Host", "perf.example.org"),
                                ("Origin", "https://perf.example.org")])
    expect(st == 200, "--allowed-host behind a proxy, same-origin: %s" % st)
    st, _, _ = request(d, "GET", "/api/v1/profiles",
                       headers=[auth, host, ("Origin", "https://dashboard.example.org")])
    expect(st == 200, "--allowed-origin: %s" % st)
    st, _, _ = request(d, "GET", "/api/v1/profiles",
                       headers=[auth, host, ("Origin", "null")])
    expect(st == 403, "Origin null: %s" % st)


@finding("zstd-256k")
def zstd_256k(d, data):
    if not shutil.which("zstd"):
        raise AssertionError("zstd not installed (build-aux/install-deps --test)")
    body = data + b"\0" * ((-len(data)) % (256 << 10))
    expect(len(body) % (256 << 10) == 0, "padding")
    z = subprocess.run(["zstd", "-q", "-c", "-3"], input=body, capture_output=True,
                       check=True).stdout
    st, r = d.upload(z, headers=dict(WRITE, **{"Content-Encoding": "zstd"}))
    expect(st in (200, 202), "zstd of %d bytes: %s %s" % (len(body), st, r))
    expect(r.get("sha256") == hashlib.sha256(body).hexdigest(), "sha256 of the decoded body")


def tar_bytes(entries, cut=0):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for name, content in entries:
            ti = tarfile.TarInfo(name)
            ti.size = len(content)
            t.addfile(ti, io.BytesIO(content))
    b = buf.getvalue()
    return b[:cut] if cut else b


def log_pairs(line):
    """key=value pairs of a log line, values quoted with backslash escapes."""
    return re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\S*)', line)


@finding("log-forgery")
def log_forgery(d, data):
    # a tar cut inside an entry whose name carries quotes: the parse fails
    # with a message naming the entry, which the log line quotes
    name = 'data" forged="yes'
    body = tar_bytes([(name, data)], cut=512 + 100)
    st, r = d.upload(body, headers=dict(WRITE, **{"Content-Type": "application/x-tar"}))
    expect(st == 202, "truncated tar: %s %s" % (st, r))
    p = wait(d, r["id"])
    expect(p["status"] == "failed", "truncated tar ended %s" % p["status"])
    # the line follows the profile's status by a moment
    for _ in range(100):
        lines = [l for l in d.read_log().splitlines()
                 if 'msg="parse failed" id=%d ' % r["id"] in l]
        if lines:
            break
        time.sleep(0.05)
    expect(lines, "no parse-failed line for %d" % r["id"])
    keys = [k for k, _ in log_pairs(lines[-1])]
    expect("forged" not in keys, "the entry name added a key: %s" % lines[-1])
    expect("\n" not in lines[-1], "one line")


@finding("headers")
def headers(d, data):
    for path, hdrs in (("/", []), ("/api/v1/profiles", [("Authorization", "Bearer r-secret")]),
                       ("/healthz", [])):
        st, head, _ = request(d, "GET", path, headers=[("Host", "localhost")] + hdrs)
        expect(st == 200, "%s: %s" % (path, st))
        h = head.lower()
        expect("x-content-type-options: nosniff" in h, "%s: no nosniff" % path)
        m = re.search(r"content-security-policy: ([^\r\n]*)", h)
        expect(m and "frame-ancestors 'none'" in m.group(1) and "unsafe-inline" not in m.group(1)
               and "script-src 'self'" in m.group(1), "%s: CSP %s" % (path, m and m.group(1)))


@finding("page-token")
def page_token(d, data):
    for path in ("/", "/index.html", "/app.js"):
        st, _, body = request(d, "GET", path, headers=[("Host", "localhost")])
        expect(st == 200, "%s without a token: %s" % (path, st))
    st, _, _ = request(d, "GET", "/api/v1/profiles", headers=[("Host", "localhost")])
    expect(st == 401, "the API without a token: %s" % st)


@finding("roles")
def roles(d, data):
    st, r = d.upload(data[:len(data) // 2] + b"\0" * 7, headers=WRITE)
    expect(st == 202, "upload with a write token: %s %s" % (st, r))
    pid = r["id"]
    st, _, _ = d.request("DELETE", "/api/v1/profiles/%d" % pid, headers=WRITE)
    expect(st == 403, "DELETE with a write token: %s" % st)
    st, _, _ = d.request("DELETE", "/api/v1/profiles/%d" % pid, headers=ADMIN)
    expect(st == 204, "DELETE with an admin token: %s" % st)
    st, _, _ = d.request("GET", "/metrics", headers=WRITE)
    expect(st == 403, "/metrics with a write token under protect-metrics: %s" % st)
    st, _, body = d.request("GET", "/metrics", headers=ADMIN)
    expect(st == 200 and b"perfhub_http_busy_total" in body, "/metrics with an admin token: %s" % st)


def slow_put(d, path, body, rate):
    """PUTs body at `rate` bytes/s; returns seconds until the server ended it
    (or None when it kept reading for 3 connection timeouts)."""
    s = socket.create_connection(("127.0.0.1", d.port), timeout=30)
    s.sendall(("PUT %s HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer w-secret\r\n"
               "Content-Length: %d\r\n\r\n" % (path, len(body))).encode())
    t0 = time.time()
    try:
        for i in range(0, len(body), max(1, rate // 10)):
            if time.time() - t0 > 3 * TIMEOUT + 2:
                return None
            s.sendall(body[i:i + max(1, rate // 10)])
            time.sleep(0.1)
        return None
    except OSError:
        return time.time() - t0
    finally:
        s.close()


@finding("debuginfo")
def debuginfo(d, data):
    kbid = "ab" * 20
    ended = slow_put(d, "/api/v1/debuginfo/" + kbid, b"\x7fELF" + b"\0" * 60000, 150)
    expect(ended is not None and ended < 3 * TIMEOUT + 2,
           "a PUT at 150 B/s kept going for %s s" % ended)
    st, r = d.json("PUT", "/api/v1/debuginfo/ab", b"x", WRITE)
    expect(st == 400, "a two-digit build-id: %s %s" % (st, r))
    good = b"ffffffff81000000 T _text\nffffffff81000010 t helper\n"
    st, r = d.json("PUT", "/api/v1/debuginfo/" + "ab" * 8, good, WRITE)
    expect(st == 400, "kallsyms under an 8-byte key: %s %s" % (st, r))
    st, r = d.json("PUT", "/api/v1/debuginfo/" + kbid, good + b"\0\1garbage" * 10000, WRITE)
    expect(st == 400, "kallsyms with garbage after its first lines: %s %s" % (st, r))
    st, r = d.json("PUT", "/api/v1/debuginfo/" + kbid, good, WRITE)
    expect(st == 201, "a real kallsyms under a kernel build-id: %s %s" % (st, r))
    st, _, _ = d.request("DELETE", "/api/v1/debuginfo/" + kbid, headers=WRITE)
    expect(st == 403, "DELETE of debuginfo with a write token: %s" % st)
    st, _, _ = d.request("DELETE", "/api/v1/debuginfo/" + kbid, headers=ADMIN)
    expect(st == 204, "DELETE of debuginfo with an admin token: %s" % st)
    st, _, _ = d.request("HEAD", "/api/v1/debuginfo/" + kbid, headers=ADMIN)
    expect(st == 404, "the deleted debuginfo is still served: %s" % st)
    expect(not [f for _, _, fs in os.walk(os.path.join(d.state, "spool", "debuginfo"))
                for f in fs], "files left in the debuginfo store")
    st, _, _ = d.request("DELETE", "/api/v1/debuginfo/" + kbid, headers=ADMIN)
    expect(st == 404, "DELETE of absent debuginfo: %s" % st)


@finding("names")
def names(d, data):
    st, r = d.upload(data, "?name=" + "n" * 100000, WRITE)
    expect(st in (400, 414, 431), "a 100 KB name: %s %s" % (st, r))
    st, r = d.upload(data, "?name=a%01b", WRITE)
    expect(st == 400, "a control character in the name: %s %s" % (st, r))
    st, r = d.upload(data, "?tag=" + "k" * 200 + "=v", WRITE)
    expect(st == 400, "a 200-byte tag key: %s %s" % (st, r))
    # a tar without a data file: the error names no path of the server
    st, r = d.upload(tar_bytes([("notdata", b"x")]),
                     headers=dict(WRITE, **{"Content-Type": "application/x-tar"}))
    expect(st == 202, "tar without data: %s %s" % (st, r))
    p = wait(d, r["id"])
    expect(p["status"] == "failed" and d.state not in (p["error"] or "") and
           os.path.realpath(d.state) not in (p["error"] or ""),
           "the error shows a server path: %r" % p["error"])
    st, _, _ = raw(d, b"GET ?x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    expect(st in (400, 404), "an empty path: %s" % st)


@finding("bomb")
def bomb(d, data):
    if not shutil.which("zstd"):
        raise AssertionError("zstd not installed (build-aux/install-deps --test)")
    body = b"PERFILE2" + b"\0" * (256 << 20)
    z = subprocess.run(["zstd", "-q", "-c", "-19"], input=body, capture_output=True,
                       check=True).stdout
    st, r = d.upload(z, headers=dict(WRITE, **{"Content-Encoding": "zstd"}))
    expect(st == 413, "%d bytes of zstd decoding to 256 MiB: %s %s" % (len(z), st, r))
    # a recording that passes every check but fails to parse: its decoded
    # bytes do not stay in the spool
    broken = data[:4096] + b"\xff" * 200000
    z = subprocess.run(["zstd", "-q", "-c"], input=broken, capture_output=True,
                       check=True).stdout
    st, r = d.upload(z, headers=dict(WRITE, **{"Content-Encoding": "zstd"}))
    expect(st == 202, "a broken recording: %s %s" % (st, r))
    p = wait(d, r["id"])
    expect(p["status"] == "failed", "broken recording ended %s" % p["status"])
    left = [f for f in os.listdir(os.path.join(d.state, "spool"))
            if f.startswith(p["sha256"])]
    expect(not left, "the failed recording's bytes stayed: %s" % left)


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    work = tmpdir("harden-")
    data = open(perf_record(os.path.join(work, "a.data"), ["-e", "cpu-clock"], BUSY),
                "rb").read()
    tokfile = os.path.join(work, "tokens")
    with open(tokfile, "w") as f:
        f.write("a-secret admin\nw-secret write\nr-secret read\nrequire-read-token\n"
                "protect-metrics\n")
    web = os.path.join(work, "web")
    os.makedirs(web)
    for n in ("index.html", "app.js"):
        with open(os.path.join(web, n), "w") as f:
            f.write("perfhub %s\n" % n)
    args = ["--token-file", tokfile, "--web-root", web, "--connection-timeout", str(TIMEOUT),
            "--allowed-host", "perf.example.org",
            "--allowed-origin", "https://dashboard.example.org"]
    with Daemon(args=args) as d:
        for check in (origin_host, zstd_256k, log_forgery, headers, page_token, roles,
                      debuginfo, names, bomb):
            check(d, data)
        st, h = d.json("GET", "/healthz")
        if st != 200 or d.proc.poll() is not None:
            failures.append("daemon unhealthy at the end: %s" % st)
    if failures:
        print("%d finding(s) not fixed:\n  %s" % (len(failures), "\n  ".join(failures)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

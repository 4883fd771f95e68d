#!/usr/bin/env python3
"""Faults: a full disk (a small tmpfs holds the state directory; root only,
else that part skips) answers uploads 507 while reads keep working, and
uploads resume once space is freed; a client that disconnects mid-upload,
one that trickles 1 byte a second, one that stalls, and wrong
Content-Lengths (short, long, not a number) leave no partial upload in the
spool and no stuck worker; the daemon stays healthy throughout."""
import json
import os
import select
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stress_lib as S  # noqa: E402
from perfhubd_harness import SKIP, Daemon, check, have_perf_record, tmpdir  # noqa: E402

TIMEOUT = 2     # --connection-timeout of the daemon under test


def raw(port, head, body=b"", then=None):
    """Opens a connection, sends head + body, runs then(sock); returns it."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(head + body)
    if then:
        then(s)
    return s


def post_head(length, extra=b""):
    return (b"POST /api/v1/profiles HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
            b"application/octet-stream\r\nContent-Length: " + length + b"\r\n" + extra + b"\r\n")


def read_all(s, limit=30):
    s.settimeout(limit)
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except (socket.timeout, ConnectionResetError):
        pass
    return out


def wait_no_litter(d, seconds=10):
    deadline = time.time() + seconds
    while S.spool_litter(d.state) and time.time() < deadline:
        time.sleep(0.1)
    return S.spool_litter(d.state)


def client_faults(rec):
    data = rec.data
    with Daemon(args=["--connection-timeout", str(TIMEOUT)]) as d:
        # 1. disconnects after a third of the body
        s = raw(d.port, post_head(str(len(data)).encode()), data[: len(data) // 3])
        time.sleep(0.3)
        s.close()
        check(not wait_no_litter(d), "litter after a disconnect: %s" % S.spool_litter(d.state))

        # 2. trickles 1 byte a second: cut after the timeout
        s = raw(d.port, post_head(str(len(data)).encode()))
        t0 = time.time()
        cut = None
        for k in range(TIMEOUT * 10):
            try:
                s.sendall(data[k:k + 1])
                if select.select([s], [], [], 1.0)[0]:
                    s.recv(4096)    # an answer or the end: either way it was cut
                    cut = time.time() - t0
                    break
            except (BrokenPipeError, ConnectionResetError):
                cut = time.time() - t0
                break
        s.close()
        check(cut is not None and cut < TIMEOUT + 5, "1 byte/s client not cut (%s)" % cut)
        check('msg="upload too slow"' in d.read_log(), "the rate floor did not cut it")
        check(not wait_no_litter(d), "litter after a trickle: %s" % S.spool_litter(d.state))
        print("1 byte/s upload cut after %.1f s (timeout %d s)" % (cut, TIMEOUT))

        # 3. stalls half way (Content-Length longer than what comes): idle timeout
        s = raw(d.port, post_head(str(len(data)).encode()), data[: len(data) // 2])
        t0 = time.time()
        got = read_all(s, TIMEOUT * 10)
        stall = time.time() - t0
        s.close()
        check(stall < TIMEOUT + 5, "stalled upload held %.1f s" % stall)
        check(not wait_no_litter(d), "litter after a stall: %s" % S.spool_litter(d.state))
        print("stalled upload closed after %.1f s (answer %r)" % (stall, got[:30]))

        # 4. Content-Length shorter than the body: the request ends where it
        # says; the rest is garbage for the next request on the connection
        short = len(data) // 2
        s = raw(d.port, post_head(str(short).encode()), data)
        got = read_all(s, TIMEOUT * 10)
        s.close()
        check(got.startswith(b"HTTP/1.1 202"), "short Content-Length: %r" % got[:80])
        # the bytes it declared are a truncated recording: ends failed, with a message
        body = got.split(b"\r\n\r\n", 1)[1]
        pid = json.JSONDecoder().raw_decode(body.decode("latin-1"))[0]["id"]
        p = d.wait(pid)
        check(p["status"] == "failed" and p["error"], "truncated by Content-Length: %s" % p)

        # 5. a Content-Length that is not a number, and one past 2^64
        for bad in (b"abc", b"-5", b"99999999999999999999999"):
            s = raw(d.port, post_head(bad), b"x" * 10)
            got = read_all(s, TIMEOUT * 10)
            s.close()
            check(got[:12] in (b"HTTP/1.1 400", b"HTTP/1.1 413"),
                  "Content-Length %r: %r" % (bad, got[:60]))

        # nothing stuck: a good upload beside all that is ready at once
        st, r = d.upload(S.with_hostname(data, "after-faults"))
        check(st == 202, "good upload after faults: %s" % st)
        check(d.wait(r["id"], timeout=60)["status"] == "ready", "good upload after faults")
        st, _, m = d.request("GET", "/metrics")
        check(b"\nperfhub_queue_depth 0\n" in m, "queue not drained")
        st, lst = d.json("GET", "/api/v1/profiles?status=parsing")
        check(lst["total"] == 0, "a worker is stuck: %s" % lst)
        check(not wait_no_litter(d), "litter at the end: %s" % S.spool_litter(d.state))
        check(d.proc.poll() is None, "daemon died")


def full_disk(rec):
    mnt = tmpdir("fulldisk-")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", mnt],
                       capture_output=True)
    if r.returncode != 0:
        print("full disk: cannot mount a tmpfs here (%s); skipped" % r.stderr.decode().strip())
        return False
    try:
        with Daemon(state=mnt) as d:
            st, r = d.upload(S.with_hostname(rec.data, "before-full"))
            check(st == 202, "upload before full: %s" % st)
            first = r["id"]
            check(d.wait(first)["status"] == "ready", "first upload")
            filler = os.path.join(mnt, "filler")
            # unbuffered: nothing is left to write (and fail) at close
            with open(filler, "wb", buffering=0) as f:
                try:
                    while True:
                        f.write(b"\0" * 65536)
                except OSError:
                    pass
            codes = []
            for k in range(5):
                st, r = d.upload(S.with_hostname(rec.data, "full-%d" % k))
                codes.append(st)
                check(st in (507, 503) and r and "error" in r,
                      "upload on a full disk: %s %s" % (st, r))
            # reads keep working
            st, p = d.json("GET", "/api/v1/profiles/%d" % first)
            check(st == 200 and p["status"] == "ready", "read on a full disk: %s" % st)
            st, _, _ = d.request("GET", "/api/v1/profiles/%d/flamegraph" % first)
            check(st == 200, "flame graph on a full disk: %s" % st)
            st, lst = d.json("GET", "/api/v1/profiles")
            check(st == 200 and lst["total"] == 1, "list on a full disk: %s %s" % (st, lst))
            st, _ = d.json("GET", "/healthz")
            check(st == 200, "healthz on a full disk: %s" % st)
            check(not S.spool_litter(d.state), "litter on a full disk: %s" %
                  S.spool_litter(d.state))
            os.unlink(filler)
            st, r = d.upload(S.with_hostname(rec.data, "after-full"))
            check(st == 202, "upload once space is freed: %s %s" % (st, r))
            p = d.wait(r["id"])
            check(p["status"] == "ready" and p["records"] == rec.records,
                  "after full: %s" % p.get("error"))
            print("full disk: uploads answered %s, reads 200, resumed after freeing space" %
                  sorted(set(codes)))
    finally:
        subprocess.run(["umount", "-l", mnt])
    return True


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    rec = S.make_recordings(tmpdir("faults-"), 1)[0]
    client_faults(rec)
    full_disk(rec)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Streamed uploads on the server's side: a chunked body (no Content-Length)
may stay quiet longer than --connection-timeout, as a recording of a
sleeping program does (perfhub record -- sh -c 'sleep 5' against a server
cutting idle connections after 2 s ends ready); a body with a
Content-Length that stalls is still cut. At most 32 streams are taken at
once: the next is answered 503, and a stream that ends or is cut frees its
place. The upload's answer lists the name and tags the profile carries (for
the same bytes uploaded again: the new name and tags, applied, with
"relabeled": true)."""
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfhubd_harness import Daemon, perf_record  # noqa: E402
from client_common import (Checks, build_prog, clean_env, need_perf_and_cc,  # noqa: E402
                           perfhub, perfhub_exe, workdir)

MAX_STREAMS = 32
IDLE = 2	# the test server's --connection-timeout


def open_stream(d):
    """A chunked POST whose body has begun: (socket, answer bytes so far)."""
    s = socket.create_connection(("127.0.0.1", d.port), timeout=10)
    s.sendall(b"POST /api/v1/profiles HTTP/1.1\r\nHost: 127.0.0.1\r\n"
              b"Content-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
              b"8\r\nPERFILE2\r\n")
    return s


def answer_of(s, wait=3.0):
    s.settimeout(wait)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    return data


def main():
    need_perf_and_cc()
    work = workdir("client-stream-")
    prog = build_prog(work)
    data = perf_record(os.path.join(work, "p.data"), ["-e", "cpu-clock"], [prog, "0.1"])
    chk = Checks()
    with Daemon(args=["--connection-timeout", str(IDLE)]) as d:
        r = perfhub(["record", "--server", d.url, "--", "/bin/sh", "-c",
                     "sleep %d; echo woke" % (IDLE + 3)])
        chk(r.returncode == 0 and "woke" in r.stdout and " ready: " in r.stdout,
            "a recording quiet for %d s, past the %d s idle timeout, ends ready (%d) %s" %
            (IDLE + 3, IDLE, r.returncode, r.stderr[-200:]))

        # upload -: the same bytes, with a pause in the middle
        feed = subprocess.Popen(["sh", "-c", "head -c 4096 \"$0\"; sleep %d; tail -c +4097 \"$0\""
                                 % (IDLE + 3), data], stdout=subprocess.PIPE)
        cli = subprocess.Popen([perfhub_exe(), "upload", "-", "--server", d.url, "--wait",
                                "--no-debuginfo"], stdin=feed.stdout, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=clean_env())
        feed.stdout.close()
        out, err = cli.communicate(timeout=120)
        feed.wait()
        chk(cli.returncode == 0 and " ready: " in out,
            "upload - pausing %d s mid-stream: ready (%d) %s" % (IDLE + 3, cli.returncode, err))

        # a body with a Content-Length that stalls is still cut
        s = socket.create_connection(("127.0.0.1", d.port), timeout=30)
        s.sendall(b"POST /api/v1/profiles HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Content-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n"
                  b"PERFILE2")
        t0 = time.time()
        try:
            cut = s.recv(4096) == b""
        except (ConnectionResetError, socket.timeout):
            cut = True
        chk(cut and time.time() - t0 < 20,
            "a stalled Content-Length upload is cut after the idle timeout (%.1f s)" %
            (time.time() - t0))
        s.close()

        streams = [open_stream(d) for _ in range(MAX_STREAMS)]
        time.sleep(0.5)
        extra = open_stream(d)
        ans = answer_of(extra)
        chk(ans.startswith(b"HTTP/1.1 503"), "stream %d is answered 503: %r" %
            (MAX_STREAMS + 1, ans[:60]))
        extra.close()
        early = [answer_of(s, 0.2) for s in streams[:4]]
        chk(not any(early), "the %d streams are still open, unanswered" % MAX_STREAMS)
        for s in streams:
            s.close()	# cut: each frees its place
        time.sleep(1)
        feed = subprocess.Popen(["cat", data], stdout=subprocess.PIPE)
        r = subprocess.run([perfhub_exe(), "upload", "-", "--server", d.url, "--no-debuginfo",
                            "--json", "--name", "after", "--tag", "k=v"], stdin=feed.stdout,
                           capture_output=True, text=True, env=clean_env(), timeout=60)
        feed.wait()
        chk(r.returncode == 0, "after the streams were cut, a new one is taken: %s" % r.stderr)

        # the answer lists the name and tags as stored (bytes of their own:
        # perf ignores what follows a file's sections)
        with open(data, "rb") as f:
            body = f.read() + b"perfhub-tags\0"
        st, a = d.upload(body, "?name=first&tag=a=1&tag=b=2")
        chk(st == 202 and a.get("name") == "first" and a.get("tags") == {"a": "1", "b": "2"},
            "the upload's answer lists name and tags: %s" % a)
        st, a = d.upload(body, "?name=second&tag=c=3")
        chk(st == 200 and a.get("name") == "second" and
            a.get("tags") == {"a": "1", "b": "2", "c": "3"} and a.get("relabeled") is True,
            "the same bytes again: the new name and tags applied, and said: %s" % a)
    return chk.status()


if __name__ == "__main__":
    sys.exit(main())

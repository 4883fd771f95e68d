#!/usr/bin/env python3
"""The S3 client (daemon/intake/s3.c through tests/s3-tool) against an
S3-compatible server (s3rver behind our SigV4 check, tests/s3_harness.py)
and against a hostile one written here: objects go up whole or in parts and
come back byte for byte, every request is signed right, answers that are
errors, malformed, endless or never come end in a clear message, and memory
stays flat whatever the object's size."""
import hashlib
import http.server
import os
import resource
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3_harness  # noqa: E402

BUILD = os.environ.get("top_builddir") or os.getcwd()
TOOL = os.path.join(BUILD, "tests", "s3-tool")
MiB = 1 << 20
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def tool(env, *args, timeout=120):
    p = subprocess.run([TOOL] + [str(a) for a in args], env=env, capture_output=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace").strip()


def write_random(path, size):
    h = hashlib.sha256()
    with open(path, "wb") as f:
        left = size
        while left:
            chunk = os.urandom(min(left, MiB))
            h.update(chunk)
            f.write(chunk)
            left -= len(chunk)
    return h.hexdigest()


def same_file(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(MiB), fb.read(MiB)
            if x != y:
                return False
            if not x:
                return True


def real_server(tmp):
    with s3_harness.S3Server(prefix="spool/node") as s3:
        env = s3.env()
        small = os.path.join(tmp, "small")
        with open(small, "wb") as f:
            f.write(b"perf.data bytes\n")
        sha = hashlib.sha256(b"perf.data bytes\n").hexdigest()

        rc, _, err = tool(env, "put", "ab/c d+e.data", small, sha)
        check(rc == 0, "single PUT with its SHA-256 (%s)" % err)
        rc, out, err = tool(env, "head", "ab/c d+e.data")
        check(rc == 0 and out == b"16\n", "HEAD gives the size (%r %s)" % (out, err))
        rc, out, _ = tool(env, "cat", "ab/c d+e.data")
        check(out == b"perf.data bytes\n", "GET streams the bytes back")
        rc, out, err = tool(env, "cat", "ab/c d+e.data", 10)
        check(rc == 2 and "larger than allowed" in err, "GET over the cap fails: " + err)
        rc, _, err = tool(env, "put", "x", small, "ABC")
        check(rc == 2 and "64 lowercase hex" in err, "a malformed SHA-256 is refused: " + err)
        for bad in ("", "/x", "a//b", "a/../b", "./a", "a\nb", "k" * 1100):
            rc, _, err = tool(env, "head", bad)
            check(rc == 2 and "invalid key" in err, "key %r refused" % bad[:20])

        # multipart: 3 parts of 5 MiB and a last one of 1 MiB + 3 bytes
        big = os.path.join(tmp, "big")
        write_random(big, 16 * MiB + 3)
        penv = s3.env(PERFHUB_S3_PART=5 * MiB)
        rc, _, err = tool(penv, "put", "big.data", big)
        check(rc == 0, "multipart PUT (%s)" % err)
        parts = [r for r in s3.requests() if r["method"] == "PUT" and "partNumber=" in r["url"]]
        check(len(parts) == 4, "4 parts were sent (%d)" % len(parts))
        got = os.path.join(tmp, "big.out")
        rc, out, err = tool(env, "get", "big.data", got)
        check(rc == 0 and out == b"%d\n" % (16 * MiB + 3), "GET into a file (%s)" % err)
        check(same_file(big, got), "the object comes back byte for byte")
        rc, out, err = tool(env, "get", "big.data", got)
        check(rc == 2 and "File exists" in err, "GET never overwrites a file: " + err)
        os.unlink(got)
        rc, _, err = tool(env, "get", "big.data", got, 1000)
        check(rc == 2 and not os.path.exists(got), "a GET over the cap leaves no file")

        # abort: s3rver does not implement it (405), so we check the request
        # went out signed with the upload id and that its answer is reported
        rc, out, err = tool(penv, "mpu-abort", "aborted.data", small)
        upload = out.decode().split()[-1] if out else "?"
        aborts = [r for r in s3.requests() if r["method"] == "DELETE" and
                  r["url"].endswith("?uploadId=" + upload)]
        check(len(aborts) == 1 and aborts[0]["signed"], "abort sends a signed DELETE ?uploadId")
        check(rc == 2 and "405 MethodNotAllowed" in err, "its answer is reported: " + err)

        # listing, page by page
        for i in range(5):
            rc, _, _ = tool(env, "put", "list/k%d" % i, small)
        rc, out, err = tool(s3.env(PERFHUB_S3_PAGE=2), "list", "list/")
        check(out.decode().split("\n")[:-1] == ["list/k%d 16" % i for i in range(5)],
              "list over 3 pages gives every key once, in order (%r %s)" % (out, err))
        pages = [r for r in s3.requests() if "list-type=2&max-keys=2" in r["url"]]
        check(len(pages) == 3, "3 list requests (%d)" % len(pages))

        rc, _, err = tool(env, "delete", "list/k0")
        rc2, _, _ = tool(env, "head", "list/k0")
        check(rc == 0 and rc2 == 1, "DELETE removes the key, HEAD says not found")
        rc, _, err = tool(env, "delete", "list/k0")
        check(rc == 0, "DELETE of a missing key is no error")
        rc, _, err = tool(env, "cat", "nothing-here")
        check(rc == 1 and "404 NoSuchKey" in err, "GET of a missing key: " + err)

        # every request our client sent passed the SigV4 check
        reqs = s3.requests()
        check(reqs and all(r["signed"] for r in reqs),
              "all %d requests were signed right" % len(reqs))
        rc, _, err = tool(s3.env(AWS_SECRET_ACCESS_KEY="wrong"), "cat", "big.data")
        check(rc == 2 and "403 SignatureDoesNotMatch" in err, "a wrong secret: " + err)
        rc, _, err = tool(s3.env(AWS_ACCESS_KEY_ID=""), "cat", "big.data")
        check(rc == 2 and "AWS_ACCESS_KEY_ID" in err, "no key in the environment: " + err)
        rc, _, err = tool(s3.env(PERFHUB_S3_URL="s3://no-such-bucket/x"), "cat", "big.data")
        check(rc == 1 and "NoSuchBucket" in err, "a missing bucket: " + err)
        rc, _, err = tool(s3.env(PERFHUB_S3_URL="s3://Bad_Bucket"), "cat", "k")
        check(rc == 2 and "bucket name" in err, "a malformed bucket name: " + err)

        # memory stays flat: a 96 MiB object up in parts and down again
        huge = os.path.join(tmp, "huge")
        write_random(huge, 96 * MiB)
        rc1, _, err1 = tool(s3.env(PERFHUB_S3_PART=32 * MiB), "put", "huge", huge)
        rc2, out, err2 = tool(env, "cat", "huge")
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        check(rc1 == 0 and rc2 == 0 and len(out) == 96 * MiB, "96 MiB up and down (%s %s)" %
              (err1, err2))
        check(peak < 64 * 1024,
              "the tool's peak memory %d KiB stays under 64 MiB" % peak)


class Hostile(http.server.BaseHTTPRequestHandler):
    """Answers as the test's `mode` says; counts requests."""
    protocol_version = "HTTP/1.1"
    mode = "500"
    count = 0

    def log_message(self, *a):
        pass

    def reply(self, status, body, ctype="application/xml", length=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        if status == 200 and self.command == "PUT":
            self.send_header("ETag", '"etag-%d"' % Hostile.count)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self):
        Hostile.count += 1
        n = int(self.headers.get("Content-Length") or 0)
        while n:
            got = self.rfile.read(min(n, 65536))
            if not got:
                break
            n -= len(got)
        m = Hostile.mode
        if m == "500":
            self.reply(500, b"<Error><Code>InternalError</Code><Message>try later</Message></Error>")
        elif m == "hang":
            threading.Event().wait(30)
        elif m == "badxml":
            self.reply(200, b"<ListBucketResult><Contents><Key>a</Contents>")
        elif m == "loop":
            self.reply(200, b"<ListBucketResult><IsTruncated>true</IsTruncated>"
                            b"<NextContinuationToken>same</NextContinuationToken>"
                            b"<Contents><Key>p/a</Key><Size>1</Size></Contents>"
                            b"</ListBucketResult>" if "continuation-token" not in self.path else
                            b"<ListBucketResult><IsTruncated>true</IsTruncated>"
                            b"<NextContinuationToken>same</NextContinuationToken>"
                            b"</ListBucketResult>")
        elif m == "outside":
            self.reply(200, b"<ListBucketResult><Contents><Key>elsewhere/a</Key><Size>1</Size>"
                            b"</Contents></ListBucketResult>")
        elif m == "endless-error":
            self.send_response(403)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(64 * MiB))
            self.end_headers()
            try:
                self.wfile.write(b"<Error><Code>AccessDenied</Code>")
                for _ in range(64):
                    self.wfile.write(b"<x>" + b"y" * (MiB - 7) + b"</x>")
            except OSError:
                pass
        elif m == "complete-error":
            if "uploads" in self.path:
                self.reply(200, b"<InitiateMultipartUploadResult><UploadId>u1</UploadId>"
                                b"</InitiateMultipartUploadResult>")
            elif self.command == "POST":
                self.reply(200, b"<Error><Code>InternalError</Code>"
                                b"<Message>We encountered an internal error</Message></Error>")
            elif self.command == "DELETE":
                self.reply(204, b"")
            else:
                self.reply(200, b"")

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any


def hostile_server(tmp):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    env = dict(os.environ, PERFHUB_S3_URL="s3://bucket/p",
               PERFHUB_S3_ENDPOINT="http://127.0.0.1:%d" % srv.server_address[1],
               AWS_ACCESS_KEY_ID="k", AWS_SECRET_ACCESS_KEY="s", PERFHUB_S3_STALL="2")
    small = os.path.join(tmp, "small")

    def run(mode, *args, **envx):
        Hostile.mode, Hostile.count = mode, 0
        return tool(dict(env, **{k: str(v) for k, v in envx.items()}), *args, timeout=60)

    rc, _, err = run("500", "cat", "k")
    check(rc == 2 and "HTTP 500 InternalError: try later" in err and Hostile.count == 3,
          "a 500 is tried 3 times, then reported: %s (%d)" % (err, Hostile.count))
    rc, _, err = run("hang", "cat", "k")
    check(rc == 2 and "curl 28" in err, "an answer that never comes times out: " + err)
    rc, _, err = run("badxml", "list")
    check(rc == 2 and "XML line" in err, "malformed XML is reported: " + err)
    rc, _, err = run("loop", "list")
    check(rc == 2 and "NextContinuationToken" in err and Hostile.count == 2,
          "a listing that does not advance stops: " + err)
    rc, _, err = run("outside", "list")
    check(rc == 2 and "outside the prefix" in err, "a key outside the prefix: " + err)
    rc, _, err = run("endless-error", "cat", "k")
    check(rc == 2 and "HTTP 403 AccessDenied" in err, "an endless error body is cut: " + err)
    big = os.path.join(tmp, "big")
    rc, _, err = run("complete-error", "put", "k", big, PERFHUB_S3_PART=5 * MiB)
    check(rc == 2 and "HTTP 200 but InternalError" in err,
          "a 200 that is an <Error> fails the upload: " + err)
    srv.shutdown()
    srv.server_close()

    # nobody listens there
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    rc, _, err = tool(dict(env, PERFHUB_S3_ENDPOINT="http://127.0.0.1:%d" % port), "head", "k")
    check(rc == 2 and "curl 7" in err, "a refused connection is reported: " + err)
    del small


def main():
    s3_harness.require()
    if not os.path.exists(TOOL):
        print("FAIL: %s is not built" % TOOL)
        return 1
    base = os.environ.get("PERFHUB_TEST_TMP") or "/tmp"
    os.makedirs(base, exist_ok=True)
    import tempfile
    tmp = tempfile.mkdtemp(prefix="s3-client-", dir=base)
    try:
        real_server(tmp)
        hostile_server(tmp)
    finally:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""s3_harness - an S3-compatible server on a free loopback port for the
tests: s3rver from npm (tests/s3, `npm ci` there, which .ci/run does),
behind our SigV4 check (tests/s3/serve.js). Standard library only.

    with S3Server() as s3:
        env = s3.env()        # PERFHUB_S3_URL, PERFHUB_S3_ENDPOINT, AWS_* keys
        ...
        s3.requests()         # what the server was asked, one dict each

What s3rver does not check (so neither do these tests): payload hashes
(x-amz-content-sha256, Content-MD5), part sizes of multipart uploads (S3
wants 5 MiB but the last), that an upload id belongs to the key; it keeps
no versions and is strongly consistent, as one process on one disk is; it
does not implement AbortMultipartUpload (it answers 405).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
ACCESS_KEY = "S3RVER"	# s3rver's own key pair
SECRET_KEY = "S3RVER"
BUCKET = "perfhub-test"


def srcdir():
    return os.environ.get("top_srcdir") or os.path.join(os.path.dirname(__file__), "..")


def package_dir():
    return os.path.join(srcdir(), "tests", "s3")


def require():
    """Exit 77 when node or the npm package is not there (say why)."""
    if not shutil.which("node"):
        print("SKIP: node is not installed (build-aux/install-deps --test installs it)")
        sys.exit(SKIP)
    if not os.path.isdir(os.path.join(package_dir(), "node_modules", "s3rver")):
        print("SKIP: s3rver is not installed: run `npm ci` in tests/s3 (.ci/run does)")
        sys.exit(SKIP)


class S3Server:
    def __init__(self, prefix="spool"):
        base = os.environ.get("PERFHUB_TEST_TMP") or tempfile.gettempdir()
        os.makedirs(base, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix="s3-", dir=base)
        self.log_path = os.path.join(self.dir, "requests.jsonl")
        self.prefix = prefix
        self.proc = None
        self.port = None

    def start(self, timeout=30):
        require()
        # s3rver's continuation tokens are DES-encrypted: OpenSSL 3 keeps
        # DES in its legacy provider
        cmd = ["node", "--openssl-legacy-provider", os.path.join(package_dir(), "serve.js"),
               os.path.join(self.dir, "data"), BUCKET, self.log_path]
        self.err = open(os.path.join(self.dir, "server.log"), "wb")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.err)
        deadline = time.time() + timeout
        line = b""
        while time.time() < deadline and self.proc.poll() is None:
            line = self.proc.stdout.readline()
            if line.startswith(b"port="):
                self.port = int(line[5:])
                return self
        self.stop()
        raise RuntimeError("s3rver did not start: %r %s" % (line, self.server_log()))

    def server_log(self):
        try:
            with open(os.path.join(self.dir, "server.log"), encoding="latin-1") as f:
                return f.read()
        except OSError:
            return ""

    def endpoint(self):
        return "http://127.0.0.1:%d" % self.port

    def url(self):
        return "s3://%s/%s" % (BUCKET, self.prefix) if self.prefix else "s3://" + BUCKET

    def env(self, **extra):
        env = dict(os.environ)
        env.update(PERFHUB_S3_URL=self.url(), PERFHUB_S3_ENDPOINT=self.endpoint(),
                   AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY,
                   AWS_REGION="us-east-1")
        env.pop("AWS_SESSION_TOKEN", None)
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def requests(self):
        try:
            with open(self.log_path) as f:
                return [json.loads(l) for l in f if l.strip()]
        except OSError:
            return []

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
        return False

"""perfhubd_harness - start perfhubd on a free loopback port with a fresh
state directory and talk to it over HTTP (Python 3 standard library only).

Used by the tests/daemon-*.py integration tests and tests/bench-ingest.

The store is SQLite (a file in the state directory) unless
PERFHUB_TEST_BACKEND=postgresql: then the test's own PostgreSQL
(tests/pg_harness.py, started once per test process) holds one database per
state directory, so a daemon restarted on the same state finds its data
again, and jobs are leased for PG_TEST_LEASE seconds (a killed node's job
comes back that soon).

The spool is a directory in the state directory unless
PERFHUB_TEST_SPOOL=s3: then the test's own S3-compatible server
(tests/s3_harness.py) holds it under a prefix per state directory.
"""
import http.client
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

# bodies from this size on are sent after `Expect: 100-continue`
EXPECT_CONTINUE_BYTES = 64 * 1024
EXPECT_WAIT_SECONDS = 5

SKIP = 77
PG_TEST_LEASE = 5

_pg = None
_s3 = None


def backend():
    """"sqlite" or "postgresql": the store the tests' daemons use."""
    b = os.environ.get("PERFHUB_TEST_BACKEND") or "sqlite"
    if b not in ("sqlite", "postgresql"):
        raise RuntimeError("PERFHUB_TEST_BACKEND: sqlite or postgresql, not %r" % b)
    return b


def pg_server():
    """The test process's PostgreSQL (started at the first call)."""
    global _pg
    if _pg is None:
        import pg_harness
        _pg = pg_harness.Postgres().start()
        import atexit
        atexit.register(_pg.cleanup)
    return _pg


def pg_uri_for(state):
    """The database of a state directory, created at the first call."""
    pg = pg_server()
    name = pg_db_for(state)
    if not pg.psql("postgres", "SELECT 1 FROM pg_database WHERE datname = '%s'" % name).strip():
        pg.create_db(name)
    return pg.uri(name)


def spool_backend():
    """"dir" or "s3": where the tests' daemons spool."""
    b = os.environ.get("PERFHUB_TEST_SPOOL") or "dir"
    if b not in ("dir", "s3"):
        raise RuntimeError("PERFHUB_TEST_SPOOL: dir or s3, not %r" % b)
    return b


def s3_server():
    """The test process's S3-compatible server (started at the first call)."""
    global _s3
    if _s3 is None:
        import s3_harness
        import atexit
        _s3 = s3_harness.S3Server(prefix="").start()
        atexit.register(_s3.__exit__, None, None, None)
    return _s3


def spool_args(state):
    """--spool (an S3 spool: --s3-endpoint, --cache-dir) and the environment."""
    if spool_backend() == "s3":
        s3 = s3_server()
        prefix = re.sub(r"[^a-z0-9]", "-", os.path.basename(os.path.normpath(state)).lower())
        return (["--spool", "%s/%s" % (s3.url(), prefix), "--s3-endpoint", s3.endpoint(),
                 "--cache-dir", os.path.join(state, "cache")], s3.env())
    return ["--spool", os.path.join(state, "spool")], None


def pg_db_for(state):
    """The name of a state directory's database (pg_uri_for creates it)."""
    return "s_" + re.sub(r"[^a-z0-9]", "_", os.path.basename(os.path.normpath(state)).lower())


def store_sql(state, sql):
    """Runs SQL (values written into it) on the store of the daemon of
    this state directory, whichever backend; the first row's first column,
    or None."""
    if backend() == "postgresql":
        out = pg_server().psql(pg_db_for(state), sql).strip().splitlines()
        return out[0] if out else None
    import sqlite3
    c = sqlite3.connect(os.path.join(state, "perfhub.db"), timeout=30)
    try:
        row = c.execute(sql).fetchone()
        c.commit()
        return row[0] if row else None
    finally:
        c.close()


def db_args(state):
    """--db (and the lease) for a daemon on this state directory."""
    if backend() == "postgresql":
        return ["--db", pg_uri_for(state), "--job-lease", str(PG_TEST_LEASE)]
    return ["--db", os.path.join(state, "perfhub.db")]


def builddir():
    return os.environ.get("top_builddir") or os.getcwd()


def shared():
    return os.environ.get("PERFHUB_SHARED") or os.path.join(
        os.environ.get("top_srcdir", "."), "..", "shared")


def corpus(name):
    return os.path.join(shared(), "corpus", "external", name)


def tmpdir(prefix):
    import pg_harness
    return tempfile.mkdtemp(prefix=prefix, dir=pg_harness.test_tmp_base())


class Daemon:
    """One perfhubd process. Use as a context manager: it is always killed."""

    def __init__(self, state=None, args=(), workers=2, env=None):
        self.state = state or tmpdir("perfhubd-")
        self.args = list(args)
        self.env = env
        self.name = os.path.basename(os.path.normpath(self.state))
        self.workers = workers
        self.proc = None
        self.port = None
        self.log_path = os.path.join(self.state, "perfhubd.log")

    def start(self, timeout=20):
        exe = os.path.join(builddir(), "daemon", "perfhubd")
        spool, env = spool_args(self.state)
        if self.env is not None:
            env = dict(env or os.environ, **self.env)
        cmd = [exe, "--listen", "127.0.0.1:0"] + db_args(self.state) + spool + [
               "--workers", str(self.workers)]
        cmd += self.args
        self.log = open(self.log_path, "ab")
        self.log_start = self.log.tell()
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, env=env)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("perfhubd exited with %d:\n%s" % (self.proc.returncode,
                                                                    self.read_log()))
            m = re.findall(r'msg="listening" .*?port=(\d+)', self.read_log()[self.log_start:])
            if m:
                self.port = int(m[-1])
                return self
            time.sleep(0.05)
        raise RuntimeError("perfhubd did not start:\n" + self.read_log())

    def read_log(self):
        try:
            with open(self.log_path, "r", encoding="latin-1") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if not self.proc or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def kill9(self):
        return self.stop(signal.SIGKILL)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        if exc[0] is not None:
            sys.stderr.write("---- perfhubd log ----\n" + self.read_log()[-6000:])
        return False

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def request(self, method, path, body=None, headers=None, timeout=60):
        """(status, headers, body bytes); never raises for HTTP errors."""
        if body is not None and len(body) >= EXPECT_CONTINUE_BYTES:
            return self._request_expect(method, path, body, headers or {},
                                        timeout)
        req = urllib.request.Request(self.url + path, data=body, method=method,
                                     headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def _request_expect(self, method, path, body, headers, timeout):
        """A large body goes after `Expect: 100-continue`, as curl sends it:
        a refusal before the body (401, 413) is read as the answer instead
        of a broken pipe when the server closes while the body is sent."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=timeout)
        try:
            conn.putrequest(method, path, skip_accept_encoding=True)
            for k, v in headers.items():
                conn.putheader(k, v)
            conn.putheader("Content-Length", str(len(body)))
            conn.putheader("Expect", "100-continue")
            conn.endheaders()
            sock = conn.sock
            # a server that ignores Expect gets the body after a while
            readable, _, _ = select.select([sock], [], [], EXPECT_WAIT_SECONDS)
            interim = sock.recv(25, socket.MSG_PEEK) if readable else b""
            if not readable or re.match(rb"HTTP/1\.[01] 100 ", interim):
                if readable:
                    head = b""
                    while not head.endswith(b"\r\n\r\n"):
                        head += sock.recv(1)
                try:
                    sock.sendall(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the answer may still be readable
            r = conn.getresponse()
            return r.status, dict(r.headers), r.read()
        finally:
            conn.close()

    def json(self, method, path, body=None, headers=None):
        st, _, data = self.request(method, path, body, headers)
        return st, (json.loads(data) if data else None)

    def upload(self, path_or_bytes, query="", headers=None):
        if isinstance(path_or_bytes, bytes):
            body = path_or_bytes
        else:
            with open(path_or_bytes, "rb") as f:
                body = f.read()
        h = {"Content-Type": "application/octet-stream"}
        h.update(headers or {})
        return self.json("POST", "/api/v1/profiles" + query, body, h)

    def wait_profiles(self, n, timeout=60):
        """Polls until at least n profiles are listed; returns the list's
        answer (newest first)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            st, lst = self.json("GET", "/api/v1/profiles?limit=1000")
            if lst["total"] >= n:
                return lst
            time.sleep(0.1)
        raise AssertionError("want %d profiles, have %d" % (n, lst["total"]))

    def wait(self, pid, timeout=120):
        """Polls until the profile is ready or failed; returns its JSON."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            st, p = self.json("GET", "/api/v1/profiles/%d" % pid)
            if st != 200:
                raise AssertionError("GET profile %d: %d %s" % (pid, st, p))
            if p["status"] in ("ready", "failed"):
                return p
            time.sleep(0.1)
        raise AssertionError("profile %d not done after %ds" % (pid, timeout))


def raw_http(port, data, timeout=10):
    """Raw bytes to the daemon; (status or None, head text, body bytes).
    Reads one answer (by its Content-Length) or until the server closes.
    The client never half-closes: a server may take that for an abort, as
    nginx does."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    out = b""
    try:
        s.sendall(data)
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
            head, sep, body = out.partition(b"\r\n\r\n")
            m = re.search(rb"\r\ncontent-length: *(\d+)", head, re.I)
            if sep and m and len(body) >= int(m.group(1)):
                break
    except OSError:
        pass
    finally:
        s.close()
    if not out.startswith(b"HTTP/1."):
        return None, "", out
    head, _, body = out.partition(b"\r\n\r\n")
    return int(head.split()[1]), head.decode("latin-1"), body


def elf_build_id(path):
    """The GNU build-id note of an ELF file, as hex (readelf -n)."""
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            return line.split("Build ID:")[1].strip()
    raise AssertionError("no build-id in " + path)
def cpu_seconds(pid):
    """user + system CPU seconds of a process so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_status_kb(pid, field):
    """A kB field of /proc/PID/status (VmHWM: peak RSS), 0 when absent."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def have_perf_record():
    """True when `perf record` works here (root, perf installed)."""
    if not shutil.which("perf"):
        return False
    d = tmpdir("perfcheck-")
    try:
        r = subprocess.run(["perf", "record", "-q", "-o", os.path.join(d, "p.data"), "--",
                            "true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=60)
        return r.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        shutil.rmtree(d, ignore_errors=True)


def perf_record(out, args, workload):
    subprocess.run(["perf", "record", "-q", "-o", out] + list(args) + ["--"] + list(workload),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=300)
    return out


BUSY = ["sh", "-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done"]


def perf_stats(path):
    """perf report --stats: ({record name: count}, {event: samples})."""
    out = subprocess.run(["perf", "report", "--stats", "-i", path], capture_output=True,
                         text=True, timeout=120).stdout
    total, per_event, cur = {}, {}, None
    for line in out.splitlines():
        m = re.match(r"^(\S.*) stats:$", line)
        if m:
            cur = None if m.group(1) == "Aggregated" else m.group(1)
            continue
        m = re.match(r"^\s+(\S+) events:\s+(\d+)", line)
        if not m:
            continue
        if cur is None:
            total[m.group(1)] = int(m.group(2))
        elif m.group(1) == "SAMPLE":
            per_event[cur] = int(m.group(2))
    total.pop("TOTAL", None)
    return total, per_event


def perf_script_comm_periods(path):
    """{comm: (samples, period)} from perf script, as stackcollapse-perf keys
    stacks (spaces in comm become '_')."""
    out = subprocess.run(["perf", "script", "-F", "comm,period", "-G", "-i", path],
                         capture_output=True, text=True, timeout=300).stdout
    res = {}
    for line in out.splitlines():
        line = line.rstrip()
        if not line:
            continue
        comm, _, period = line.rpartition(" ")
        comm = comm.strip().replace(" ", "_")
        s, p = res.get(comm, (0, 0))
        res[comm] = (s + 1, p + int(period))
    return res


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


class Failures:
    """Checks that go on after one fails: a failed one is printed as
    "FAIL: msg" and kept in .list; status() is the test's exit status."""

    def __init__(self):
        self.list = []

    def __call__(self, cond, msg):
        if not cond:
            self.list.append(msg)
            print("FAIL: " + msg)
        return cond

    def status(self):
        return 1 if self.list else 0


def sources_sample_counts():
    """{file: SAMPLE records} from Table 2 of the corpus SOURCES.md."""
    counts = {}
    try:
        text = open(corpus("SOURCES.md"), encoding="utf-8").read()
    except OSError:
        return counts
    table = text.split("## Table 2", 1)[-1]
    for line in table.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 8 and cells[1].startswith("`"):
            m = re.match(r"^(\d+)", cells[7])
            if m:
                counts[cells[1].strip("`")] = int(m.group(1))
    return counts

"""pg_harness - a PostgreSQL server of the test's own (standard library only).

initdb and pg_ctl from Debian's postgresql package (under
/usr/lib/postgresql/*/bin), run as an unprivileged user (`nobody` when the
tests run as root, which PostgreSQL refuses), listening on a unix socket in
a temporary directory only (no TCP port, so no clashes), trust
authentication for the one role `perfhub`. The server is stopped by the PID
in its postmaster.pid at the end: on leaving the `with`, at exit, and on
SIGTERM, SIGINT or SIGHUP.

    with pg_harness.Postgres() as pg:
        uri = pg.create_db("t1")     # postgresql://perfhub@/t1?host=...
        pg.restart("immediate")      # as after a crash; "fast" = clean
        pg.psql("t1", "SELECT 1")

As a command, it runs one with a server up and PERFHUB_PG_URI set:
    python3 tests/pg_harness.py -- COMMAND [ARG]...
"""
import atexit
import glob
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

SKIP = 77
ROLE = "perfhub"
PORT = 5432		# only names the socket file: nothing listens on TCP
SOCKET_PATH_MAX = 100	# sun_path is 108 bytes with ".s.PGSQL.5432" inside

_running = set()


def bindir():
    """The newest installed PostgreSQL's bin directory, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    return os.path.dirname(found[-1]) if found else None


def require():
    """Exit 77 when PostgreSQL's server programs are not installed."""
    if not bindir():
        print("SKIP: PostgreSQL is not installed (build-aux/install-deps --test installs it)")
        sys.exit(SKIP)


def _stop_all(*_):
    for pg in list(_running):
        pg.stop()


def _on_signal(signum, frame):
    _stop_all()
    raise SystemExit(128 + signum)


atexit.register(_stop_all)


def _install_handlers():
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        if signal.getsignal(s) in (signal.SIG_DFL, signal.default_int_handler):
            signal.signal(s, _on_signal)


def _others_can_enter(path):
    """Whether every directory from / down to path lets other users pass."""
    path = os.path.abspath(path)
    while True:
        if not os.stat(path).st_mode & 0o001:
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent


def test_tmp_base():
    """Where tests make their temporary directories: PERFHUB_TEST_TMP (the
    build tree's tests/tmp), else the system's. Tests running as root
    start servers as nobody (PostgreSQL, a sandboxed perfhubd), which must
    reach them: a checkout under a private directory (mktemp -d makes them
    0700) falls back to a directory of /tmp others may enter."""
    base = os.environ.get("PERFHUB_TEST_TMP") or tempfile.gettempdir()
    os.makedirs(base, exist_ok=True)
    if os.geteuid() == 0 and not _others_can_enter(base):
        base = os.path.join(tempfile.gettempdir(), "perfhub-tests")
        os.makedirs(base, exist_ok=True)
        os.chmod(base, 0o755)
    return base


class Postgres:
    def __init__(self, settings=None):
        require()
        self.bin = bindir()
        self.dir = tempfile.mkdtemp(prefix="pg-", dir=test_tmp_base())
        self.data = os.path.join(self.dir, "data")
        self.sock = self.dir
        if len(os.path.join(self.sock, ".s.PGSQL.%d" % PORT)) > SOCKET_PATH_MAX:
            self.sock = tempfile.mkdtemp(prefix="pgs-")
        self.log_path = os.path.join(self.dir, "postgres.log")
        self.settings = dict(settings or {})
        self.pid = None
        self.user = None
        if os.geteuid() == 0:
            self.user = pwd.getpwnam("nobody")
            for d in {self.dir, self.sock}:
                os.chown(d, self.user.pw_uid, self.user.pw_gid)
        _install_handlers()

    def _run(self, args, **kw):
        """Runs a PostgreSQL program as the server's user."""
        if self.user:
            kw.update(user=self.user.pw_uid, group=self.user.pw_gid, extra_groups=[])
        env = dict(os.environ, LC_ALL="C", LANG="C")
        for k in [k for k in env if k.startswith("PG")]:
            del env[k]
        return subprocess.run(args, env=env, cwd=self.dir, capture_output=True, **kw)

    def options(self):
        opts = {"listen_addresses": "''", "unix_socket_directories": "'%s'" % self.sock,
                "port": str(PORT), "fsync": "off", "max_connections": "200",
                "shared_buffers": "64MB", "log_min_messages": "warning"}
        opts.update(self.settings)
        return " ".join("-c %s=%s" % kv for kv in opts.items())

    def start(self, timeout=60):
        if not os.path.exists(os.path.join(self.data, "PG_VERSION")):
            p = self._run([os.path.join(self.bin, "initdb"), "-D", self.data, "-U", ROLE,
                           "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"],
                          timeout=timeout)
            if p.returncode:
                raise RuntimeError("initdb failed: %s" % p.stderr.decode(errors="replace"))
        p = self._run([os.path.join(self.bin, "pg_ctl"), "start", "-w", "-t", str(timeout),
                       "-D", self.data, "-l", self.log_path, "-o", self.options()],
                      timeout=timeout + 10)
        if p.returncode:
            raise RuntimeError("pg_ctl start failed: %s\n%s" % (
                p.stderr.decode(errors="replace"), self.log()))
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            self.pid = int(f.readline())
        _running.add(self)
        return self

    def log(self):
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def alive(self):
        if not self.pid:
            return False
        try:
            os.kill(self.pid, 0)
            return True
        except ProcessLookupError:
            return False

    def stop(self, mode="fast", timeout=30):
        """By PID: SIGINT is a fast shutdown, SIGQUIT an immediate one (a
        crash, recovered at the next start), SIGKILL as a last resort."""
        sig = {"fast": signal.SIGINT, "immediate": signal.SIGQUIT,
               "kill": signal.SIGKILL}[mode]
        if self.pid:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass
            deadline = time.time() + timeout
            while self.alive() and time.time() < deadline:
                time.sleep(0.05)
            if self.alive():
                os.kill(self.pid, signal.SIGKILL)
                while self.alive():
                    time.sleep(0.05)
        self.pid = None
        _running.discard(self)

    def restart(self, mode="fast", down_seconds=0):
        self.stop(mode)
        if down_seconds:
            time.sleep(down_seconds)
        return self.start()

    def uri(self, db="postgres"):
        return "postgresql://%s@/%s?host=%s&port=%d" % (
            ROLE, db, urllib.parse.quote(self.sock, safe=""), PORT)

    def psql(self, db, sql):
        p = subprocess.run([os.path.join(self.bin, "psql"), "-X", "-q", "-A", "-t",
                            "-v", "ON_ERROR_STOP=1", "-d", self.uri(db), "-c", sql],
                           capture_output=True, timeout=60)
        if p.returncode:
            raise RuntimeError("psql: %s" % p.stderr.decode(errors="replace"))
        return p.stdout.decode()

    def create_db(self, name):
        self.psql("postgres", 'CREATE DATABASE "%s"' % name)
        return self.uri(name)

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
        if self.sock != self.dir:
            shutil.rmtree(self.sock, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()
        return False


def main(argv):
    if "--" in argv:
        argv = argv[argv.index("--") + 1:]
    if not argv:
        print("usage: pg_harness.py -- COMMAND [ARG]...", file=sys.stderr)
        return 2
    with Postgres() as pg:
        uri = pg.create_db("perfhub")
        return subprocess.call(argv, env=dict(os.environ, PERFHUB_PG_URI=uri))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""A watched directory under the systemd unit's sandbox.

perfhubd.service runs perfhubd as a transient user (DynamicUser=yes,
UMask=0077) on a read-only file system but for its state directory
(ProtectSystem=strict). `perf record` writes its files 0600, so the daemon
cannot read what lands in the watched directory until someone makes it
readable, and it can remove nothing there unless the unit names the
directory in ReadWritePaths=.

When systemd runs this machine (it is PID 1) the daemon runs as a
transient unit with the [Service] settings of systemd/perfhubd.service.in
(systemd-run). Otherwise the sandbox is applied by hand, and the test says
so: the daemon runs as the unprivileged uid 65534 with umask 077
(setpriv), and, for ProtectSystem=strict without ReadWritePaths=, in a
mount namespace where the watched directory is a read-only bind mount
(unshare).

Checked: a recording `perf record` writes into the watched directory (0600,
root's) is not taken while perf runs, is reported unreadable once, is
taken after a chmod (the watcher retries at once on the change, not only
after its backoff) and parses; with --watch-remove and the directory
writable it is removed once spooled; with the directory read-only the
start warns that --watch-remove needs ReadWritePaths=, the file is still
taken and stays. Needs root (to switch users and mount); skips (77)
without it, or where perf cannot record."""
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
import perfhubd_harness as H  # noqa: E402

SRC = os.environ.get("top_srcdir", ".")
DAEMON = os.path.abspath(os.path.join(H.builddir(), "daemon", "perfhubd"))
NOBODY = 65534
check = H.Failures()


def ok(since, msg):
    """msg, when no check failed since `since` failures."""
    if len(check.list) == since:
        print("ok: " + msg)


def unit_properties():
    """The [Service] settings of the unit that sandbox the process, as
    systemd-run -p arguments."""
    props, section = [], None
    skip = ("Type", "NotifyAccess", "ExecStart", "ExecReload", "KillMode", "TimeoutStopSec",
            "Restart", "RestartSec", "StateDirectory", "StateDirectoryMode")
    for line in open(os.path.join(SRC, "systemd", "perfhubd.service.in")):
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == "[Service]" and "=" in line and not line.startswith("#"):
            key = line.split("=", 1)[0]
            if key not in skip:
                props += ["-p", line]
    return props


class Sandboxed(H.Daemon):
    """perfhubd in the unit's sandbox: by systemd-run when systemd runs
    here, else as uid 65534 with umask 077 (and the watched directory
    read-only, for a unit without ReadWritePaths=)."""

    def __init__(self, state, args, read_only=None, systemd=False):
        super().__init__(state=state, args=args, workers=1)
        self.read_only = read_only
        self.systemd = systemd
        self.unit = None

    def start(self, timeout=30):
        cmd = [DAEMON, "--listen", "127.0.0.1:0", "--db", os.path.join(self.state, "perfhub.db"),
               "--spool", os.path.join(self.state, "spool"), "--workers", "1"] + self.args
        self.log = open(self.log_path, "ab")
        self.log_start = self.log.tell()
        if self.systemd:
            self.unit = "perfhub-test-watch-%d" % os.getpid()
            rw = [] if self.read_only else ["-p", "ReadWritePaths=" + " ".join(
                a for a in self.args if a.startswith("/"))]
            cmd = (["systemd-run", "--unit", self.unit, "--quiet", "--collect", "-p",
                    "Type=notify", "-p", "ReadWritePaths=" + self.state, "-p",
                    "StandardOutput=file:" + self.log_path, "-p",
                    "StandardError=file:" + self.log_path] + unit_properties() + rw + cmd)
            subprocess.run(cmd, check=True, timeout=60)
            self.proc = None
        else:
            inner = "umask 077; exec setpriv --reuid=%d --regid=%d --clear-groups -- %s" % (
                NOBODY, NOBODY, " ".join("'%s'" % a for a in cmd))
            if self.read_only:
                inner = ("mount --bind '{d}' '{d}' && mount -o remount,bind,ro '{d}' && {i}"
                         .format(d=self.read_only, i=inner))
                cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c", inner]
            else:
                cmd = ["sh", "-c", inner]
            self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log)
        deadline = time.time() + timeout
        while time.time() < deadline:
            m = re.findall(r'msg="listening" .*?port=(\d+)', self.read_log()[self.log_start:])
            if m:
                self.port = int(m[-1])
                return self
            if self.proc and self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("perfhubd did not start:\n" + self.read_log())

    def stop(self, sig=None, timeout=30):
        if self.unit:
            subprocess.run(["systemctl", "stop", self.unit], timeout=60)
            self.unit = None
            return 0
        return super().stop(timeout=timeout)


def profiles(d):
    return d.json("GET", "/api/v1/profiles")[1]["profiles"]


def record_into(inbox, name):
    """perf record writing into the watched directory, as perf leaves it: 0600, root's."""
    path = os.path.join(inbox, name)
    proc = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-o", path, "--"] +
                            ["sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return path, proc


def unreadable_then_chmod(d, inbox):
    n = len(check.list)
    path, proc = record_into(inbox, "rec.data")
    while proc.poll() is None:
        check(not profiles(d), "taken while perf record was writing it")
        time.sleep(0.2)
    check(proc.returncode == 0, "perf record failed")
    check(os.stat(path).st_mode & 0o777 == 0o600, "perf wrote the file %o, not 0600" %
          (os.stat(path).st_mode & 0o777))
    deadline = time.time() + 10
    while time.time() < deadline and "cannot read, trying again later" not in d.read_log():
        time.sleep(0.1)
    check("cannot read, trying again later" in d.read_log(), "no unreadable warning")
    time.sleep(3)
    check(not profiles(d), "an unreadable file became a profile")
    warned = d.read_log().count("cannot read, trying again later")
    check(warned == 1, "the unreadable file was reported %d times" % warned)
    t0 = time.time()
    os.chmod(path, 0o644)
    while time.time() < t0 + 30 and not profiles(d):
        time.sleep(0.1)
    took = time.time() - t0
    lst = profiles(d)
    check(len(lst) == 1, "%d profiles after the chmod" % len(lst))
    if lst:
        p = d.wait(lst[0]["id"])
        check(p["status"] == "ready", "after the chmod: %s %s" % (p["status"], p.get("error")))
    check(took < 5, "taken %.1f s after the chmod (the retry waits for the backoff?)" % took)
    ok(n, "0600 file reported unreadable once, taken %.1f s after a chmod, ready" % took)
    return path


def main():
    if os.geteuid() != 0:
        print("SKIP: needs root to run perfhubd as another user and to mount")
        return H.SKIP
    if not os.access(DAEMON, os.X_OK):
        print("SKIP: %s not built" % DAEMON)
        return H.SKIP
    if not H.have_perf_record():
        print("SKIP: perf record does not work here")
        return H.SKIP
    systemd = os.path.isdir("/run/systemd/system") and shutil.which("systemd-run")
    if systemd:
        print("the unit's sandbox: systemd-run with perfhubd.service's [Service] settings")
    else:
        pid1 = open("/proc/1/comm").read().strip()
        print("the unit's sandbox by hand: systemd does not run this machine (PID 1 is %s), "
              "so no transient unit; uid %d, umask 077, the watched directory read-only "
              "in a mount namespace where the unit would lack ReadWritePaths=" % (pid1, NOBODY))
    work = H.tmpdir("service-watch-")
    os.chmod(work, 0o755)

    # the directory writable (the unit names it in ReadWritePaths=)
    inbox = os.path.join(work, "inbox")
    os.makedirs(inbox)
    os.chmod(inbox, 0o777)	# not sticky: the daemon removes root's files
    state = os.path.join(work, "state")
    os.makedirs(state)
    os.chown(state, NOBODY, NOBODY)
    with Sandboxed(state, ["--watch", inbox, "--watch-remove"], systemd=systemd) as d:
        path = unreadable_then_chmod(d, inbox)
        n = len(check.list)
        deadline = time.time() + 10
        while time.time() < deadline and os.path.exists(path):
            time.sleep(0.1)
        check(not os.path.exists(path), "--watch-remove left the file in a writable directory")
        ok(n, "--watch-remove removes it where the unit may write")

    # the directory read-only (ProtectSystem=strict, no ReadWritePaths=)
    inbox2 = os.path.join(work, "inbox2")
    os.makedirs(inbox2)
    os.chmod(inbox2, 0o1777)	# only the mount keeps the daemon from writing
    state2 = os.path.join(work, "state2")
    os.makedirs(state2)
    os.chown(state2, NOBODY, NOBODY)
    src = H.perf_record(os.path.join(work, "moved.data"), ["-e", "cpu-clock"], H.BUSY)
    os.chmod(src, 0o644)
    n = len(check.list)
    with Sandboxed(state2, ["--watch", inbox2, "--watch-remove"], read_only=inbox2,
                   systemd=systemd) as d:
        check("ReadWritePaths" in d.read_log(), "no warning that --watch-remove needs "
              "ReadWritePaths=:\n" + d.read_log()[-1500:])
        # write, then rename: outside the namespace the directory is writable
        shutil.copy(src, os.path.join(inbox2, ".tmp"))
        os.rename(os.path.join(inbox2, ".tmp"), os.path.join(inbox2, "moved.data"))
        deadline = time.time() + 30
        while time.time() < deadline and not profiles(d):
            time.sleep(0.1)
        lst = profiles(d)
        check(len(lst) == 1 and d.wait(lst[0]["id"])["status"] == "ready",
              "the file in a read-only directory was not taken")
        time.sleep(1)
        check(os.path.exists(os.path.join(inbox2, "moved.data")), "removed from a read-only "
              "directory?")
        check("cannot remove" in d.read_log() and "ReadWritePaths" in d.read_log(),
              "the failed removal is not reported with its remedy")
        ok(n, "read-only watched directory: warned at start, taken, left in place")
    return check.status()


if __name__ == "__main__":
    sys.exit(main())

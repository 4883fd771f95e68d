#!/usr/bin/env python3
"""perfhubd's configuration and logging as an operator meets them.

- `--check-config`: a file with one mistake per line (unknown key, bad
  number, out-of-range number, bad listen addresses, bad size, bad log
  level, an action as a key, a line without '=') exits 1 and names every
  mistake with its key and line, "FILE:LINE: KEY:"; a bad flag is named
  "command line: KEY:"; a token file that does not load is named with the
  line that set it; a good file exits 0.
- Sizes take K/M/G suffixes (the daemon logs the value it uses).
- `--log-level warn` drops info lines; `--debug` and `--log-level debug`
  keep debug lines; levels are on every line.
- With $JOURNAL_STREAM naming stderr, every line starts with its syslog
  priority (<6> info, <4> warn ...); naming another file, it does not.
- SIGHUP: a changed log level and retention limit are applied and logged;
  a changed restart-only key is logged as such; a broken file is refused
  and the daemon keeps serving.
Skips (77) when perfhubd is not built."""
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfhubd_harness as H  # noqa: E402

DAEMON = os.path.join(H.builddir(), "daemon", "perfhubd")
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg)
    return cond


def check_config(args):
    r = subprocess.run([DAEMON] + args + ["--check-config"], capture_output=True, text=True,
                       timeout=30)
    return r.returncode, r.stdout + r.stderr


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


# (line text, key the message must name, a word the message must hold)
BAD_LINES = [
    ("colour = blue", "colour", "unknown"),
    ("workers = many", "workers", "number"),
    ("workers = 0", "workers", "[1, 256]"),
    ("queue-size = 99999999", "queue-size", "[1, 1000000]"),
    ("listen = 127.0.0.1", "listen", "ADDR:PORT"),
    ("listen = 127.0.0.1:70000", "listen", "port"),
    ("listen = 300.1.2.3:8080", "listen", "address"),
    ("listen = localhost:8080", "listen", "address"),
    ("max-db-size = 20X", "max-db-size", "size"),
    ("max-upload = 0", "max-upload", "size"),
    ("log-level = chatty", "log-level", "debug, info, warn or error"),
    ("watch-remove = perhaps", "watch-remove", "true or false"),
    ("retain-days = -3", "retain-days", "number"),
    ("vacuum = yes", "vacuum", "command line"),
]


def test_check_config(work):
    good = write(os.path.join(work, "good.conf"),
                 "# fine\nlisten = [::1]:9000\nworkers = 2\nmax-db-size = 20M\n"
                 "retain-days = 30\nlog-level = warn\n")
    rc, out = check_config(["--config", good])
    check(rc == 0 and "configuration ok" in out, "good config: exit %d: %s" % (rc, out))

    text = "# one mistake per line from line 2 on\n" + "".join(l + "\n" for l, _, _ in BAD_LINES)
    text += "just words\n"
    bad = write(os.path.join(work, "bad.conf"), text)
    rc, out = check_config(["--config", bad])
    check(rc == 1, "bad config: exit %d" % rc)
    for n, (line, key, word) in enumerate(BAD_LINES, start=2):
        pat = "%s:%d: %s: " % (bad, n, key)
        hit = [l for l in out.splitlines() if pat in l]
        if check(hit, "'%s' (line %d): no message naming '%s'" % (line, n, pat)):
            check(word in hit[0], "'%s': message lacks '%s': %s" % (line, word, hit[0]))
    check("%s:%d: expected name = value" % (bad, len(BAD_LINES) + 2) in out,
          "a line without '=' is not reported with its line")
    got = len([l for l in out.splitlines() if bad + ":" in l])
    check(got == len(BAD_LINES) + 1, "%d messages for %d mistakes" % (got, len(BAD_LINES) + 1))

    rc, out = check_config(["--config", good, "--workers", "300"])
    check(rc == 1 and "command line: workers: " in out, "bad flag: exit %d: %s" % (rc, out))

    toks = write(os.path.join(work, "tokens"), "abc superuser\n")
    conf = write(os.path.join(work, "tok.conf"), "\n\ntoken-file = %s\n" % toks)
    rc, out = check_config(["--config", conf])
    check(rc == 1 and ("%s:3: token-file: " % conf) in out,
          "bad token file: exit %d: %s" % (rc, out))
    conf = write(os.path.join(work, "dir.conf"), "watch = %s/nowhere\n" % work)
    rc, out = check_config(["--config", conf])
    check(rc == 1 and ("%s:1: watch: " % conf) in out, "missing watch dir: %d: %s" % (rc, out))
    if not failures:
        print("ok: --check-config names key and line for %d kinds of mistakes" %
              (len(BAD_LINES) + 4))


def logged_lines(d):
    return d.read_log()[d.log_start:].splitlines()


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_levels(work):
    # --log-level warn hides the "listening" line the harness waits for
    state = os.path.join(work, "warn")
    port = free_port()
    errpath = os.path.join(state, "stderr")
    with open(errpath, "wb") as err:
        p = subprocess.Popen([DAEMON, "--listen", "127.0.0.1:%d" % port, "--log-level", "warn",
                              "--db", os.path.join(state, "db"), "--spool",
                              os.path.join(state, "spool"), "--workers", "1"], stderr=err)
    try:
        import urllib.request
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=2)
                break
            except OSError:
                time.sleep(0.1)
        req = urllib.request.Request("http://127.0.0.1:%d/api/v1/profiles" % port,
                                     data=b"PERFILE2 but no perf.data file", method="POST")
        urllib.request.urlopen(req, timeout=10).read()
        while time.time() < deadline and "parse failed" not in open(errpath).read():
            time.sleep(0.1)
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)
    lines = open(errpath).read().splitlines()
    check(not any(re.search(r" level=(info|debug) ", l) for l in lines),
          "--log-level warn: info or debug lines: %r" % lines[:5])
    check(any("level=warn" in l and "parse failed" in l for l in lines),
          "--log-level warn: no warn line for a failed parse: %r" % lines[:5])
    for args in (["--debug"], ["--log-level", "debug"]):
        with H.Daemon(state=os.path.join(work, "dbg" + str(len(args))),
                      args=args + ["--max-db-size", "3G"]) as d:
            lines = logged_lines(d)
            check(any(" level=debug msg=" in l for l in lines), "%s: no debug line" % " ".join(args))
            check(any("max_db_size=%d" % (3 << 30) in l for l in lines),
                  "--max-db-size 3G is not 3 GiB: %s" % lines[:1])
    check(all(re.match(r"^ts=\S+ level=(debug|info|warn|error|fatal) ", l) for l in lines if l),
          "a line without a level")
    if not failures:
        print("ok: log levels, --debug alias, size suffixes")


def start_with_stderr(args, errpath, env):
    err = open(errpath, "wb")
    p = subprocess.Popen([DAEMON] + args, stderr=err, stdout=subprocess.DEVNULL, env=env)
    deadline = time.time() + 20
    while time.time() < deadline and 'msg="listening"' not in open(errpath).read():
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)
    err.close()
    return open(errpath).read().splitlines()


def test_journal(work):
    os.makedirs(os.path.join(work, "j"))
    args = ["--listen", "127.0.0.1:0", "--db", os.path.join(work, "j", "db"),
            "--spool", os.path.join(work, "j", "spool")]
    errpath = os.path.join(work, "j", "stderr")
    open(errpath, "w").close()
    st = os.stat(errpath)
    env = dict(os.environ, JOURNAL_STREAM="%d:%d" % (st.st_dev, st.st_ino))
    lines = start_with_stderr(args, errpath, env)
    check(lines and all(re.match(r"^<6>level=info ", l) or re.match(r"^<4>level=warn ", l)
                        for l in lines), "journal lines: %r" % lines[:3])
    other = os.stat(work)
    env["JOURNAL_STREAM"] = "%d:%d" % (other.st_dev, other.st_ino)
    lines = start_with_stderr(args, errpath, env)
    check(lines and all(l.startswith("ts=") for l in lines),
          "JOURNAL_STREAM of another file: %r" % lines[:3])
    if not failures:
        print("ok: <N> priorities exactly when stderr is the journal")


def test_sighup(work):
    conf = write(os.path.join(work, "hup.conf"), "log-level = info\nqueue-size = 100\n")
    with H.Daemon(state=os.path.join(work, "hup"), args=["--config", conf]) as d:
        write(conf, "log-level = debug\nqueue-size = 200\nretain-days = 9\n")
        d.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while time.time() < deadline and "configuration reloaded" not in d.read_log():
            time.sleep(0.05)
        log = d.read_log()
        check("key=log-level old=info new=debug" in log, "SIGHUP: log-level change not logged")
        check("key=retain-days old=0 new=9" in log, "SIGHUP: retain-days change not logged")
        check('setting needs a restart" key=queue-size' in log, "SIGHUP: queue-size not flagged")
        write(conf, "log-level = shouting\n")
        d.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while time.time() < deadline and "keeping the running one" not in d.read_log():
            time.sleep(0.05)
        check("keeping the running one" in d.read_log(), "SIGHUP: broken config not refused")
        st, _, _ = d.request("GET", "/healthz")
        check(st == 200, "after a broken reload: /healthz %d" % st)
    if not failures:
        print("ok: SIGHUP applies and logs live settings, refuses a broken file")


def main():
    if not os.access(DAEMON, os.X_OK):
        print("SKIP: perfhubd not built")
        return H.SKIP
    work = H.tmpdir("service-config.")
    for d in ("warn", "dbg1", "dbg2", "hup"):
        os.makedirs(os.path.join(work, d))
    test_check_config(work)
    test_levels(work)
    test_journal(work)
    test_sighup(work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

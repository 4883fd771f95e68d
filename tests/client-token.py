#!/usr/bin/env python3
"""The client's server and token: PERFHUB_SERVER for every client command;
the token from PERFHUB_TOKEN, from the file PERFHUB_TOKEN_FILE names, or
from --token-file (a bare token or a line of the server's token file),
which wins over the environment; no token or a wrong one: the server's 401
said plainly. A token that is not one visible-ASCII word (a header
injection) is refused before anything is sent. The token never shows:
not on any process's command line while upload - and record run, not in
the environment perf and the recorded command get, not in any output or
the server's log."""
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfhubd_harness import Daemon, perf_record  # noqa: E402
from client_common import (Checks, build_prog, clean_env, first_id,  # noqa: E402
                           need_perf_and_cc, perfhub, perfhub_exe, workdir)

TOKEN = "w-0123456789abcdef-secret"
READ_TOKEN = "r-fedcba9876543210-secret"


def cmdlines_with(needle):
    """pids whose command line holds needle."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if needle.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def children(pid):
    """Every descendant of pid."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            out += [int(p)] + children(int(p))
    return out


def environ_has(pid, needle):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            return needle.encode() in f.read()
    except OSError:
        return False


def main():
    need_perf_and_cc()
    work = workdir("client-token-")
    prog = build_prog(work)
    chk = Checks()
    data = perf_record(os.path.join(work, "p.data"), ["-e", "cpu-clock"], [prog, "0.1"])
    server_tokens = os.path.join(work, "tokens")
    with open(server_tokens, "w") as f:
        f.write("# tokens\n%s write\n%s read\n" % (TOKEN, READ_TOKEN))
    bare = os.path.join(work, "token")
    with open(bare, "w") as f:
        f.write("\n# the client's token\n%s\n" % TOKEN)
    outputs = []

    with Daemon(args=["--token-file", server_tokens]) as d:
        def run(args, env=None, **kw):
            r = perfhub(args, env=env, **kw)
            outputs.extend([r.stdout, r.stderr])
            return r

        srv = clean_env(PERFHUB_SERVER=d.url)
        r = run(["upload", data, "--no-debuginfo"], env=srv)
        chk(r.returncode == 1 and "HTTP 401" in r.stderr, "no token: the server's 401 (%s)" %
            r.stderr.strip())
        r = run(["upload", data, "--no-debuginfo"], env=dict(srv, PERFHUB_TOKEN="wrong"))
        chk(r.returncode == 1 and "HTTP 401" in r.stderr, "a wrong token: 401")
        r = run(["upload", data, "--no-debuginfo"], env=dict(srv, PERFHUB_TOKEN=READ_TOKEN))
        chk(r.returncode == 1 and "HTTP 403" in r.stderr, "a read token uploading: 403")

        r = run(["upload", data, "--wait"], env=dict(srv, PERFHUB_TOKEN=TOKEN))
        chk(r.returncode == 0, "PERFHUB_SERVER and PERFHUB_TOKEN: %s" % r.stderr)
        pid = first_id(r.stdout)
        for args in (["ls"], ["show", str(pid)]):
            r = run(args, env=srv)
            chk(r.returncode == 0 and str(pid) in r.stdout, "%s from PERFHUB_SERVER" % args[0])
        r = run(["upload", data], env=dict(srv, PERFHUB_TOKEN_FILE=bare))
        chk(r.returncode == 0 and int(r.stdout) == pid, "PERFHUB_TOKEN_FILE: %s" % r.stderr)
        r = run(["upload", data, "--token-file", server_tokens],
                env=dict(srv, PERFHUB_TOKEN="wrong"))
        chk(r.returncode == 0, "--token-file (the server's format) wins over PERFHUB_TOKEN")
        r = run(["upload", data], env=dict(srv, PERFHUB_TOKEN_FILE=os.path.join(work, "nope")))
        chk(r.returncode == 1 and "nope" in r.stderr, "a missing token file is named")

        evil = TOKEN + "\r\nX-Injected: 1"
        r = run(["upload", data], env=dict(srv, PERFHUB_TOKEN=evil))
        chk(r.returncode == 1 and "visible ASCII" in r.stderr and "Injected" not in r.stderr,
            "a token with CR LF is refused before sending: %s" % r.stderr.strip())

        # while a stream runs: the token on no command line
        cat = subprocess.Popen(["cat", data], stdout=subprocess.PIPE)
        slow = subprocess.Popen(["sh", "-c", "cat; sleep 2"], stdin=cat.stdout,
                                stdout=subprocess.PIPE)
        cli = subprocess.Popen([perfhub_exe(), "upload", "-", "--no-debuginfo"],
                               stdin=slow.stdout, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               env=dict(srv, PERFHUB_TOKEN=TOKEN))
        time.sleep(0.5)
        chk(cli.poll() is None and not cmdlines_with(TOKEN),
            "upload - running: the token is on no command line")
        out, err = cli.communicate(timeout=60)
        outputs.extend([out, err])
        cat.wait()
        slow.wait()
        chk(cli.returncode == 0, "upload - with the token: %s" % err)

        # record without a token: the command runs, the upload is refused
        r = run(["record", "--", prog, "0.1"], env=srv)
        chk(r.returncode == 125 and "client-prog stdout" in r.stdout and "HTTP 401" in r.stderr
            and "did not reach the server" in r.stderr,
            "record without a token: COMMAND ran, the 401 said, exit 125 (%d)" % r.returncode)

        # record: perf and the command do not get the token
        cli = subprocess.Popen([perfhub_exe(), "record", "--", prog, "1.5", "0", "env"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=dict(srv, PERFHUB_TOKEN=TOKEN))
        seen_perf, leaked = False, []
        deadline = time.time() + 1.2
        while time.time() < deadline and cli.poll() is None:
            for c in children(cli.pid):
                try:
                    comm = open("/proc/%d/comm" % c).read().strip()
                except OSError:
                    continue
                seen_perf |= comm.startswith("perf")
                if environ_has(c, TOKEN):
                    leaked.append(comm)
            time.sleep(0.1)
        chk(seen_perf and not leaked and not cmdlines_with(TOKEN),
            "record running: perf seen, no child holds the token (%s)" % leaked)
        out, err = cli.communicate(timeout=120)
        outputs.extend([out, err])
        envs = [l for l in out.splitlines() if l.startswith("ENV ")]
        chk(cli.returncode == 0 and envs and not any("PERFHUB_TOKEN" in l for l in envs),
            "record with the token: uploaded, and COMMAND's environment has no PERFHUB_TOKEN")
        chk(any(l.startswith("ENV PERFHUB_SERVER=") for l in envs),
            "(the rest of the environment is passed on)")
        log = d.read_log()
    chk(not any(TOKEN in o or READ_TOKEN in o for o in outputs),
        "no output of any command above holds a token")
    chk(TOKEN not in log and READ_TOKEN not in log, "the server's log holds no token")
    shutil.rmtree(work, ignore_errors=True)
    return chk.status()


if __name__ == "__main__":
    sys.exit(main())

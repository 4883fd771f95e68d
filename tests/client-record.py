#!/usr/bin/env python3
"""perfhub record -- COMMAND against a test server, around a program built
here: the profile ends ready with the sample count perf reports for the
bytes the server stored, its frames named; the command's stdout and stderr
stay its own; the exit status is the command's (3, 143 for SIGTERM, 127
for a missing command); each CI's variables give its labels, --tag
overrides one, --no-ci-labels drops them; perf missing from PATH, an event
perf refuses, and (as an unprivileged user) system-wide events under
kernel.perf_event_paranoid >= 1 are each said plainly with the fix, the
command not run and nothing left on the server; a server that does not
answer runs nothing; SIGTERM to perfhub ends the recording and still
uploads it."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfhubd_harness import Daemon, perf_stats  # noqa: E402
from client_common import (CI_CASES, Checks, build_prog, clean_env,  # noqa: E402
                           need_perf_and_cc, perfhub, perfhub_exe, spooled, workdir)

SUMMARY = re.compile(r"^(\d+) (ready|failed)", re.M)


def summary_id(stdout):
    m = SUMMARY.search(stdout)
    return int(m.group(1)) if m else None


def nr_profiles(d):
    _, j = d.json("GET", "/api/v1/profiles")
    return j["total"]


def record_real_program(chk, d, prog):
    r = perfhub(["record", "--server", d.url, "--name", "rec-real", "--", prog, "0.8", "0"])
    sys.stdout.write(r.stderr)
    chk(r.returncode == 0, "record around a program: exit 0 (%d)" % r.returncode)
    chk(r.stdout.startswith("client-prog stdout\n"),
        "the command's stdout is on stdout, not mixed into perf's stream: %r" % r.stdout[:80])
    chk("client-prog stderr" in r.stderr, "the command's stderr is on stderr")
    pid = summary_id(r.stdout)
    if not chk(pid is not None, "a summary line 'ID ready: ...' on stdout"):
        return
    st, p = d.json("GET", "/api/v1/profiles/%d" % pid)
    chk(p["status"] == "ready" and p["name"] == "rec-real",
        "profile %d ready, named: %s %s" % (pid, p["status"], p["name"]))
    want, per_event = perf_stats(spooled(d, p))
    chk(want.get("SAMPLE", 0) > 0 and p["samples"] == want.get("SAMPLE"),
        "samples %d = perf report --stats on the stored bytes (%s)" %
        (p["samples"], want.get("SAMPLE")))
    chk(p["samples_per_event"] == per_event,
        "samples per event %s = perf's %s" % (p["samples_per_event"], per_event))
    chk("--buildid-mmap" in p["header"]["cmdline"] and " -g " in p["header"]["cmdline"],
        "perf ran with -g --buildid-mmap in pipe mode: %s" % p["header"]["cmdline"])
    _, _, folded = d.request("GET", "/api/v1/profiles/%d/collapsed" % pid)
    chk(b";client_hot " in folded, "frames named (client_hot in /collapsed)")
    chk(("%d ready: %d samples" % (pid, p["samples"])) in r.stdout,
        "the summary says ready and perf's sample count")
    chk(("page       %s/#/profile/%d" % (d.url, pid)) in r.stdout, "the summary's page URL")
    chk(re.search(r"perfhub record: debuginfo: \d+ build-ids", r.stderr),
        "one debuginfo summary line from the stream's build-ids")


def exit_statuses(chk, d, prog):
    r = perfhub(["record", "--server", d.url, "--", prog, "0.2", "3"])
    chk(r.returncode == 3 and summary_id(r.stdout),
        "COMMAND exiting 3: perfhub exits 3 (%d), profile uploaded" % r.returncode)
    r = perfhub(["record", "--server", d.url, "--", "/bin/sh", "-c", "kill -TERM $$"])
    chk(r.returncode == 128 + signal.SIGTERM,
        "COMMAND killed by SIGTERM: 143 (%d)" % r.returncode)
    r = perfhub(["record", "--server", d.url, "--", "/nonexistent/cmd"])
    chk(r.returncode == 127 and "not found" in r.stderr,
        "a COMMAND that does not exist: 127 as from a shell (%d)" % r.returncode)


def ci_labels(chk, d, prog):
    for ci, (env, want) in CI_CASES.items():
        r = perfhub(["record", "--server", d.url, "--", prog, "0.1"], env=clean_env(**env))
        pid = summary_id(r.stdout)
        if not chk(r.returncode == 0 and pid, "%s: record: %d %s" % (ci, r.returncode,
                                                                    r.stderr[-300:])):
            continue
        _, p = d.json("GET", "/api/v1/profiles/%d" % pid)
        chk(p["tags"] == want, "%s labels %s" % (ci, p["tags"]))
        chk("  tags       " + " ".join("%s=%s" % kv for kv in p["tags"].items()) in r.stdout,
            "%s labels listed in the answer" % ci)
    env, want = CI_CASES["GitLab CI"]
    r = perfhub(["record", "--server", d.url, "--tag", "branch=mine", "--tag", "suite=x", "--",
                 prog, "0.1"], env=clean_env(**env))
    _, p = d.json("GET", "/api/v1/profiles/%d" % summary_id(r.stdout))
    chk(p["tags"] == dict(want, branch="mine", suite="x"), "--tag overrides a CI label: %s" %
        p["tags"])
    r = perfhub(["record", "--server", d.url, "--no-ci-labels", "--", prog, "0.1"],
                env=clean_env(**env))
    _, p = d.json("GET", "/api/v1/profiles/%d" % summary_id(r.stdout))
    chk(p["tags"] == {}, "--no-ci-labels: no labels (%s)" % p["tags"])
    env = dict(CI_CASES["GitHub Actions"][0])
    del env["RUNNER_NAME"]
    r = perfhub(["record", "--server", d.url, "--", prog, "0.1"], env=clean_env(**env))
    _, p = d.json("GET", "/api/v1/profiles/%d" % summary_id(r.stdout))
    chk(p["tags"].get("runner") == os.uname().nodename,
        "a runner without a name: the host's (%s)" % p["tags"].get("runner"))


def perf_failures(chk, d, work):
    marker = os.path.join(work, "ran")
    cmd = ["/bin/sh", "-c", "touch %s" % marker]
    before = nr_profiles(d)

    r = perfhub(["record", "--server", d.url, "--"] + cmd, env=clean_env(PATH="/nonexistent"))
    chk(r.returncode == 125 and "perf is not installed" in r.stderr and
        "apt-get install linux-perf" in r.stderr and "not run" in r.stderr,
        "perf not in PATH: said plainly with the fix (%d): %s" % (r.returncode, r.stderr))

    r = perfhub(["record", "--server", d.url, "-e", "no-such-event", "--"] + cmd)
    chk(r.returncode == 125 and "refused the options" in r.stderr and
        "event syntax error" in r.stderr,
        "an event perf refuses: perf's message, then ours (%d): %s" % (r.returncode,
                                                                      r.stderr[-300:]))
    chk(not os.path.exists(marker) and nr_profiles(d) == before,
        "the command was not run and nothing reached the server")

    r = perfhub(["record", "--server", d.url, "-o", "x.data", "--"] + cmd)
    chk(r.returncode == 2 and "-o" in r.stderr, "-o is refused: perfhub owns the output")

    paranoid = int(open("/proc/sys/kernel/perf_event_paranoid").read())
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or not setpriv or paranoid < 1:
        print("not checked: the refused-by-paranoid case needs root to drop to an "
              "unprivileged user (setpriv) and kernel.perf_event_paranoid >= 1 (it is %d)" %
              paranoid)
        return
    # a real refusal: an unprivileged user asking for system-wide events
    r = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                        perfhub_exe(), "record", "--server", d.url, "-a", "--",
                        "/bin/sh", "-c", "echo RAN"],
                       capture_output=True, text=True, env=clean_env(), timeout=120,
                       cwd="/")
    chk(r.returncode == 125 and "RAN" not in r.stdout and
        ("kernel.perf_event_paranoid is %d" % paranoid) in r.stderr and
        "sysctl -w kernel.perf_event_paranoid=" in r.stderr and "CAP_PERFMON" in r.stderr,
        "paranoid %d forbids -a for an unprivileged user: said with the fix (%d): %s" %
        (paranoid, r.returncode, r.stderr[-400:]))
    chk(nr_profiles(d) == before, "nothing reached the server")


def server_down(chk, work):
    marker = os.path.join(work, "ran-nosrv")
    r = perfhub(["record", "--server", "http://127.0.0.1:1", "--", "/bin/sh", "-c",
                 "touch %s" % marker])
    chk(r.returncode == 125 and "does not answer" in r.stderr and not os.path.exists(marker),
        "no server: the command is not run (%d)" % r.returncode)


def sigterm(chk, d, prog):
    proc = subprocess.Popen([perfhub_exe(), "record", "--server", d.url, "--", prog, "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=clean_env())
    time.sleep(2)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    pid = summary_id(out)
    chk(proc.returncode == 128 + signal.SIGTERM and pid,
        "SIGTERM to perfhub stops the command; the recording still goes up (%d)" %
        proc.returncode)
    if pid:
        _, p = d.json("GET", "/api/v1/profiles/%d" % pid)
        chk(p["status"] == "ready" and p["samples"] > 0, "ready with %d samples" % p["samples"])


def main():
    need_perf_and_cc()
    work = workdir("client-record-")
    prog = build_prog(work)
    chk = Checks()
    with Daemon() as d:
        record_real_program(chk, d, prog)
        exit_statuses(chk, d, prog)
        ci_labels(chk, d, prog)
        perf_failures(chk, d, work)
        sigterm(chk, d, prog)
    server_down(chk, work)
    shutil.rmtree(work, ignore_errors=True)
    return chk.status()


if __name__ == "__main__":
    sys.exit(main())

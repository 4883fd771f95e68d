#!/usr/bin/env python3
"""perfhub upload, show and ls as a user reads them, and upload - from a
live `perf record -o -` pipe.

upload --wait prints the id, the final status, perf's sample count, the
events and the page URL (--json: the object with "page"); show prints the
same summary (--json the API's object); ls filters by --tag (several),
--name, --limit; the debuginfo sent is one summary line, -v lists the
files. upload - streams a live pipe: the profile has the samples perf
reports for the same bytes (a tee'd copy), the build-ids the stream
carried (--buildid-mmap) get their debuginfo sent after it; a stream
without build-ids says so; an empty one leaves nothing on the server; a
file on stdin goes up as a file. The client's peak RSS stays flat: a long
recording (>= 4 MiB more stream) costs under a quarter of its extra size
plus 1 MiB more than a short one."""
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfhubd_harness import Daemon, perf_record, perf_stats  # noqa: E402
from client_common import (Checks, build_prog, clean_env, first_id,  # noqa: E402
                           need_perf_and_cc, perfhub, perfhub_exe, workdir)

MIB = 1 << 20


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


def wait_summary(chk, d, data, want_samples):
    r = perfhub(["upload", data, "--server", d.url, "--wait", "--tag", "k=v", "--tag",
                 "branch=main", "--name", "first"])
    chk(r.returncode == 0, "upload --wait: %d %s" % (r.returncode, r.stderr))
    pid = first_id(r.stdout)
    _, p = d.json("GET", "/api/v1/profiles/%d" % pid)
    lines = r.stdout.splitlines()
    chk(lines[0].startswith("%d ready: %d samples, 0 lost" % (pid, want_samples)),
        "first line: id, status, perf's sample count: %r" % lines[0])
    events = ", ".join("%s %d" % (e["name"], e["samples"]) for e in p["events"])
    chk(("  events     " + events) in lines, "events line %r" % events)
    chk(("  page       %s/#/profile/%d" % (d.url, pid)) in lines, "page URL line")
    tags = " ".join("%s=%s" % kv for kv in p["tags"].items())
    chk(p["tags"] == {"k": "v", "branch": "main"} and "  name       first" in lines and
        ("  tags       " + tags) in lines, "name and tags lines")

    r = perfhub(["show", str(pid), "--server", d.url])
    chk(r.returncode == 0 and r.stdout.splitlines()[0] == lines[0] and
        ("  page       %s/#/profile/%d" % (d.url, pid)) in r.stdout,
        "show prints the same readable summary")
    r = perfhub(["show", str(pid), "--server", d.url, "--json"])
    chk(json.loads(r.stdout) == p, "show --json prints the API's object")
    r = perfhub(["upload", data, "--server", d.url, "--wait", "--json"])
    j = json.loads(r.stdout)
    chk(j["id"] == pid and j["status"] == "ready" and j["samples"] == want_samples and
        j["events"] == p["events"] and j["page"] == "%s/#/profile/%d" % (d.url, pid),
        "upload --wait --json: id, status, samples, events, page")
    chk("stored as profile %d" % pid in r.stderr, "a duplicate says so: %s" % r.stderr)
    return pid


def listing(chk, d, work, prog):
    ids = {}
    for name, tags in (("a", ["line=main", "job=x"]), ("b", ["line=main", "job=y"]),
                       ("c", ["line=dev", "job=x"])):
        data = perf_record(os.path.join(work, name + ".data"), ["-e", "cpu-clock"],
                           [prog, "0.05"])
        args = ["upload", data, "--server", d.url, "--name", name, "--no-debuginfo"]
        for t in tags:
            args += ["--tag", t]
        r = perfhub(args)
        ids[name] = int(r.stdout)
        m = re.search(r"profile %d tagged (.*)" % ids[name], r.stderr)
        chk(m and sorted(m.group(1).split()) == sorted(tags),
            "upload lists the profile's tags on stderr: %s" % r.stderr.strip())

    def ls(*args):
        r = perfhub(["ls", "--server", d.url] + list(args))
        chk(r.returncode == 0, "ls %s: %s" % (" ".join(args), r.stderr))
        return [int(l.split()[0]) for l in r.stdout.splitlines()[1:]]

    chk(ls("--tag", "line=main") == [ids["b"], ids["a"]], "ls --tag line=main, newest first")
    chk(ls("--tag", "line=main", "--tag", "job=x") == [ids["a"]], "ls with two tags")
    chk(ls("--tag", "job=x", "--name", "c") == [ids["c"]], "ls --tag --name")
    chk(ls("--name", "nope") == [], "ls --name that matches nothing")
    chk(len(ls("--limit", "2")) == 2, "ls --limit 2")
    r = perfhub(["ls", "--server", d.url, "--json", "--tag", "line=dev"])
    chk([p["id"] for p in json.loads(r.stdout)] == [ids["c"]], "ls --json")
    r = perfhub(["ls", "--server", d.url, "--tag", "novalue"])
    chk(r.returncode == 2 and "KEY=VALUE" in r.stderr, "ls --tag without = is refused")


def debuginfo_lines(chk, data):
    with Daemon() as d:
        r = perfhub(["upload", data, "--server", d.url])
        lines = [l for l in r.stderr.splitlines() if "debuginfo" in l]
        m = re.search(r"debuginfo: (\d+) build-ids, (\d+) missing on the server, (\d+) files "
                      r"sent", r.stderr)
        chk(len(lines) == 1 and m and int(m.group(3)) > 0,
            "without -v one summary line: %s" % lines)
    with Daemon() as d:
        r = perfhub(["upload", data, "--server", d.url, "-v"])
        sent = re.findall(r"debuginfo [0-9a-f]+ sent \(", r.stderr)
        m = re.search(r"(\d+) files sent", r.stderr)
        chk(m and len(sent) == int(m.group(1)) and len(sent) > 0,
            "-v: a line per file sent (%d) and the summary" % len(sent))


def live_pipe(chk, d, work, prog):
    copy = os.path.join(work, "pipe-copy.data")
    perf = subprocess.Popen(["perf", "record", "-q", "-g", "--buildid-mmap", "-o", "-", "--",
                             prog, "1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    tee = subprocess.Popen(["tee", copy], stdin=perf.stdout, stdout=subprocess.PIPE)
    perf.stdout.close()
    r = perfhub(["upload", "-", "--server", d.url, "--wait", "--name", "live"], stdin=tee.stdout)
    tee.stdout.close()
    perf.wait()
    tee.wait()
    chk(r.returncode == 0, "upload - from a live perf pipe: %d %s" % (r.returncode, r.stderr))
    pid = first_id(r.stdout)
    _, p = d.json("GET", "/api/v1/profiles/%d" % pid)
    want, _ = perf_stats(copy)
    chk(p["status"] == "ready" and p["samples"] == want.get("SAMPLE"),
        "ready with perf's sample count: %d = %s" % (p["samples"], want.get("SAMPLE")))
    bid = build_id(prog)
    st, _, _ = d.request("HEAD", "/api/v1/debuginfo/" + bid)
    chk(st == 200 and re.search(r"debuginfo: \d+ build-ids", r.stderr),
        "the program's debuginfo went up after the stream (HEAD %d)" % st)

    perf = subprocess.Popen(["perf", "record", "-q", "-o", "-", "--", prog, "0.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    r = perfhub(["upload", "-", "--server", d.url], stdin=perf.stdout)
    perf.stdout.close()
    perf.wait()
    chk(r.returncode == 0 and "carried no build-ids" in r.stderr and "--buildid-mmap" in r.stderr,
        "a stream without build-ids says so: %s" % r.stderr)

    _, before = d.json("GET", "/api/v1/profiles")
    r = perfhub(["upload", "-", "--server", d.url], stdin=subprocess.DEVNULL)
    _, after = d.json("GET", "/api/v1/profiles")
    chk(r.returncode == 1 and "empty" in r.stderr and after["total"] == before["total"],
        "an empty stream: an error, nothing on the server")

    with open(copy, "rb") as f:
        r = perfhub(["upload", "-", "--server", d.url], stdin=f)
    chk(r.returncode == 0 and int(r.stdout) == pid, "a file on stdin: the same profile")


def hwm(pid):
    """The process's peak RSS since its exec (VmHWM), in bytes; None once gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def peak_rss(d, prog, secs):
    """(client peak RSS in bytes, stream bytes, exit status) of upload - from
    a live perf record -F 20000 -g pipe of prog running secs. The peak is
    VmHWM read until the client exits (rusage would count the forking
    Python's pages too)."""
    perf = subprocess.Popen(["perf", "record", "-q", "-F", "20000", "-g", "-o", "-", "--",
                             prog, str(secs)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    cli = subprocess.Popen([perfhub_exe(), "upload", "-", "--server", d.url, "--json"],
                           stdin=perf.stdout, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, env=clean_env())
    perf.stdout.close()
    peak = 0
    while cli.poll() is None:
        peak = max(peak, hwm(cli.pid) or 0)
        time.sleep(0.02)
    out = cli.stdout.read()
    perf.wait()
    return peak, json.loads(out)["size"] if cli.returncode == 0 else 0, cli.returncode


def memory_flat(chk, d, prog):
    short_rss, short_size, st1 = peak_rss(d, prog, 0.5)
    for secs in (10, 30):	# a loaded machine gives the program less CPU: fewer samples
        long_rss, long_size, st2 = peak_rss(d, prog, secs)
        if long_size - short_size >= 4 * MIB:
            break
    print("peak RSS of perfhub upload -: %.1f MiB for a %.1f MiB stream, %.1f MiB for %.1f MiB" %
          (short_rss / MIB, short_size / MIB, long_rss / MIB, long_size / MIB))
    chk(st1 == 0 and st2 == 0, "both uploads succeeded")
    chk(long_size - short_size >= 4 * MIB,
        "the long stream is >= 4 MiB larger, enough to see growth (%.1f MiB)" %
        ((long_size - short_size) / MIB))
    chk(long_rss - short_rss < (long_size - short_size) / 4 + MIB,
        "memory flat: +%.1f MiB RSS for +%.1f MiB of stream" %
        ((long_rss - short_rss) / MIB, (long_size - short_size) / MIB))


def main():
    need_perf_and_cc()
    work = workdir("client-upload-")
    prog = build_prog(work)
    chk = Checks()
    data = perf_record(os.path.join(work, "p.data"), ["-e", "cpu-clock", "-g"], [prog, "0.3"])
    want, _ = perf_stats(data)
    with Daemon() as d:
        wait_summary(chk, d, data, want["SAMPLE"])
        listing(chk, d, work, prog)
        live_pipe(chk, d, work, prog)
        memory_flat(chk, d, prog)
    debuginfo_lines(chk, data)
    shutil.rmtree(work, ignore_errors=True)
    return chk.status()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""perfhub upload / ls / show / rm against a running perfhubd."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import (SKIP, BUSY, Daemon, check, have_perf_record, perf_record,
                              perf_stats, tmpdir)


def perfhub(*args, env=None):
    exe = os.path.join(os.environ.get("top_builddir", "."), "cli", "perfhub")
    return subprocess.run([exe] + list(args), capture_output=True, text=True, timeout=300,
                          env=env)


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    work = tmpdir("client-")
    data = perf_record(os.path.join(work, "a.data"), ["-e", "cpu-clock"], BUSY)
    ddir = os.path.join(work, "dir.data")
    perf_record(ddir, ["-e", "cpu-clock", "--threads"], BUSY)
    garbage = os.path.join(work, "garbage.data")
    with open(garbage, "wb") as f:
        f.write(b"not perf data\n" * 100)

    with Daemon() as d:
        r = perfhub("upload", data, "--server", d.url, "--name", "first", "--tag", "k=v",
                    "--wait")
        check(r.returncode == 0, "upload --wait: %d %s" % (r.returncode, r.stderr))
        pid = int(r.stdout.split()[0])
        st, p = d.json("GET", "/api/v1/profiles/%d" % pid)
        check(p["status"] == "ready" and p["name"] == "first" and p["tags"] == {"k": "v"},
              "uploaded profile %r" % {k: p[k] for k in ("status", "name", "tags")})

        # the server from $PERFHUB_SERVER; a directory goes up as a tar
        env = dict(os.environ, PERFHUB_SERVER=d.url)
        r = perfhub("upload", ddir, "--wait", env=env)
        check(r.returncode == 0, "directory upload: %s" % r.stderr)
        did = int(r.stdout.split()[0])
        st, p = d.json("GET", "/api/v1/profiles/%d" % did)
        want, _ = perf_stats(ddir)
        check(p["kind"] == "tar" and p["records"].get("SAMPLE") == want.get("SAMPLE"),
              "directory profile %s %s" % (p["kind"], p["records"].get("SAMPLE")))

        # the same file again prints the same id
        r = perfhub("upload", data, "--server", d.url)
        check(r.returncode == 0 and int(r.stdout) == pid, "duplicate upload %r" % r.stdout)

        # not a perf.data file: refused by its first bytes
        r = perfhub("upload", garbage, "--server", d.url, "--wait")
        check(r.returncode == 1 and "not a perf.data file" in r.stderr,
              "garbage --wait: %d %s" % (r.returncode, r.stderr))

        r = perfhub("ls", "--server", d.url)
        check(r.returncode == 0, "ls: %s" % r.stderr)
        rows = r.stdout.splitlines()
        check(rows[0].split()[:2] == ["ID", "STATUS"] and len(rows) == 3, "ls:\n" + r.stdout)
        check(any(l.split()[0] == str(pid) and "ready" in l for l in rows[1:]), "ls row")

        r = perfhub("show", str(pid), "--server", d.url, "--json")
        check(r.returncode == 0 and json.loads(r.stdout)["id"] == pid, "show: %s" % r.stderr)
        r = perfhub("show", "999999", "--server", d.url)
        check(r.returncode == 1 and "404" in r.stderr, "show missing: %s" % r.stderr)

        r = perfhub("rm", str(pid), "--server", d.url)
        check(r.returncode == 0, "rm: %s" % r.stderr)
        r = perfhub("rm", str(pid), "--server", d.url)
        check(r.returncode == 1, "second rm should fail")
        st, _ = d.json("GET", "/api/v1/profiles/%d" % pid)
        check(st == 404, "rm left the profile")
    r = perfhub("ls", "--server", "http://127.0.0.1:1")
    check(r.returncode == 1 and r.stderr, "ls without a server should fail")
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

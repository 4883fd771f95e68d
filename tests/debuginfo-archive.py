#!/usr/bin/env python3
"""`perf archive` bundles fill the debuginfo store: a program recorded now
(with perf's build-id cache in a private HOME), bundled by `perf archive`,
then the binary and the cache are removed. The recording uploaded alone has
[program] frames; `perfhub upload p.data.tar.bz2` stores the bundle's ELF
and kallsyms files by build-id and the profile is re-symbolized (>= 99%
agreement with perf script folded while the binary was in place). A file
that is no archive is refused."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfhubd_harness import SKIP, Daemon, builddir  # noqa: E402
from debuginfo_common import (Recording, check, collapsed, finish,  # noqa: E402
                              wait_resymbolized)

def main():
    rec = Recording(buildid_cache=True)
    env = dict(os.environ, HOME=rec.home)
    r = subprocess.run(["perf", "archive", rec.data], capture_output=True, text=True, env=env,
                       timeout=300)
    bundle = rec.data + ".tar.bz2"
    if r.returncode != 0 or not os.path.exists(bundle):
        print("perf archive does not work here: " + r.stderr[-500:])
        return SKIP
    listing = subprocess.run(["tar", "tjf", bundle], capture_output=True, text=True).stdout
    check(rec.build_id in listing, "the bundle holds the program")
    kernel = [l.split("/")[1] for l in listing.splitlines()
              if l.startswith("[kernel.kallsyms]/") and l.endswith("/kallsyms")]
    shutil.rmtree(os.path.join(rec.home, ".debug"))
    os.environ["HOME"] = rec.home
    bracket = "[%s]" % rec.name
    exe = os.path.join(builddir(), "cli", "perfhub")

    # a recording of this machine: libraries the recording names no
    # build-id for are named from their files, as perf script names them
    with Daemon(args=["--local-uploads"]) as d:
        st, r = d.upload(rec.data)
        pid = r["id"]
        p = d.wait(pid)
        pct0 = p["symbolized_pct"]
        check(bracket in collapsed(d, pid), "without the bundle the frames are %s" % bracket)

        r = subprocess.run([exe, "upload", bundle, "--server", d.url], capture_output=True,
                           text=True, timeout=300)
        sys.stdout.write(r.stderr)
        check(r.returncode == 0, "perfhub upload BUNDLE: %d %s" % (r.returncode, r.stderr))
        st, _, _ = d.request("HEAD", "/api/v1/debuginfo/" + rec.build_id)
        check(st == 200, "the program is stored: HEAD %d" % st)
        for kbid in kernel:
            st, _, _ = d.request("HEAD", "/api/v1/debuginfo/" + kbid)
            check(st == 200, "the bundle's kallsyms is stored for %s: HEAD %d" % (kbid, st))

        print("before the bundle: symbolized_pct=%.1f" % pct0)
        rec.check_named(d, pid, "archive", wait_resymbolized(d, pid, pct0))

        st, r = d.json("POST", "/api/v1/debuginfo/archive", b"this is no archive" * 100,
                       {"Content-Type": "application/x-bzip2"})
        check(st == 400 and "archive" in r.get("error", ""), "not an archive: %d %r" % (st, r))

    return finish(rec)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""perfhubd --watch: files already there at start, files moved in and
perf.data directories written in place are ingested once each; a restart
does not ingest them again; --watch-remove removes originals."""
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import (SKIP, BUSY, Daemon, check, have_perf_record, perf_record,
                              perf_stats, tmpdir)


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    work = tmpdir("watch-")
    inbox = os.path.join(work, "inbox")
    os.makedirs(inbox)
    a = perf_record(os.path.join(inbox, "before.data"), ["-e", "cpu-clock"], BUSY)
    b = perf_record(os.path.join(work, "b.data"), ["-e", "cpu-clock"],
                    ["sh", "-c", "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done"])
    state = tmpdir("watch-state-")
    with Daemon(state=state, args=["--watch", inbox]) as d:
        lst = d.wait_profiles(1)
        check(lst["profiles"][0]["name"] == "before.data", "name %r" % lst["profiles"][0])
        # complete files moved in
        os.rename(b, os.path.join(inbox, "moved.data"))
        d.wait_profiles(2)
        # a perf.data directory written in place by perf record --threads
        dpath = os.path.join(inbox, "threads.data")
        perf_record(dpath, ["-e", "cpu-clock", "--threads"], BUSY)
        lst = d.wait_profiles(3, timeout=60)
        names = {p["name"]: p for p in lst["profiles"]}
        check(set(names) == {"before.data", "moved.data", "threads.data"}, "names %r" % names)
        for name, p in names.items():
            p = d.wait(p["id"])
            check(p["status"] == "ready", "%s: %s" % (name, p.get("error")))
        want, _ = perf_stats(dpath)
        p = d.wait(names["threads.data"]["id"])
        check(p["kind"] == "tar" and p["records"].get("SAMPLE") == want.get("SAMPLE"),
              "directory: %r vs perf %r" % (p["records"].get("SAMPLE"), want.get("SAMPLE")))
        # a dot file (a temporary name) is ignored until renamed
        shutil.copy(a, os.path.join(inbox, ".partial"))
        time.sleep(1.5)
        st, lst = d.json("GET", "/api/v1/profiles")
        check(lst["total"] == 3, "dot file ingested")
    # a restart sees the same files: no new profiles
    with Daemon(state=state, args=["--watch", inbox]) as d:
        time.sleep(3)
        st, lst = d.json("GET", "/api/v1/profiles")
        check(lst["total"] == 3, "restart ingested again: %d" % lst["total"])
    # --watch-remove takes the originals away once spooled
    inbox2 = os.path.join(work, "inbox2")
    os.makedirs(inbox2)
    with Daemon(args=["--watch", inbox2, "--watch-remove"]) as d:
        shutil.copy(a, os.path.join(inbox2, ".tmp"))
        os.rename(os.path.join(inbox2, ".tmp"), os.path.join(inbox2, "x.data"))
        d.wait_profiles(1)
        deadline = time.time() + 10
        while os.path.exists(os.path.join(inbox2, "x.data")) and time.time() < deadline:
            time.sleep(0.1)
        check(not os.path.exists(os.path.join(inbox2, "x.data")), "original kept")
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

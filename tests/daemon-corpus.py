#!/usr/bin/env python3
"""perfhubd over the external corpus: every file uploaded at once (8 clients,
2 workers); each ends ready or failed, never hangs or hurts another; ready
profiles hold the SAMPLE count SOURCES.md lists; the corrupt file fails
with a byte offset."""
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import SKIP, Daemon, check, corpus, sources_sample_counts


def main():
    cdir = os.path.dirname(corpus("SOURCES.md"))
    if not os.path.isdir(cdir):
        print("no corpus at %s" % cdir)
        return SKIP
    files = sorted(f for f in os.listdir(cdir) if f != "SOURCES.md")
    expected = sources_sample_counts()
    check(len(expected) > 20, "SOURCES.md table 2 not understood")
    ids, errors = {}, []
    lock = threading.Lock()

    with Daemon(workers=2) as d:
        def client(names):
            for n in names:
                st, r = d.upload(os.path.join(cdir, n), "?name=" + n)
                with lock:
                    if st == 202:
                        ids[n] = r["id"]
                    else:
                        errors.append("%s: %s %s" % (n, st, r))

        threads = [threading.Thread(target=client, args=(files[i::8],)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        check(not errors, "uploads refused: %s" % errors)
        check(len(ids) == len(files), "ids for %d of %d files" % (len(ids), len(files)))

        ready = failed = 0
        mismatches = []
        for n in files:
            p = d.wait(ids[n], timeout=300)
            if p["status"] == "failed":
                failed += 1
                check("offset" in (p["error"] or ""), "%s failed without an offset: %r" %
                      (n, p["error"]))
                continue
            ready += 1
            want = expected.get(n)
            got = p["records"].get("SAMPLE", 0)
            if want is not None and got != want:
                mismatches.append("%s: %d samples, SOURCES.md %d" % (n, got, want))
            check(p["samples"] == sum(p["samples_per_event"].values()),
                  "%s: stored samples %d != samples_per_event" % (n, p["samples"]))
        check(not mismatches, "sample counts differ:\n  " + "\n  ".join(mismatches))
        bad = "quipper-perf.data.piped.corrupted.zero_size_sample-3.2"
        if bad in ids:
            st, p = d.json("GET", "/api/v1/profiles/%d" % ids[bad])
            check(p["status"] == "failed", "%s: %s" % (bad, p["status"]))
        check(ready >= len(files) // 2, "only %d of %d ready" % (ready, len(files)))
        st, h = d.json("GET", "/healthz")
        check(st == 200, "unhealthy")
        st, lst = d.json("GET", "/api/v1/profiles?status=ready&limit=1000")
        check(lst["total"] == ready, "list total %d, ready %d" % (lst["total"], ready))
        print("corpus: %d ready, %d failed" % (ready, failed))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Retention: perfhubd prunes exactly the profiles it should, rows and
spooled originals, and nothing else.

Five recordings of the corpus are uploaded; their uploaded_at times are
then set by hand in the database (perfhubd keeps no copy of them), so the
order by age differs from the order of upload. The limits come from a
--config file and are changed live with SIGHUP:

1. retain-days = 7: exactly the two profiles older than 7 days go.
2. max-db-size = (bytes in use now: the database and the spool) - 1:
   exactly the oldest remaining profile goes (one is enough to get under
   the limit).
3. max-db-size = 1: every profile but the newest upload goes (the last
   upload is never pruned for size).
4. an upload: the pass after its ingest removes the previous newest.
5. debuginfo counts: with a fresh debuginfo file stored beside two
   profiles and the limit between the bytes with and without it, the
   older profile goes (the file is named by no profile but too new to be
   pruned itself).

After each step the list, the spool directory (<sha256>.<kind> files) and
the log ("retention: profile deleted") must agree. Skips (77) when
perfhubd is not built or the corpus is missing. The data size is the
store's own measure: SQLite's pages in use; on PostgreSQL the bytes each
remaining profile's parse wrote."""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfhubd_harness as H  # noqa: E402

FILES = ["lnt-fib2-aarch64.perf_data", "perfparser-vector_static_clang-perf.data",
         "quipper-perf.data.callgraph-3.8", "quipper-perf.data.forkexit-3.8",
         "mstange-fibo.compressed2.pipe.data", "perfparser-cpp-inlining.perf.data"]
DAY = 86400
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg)
    return cond


def listed(d):
    st, lst = d.json("GET", "/api/v1/profiles?limit=100")
    assert st == 200, "list: %d" % st
    return {p["id"]: p for p in lst["profiles"]}


def spooled(state):
    return {f.split(".", 1)[0] for f in os.listdir(os.path.join(state, "spool"))
            if len(f.split(".", 1)[0]) == 64}


def disk_usage(path):
    """Allocated bytes of a tree, links not followed (as perfhubd counts)."""
    st = os.lstat(path)
    n = st.st_blocks * 512
    if os.path.isdir(path) and not os.path.islink(path):
        for e in os.listdir(path):
            n += disk_usage(os.path.join(path, e))
    return n


def used_bytes(state):
    if H.backend() == "postgresql":
        return int(H.store_sql(state, "SELECT coalesce(sum(stored_bytes), 0) FROM profiles"))
    pages = int(H.store_sql(state, "PRAGMA page_count"))
    free = int(H.store_sql(state, "PRAGMA freelist_count"))
    return (pages - free) * int(H.store_sql(state, "PRAGMA page_size"))


def wait_for(d, want_ids, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if set(listed(d)) == set(want_ids):
            break
        time.sleep(0.1)
    return listed(d)


def expect(d, state, want, shas, step):
    got = wait_for(d, want)
    check(set(got) == set(want), "%s: profiles left %s, expected %s" %
          (step, sorted(got), sorted(want)))
    want_sha = {shas[i] for i in want}
    # a pruned profile's row goes first, its spooled original right after
    deadline = time.time() + 10
    sp = spooled(state)
    while sp != want_sha and time.time() < deadline:
        time.sleep(0.05)
        sp = spooled(state)
    check(sp == want_sha, "%s: spool holds %d originals, expected %d (extra %s, missing %s)" %
          (step, len(sp), len(want_sha), sorted(sp - want_sha)[:3], sorted(want_sha - sp)[:3]))
    if set(got) == set(want) and sp == want_sha:
        print("ok: %s: %s remain, spool matches" % (step, sorted(want)))


def reconfigure(d, conf, text):
    with open(conf, "w") as f:
        f.write(text)
    d.proc.send_signal(signal.SIGHUP)


def main():
    if not os.access(os.path.join(H.builddir(), "daemon", "perfhubd"), os.X_OK):
        print("SKIP: perfhubd not built")
        return H.SKIP
    paths = [H.corpus(f) for f in FILES]
    if not all(os.path.exists(p) for p in paths):
        print("SKIP: corpus missing")
        return H.SKIP
    state = H.tmpdir("service-retention.")
    conf = os.path.join(state, "perfhubd.conf")
    with open(conf, "w") as f:
        f.write("# no retention yet\n")
    with H.Daemon(state=state, args=["--config", conf, "--retention-interval", "3600"],
                  workers=1) as d:
        ids, shas = [], {}
        for p in paths[:5]:
            st, r = d.upload(p)
            assert st in (200, 201, 202), "upload %s: %d %r" % (p, st, r)
            ids.append(r["id"])
        for i in ids:
            p = d.wait(i)
            shas[i] = p["sha256"]
        check(len(set(ids)) == 5, "five distinct profiles: %r" % ids)
        p1, p2, p3, p4, p5 = ids
        # ages: p2 10 days, p3 8 days, p1 3 days, p5 2 days, p4 1 hour
        now = int(time.time())
        ages = {p1: 3 * DAY, p2: 10 * DAY, p3: 8 * DAY, p4: 3600, p5: 2 * DAY}
        for i, age in ages.items():
            H.store_sql(state, "UPDATE profiles SET uploaded_at = %d WHERE id = %d" %
                        (now - age, i))
        expect(d, state, ids, shas, "no limits")

        reconfigure(d, conf, "retain-days = 7\n")
        expect(d, state, [p1, p4, p5], shas, "retain-days = 7")
        check("key=retain-days old=0 new=7" in d.read_log(), "SIGHUP did not log the change")

        used = used_bytes(state) + disk_usage(os.path.join(state, "spool"))
        reconfigure(d, conf, "retain-days = 7\nmax-db-size = %d\n" % (used - 1))
        expect(d, state, [p4, p5], shas, "max-db-size = in use - 1")

        reconfigure(d, conf, "retain-days = 7\nmax-db-size = 1\n")
        expect(d, state, [p4], shas, "max-db-size = 1")

        st, r = d.upload(paths[5])
        assert st in (200, 201, 202), "upload: %d %r" % (st, r)
        p6 = r["id"]
        shas[p6] = d.wait(p6)["sha256"]
        expect(d, state, [p6], shas, "after an ingest, max-db-size = 1")

        # the log line follows the row and the spool file: give it a moment
        want_deleted = sorted([p1, p2, p3, p4, p5])
        for _ in range(200):
            log = d.read_log()
            deleted = sorted(int(x) for x in
                             __import__("re").findall(r'retention: profile deleted" id=(\d+)', log))
            if deleted == want_deleted:
                break
            time.sleep(0.02)
        check(deleted == sorted([p1, p2, p3, p4, p5]),
              "log names deleted profiles %r, expected %r" % (deleted, sorted([p1, p2, p3, p4, p5])))

        # 5. debuginfo counts in the limit
        reconfigure(d, conf, "# no limits\n")
        st, r = d.upload(paths[4])
        assert st in (200, 201, 202), "upload: %d %r" % (st, r)
        p7 = r["id"]
        shas[p7] = d.wait(p7)["sha256"]
        H.store_sql(state, "UPDATE profiles SET uploaded_at = %d WHERE id = %d" % (now - 600, p6))
        expect(d, state, [p6, p7], shas, "no limits again")
        elf = os.path.join(H.builddir(), "daemon", "perfhubd")
        bid = H.elf_build_id(elf)
        without = used_bytes(state) + disk_usage(os.path.join(state, "spool"))
        with open(elf, "rb") as f:
            st, r = d.json("PUT", "/api/v1/debuginfo/" + bid, f.read())
        check(st in (200, 201), "debuginfo PUT: %d %r" % (st, r))
        size = os.path.getsize(elf)
        reconfigure(d, conf, "max-db-size = %d\n" % (without + size // 2))
        expect(d, state, [p7], shas, "max-db-size below the data with a debuginfo file")
    if failures:
        return 1
    print("ok: retention pruned exactly the expected profiles")
    return 0


if __name__ == "__main__":
    sys.exit(main())

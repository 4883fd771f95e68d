#!/usr/bin/env python3
"""perfhubd keeps serving a profile while it is parsed again.

With one worker held in another parse (a recording whose program is gone,
whose build-id the worker asks a debuginfod for, which this test holds
unanswered), a ready profile is sent to re-symbolization and waits queued:
through that window every query (/flamegraph, /collapsed, /top,
/timeline, /threads) answers 200 with the earlier parse's answer, and the
profile object says "resymbolizing" with the earlier parse's facts. Once
released and parsed again the profile is ready with the same answers, and
no row of the earlier parse is left in the database. A parse again that
fails (its spooled original gone) leaves the earlier parse served and
says so in "error". The same bytes uploaded again under another name and
tags carry the new ones ("relabeled"), never silently the old.
Skips (77) where perf cannot record or no C compiler is there."""
import http.server
import os
import sqlite3
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import SKIP, Daemon, builddir, check, have_perf_record, perf_record, tmpdir
from debuginfo_common import Recording  # noqa: E402

QUERIES = ["flamegraph", "collapsed", "top", "timeline", "threads"]
QUEUED_POLLS = 10	# polls of the profile while it waits queued


class HeldDebuginfod(http.server.BaseHTTPRequestHandler):
    """A debuginfod that holds the question for one build-id until the
    test releases it, and knows nothing else."""
    build_id = None
    asked = threading.Event()
    release = threading.Event()

    def do_GET(self):
        if HeldDebuginfod.build_id and HeldDebuginfod.build_id in self.path:
            HeldDebuginfod.asked.set()
            HeldDebuginfod.release.wait(120)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def answers(d, pid):
    out = {}
    for q in QUERIES:
        st, _, body = d.request("GET", "/api/v1/profiles/%d/%s" % (pid, q))
        out[q] = (st, body)
    return out


def busy(seconds):
    return ["sh", "-c", "end=$(($(date +%%s) + %d)); while [ $(date +%%s) -lt $end ]; do :; done"
            % seconds]


def served(d, pid, p0, before, seen):
    """One poll of a profile being parsed again: it and its answers are
    the earlier parse's. Returns its status."""
    st, p = d.json("GET", "/api/v1/profiles/%d" % pid)
    if p["status"] == "ready":
        return "ready"
    seen[p["status"]] = seen.get(p["status"], 0) + 1
    check(p.get("resymbolizing") is True, "while %s: no resymbolizing flag" % p["status"])
    check(p.get("samples") == p0["samples"] and p.get("events") == p0["events"],
          "while %s: the earlier parse's facts are gone" % p["status"])
    now = answers(d, pid)
    bad = {q: st for q, (st, body) in now.items() if st != 200 or body != before[q][1]}
    check(not bad, "while %s, answers differ from the earlier parse: %r" % (p["status"], bad))
    return p["status"]


def serves_while_parsed_again(d, pid, held):
    before = answers(d, pid)
    check(all(st == 200 for st, _ in before.values()), "baseline answers: %r" %
          {q: st for q, (st, _) in before.items()})
    st, p0 = d.json("GET", "/api/v1/profiles/%d" % pid)
    # the one worker parses the held recording and waits for debuginfod
    st, r = d.upload(held.data, "?name=held")
    check(st == 202, "held upload: %s %s" % (st, r))
    check(HeldDebuginfod.asked.wait(120), "the worker never asked debuginfod")
    st, r = d.json("POST", "/api/v1/profiles/%d/resymbolize" % pid, b"")
    check(st == 202, "resymbolize: %s %s" % (st, r))
    seen = {}
    for _ in range(QUEUED_POLLS):
        check(served(d, pid, p0, before, seen) == "queued", "not queued behind the held parse")
    HeldDebuginfod.release.set()
    deadline = time.time() + 120
    while time.time() < deadline and served(d, pid, p0, before, seen) != "ready":
        time.sleep(0.02)
    st, p = d.json("GET", "/api/v1/profiles/%d" % pid)
    check(p["status"] == "ready" and "resymbolizing" not in p, "after: %r" % p.get("status"))
    after = answers(d, pid)
    check(all(after[q] == before[q] for q in QUERIES), "answers changed by a re-parse with the "
          "same symbols")
    print("ok: served while parsed again (%s polls), the same answers after" %
          ", ".join("%d %s" % (n, s) for s, n in sorted(seen.items())))


def no_rows_left(d, state):
    for p in d.json("GET", "/api/v1/profiles")[1]["profiles"]:
        d.wait(p["id"])
    db = sqlite3.connect(os.path.join(state, "perfhub.db"))
    try:
        keys = {r[0] for r in db.execute("SELECT data_id FROM profiles WHERE data_id IS NOT NULL")}
        for table in ("strings", "frames", "stacks", "sample_blocks", "leaf_addrs", "events"):
            left = [r[0] for r in db.execute("SELECT DISTINCT profile_id FROM %s" % table)
                    if r[0] not in keys]
            check(not left, "%s keeps rows of parses no profile serves: %r" % (table, left))
        stale = db.execute("SELECT count(*) FROM stale_rows").fetchone()[0]
        check(stale == 0, "%d stale keys not swept" % stale)
    finally:
        db.close()
    print("ok: no rows of replaced parses left")


def failed_again_keeps_serving(d, pid, state):
    before = answers(d, pid)
    db = sqlite3.connect(os.path.join(state, "perfhub.db"))
    spool = db.execute("SELECT spool_path FROM profiles WHERE id = ?", (pid,)).fetchone()[0]
    db.close()
    # the store keeps a ref into the spool (older stores: an absolute path)
    spool = os.path.join(state, "spool", spool)
    os.rename(spool, spool + ".away")
    try:
        st, r = d.json("POST", "/api/v1/profiles/%d/resymbolize" % pid, b"")
        check(st == 202, "resymbolize: %s %s" % (st, r))
        deadline = time.time() + 120
        while time.time() < deadline:
            st, p = d.json("GET", "/api/v1/profiles/%d" % pid)
            if p["status"] in ("ready", "failed") and "resymbolizing" not in p:
                break
            time.sleep(0.05)
    finally:
        os.rename(spool + ".away", spool)
    check(p["status"] == "ready" and "parsing again failed" in (p.get("error") or ""),
          "a failed re-parse: %s %r" % (p["status"], p.get("error")))
    check(answers(d, pid) == before, "the earlier parse is no longer served after a failed re-parse")
    print("ok: a failed re-parse keeps the earlier parse: %s" % p["error"][:80])


def relabel(d, data):
    st, a = d.upload(data, "?name=first&tag=branch=main&tag=ci=1")
    check(st == 202 and a["name"] == "first", "first upload: %s %r" % (st, a))
    st, b = d.upload(data, "?name=second&tag=branch=next&tag=run=7")
    check(st == 200 and b["id"] == a["id"] and b["status"] == "exists", "again: %s %r" % (st, b))
    check(b.get("relabeled") is True and b["name"] == "second" and
          b["tags"] == {"branch": "next", "ci": "1", "run": "7"}, "new name and tags: %r" % b)
    st, p = d.json("GET", "/api/v1/profiles/%d" % a["id"])
    check(p["name"] == "second" and p["tags"] == b["tags"], "stored: %r %r" % (p["name"], p["tags"]))
    st, c = d.upload(data, "?name=second&tag=run=7")
    check(st == 200 and "relabeled" not in c, "the same labels again: %r" % c)
    print("ok: the same bytes again under another name and tags: applied, relabeled=true")


def main():
    if not have_perf_record():
        print("SKIP: perf record does not work here")
        return SKIP
    with open(os.path.join(builddir(), "config.h")) as f:
        has_debuginfod = "#define HAVE_DEBUGINFOD 1" in f.read()
    held = Recording()	# skips without a C compiler
    HeldDebuginfod.build_id = held.build_id
    os.environ["HOME"] = held.daemon_env()
    os.environ["DEBUGINFOD_TIMEOUT"] = "100"
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), HeldDebuginfod)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    work = tmpdir("resym-")
    small = perf_record(os.path.join(work, "small.data"), ["-g", "-e", "cpu-clock"], busy(1))
    args = ["--debuginfod", "http://127.0.0.1:%d" % httpd.server_address[1]]
    try:
        with Daemon(workers=1, args=args if has_debuginfod else []) as d:
            st, r = d.upload(small, "?name=small")
            check(st == 202, "upload: %s %s" % (st, r))
            pid = r["id"]
            check(d.wait(pid)["status"] == "ready", "not ready")
            if has_debuginfod:
                serves_while_parsed_again(d, pid, held)
                no_rows_left(d, d.state)
            else:
                print("perfhubd was built without libdebuginfod: the worker cannot be held, "
                      "serving during a re-parse not checked")
            failed_again_keeps_serving(d, pid, d.state)
            relabel(d, perf_record(os.path.join(work, "other.data"), ["-e", "cpu-clock"],
                                   busy(1)))
    finally:
        HeldDebuginfod.release.set()
        httpd.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Load driver: against a perfhubd it starts, uploads N distinct valid
recordings from U concurrent clients while Q clients query flame graphs;
optionally kills the daemon with SIGKILL at K random moments of the upload
phase and restarts it each time. Then checks every acknowledged upload is
`ready` with perf's counts (records, samples per event, hostname, sha256,
flame graph total), none lost, none duplicated, no partial upload left in
the spool, and PRAGMA integrity_check ok. Prints one table of figures.

  load.py [--uploads N] [--uploaders U] [--queriers Q] [--kills K] [--workers W]

Without flags: the CI size (STRESS_SIZE=full: 500 uploads, 32 + 16 clients).
"""
import argparse
import hashlib
import json
import os
import random
import sqlite3
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stress_lib as S  # noqa: E402
from perfhubd_harness import SKIP, Daemon, check, have_perf_record, tmpdir  # noqa: E402


class Server:
    """The daemon under test and its restarts; clients read .url each try."""

    def __init__(self, state, workers):
        self.state, self.workers = state, workers
        self.lock = threading.Lock()
        self.d = Daemon(state=state, workers=workers).start()
        self.url = self.d.url
        self.peak_rss = 0
        self.restarts = 0
        self.restart_s = []

    def sample_rss(self):
        self.peak_rss = max(self.peak_rss, S.proc_status(self.d.proc.pid, "VmHWM"))

    def kill_and_restart(self):
        with self.lock:
            self.sample_rss()
            self.url = None
            self.d.kill9()
            t0 = time.time()
            self.d = Daemon(state=self.state, workers=self.workers).start()
            self.restart_s.append(time.time() - t0)
            self.url = self.d.url
            self.restarts += 1


def http(url, method, path, body=None, headers=None, timeout=120):
    """(status, body bytes); status None when the connection failed."""
    if url is None:
        return None, b""
    req = urllib.request.Request(url + path, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (OSError, ConnectionError, urllib.error.URLError):
        return None, b""


def run(uploads, uploaders, queriers, kills, workers, quiet=False):
    work = tmpdir("load-")
    recs = S.make_recordings(work, 4)
    srv = Server(tmpdir("load-state-"), workers)
    stats = {"upload_errors": 0, "upload_retries": 0, "query_errors": 0, "not_ready": 0,
             "duplicates_answered": 0}
    lat = []
    acked = {}              # variant index -> (id, sha256)
    lock = threading.Lock()
    todo = list(range(uploads))
    random.shuffle(todo)
    done_uploading = threading.Event()
    wire_bytes = [0]

    def variant(i):
        rec = recs[i % len(recs)]
        name, data = rec.variant(i)
        return rec, name, data

    # the base recordings, ready before the load: queries always have targets
    base_ids = []
    for k, r in enumerate(recs):
        st, body = http(srv.url, "POST", "/api/v1/profiles?name=base%d" % k, r.data,
                        {"Content-Type": "application/octet-stream"})
        check(st == 202, "base upload: %s %s" % (st, body))
        base_ids.append(json.loads(body)["id"])
    for pid in base_ids:
        check(srv.d.wait(pid)["status"] == "ready", "base recording not ready")

    def uploader():
        while True:
            with lock:
                if not todo:
                    return
                i = todo.pop()
            _, name, data = variant(i)
            sha = hashlib.sha256(data).hexdigest()
            deadline = time.time() + 300
            tries = 0
            while True:
                tries += 1
                st, body = http(srv.url, "POST", "/api/v1/profiles?name=%s&tag=run=load" % name,
                                data, {"Content-Type": "application/octet-stream"})
                if st in (200, 202):
                    r = json.loads(body)
                    with lock:
                        acked[i] = (r["id"], r["sha256"])
                        wire_bytes[0] += len(data)
                        if st == 200:
                            stats["duplicates_answered"] += 1
                        if tries > 1:
                            stats["upload_retries"] += tries - 1
                    check(r["sha256"] == sha, "sha256 of variant %d" % i)
                    if st == 200 and tries == 1:
                        raise AssertionError("first upload of variant %d answered 200" % i)
                    break
                if st is not None and st != 503:
                    with lock:
                        stats["upload_errors"] += 1
                    raise AssertionError("upload of variant %d: %s %s" % (i, st, body[:200]))
                if st is None and not kills:
                    with lock:
                        stats["upload_errors"] += 1
                check(time.time() < deadline, "upload of variant %d never acknowledged" % i)
                time.sleep(0.05 + random.random() * 0.1)

    def querier():
        rnd = random.Random()
        while not done_uploading.is_set():
            with lock:
                ids = [v[0] for v in acked.values()]
            pid = rnd.choice(ids) if ids and rnd.random() < 0.7 else rnd.choice(base_ids)
            t0 = time.time()
            st, body = http(srv.url, "GET", "/api/v1/profiles/%d/flamegraph" % pid)
            dt = time.time() - t0
            with lock:
                if st == 200:
                    lat.append(dt)
                elif st == 404:
                    stats["not_ready"] += 1     # queued or parsing: not an error
                elif st is None and kills:
                    pass                        # the daemon is being killed
                else:
                    stats["query_errors"] += 1

    def killer():
        # kill moments: random points of the upload phase, by acknowledged count
        marks = sorted(random.sample(range(1, max(uploads, kills + 1)), kills))
        for m in marks:
            while True:
                with lock:
                    n = len(acked)
                if n >= m or done_uploading.is_set():
                    break
                time.sleep(0.01)
            time.sleep(random.random() * 0.2)   # anywhere inside an upload or a parse
            srv.kill_and_restart()

    t0 = time.time()
    threads = [threading.Thread(target=uploader) for _ in range(uploaders)]
    qthreads = [threading.Thread(target=querier) for _ in range(queriers)]
    kthread = threading.Thread(target=killer) if kills else None
    for t in threads + qthreads + ([kthread] if kthread else []):
        t.start()
    errors = []
    for t in threads:
        t.join()
    upload_s = time.time() - t0
    if kthread:
        kthread.join()
    done_uploading.set()
    for t in qthreads:
        t.join()

    check(len(acked) == uploads, "acknowledged %d of %d uploads" % (len(acked), uploads))
    # everything parsed: nothing queued or parsing
    deadline = time.time() + 600
    while True:
        srv.sample_rss()
        _, body = http(srv.url, "GET", "/api/v1/profiles?limit=1000&status=queued")
        q = json.loads(body)["total"] if body else 1
        _, body = http(srv.url, "GET", "/api/v1/profiles?limit=1000&status=parsing")
        p = json.loads(body)["total"] if body else 1
        if q == 0 and p == 0:
            break
        check(time.time() < deadline, "still %d queued, %d parsing" % (q, p))
        time.sleep(0.2)
    ingest_s = time.time() - t0

    # every acknowledged upload: present once, ready, with perf's counts
    ids = {}
    for i, (pid, sha) in sorted(acked.items()):
        rec, name, _ = variant(i)
        st, body = http(srv.url, "GET", "/api/v1/profiles/%d" % pid)
        check(st == 200, "profile %d of variant %d: %s" % (pid, i, st))
        p = json.loads(body)
        if p["status"] != "ready":
            errors.append("variant %d: %s %s" % (i, p["status"], p.get("error")))
            continue
        if (p["sha256"] != sha or p["records"] != rec.records or
                p["samples_per_event"] != rec.per_event or p["header"]["hostname"] != name):
            errors.append("variant %d (id %d) differs from perf: records %s want %s" %
                          (i, pid, p["records"], rec.records))
        st, body = http(srv.url, "GET", "/api/v1/profiles/%d/flamegraph?weight=samples" % pid)
        if st != 200 or json.loads(body)["value"] != rec.samples:
            errors.append("variant %d flame graph: %s %s" % (i, st, body[:100]))
        check(pid not in ids, "id %d acknowledged for two variants" % pid)
        ids[pid] = i
    _, body = http(srv.url, "GET", "/api/v1/profiles?limit=1000&tag=run=load")
    lst = json.loads(body)
    check(lst["total"] == uploads, "%d load profiles stored, want %d (lost or duplicated)" %
          (lst["total"], uploads))
    _, body = http(srv.url, "GET", "/api/v1/profiles?limit=1&status=failed")
    check(json.loads(body)["total"] == 0, "failed profiles: %s" % body[:300])
    srv.sample_rss()
    rc = srv.d.stop()
    check(rc == 0, "SIGTERM exit status %s" % rc)
    db = sqlite3.connect(os.path.join(srv.state, "perfhub.db"))
    integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    db.close()
    check(integrity == "ok", "integrity_check: %s" % integrity)
    litter = S.spool_litter(srv.state)
    check(not litter, "partial uploads left in the spool: %s" % litter[:5])
    if errors:
        raise AssertionError("%d bad profiles, first: %s" % (len(errors), errors[:5]))

    mb = wire_bytes[0] / 1e6
    rows = [
        ("uploads (distinct recordings)", "%d from %d clients, %d querying" %
         (uploads, uploaders, queriers)),
        ("recording sizes", ", ".join("%d KiB/%d samples" % (len(r.data) >> 10, r.samples)
                                      for r in recs)),
        ("upload phase", "%.1f s: %.1f uploads/s, %.2f MB/s" % (upload_s, uploads / upload_s,
                                                                mb / upload_s)),
        ("all ready after", "%.1f s: %.1f profiles/s end to end" % (ingest_s, uploads / ingest_s)),
        ("flame graph queries", "%d: p50 %.1f ms, p99 %.1f ms" %
         (len(lat), S.percentile(lat, 50) * 1e3, S.percentile(lat, 99) * 1e3)),
        ("errors", "uploads %d, queries %d (retries %d, 404 not-yet-ready %d)" %
         (stats["upload_errors"], stats["query_errors"], stats["upload_retries"],
          stats["not_ready"])),
        ("daemon peak RSS", "%.1f MiB" % (srv.peak_rss / 1048576)),
    ]
    if kills:
        rows += [("kill -9 + restart", "%d times; restart p50 %.2f s; %d uploads re-sent, "
                  "%d answered 200 (already stored)" %
                  (srv.restarts, S.percentile(srv.restart_s, 50), stats["upload_retries"],
                   stats["duplicates_answered"]))]
    rows += [("checked", "all %d ready with perf's counts, none lost or duplicated, "
              "integrity_check ok, no spool litter" % uploads)]
    check(stats["upload_errors"] == 0 and stats["query_errors"] == 0,
          "errors: %s" % stats)
    S.table("load%s (%d workers; 2-core machine shared with other jobs)" %
            (" with kill -9" if kills else "", workers), rows)
    return 0


def main(argv=None, kills_default=0):
    full = os.environ.get("STRESS_SIZE") == "full"
    ap = argparse.ArgumentParser()
    ap.add_argument("--uploads", type=int, default=500 if full else 80)
    ap.add_argument("--uploaders", type=int, default=32)
    ap.add_argument("--queriers", type=int, default=16)
    ap.add_argument("--kills", type=int, default=kills_default)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    return run(a.uploads, a.uploaders, a.queriers, a.kills, a.workers)


if __name__ == "__main__":
    sys.exit(main())

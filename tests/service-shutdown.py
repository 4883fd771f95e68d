#!/usr/bin/env python3
"""perfhubd's shutdown and its administrative actions under load.

A recording big enough to take a while to ingest is made at test time
(perf record, cpu-clock every 20 us with call chains); six copies of it,
made distinct by a few trailing bytes, are queued on a one-worker daemon.

1. SIGTERM with --shutdown-grace 0 while the first copy is parsing: exit
   0 at once, the running job requeued. Restarted, all four end ready,
   each with perf report --stats' sample count, the sum of its /collapsed
   equal to that count (no sample written twice) and four profiles listed.
2. SIGTERM with --shutdown-grace 60 while a copy is parsing: that job
   finishes before the process exits 0 (its "parse done" line is logged
   before "stopped", no requeue), the queued ones wait for the restart.
3. `perfhubd --backup FILE` while copies are being ingested: exit 0, the
   copy passes PRAGMA integrity_check and holds the profiles.
4. `perfhubd --vacuum` while the daemon runs (idle), after three profiles
   were deleted: the files shrink, integrity_check ok, the last profile is
   still served with its counts.

Skips (77) without perf record or a built perfhubd."""
import concurrent.futures
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfhubd_harness as H  # noqa: E402

DAEMON = os.path.join(H.builddir(), "daemon", "perfhubd")
COPIES = 6
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg)
    return cond


def record(work):
    big = os.path.join(work, "big.data")
    H.perf_record(big, ["-e", "cpu-clock", "-c", "20000", "-g"],
                  ["sh", "-c", "i=0; while [ $i -lt 450000 ]; do i=$((i+1)); done"])
    copies = []
    for k in range(COPIES):
        path = os.path.join(work, "copy%d.data" % k)
        shutil.copyfile(big, path)
        with open(path, "ab") as f:	# after the data and feature sections: ignored
            f.write(b"perfhub-copy-%d\0" % k)
        copies.append(path)
    _, per_event = H.perf_stats(big)
    return copies, sum(per_event.values())


def status_of(d, pid):
    st, p = d.json("GET", "/api/v1/profiles/%d" % pid)
    return p["status"] if st == 200 else None


def wait_parsing(d, ids, timeout=60):
    # from the daemon's log, not by polling the API: a parse can take less
    # than a round of status requests; a job started and not yet ended is
    # running
    deadline = time.time() + timeout
    while time.time() < deadline:
        log = d.read_log()[d.log_start:]
        for i in ids:
            if ('msg="parse start" id=%d ' % i) in log and \
               not re.search(r'msg="parse (done|failed|requeued)" id=%d ' % i, log):
                return i
        if all(('msg="parse done" id=%d ' % i) in log for i in ids):
            return None
        time.sleep(0.001)
    return None


def queue_copies(d, copies):
    # all at once, so that jobs queue up behind the one worker: one at a
    # time, a fast parse could end before the next upload is fsynced and
    # no job would ever be seen running
    def one(c):
        st, r = d.upload(c)
        assert st in (200, 201, 202), "upload: %d %r" % (st, r)
        return r["id"]
    with concurrent.futures.ThreadPoolExecutor(len(copies)) as ex:
        return list(ex.map(one, copies))


def verify_all(d, ids, samples, step):
    st, lst = d.json("GET", "/api/v1/profiles?limit=100")
    check(lst["total"] == len(ids), "%s: %d profiles listed, expected %d" %
          (step, lst["total"], len(ids)))
    ok = True
    for i in ids:
        p = d.wait(i, timeout=180)
        ok &= check(p["status"] == "ready", "%s: profile %d %s: %s" % (step, i, p["status"],
                                                                    p.get("error")))
        ok &= check(p["samples"] == samples, "%s: profile %d has %r samples, perf %d" %
                    (step, i, p["samples"], samples))
        st, _, body = d.request("GET", "/api/v1/profiles/%d/collapsed?weight=samples" % i)
        total = sum(int(line.rpartition(" ")[2]) for line in body.decode().splitlines())
        ok &= check(total == samples, "%s: profile %d: /collapsed sums to %d, perf %d" %
                    (step, i, total, samples))
    if ok:
        print("ok: %s: %d profiles ready, %d samples each, as perf counts" %
              (step, len(ids), samples))


def sigterm(d):
    t0 = time.time()
    rc = d.stop(signal.SIGTERM, timeout=120)
    return rc, time.time() - t0


def running_at_shutdown(log):
    """Ids whose parse had started and not ended when SIGTERM was handled."""
    head = log[:log.find('msg="shutting down"')]
    started = set(int(i) for i in re.findall(r'msg="parse start" id=(\d+) ', head))
    ended = set(int(i) for i in
                re.findall(r'msg="parse (?:done|failed|requeued)" id=(\d+) ', head))
    return started - ended


def step_grace0(state, copies, samples):
    # SIGTERM is sent when a parse is seen running; on a loaded machine the
    # parse can end before the signal is handled, and then there is nothing
    # to requeue: the daemon is restarted and signalled again (queued jobs
    # remain) until a parse was running at the shutdown
    ids = None
    for attempt in range(1, 5):
        d = H.Daemon(state=state, args=["--shutdown-grace", "0"], workers=1).start()
        try:
            if ids is None:
                ids = queue_copies(d, copies)
            running = wait_parsing(d, ids)
            if running is None:
                break
            rc, secs = sigterm(d)
            log = d.read_log()[d.log_start:]
            caught = running_at_shutdown(log)
            # a parse past its last point of cancelling (its final commit)
            # when the signal came ends as done: nothing to requeue, as
            # when it ended before the signal
            caught -= set(int(i) for i in re.findall(r'msg="parse done" id=(\d+) ', log))
            if not caught:
                print("note: attempt %d: the parse ended before SIGTERM was handled" % attempt)
                continue
            ok = check(rc == 0, "grace 0: SIGTERM exit status %r" % rc)
            for i in caught:
                ok &= check('msg="parse requeued" id=%d ' % i in log,
                            "grace 0: running job %d was not requeued" % i)
            if ok:
                print("ok: grace 0: exit %r after %.2f s, running job %s requeued (attempt %d)" %
                      (rc, secs, ",".join(map(str, sorted(caught))), attempt))
            break
        finally:
            d.stop(signal.SIGKILL)
    else:
        check(False, "grace 0: no parse was running at SIGTERM in 4 attempts")
    check(ids is not None and running is not None, "grace 0: no job seen parsing")
    with H.Daemon(state=state, workers=1) as d:
        verify_all(d, ids, samples, "grace 0, restarted")
    return ids


def step_grace60(state, copies, samples):
    d = H.Daemon(state=state, args=["--shutdown-grace", "60"], workers=1).start()
    try:
        ids = queue_copies(d, copies)
        running = wait_parsing(d, ids)
        check(running is not None, "grace 60: no job seen parsing")
        rc, secs = sigterm(d)
        log = d.read_log()[d.log_start:]
        ok = check(rc == 0, "grace 60: SIGTERM exit status %r" % rc)
        done = log.find('msg="parse done" id=%d ' % running)
        stopped = log.find('msg="stopped"')
        ok &= check(0 <= done < stopped,
                    "grace 60: job %d did not finish before the exit" % running)
        ok &= check("parse requeued" not in log, "grace 60: a job was requeued")
        if ok:
                print("ok: grace 60: job %d finished during the grace period, exit %r after %.2f s"
                  % (running, rc, secs))
    finally:
        d.stop(signal.SIGKILL)
    c = sqlite3.connect(os.path.join(state, "perfhub.db"))
    st = dict(c.execute("SELECT id, status FROM profiles").fetchall())
    c.close()
    check(st.get(running) == 2, "grace 60: job %d not ready in the database after exit" % running)
    with H.Daemon(state=state, workers=1) as d:
        verify_all(d, ids, samples, "grace 60, restarted")


def integrity(path):
    c = sqlite3.connect(path)
    try:
        return (c.execute("PRAGMA integrity_check").fetchone()[0],
                c.execute("SELECT count(*) FROM profiles").fetchone()[0],
                c.execute("SELECT count(*) FROM profiles WHERE status = 2").fetchone()[0])
    finally:
        c.close()


def step_backup_vacuum(state, copies, samples):
    backup = os.path.join(state, "backup.db")
    with H.Daemon(state=state, workers=1) as d:
        ids = queue_copies(d, copies)
        check(wait_parsing(d, ids) is not None, "backup: no job seen parsing")
        r = subprocess.run([DAEMON, "--db", os.path.join(state, "perfhub.db"), "--backup",
                            backup], capture_output=True, text=True, timeout=120)
        busy = [status_of(d, i) for i in ids]
        check(r.returncode == 0, "backup: exit %d: %s" % (r.returncode, r.stderr))
        if r.returncode == 0:
            res, n, ready = integrity(backup)
            check(res == "ok", "backup: integrity_check: %s" % res)
            check(n == len(ids), "backup: %d profiles in the copy, expected %d" % (n, len(ids)))
            print("ok: backup during ingest (states after it: %s): integrity %s, %d profiles,"
                  " %d ready" % (",".join(busy), res, n, ready))
        verify_all(d, ids, samples, "after the backup")

        for i in ids[:-1]:
            st, _, _ = d.request("DELETE", "/api/v1/profiles/%d" % i)
            check(st == 204, "DELETE %d: %d" % (i, st))
        db = os.path.join(state, "perfhub.db")

        def size():
            return sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))
        before = size()
        r = subprocess.run([DAEMON, "--db", db, "--vacuum"], capture_output=True, text=True,
                           timeout=300)
        check(r.returncode == 0, "vacuum: exit %d: %s" % (r.returncode, r.stderr))
        after = size()
        res, n, _ = integrity(db)
        check(res == "ok" and n == 1, "vacuum: integrity %s, %d profiles" % (res, n))
        check(after < before, "vacuum: %d bytes before, %d after" % (before, after))
        verify_all(d, ids[-1:], samples, "after the vacuum")
        print("ok: vacuum with the daemon running: %d -> %d bytes" % (before, after))


def main():
    if not os.access(DAEMON, os.X_OK):
        print("SKIP: perfhubd not built")
        return H.SKIP
    if not H.have_perf_record():
        print("SKIP: perf record unavailable")
        return H.SKIP
    work = H.tmpdir("service-shutdown.")
    t0 = time.time()
    copies, samples = record(work)
    print("recorded %d samples (%d bytes) in %.1f s" %
          (samples, os.path.getsize(copies[0]), time.time() - t0))
    for d in "abc":
        os.makedirs(os.path.join(work, d))
    step_grace0(os.path.join(work, "a"), copies, samples)
    step_grace60(os.path.join(work, "b"), copies, samples)
    step_backup_vacuum(os.path.join(work, "c"), copies, samples)
    if not failures:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The PostgreSQL pieces several nodes share (daemon/store/pg/ through
tests/pg-tool) against a server of the test's own (tests/pg_harness.py):
the harness runs it unprivileged on a unix socket only and stops it by PID;
migrations run once however many nodes start together; claims never hand
one job to two workers; a lease that ran out fences its late writes, and a
job whose lease keeps running out fails; NOTIFY wakes a waiting worker;
singletons exclude each other; transactions come through a PostgreSQL
restart by reconnecting."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pg_harness  # noqa: E402

BUILD = os.environ.get("top_builddir") or os.getcwd()
TOOL = os.path.join(BUILD, "tests", "pg-tool")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def tool(uri, *args, timeout=120, **env):
    e = dict(os.environ, PERFHUB_PG_URI=uri, **{k: str(v) for k, v in env.items()})
    p = subprocess.run([TOOL] + [str(a) for a in args], env=e, capture_output=True,
                       timeout=timeout)
    return p.returncode, p.stdout.decode(), p.stderr.decode().strip()


def spawn(uri, *args):
    return subprocess.Popen([TOOL] + [str(a) for a in args],
                            env=dict(os.environ, PERFHUB_PG_URI=uri),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def harness(pg):
    check(pg.alive(), "the server runs (pid %d)" % pg.pid)
    if os.geteuid() == 0:
        owner = int(subprocess.run(["stat", "-c", "%u", "/proc/%d" % pg.pid],
                                   capture_output=True, text=True).stdout)
        check(owner != 0, "it runs unprivileged (uid %d)" % owner)
    check(pg.psql("postgres", "SHOW listen_addresses").strip() == "",
          "it listens on no TCP address")
    check(os.path.exists(os.path.join(pg.sock, ".s.PGSQL.%d" % pg_harness.PORT)),
          "its socket is in the test's directory")


def migrations(pg):
    uri = pg.create_db("mig")
    procs = [spawn(uri, "migrate") for _ in range(4)]
    outs = [p.communicate(timeout=60) + (p.returncode,) for p in procs]
    check(all(rc == 0 for _, _, rc in outs), "4 nodes migrating at once all succeed %r" %
          [e for _, e, rc in outs if rc])
    froms = sorted(o.split()[1] for o, _, rc in outs if rc == 0)
    check(froms[0] == "0" and all(f != "0" for f in froms[1:]),
          "exactly one of them migrated from version 0 (%s)" % froms)
    rc, out, _ = tool(uri, "version")
    latest = out.strip()
    check(rc == 0 and int(latest) >= 1, "the schema is at version %s" % latest)
    pg.psql("mig", "UPDATE perfhub_schema SET version = version + 1")
    rc, _, err = tool(uri, "migrate")
    check(rc == 2 and "newer than this perfhubd" in err, "a newer schema is refused: " + err)
    pg.psql("mig", "UPDATE perfhub_schema SET version = version - 1")
    # a half-applied migration leaves nothing: a table in the way fails it whole
    pg.create_db("mig2")
    pg.psql("mig2", "CREATE TABLE sample_agg (x int)")
    rc, _, err = tool(pg.uri("mig2"), "migrate")
    tables = pg.psql("mig2", "SELECT count(*) FROM pg_tables WHERE tablename = 'profiles'")
    check(rc == 2 and "migration 1" in err and tables.strip() == "0",
          "a failed migration is rolled back whole: " + err)
    return uri


def claims(uri):
    rc, _, err = tool(uri, "enqueue", 300, "many")
    check(rc == 0, "300 jobs queued (%s)" % err)
    procs = [spawn(uri, "claim-all", "node%d" % i, 30) for i in range(4)]
    ids, per_node = [], []
    for p in procs:
        out, err = p.communicate(timeout=120)
        check(p.returncode == 0, "a claimer ended well (%s)" % err.strip())
        mine = [int(l.split()[0]) for l in out.split("\n") if l]
        ids += mine
        per_node.append(len(mine))
    check(len(ids) == 300 and len(set(ids)) == 300,
          "4 concurrent claimers took each of 300 jobs exactly once (%d, %d distinct, %s)" %
          (len(ids), len(set(ids)), per_node))
    rc, _, _ = tool(uri, "claim", "late", 30)
    check(rc == 1, "then nothing is left to claim")


def leases(pg, uri):
    tool(uri, "enqueue", 1, "lease")
    rc, out, err = tool(uri, "claim", "nodeA", 1)
    job, attempt = out.split()
    check(rc == 0 and attempt == "1", "node A claims the job, attempt 1 (%s)" % err)
    rc, _, _ = tool(uri, "write", job, attempt, "a-early")
    check(rc == 0, "A writes while its lease holds")
    rc, _, _ = tool(uri, "renew", job, attempt, 1)
    check(rc == 0, "A renews its lease")
    rc, out, _ = tool(uri, "expire")
    check(out.strip() == "requeued 0 failed 0", "a live lease is not taken: " + out.strip())
    time.sleep(1.5)
    rc, out, _ = tool(uri, "expire")
    check(out.strip() == "requeued 1 failed 0", "the lapsed lease is requeued: " + out.strip())
    rc, out, _ = tool(uri, "claim", "nodeB", 30)
    job2, attempt2 = out.split()
    check(job2 == job and attempt2 == "2", "node B takes it over, attempt 2")
    rc, out, _ = tool(uri, "write", job, attempt, "a-late")
    check(rc == 3, "A's late write is refused (fenced)")
    rc, _, _ = tool(uri, "renew", job, attempt, 30)
    check(rc == 3, "A can no longer renew")
    rc, _, _ = tool(uri, "finish", job, attempt)
    check(rc == 3, "nor finish")
    rc, _, _ = tool(uri, "write", job2, attempt2, "b")
    rc2, _, err = tool(uri, "finish", job2, attempt2)
    check(rc == 0 and rc2 == 0, "B writes and finishes (%s)" % err)
    rows = pg.psql("lease", "SELECT type FROM record_counts WHERE profile_id = %s ORDER BY 1"
                   % job).split()
    check(rows == ["a-early", "b"], "only the writes made under a live lease stay: %s" % rows)
    st = pg.psql("lease", "SELECT status, generation, lease_owner IS NULL FROM profiles"
                 " WHERE id = %s" % job).strip()
    check(st == "2|1|t", "the job is ready, generation 1, no lease: " + st)
    rc, _, _ = tool(uri, "finish", job2, attempt2)
    check(rc == 0, "a finish that is retried after its commit still succeeds")

    # a recording that takes its node down every time: given up after 3 leases
    tool(uri, "enqueue", 1, "poison")
    for i in range(3):
        rc, out, _ = tool(uri, "claim", "crasher%d" % i, 1)
        time.sleep(1.2)
        rc, out, _ = tool(uri, "expire")
    check(out.strip() == "requeued 0 failed 1", "the third lapse fails the job: " + out.strip())
    err = pg.psql("lease", "SELECT error FROM profiles WHERE sha256 = 'poison-0'")
    check("outlived its lease 3 times" in err, "with a reason: " + err.strip())

    # a clean shutdown gives the job back at once
    tool(uri, "enqueue", 1, "back")
    rc, out, _ = tool(uri, "claim", "nodeC", 30)
    j, a = out.split()
    rc, _, _ = tool(uri, "requeue", j, a)
    rc2, out, _ = tool(uri, "claim", "nodeD", 30)
    check(rc == 0 and out.split() == [j, str(int(a) + 1)], "a requeued job is claimed again")


def notify(uri):
    w = spawn(uri, "wait", 20000)
    check(w.stdout.readline().strip() == "listening", "a worker listens")
    t0 = time.time()
    rc, _, _ = tool(uri, "enqueue", 1, "wake")
    out = w.stdout.readline().strip()
    waited = time.time() - t0
    w.wait(30)
    check(out == "notified" and waited < 5, "queueing a job wakes it (%s after %.2f s)" %
          (out, waited))
    rc, out, _ = tool(uri, "wait", 300)
    check(out.split()[-1] == "timeout", "no job, no wake-up")


def singletons(uri):
    holder = spawn(uri, "singleton", "retention", 3000)
    check(holder.stdout.readline().strip() == "got", "one node takes the retention lock")
    rc, out, _ = tool(uri, "singleton", "retention", 0)
    check(out.strip() == "busy", "another node does not get it")
    rc, out, _ = tool(uri, "singleton", "resymbolize", 0)
    check(out.strip() == "got", "a different singleton is free")
    holder.kill()	# its connection ends: the lock goes with it
    holder.wait()
    deadline = time.time() + 10
    out = ""
    while time.time() < deadline and out.strip() != "got":
        rc, out, _ = tool(uri, "singleton", "retention", 0)
        time.sleep(0.1)
    check(out.strip() == "got", "a node killed while holding it lets it go")


def restart(pg, uri):
    loop = spawn(uri, "txn-loop", 40, 100)
    time.sleep(1.0)
    pg.restart("immediate", down_seconds=1.5)
    out, err = loop.communicate(timeout=120)
    m = out.split()
    check(loop.returncode == 0 and m[:2] == ["done", "40"] and int(m[3]) >= 1,
          "40 transactions come through a crash and restart of PostgreSQL: %r %s" %
          (out.strip(), err.strip()))
    n = pg.psql("mig", "SELECT count(*) FROM pings").strip()
    check(n == "40", "each of them once (%s rows)" % n)
    rc, _, err = tool(uri, "claim", "x", 30, PERFHUB_PG_PATIENCE=2)
    check(rc in (0, 1), "the queue works after the restart (%s)" % err)
    pg.stop("fast")
    t0 = time.time()
    rc, _, err = tool(uri, "claim", "x", 30)
    check(rc == 2 and ("could not connect" in err.lower() or "No such file" in err),
          "with the server down, a clear error: " + err)
    check(time.time() - t0 < 10, "at once, without waiting out the patience")
    pg.start()


def main():
    pg_harness.require()
    if not os.path.exists(TOOL):
        print("FAIL: %s is not built" % TOOL)
        return 1
    with pg_harness.Postgres() as pg:
        pid = pg.pid
        harness(pg)
        uri = migrations(pg)
        claims(uri)
        lease_uri = pg.create_db("lease")
        tool(lease_uri, "migrate")
        leases(pg, lease_uri)
        notify(uri)
        singletons(uri)
        restart(pg, uri)
        pid = pg.pid
    try:
        os.kill(pid, 0)
        gone = False
    except ProcessLookupError:
        gone = True
    check(gone, "the server is stopped by its PID at the end")
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""cluster_lib - several perfhubd nodes on one PostgreSQL and one spool, and
what tests/cluster-dir.py and tests/cluster-s3.py check of them (Python
standard library; PostgreSQL from tests/pg_harness.py, the S3-compatible
server from tests/s3_harness.py).

The checks, in order:
  1. uploads spread over three nodes all end ready (or failed, for the
     corpus's corrupt file), and every answer about them is the same from
     every node and the same as a single SQLite node's for the same files;
  2. kill -9 of the node that parses a large recording: another node takes
     the job when its lease runs out and finishes it with perf's count of
     samples; then the same job parsed again, its node frozen (SIGSTOP)
     past its lease: another node finishes it, and the frozen one, woken,
     finds its writes refused and abandons the parse; a session of ours
     stopped in the middle of a COPY with a job's row locked (what a node
     frozen mid-write leaves, which the server never times out) is ended
     by the nodes, and the row is free again;
  3. PostgreSQL restarted while uploads arrive and parse: every
     acknowledged upload ends ready, the nodes reconnect by themselves;
  4. a node started later, with jobs queued, takes one at once.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfhubd_harness as H  # noqa: E402
import pg_harness  # noqa: E402

LEASE = 3		# seconds: a dead node's job comes back this soon
CORPUS = ["mstange-sleep.data", "perfparser-cpp-inlining.perf.data",
          "hotspot-perf.data.true.v2", "quipper-perf.data.callgraph-3.8",
          "perfparser-parallel_static_gcc-perf.data.zstd",
          "quipper-perf.data.piped.corrupted.zero_size_sample-3.2"]
BIG = ["sh", "-c", "i=0; while [ $i -lt 6000000 ]; do i=$((i+1)); done"]


def log(msg):
    print(msg, flush=True)


class Cluster:
    """PostgreSQL, a spool ("dir" or "s3") and the nodes on them."""

    def __init__(self, spool_kind, work):
        self.work = work
        self.kind = spool_kind
        self.pg = pg_harness.Postgres().start()
        self.uri = self.pg.create_db("cluster")
        self.s3 = None
        self.env = None
        if spool_kind == "s3":
            import s3_harness
            self.s3 = s3_harness.S3Server(prefix="").start()
            self.spool = self.s3.url() + "/cluster"
            self.env = self.s3.env()
        else:
            self.spool = os.path.join(work, "shared-spool")
        self.nodes = []

    def node(self, name, workers=1):
        state = os.path.join(self.work, name)
        os.makedirs(state, exist_ok=True)
        args = ["--db", self.uri, "--spool", self.spool, "--job-lease", str(LEASE),
                "--cache-dir", os.path.join(state, "cache")]
        if self.s3:
            args += ["--s3-endpoint", self.s3.endpoint()]
        n = H.Daemon(state=state, args=args, workers=workers, env=self.env).start()
        n.name = name
        self.nodes.append(n)
        return n

    def alive(self):
        return [n for n in self.nodes if n.proc and n.proc.poll() is None]

    def close(self, failed=False):
        for n in self.nodes:
            n.stop()
        # the sanitizer build: a report in any node's log fails the test
        for n in self.nodes:
            m = re.search(r"(ERROR: \w+Sanitizer.*|runtime error:.*)", n.read_log())
            if m and not failed:
                failed = True
                sys.stderr.write("%s: %s\n" % (n.name, m.group(1)))
                self.sanitizer = m.group(1)
            if failed:
                sys.stderr.write("---- %s ----\n%s\n" % (n.name, n.read_log()[-4000:]))
        if failed:
            sys.stderr.write("---- postgres ----\n%s\n" % self.pg.log()[-3000:])
        if self.s3:
            self.s3.__exit__(None, None, None)
        self.pg.cleanup()


def wait_done(node, pid, timeout=300):
    return node.wait(pid, timeout=timeout)


def answers(node, pid, for_sqlite=False):
    """Everything the API says about one profile (JSON parsed, text as is)."""
    out = {}
    st, p = node.json("GET", "/api/v1/profiles/%d" % pid)
    H.check(st == 200, "%s: profile %d: %s" % (node.name, pid, st))
    if for_sqlite:
        for k in ("id", "uploaded_at", "parse_ms"):
            p.pop(k, None)
    out["profile"] = p
    if p["status"] != "ready":
        return out
    for q in ("flamegraph", "flamegraph?weight=samples", "top?limit=50", "threads",
              "timeline?bucket_ms=10", "speedscope"):
        st, body = node.json("GET", "/api/v1/profiles/%d/%s" % (pid, q))
        H.check(st == 200, "%s: %s of %d: %s" % (node.name, q, pid, st))
        out[q] = body
    st, _, text = node.request("GET", "/api/v1/profiles/%d/collapsed" % pid)
    H.check(st == 200, "%s: collapsed of %d: %s" % (node.name, pid, st))
    out["collapsed"] = text.decode("utf-8", "replace")
    return out


def global_answers(node):
    out = {}
    for q in ("aggregate?group_by=comm", "aggregate?group_by=symbol&limit=50",
              "aggregate?group_by=dso"):
        st, body = node.json("GET", "/api/v1/" + q)
        H.check(st == 200, "%s: %s: %s" % (node.name, q, st))
        out[q] = body
    st, lst = node.json("GET", "/api/v1/profiles?limit=1000")
    H.check(st == 200, "%s: list: %s" % (node.name, st))
    out["list"] = lst
    return out


def diff_text(a, b):
    ja, jb = json.dumps(a, sort_keys=True), json.dumps(b, sort_keys=True)
    i = next((k for k in range(min(len(ja), len(jb))) if ja[k] != jb[k]), min(len(ja), len(jb)))
    return "%s\n   vs\n%s" % (ja[max(0, i - 200):i + 200], jb[max(0, i - 200):i + 200])


def node_of_parse(nodes, pid, what="parse start", timeout=60):
    """The node whose log says `what` for profile pid first."""
    deadline = time.time() + timeout
    pat = 'msg="%s" id=%d ' % (what, pid)
    while time.time() < deadline:
        for n in nodes:
            if pat in n.read_log():
                return n
        time.sleep(0.02)
    return None


def record_loops(work, name, count, freq, base, step):
    """count recordings of a shell loop of base + step * i turns each, -g
    at freq Hz: distinct bytes, parses of a chosen size."""
    out = []
    for i in range(count):
        path = os.path.join(work, "%s%d.data" % (name, i))
        H.perf_record(path, ["-g", "-e", "cpu-clock", "-F", str(freq)],
                      ["sh", "-c", "i=0; while [ $i -lt %d ]; do i=$((i+1)); done" %
                       (base + step * i)])
        out.append(path)
    return out


def recordings(work):
    """The recordings of the test: some of the corpus, and made here."""
    files = []
    for c in CORPUS:
        path = H.corpus(c)
        if os.path.exists(path):
            files.append(path)
    files += record_loops(work, "small", 3, 2000, 60000, 70000)
    # a sample every 20 us of CPU: a parse of seconds
    big = H.perf_record(os.path.join(work, "big.data"), ["-g", "-c", "20000", "-e", "cpu-clock"],
                        BIG)
    return files, big


def check_spread(cl, files):
    """1. Uploads over three nodes; every node answers the same, and the
    same as one SQLite node for the same files."""
    nodes = cl.alive()
    ids = []
    for i, f in enumerate(files):
        st, r = nodes[i % len(nodes)].upload(f, "?name=" + os.path.basename(f))
        H.check(st == 202, "upload %s to %s: %s %s" % (f, nodes[i % len(nodes)].name, st, r))
        ids.append(r["id"])
    for pid in ids:
        p = wait_done(nodes[0], pid)
        H.check(p["status"] in ("ready", "failed"), "profile %d: %s" % (pid, p["status"]))
    parsed_by = {n.name: len(re.findall(r'msg="parse done"', n.read_log())) for n in nodes}
    log("1. %d uploads over %d nodes, parsed by %s" % (len(ids), len(nodes), parsed_by))
    want = {pid: answers(nodes[0], pid) for pid in ids}
    want_global = global_answers(nodes[0])
    for n in nodes[1:]:
        for pid in ids:
            got = answers(n, pid)
            H.check(got == want[pid], "%s and %s differ on profile %d:\n%s" % (
                nodes[0].name, n.name, pid, diff_text(want[pid], got)))
        got = global_answers(n)
        H.check(got == want_global, "%s and %s differ across profiles:\n%s" % (
            nodes[0].name, n.name, diff_text(want_global, got)))
    log("   every answer equal from every node (%d profiles, %d answers each)" %
        (len(ids), max(len(a) for a in want.values())))

    # the same files, one at a time, into one SQLite node
    os.makedirs(os.path.join(cl.work, "sqlite"), exist_ok=True)
    with H.Daemon(state=os.path.join(cl.work, "sqlite"), workers=2,
                  args=["--db", os.path.join(cl.work, "sqlite", "one.db"),
                        "--spool", os.path.join(cl.work, "sqlite", "spool")]) as one:
        one.name = "sqlite"
        alone = []
        for f in files:
            st, r = one.upload(f, "?name=" + os.path.basename(f))
            H.check(st == 202, "sqlite upload %s: %s" % (f, st))
            alone.append(r["id"])
        for pid in alone:
            wait_done(one, pid)
        for pid, spid in zip(ids, alone):
            a = answers(nodes[0], pid, for_sqlite=True)
            b = answers(one, spid, for_sqlite=True)
            H.check(a == b, "PostgreSQL and SQLite differ on %s:\n%s" % (
                a["profile"].get("name"), diff_text(b, a)))
        g1, g2 = global_answers(nodes[0]), global_answers(one)
        for g in (g1, g2):
            for p in g["list"]["profiles"]:
                for k in ("id", "uploaded_at", "parse_ms"):
                    p.pop(k, None)
        H.check(g1 == g2, "PostgreSQL and SQLite differ across profiles:\n%s" % diff_text(g2, g1))
    log("   and equal to a single SQLite node's")
    return ids


def check_kill9(cl, big):
    """2. kill -9 of the node parsing a large recording."""
    want, per_event = H.perf_stats(big)
    nodes = cl.alive()
    st, r = nodes[-1].upload(big, "?name=big")
    H.check(st == 202, "big upload: %s" % st)
    pid = r["id"]
    victim = node_of_parse(nodes, pid)
    H.check(victim is not None, "nobody started parsing the large recording")
    victim.kill9()
    H.check('msg="parse done" id=%d ' % pid not in victim.read_log(),
            "the large recording was parsed before its node was killed (too small for"
            " this machine?)")
    t_kill = time.time()
    others = cl.alive()
    p = wait_done(others[0], pid)
    H.check(p["status"] == "ready", "large recording after kill -9: %s" % p)
    finisher = node_of_parse(others, pid, "parse done", timeout=5)
    H.check(finisher is not None, "no surviving node logged the parse as done")
    H.check(p["records"].get("SAMPLE") == want.get("SAMPLE"),
            "samples after the takeover: %s, perf report --stats: %s" %
            (p["records"].get("SAMPLE"), want.get("SAMPLE")))
    H.check(p["samples_per_event"] == per_event,
            "samples per event %s, perf %s" % (p["samples_per_event"], per_event))
    log("2. kill -9 of %s while it parsed profile %d: %s finished it %.1f s later with perf's"
        " %d samples" % (victim.name, pid, finisher.name, time.time() - t_kill,
                         want.get("SAMPLE", 0)))
    return pid


def check_freeze(cl, pid):
    """2b. A node frozen (SIGSTOP) in the middle of a parse, past its lease:
    another node takes the job and finishes it; when the frozen one wakes,
    its next write is refused and it abandons the parse."""
    nodes = cl.alive()
    want = nodes[0].json("GET", "/api/v1/profiles/%d" % pid)[1]
    logs0 = {n.name: len(n.read_log()) for n in nodes}
    st, r = nodes[0].json("POST", "/api/v1/profiles/%d/resymbolize" % pid)
    H.check(st == 202, "resymbolize: %s %s" % (st, r))
    deadline, frozen = time.time() + 60, None
    while time.time() < deadline and not frozen:
        for n in nodes:
            if 'msg="parse start" id=%d ' % pid in n.read_log()[logs0[n.name]:]:
                frozen = n
                break
        time.sleep(0.01)
    H.check(frozen is not None, "nobody parsed the recording again")
    frozen.proc.send_signal(signal.SIGSTOP)
    t0 = time.time()
    try:
        others = [n for n in nodes if n is not frozen]
        p = wait_done(others[0], pid)
        done_by = node_of_parse(others, pid, "parse done", timeout=10)
    finally:
        frozen.proc.send_signal(signal.SIGCONT)
    H.check(p["status"] == "ready" and p["records"] == want["records"],
            "after the takeover: %s" % p.get("error"))
    H.check(done_by is not None, "no other node finished the job")
    deadline = time.time() + 60
    while time.time() < deadline:
        tail = frozen.read_log()[logs0[frozen.name]:]
        if 'msg="parse abandoned" id=%d ' % pid in tail:
            break
        time.sleep(0.1)
    H.check('msg="parse abandoned" id=%d ' % pid in tail,
            "the frozen node did not abandon its parse:\n" + tail[-3000:])
    H.check('msg="parse done" id=%d ' % pid not in tail, "the frozen node finished too")
    log("2b. %s frozen while it parsed profile %d again: %s took the job once the lease ran"
        " out (and the server ended a transaction the frozen node had open) and finished it"
        " %.1f s after the freeze; woken, %s found its writes refused and abandoned the"
        " parse" % (frozen.name, pid, done_by.name, time.time() - t0, frozen.name))


def check_stalled_copy(cl, pid):
    """2c. A session named as the nodes' own, in a transaction holding
    profile pid's row, stopped in a COPY waiting for data (as a node
    frozen mid-write): the nodes end it within two leases and a little."""
    env = dict(os.environ, PGAPPNAME="perfhubd")
    psql = subprocess.Popen([os.path.join(pg_harness.bindir(), "psql"), "-X", "-q",
                             "-d", cl.uri], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env)
    logs0 = {n.name: len(n.read_log()) for n in cl.alive()}
    t0 = time.time()
    try:
        psql.stdin.write(b"BEGIN;\nSELECT id FROM profiles WHERE id = %d FOR UPDATE;\n"
                         b"COPY comms FROM STDIN;\n" % pid)
        psql.stdin.flush()	# and nothing more: the COPY waits for its client
        deadline, ended = time.time() + 60, []
        while time.time() < deadline and not ended:
            ended = [n.name for n in cl.alive()
                     if "stalled sessions ended" in n.read_log()[logs0[n.name]:]]
            time.sleep(0.1)
        took = time.time() - t0
        H.check(ended, "no node ended the session stalled in a COPY in 60 s")
        # psql learns it when it sends the rest of the COPY
        psql.stdin.write(b"\\.\n")
        psql.stdin.close()
        psql.wait(timeout=30)
        err = psql.stderr.read().decode(errors="replace")
        H.check("terminat" in err, "the stalled session ended otherwise: %r" % err)
        # the row is free: a rename goes through at once
        st, _ = cl.alive()[0].json("PATCH", "/api/v1/profiles/%d" % pid, b'{"name": "freed"}',
                                   {"Content-Type": "application/json"})
        H.check(st == 200, "PATCH after the stalled session: %s" % st)
        log("2c. a session stopped in a COPY with profile %d's row locked was ended by %s"
            " after %.1f s; the row is free again" % (pid, ", ".join(ended), took))
    finally:
        if psql.poll() is None:
            psql.kill()
            psql.wait()


def check_pg_restart(cl):
    """3. PostgreSQL restarted during ingest."""
    nodes = cl.alive()
    fresh = record_loops(cl.work, "restart", 12, 4000, 100000, 20000)
    acked, refused = [], []
    lock = threading.Lock()

    def uploader(k):
        for i in range(k, len(fresh), 2):
            n = nodes[i % len(nodes)]
            st, r = n.upload(fresh[i], "?name=restart%d" % i)
            with lock:
                if st in (200, 202):
                    acked.append(r["id"])
                else:
                    refused.append(st)
            time.sleep(0.4)

    threads = [threading.Thread(target=uploader, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    cl.pg.restart("immediate", down_seconds=2)
    t_up = time.time()
    for t in threads:
        t.join()
    H.check(acked, "nothing was acknowledged around the restart")
    for pid in sorted(set(acked)):
        p = wait_done(nodes[0], pid)
        H.check(p["status"] == "ready", "acknowledged profile %d after the restart: %s" %
                (pid, p.get("error")))
    for n in nodes:
        st, h = n.json("GET", "/healthz")
        H.check(st == 200, "%s unhealthy after the restart: %s %s" % (n.name, st, h))
    reconnects = sum(n.read_log().count("keeper reconnected") for n in nodes)
    H.check(reconnects >= len(nodes), "keepers reconnected %d times" % reconnects)
    log("3. PostgreSQL restarted (immediate, 2 s down) during ingest: %d of %d uploads"
        " acknowledged, all ready %.1f s after it came back; refused: %s; every node healthy"
        " (%d keeper reconnects)" % (len(set(acked)), len(fresh), time.time() - t_up,
                                     sorted(refused) or "none", reconnects))


def check_late_node(cl):
    """4. A node started while jobs wait takes one at once. The running
    nodes are frozen (SIGSTOP) right after the uploads, so jobs are surely
    still queued when it starts; their leases run out meanwhile, and when
    they go on their late writes are refused (fenced), the jobs done by
    others."""
    nodes = cl.alive()
    late_files = record_loops(cl.work, "late", 10, 20000, 600000, 10000)
    queued, lock = [], threading.Lock()

    def up(i):
        st, r = nodes[i % len(nodes)].upload(late_files[i], "?name=late%d" % i)
        H.check(st == 202, "late upload: %s" % st)
        with lock:
            queued.append(r["id"])

    threads = [threading.Thread(target=up, args=(i,)) for i in range(len(late_files))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n in nodes:
        n.proc.send_signal(signal.SIGSTOP)
    t_freeze = time.time()
    try:
        waiting = int(cl.pg.psql("cluster", "SELECT count(*) FROM profiles WHERE status = 0"))
        # the jobs the frozen nodes hold, and which (lease_owner HOST:PID:RANDOM)
        held = {}
        for line in cl.pg.psql("cluster", "SELECT id, lease_owner FROM profiles"
                                          " WHERE status = 1").split():
            pid, owner = line.split("|")
            held[int(pid)] = next(n for n in nodes if owner.split(":")[-2] == str(n.proc.pid))
        logs0 = {n.name: len(n.read_log()) for n in nodes}
        H.check(waiting > 0, "the running nodes took every job before the late node started")
        t0 = time.time()
        late = cl.node("late", workers=1)
        took = None
        while time.time() - t0 < 60 and took is None:
            m = re.search(r'msg="parse start" id=(\d+)', late.read_log())
            if m:
                took = (int(m.group(1)), time.time() - t0)
            time.sleep(0.02)
        # frozen past their leases: their jobs go to others meanwhile
        time.sleep(max(0, t_freeze + LEASE + 2 - time.time()))
    finally:
        for n in nodes:
            n.proc.send_signal(signal.SIGCONT)
    H.check(took is not None, "the late node took no job")
    H.check(took[1] < 5, "the late node waited %.1f s for its first job" % took[1])
    for pid in queued:
        p = wait_done(late, pid)
        H.check(p["status"] == "ready", "late job %d: %s" % (pid, p.get("error")))
    # each job a frozen node held: its parse abandoned when it woke (its
    # writes fenced), or, when a write of its was under way at the freeze
    # (holding the row, which the requeue then waits for), finished by it
    # (a woken node gets there in its own time: under a sanitizer on a
    # loaded machine that may be after the late node is done)
    fenced, finished = [], []
    for i, holder in held.items():
        end = time.time() + 120
        while True:
            tail = holder.read_log()[logs0[holder.name]:]
            if 'msg="parse abandoned" id=%d ' % i in tail:
                fenced.append(i)
                break
            if 'msg="parse done" id=%d ' % i in tail:
                finished.append(i)
                break
            if time.time() > end:
                raise AssertionError("%s held job %d when frozen: neither abandoned nor"
                                     " finished 120 s after it woke" % (holder.name, i))
            time.sleep(0.1)
    log("4. a node started with %d of %d jobs queued (the others frozen) took profile %d"
        " %.2f s after starting; all %d ready; of the %d jobs the frozen nodes held, %d"
        " were abandoned when they woke (writes fenced), %d finished by a write under way"
        % (waiting, len(queued), took[0], took[1], len(queued), len(held), len(fenced),
           len(finished)))


def run(spool_kind):
    if not pg_harness.bindir():
        print("SKIP: PostgreSQL is not installed (build-aux/install-deps --test installs it)")
        return H.SKIP
    if spool_kind == "s3":
        import s3_harness
        s3_harness.require()
    if not H.have_perf_record():
        print("SKIP: perf record does not work here")
        return H.SKIP
    work = H.tmpdir("cluster-%s-" % spool_kind)
    files, big = recordings(work)
    cl = Cluster(spool_kind, work)
    ok = False
    try:
        for name in ("a", "b", "c"):
            cl.node(name)
        log("three nodes on %s, spool %s" % (cl.uri.split("?")[0], cl.spool))
        check_spread(cl, files)
        big_id = check_kill9(cl, big)
        check_freeze(cl, big_id)
        check_stalled_copy(cl, big_id)
        check_pg_restart(cl)
        check_late_node(cl)
        ok = True
    finally:
        cl.close(failed=not ok)
    H.check(not getattr(cl, "sanitizer", None), "a sanitizer report: %s" % getattr(
        cl, "sanitizer", None))
    shutil.rmtree(work, ignore_errors=True)
    return 0

#!/usr/bin/env python3
"""perfhubd --copy-to: an SQLite store with its spool (recordings, a
perf.data directory sent as a tar, a failed upload, tags, uploaded
debuginfo) copied into PostgreSQL, the spool's files into a new spool (a
directory, then a bucket). A node on the copy answers every question as
the SQLite node did (ids, upload times, names, tags, flame graphs,
/perf.data bytes, debuginfo), parses a copied profile again, and numbers a
new upload after the copied ones. A second copy into the same store is
refused; with no --copy-spool the copy names the files in --spool."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
import perfhubd_harness as H  # noqa: E402
import pg_harness  # noqa: E402
from cluster_lib import answers  # noqa: E402
from debuginfo_common import build_id  # noqa: E402

DAEMON = os.path.join(H.builddir(), "daemon", "perfhubd")


def copy(args, env=None):
    p = subprocess.run([DAEMON] + args, capture_output=True, text=True, timeout=300, env=env)
    return p.returncode, p.stdout + p.stderr


def everything(node, ids):
    out = {pid: answers(node, pid) for pid in ids}
    for pid in ids:
        st, _, body = node.request("GET", "/api/v1/profiles/%d/perf.data" % pid)
        out[pid]["perf.data"] = (st, len(body), hash(body))
    st, lst = node.json("GET", "/api/v1/profiles?limit=100")
    out["list"] = lst
    return out


def main():
    if not pg_harness.bindir():
        print("SKIP: PostgreSQL is not installed (build-aux/install-deps --test installs it)")
        return H.SKIP
    if not H.have_perf_record():
        print("SKIP: perf record does not work here")
        return H.SKIP
    work = H.tmpdir("pg-copy-")
    rec = H.perf_record(os.path.join(work, "r.data"), ["-g", "-e", "cpu-clock"], H.BUSY)
    tdir = os.path.join(work, "threads.data")
    subprocess.run(["perf", "record", "-q", "--threads", "-g", "-e", "cpu-clock", "-o", tdir,
                    "--"] + H.BUSY, check=True, capture_output=True, timeout=300)
    elf = shutil.which("sh")
    state = os.path.join(work, "sqlite")
    os.makedirs(state)
    db, spool = os.path.join(state, "perfhub.db"), os.path.join(state, "spool")
    base = ["--db", db, "--spool", spool]
    with H.Daemon(state=state, args=base) as one:
        ids = []
        st, r = one.upload(rec, "?name=first&tag=branch=main&tag=ci=yes")
        H.check(st == 202, "upload: %s" % st)
        ids.append(r["id"])
        body = subprocess.run(["tar", "-C", tdir, "-cf", "-", "."], capture_output=True,
                              check=True).stdout
        st, r = one.upload(body, "?name=dir", {"Content-Type": "application/x-tar"})
        H.check(st == 202, "tar upload: %s" % st)
        ids.append(r["id"])
        # starts as a perf.data (a body that does not is refused at the
        # upload), then fails to parse
        st, r = one.upload(b"PERFILE2 but not a recording at all", "?name=bad")
        H.check(st == 202, "bad upload: %s %r" % (st, r))
        ids.append(r["id"])
        for pid in ids:
            one.wait(pid)
        st, patched = one.json("PATCH", "/api/v1/profiles/%d" % ids[0],
                               b'{"tags": {"ci": "no"}}', {"Content-Type": "application/json"})
        H.check(st == 200, "PATCH: %s %s" % (st, patched))
        with open(elf, "rb") as f:
            st, di = one.json("PUT", "/api/v1/debuginfo/" + build_id(elf), f.read())
        H.check(st in (200, 201), "debuginfo PUT: %s %s" % (st, di))
        # the symbols re-queue the profile that lacked them: parsed again first
        for pid in ids:
            one.wait(pid)
        want = everything(one, ids)
        st, _, want_dbg = one.request("GET", "/api/v1/debuginfo/" + build_id(elf))
        H.check(st == 200, "debuginfo GET on SQLite: %s" % st)

    with pg_harness.Postgres() as pg:
        for kind in ("dir", "s3"):
            uri = pg.create_db("copy_" + kind)
            env, extra = None, []
            s3 = None
            if kind == "s3":
                import s3_harness
                if not os.path.isdir(os.path.join(s3_harness.package_dir(), "node_modules",
                                                  "s3rver")):
                    print("s3 part skipped: s3rver is not installed (npm ci in tests/s3)")
                    continue
                s3 = s3_harness.S3Server(prefix="").start()
                env, extra = s3.env(), ["--s3-endpoint", s3.endpoint()]
                dest = s3.url() + "/copied"
            else:
                dest = os.path.join(work, "copied-spool")
            try:
                rc, out = copy(base + ["--copy-to", uri, "--copy-spool", dest,
                                       "--cache-dir", os.path.join(work, "cache-" + kind)] +
                               extra, env)
                H.check(rc == 0, "--copy-to (%s): %d %s" % (kind, rc, out))
                print(kind + ": " + out.strip())
                H.check("3 profiles" in out, "copy said: %s" % out)
                node_state = os.path.join(work, "node-" + kind)
                os.makedirs(node_state)
                args = ["--db", uri, "--spool", dest, "--job-lease", "5",
                        "--cache-dir", os.path.join(node_state, "cache")] + extra
                with H.Daemon(state=node_state, args=args, env=env) as node:
                    got = everything(node, ids)
                    for k in want:
                        H.check(got[k] == want[k], "%s: the copy differs on %s:\n%s" % (
                            kind, k, diff(want[k], got[k])))
                    st, _, dbg = node.request("GET", "/api/v1/debuginfo/" + build_id(elf))
                    H.check(st == 200 and dbg == want_dbg, "%s: debuginfo from the copy: %s"
                            % (kind, st))
                    # parsed again from the copied spool
                    st, r = node.json("POST", "/api/v1/profiles/%d/resymbolize" % ids[1])
                    H.check(st == 202, "%s: resymbolize: %s %s" % (kind, st, r))
                    p = node.wait(ids[1])
                    H.check(p["status"] == "ready", "%s: the tar parsed again: %s" % (kind, p))
                    again = answers(node, ids[1])
                    H.check(all(again[k] == want[ids[1]][k] for k in again if k != "profile"),
                            "%s: the tar parsed again answers otherwise" % kind)
                    st, r = node.upload(rec, "?name=dup")
                    H.check(st == 200 and r["id"] == ids[0], "%s: the same bytes again: %s %s"
                            % (kind, st, r))
                    more = H.perf_record(os.path.join(work, "more.data"),
                                         ["-e", "cpu-clock"], H.BUSY)
                    st, r = node.upload(more)
                    H.check(st == 202 and r["id"] == max(ids) + 1,
                            "%s: a new upload after the copy: %s %s" % (kind, st, r))
                    H.check(node.wait(r["id"])["status"] == "ready", "new upload not parsed")
                print("%s: a node on the copy answers as the SQLite node did; parses again;"
                      " numbers new uploads after the copied ones" % kind)
                rc, out = copy(base + ["--copy-to", uri, "--copy-spool", dest,
                                       "--cache-dir", os.path.join(work, "cache-" + kind)] +
                               extra, env)
                H.check(rc == 1 and "empty" in out, "a second copy: %d %s" % (rc, out))
            finally:
                if s3:
                    s3.__exit__(None, None, None)
        # without --copy-spool: the files stay in --spool, named relative to it
        uri = pg.create_db("copy_inplace")
        rc, out = copy(base + ["--copy-to", uri])
        H.check(rc == 0 and "left in --spool" in out, "in place: %d %s" % (rc, out))
        # (a recording that could not be read is not kept: the failed one's
        # file went when its parse failed)
        refs = pg.psql("copy_inplace", "SELECT spool_path FROM profiles WHERE status <> 3"
                       " ORDER BY id").split()
        H.check(refs and all(not r.startswith("/") and os.path.exists(os.path.join(spool, r))
                             for r in refs), "refs of an in-place copy: %s" % refs)
        print("in place: the copy names the files in --spool: %s" % refs)
    shutil.rmtree(work, ignore_errors=True)
    return 0


def diff(a, b):
    import json
    ja, jb = json.dumps(a, sort_keys=True, default=str), json.dumps(b, sort_keys=True, default=str)
    i = next((k for k in range(min(len(ja), len(jb))) if ja[k] != jb[k]), 0)
    return ja[max(0, i - 150):i + 150] + "\n  vs\n" + jb[max(0, i - 150):i + 150]


if __name__ == "__main__":
    sys.exit(main())

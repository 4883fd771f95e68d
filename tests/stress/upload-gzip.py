#!/usr/bin/env python3
"""gzip uploads: Content-Encoding: gzip is inflated as it streams into the
spool (stored decoded: the same sha256 as the raw bytes, so a raw upload of
the same recording is a duplicate), concatenated members decode as one, a
tar may come gzipped; corrupt, truncated and trailing-garbage streams
answer 400, a gzip bomb 413 without filling memory or disk, and nothing of
them is left in the spool."""
import gzip
import hashlib
import io
import os
import sys
import tarfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stress_lib as S  # noqa: E402
from perfhubd_harness import SKIP, Daemon, check, have_perf_record, perf_record, tmpdir  # noqa: E402

GZ = {"Content-Encoding": "gzip"}


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    work = tmpdir("gzip-")
    rec = S.make_recordings(work, 2)
    a, b = rec
    limit = 4 << 20
    with Daemon(args=["--max-upload", str(limit)]) as d:
        st, r = d.upload(gzip.compress(a.data), headers=GZ)
        check(st == 202, "gzip upload: %s %s" % (st, r))
        check(r["sha256"] == hashlib.sha256(a.data).hexdigest(), "stored decoded: sha256")
        check(r["size"] == len(a.data), "decoded size %s, want %d" % (r["size"], len(a.data)))
        p = d.wait(r["id"])
        check(p["status"] == "ready", "gzip profile: %s" % p.get("error"))
        check(p["records"]["SAMPLE"] == a.samples,
              "SAMPLE %s, perf says %d" % (p["records"]["SAMPLE"], a.samples))
        st, r2 = d.upload(a.data)
        check(st == 200 and r2["id"] == r["id"], "raw after gzip is a duplicate: %s %s" % (st, r2))
        st, r3 = d.upload(gzip.compress(a.data, 9), headers={"Content-Encoding": "x-gzip"})
        check(st == 200 and r3["id"] == r["id"], "x-gzip, level 9: %s %s" % (st, r3))

        # two gzip members, as `cat x.gz y.gz` makes: one stream
        half = len(b.data) // 3
        st, r = d.upload(gzip.compress(b.data[:half]) + gzip.compress(b.data[half:]), headers=GZ)
        check(st == 202 and r["sha256"] == hashlib.sha256(b.data).hexdigest(),
              "two members: %s %s" % (st, r))
        check(d.wait(r["id"])["status"] == "ready", "two members ready")

        # a gzipped tar of a perf.data directory-like upload (a single file
        # in a directory is still a directory upload)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
            info = tarfile.TarInfo("perf.data/data")
            v = S.with_hostname(a.data, "tarred")
            info.size = len(v)
            tf.addfile(info, io.BytesIO(v))
        st, r = d.upload(gzip.compress(buf.getvalue()),
                         headers={"Content-Encoding": "gzip", "Content-Type": "application/x-tar"})
        check(st == 202, "gzipped tar: %s %s" % (st, r))
        p = d.wait(r["id"])
        check(p["status"] == "ready" and p["records"]["SAMPLE"] == a.samples,
              "gzipped tar: %s %s" % (p["status"], p.get("error")))

        bad = {
            "corrupt": b"\x1f\x8b\x08\x00garbage that is no deflate stream" * 3,
            "truncated": gzip.compress(b.data)[:-20],
            "header only": gzip.compress(b.data)[:10],
            "empty": b"",
            "trailing garbage": gzip.compress(b.data) + b"not gzip",
            "not gzip": b.data,
        }
        for what, body in bad.items():
            st, r = d.upload(body, headers=GZ)
            check(st == 400 and "gzip" in r.get("error", ""), "%s: want 400, got %s %s" %
                  (what, st, r))
        # a bomb: 64 KiB on the wire, 64 MiB decoded, over the 4 MiB limit
        # (perf.data's magic first, so that the size is what refuses it)
        z = zlib.compressobj(9, zlib.DEFLATED, 31)
        bomb = z.compress(b"PERFILE2" + b"\0" * (64 << 20)) + z.flush()
        check(len(bomb) < 100 << 10, "bomb is small: %d" % len(bomb))
        rss0 = S.proc_status(d.proc.pid, "VmRSS")
        for _ in range(5):
            st, r = d.upload(bomb, headers=GZ)
            check(st == 413, "gzip bomb: want 413, got %s %s" % (st, r))
        rss1 = S.proc_status(d.proc.pid, "VmRSS")
        check(rss1 - rss0 < 32 << 20, "RSS grew by %d bytes over 5 bombs" % (rss1 - rss0))
        litter = S.spool_litter(d.state)
        check(not litter, "spool litter after refused uploads: %s" % litter)
        spooled = [f for f in os.listdir(os.path.join(d.state, "spool")) if f != "tmp"]
        check(all(os.path.getsize(os.path.join(d.state, "spool", f)) < limit
                  for f in spooled if os.path.isfile(os.path.join(d.state, "spool", f))),
              "a bomb reached the spool")
        st, h = d.json("GET", "/healthz")
        check(st == 200, "healthz after bombs: %s" % st)
        print("gzip: ok (bomb %d bytes on the wire, RSS %+d KiB over 5 bombs)" %
              (len(bomb), (rss1 - rss0) >> 10))
    return 0


if __name__ == "__main__":
    sys.exit(main())

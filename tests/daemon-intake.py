#!/usr/bin/env python3
"""perfhubd intake: zstd Content-Encoding, --max-upload (413, also for a
decompression bomb), unsupported encodings, garbage and truncated uploads
ending `failed` with a byte offset while a good upload beside them
succeeds, and a perf.data directory uploaded as a tar."""
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import (SKIP, BUSY, Daemon, check, have_perf_record, perf_record,
                              perf_stats, tmpdir)


def zstd(data, level=3):
    return subprocess.run(["zstd", "-q", "-c", "-%d" % level], input=data, check=True,
                          capture_output=True).stdout


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    work = tmpdir("intake-")
    data_path = perf_record(os.path.join(work, "a.data"), ["-e", "cpu-clock"], BUSY)
    data = open(data_path, "rb").read()
    records, _ = perf_stats(data_path)
    good2 = perf_record(os.path.join(work, "b.data"), ["-e", "cpu-clock"], BUSY)
    limit = max(len(data), os.path.getsize(good2)) + 4096

    with Daemon(args=["--max-upload", str(limit)]) as d:
        # too large by Content-Length: refused before the body is read
        st, r = d.upload(data + b"\0" * (limit - len(data) + 1))
        check(st == 413 and "error" in r, "oversized upload: %s %s" % (st, r))

        st, _ = d.upload(data, headers={"Content-Encoding": "br"})
        check(st == 415, "br: want 415, got %s" % st)

        if shutil.which("zstd"):
            # zstd on the wire: stored decoded, same sha256 as the raw bytes
            st, r = d.upload(zstd(data), headers={"Content-Encoding": "zstd"})
            check(st == 202, "zstd upload: %s %s" % (st, r))
            check(r["sha256"] == hashlib.sha256(data).hexdigest(), "zstd sha256")
            zid = r["id"]
            st, r = d.upload(data)
            check(st == 200 and r["id"] == zid, "raw after zstd is a duplicate: %s %s" % (st, r))
            p = d.wait(zid)
            check(p["status"] == "ready" and p["records"]["SAMPLE"] == records["SAMPLE"],
                  "zstd profile: %s" % p.get("error"))
            # a decompression bomb: small on the wire, far over the limit decoded
            bomb = zstd(b"\0" * (64 << 20), 19)
            check(len(bomb) < len(data), "bomb is small")
            st, r = d.upload(bomb, headers={"Content-Encoding": "zstd"})
            check(st == 413, "zstd bomb: want 413, got %s %s" % (st, r))
            st, r = d.upload(b"\x28\xb5\x2f\xfd garbage", headers={"Content-Encoding": "zstd"})
            check(st == 400, "corrupt zstd: want 400, got %s %s" % (st, r))
        else:
            st, r = d.upload(data)
            check(st == 202, "raw upload %s" % st)
            check(d.wait(r["id"])["status"] == "ready", "raw upload ready")

        # garbage is refused by its first bytes; a truncated recording
        # fails with a byte offset; a good recording uploaded beside them
        # is unaffected
        st, g = d.upload(b"this is not a perf.data file at all, just text\n" * 10)
        check(st == 400 and "not a perf.data file" in g["error"],
              "garbage refused by its magic: %s %s" % (st, g))
        st, t = d.upload(data[: len(data) // 2])
        check(st == 202, "truncated accepted for parsing: %s" % st)
        st, ok = d.upload(good2)
        check(st == 202, "second good upload: %s" % st)
        for pid in (t["id"],):
            p = d.wait(pid)
            check(p["status"] == "failed", "bad upload %d ended %s" % (pid, p["status"]))
            check(p["error"] and "offset" in p["error"], "error names no offset: %r" %
                  p["error"])
            check("error_offset" in p, "error_offset missing")
        check(d.wait(ok["id"])["status"] == "ready", "good upload beside bad ones")
        st, h = d.json("GET", "/healthz")
        check(st == 200, "daemon unhealthy after bad uploads")

    # a perf.data directory (perf record --threads) uploaded as a tar
    dpath = os.path.join(work, "dir.data")
    try:
        perf_record(dpath, ["-e", "cpu-clock", "--threads"], BUSY)
    except subprocess.CalledProcessError:
        dpath = None
    if dpath and os.path.isdir(dpath):
        drecords, _ = perf_stats(dpath)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
            tf.add(dpath, arcname="perf.data")
        def upload_dir(d, tar, what):
            """the directory as a tar: ready, with perf's sample count"""
            st, r = d.upload(tar, headers={"Content-Type": "application/x-tar"})
            check(st == 202, "%s upload: %s %s" % (what, st, r))
            p = d.wait(r["id"])
            check(p["status"] == "ready", "%s profile: %s" % (what, p.get("error")))
            check(p["records"].get("SAMPLE") == drecords.get("SAMPLE"),
                  "%s SAMPLE: daemon %s, perf %s" % (what, p["records"].get("SAMPLE"),
                                                     drecords.get("SAMPLE")))

        with Daemon() as d:
            upload_dir(d, buf.getvalue(), "tar")
            # a tar that tries to escape its directory fails, nothing is written outside
            evil = io.BytesIO()
            with tarfile.open(fileobj=evil, mode="w", format=tarfile.USTAR_FORMAT) as tf:
                info = tarfile.TarInfo("../../escaped")
                info.size = 4
                tf.addfile(info, io.BytesIO(b"oops"))
            st, r = d.upload(evil.getvalue(), headers={"Content-Type": "application/x-tar"})
            check(st == 202, "evil tar accepted for parsing: %s" % st)
            p = d.wait(r["id"])
            check(p["status"] == "failed" and "unsafe" in p["error"], "evil tar: %s" % p)
            check(not os.path.exists(os.path.join(d.state, "escaped")), "tar escaped")
            # what `tar -C dir -cf - .` writes: entries "./", "./data", ...
            dot = subprocess.run(["tar", "-C", dpath, "-cf", "-", "."], check=True,
                                 stdout=subprocess.PIPE).stdout
            check(b"./data" in dot, "tar(1) names entries ./...")
            upload_dir(d, dot, "tar -C dir -cf - .")
            print("directory upload as tar: ok")
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

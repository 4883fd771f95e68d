#!/usr/bin/env python3
"""perfhubd: a real recording uploaded, parsed and stored; every answer
checked against perf's own (report --stats, script); duplicates, tags,
listing, collapsed/flamegraph totals, DELETE."""
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import (SKIP, BUSY, Daemon, check, have_perf_record, perf_record,
                              perf_script_comm_periods, perf_stats, tmpdir)


def with_dying_sample(src, dst):
    """A copy of src whose first sample has pid/tid -1 (a dying task), or
    None when perf report -D shows no sample to rewrite."""
    dump = subprocess.run(["perf", "report", "-D", "-i", src], capture_output=True,
                          text=True).stdout
    m = re.search(r"^(?:\d+ )?\d+ (0x[0-9a-f]+) \[(0x[0-9a-f]+)\]: PERF_RECORD_SAMPLE"
                  r"\([^)]*\): (\d+)/(\d+):", dump, re.M)
    if not m:
        return None
    off, size, pid, tid = int(m[1], 16), int(m[2], 16), int(m[3]), int(m[4])
    data = bytearray(open(src, "rb").read())
    at = data.find(struct.pack("<II", pid, tid), off + 8, off + size)
    if at < 0:
        return None
    data[at:at + 8] = b"\xff" * 8
    with open(dst, "wb") as f:
        f.write(data)
    return dst


def check_comm_totals(d, pid, comms, what):
    """/collapsed's totals by comm are perf script's samples and periods."""
    for weight, idx in (("samples", 0), ("period", 1)):
        st, _, body = d.request("GET", "/api/v1/profiles/%d/collapsed?weight=%s" %
                                (pid, weight))
        check(st == 200, "%scollapsed: %s" % (what, st))
        got = {}
        lines = body.decode().splitlines()
        check(lines == sorted(lines), "%scollapsed lines are not sorted" % what)
        for line in lines:
            stack, _, n = line.rpartition(" ")
            comm = stack.split(";", 1)[0]
            got[comm] = got.get(comm, 0) + int(n)
        want = {c: v[idx] for c, v in comms.items()}
        check(got == want, "%scollapsed %s by comm: %r, perf script %r" %
              (what, weight, got, want))


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    work = tmpdir("upload-")
    data = perf_record(os.path.join(work, "g.data"), ["-g", "-e", "cpu-clock"], BUSY)
    records, per_event = perf_stats(data)
    comms = perf_script_comm_periods(data)
    check(records.get("SAMPLE", 0) > 0, "recording has no samples")
    fixed = perf_record(os.path.join(work, "fixed.data"), ["-g", "-e", "cpu-clock", "-c", "250000"],
                        BUSY)

    # recordings of this machine, compared with perfhub collapse's
    with Daemon(args=["--local-uploads"]) as d:
        st, h = d.json("GET", "/healthz")
        check(st == 200 and h["status"] == "ok", "healthz: %s %s" % (st, h))

        st, r = d.upload(data, "?name=busy&tag=build=42&tag=host=ci")
        check(st == 202, "upload: want 202, got %s %s" % (st, r))
        check(r["status"] == "queued" and len(r["sha256"]) == 64, "upload answer %s" % r)
        pid = r["id"]
        import hashlib
        check(r["sha256"] == hashlib.sha256(open(data, "rb").read()).hexdigest(),
              "sha256 differs from the file's")

        p = d.wait(pid)
        check(p["status"] == "ready", "profile not ready: %s" % p.get("error"))
        check(p["name"] == "busy", "name %r" % p["name"])
        check(p["tags"] == {"build": "42", "host": "ci"}, "tags %r" % p["tags"])
        check(p["size"] == os.path.getsize(data), "size %r" % p["size"])
        check(isinstance(p["parse_ms"], int), "parse_ms %r" % p["parse_ms"])

        # record counts exactly as perf report --stats counts them
        for name, n in records.items():
            check(p["records"].get(name) == n,
                  "records[%s]: daemon %s, perf %s" % (name, p["records"].get(name), n))
        check(p["samples_per_event"] == per_event,
              "samples_per_event %r, perf %r" % (p["samples_per_event"], per_event))
        check(p["header"].get("hostname") == os.uname().nodename,
              "hostname %r" % p["header"].get("hostname"))

        # the same bytes again: 200 and the same id
        st, r2 = d.upload(data, "?name=again")
        check(st == 200 and r2["id"] == pid, "duplicate: %s %s" % (st, r2))

        # list, filters
        st, lst = d.json("GET", "/api/v1/profiles")
        check(st == 200 and lst["total"] == 1 and lst["profiles"][0]["id"] == pid,
              "list %r" % lst)
        st, lst = d.json("GET", "/api/v1/profiles?tag=build=42&status=ready")
        check(lst["total"] == 1, "tag filter %r" % lst)
        st, lst = d.json("GET", "/api/v1/profiles?tag=build=43")
        check(lst["total"] == 0, "tag filter mismatch %r" % lst)
        st, _ = d.json("GET", "/api/v1/profiles?status=nonsense")
        check(st == 400, "bad status filter: %s" % st)

        # collapsed: per-comm totals equal perf script's samples and periods
        check_comm_totals(d, pid, comms, "")

        # /collapsed is exactly what perfhub collapse prints for the file
        perfhub = os.path.join(os.environ.get("top_builddir", "."), "cli", "perfhub")
        for q, flags in (("", []), ("?weight=samples", ["--weight", "samples"]),
                         ("?with_pid=1&kernel=1", ["--pid", "--kernel"]),
                         ("?with_tid=1", ["--tid"]), ("?event=cpu-clock", ["--event", "cpu-clock"])):
            want = subprocess.run([perfhub, "collapse", data] + flags, capture_output=True,
                                  check=True).stdout
            st, _, body = d.request("GET", "/api/v1/profiles/%d/collapsed%s" % (pid, q))
            check(st == 200 and body == want, "collapsed%s differs from perfhub collapse %s:\n"
                  "daemon:\n%s\nperfhub:\n%s" % (q, " ".join(flags), body[:600].decode(),
                                                   want[:600].decode()))

        # flame graph: root value = all samples; children values sum up
        st, fg = d.json("GET", "/api/v1/profiles/%d/flamegraph?weight=samples" % pid)
        check(st == 200 and fg["name"] == "all", "flamegraph %s" % st)
        check(fg["value"] == records["SAMPLE"], "flamegraph root %d, perf %d" %
              (fg["value"], records["SAMPLE"]))
        check(sum(c["value"] for c in fg["children"]) == fg["value"], "children sum")

        # errors
        st, _ = d.json("GET", "/api/v1/profiles/999999")
        check(st == 404, "missing profile: %s" % st)
        st, _ = d.json("GET", "/api/v1/profiles/%d/collapsed?weight=bogus" % pid)
        check(st == 400, "bad weight: %s" % st)

        st, _, m = d.request("GET", "/metrics")
        check(st == 200, "metrics %s" % st)
        check(b"perfhub_parses_total 1" in m, "metrics parses:\n%s" % m.decode())

        # a dying task's sample (pid/tid -1) is dropped from folded answers
        # as perfhub collapse drops it, in the stored aggregate and in the
        # sample blocks a time range reads, and still counted as a sample
        dying = with_dying_sample(data, os.path.join(work, "dying.data"))
        check(dying is not None, "no sample found to rewrite to pid -1")
        if dying:
            st, r4 = d.upload(dying)
            p4 = d.wait(r4["id"])
            check(p4["status"] == "ready" and p4["samples"] == records["SAMPLE"],
                  "pid -1 copy: %s, %r samples" % (p4["status"], p4.get("samples")))
            want = subprocess.run([perfhub, "collapse", dying, "--weight", "samples"],
                                  capture_output=True, check=True).stdout
            check(sum(int(x.rpartition(b" ")[2]) for x in want.splitlines()) ==
                  records["SAMPLE"] - 1, "perfhub collapse kept the pid -1 sample")
            for q in ("", "&from_ns=1&to_ns=9223372036854775807"):
                st, _, body = d.request("GET", "/api/v1/profiles/%d/collapsed?weight=samples%s"
                                        % (r4["id"], q))
                check(st == 200 and body == want,
                      "pid -1 copy: collapsed%s differs from perfhub collapse" % q)
            st, fg4 = d.json("GET", "/api/v1/profiles/%d/flamegraph?weight=samples" % r4["id"])
            check(fg4["value"] == records["SAMPLE"] - 1,
                  "pid -1 copy: flamegraph root %d, samples %d" % (fg4["value"],
                                                                   records["SAMPLE"]))

        # a fixed period (record -c): no PERIOD in the samples, the event's
        # period weighs each, as perf script prints it
        st, rf = d.upload(fixed, "?name=fixed")
        check(st == 202 and d.wait(rf["id"])["status"] == "ready", "fixed-period upload")
        check_comm_totals(d, rf["id"], perf_script_comm_periods(fixed), "record -c: ")

        # DELETE removes the profile, its rows and its spool file
        spool = os.path.join(d.state, "spool", r["sha256"] + ".file")
        check(os.path.exists(spool), "spool file missing")
        st, _, _ = d.request("DELETE", "/api/v1/profiles/%d" % pid)
        check(st == 204, "delete: %s" % st)
        st, _ = d.json("GET", "/api/v1/profiles/%d" % pid)
        check(st == 404, "deleted profile still there: %s" % st)
        check(not os.path.exists(spool), "spool file left behind")
        st, _, _ = d.request("DELETE", "/api/v1/profiles/%d" % pid)
        check(st == 404, "second delete: %s" % st)
        # after a delete the same bytes are new again
        st, r3 = d.upload(data)
        check(st == 202 and r3["id"] != pid, "re-upload after delete: %s %s" % (st, r3))
        check(d.wait(r3["id"])["status"] == "ready", "re-upload not ready")

        # past its first 4 MiB an upload is hashed on a thread beside the
        # one receiving it, 1 MiB at a time: a body of an uneven size,
        # plain and gzip-encoded, still named by its own sha256 and
        # spooled whole
        import gzip
        with open(data, "rb") as f:
            big = f.read() + os.urandom(9 * 1024 * 1024 + 12345)
        want = hashlib.sha256(big).hexdigest()
        for name, body, hdr in (("plain", big, {}),
                                ("gzip", gzip.compress(big, 1), {"Content-Encoding": "gzip"})):
            st, rb = d.upload(body, "?name=big-" + name, hdr)
            check(st in (200, 202) and rb.get("sha256") == want,
                  "%d-byte %s upload: %s %s, want sha256 %s" % (len(big), name, st, rb, want))
            path = os.path.join(d.state, "spool", want + ".file")
            check(os.path.exists(path) and os.path.getsize(path) == len(big),
                  "%s upload: spool file %s" % (name, path))
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

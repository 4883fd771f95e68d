#!/usr/bin/env python3
"""A recording whose `perf record` was killed (-9) after it wrote data:
its header says data_size 0 and its feature table was never written.

- `perfhub inspect` reads the records to the end of the file: its record
  and per-event counts equal `perf report --stats` on a copy whose header
  is given the data size perf never wrote (perf itself cannot read the
  original); it warns that the recording is unfinished and decodes no
  feature section from bytes that are records; it exits 0, in text and
  --json.
- The same file cut inside its last record (perf killed while writing
  it): every whole record is recovered, the warning names the cut.
- perfhubd: the upload is ready with perf's sample count, and the profile
  object carries the warning.
Skips (77) where perf cannot record."""
import json
import os
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import (SKIP, Daemon, Failures, builddir, have_perf_record, perf_stats,
                              tmpdir)

PERFHUB = os.path.join(builddir(), "cli", "perfhub")
UNFINISHED = "perf record did not end this recording"
check = Failures()


def killed_recording(out):
    """perf record of a busy loop, killed with SIGKILL once the file holds
    data (a small buffer makes perf write often)."""
    p = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-m", "4", "-g",
                          "-o", out, "--", "sh", "-c", "while :; do :; done"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        time.sleep(0.2)
        if os.path.exists(out) and os.path.getsize(out) > 100000:
            break
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    return out


def with_data_size(src, dst, cut=0):
    """A copy of src (less its last `cut` bytes) whose header says the data
    runs to the end and that no features follow, as perf would have
    written it on a clean stop: perf's reading of the same records."""
    data = bytearray(open(src, "rb").read())
    if cut:
        del data[-cut:]
    off = struct.unpack_from("<Q", data, 40)[0]
    struct.pack_into("<Q", data, 48, len(data) - off)
    struct.pack_into("<4Q", data, 72, 0, 0, 0, 0)
    open(dst, "wb").write(data)
    return dst


def inspect_json(path):
    r = subprocess.run([PERFHUB, "inspect", "--json", path], capture_output=True, text=True,
                       timeout=120)
    return r.returncode, (json.loads(r.stdout) if r.returncode == 0 else None), r.stderr


def main():
    if not have_perf_record():
        print("SKIP: perf record does not work here")
        return SKIP
    work = tmpdir("unfinished-")
    killed = killed_recording(os.path.join(work, "killed.data"))
    head = open(killed, "rb").read(56)
    check(struct.unpack_from("<Q", head, 48)[0] == 0,
          "the killed recording's header has a data size (perf was not killed in time?)")
    records, per_event = perf_stats(with_data_size(killed, os.path.join(work, "sized.data")))
    check(records.get("SAMPLE", 0) > 0, "perf sees no samples in the killed recording")

    rc, rep, err = inspect_json(killed)
    check(rc == 0, "inspect --json exit %d: %s" % (rc, err[-300:]))
    if rep:
        check(rep["records"] == records, "records %r, perf %r" % (rep["records"], records))
        check(rep["samples_per_event"] == per_event, "samples per event %r, perf %r" %
              (rep["samples_per_event"], per_event))
        warns = rep.get("warnings", [])
        check(any(UNFINISHED in w for w in warns), "no unfinished warning in %r" % warns)
        check(not [w for w in warns if "feature" in w and UNFINISHED not in w],
              "feature warnings from bytes that are records: %r" % warns)
        check(not rep["header"].get("features"), "features decoded: %r" %
              list(rep["header"].get("features", {})))
    r = subprocess.run([PERFHUB, "inspect", killed], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and UNFINISHED in r.stdout and UNFINISHED in r.stderr,
          "inspect text: exit %d, warning in stdout %s, stderr %s" %
          (r.returncode, UNFINISHED in r.stdout, UNFINISHED in r.stderr))
    check(len(r.stderr.splitlines()) == 1, "inspect text warns %d times: %s" %
          (len(r.stderr.splitlines()), r.stderr[:400]))
    print("ok: inspect reads the killed recording as perf reads it sized: %d SAMPLE, %d records" %
          (records.get("SAMPLE", 0), sum(records.values())))

    # killed while writing its last record: the whole ones are recovered
    cut = os.path.join(work, "cut.data")
    data = open(killed, "rb").read()
    open(cut, "wb").write(data[:-3])
    rc, rep_cut, err = inspect_json(cut)
    check(rc == 0, "inspect of the cut file: exit %d %s" % (rc, err[-300:]))
    if rep and rep_cut:
        n, n_cut = sum(rep["records"].values()), sum(rep_cut["records"].values())
        check(n_cut == n - 1, "cut file: %d records, the whole file %d" % (n_cut, n))
        check(any("ends inside a record" in w and "%d whole records" % n_cut in w
                  for w in rep_cut.get("warnings", [])), "cut warning: %r" % rep_cut.get("warnings"))
        print("ok: cut inside its last record: %d whole records recovered" % n_cut)

    with Daemon() as d:
        st, r = d.upload(killed, "?name=killed")
        check(st == 202, "upload: %s %s" % (st, r))
        p = d.wait(r["id"])
        check(p["status"] == "ready", "profile %s: %s" % (p["status"], p.get("error")))
        check(p.get("samples_per_event") == per_event, "profile samples %r, perf %r" %
              (p.get("samples_per_event"), per_event))
        check(any(UNFINISHED in w for w in p.get("warnings", [])),
              "profile without the warning: %r" % p.get("warnings"))
        st, lst = d.json("GET", "/api/v1/profiles")
        check(any(UNFINISHED in w for w in lst["profiles"][0].get("warnings", [])),
              "the list's profile without the warning")
        print("ok: perfhubd: ready, %d samples, warning in the profile" % p.get("samples", 0))
    return check.status()


if __name__ == "__main__":
    sys.exit(main())

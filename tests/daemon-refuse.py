#!/usr/bin/env python3
"""Uploads perfhubd refuses at once, before a job exists:

- an empty body;
- a name of 100,000 characters (it broke the list page), and a name, tag
  key or tag value over its limit or holding a control character; a large
  body with such a name is refused before it is sent (Expect:
  100-continue), so none of it is read;
- a body that is not a perf.data file (or, sent as a tar, not a tar), by
  its first bytes: refused with 400 and nothing of it left in the spool.
Each answer is a 400 naming what is wrong; no profile appears. A valid
recording with a name and tags of the largest accepted sizes is taken."""
import json
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import (SKIP, BUSY, Daemon, Failures, have_perf_record, perf_record,
                              tmpdir)

check = Failures()


def q(**params):
    return "?" + urllib.parse.urlencode(params, doseq=True)


def refused(d, body, query, words, what, headers=None):
    """A 400 whose message holds one of `words`, and no profile."""
    before = d.json("GET", "/api/v1/profiles")[1]["total"]
    st, r = d.upload(body, query, headers)
    msg = (r or {}).get("error", "")
    check(st == 400 and any(w in msg for w in words), "%s: %s %r" % (what, st, r))
    after = d.json("GET", "/api/v1/profiles")[1]["total"]
    check(after == before, "%s: a profile was made" % what)
    return msg


def spool_files(d):
    out = []
    for root, _, files in os.walk(os.path.join(d.state, "spool")):
        out += [os.path.join(root, f) for f in files]
    return sorted(out)


def main():
    if not have_perf_record():
        print("SKIP: perf record does not work here")
        return SKIP
    work = tmpdir("refuse-")
    data = open(perf_record(os.path.join(work, "ok.data"), ["-e", "cpu-clock"], BUSY), "rb").read()
    big = data + b"\0" * (2 << 20)	# sent after Expect: 100-continue
    with Daemon() as d:
        spool0 = spool_files(d)
        print("empty body: %s" % refused(d, b"", "", ("perf.data", "empty"), "empty body"))
        msg = refused(d, big, q(name="n" * 100000), ("name",), "a 100,000-character name")
        print("long name: %s" % msg)
        for params, what in (({"name": "a\x1b[31mred"}, "escape in the name"),
                             ({"name": "line\nbreak"}, "newline in the name"),
                             ({"name": "x" * 257}, "a 257-byte name"),
                             ({"tag": "k\x07=v"}, "control character in a tag key"),
                             ({"tag": "k=v\x7fw"}, "DEL in a tag value"),
                             ({"tag": "k" * 129 + "=v"}, "a 129-byte tag key"),
                             ({"tag": "k=" + "v" * 257}, "a 257-byte tag value")):
            refused(d, data, q(**params), ("name", "tag"), what)
        for body, ctype, what in ((b"hello, not a recording\n" * 50000, None, "text"),
                                  (b"\x7fELF" + b"\0" * 100000, None, "an ELF file"),
                                  (b"PERFILE" + b"\0" * 10, None, "a near miss"),
                                  (data, "application/x-tar", "a perf.data sent as a tar")):
            headers = {"Content-Type": ctype} if ctype else None
            msg = refused(d, body, "", ("perf.data", "tar"), what, headers)
        print("not perf.data: %s" % msg)
        check(spool_files(d) == spool0, "refused bodies left files in the spool: %r" %
              sorted(set(spool_files(d)) - set(spool0)))
        # the largest accepted labels, UTF-8 included
        name = "é" * 128	# 256 bytes
        st, r = d.upload(data, q(name=name, tag=["k" * 128 + "=" + "v" * 256, "ü=ß"]))
        check(st == 202 and r["name"] == name, "the largest name: %s %r" % (st, r))
        p = d.wait(r["id"])
        check(p["status"] == "ready" and p["tags"] == {"k" * 128: "v" * 256, "ü": "ß"},
              "the largest labels: %s" % json.dumps(p.get("tags"))[:200])
    if not check.list:
        print("ok: empty, mislabeled and non-perf.data uploads refused with 400 before a job")
    return check.status()


if __name__ == "__main__":
    sys.exit(main())

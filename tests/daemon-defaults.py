#!/usr/bin/env python3
"""perfhubd's defaults and refusals on a two-event recording whose first
sample is a page fault (`perf record -e cpu-clock -e page-faults`):

- the default event of /flamegraph, /collapsed, /top, /timeline and
  /diff is cpu-clock, the first event in the recording's own order that has
  samples (perf report's), not the event of the first sample; /collapsed
  equals `perfhub collapse`;
- one weight default everywhere: period (/flamegraph, /collapsed, /top,
  /timeline, /diff agree with weight=period, and say so where they name it);
- an unknown event= answers 400 naming the events the profile has;
- an unknown parameter answers 400 naming it and the accepted ones, on
  every endpoint; an upload with one is refused before any job exists.
Skips (77) where perf cannot record."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import (SKIP, Daemon, builddir, check, have_perf_record, perf_record,
                              tmpdir)

WORKLOAD = ["sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"]


def leaves(tree, path=(), out=None):
    """{folded path: value} of a flame graph's leaves (value minus children)."""
    out = {} if out is None else out
    kids = tree.get("children", [])
    own = tree["value"] - sum(c["value"] for c in kids)
    if own:
        out[";".join(path)] = own
    for c in kids:
        leaves(c, path + (c["name"],), out)
    return out


def first_event(data):
    r = subprocess.run(["perf", "script", "-i", data, "-F", "event"], capture_output=True,
                       text=True, timeout=120)
    return r.stdout.split(":")[0].strip()


def get_json(d, path):
    st, _, body = d.request("GET", path)
    return st, (json.loads(body) if body.startswith(b"{") else body.decode())


def defaults(d, pid, data):
    base = "/api/v1/profiles/%d" % pid
    # the default is cpu-clock, with the period as weight
    for ep in ("flamegraph", "collapsed", "top", "timeline"):
        st, dflt = get_json(d, "%s/%s" % (base, ep))
        st2, named = get_json(d, "%s/%s?event=cpu-clock&weight=period" % (base, ep))
        check(st == 200 and st2 == 200, "%s: %s %s" % (ep, st, st2))
        check(dflt == named, "%s: the default answer differs from event=cpu-clock&weight=period"
              % ep)
        st3, faults = get_json(d, "%s/%s?event=page-faults&weight=period" % (base, ep))
        check(st3 == 200 and faults != dflt, "%s: page-faults gives the default's answer" % ep)
    st, top = get_json(d, base + "/top")
    check(top["weight"] == "period", "/top weight %r" % top["weight"])
    st, tl = get_json(d, base + "/timeline")
    check(tl["weight"] == "period" and tl["event"] == "cpu-clock", "/timeline names %r %r" %
          (tl.get("weight"), tl.get("event")))
    check(all(b["value"] == b["period"] for b in tl["buckets"]), "timeline values are not periods")
    st, fg = get_json(d, base + "/flamegraph")
    st, fgs = get_json(d, base + "/flamegraph?weight=samples")
    check(fg["value"] > fgs["value"], "flame graph default weighs by samples (%d, %d by samples)"
          % (fg["value"], fgs["value"]))
    st, diff = get_json(d, "/api/v1/diff?base=%d&target=%d" % (pid, pid))
    check(st == 200 and diff["base"] == fg["value"], "/diff default: %s %s" % (st, diff.get("base")))
    # perfhub collapse prints what /collapsed does
    cli = subprocess.run([os.path.join(builddir(), "cli", "perfhub"), "collapse", data],
                         capture_output=True, text=True, timeout=300).stdout
    st, collapsed = get_json(d, base + "/collapsed")
    check(cli == collapsed, "perfhub collapse and /collapsed differ")
    check(leaves(fg) == {";".join(l.rsplit(" ", 1)[0].split(";")): int(l.rsplit(" ", 1)[1])
                         for l in collapsed.splitlines()},
          "flame graph leaves differ from /collapsed")
    print("ok: every default is cpu-clock by period (flame graph %d, %d samples), as perfhub "
          "collapse" % (fg["value"], fgs["value"]))


def unknown_event(d, pid):
    base = "/api/v1/profiles/%d" % pid
    for path in (base + "/flamegraph?event=cycles", base + "/collapsed?event=cycles",
                 base + "/top?event=cycles", base + "/timeline?event=cycles",
                 "/api/v1/diff?base=%d&target=%d&event=cycles" % (pid, pid)):
        st, body = get_json(d, path)
        msg = body.get("error", "") if isinstance(body, dict) else body
        check(st == 400 and "cycles" in msg and "cpu-clock" in msg and "page-faults" in msg,
              "%s: %s %s" % (path, st, body))
    print("ok: an unknown event answers 400 naming the profile's events: %s" % msg)


def unknown_params(d, pid):
    base = "/api/v1/profiles/%d" % pid
    cases = [("GET", base + "/flamegraph?evnet=cpu-clock", "evnet", "max_nodes"),
             ("GET", base + "/collapsed?wieght=samples", "wieght", "weight"),
             ("GET", base + "/top?limt=3", "limt", "limit"),
             ("GET", base + "/timeline?bucket=20", "bucket", "bucket_ms"),
             ("GET", base + "/threads?pid=1", "pid", "none"),
             ("GET", base + "?full=1", "full", "none"),
             ("GET", "/api/v1/profiles?stauts=ready", "stauts", "status"),
             ("GET", "/api/v1/diff?base=%d&target=%d&x=1" % (pid, pid), "x", "target"),
             ("GET", "/api/v1/aggregate?groupby=comm", "groupby", "group_by"),
             ("DELETE", base + "?force=1", "force", "none")]
    for method, path, bad, listed in cases:
        st, _, body = d.request(method, path)
        msg = json.loads(body).get("error", "") if body.startswith(b"{") else ""
        check(st == 400 and "'%s'" % bad in msg and listed in msg,
              "%s %s: %s %s" % (method, path, st, body[:200]))
    st, p = d.json("GET", base)
    check(st == 200, "DELETE with an unknown parameter removed the profile")
    st, before = d.json("GET", "/api/v1/profiles")
    st, r = d.upload(b"PERFILE2" + b"\0" * 200, "?name=x&tags=a=b")
    check(st == 400 and "'tags'" in r["error"], "upload with tags=: %s %s" % (st, r))
    st, after = d.json("GET", "/api/v1/profiles")
    check(after["total"] == before["total"], "a refused upload made a profile")
    print("ok: unknown parameters answer 400 naming the accepted ones (%d endpoints)" %
          (len(cases) + 1))


def main():
    if not have_perf_record():
        print("SKIP: perf record does not work here")
        return SKIP
    work = tmpdir("defaults-")
    data = perf_record(os.path.join(work, "faults.data"),
                       ["-g", "-e", "cpu-clock", "-e", "page-faults"], WORKLOAD)
    check(first_event(data) == "page-faults",
          "the recording's first sample is %r, not a page fault" % first_event(data))
    # --local-uploads: symbolized from this machine's files, as perfhub
    # collapse reads them (an upload is otherwise symbolized by build-id only)
    with Daemon(args=["--local-uploads"]) as d:
        st, r = d.upload(data)
        check(st == 202, "upload: %s %s" % (st, r))
        p = d.wait(r["id"])
        check(p["status"] == "ready", "not ready: %s" % p.get("error"))
        check([e["name"] for e in p["events"]] == ["cpu-clock", "page-faults"],
              "events %r" % [e["name"] for e in p["events"]])
        defaults(d, r["id"], data)
        unknown_event(d, r["id"])
        unknown_params(d, r["id"])
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Questions about many recordings, against real ones: a workload recorded
several times per build (one build with a known regression: hash_rows does
four times its work; one uniformly slower), then selectors with every
operator, the merged flame graph, folded stacks, /top and timeline checked
against the sums of the single-profile answers, series against each
profile's /top, a series over profiles stored before summaries existed,
the ranked diff (the regression first and significant, the same build
not tripping a 5-point gate, a uniform slowdown visible per profile), and
bad parameters."""
import os
import sqlite3
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests", "stress"))
from perfhubd_harness import SKIP, Daemon, backend, check, have_perf_record, tmpdir  # noqa: E402
from stress_lib import with_hostname  # noqa: E402
from many_common import (collapsed, flat, q, record_runs, root, top_rows,  # noqa: E402
                         upload_runs)


def ids_of(d, sel, extra=""):
    st, r = d.json("GET", "/api/v1/profiles?q=%s%s" % (q(sel), extra))
    check(st == 200, "list %s: %s %r" % (sel, st, r))
    return [p["id"] for p in r["profiles"]], r["total"]


def test_selectors(d, ids):
    fast = sorted(ids[n] for n in ("fast1", "fast2", "fast3", "fast4"))
    slow = sorted(ids[n] for n in ("slow1", "slow2", "slow3"))
    got, total = ids_of(d, '{build="fast"}')
    check(sorted(got) == fast and total == 4, "= %r" % got)
    check(got == sorted(got, reverse=True), "newest first")
    got, _ = ids_of(d, '{build!="fast"}')
    check(sorted(got) == sorted(slow + [ids["uniform1"]]), "!= %r" % got)
    got, _ = ids_of(d, '{build=~"sl.*|uni.+"}')
    check(sorted(got) == sorted(slow + [ids["uniform1"]]), "=~ %r" % got)
    got, _ = ids_of(d, '{build!~"fast|slow"}')
    check(got == [ids["uniform1"]], "!~ %r" % got)
    got, _ = ids_of(d, '{build=~"fa"}')
    check(got == [], "=~ is anchored: %r" % got)
    got, _ = ids_of(d, '{branch="main", kind=""}')
    check(sorted(got) == fast[:3], "absent label is empty: %r" % got)
    got, _ = ids_of(d, '{name="slow2", id="%d"}' % ids["slow2"])
    check(got == [ids["slow2"]], "name and id: %r" % got)
    got, _ = ids_of(d, '{hostname=~".+"}')
    check(len(got) == len(ids), "hostname: %r" % got)
    got, total = ids_of(d, '{build="fast"}', "&limit=2")
    check(got == sorted(fast, reverse=True)[:2] and total == 4, "limit: %r %d" % (got, total))
    got, total = ids_of(d, '{build="fast"}', "&limit=2&offset=2")
    check(got == sorted(fast, reverse=True)[2:], "offset: %r" % got)
    got, _ = ids_of(d, '{build="fast"}', "&since=7d")
    check(len(got) == 4, "since 7d")
    got, _ = ids_of(d, '{build="fast"}', "&until=2001-01-01T00:00:00Z")
    check(got == [], "until in the past")
    # limit stays the page size there (0: just the total)
    st, r = d.json("GET", "/api/v1/profiles?limit=0&q=" + q('{build="fast"}'))
    check(st == 200 and r["profiles"] == [] and r["total"] == 4, "limit=0 %s %r" % (st, r))
    st, r = d.json("GET", "/api/v1/profiles?limit=0")
    check(st == 200 and r["total"] == len(ids), "limit=0 without q")
    # the old single tag still works, alone and with q
    st, r = d.json("GET", "/api/v1/profiles?tag=build=slow")
    check(sorted(p["id"] for p in r["profiles"]) == slow, "tag=")
    got, _ = ids_of(d, '{name=~"slow[12]"}', "&tag=build=slow")
    check(sorted(got) == slow[:2], "tag and q")
    # a malformed selector: 400 naming the position and what was expected
    st, r = d.json("GET", "/api/v1/profiles?q=" + q('{build="fast" name="x"}'))
    check(st == 400 and r["position"] == 15 and "expected ',' or '}'" in r["error"] and
          "position 15" in r["error"], "bad selector: %s %r" % (st, r))
    st, r = d.json("GET", "/api/v1/profiles?q=" + q('{build=~"(x"}'))
    check(st == 400 and "not closed" in r["error"], "bad regex: %r" % r)
    st, r = d.json("GET", "/api/v1/profiles?q=x&since=yesterday")
    check(st == 400 and "position 1" in r["error"], "bad q first: %r" % r)
    st, r = d.json("GET", "/api/v1/profiles?since=5x")
    check(st == 400 and "'since'" in r["error"], "bad since: %r" % r)


def test_merged(d, ids):
    slow = [ids[n] for n in ("slow1", "slow2", "slow3")]
    sel = q('{build="slow"}')
    # flame graph: every node the sum of the single graphs' nodes
    want = {}
    for pid in slow:
        for p, v in flat(root(d, pid)).items():
            want[p] = want.get(p, 0) + v
    st, fg = d.json("GET", "/api/v1/query/flamegraph?weight=samples&q=" + sel)
    check(st == 200 and fg["profiles"] == 3 and fg["matched"] == 3 and not fg["capped"],
          "merged flamegraph: %s %r" % (st, {k: v for k, v in fg.items() if k != "children"}))
    check(flat(fg) == want, "merged flame graph != sum of the single ones")
    # normalized: each profile weighs one
    st, nf = d.json("GET", "/api/v1/query/flamegraph?normalize=profile&q=" + sel)
    check(abs(nf["value"] - 3) < 1e-9 and nf["normalize"] == "profile", "normalized root")
    share = sum(top_rows(d, pid, "period")["hash_rows"]["self"] /
                root(d, pid, "period")["value"] for pid in slow)
    got = sum(v for p, v in flat(nf).items() if p[-1] == "hash_rows") - \
        sum(v for p, v in flat(nf).items() if len(p) > 1 and p[-2] == "hash_rows")
    check(abs(got - share) < 1e-6, "normalized hash_rows self %f, want %f" % (got, share))
    # limit: the newest profiles only
    st, l2 = d.json("GET", "/api/v1/query/flamegraph?weight=samples&limit=2&q=" + sel)
    check(l2["profiles"] == 2 and l2["value"] == root(d, slow[1])["value"] +
          root(d, slow[2])["value"], "limit=2")
    # folded stacks: the sum of the single ones, sorted
    want_c = {}
    for pid in slow:
        st, _, body = d.request("GET", "/api/v1/profiles/%d/collapsed" % pid)
        for k, v in collapsed(body.decode()).items():
            want_c[k] = want_c.get(k, 0) + v
    st, h, body = d.request("GET", "/api/v1/query/collapsed?q=" + sel)
    text = body.decode()
    check(st == 200 and collapsed(text) == want_c, "merged collapsed")
    lines = [line.rpartition(" ")[0] for line in text.splitlines()]
    check(lines == sorted(lines, key=lambda s: s.encode()), "collapsed order")
    check(h.get("X-Perfhub-Profiles") == "3", "profiles header %r" % h)
    # top: self and total summed
    st, tp = d.json("GET", "/api/v1/query/top?rows=100000&weight=samples&q=" + sel)
    check(st == 200 and tp["profiles"] == 3, "merged top")
    singles = [top_rows(d, pid) for pid in slow]
    for f in tp["functions"]:
        ws = sum(t[f["name"]]["self"] for t in singles if f["name"] in t)
        wt = sum(t[f["name"]]["total"] for t in singles if f["name"] in t)
        check(f["self"] == ws and f["total"] == wt, "top %s: %r" % (f["name"], f))
    check(tp["functions"][0]["name"] == "hash_rows", "top first %r" % tp["functions"][0])
    check(tp["total"] == sum(root(d, pid)["value"] for pid in slow), "top total")
    st, tn = d.json("GET", "/api/v1/query/top?normalize=profile&weight=samples&q=" + sel)
    h = [f for f in tn["functions"] if f["name"] == "hash_rows"][0]
    want_sh = sum(t["hash_rows"]["self"] / root(d, pid)["value"]
                  for t, pid in zip(singles, slow)) / 3 * 100
    check(abs(h["self_share"] - want_sh) < 1e-4, "normalized share %r %f" % (h, want_sh))
    # timeline: every sample once, in buckets since each profile's start
    st, tl = d.json("GET", "/api/v1/query/timeline?bucket_ms=50&q=" + sel)
    total = sum(root(d, pid)["value"] for pid in slow)
    check(st == 200 and sum(b["samples"] for b in tl["buckets"]) == total and
          tl["buckets"][0]["t_ns"] == 0 and tl["buckets"][0]["profiles"] == 3,
          "merged timeline %s" % st)
    # nothing matched: an empty answer, not an error
    st, e = d.json("GET", "/api/v1/query/flamegraph?q=" + q('{build="none"}'))
    check(st == 200 and e["value"] == 0 and e["profiles"] == 0, "empty merge %r" % e)
    # the aggregate takes q too
    st, ag = d.json("GET", "/api/v1/aggregate?group_by=symbol&limit=1&q=" + sel)
    check(st == 200 and ag["rows"][0]["key"] == "hash_rows" and ag["rows"][0]["profiles"] == 3,
          "aggregate q %r" % ag)


def weight_through(node, base):
    """The weight under the outermost frames of a flame graph in a DSO of
    that file name: every stack through the DSO counted once."""
    if os.path.basename(node.get("dso") or "") == base:
        return node["value"]
    return sum(weight_through(c, base) for c in node.get("children", []))


def test_series(d, ids, db_path):
    order = sorted(ids.values())
    st, s = d.json("GET", "/api/v1/series?function=hash_rows")
    check(st == 200 and [p["id"] for p in s["points"]] == order and s["pending"] == 0,
          "series oldest first")
    for p in s["points"]:
        t = top_rows(d, p["id"])["hash_rows"]
        want = 100.0 * t["self"] / root(d, p["id"])["value"]
        check(abs(p["value"] - want) < 1e-9, "self_share %r, want %f" % (p, want))
        check(p["tags"]["build"] and p["name"] and p["uploaded_at"].endswith("Z"), "point")
    st, s = d.json("GET", "/api/v1/series?function=hash_rows&metric=samples&q=" +
                   q('{build="slow"}'))
    for p in s["points"]:
        check(p["value"] == top_rows(d, p["id"])["hash_rows"]["total"], "samples")
    # a DSO by its file name: the weight of the stacks through it, as the
    # profile's own flame graph sums it (the program's start and exit in
    # the kernel and ld.so are outside it, more of them on a busy machine)
    st, s = d.json("GET", "/api/v1/series?dso=regress&metric=total_share")
    check(st == 200 and len(s["points"]) == len(ids), "dso series %s" % st)
    for p in s["points"]:
        fg = root(d, p["id"])
        want = 100.0 * weight_through(fg, "regress") / fg["value"]
        check(abs(p["value"] - want) < 1e-6 and p["value"] > 80,
              "dso by file name %r, want %f" % (p, want))
    st, s = d.json("GET", "/api/v1/series?comm=regress&metric=samples")
    check([p["value"] for p in s["points"]] ==
          [root(d, pid)["value"] for pid in order], "comm samples")
    st, e = d.json("GET", "/api/v1/series?function=hash_rows&event=cpu-clock")
    st2, a = d.json("GET", "/api/v1/series?function=hash_rows")
    check(st == 200 and [p["value"] for p in e["points"]] == [p["value"] for p in a["points"]],
          "event=cpu-clock is the default event")
    st, e = d.json("GET", "/api/v1/series?function=hash_rows&event=sched:sched_switch")
    check(st == 200 and e["points"] == [], "an event no profile has: no points")
    st, s = d.json("GET", "/api/v1/series?metric=samples&limit=3")
    check([p["id"] for p in s["points"]] == order[-3:], "limit: newest 3, oldest first")
    st, g = d.json("GET", "/api/v1/series?function=hash_rows&group_by=build")
    groups = {x["label"]: [p["id"] for p in x["points"]] for x in g["series"]}
    check(groups == {"fast": sorted(ids[n] for n in ("fast1", "fast2", "fast3", "fast4")),
                     "slow": sorted(ids[n] for n in ("slow1", "slow2", "slow3")),
                     "uniform": [ids["uniform1"]]}, "group_by %r" % groups)
    slow_mean = sum(p["value"] for x in g["series"] if x["label"] == "slow"
                    for p in x["points"]) / 3
    fast_mean = sum(p["value"] for x in g["series"] if x["label"] == "fast"
                    for p in x["points"]) / 4
    check(slow_mean > fast_mean + 15, "the regression shows in the series")
    if backend() != "sqlite":
        return  # what follows edits the SQLite file to remove summaries
    # a profile stored before summaries existed: made on first need
    db = sqlite3.connect(db_path, timeout=30)
    for t in ("summary_state", "summary_events", "summary_keys"):
        db.execute("DELETE FROM %s WHERE profile_id = ?" % t, (ids["fast2"],))
    db.commit()
    st, s = d.json("GET", "/api/v1/series?function=hash_rows")
    check(ids["fast2"] in [p["id"] for p in s["points"]], "backfilled point")
    n = db.execute("SELECT count(*) FROM summary_state WHERE profile_id = ?",
                   (ids["fast2"],)).fetchone()[0]
    check(n == 1, "summary stored on first need")
    db.close()
    check('msg="summaries made" profiles=1 reason="first series"' in d.read_log(), "logged")


def test_backfill(d, ids, db_path):
    """Summaries missing when perfhubd starts (a store from before them):
    the idle workers make them all, and say so once."""
    d.stop()
    db = sqlite3.connect(db_path, timeout=30)
    gone = [ids[n] for n in ("fast3", "slow1", "uniform1")]
    for t in ("summary_state", "summary_events", "summary_keys"):
        db.executemany("DELETE FROM %s WHERE profile_id = ?" % t, [(i,) for i in gone])
    db.commit()
    d.start()
    deadline = time.time() + 60
    while time.time() < deadline:
        n = db.execute("SELECT count(*) FROM summary_state").fetchone()[0]
        if n == len(ids):
            break
        time.sleep(0.2)
    check(n == len(ids), "the workers made the missing summaries: %d of %d" % (n, len(ids)))
    time.sleep(0.5)
    check('msg="summaries made" profiles=3 reason="stored before summaries"' in d.read_log(),
          "logged once")
    db.close()
    st, s = d.json("GET", "/api/v1/series?function=hash_rows")
    check(len(s["points"]) == len(ids) and s["pending"] == 0, "every point back")


def change(rows, fn):
    m = [r for r in rows if r["function"] == fn]
    return m[0] if m else None


def test_diff(d, ids):
    base, target = '{build="fast", kind!="again"}', '{build="slow"}'
    st, df = d.json("GET", "/api/v1/diff?weight=samples&base_q=%s&target_q=%s" % (q(base),
                                                                                 q(target)))
    check(st == 200, "diff %s %r" % (st, df))
    sm = df["summary"]
    check(sm["base_profiles"] == 3 and sm["target_profiles"] == 3 and sm["test"] == "welch-t",
          "summary %r" % sm)
    # the tree: each side the sum of its profiles'
    check(df["base"] == sum(root(d, ids[n])["value"] for n in ("fast1", "fast2", "fast3")) and
          df["target"] == sum(root(d, ids[n])["value"] for n in ("slow1", "slow2", "slow3")),
          "diff roots")
    reg, imp = df["regressions"][0], df["improvements"][0]
    check(reg["function"] == "hash_rows" and reg["significant"] is True and
          reg["p_value"] < 0.01, "regression first: %r" % reg)
    check(imp["function"] == "parse_rows" and imp["significant"] is True, "improvement %r" % imp)

    def mean_share(names, fn):
        return sum(100.0 * top_rows(d, ids[n])[fn]["self"] / root(d, ids[n])["value"]
                   for n in names) / len(names)
    bs = mean_share(("fast1", "fast2", "fast3"), "hash_rows")
    ts = mean_share(("slow1", "slow2", "slow3"), "hash_rows")
    check(abs(reg["base_self_share"] - bs) < 1e-5 and abs(reg["target_self_share"] - ts) < 1e-5
          and abs(reg["delta_self"] - (ts - bs)) < 1e-5, "shares %r (%f %f)" % (reg, bs, ts))
    check(reg["delta_self"] > 20, "hash_rows grew by %f points" % reg["delta_self"])
    check(reg["self_change_pct"] > 200, "four times the work: %r" % reg["self_change_pct"])
    check(reg["base_self_per_s"] > 0 and reg["target_self_per_s"] > 0, "per second")
    for key in ("dso", "base_total_share", "target_total_share", "delta_total"):
        check(key in reg, "field %s" % key)
    # rows, min_share
    st, df2 = d.json("GET", "/api/v1/diff?rows=1&min_share=10&base_q=%s&target_q=%s" %
                     (q(base), q(target)))
    check(len(df2["regressions"]) == 1 and len(df2["improvements"]) == 1, "rows=1")
    # ids still work, and the base may be a selector against one id
    st, di = d.json("GET", "/api/v1/diff?base=%d&target=%d" % (ids["fast1"], ids["slow1"]))
    check(st == 200 and di["summary"]["test"] == "two-proportion-z" and
          di["regressions"][0]["function"] == "hash_rows", "ids %r %r" % (di.get("summary"), di.get("regressions", [])[:2]))
    st, dm = d.json("GET", "/api/v1/diff?base_q=%s&target=%d" % (q('{build="fast"}'),
                                                                  ids["slow1"]))
    check(dm["summary"]["test"] == "prediction-t" and dm["summary"]["base_profiles"] == 4 and
          dm["regressions"][0]["function"] == "hash_rows", "selector vs id %r" % dm["summary"])
    # a profile on both sides counts as the target's
    st, do = d.json("GET", "/api/v1/diff?base_q=%s&target=%d" % (q('{build="fast"}'),
                                                                  ids["fast1"]))
    check(do["summary"]["base_profiles"] == 3, "overlap %r" % do["summary"])
    # the same build twice: nothing near a 5-point gate
    st, same = d.json("GET", "/api/v1/diff?base=%d&target=%d" % (ids["fast1"], ids["fast4"]))
    worst, fn = most_grown(same)
    check(worst < 5, "same build: %s grew %f points" % (fn, worst))
    # a uniform slowdown: shares stay, the work per profile doubles
    st, un = d.json("GET", "/api/v1/diff?weight=samples&base_q=%s&target_q=%s" %
                    (q(base), q('{build="uniform"}')))
    worst, fn = most_grown(un)
    check(worst < 5, "uniform: the share of %s grew %f points" % (fn, worst))
    check(50 < un["summary"]["total_change_pct"] < 200,
          "uniform slowdown per profile: %r" % un["summary"])
    h = change(un["regressions"] + un["improvements"], "hash_rows")
    check(h and h["self_change_pct"] > 50, "hash_rows per profile %r" % h)


def most_grown(diff):
    """(points, function) of the regression whose self or total share grew
    most; (0, "-") without one."""
    return max([(0, "-")] + [(max(r["delta_self"], r["delta_total"]), r["function"])
                             for r in diff["regressions"]])


def test_bad(d, ids):
    sel = q('{build="slow"}')
    for path, want in (
            ("/api/v1/diff?base=%d&base_q=%s&target=1" % (ids["fast1"], sel), 400),
            ("/api/v1/diff?base_q=%s" % sel, 400),
            ("/api/v1/diff?target_q=%s" % sel, 400),
            ("/api/v1/diff?base_q=%s&target_q=%s" % (q("{"), sel), 400),
            ("/api/v1/diff?base_q=%s&target=999999" % sel, 404),
            ("/api/v1/diff?base_q=%s&target_q=%s&alpha=2" % (sel, sel), 400),
            ("/api/v1/diff?base_q=%s&target_q=%s&min_share=x" % (sel, sel), 400),
            ("/api/v1/query/flamegraph?normalize=all", 400),
            ("/api/v1/query/flamegraph?limit=0", 400),
            ("/api/v1/query/collapsed?normalize=profile", 400),
            ("/api/v1/query/top?rows=0", 400),
            ("/api/v1/query/timeline?bucket_ms=0", 400),
            ("/api/v1/query/timeline?bucket_ms=1&q=" + sel, 200),
            ("/api/v1/query/nope", 404),
            ("/api/v1/series?function=a&dso=b", 400),
            ("/api/v1/series?metric=share", 400),
            ("/api/v1/series?group_by=", 400),
            ("/api/v1/series?q=" + q("{a=~\"(a+)+\"}"), 200),
            ("/api/v1/series?q=" + q("{a=~\"a++\"}"), 400)):
        st, r = d.json("GET", path)
        check(st == want and (want == 200 or "error" in r), "%s: %s %r" % (path, st, r))
    st, _ = d.json("POST", "/api/v1/series", b"x")
    check(st == 405, "POST series: %s" % st)


def test_odd_labels(d, paths):
    """A tag value that is not UTF-8 (JSON cannot carry it) is refused at
    the upload, naming it; a host of its own makes a series group."""
    with open(paths["fast1"], "rb") as f:
        data = with_hostname(f.read(), "odd-host")
    st, r = d.upload(data, "?name=odd&tag=g=%FF%FE")
    check(st == 400 and "UTF-8" in r.get("error", ""), "non-UTF-8 tag: %s %r" % (st, r))
    st, r = d.upload(data, "?name=odd&tag=g=odd")
    check(st == 202 and d.wait(r["id"])["status"] == "ready", "odd upload")
    st, ls = d.json("GET", "/api/v1/profiles?q=" + q('{name="odd"}'))
    check(st == 200 and ls["total"] == 1, "list: %s" % st)
    st, s = d.json("GET", "/api/v1/series?function=hash_rows&group_by=g&q=" + q('{name="odd"}'))
    check(st == 200 and s["series"][0]["label"] == "odd" and
          s["series"][0]["points"][0]["id"] == r["id"], "series grouped by it: %s %r" % (st, s))
    st, s = d.json("GET", "/api/v1/series?function=hash_rows&group_by=hostname")
    check(st == 200 and "odd-host" in [x["label"] for x in s["series"]], "by hostname")


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    work = tmpdir("many-")
    paths = record_runs(work)
    # recordings of this machine: symbolized from its files as perf does
    with Daemon(args=["--local-uploads"]) as d:
        ids = upload_runs(d, paths)
        test_selectors(d, ids)
        test_merged(d, ids)
        test_series(d, ids, os.path.join(d.state, "perfhub.db"))
        if backend() == "sqlite":  # it removes summaries from the SQLite file
            test_backfill(d, ids, os.path.join(d.state, "perfhub.db"))
        test_diff(d, ids)
        test_bad(d, ids)
        test_odd_labels(d, paths)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

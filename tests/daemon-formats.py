#!/usr/bin/env python3
"""A profile in the formats other tools read, checked with those tools:
/pprof read by `go tool pprof` (its totals and every function's flat and
cum equal /top, by samples and by period, with filters; comm/pid/tid
labels; the mappings' build-ids equal perf buildid-list's), /speedscope
checked against speedscope's JSON schema (tests/web/speedscope-check.js)
with weights that add up to /top's; /perf.data gives back the uploaded
bytes (a file, a tar); PATCH renames and re-tags with the write role
only; perfhub export, tag and rename do the same from the command line,
and perfhub export of the recording itself (offline, the engine in memory)
gives the same bytes as the export from the server. /query/pprof of several
profiles against their own /top and /collapsed?weight=offcpu, and perfhub
export SELECTOR against the API's merged answers."""
import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import (SKIP, BUSY, Daemon, builddir, check, have_perf_record,
                              perf_record, tmpdir)

SRC = os.environ.get("top_srcdir", ".")
WEB_TESTS = os.path.join(SRC, "tests", "web")


def go_pprof(path, *args):
    """{function: (flat, cum)} and the total, as `go tool pprof -top` shows them."""
    env = dict(os.environ, HOME=os.path.dirname(path))
    out = subprocess.run(["go", "tool", "pprof", "-top", "-nodefraction=0", "-edgefraction=0",
                          "-nodecount=1000000"] + list(args) + [path],
                         capture_output=True, text=True, timeout=300, env=env)
    check(out.returncode == 0, "go tool pprof: %s" % out.stderr)
    num = r"(\d+)(?:ns)?"
    m = re.search(r"Showing nodes accounting for %s, [\d.]+%% of %s total" % (num, num),
                  out.stdout)
    check(m, "no totals in:\n%s" % out.stdout)
    rows = {}
    for line in out.stdout.splitlines():
        r = re.match(r"^\s*%s\s+[\d.]+%%\s+[\d.]+%%\s+%s\s+[\d.]+%%\s+(.+)$" % (num, num), line)
        if r:
            rows[r.group(3)] = (int(r.group(1)), int(r.group(2)))
    return rows, int(m.group(2)), out.stdout


def top(d, pid, query):
    st, r = d.json("GET", "/api/v1/profiles/%d/top?limit=100000&%s" % (pid, query))
    check(st == 200, "top %s: %s %s" % (query, st, r))
    return {f["name"]: (f["self"], f["total"]) for f in r["functions"]}


def fetch(d, path, want=200):
    st, h, body = d.request("GET", path)
    check(st == want, "GET %s: %s %s" % (path, st, body[:300]))
    return h, body


def check_pprof(d, pid, work, query, weight):
    """The pprof answer under `query` against /top with the same filters."""
    h, body = fetch(d, "/api/v1/profiles/%d/pprof?%s" % (pid, query))
    check(body[:2] == b"\x1f\x8b", "pprof is not gzip")
    check("attachment" in h.get("Content-Disposition", ""), "pprof disposition: %s" % h)
    path = os.path.join(work, "p.pb.gz")
    with open(path, "wb") as f:
        f.write(body)
    index = "samples" if weight == "samples" else "1"
    rows, total, text = go_pprof(path, "-sample_index=" + index, "-unit=ns")
    want = top(d, pid, "%s&weight=%s" % (query, weight))
    check(rows == want, "pprof %s by %s:\n%s\n/top: %s" % (query, weight, text, want))
    check(total == sum(s for s, _ in want.values()),
          "pprof total %d, /top self sum %d" % (total, sum(s for s, _ in want.values())))
    return path


def check_labels_and_build_ids(pprof, recording, work):
    env = dict(os.environ, HOME=work)
    raw = subprocess.run(["go", "tool", "pprof", "-raw", pprof], capture_output=True, text=True,
                         timeout=300, env=env).stdout
    check(re.search(r"comm:\[\S+\]", raw) and re.search(r"pid:\[\d+\] tid:\[\d+\]", raw),
          "labels in:\n%s" % raw[:2000])
    check("samples/count" in raw.splitlines()[raw.splitlines().index("Samples:") + 1],
          "sample types:\n%s" % raw[:500])
    ids = subprocess.run(["perf", "buildid-list", "-i", recording], capture_output=True,
                         text=True, timeout=120).stdout
    perf_ids = {}
    for line in ids.splitlines():
        bid, _, p = line.partition(" ")
        perf_ids[p.strip()] = bid
    maps = re.findall(r"^\d+: 0x\w+/0x\w+/0x\w+ (\S+) ?([0-9a-f]*) ?\[FN\]", raw, re.M)
    check(maps, "no mappings:\n%s" % raw)
    with_ids = [(p, b) for p, b in maps if b]
    check(with_ids, "no mapping has a build-id: %s (perf: %s)" % (maps, perf_ids))
    for p, b in with_ids:
        if p in perf_ids:
            check(perf_ids[p] == b, "%s: build-id %s, perf says %s" % (p, b, perf_ids[p]))


def check_speedscope(d, pid, work):
    node = shutil.which("node")
    files = []
    for q, weight in (("weight=samples", "samples"), ("weight=period&group=comm", "period")):
        _, body = fetch(d, "/api/v1/profiles/%d/speedscope?%s" % (pid, q))
        doc = json.loads(body)
        check(doc["$schema"] == "https://www.speedscope.app/file-format-schema.json", "$schema")
        total = sum(sum(p["weights"]) for p in doc["profiles"])
        want = sum(s for s, _ in top(d, pid, "weight=" + weight).values())
        check(total == want, "speedscope %s: weights %d, /top %d" % (q, total, want))
        for p in doc["profiles"]:
            check(p["endValue"] == sum(p["weights"]) and
                  len(p["samples"]) == len(p["weights"]), "profile %s" % p["name"])
        path = os.path.join(work, "s%d.json" % len(files))
        with open(path, "wb") as f:
            f.write(body)
        files.append(path)
    st, r = d.json("GET", "/api/v1/profiles/%d/speedscope?group=pid" % pid)
    check(st == 400 and "group" in r["error"], "bad group: %s %s" % (st, r))
    if not node or not os.path.isdir(os.path.join(WEB_TESTS, "node_modules", "ajv")):
        raise AssertionError("the speedscope schema check needs node and `npm ci` in tests/web")
    out = subprocess.run([node, os.path.join(WEB_TESTS, "speedscope-check.js")] + files,
                         capture_output=True, text=True, timeout=120)
    check(out.returncode == 0, "speedscope schema:\n%s%s" % (out.stdout, out.stderr))
    print(out.stdout.strip())


def check_perf_data(d, pid, recording, work):
    h, body = fetch(d, "/api/v1/profiles/%d/perf.data" % pid)
    with open(recording, "rb") as f:
        check(body == f.read(), "perf.data: not the bytes uploaded")
    check(h.get("Content-Disposition") == 'attachment; filename="busy_loop.perf.data"',
          "disposition: %s" % h.get("Content-Disposition"))
    # a directory upload (a tar) comes back as the same tar
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        t.add(recording, arcname="data")
    tar = buf.getvalue()
    st, r = d.upload(tar, "", {"Content-Type": "application/x-tar",
                               "Authorization": "Bearer w-secret"})
    check(st == 202, "tar upload: %s %s" % (st, r))
    h, body = fetch(d, "/api/v1/profiles/%d/perf.data" % r["id"])
    check(body == tar and h.get("Content-Type") == "application/x-tar",
          "tar back: %s, %d bytes" % (h.get("Content-Type"), len(body)))
    check(h["Content-Disposition"].endswith('.perf.data.tar"'), "tar name: %s" % h)
    fetch(d, "/api/v1/profiles/999/perf.data", 404)


def patch(d, pid, body, token=None, raw=None):
    h = {"Content-Type": "application/json"}
    if token:
        h["Authorization"] = "Bearer " + token
    data = raw if raw is not None else json.dumps(body).encode()
    return d.json("PATCH", "/api/v1/profiles/%d" % pid, data, h)


def check_patch(d, pid):
    st, r = patch(d, pid, {"name": "renamed", "tags": {"branch": "main", "side": None}},
                  "w-secret")
    check(st == 200 and r["name"] == "renamed" and r["tags"] == {"branch": "main"},
          "patch: %s %s" % (st, r))
    st, r = patch(d, pid, {"tags": {"branch": "dev"}}, "w-secret")
    check(st == 200 and r["tags"] == {"branch": "dev"} and r["name"] == "renamed",
          "a key's value replaced: %s" % r)
    st, r = d.json("GET", "/api/v1/profiles?tag=branch=dev", headers={
        "Authorization": "Bearer r-secret"})
    check([p["id"] for p in r["profiles"]] == [pid], "list by the new tag: %s" % r)
    st, r = patch(d, pid, {"name": None}, "w-secret")
    check(st == 200 and r["name"] is None, "name removed: %s" % r)
    # refused, and nothing changed
    for body, raw, want in (({"name": "x"}, None, 401), ({"name": "x"}, "r", 403)):
        st, r = patch(d, pid, body, None if raw is None else "r-secret")
        check(st == want, "patch without write role: %s %s" % (st, r))
    for raw, what in ((b"not json", "JSON"), (b"[1]", "JSON object"), (b"{}", "nothing"),
                      (b'{"size": 1}', "unknown field"), (b'{"name": 7}', "'name'"),
                      (b'{"tags": {"a=b": "c"}}', "bad tag"), (b'{"tags": {"k": 1}}', "bad tag"),
                      (b'{"tags": []}', "'tags'"), (b'{"name": "a\\nb"}', "'name'")):
        st, r = patch(d, pid, None, "w-secret", raw)
        check(st == 400 and what in r["error"], "%r: %s %s" % (raw, st, r))
    st, r = patch(d, pid, None, "w-secret", b'{"name": "' + b"x" * 70000 + b'"}')
    check(st == 413, "large body: %s %s" % (st, r))
    st, r = patch(d, 999, {"name": "x"}, "w-secret")
    check(st == 404, "patch 999: %s" % st)
    st, r = d.json("GET", "/api/v1/profiles/%d" % pid, headers={"Authorization": "Bearer r-secret"})
    check(r["name"] is None and r["tags"] == {"branch": "dev"}, "after refusals: %s" % r)


def cli(*args):
    exe = os.path.join(builddir(), "cli", "perfhub")
    return subprocess.run([exe] + list(args), capture_output=True, text=True, timeout=120)


def check_cli(d, pid, work, tokfile):
    srv = ["--server", d.url, "--token-file", tokfile]
    out = os.path.join(work, "cli.pb.gz")
    r = cli("export", str(pid), "--format", "pprof", "-o", out, *srv)
    check(r.returncode == 0, "export pprof: %s" % r.stderr)
    _, body = fetch(d, "/api/v1/profiles/%d/pprof" % pid)
    with open(out, "rb") as f:
        got = f.read()
    check(gzip.decompress(got) == gzip.decompress(body), "export pprof: not /pprof's profile")
    r = cli("export", str(pid), "--format", "folded", "--weight", "samples", *srv)
    _, body = fetch(d, "/api/v1/profiles/%d/collapsed?weight=samples" % pid)
    check(r.returncode == 0 and r.stdout == body.decode(), "export folded: %s" % r.stderr)
    r = cli("export", str(pid), "--format", "json", "-o", os.path.join(work, "f.json"), *srv)
    check(r.returncode == 0 and json.load(open(os.path.join(work, "f.json")))["name"] == "all",
          "export json: %s" % r.stderr)
    r = cli("export", str(pid), "--format", "speedscope", "-o", os.path.join(work, "s.json"),
            "--group", "comm", *srv)
    check(r.returncode == 0 and "$schema" in json.load(open(os.path.join(work, "s.json"))),
          "export speedscope: %s" % r.stderr)
    missing = os.path.join(work, "missing.json")
    r = cli("export", "999", "--format", "json", "-o", missing, *srv)
    check(r.returncode == 1 and "404" in r.stderr and not os.path.exists(missing),
          "export 999: %s %s" % (r.returncode, r.stderr))
    r = cli("export", str(pid), "--format", "svg", *srv)
    check(r.returncode == 2, "export --format svg: %s" % r.returncode)
    r = cli("export", str(pid), "--format", "json", "--since", "1d", *srv)
    check(r.returncode == 2 and "selector" in r.stderr, "export ID --since: %s" % r.stderr)
    r = cli("tag", str(pid), "team=perf", "branch-", *srv)
    check(r.returncode == 0 and "team=perf" in r.stdout and "branch" not in r.stdout,
          "tag: %s %s" % (r.stdout, r.stderr))
    r = cli("rename", str(pid), "nightly run", *srv)
    check(r.returncode == 0 and "nightly run" in r.stdout, "rename: %s" % r.stderr)
    st, p = d.json("GET", "/api/v1/profiles/%d" % pid, headers={"Authorization": "Bearer r-secret"})
    check(p["name"] == "nightly run" and p["tags"] == {"team": "perf"}, "after cli: %s" % p)
    r = cli("tag", str(pid), "=bad", *srv)
    check(r.returncode == 2, "tag =bad: %s" % r.returncode)
    ro = os.path.join(work, "ro-token")
    with open(ro, "w") as f:
        f.write("r-secret\n")
    r = cli("rename", str(pid), "x", "--server", d.url, "--token-file", ro)
    check(r.returncode == 1 and "403" in r.stderr, "rename with a read token: %s" % r.stderr)


def collapsed_sum(d, path):
    _, body = fetch(d, path)
    return sum(int(line.rsplit(" ", 1)[1]) for line in body.decode().splitlines())


def raw_sections(path, work):
    """`go tool pprof -raw`: its sample types line and how many locations it lists."""
    env = dict(os.environ, HOME=work)
    out = subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True, text=True,
                         timeout=300, env=env)
    check(out.returncode == 0, "go tool pprof -raw: %s" % out.stderr)
    lines = out.stdout.splitlines()
    types = lines[lines.index("Samples:") + 1]
    at = lines.index("Locations")
    end = lines.index("Mappings") if "Mappings" in lines else len(lines)
    locs = [ln for ln in lines[at + 1:end] if re.match(r"^\s*\d+: 0x", ln)]
    return types, len(locs), out.stdout


def check_query_pprof(d, pid, work, tokfile):
    """GET /api/v1/query/pprof of several profiles (a perf recording and
    two with off-CPU time): go tool pprof's totals are the sums of each
    profile's /top, by samples and by period, and its offcpu sample type's
    total the sum of /collapsed?weight=offcpu; functions shared by the
    profiles are one location; perfhub export SELECTOR gives the same bytes."""
    auth = {"Authorization": "Bearer w-secret"}
    gen = os.path.join(builddir(), "tests", "views-gen")
    ids = [pid]
    for kind in ("switch", "offcpu"):
        path = os.path.join(work, kind + ".data")
        subprocess.run([gen, kind, path], check=True)
        st, r = d.upload(path, "?tag=set%%3Dq&name=%s" % kind, auth)
        check(st == 202 and d.wait(r["id"])["status"] == "ready", "upload %s: %s" % (kind, r))
        ids.append(r["id"])
    st, r = patch(d, pid, {"tags": {"set": "q"}}, "w-secret")
    check(st == 200, "tag the recording: %s %s" % (st, r))
    q = "q=%7Bset%3D%22q%22%7D"
    h, body = fetch(d, "/api/v1/query/pprof?" + q)
    check(body[:2] == b"\x1f\x8b", "query pprof is not gzip")
    check(h.get("X-Perfhub-Profiles") == "3" and h.get("X-Perfhub-Matched") == "3",
          "query pprof headers: %s" % h)
    path = os.path.join(work, "q.pb.gz")
    with open(path, "wb") as f:
        f.write(body)
    for weight, index in (("samples", "samples"), ("period", "1")):
        _, total, text = go_pprof(path, "-sample_index=" + index, "-unit=ns")
        want = sum(sum(s for s, _ in top(d, i, "weight=" + weight).values()) for i in ids)
        check(total == want, "query pprof %s total %d, the /top sums %d:\n%s"
              % (weight, total, want, text))
    _, total, text = go_pprof(path, "-sample_index=offcpu", "-unit=ns")
    want = sum(collapsed_sum(d, "/api/v1/profiles/%d/collapsed?weight=offcpu" % i)
               for i in ids[1:])
    check(want > 0 and total == want, "query pprof offcpu total %d, /collapsed %d:\n%s"
          % (total, want, text))
    types, nlocs, raw = raw_sections(path, work)
    check("samples/count" in types and "offcpu/nanoseconds" in types, "types: %s" % types)
    # each profile alone: the shared frames ([sleepy] in both generated
    # recordings) are one location in the merge
    single = 0
    for i in ids:
        one = os.path.join(work, "one-%d.pb.gz" % i)
        with open(one, "wb") as f:
            f.write(fetch(d, "/api/v1/profiles/%d/pprof" % i)[1])
        single += raw_sections(one, work)[1]
    check(0 < nlocs < single, "locations: merged %d, each alone %d" % (nlocs, single))
    # a profile's own /pprof has its off-CPU time too; weight=offcpu makes it the default
    _, one = fetch(d, "/api/v1/profiles/%d/pprof?weight=offcpu" % ids[1])
    with open(os.path.join(work, "one.pb.gz"), "wb") as f:
        f.write(one)
    _, total, text = go_pprof(os.path.join(work, "one.pb.gz"), "-unit=ns")
    check(total == collapsed_sum(d, "/api/v1/profiles/%d/collapsed?weight=offcpu" % ids[1]),
          "pprof weight=offcpu: default type total %d:\n%s" % (total, text))
    st, r = d.json("GET", "/api/v1/profiles/%d/pprof?weight=offcpu" % pid)
    check(st == 400 and "off-CPU" in r["error"], "offcpu without off-CPU time: %s %s" % (st, r))
    st, r = d.json("GET", "/api/v1/query/pprof?weight=offcpu&q=%%7Bid%%3D%%22%d%%22%%7D" % pid)
    check(st == 400 and "off-CPU" in r["error"], "query offcpu without any: %s %s" % (st, r))
    st, r = d.json("GET", "/api/v1/query/pprof?weight=wall&" + q)
    check(st == 400 and "weight" in r["error"], "query pprof wall: %s %s" % (st, r))
    st, r = d.json("GET", "/api/v1/query/pprof?q=%7Bset%3D")
    check(st == 400 and r.get("parameter") == "q", "bad selector: %s %s" % (st, r))
    h, body = fetch(d, "/api/v1/query/pprof?limit=1&" + q)
    check(h.get("X-Perfhub-Profiles") == "1" and h.get("X-Perfhub-Matched") == "3",
          "limit=1 headers: %s" % h)
    # speedscope under the off-CPU weights: nanoseconds, summing to /collapsed's
    for weight in ("offcpu", "wall"):
        _, body = fetch(d, "/api/v1/profiles/%d/speedscope?weight=%s" % (ids[2], weight))
        doc = json.loads(body)
        total = sum(sum(p["weights"]) for p in doc["profiles"])
        want = collapsed_sum(d, "/api/v1/profiles/%d/collapsed?weight=%s" % (ids[2], weight))
        check(total == want and all(p["unit"] == "nanoseconds" for p in doc["profiles"]),
              "speedscope %s: %d vs %d" % (weight, total, want))
    st, r = d.json("GET", "/api/v1/profiles/%d/speedscope?weight=offcpu" % pid)
    check(st == 400 and "off-CPU" in r["error"], "speedscope offcpu: %s %s" % (st, r))
    # the CLI: the API's bytes, the selector merged by the server
    srv = ["--server", d.url, "--token-file", tokfile]
    sel = '{set="q"}'
    for fmt, ep in (("pprof", "pprof"), ("folded", "collapsed"), ("json", "flamegraph")):
        out = os.path.join(work, "sel." + fmt)
        r = cli("export", sel, "--format", fmt, "-o", out, "--kernel", *srv)
        check(r.returncode == 0, "export SELECTOR %s: %s" % (fmt, r.stderr))
        _, body = fetch(d, "/api/v1/query/%s?%s&kernel=1" % (ep, q))
        got = open(out, "rb").read()
        if fmt == "pprof":
            got, body = gzip.decompress(got), gzip.decompress(body)
        check(got == body and got, "export SELECTOR %s: not the API's answer" % fmt)
    out = os.path.join(work, "sel-limit.pb.gz")
    r = cli("export", sel, "--format", "pprof", "--limit", "1", "-o", out, *srv)
    _, body = fetch(d, "/api/v1/query/pprof?limit=1&" + q)
    check(r.returncode == 0 and gzip.decompress(open(out, "rb").read()) == gzip.decompress(body),
          "export SELECTOR --limit: %s" % r.stderr)
    out = os.path.join(work, "sel.speedscope")
    r = cli("export", sel, "--format", "speedscope", "-o", out, *srv)
    check(r.returncode == 2 and "speedscope" in r.stderr and not os.path.exists(out),
          "export SELECTOR speedscope: %s %s" % (r.returncode, r.stderr))
    r = cli("export", "{set=", "--format", "json", *srv)
    check(r.returncode == 1 and "400" in r.stderr, "export bad SELECTOR: %s" % r.stderr)


def check_offline(d, pid, rec, work, tokfile):
    """perfhub export FILE (the engine in memory, no server) gives what
    perfhub export ID gives for the same recording, in every format and
    with filters."""
    srv = ["--server", d.url, "--token-file", tokfile]
    for fmt, extra in (("folded", []), ("folded", ["--weight", "samples", "--kernel"]),
                       ("json", []), ("json", ["--comm", "sh", "--weight", "samples"]),
                       ("pprof", []), ("pprof", ["--kernel"]),
                       ("speedscope", []), ("speedscope", ["--group", "comm"])):
        on, off = os.path.join(work, "on." + fmt), os.path.join(work, "off." + fmt)
        r = cli("export", str(pid), "--format", fmt, "-o", on, *(extra + srv))
        check(r.returncode == 0, "export %s %s: %s" % (fmt, extra, r.stderr))
        r = cli("export", rec, "--format", fmt, "-o", off, *extra)
        check(r.returncode == 0, "export FILE %s %s: %s" % (fmt, extra, r.stderr))
        a, b = open(on, "rb").read(), open(off, "rb").read()
        if fmt == "pprof":
            a, b = gzip.decompress(a), gzip.decompress(b)
        elif fmt == "speedscope":
            a, b = json.loads(a), json.loads(b)
            a.pop("name")
            b.pop("name")
        check(a == b and a, "export FILE differs from export ID: %s %s" % (fmt, extra))
    bad = os.path.join(work, "bad.data")
    with open(bad, "wb") as f:
        f.write(b"PERFILE2" + b"\0" * 40)
    out = os.path.join(work, "bad.json")
    r = cli("export", bad, "--format", "json", "-o", out)
    check(r.returncode == 1 and "bad.data" in r.stderr and not os.path.exists(out),
          "export of a broken file: %s %s" % (r.returncode, r.stderr))
    r = cli("export", rec, "--format", "json", "--weight", "cycles")
    check(r.returncode == 2, "export FILE --weight cycles: %s" % r.returncode)


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    if not shutil.which("go"):
        raise AssertionError("go (Debian's golang-go) is needed for `go tool pprof`")
    work = tmpdir("formats-")
    rec = perf_record(os.path.join(work, "busy.data"), ["-g", "-e", "cpu-clock", "-F", "4000"],
                      BUSY)
    tokfile = os.path.join(work, "tokens")
    with open(tokfile, "w") as f:
        f.write("w-secret write\nr-secret read\n")
    wtok = os.path.join(work, "w-token")
    with open(wtok, "w") as f:
        f.write("w-secret\n")
    # the offline export names frames from this machine's files as perf
    # would: so must the server, for the same bytes to come out
    with Daemon(args=["--token-file", tokfile, "--local-uploads"]) as d:
        st, r = d.upload(rec, "?name=busy%20loop", {"Authorization": "Bearer w-secret"})
        check(st == 202, "upload: %s %s" % (st, r))
        pid = r["id"]
        check(d.wait(pid)["status"] == "ready", "not ready")
        pp = check_pprof(d, pid, work, "", "samples")
        check_pprof(d, pid, work, "", "period")
        check_pprof(d, pid, work, "kernel=1", "samples")
        check_pprof(d, pid, work, "comm=sh", "period")
        check_labels_and_build_ids(pp, rec, work)
        st, r = d.json("GET", "/api/v1/profiles/%d/pprof?weight=x" % pid)
        check(st == 400, "bad weight: %s" % st)
        fetch(d, "/api/v1/profiles/999/pprof", 404)
        fetch(d, "/api/v1/profiles/999/speedscope", 404)
        check_speedscope(d, pid, work)
        check_perf_data(d, pid, rec, work)
        check_patch(d, pid)
        check_cli(d, pid, work, wtok)
        check_offline(d, pid, rec, work, wtok)
        check_query_pprof(d, pid, work, wtok)
    print("ok: pprof, speedscope, perf.data, PATCH and the CLI")
    return 0


if __name__ == "__main__":
    sys.exit(main())

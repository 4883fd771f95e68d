#!/usr/bin/env python3
"""docs/openapi.json against a running perfhubd (tests/web/openapi-check.js):
valid OpenAPI by a real validator (@apidevtools/swagger-parser); every
route of the server's routing table (tests/http-routes --list) described
and every described route a route; every example fits its schema; every
operation sent with its examples answers a documented success whose body
fits the documented schema. The server gets what examples cannot hold: two
ready recordings (ids 1 and 2, as the examples name them), a third to
delete, an ELF file and its build-id, a perf archive-style bundle, and a
function the first recording has (for /sandwich and /annotate)."""
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


def build_id(elf):
    out = subprocess.run(["readelf", "-n", elf], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    check(m, "%s has no build-id note" % elf)
    return m.group(1)


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    node = shutil.which("node")
    if not node or not os.path.isdir(os.path.join(WEB_TESTS, "node_modules",
                                                  "@apidevtools", "swagger-parser")):
        raise AssertionError("needs node and the test packages: cd tests/web && npm ci")
    # docs/api.md, the reference for a person, names every operation
    spec = json.load(open(os.path.join(SRC, "docs", "openapi.json")))
    md = open(os.path.join(SRC, "docs", "api.md"), encoding="utf-8").read()
    for path, item in spec["paths"].items():
        for m in ("get", "head", "put", "post", "patch", "delete"):
            if m in item:
                check("### `%s %s`" % (m.upper(), path) in md,
                      "docs/api.md has no section \"### `%s %s`\": describe it there as "
                      "docs/openapi.json does" % (m.upper(), path))
    work = tmpdir("openapi-")
    recs = [perf_record(os.path.join(work, "r%d.data" % i), ["-g", "-e", "cpu-clock"], BUSY)
            for i in range(3)]
    routes = os.path.join(work, "routes")
    with open(routes, "w") as f:
        subprocess.run([os.path.join(builddir(), "tests", "http-routes"), "--list"], stdout=f,
                       check=True)
    elf = os.path.join(builddir(), "tests", "http-routes")
    bundle = os.path.join(work, "bundle.tar")
    bid = build_id(elf)
    with tarfile.open(bundle, "w") as t:
        t.add(elf, arcname=".build-id/%s/%s" % (bid[:2], bid[2:]))
    with Daemon(args=["--web-root", os.path.join(SRC, "web")]) as d:
        ids = []
        for r in recs:
            st, ans = d.upload(r)
            check(st == 202, "upload: %s %s" % (st, ans))
            ids.append(ans["id"])
        check(ids == [1, 2, 3], "ids %s (the examples name 1 and 2)" % ids)
        for i in ids:
            check(d.wait(i)["status"] == "ready", "profile %d not ready" % i)
        # stored first, so GET and HEAD of its build-id answer 200 (the PUT
        # example then answers 200 "exists", as described)
        with open(elf, "rb") as f:
            st, _, body = d.request("PUT", "/api/v1/debuginfo/" + bid, f.read(),
                                    {"Content-Type": "application/octet-stream"})
        check(st == 201, "debuginfo PUT: %s %s" % (st, body))
        # a function profile 1 has, for /sandwich and /annotate
        st, top = d.json("GET", "/api/v1/profiles/1/top?limit=1")
        check(st == 200 and top["functions"], "top of profile 1: %s %r" % (st, top))
        fixture = os.path.join(work, "fixture.json")
        with open(fixture, "w") as f:
            json.dump({"recording": recs[0], "delete_id": 3, "elf": elf, "build_id": bid,
                       "archive": bundle, "function": top["functions"][0]["name"]}, f)
        out = subprocess.run([node, os.path.join(WEB_TESTS, "openapi-check.js"),
                              "--spec", os.path.join(SRC, "docs", "openapi.json"),
                              "--routes", routes, "--server", d.url, "--fixture", fixture],
                             capture_output=True, text=True, timeout=600)
        print(out.stdout + out.stderr)
        check(out.returncode == 0, "openapi-check failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

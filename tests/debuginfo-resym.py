#!/usr/bin/env python3
"""Symbols for a recording whose binary the server cannot see: a program
built and recorded now, then moved away. Uploaded alone its frames are
[program]; a PUT of the binary (or of a stripped binary plus its separate
debug file) re-symbolizes the profile in the background, and /collapsed
then agrees >= 99% with `perf script` folded while the binary was in place.
Refused: a rebuilt binary under the old key, a non-ELF file, an oversized
file, a PUT without a write token."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfhubd_harness import Daemon  # noqa: E402
from debuginfo_common import (Recording, build, build_id, check, collapsed,  # noqa: E402
                              finish, resymbolize, wait_resymbolized)

def put(d, bid, data, headers=None):
    """PUT /api/v1/debuginfo/BID: data is bytes or a file's path."""
    if not isinstance(data, bytes):
        with open(data, "rb") as f:
            data = f.read()
    return d.json("PUT", "/api/v1/debuginfo/" + bid, data,
                  dict({"Content-Type": "application/octet-stream"}, **(headers or {})))


def main():
    rec = Recording()
    os.environ["HOME"] = rec.daemon_env()
    bracket = "[%s]" % rec.name
    bid = rec.build_id
    tokens = os.path.join(rec.work, "tokens")
    with open(tokens, "w") as f:
        f.write("w-secret write\nr-secret read\n")
    auth = {"Authorization": "Bearer w-secret"}

    # 1. the whole binary, PUT by build-id
    # a recording of this machine: libraries the recording names no
    # build-id for are named from their files, as perf script names them
    with Daemon(args=["--max-debuginfo", "1000000", "--token-file", tokens,
                      "--local-uploads"]) as d:
        st, r = d.upload(rec.data, headers=auth)
        check(st == 202, "upload: %d %r" % (st, r))
        pid = r["id"]
        p = d.wait(pid)
        check(p["status"] == "ready", "parse: %r" % p)
        before = collapsed(d, pid)
        check(bracket in before, "without the binary the frames are %s" % bracket)
        check("dbg_leaf" not in before, "names without the binary")
        pct0 = p["symbolized_pct"]
        print("alone: symbolized_pct=%.1f, %d stacks with %s" %
              (pct0, sum(1 for l in before.splitlines() if bracket in l), bracket))

        st, r = d.json("POST", "/api/v1/debuginfo/missing",
                       b'{"build_ids": ["%s", "00ff00ff00ff00ff"]}' % bid.encode(), auth)
        check(st == 200 and sorted(r["missing"]) == sorted([bid, "00ff00ff00ff00ff"]),
              "missing before: %d %r" % (st, r))
        st, _, _ = d.request("HEAD", "/api/v1/debuginfo/" + bid)
        check(st == 404, "HEAD before: %d" % st)

        # refusals
        st, r = put(d, bid, rec.binary)
        check(st == 401, "PUT without a token: %d %r" % (st, r))
        st, r = put(d, bid, rec.binary, {"Authorization": "Bearer r-secret"})
        check(st == 403, "PUT with a read token: %d %r" % (st, r))
        st, r = put(d, bid, b"\x7fELF this is not an ELF file at all" * 10, auth)
        check(st == 400 and "ELF" in r.get("error", ""), "non-ELF: %d %r" % (st, r))
        with open(rec.binary, "rb") as f:
            head = f.read(200)
        st, r = put(d, bid, head, auth)
        check(st == 400 and "build-id" in r.get("error", ""), "truncated ELF: %d %r" % (st, r))
        st, r = put(d, bid, b"\0" * 1500000, auth)
        check(st == 413 and "limit" in r.get("error", ""), "oversized: %d %r" % (st, r))
        rebuilt = build(os.path.join(rec.work, "rebuilt"), variant=1)
        check(build_id(rebuilt) != bid, "the rebuilt binary has another build-id")
        st, r = put(d, bid, rebuilt, auth)
        check(st == 400 and "mismatch" in r.get("error", ""), "rebuilt: %d %r" % (st, r))
        st, r = put(d, "xyz", rec.binary, auth)
        check(st == 400, "bad key: %d %r" % (st, r))

        st, r = put(d, bid, rec.binary, auth)
        check(st == 201, "PUT the binary: %d %r" % (st, r))
        after = rec.check_named(d, pid, "resym binary", wait_resymbolized(d, pid, pct0))

        st, r = put(d, bid, rec.binary, auth)
        check(st == 200, "PUT again: %d %r" % (st, r))
        st, hdr, body = d.request("GET", "/api/v1/debuginfo/" + bid)
        with open(rec.binary, "rb") as f:
            check(st == 200 and body == f.read(), "GET returns the stored file: %d" % st)
        st, _, _ = d.request("HEAD", "/api/v1/debuginfo/" + bid)
        check(st == 200, "HEAD after: %d" % st)
        st, r = d.json("POST", "/api/v1/debuginfo/missing",
                       b'{"build_ids": ["%s"]}' % bid.upper().encode(), auth)
        check(st == 200 and r["missing"] == [], "missing after: %d %r" % (st, r))

        # a forced re-symbolization gives the same answer
        resymbolize(d, pid, auth)
        check(collapsed(d, pid) == after, "forced re-symbolization changed the stacks")
        st, r = d.json("POST", "/api/v1/profiles/999999/resymbolize", b"", auth)
        check(st == 404, "resymbolize unknown: %d" % st)

    # 2. a stripped binary plus its separate debug file
    stripped = os.path.join(rec.work, "stripped")
    debug = os.path.join(rec.work, "stripped.debug")
    subprocess.run(["objcopy", "--only-keep-debug", rec.binary, debug], check=True)
    subprocess.run(["strip", "--strip-all", "-o", stripped, rec.binary], check=True)
    check(build_id(stripped) == bid and build_id(debug) == bid, "strip keeps the build-id")
    with Daemon(args=["--local-uploads"]) as d:
        st, r = d.upload(rec.data)
        pid = r["id"]
        p = d.wait(pid)
        pct0 = p["symbolized_pct"]
        st, r = put(d, bid, stripped)
        check(st == 201, "PUT stripped: %d %r" % (st, r))
        st, r = d.json("POST", "/api/v1/debuginfo/missing", b'{"build_ids": ["%s"]}' %
                       bid.encode())
        check(r["missing"] == [bid], "a stripped binary has no symbols: %r" % r)
        st, r = put(d, bid, debug)
        check(st == 201, "PUT the debug file: %d %r" % (st, r))
        rec.check_named(d, pid, "resym debugfile", wait_resymbolized(d, pid, pct0))
        # the full binary replaces the stripped one; a stripped one never
        # replaces a binary with symbols
        st, r = put(d, bid, rec.binary)
        check(st == 201, "PUT the full binary over the stripped one: %d %r" % (st, r))
        st, r = put(d, bid, stripped)
        check(st == 200, "PUT the stripped binary again: %d %r" % (st, r))
        st, _, body = d.request("GET", "/api/v1/debuginfo/" + bid)
        with open(rec.binary, "rb") as f:
            check(st == 200 and body == f.read(), "GET gives the full binary: %d" % st)

    return finish(rec)


if __name__ == "__main__":
    sys.exit(main())

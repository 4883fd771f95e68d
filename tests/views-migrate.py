#!/usr/bin/env python3
"""A database of schema v3 (no off-CPU column, no leaf addresses, sample
blocks of the first format "PHSB", rows keyed by the profile's id) opens
in this perfhubd: it is migrated to the latest schema without parsing
anything again, its profiles answer as before (the aggregate and time
ranges from the old blocks), weight=offcpu says the profile has none and
/annotate has no addresses; parsed again (resymbolize) the same profile
has its off-CPU time and addresses."""
import os
import sqlite3
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import Daemon, builddir, check, tmpdir  # noqa: E402
from views_common import get, top_row  # noqa: E402


def zstd(args, data):
    return subprocess.run(["zstd", "-q", "-c"] + args, input=data, capture_output=True,
                          check=True, timeout=60).stdout


def to_v1(blob, nr):
    """A block of the current format as the first format wrote it: magic
    "PHSB", no offcpu column after weight."""
    raw = zstd(["-d"], blob)
    check(raw[:4] == b"PHS2" and struct.unpack("<I", raw[4:8])[0] == nr, "block format 2")
    cut = 8 + nr * (8 + 4 * 4 + 8 + 8)  # time, event/cpu/pid/tid, period, weight
    v1 = b"PHSB" + raw[4:cut] + raw[cut + 8 * nr:]
    # the frame states its size, as perfhubd's one-shot compression writes it
    return zstd(["-1", "--stream-size=%d" % len(v1)], v1)


def answers(d, pid):
    fg = get(d, pid, "flamegraph")
    rng = get(d, pid, "flamegraph", from_ns=1, to_ns=4000000)
    return fg, rng


def main():
    state = tmpdir("views-migrate-")
    data = os.path.join(state, "switch.data")
    subprocess.run([os.path.join(builddir(), "tests", "views-gen"), "switch", data], check=True)
    with Daemon(state=state) as d:
        st, up = d.upload(data)
        check(st == 202 and d.wait(up["id"])["status"] == "ready", "upload")
        pid = up["id"]
        before = answers(d, pid)
        offcpu = d.request("GET", "/api/v1/profiles/%d/collapsed?weight=offcpu" % pid)[2]
        check(offcpu == b"sleepy;[sleepy];[sleepy] 2500000\n", "off-CPU: %r" % offcpu)
    # back to v3, as perfhubd wrote it before this version
    db = sqlite3.connect(os.path.join(state, "perfhub.db"))
    for bid, blob, nr in db.execute("SELECT id, data, nr FROM sample_blocks").fetchall():
        db.execute("UPDATE sample_blocks SET data = ? WHERE id = ?", (to_v1(blob, nr), bid))
    db.execute("DROP TABLE leaf_addrs")
    # v3's aggregate, which schema 7 drops (a model sums the blocks)
    db.execute("CREATE TABLE sample_agg (profile_id INTEGER NOT NULL, event INTEGER NOT NULL,"
               " pid INTEGER NOT NULL, tid INTEGER NOT NULL, comm INTEGER NOT NULL,"
               " stack INTEGER NOT NULL, samples INTEGER NOT NULL, period INTEGER NOT NULL,"
               " first_seq INTEGER NOT NULL,"
               " PRIMARY KEY (profile_id, event, pid, tid, comm, stack)) WITHOUT ROWID")
    db.execute("ALTER TABLE profiles DROP COLUMN local")   # schema 6
    # v3 keyed a parse's rows by the profile's id (v5 gives each parse a key)
    for prof, key in db.execute("SELECT id, data_id FROM profiles").fetchall():
        for table in ("features", "events", "record_counts", "strings", "frames", "stacks",
                      "comms", "maps", "sample_blocks", "sample_agg", "frame_offsets"):
            db.execute("UPDATE %s SET profile_id = ? WHERE profile_id = ?" % table, (prof, key))
    for column in ("data_id", "pending_id", "warnings"):
        db.execute("ALTER TABLE profiles DROP COLUMN %s" % column)
    db.execute("DROP TABLE parse_keys")
    db.execute("DROP TABLE stale_rows")
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()
    with Daemon(state=state) as d:
        check(answers(d, pid) == before, "v3 profile answers differently after migration")
        st, j = d.json("GET", "/api/v1/profiles/%d/top?weight=offcpu" % pid)
        check(st == 400 and "no off-CPU time" in j["error"], "old profile: %d %r" % (st, j))
        a = get(d, pid, "annotate", function="[sleepy]")
        check(a["self"] == 0 and not a["instructions"], "no addresses kept then: %r" % a)
        # parsed again: what this version keeps
        st, _ = d.json("POST", "/api/v1/profiles/%d/resymbolize" % pid)
        check(st == 202, "resymbolize: %d" % st)
        deadline = time.time() + 120
        while time.time() < deadline:
            st, j = d.json("GET", "/api/v1/profiles/%d/top?weight=offcpu" % pid)
            if st == 200:
                break
            time.sleep(0.2)
        offcpu2 = d.request("GET", "/api/v1/profiles/%d/collapsed?weight=offcpu" % pid)[2]
        check(offcpu2 == offcpu, "off-CPU after a new parse: %r" % offcpu2)
        a = get(d, pid, "annotate", function="[sleepy]", weight="samples")
        want = top_row(d, pid, "[sleepy]", weight="samples")["self"]
        check(a["self"] == want == 3 and sum(i["samples"] for i in a["instructions"]) == 3,
              "addresses after a new parse: %r" % a)
        check(answers(d, pid) == before, "answers after a new parse")
    db = sqlite3.connect(os.path.join(state, "perfhub.db"))
    version = db.execute("PRAGMA user_version").fetchone()[0]
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    db.close()
    check(version == 7 and "sample_agg" not in tables, "schema v%d %r" % (version, sorted(tables)))
    print("ok: v3 database migrated to v7; first-format blocks read; a new parse adds the rest")
    subprocess.run(["rm", "-rf", state])
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""perfhubd opens a schema v2 database (one row per sample): the migration
queues its profiles again, they are parsed from the spool, and /collapsed
equals `perfhub collapse` of the file; a failed profile stays failed."""
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import SKIP, Daemon, check, corpus, tmpdir

# The v2 schema as perfhubd shipped it (user_version 2), trimmed to what
# this test fills in; the migration to v3 touches profiles, frames, samples.
V2_SCHEMA = """
CREATE TABLE profiles (id INTEGER PRIMARY KEY AUTOINCREMENT, sha256 TEXT NOT NULL UNIQUE,
 name TEXT, kind TEXT NOT NULL, spool_path TEXT NOT NULL, size INTEGER NOT NULL,
 uploaded_at INTEGER NOT NULL, status INTEGER NOT NULL, error TEXT, error_offset INTEGER,
 parse_ms INTEGER, hostname TEXT, first_ns INTEGER, last_ns INTEGER, nr_samples INTEGER,
 symbolized_pct REAL, header TEXT, events TEXT, records TEXT, samples_per_event TEXT,
 lost INTEGER);
CREATE INDEX profiles_status ON profiles(status, id);
CREATE INDEX profiles_host ON profiles(hostname);
CREATE TABLE tags (profile_id INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
 PRIMARY KEY (profile_id, key, value)) WITHOUT ROWID;
CREATE INDEX tags_kv ON tags(key, value);
CREATE TABLE features (profile_id INTEGER NOT NULL, name TEXT NOT NULL, json TEXT,
 PRIMARY KEY (profile_id, name)) WITHOUT ROWID;
CREATE TABLE events (profile_id INTEGER NOT NULL, idx INTEGER NOT NULL, name TEXT,
 type INTEGER, config INTEGER, sample_type INTEGER, period INTEGER, freq INTEGER,
 samples INTEGER, PRIMARY KEY (profile_id, idx)) WITHOUT ROWID;
CREATE TABLE record_counts (profile_id INTEGER NOT NULL, type TEXT NOT NULL,
 count INTEGER, PRIMARY KEY (profile_id, type)) WITHOUT ROWID;
CREATE TABLE strings (profile_id INTEGER NOT NULL, id INTEGER NOT NULL, text TEXT,
 PRIMARY KEY (profile_id, id)) WITHOUT ROWID;
CREATE TABLE frames (profile_id INTEGER NOT NULL, id INTEGER NOT NULL, name INTEGER,
 dso INTEGER, resolved INTEGER, PRIMARY KEY (profile_id, id)) WITHOUT ROWID;
CREATE TABLE stacks (profile_id INTEGER NOT NULL, id INTEGER NOT NULL,
 parent INTEGER NOT NULL, frame INTEGER NOT NULL, PRIMARY KEY (profile_id, id)) WITHOUT ROWID;
CREATE TABLE comms (profile_id INTEGER NOT NULL, seq INTEGER NOT NULL, pid INTEGER,
 tid INTEGER, time INTEGER, comm INTEGER, PRIMARY KEY (profile_id, seq)) WITHOUT ROWID;
CREATE TABLE maps (profile_id INTEGER NOT NULL, seq INTEGER NOT NULL, pid INTEGER,
 start INTEGER, len INTEGER, pgoff INTEGER, filename INTEGER, build_id TEXT,
 time INTEGER, PRIMARY KEY (profile_id, seq)) WITHOUT ROWID;
CREATE TABLE samples (profile_id INTEGER NOT NULL, seq INTEGER NOT NULL,
 event INTEGER NOT NULL, time INTEGER, cpu INTEGER, pid INTEGER, tid INTEGER,
 period INTEGER, weight INTEGER, stack INTEGER NOT NULL, comm INTEGER NOT NULL,
 PRIMARY KEY (profile_id, seq)) WITHOUT ROWID;
ALTER TABLE frames ADD COLUMN kernel INTEGER NOT NULL DEFAULT 0;
PRAGMA user_version = 2;
"""


def main():
    src = corpus("mstange-sleep.data")
    if not os.path.exists(src):
        print("no corpus at %s" % src)
        return SKIP
    state = tmpdir("migrate-")
    spool = os.path.join(state, "spool")
    os.makedirs(spool)
    data = open(src, "rb").read()
    sha = hashlib.sha256(data).hexdigest()
    path = os.path.join(spool, sha + ".data")
    shutil.copyfile(src, path)

    db = sqlite3.connect(os.path.join(state, "perfhub.db"))
    db.executescript(V2_SCHEMA)
    # a ready v2 profile: its one stale sample row and frame must not survive
    db.execute("INSERT INTO profiles (id, sha256, kind, spool_path, size, uploaded_at, status,"
               " nr_samples, hostname) VALUES (1, ?, 'file', ?, ?, 1700000000, 2, 1, 'old')",
               (sha, path, len(data)))
    db.execute("INSERT INTO strings VALUES (1, 1, 'stale')")
    db.execute("INSERT INTO frames VALUES (1, 1, 1, NULL, 1, 0)")
    db.execute("INSERT INTO stacks VALUES (1, 1, 0, 1)")
    db.execute("INSERT INTO samples VALUES (1, 1, 0, 5, 0, 1, 1, 1, 0, 1, 1)")
    db.execute("INSERT INTO tags VALUES (1, 'side', 'kept')")
    # a failed one stays failed
    db.execute("INSERT INTO profiles (id, sha256, kind, spool_path, size, uploaded_at, status,"
               " error) VALUES (2, 'f00d', 'file', '/nonexistent', 4, 1700000000, 3, 'bad')")
    db.commit()
    db.close()

    with Daemon(state=state) as d:
        p = d.wait(1, timeout=300)
        check(p["status"] == "ready", "migrated profile: %r" % p)
        check(p["tags"] == {"side": "kept"}, "tags %r" % p["tags"])
        st, q = d.json("GET", "/api/v1/profiles/2")
        check(st == 200 and q["status"] == "failed" and q["error"] == "bad", "failed %r" % q)
        perfhub = os.path.join(os.environ.get("top_builddir", "."), "cli", "perfhub")
        want = subprocess.run([perfhub, "collapse", path], capture_output=True,
                              timeout=300).stdout
        st, _, body = d.request("GET", "/api/v1/profiles/1/collapsed")
        check(st == 200 and body == want, "collapsed after migration differs:\n%s\n----\n%s" %
              (body[:400], want[:400]))
        check(b"stale" not in body, "stale v2 rows survived")
    db = sqlite3.connect(os.path.join(state, "perfhub.db"))
    version = db.execute("PRAGMA user_version").fetchone()[0]
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    db.close()
    check(version >= 3 and "samples" not in tables and "sample_blocks" in tables,
          "schema after migration: v%d %r" % (version, sorted(tables)))
    print("ok: v2 database migrated, profile parsed again from the spool")
    return 0


if __name__ == "__main__":
    sys.exit(main())

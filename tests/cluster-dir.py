#!/usr/bin/env python3
"""Three perfhubd nodes on one PostgreSQL and one spool directory: uploads
spread over the nodes, every answer the same from each and the same as one
SQLite node's; kill -9 of a node in the middle of a parse; PostgreSQL
restarted during ingest; a node started later takes work at once
(tests/cluster_lib.py)."""
import os
import sys

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
import cluster_lib  # noqa: E402

if __name__ == "__main__":
    sys.exit(cluster_lib.run("dir"))

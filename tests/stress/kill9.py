#!/usr/bin/env python3
"""The load of load.py with perfhubd killed by SIGKILL at random moments of
the upload phase and restarted each time (CI: 80 uploads, 8 kills;
STRESS_SIZE=full: 500 uploads, 20 kills). Every acknowledged upload must
end ready with perf's counts, none lost, none duplicated, the database
must pass PRAGMA integrity_check and no partial upload may stay in the
spool. Flags as load.py's."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import load  # noqa: E402

if __name__ == "__main__":
    full = os.environ.get("STRESS_SIZE") == "full"
    argv = sys.argv[1:]
    if "--uploads" not in argv:
        argv = ["--uploads", "500" if full else "80"] + argv
    sys.exit(load.main(argv, kills_default=20 if full else 8))

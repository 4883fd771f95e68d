#!/usr/bin/env python3
"""`make stress`: runs the reliability and load suite at full size
(STRESS_SIZE=full: 500 uploads from 32 clients while 16 query, the same
with 20 kill -9s, 1,000 hostile uploads, the fault and HTTP checks), each
script's output kept in a log, then prints one table of every figure.
Exit status 1 when any script failed."""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = ["upload-gzip.py", "load.py", "kill9.py", "faults.py", "hostile.py",
           "http-hostile.py", "slow-headers.py", "diff-memory.py",
           "local-files.py"]


def main():
    env = dict(os.environ, STRESS_SIZE="full")
    logdir = os.path.join(env.get("PERFHUB_TEST_TMP", "."), "stress-logs")
    os.makedirs(logdir, exist_ok=True)
    rows, failed = [], []      # (indent, figure, value); indent 0 = a script
    for name in SCRIPTS:
        t0 = time.time()
        log = os.path.join(logdir, name.replace(".py", ".log"))
        print("== %s (log %s)" % (name, log), flush=True)
        with open(log, "wb") as f:
            rc = subprocess.call([sys.executable, os.path.join(HERE, name)], stdout=f,
                                 stderr=subprocess.STDOUT, env=env)
        out = open(log, encoding="utf-8", errors="replace").read().splitlines()
        status = {0: "ok", 77: "skipped"}.get(rc, "FAILED (%d)" % rc)
        rows.append((0, "%s: %s in %.0f s" % (name, status, time.time() - t0), ""))
        if rc not in (0, 77):
            failed.append(name)
            print("\n".join(l for l in out if not l.startswith("ts="))[-3000:])
        section = None
        for line in out:
            if line.startswith("== "):
                section = line[3:]
                rows.append((1, section, ""))
            elif section and line.startswith("  ") and "  " in line.strip():
                k, v = line.strip().split("  ", 1)
                rows.append((2, k, v.strip()))
            elif line and rc == 0 and section is None and \
                    not line.startswith(("ts=", " ", "---", "Traceback")):
                rows.append((1, line.strip(), ""))
    w = max([len(k) for i, k, _ in rows if i == 2] or [0])
    print("\nperfhub reliability and load figures (%s, %d CPUs, load average %.1f at the end)"
          % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.cpu_count(),
             os.getloadavg()[0]))
    for i, k, v in rows:
        if i < 2:
            print("  " * i + k)
        else:
            print("    %-*s  %s" % (w, k, v))
    if failed:
        print("FAILED: %s" % ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

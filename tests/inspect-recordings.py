"""inspect-recordings.py - `perfhub inspect --json` against perf itself on
recordings made now by `perf record` in many modes.

For each recording the record counts and per-event sample counts must equal
`perf report --stats`, the header facts, events and feature set must equal
`perf report --header-only` field by field, and `lost` must equal the sum
of the LOST / LOST_SAMPLES records that `perf report -D` shows.
Skips (77) when perf cannot record here.
"""

import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
import perfcompare  # noqa: E402

SKIP = 77
builddir = os.environ.get("top_builddir", ".")
perfhub = os.path.join(builddir, "cli", "perfhub")
tmp = os.path.join(os.environ.get("PERFHUB_TEST_TMP", "/tmp"), "inspect-recordings")

# A short workload with many threads, forks and context switches.
WORK = ["perf", "bench", "sched", "messaging", "-g", "2", "-l", "40"]


def sh(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)


def record(name, args, work=WORK):
    out = os.path.join(tmp, name + ".data")
    p = sh(["perf", "record", "-q", "-o", out] + args + ["--"] + work)
    if p.returncode != 0:
        raise RuntimeError("perf record %s failed: %s" % (" ".join(args), p.stderr.decode()[-300:]))
    return out


def record_pipe(name, args, work=WORK):
    out = os.path.join(tmp, name + ".data")
    with open(out, "wb") as fh:
        p = subprocess.run(["perf", "record", "-q", "-o", "-"] + args + ["--"] + work,
                           stdout=fh, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise RuntimeError("perf record -o - failed: " + p.stderr.decode()[-300:])
    return out


def inject_file(name):
    src = record(name + "-src", ["-g"])
    out = os.path.join(tmp, name + ".data")
    p = sh(["perf", "inject", "-b", "-i", src, "-o", out])
    if p.returncode != 0:
        raise RuntimeError("perf inject -b failed: " + p.stderr.decode()[-300:])
    return out


def inject_pipe(name):
    out = os.path.join(tmp, name + ".data")
    rec = subprocess.Popen(["perf", "record", "-q", "-o", "-", "--"] + WORK,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    with open(out, "wb") as fh:
        inj = subprocess.run(["perf", "inject", "-b"], stdin=rec.stdout, stdout=fh,
                             stderr=subprocess.PIPE)
    rec.stdout.close()
    rec.wait()
    if inj.returncode != 0 or rec.returncode != 0:
        raise RuntimeError("perf record | perf inject -b failed: " + inj.stderr.decode()[-300:])
    return out


def stat_record(name):
    out = os.path.join(tmp, name + ".data")
    p = sh(["perf", "stat", "record", "-o", out, "--"] + WORK)
    if p.returncode != 0:
        raise RuntimeError("perf stat record failed: " + p.stderr.decode()[-300:])
    return out


SCENARIOS = [
    ("callgraph-fp", lambda n: record(n, ["-g"])),
    ("callgraph-dwarf", lambda n: record(n, ["--call-graph", "dwarf,4096", "-F", "300"])),
    ("zstd", lambda n: record(n, ["-z", "-g"])),
    ("zstd-level", lambda n: record(n, ["--compression-level=9", "-g"])),
    ("pipe", lambda n: record_pipe(n, ["-g"])),
    # perf 6.1 cannot decompress a pipe-mode -z stream ("Couldn't
    # decompress data"): its header is still compared.
    ("pipe-zstd", lambda n: record_pipe(n, ["-z"]), {"perf_reads_records": False}),
    ("threads-dir", lambda n: record(n, ["--threads", "-g"])),
    ("two-events", lambda n: record(n, ["-e", "cpu-clock", "-e", "task-clock"])),
    ("tracepoint", lambda n: record(n, ["-e", "sched:sched_switch", "-a"])),
    ("syscalls-tracepoint", lambda n: record(n, ["-e", "raw_syscalls:sys_enter", "-e", "cpu-clock"])),
    ("inject-b-file", inject_file),
    ("inject-b-pipe", inject_pipe),
    ("stat-record", stat_record),
    ("switch-namespaces", lambda n: record(n, ["--switch-events", "--namespaces", "-a"])),
    ("period-cpu-pid", lambda n: record(n, ["-c", "100000", "--sample-cpu", "-d", "-T"])),
]


def main():
    if not shutil.which("perf"):
        print("perf not installed")
        return SKIP
    if not os.access(perfhub, os.X_OK):
        print("no perfhub at " + perfhub)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    # Can perf record here at all?
    try:
        record("probe", [], ["true"])
    except RuntimeError as e:
        print("skip: " + str(e))
        return SKIP

    failed = 0
    print("1..%d" % len(SCENARIOS))
    for i, (name, make, *opts) in enumerate(SCENARIOS, 1):
        try:
            path = make(name)
            diffs = perfcompare.compare(perfhub, path, **(opts[0] if opts else {}))
        except RuntimeError as e:
            diffs = [str(e)]
        if diffs:
            failed += 1
            print("not ok %d - %s" % (i, name))
            for d in diffs:
                print("#   " + d)
        else:
            print("ok %d - %s" % (i, name))
    if not failed:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

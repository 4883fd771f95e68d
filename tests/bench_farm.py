"""bench_farm.py - the recordings a build farm makes: perfhub next to perf on
the same file, in one run (a benchmark: prints figures, is not a test).

    tests/bench-farm            (or: make bench)

Two recordings, each taken from the environment or made here:

  PERFHUB_BENCH_SYSWIDE=FILE  a system-wide `perf record -a -g` of a build;
      without it, this source tree is configured and built with make -j2
      under `perf record -a -g` (a few minutes)
  PERFHUB_BENCH_DWARF=FILE    a `--call-graph dwarf` recording through a
      library with full DWARF and many inlined functions; without it, a
      library of generated C (static inline helpers three deep in 96 units
      that call each other 32 deep, -O2 -g) is built and a program spending
      its time in it recorded

For each file, three parts (PERFHUB_BENCH_PARTS=collapse,parse,daemon
chooses; default all):

  collapse  `perfhub collapse` against `perf script` and against `perf
            script | stackcollapse` (tests/symbols/stackcollapse.py, or
            FlameGraph's Perl script when FLAMEGRAPH_DIR has it): wall time,
            CPU time of the whole process tree (perf stat's task-clock
            counts the addr2line processes perf script starts, which GNU
            time misses), peak RSS; the agreement of the folded outputs
  parse     `perfhub inspect --json` against `perf report --stats`
  daemon    perfhubd (a fresh state directory, its default workers): the
            upload until the profile is ready, perfhubd's CPU time and
            peak RSS, and the first flame graph asked right after ready;
            against `perf report --stdio` on the same file (wall, CPU, peak
            RSS)

Figures are taken under whatever load the machine has: the load average
is printed, and CPU time is the fairer comparison on a shared machine.
Each command of the collapse and parse parts runs PERFHUB_BENCH_RUNS
times (default 3), perf's as often as ours and in turn with ours, and
the run with the least wall time is shown: a single run of a one-second
command on a shared machine varied by a third here, in spells longer
than a run.

PERFHUB (default ./cli/perfhub; perfhubd is the build directory's),
PERFHUB_BENCH_DIR (recordings made here; default /tmp/perfhub-bench-farm).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfhubd_harness import Daemon, cpu_seconds, proc_status_kb  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("top_srcdir", os.path.dirname(HERE))
BUILDDIR = os.environ.get("top_builddir", ".")
PERFHUB = os.environ.get("PERFHUB", os.path.join(BUILDDIR, "cli", "perfhub"))
FOLD = os.path.join(SRCDIR, "tests", "symbols", "stackcollapse.py")
WORK = os.environ.get("PERFHUB_BENCH_DIR", "/tmp/perfhub-bench-farm")
TIME = "/usr/bin/time"

GOALS = {  # name: (min speed-up over perf script, min agreement %)
    "system-wide build": (10.0, 99.5),
    "dwarf, inlined library": (3.0, 97.0),
}
# the daemon on a system-wide build: upload to ready this many times faster
# than perf report --stdio (wall), the first flame graph after ready in at
# most this share of perf report's wall time
READY_GOAL = {"system-wide build": 5.0}
FLAME_GOAL = 1.0 / 50
PARTS = os.environ.get("PERFHUB_BENCH_PARTS", "collapse,parse,daemon").split(",")
RUNS = max(1, int(os.environ.get("PERFHUB_BENCH_RUNS", "3")))


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def measure(cmd, out_path):
    """Run cmd (a shell string) with stdout to out_path: (wall s, CPU s of
    the whole tree, peak RSS MB). The wall time is perf stat's own
    (duration_time: from its child's start to its end, GNU time and the
    shell included, ~2 ms), not this script's: starting perf stat from
    here added ~15 ms to every command (measured with `true`), which
    weighs on a command of a tenth of a second, and on neither tool."""
    stat = tempfile.mktemp(prefix="bench-farm-stat.")
    rss = tempfile.mktemp(prefix="bench-farm-rss.")
    full = ["perf", "stat", "-x,", "-e", "task-clock,duration_time", "-o", stat, "--",
            TIME, "-o", rss, "-f", "%M", "sh", "-c", cmd]
    t0 = time.perf_counter()
    with open(out_path, "wb") as out:
        subprocess.run(full, stdout=out, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    cpu = 0.0
    try:
        for line in open(stat):
            parts = line.split(",")
            if len(parts) > 2 and "task-clock" in parts[2]:
                cpu = float(parts[0]) / 1000.0
            elif len(parts) > 2 and "duration_time" in parts[2] and parts[0].isdigit():
                wall = int(parts[0]) / 1e9
        peak = int(open(rss).read().split()[-1]) / 1024.0
    except (OSError, ValueError, IndexError):
        peak = 0.0
    for p in (stat, rss):
        if os.path.exists(p):
            os.unlink(p)
    return wall, cpu, peak


def best_of_each(cmds):
    """measure() each (cmd, out_path) RUNS times, the commands in turn (a
    slow spell of a shared machine falls on every contender alike): for
    each, the figures of its run with the least wall time."""
    runs = [[] for _ in cmds]
    for _ in range(RUNS):
        for i, (cmd, out_path) in enumerate(cmds):
            runs[i].append(measure(cmd, out_path))
    return [min(r, key=lambda x: x[0]) for r in runs]


def agreement(ours, theirs):
    def load(p):
        d = {}
        for line in open(p, errors="replace"):
            k, _, v = line.rstrip("\n").rpartition(" ")
            if k:
                d[k] = d.get(k, 0) + int(v)
        return d
    a, b = load(ours), load(theirs)
    common = sum(min(v, b.get(k, 0)) for k, v in a.items())
    return 100.0 * common / max(sum(a.values()), sum(b.values()), 1)


def samples_of(path):
    out = subprocess.run(["perf", "report", "-i", path, "--stats"], capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        if "SAMPLE events:" in line:
            return int(line.split()[2])
    return 0


def record_syswide(dst):
    """configure and build this tree with make -j2 under perf record -a -g"""
    build = tempfile.mkdtemp(prefix="bench-farm-build.")
    cmd = "cd %s && %s/configure -q >/dev/null 2>&1 && make -s -j2 >/dev/null 2>&1" % (
        build, os.path.abspath(SRCDIR))
    print("recording a system-wide build of this tree (configure; make -j2) ...", flush=True)
    subprocess.run(["perf", "record", "-q", "-a", "-g", "-o", dst, "--", "sh", "-c", cmd],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    shutil.rmtree(build, ignore_errors=True)


def record_dwarf(dst):
    """a generated library of static inline helpers (-O2 -g), its units
    calling each other 32 deep, recorded with --call-graph dwarf"""
    d = tempfile.mkdtemp(prefix="bench-farm-inl.", dir=WORK)
    units, funcs, depth = 96, 32, 32
    for u in range(units):
        with open(os.path.join(d, "u%d.c" % u), "w") as f:
            f.write("#define I static inline __attribute__((always_inline))\n")
            f.write("unsigned long unit%d(unsigned long x, int n, int depth);\n" % ((u + 1) % units))
            for k in range(funcs):
                f.write("I unsigned long a%d_%d(unsigned long x) { for (int i = 0; i < 4; i++) "
                        "x = x * 2862933555777941757UL + %d; return x ^ (x >> 17); }\n" % (u, k, k))
            for k in range(funcs):
                f.write("I unsigned long b%d_%d(unsigned long x) { return a%d_%d(x) + a%d_%d(x + 1); }\n"
                        % (u, k, u, k, u, (k + 1) % funcs))
            for k in range(funcs):
                f.write("I unsigned long c%d_%d(unsigned long x) { return b%d_%d(x) ^ b%d_%d(x >> 1); }\n"
                        % (u, k, u, k, u, (k + 5) % funcs))
            f.write("unsigned long unit%d(unsigned long x, int n, int depth) {\n" % u)
            f.write("  for (int i = 0; i < n; i++) switch ((x + i) % " + str(funcs) + ") {\n")
            for k in range(funcs):
                f.write("  case %d: x = c%d_%d(x); break;\n" % (k, u, k))
            f.write("  }\n  return depth ? unit%d(x, n, depth - 1) + 1 : x; }\n" % ((u + 1) % units))
    with open(os.path.join(d, "main.c"), "w") as f:
        f.write("#include <stdio.h>\n#include <time.h>\n")
        f.write("unsigned long unit0(unsigned long, int, int);\n")
        f.write("int main(void) { unsigned long x = 1; clock_t end = clock() + 6 * CLOCKS_PER_SEC;\n"
                "  while (clock() < end) x = unit0(x, 200, %d);\n"
                "  printf(\"%%lu\\n\", x & 1); return 0; }\n" % depth)
    srcs = " ".join("u%d.c" % u for u in range(units))
    print("building a library of generated inlined helpers (-O2 -g) ...", flush=True)
    subprocess.run("cd %s && cc -O2 -g -shared -fPIC -o libgen.so %s && "
                   "cc -O2 -g -o genmain main.c -L. -lgen -Wl,-rpath,%s" % (d, srcs, d),
                   shell=True, check=True)
    info = subprocess.run(["readelf", "-wi", os.path.join(d, "libgen.so")], capture_output=True,
                          text=True).stdout
    print("library: %d inlined subroutines" % info.count("DW_TAG_inlined_subroutine"))
    subprocess.run(["perf", "record", "-q", "--call-graph", "dwarf", "-o", dst, "--",
                    os.path.join(d, "genmain")], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)


def bench_daemon(name, path, tmp):
    """upload to ready and the first flame graph, beside perf report --stdio"""
    wall_r, cpu_r, rss_r = measure("perf report --stdio -i '%s'" % path, os.path.join(tmp, "r"))
    d = Daemon(state=tempfile.mkdtemp(prefix="bench-farm-d."), workers=os.cpu_count() or 1)
    try:
        with d:
            cpu0 = cpu_seconds(d.proc.pid)
            t0 = time.perf_counter()
            st, r = d.upload(path)
            if st != 202:
                print("  perfhubd: upload answered %s %s" % (st, r))
                return
            while True:  # ready is noticed within 5 ms
                st, p = d.json("GET", "/api/v1/profiles/%d" % r["id"])
                if p["status"] in ("ready", "failed"):
                    break
                time.sleep(0.005)
            ready = time.perf_counter() - t0
            cpu = cpu_seconds(d.proc.pid) - cpu0
            if p["status"] != "ready":
                print("  perfhubd: the parse failed: %s" % p.get("error"))
                return
            t1 = time.perf_counter()
            st, _, body = d.request("GET", "/api/v1/profiles/%d/flamegraph" % r["id"], timeout=600)
            flame = time.perf_counter() - t1
            rss = proc_status_kb(d.proc.pid, "VmHWM") / 1024.0
    finally:
        shutil.rmtree(d.state, ignore_errors=True)
    print("  %-28s %8.2f s wall %8.2f s CPU  peak RSS %7.1f MB (parse_ms %d)" % (
        "perfhubd upload to ready", ready, cpu, rss, p["parse_ms"]))
    print("  %-28s %8.2f s wall %8.2f s CPU  peak RSS %7.1f MB" % (
        "perf report --stdio", wall_r, cpu_r, rss_r))
    print("  first flame graph after ready: %.0f ms (%d, %.1f MB) = 1/%.0f of perf report's "
          "wall time" % (flame * 1000, st, len(body) / 1e6, wall_r / flame))
    print("  upload to ready: %.1fx faster than perf report --stdio in wall time, %.1fx in CPU "
          "time; peak RSS %.2f of perf report's" % (wall_r / ready, cpu_r / cpu if cpu else 0,
                                                     rss / rss_r if rss_r else 0))
    goal = READY_GOAL.get(name)
    if goal:
        print("  goal (upload to ready >= %.0fx perf report --stdio, first flame graph <= 1/%.0f "
              "of it): %s" % (goal, 1 / FLAME_GOAL,
                              "met" if wall_r / ready >= goal and flame <= FLAME_GOAL * wall_r
                              else "NOT met"))


def bench(name, path):
    size = os.path.getsize(path)
    n = samples_of(path)
    print("\n== %s: %s, %.1f MB, %d samples; best of %d runs; load average %s" % (
        name, path, size / 1e6, n, RUNS, loadavg()))
    with open(path, "rb") as f:  # in the page cache for every contender alike
        while f.read(1 << 24):
            pass
    tmp = tempfile.mkdtemp(prefix="bench-farm-out.")
    if "collapse" in PARTS:
        bench_collapse(name, path, n, tmp)
    if "parse" in PARTS:
        bench_parse(path, size, tmp)
    if "daemon" in PARTS:
        bench_daemon(name, path, tmp)
    print("  load average after: %s" % loadavg())
    shutil.rmtree(tmp, ignore_errors=True)


def bench_collapse(name, path, n, tmp):
    ours, script, pipe = (os.path.join(tmp, x) for x in ("ours", "script", "pipe"))
    flame = os.environ.get("FLAMEGRAPH_DIR", "")
    if flame and os.access(os.path.join(flame, "stackcollapse-perf.pl"), os.X_OK):
        folder = os.path.join(flame, "stackcollapse-perf.pl")
    else:
        folder = "python3 '%s' fold" % FOLD
    rows = list(zip(("perfhub collapse", "perf script", "perf script | stackcollapse"),
                    best_of_each([("'%s' collapse '%s'" % (PERFHUB, path), ours),
                                  ("perf script -i '%s'" % path, script),
                                  ("perf script -i '%s' | %s" % (path, folder), pipe)])))
    for label, (wall, cpu, rss) in rows:
        print("  %-28s %8.2f s wall %8.2f s CPU %10.0f samples/s (CPU)  peak RSS %7.1f MB" % (
            label, wall, cpu, n / cpu if cpu else 0, rss))
    (w0, c0, r0), (w1, c1, r1), (w2, c2, _) = (r[1] for r in rows)
    agree = agreement(ours, pipe)
    print("  speed-up over perf script: %.1fx wall, %.1fx CPU; over the pipeline: %.1fx wall, "
          "%.1fx CPU" % (w1 / w0, c1 / c0 if c0 else 0, w2 / w0, c2 / c0 if c0 else 0))
    print("  agreement with perf script | stackcollapse: %.3f%% of the weight; peak RSS %.2f of "
          "perf script's" % (agree, r0 / r1 if r1 else 0))
    goal = GOALS.get(name)
    if goal:
        met = min(w1 / w0, c1 / c0 if c0 else 0) >= goal[0] and agree >= goal[1]
        print("  goal (>= %.0fx perf script in wall and CPU time, agreement >= %.1f%%): %s" % (
            goal[0], goal[1], "met" if met else "NOT met"))


def bench_parse(path, size, tmp):
    inspect, stats = best_of_each([("'%s' inspect --json '%s'" % (PERFHUB, path), os.path.join(tmp, "i")),
                                   ("perf report --stats -i '%s'" % path, os.path.join(tmp, "s"))])
    print("  parse: perfhub inspect %.2f s wall (%.0f MB/s), %.2f s CPU (%.0f MB/s), peak RSS "
          "%.1f MB; perf report --stats %.2f s wall, %.2f s CPU (%.1fx), %.1f MB" % (
              inspect[0], size / 1e6 / inspect[0], inspect[1], size / 1e6 / inspect[1] if inspect[1] else 0,
              inspect[2], stats[0], stats[1], stats[0] / inspect[0], stats[2]))


def main():
    if not os.access(PERFHUB, os.X_OK):
        print("no %s: run from the build directory (make bench)" % PERFHUB)
        return 1
    if subprocess.run(["perf", "record", "-q", "-o", "/dev/null", "true"],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
        print("perf record does not work here: nothing to measure")
        return 0
    os.makedirs(WORK, exist_ok=True)
    syswide = os.environ.get("PERFHUB_BENCH_SYSWIDE")
    if not syswide:
        syswide = os.path.join(WORK, "syswide-build.data")
        if not os.path.exists(syswide):
            record_syswide(syswide)
    dwarf = os.environ.get("PERFHUB_BENCH_DWARF")
    if not dwarf:
        dwarf = os.path.join(WORK, "dwarf-inlines.data")
        if not os.path.exists(dwarf):
            record_dwarf(dwarf)
    bench("system-wide build", syswide)
    bench("dwarf, inlined library", dwarf)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""bench_parse.py - how fast `perfhub inspect` parses, next to perf.

    tests/bench-parse [FILE]     (or: make bench)

With FILE: measures that file. Without: records a realistic busy-system
profile (cpu-clock -g at 10 kHz on all CPUs plus sched_switch with
callchains, during a messaging workload), repeats its data section until
the file holds >= 200 MB of records (perf.data allows it: the same records,
ids and attrs, the feature sections moved behind), and measures that; then
records the same workload with -z and measures the zstd file.

Prints for each file: wall time (best of 3, from page cache), MB/s and
records/s of `perfhub inspect --json` (which decodes every sample field),
the wall time of `perf report --stats` and of `perf script` (extrapolated
from a time slice when the whole file would take long; the output says so),
the ratios, and the peak RSS of each.

Environment: PERFHUB (the perfhub binary; default ./cli/perfhub),
PERFHUB_BENCH_DIR (where recordings go; default /tmp/perfhub-bench),
PERFHUB_BENCH_MB (target size; default 200).
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import time

GOAL_MBS_PLAIN = 1000.0
GOAL_MBS_ZSTD = 500.0
GOAL_RSS_MB = 64.0
# perf script on a whole file beyond this many MB is extrapolated from a slice
SCRIPT_FULL_MAX_MB = 40.0

MB = 1e6


def run_measured(cmd, stdout=subprocess.DEVNULL):
    """Run cmd; return (exit status, wall seconds, peak RSS in MB)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, wall, ru.ru_maxrss / 1024.0


def input_bytes(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path)
                   if os.path.isfile(os.path.join(path, f)))
    return os.path.getsize(path)


def warm(path):
    """Read the file(s) once so that every run measures from page cache."""
    paths = [os.path.join(path, f) for f in os.listdir(path)] if os.path.isdir(path) else [path]
    for p in paths:
        if os.path.isfile(p):
            with open(p, "rb") as fh:
                while fh.read(1 << 24):
                    pass


def record(out, extra, seconds_hint):
    cmd = ["perf", "record", "-q", "-o", out, "-a", "-g", "-m", "2048",
           "-e", "cpu-clock", "-F", "10000", "-e", "sched:sched_switch"] + extra + [
           "--", "perf", "bench", "sched", "messaging", "-l", str(seconds_hint)]
    print("recording: " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit("bench-parse: perf record failed: " + p.stderr.decode()[-300:])


def repeat_data(src, dst, min_bytes):
    """Write dst: src (PERFILE2, little-endian, file mode) with its data
    section repeated until it holds >= min_bytes; the feature section table
    and sections after the data are moved and their offsets fixed."""
    with open(src, "rb") as fh:
        buf = fh.read()
    if buf[:8] != b"PERFILE2":
        sys.exit("bench-parse: %s is not a little-endian file-mode perf.data" % src)
    hdr_size, = struct.unpack_from("<Q", buf, 8)
    data_off, data_size = struct.unpack_from("<QQ", buf, 40)
    features = int.from_bytes(buf[72:104], "little")
    nfeat = bin(features).count("1")
    times = max(1, -(-min_bytes // max(data_size, 1)))
    delta = (times - 1) * data_size
    data_end = data_off + data_size
    tail = bytearray(buf[data_end:])
    for i in range(nfeat):  # perf_file_section {offset, size} per feature bit
        off, size = struct.unpack_from("<QQ", tail, i * 16)
        struct.pack_into("<QQ", tail, i * 16, off + delta, size)
    head = bytearray(buf[:data_off])
    struct.pack_into("<Q", head, 48, data_size * times)
    with open(dst, "wb") as fh:
        fh.write(head)
        for _ in range(times):
            fh.write(buf[data_off:data_end])
        fh.write(tail)
    return times, hdr_size


def make_files(bench_dir, target_mb):
    os.makedirs(bench_dir, exist_ok=True)
    plain = os.path.join(bench_dir, "bench-%dMB.data" % target_mb)
    zstd = os.path.join(bench_dir, "bench-zstd.data")
    if not os.path.exists(plain):
        one = os.path.join(bench_dir, "one-run.data")
        record(one, [], 60)
        times, _ = repeat_data(one, plain, int(target_mb * MB))
        print("made %s: the data section of one %.1f MB recording repeated %d times"
              % (plain, os.path.getsize(one) / MB, times), flush=True)
        os.unlink(one)
    else:
        print("reusing " + plain)
    if not os.path.exists(zstd):
        record(zstd, ["-z"], 60)
    else:
        print("reusing " + zstd)
    return plain, zstd


def inspect_report(perfhub, path):
    p = subprocess.run([perfhub, "inspect", "--json", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit("bench-parse: perfhub inspect failed: " + p.stderr.decode().strip())
    return json.loads(p.stdout)


def perf_script_time(path, total_samples, size_mb):
    """Wall time of perf script on the whole file; extrapolated from the
    first 10 % of the time range (by samples printed) when the file is big."""
    if size_mb <= SCRIPT_FULL_MAX_MB:
        rc, wall, rss = run_measured(["perf", "script", "-i", path])
        return wall, rss, "whole file"
    cmd = ["perf", "script", "-i", path, "--time", "0%-10%"]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    printed = 0
    for line in p.stdout:
        if line[:1] not in (b" ", b"\t", b"\n"):
            printed += 1
    p.stdout.close()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if printed == 0:
        return None, ru.ru_maxrss / 1024.0, "perf script printed no samples"
    scale = total_samples / printed
    return wall * scale, ru.ru_maxrss / 1024.0, (
        "extrapolated: --time 0%%-10%% printed %d of %d samples in %.2f s, x%.1f"
        % (printed, total_samples, wall, scale))


def bench_file(perfhub, path, label):
    size = input_bytes(path)
    warm(path)
    rep = inspect_report(perfhub, path)
    records = int(rep.get("records_total", 0))
    samples = int(rep.get("records", {}).get("SAMPLE", 0))
    decompressed = int(rep.get("format", {}).get("decompressed_bytes", 0))
    compressed = int(rep.get("records", {}).get("COMPRESSED", 0)) + \
        int(rep.get("records", {}).get("COMPRESSED2", 0))

    best, rss = None, 0.0
    for _ in range(3):
        rc, wall, r = run_measured([perfhub, "inspect", "--json", path])
        if rc != 0:
            sys.exit("bench-parse: perfhub inspect exited %d" % rc)
        best = wall if best is None else min(best, wall)
        rss = max(rss, r)
    st_best, st_rss = None, 0.0
    for _ in range(2):
        rc, wall, r = run_measured(["perf", "report", "-i", path, "--stats"])
        st_best = wall if st_best is None else min(st_best, wall)
        st_rss = max(st_rss, r)
    sc_wall, sc_rss, sc_note = perf_script_time(path, samples, size / MB)

    print()
    print("== %s: %s" % (label, path))
    print("   %.1f MB on disk, %d records, %d samples, %d events%s"
          % (size / MB, records, samples, len(rep.get("events", [])),
             ", %d COMPRESSED records -> %.1f MB of records" % (compressed, decompressed / MB)
             if compressed else ""))
    print("   perfhub inspect --json  %8.3f s  %8.1f MB/s  %6.2f M records/s  peak RSS %6.1f MB"
          % (best, size / MB / best, records / best / 1e6, rss))
    if compressed:
        print("                           %8s    %8.1f MB/s of decompressed records"
              % ("", decompressed / MB / best))
    print("   perf report --stats     %8.3f s  %8.1f MB/s  %6.2f M records/s  peak RSS %6.1f MB"
          % (st_best, size / MB / st_best, records / st_best / 1e6, st_rss))
    if sc_wall:
        print("   perf script             %8.3f s  %8.1f MB/s  %6.2f M records/s  peak RSS %6.1f MB  (%s)"
              % (sc_wall, size / MB / sc_wall, records / sc_wall / 1e6, sc_rss, sc_note))
    print("   ratios: perf report --stats / inspect = %.2fx%s"
          % (st_best / best, ", perf script / inspect = %.0fx" % (sc_wall / best) if sc_wall else ""))
    mbs = (decompressed if compressed else size) / MB / best
    goal = GOAL_MBS_ZSTD if compressed else GOAL_MBS_PLAIN
    print("   goals: %.0f MB/s %s %.0f MB/s: %s; peak RSS %.1f MB %s %.0f MB: %s"
          % (mbs, ">=" if mbs >= goal else "<", goal, "met" if mbs >= goal else "NOT met",
             rss, "<" if rss < GOAL_RSS_MB else ">=", GOAL_RSS_MB,
             "met" if rss < GOAL_RSS_MB else "NOT met"), flush=True)


def main():
    perfhub = os.environ.get("PERFHUB", os.path.join(".", "cli", "perfhub"))
    if not os.access(perfhub, os.X_OK):
        sys.exit("bench-parse: no perfhub at %s (set PERFHUB or run from the build tree)" % perfhub)
    if not shutil.which("perf"):
        sys.exit("bench-parse: perf is not installed")
    files = sys.argv[1:]
    if not files:
        files = list(make_files(os.environ.get("PERFHUB_BENCH_DIR", "/tmp/perfhub-bench"),
                                int(os.environ.get("PERFHUB_BENCH_MB", "200"))))
    print("machine: %d CPUs; %s" % (os.cpu_count(), subprocess.run(
        ["perf", "--version"], stdout=subprocess.PIPE).stdout.decode().strip()))
    for f in files:
        bench_file(perfhub, f, "file")
    return 0


if __name__ == "__main__":
    sys.exit(main())

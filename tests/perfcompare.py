"""perfcompare.py - compare `perfhub inspect --json` with perf's own view of a
recording: `perf report --stats` (record counts, samples per event),
`perf report --header-only` (header facts, events, features) and
`perf report -D` (the lost counts).

Used by the inspect tests; also runnable by hand:
    python3 tests/perfcompare.py cli/perfhub perf.data
"""

import json
import os
import re
import subprocess
import sys

SAMPLE_TYPE_BITS = [
    "IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD",
    "STREAM_ID", "RAW", "BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT",
    "DATA_SRC", "IDENTIFIER", "TRANSACTION", "REGS_INTR", "PHYS_ADDR", "AUX",
    "CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE", "WEIGHT_STRUCT",
]
READ_FORMAT_BITS = ["TOTAL_TIME_ENABLED", "TOTAL_TIME_RUNNING", "ID", "GROUP", "LOST"]

# perf's feature ids 1..30 as perf 6.1 knows them (its "missing features"
# list only names these).
PERF_FEATURES = [
    "TRACING_DATA", "BUILD_ID", "HOSTNAME", "OSRELEASE", "VERSION", "ARCH",
    "NRCPUS", "CPUDESC", "CPUID", "TOTAL_MEM", "CMDLINE", "EVENT_DESC",
    "CPU_TOPOLOGY", "NUMA_TOPOLOGY", "BRANCH_STACK", "PMU_MAPPINGS",
    "GROUP_DESC", "AUXTRACE", "STAT", "CACHE", "SAMPLE_TIME", "MEM_TOPOLOGY",
    "CLOCKID", "DIR_FORMAT", "BPF_PROG_INFO", "BPF_BTF", "COMPRESSED",
    "CPU_PMU_CAPS", "CLOCK_DATA", "HYBRID_TOPOLOGY",
]

# `perf report --header-only` label -> (inspect header key, converter)
HEADER_FIELDS = {
    "hostname": ("hostname", str),
    "os release": ("os_release", str),
    "perf version": ("perf_version", str),
    "arch": ("arch", str),
    "nrcpus online": ("nr_cpus_online", int),
    "nrcpus avail": ("nr_cpus_available", int),
    "cpudesc": ("cpu_desc", str),
    "cpuid": ("cpuid", str),
    "total memory": ("total_mem", lambda s: int(s.split()[0])),
    # perf prints each word followed by a space
    "cmdline": ("cmdline", lambda s: s.rstrip(" ")),
}


def run(cmd, stdin=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=stdin)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def bits(names, table):
    v = 0
    for n in names.split("|"):
        if n:
            v |= 1 << table.index(n)
    return v


def perf_stats(path):
    """perf report --stats: ({type: count} incl. TOTAL, {event: {type: count}})."""
    rc, out, err = run(["perf", "report", "-i", path, "--stats"])
    if rc != 0:
        raise RuntimeError("perf report --stats failed: " + err.strip()[-300:])
    agg, per_event, cur = {}, {}, None
    for line in out.splitlines():
        if line == "Aggregated stats:":
            cur = None
            continue
        if line.endswith(" stats:") and not line.startswith(" "):
            cur = line[: -len(" stats:")]
            per_event[cur] = {}
            continue
        m = re.match(r"^\s*(\S+) events:\s+(\d+)", line)
        if m:
            (agg if cur is None else per_event[cur])[m.group(1)] = int(m.group(2))
    return agg, per_event


def perf_header(path):
    """perf report --header-only: (fields, events, present features or None, layout)."""
    rc, out, err = run(["perf", "report", "-i", path, "--header-only"])
    if rc != 0:
        raise RuntimeError("perf report --header-only failed: " + err.strip()[-300:])
    fields, events, layout, present = {}, [], {}, None
    for line in out.splitlines():
        m = re.match(r"^# ([a-z][a-z ]*[a-z]) *: (.*)$", line)
        if not m:
            continue
        label, value = m.group(1), m.group(2)
        if label in HEADER_FIELDS:
            key, conv = HEADER_FIELDS[label]
            fields[key] = conv(value)
        elif label in ("data offset", "data size", "feat offset"):
            layout[label.replace(" ", "_")] = int(value)
        elif label == "time of first sample":
            fields["first"] = value.strip()
        elif label == "time of last sample":
            fields["last"] = value.strip()
        elif label == "event":
            events.append(parse_event_line(value))
        elif label == "missing features":
            missing = set(value.split())
            present = set(f for f in PERF_FEATURES if f not in missing)
    return fields, events, present, layout


def parse_event_line(s):
    ev = {}
    m = re.match(r"name = (.*?), , ", s)
    ev["name"] = m.group(1) if m else None
    m = re.search(r"(?:^|, )id = \{ ([0-9, ]*) \}", s)
    ev["ids"] = [int(x) for x in m.group(1).split(",") if x.strip()] if m else []
    m = re.search(r"(?:^|, )type = (\d+)", s)
    ev["type"] = int(m.group(1)) if m else 0
    m = re.search(r"(?:^|, )config = (0x[0-9a-f]+)", s)
    ev["config"] = int(m.group(1), 16) if m else 0
    m = re.search(r"\{ sample_period, sample_freq \} = (\d+)", s)
    ev["period_or_freq"] = int(m.group(1)) if m else 0
    m = re.search(r"(?:^|, )sample_type = ([A-Z_|]+)", s)
    ev["sample_type"] = bits(m.group(1), SAMPLE_TYPE_BITS) if m else 0
    m = re.search(r"(?:^|, )read_format = ([A-Z_|]+)", s)
    ev["read_format"] = bits(m.group(1), READ_FORMAT_BITS) if m else 0
    ev["freq"] = bool(re.search(r"(?:^|, )freq = 1", s))
    return ev


def perf_lost(path):
    """Sum of the lost counts of LOST and LOST_SAMPLES records (perf report -D)."""
    rc, out, err = run(["perf", "report", "-i", path, "-D"])
    if rc != 0:
        raise RuntimeError("perf report -D failed: " + err.strip()[-300:])
    total = 0
    for line in out.splitlines():
        m = re.search(r"PERF_RECORD_LOST(?:_SAMPLES)?: .*lost(?: samples)? ?:(\d+)", line)
        if m:
            total += int(m.group(1))
    return total


def usec_time(ns):
    return "%d.%06d" % (ns // 1000000000, ns % 1000000000 // 1000)


def num(v):
    """inspect writes integers above INT64_MAX as decimal strings."""
    return int(v)


def inspect_json(perfhub, path):
    rc, out, err = run([perfhub, "inspect", path, "--json"])
    if rc != 0:
        raise RuntimeError("perfhub inspect --json exited %d: %s" % (rc, err.strip()))
    return json.loads(out)


def compare(perfhub, path, perf_reads_records=True):
    """Every difference between inspect and perf, as a list of strings.

    perf_reads_records=False is for recordings perf 6.1 cannot read to the
    end (pipe mode with zstd): then only the header is compared with perf,
    and the records only for consistency among themselves.
    """
    rep = inspect_json(perfhub, path)
    diffs = []

    def differ(what, ours, perfs):
        if ours != perfs:
            diffs.append("%s: inspect %r, perf %r" % (what, ours, perfs))

    # records: named and counted as perf report --stats
    if perf_reads_records:
        agg, per_event = perf_stats(path)
    else:
        agg = {k: num(v) for k, v in rep.get("records", {}).items()}
        agg["TOTAL"] = num(rep.get("records_total", -1))
        per_event = {k: {"SAMPLE": num(v)} for k, v in rep.get("samples_per_event", {}).items()
                     if num(v)}
        if not agg.get("SAMPLE"):
            diffs.append("no SAMPLE records found")
    perf_records = {k: v for k, v in agg.items() if k != "TOTAL"}
    ours = {k: num(v) for k, v in rep.get("records", {}).items()}
    for k in sorted(set(perf_records) | set(ours)):
        differ("records[%s]" % k, ours.get(k), perf_records.get(k))
    if "TOTAL" in agg:
        differ("records_total", num(rep.get("records_total", -1)), agg["TOTAL"])

    # samples per event: perf lists the events that have any
    spe = {k: num(v) for k, v in rep.get("samples_per_event", {}).items()}
    for name, counts in per_event.items():
        differ("samples_per_event[%s]" % name, spe.get(name), counts.get("SAMPLE", 0))
    for name, n in spe.items():
        if name not in per_event and n != 0:
            diffs.append("samples_per_event[%s]: inspect %d, perf lists no samples" % (name, n))
    if sum(spe.values()) != ours.get("SAMPLE", 0):
        diffs.append("samples_per_event sum %d != SAMPLE records %d"
                     % (sum(spe.values()), ours.get("SAMPLE", 0)))
    events = rep.get("events", [])
    for ev in events:
        if spe.get(ev.get("name")) is None:
            diffs.append("event %r missing from samples_per_event" % ev.get("name"))

    # header facts, field by field
    fields, perf_events, present, layout = perf_header(path)
    hdr = rep.get("header", {})
    for label, (key, _) in HEADER_FIELDS.items():
        differ("header.%s" % key, hdr.get(key), fields.get(key))
    st = hdr.get("sample_time")
    differ("header.sample_time.first", usec_time(num(st["first_ns"])) if st else None,
           fields.get("first"))
    differ("header.sample_time.last", usec_time(num(st["last_ns"])) if st else None,
           fields.get("last"))
    fmt = rep.get("format", {})
    if fmt.get("mode") == "file":
        for k, v in layout.items():
            differ("format.%s" % k, num(fmt.get(k, -1)), v)
    if present is not None:
        ours_feat = set(k.upper() for k in hdr.get("features", {}))
        # features perf 6.1 does not know (e.g. PMU_CAPS) cannot be checked
        ours_known = ours_feat & set(PERF_FEATURES)
        differ("features", sorted(ours_known), sorted(present))

    # events, in file order
    differ("number of events", len(events), len(perf_events))
    for i, (o, p) in enumerate(zip(events, perf_events)):
        differ("events[%d].name" % i, o.get("name"), p["name"])
        differ("events[%d].ids" % i, [num(x) for x in o.get("ids", [])], p["ids"])
        differ("events[%d].type" % i, num(o.get("type", -1)), p["type"])
        differ("events[%d].config" % i, num(o.get("config", -1)), p["config"])
        differ("events[%d].sample_type" % i, num(o.get("sample_type", -1)), p["sample_type"])
        differ("events[%d].read_format" % i, num(o.get("read_format", -1)), p["read_format"])
        key = "sample_freq" if p["freq"] else "sample_period"
        differ("events[%d].%s" % (i, key), num(o.get(key, -1)), p["period_or_freq"])
        differ("events[%d].samples" % i, num(o.get("samples", -1)),
               per_event.get(p["name"], {}).get("SAMPLE", 0)
               if [e["name"] for e in perf_events].count(p["name"]) == 1 else num(o.get("samples", -1)))

    if perf_reads_records:
        differ("lost", num(rep.get("lost", -1)), perf_lost(path))
    return diffs


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: perfcompare.py PERFHUB FILE", file=sys.stderr)
        sys.exit(2)
    d = compare(sys.argv[1], sys.argv[2])
    for line in d:
        print(line)
    print("%s: %s" % (sys.argv[2], "matches perf" if not d else "%d differences" % len(d)))
    sys.exit(1 if d else 0)

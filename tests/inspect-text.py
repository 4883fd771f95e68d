"""inspect-text.py - the human output of `perfhub inspect` and its failures.

1. On a recording made now, the text output shows the same header facts as
   `perf report --header-only` and the same record and per-event sample
   counts as `perf report --stats` (skips with 77 when perf cannot record).
2. Files it cannot parse (missing, empty, not perf.data, truncated header,
   truncated data, a bad record size) exit 1 with nothing on stdout and one
   line on stderr naming the file and the byte offset. Those checks need no
   perf and always run.
"""

import os
import re
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
import perfcompare  # noqa: E402

SKIP = 77
builddir = os.environ.get("top_builddir", ".")
perfhub = os.path.join(builddir, "cli", "perfhub")
tmp = os.path.join(os.environ.get("PERFHUB_TEST_TMP", "/tmp"), "inspect-text")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def inspect(*args):
    p = subprocess.run([perfhub, "inspect"] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def parse_text(out):
    """Text output -> ({label: value}, {section: {key: value}})."""
    top, sections, cur = {}, {}, None
    for line in out.splitlines():
        if not line.strip():
            continue
        m = re.match(r"^(\S.*?):$", line) or re.match(r"^(\S.*?) \(\d+\):$", line)
        if m:
            cur = m.group(1)
            sections[cur] = {}
            continue
        if line.startswith("  ") and cur is not None:
            m = re.match(r"^  (\S.*?)\s+(\d+)$", line)
            if m:
                sections[cur][m.group(1)] = int(m.group(2))
            continue
        cur = None
        m = re.match(r"^(\S.*?)\s{2,}(.*)$", line) or re.match(r"^(\S+) (.*)$", line)
        if m:
            top[m.group(1)] = m.group(2)
    return top, sections


TEXT_LABELS = {  # text label -> perf --header-only value key
    "hostname": "hostname", "os release": "os_release", "perf version": "perf_version",
    "arch": "arch", "cpu desc": "cpu_desc", "cpuid": "cpuid", "cmdline": "cmdline",
    "first sample": "first", "last sample": "last",
}


def check_text_against_perf():
    path = os.path.join(tmp, "text.data")
    p = subprocess.run(["perf", "record", "-q", "-g", "-o", path, "--",
                        "perf", "bench", "sched", "messaging", "-g", "1", "-l", "20"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        print("skip the perf comparison: perf record failed: " + p.stderr.decode()[-200:])
        return False
    rc, out, err = inspect(path)
    if rc != 0:
        fail("inspect %s exited %d: %s" % (path, rc, err))
        return True
    top, sections = parse_text(out)
    fields, events, _, _ = perfcompare.perf_header(path)
    for label, key in TEXT_LABELS.items():
        if top.get(label) != (str(fields[key]) if key in fields else None):
            fail("text %r = %r, perf --header-only %r" % (label, top.get(label), fields.get(key)))
    if top.get("total memory") != "%d kB" % fields["total_mem"]:
        fail("text total memory %r, perf %r" % (top.get("total memory"), fields["total_mem"]))
    if top.get("cpus") != "%d online, %d available" % (fields["nr_cpus_online"],
                                                      fields["nr_cpus_available"]):
        fail("text cpus %r, perf %r" % (top.get("cpus"), fields))
    agg, per_event = perfcompare.perf_stats(path)
    if sections.get("records") != agg:
        fail("text records %r, perf --stats %r" % (sections.get("records"), agg))
    want = {k: v.get("SAMPLE", 0) for k, v in per_event.items()}
    if sections.get("samples per event") != want:
        fail("text samples per event %r, perf --stats %r" % (sections.get("samples per event"), want))
    if events and events[0]["name"] not in out:
        fail("text does not name event %r" % events[0]["name"])
    lost = perfcompare.perf_lost(path)
    if top.get("lost") != str(lost):
        fail("text lost %r, perf report -D %d" % (top.get("lost"), lost))
    return True


def check_failure(path, what):
    for args in ([path], [path, "--json"]):
        rc, out, err = inspect(*args)
        lines = err.splitlines()
        if rc != 1:
            fail("%s: exit %d, want 1 (stderr %r)" % (what, rc, err))
        if out:
            fail("%s: stdout not empty: %r" % (what, out[:200]))
        if len(lines) != 1:
            fail("%s: %d stderr lines, want 1: %r" % (what, len(lines), err))
        elif path not in lines[0] or "offset" not in lines[0]:
            fail("%s: stderr line does not name the file and offset: %r" % (what, lines[0]))
        else:
            print("ok %s%s: %s" % (what, " (--json)" if len(args) > 1 else "", lines[0]))


def le_header(data_offset, data_size, attr_size=136, attrs_offset=104, attrs_size=0):
    """A PERFILE2 file header (104 bytes, little-endian, no features)."""
    return (b"PERFILE2" + struct.pack("<QQ", 104, attr_size)
            + struct.pack("<QQ", attrs_offset, attrs_size)
            + struct.pack("<QQ", data_offset, data_size)
            + struct.pack("<QQ", 0, 0) + bytes(32))


def check_failures():
    def write(name, data):
        p = os.path.join(tmp, name)
        with open(p, "wb") as fh:
            fh.write(data)
        return p

    check_failure(os.path.join(tmp, "does-not-exist.data"), "missing file")
    check_failure(write("empty.data", b""), "empty file")
    check_failure(write("text.txt", b"this is not a perf.data file\n" * 20), "not perf.data")
    check_failure(write("short-header.data", b"PERFILE2" + bytes(20)), "truncated header")
    # data section claims 4096 bytes that the file does not have
    check_failure(write("short-data.data", le_header(104, 4096) + bytes(16)), "data beyond the end")
    # one record whose size (4) is smaller than its own 8-byte header
    rec = struct.pack("<IHH", 9, 0, 4) + bytes(8)
    check_failure(write("bad-size.data", le_header(104, len(rec)) + rec), "record size too small")


def main():
    if not os.access(perfhub, os.X_OK):
        print("no perfhub at " + perfhub)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    compared = False
    if shutil.which("perf"):
        compared = check_text_against_perf()
    check_failures()
    if failures:
        print("%d failures" % len(failures))
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    if not compared:
        print("(text output not compared with perf: perf cannot record here)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

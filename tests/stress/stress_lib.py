"""stress_lib - what the reliability and load suite shares: small real
recordings made at run time, distinct valid variants of them (the
HOSTNAME feature rewritten in place, so the sha256 differs while every
count perf reports stays the same), process memory figures, percentiles.

Python 3 standard library only; talks to perfhubd through
tests/perfhubd_harness.py.
"""
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import perfhubd_harness as H  # noqa: E402

HEADER_HOSTNAME = 3           # feature bit of perf's HEADER_HOSTNAME
FEAT_BITS = 256


def size_arg(name, short, full):
    """STRESS_SIZE=full (make stress) or the CI-size default."""
    return full if os.environ.get("STRESS_SIZE") == "full" else short


def hostname_slot(data):
    """(offset, capacity) of the HOSTNAME string in a file-mode perf.data:
    the bytes after its u32 length, NUL and padding included."""
    if data[:8] != b"PERFILE2":
        raise ValueError("not a little-endian PERFILE2 file")
    hsize, = struct.unpack_from("<Q", data, 8)
    data_off, data_size = struct.unpack_from("<QQ", data, 40)
    feats = int.from_bytes(data[72:72 + 32], "little")
    if not feats >> HEADER_HOSTNAME & 1:
        raise ValueError("no HOSTNAME feature")
    # one perf_file_section per set bit, in bit order, after the data
    idx = bin(feats & ((1 << HEADER_HOSTNAME) - 1)).count("1")
    sec_off, sec_size = struct.unpack_from("<QQ", data, data_off + data_size + 16 * idx)
    length, = struct.unpack_from("<I", data, sec_off)
    if hsize < 104 or length + 4 > sec_size or sec_off + 4 + length > len(data):
        raise ValueError("bad HOSTNAME section")
    return sec_off + 4, length


def with_hostname(data, name):
    """A copy of the recording whose HOSTNAME feature reads `name`."""
    off, cap = hostname_slot(data)
    raw = name.encode()
    if len(raw) >= cap:
        raise ValueError("hostname %r does not fit in %d bytes" % (name, cap))
    return data[:off] + raw + b"\0" * (cap - len(raw)) + data[off + cap:]


class Recording:
    """A real perf.data made here, with perf's own counts."""

    def __init__(self, path):
        self.path = path
        self.data = open(path, "rb").read()
        self.records, self.per_event = H.perf_stats(path)
        self.samples = self.records.get("SAMPLE", 0)
        hostname_slot(self.data)    # must be rewritable

    def variant(self, i):
        """The i-th distinct variant: hostname "stress-<i>"."""
        name = "stress-%d" % i
        return name, with_hostname(self.data, name)


WORKLOADS = [
    (["-e", "cpu-clock", "-F", "2000"], ["sh", "-c", "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done"]),
    (["-e", "cpu-clock", "-F", "1000", "-g"], ["sh", "-c", "i=0; while [ $i -lt 120000 ]; do i=$((i+1)); done"]),
    (["-e", "cpu-clock", "-F", "3000"], ["sh", "-c", "x=0; for i in $(seq 1 60000); do x=$((x^i)); done"]),
    (["-e", "cpu-clock", "-F", "1500", "-g"], ["sh", "-c", "i=0; while [ $i -lt 90000 ]; do i=$((i+2)); done"]),
]


def make_recordings(work, n=4):
    """n small distinct recordings with samples (perf record must work)."""
    recs = []
    for k, (args, workload) in enumerate(WORKLOADS[:n]):
        p = H.perf_record(os.path.join(work, "rec%d.data" % k), args, workload)
        r = Recording(p)
        if r.samples == 0:
            raise RuntimeError("%s has no samples" % p)
        recs.append(r)
    return recs


def proc_status(pid, field):
    """A kB field of /proc/PID/status (VmRSS, VmHWM) in bytes, or 0."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def daemon_has_asan():
    """True when perfhubd was built with AddressSanitizer (its RSS then
    says nothing about the daemon's own memory)."""
    try:
        with open(os.path.join(H.builddir(), "daemon", "perfhubd"), "rb") as f:
            return b"AddressSanitizer" in f.read()
    except OSError:
        return False


def percentile(values, p):
    if not values:
        return 0.0
    v = sorted(values)
    k = min(len(v) - 1, max(0, int(round(p / 100.0 * (len(v) - 1)))))
    return v[k]


def spool_litter(state):
    """Files left in the spool's tmp directory (partial uploads)."""
    tmp = os.path.join(state, "spool", "tmp")
    try:
        return sorted(os.listdir(tmp))
    except OSError:
        return []


def zstd(data, level=3):
    return subprocess.run(["zstd", "-q", "-c", "-%d" % level], input=data, check=True,
                          capture_output=True).stdout


def table(title, rows):
    """Prints rows of (figure, value) as one aligned table."""
    w = max(len(k) for k, _ in rows) if rows else 0
    print("== %s" % title)
    for k, v in rows:
        print("  %-*s  %s" % (w, k, v))
    sys.stdout.flush()

"""views_common - what the tests of the deeper views share: C programs built
and recorded at test time, the daemon's answers about one function, and
perf's own view of the same recording (perf script, perf annotate)."""
import os
import re
import shutil
import subprocess
import sys
import urllib.parse

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import SKIP, check, have_perf_record  # noqa: E402


def need_tools():
    """None when gcc and perf record work here, else why not (the test skips)."""
    if not shutil.which("gcc"):
        return "no gcc"
    if not have_perf_record():
        return "perf record does not work here"
    return None


def build(d, name, source, flags=("-O0", "-g", "-fno-omit-frame-pointer")):
    """Writes name.c into d and compiles it; the binary's path."""
    src = os.path.join(d, name + ".c")
    with open(src, "w") as f:
        f.write(source)
    exe = os.path.join(d, name)
    subprocess.run(["gcc"] + list(flags) + ["-o", exe, src], check=True, timeout=120)
    return exe


def record(out, args, cmd, cwd=None):
    """perf record ARGS -o OUT -- CMD; True when perf could (a tracepoint
    may be refused where tracefs is not readable)."""
    r = subprocess.run(["perf", "record", "-q", "-o", out] + list(args) + ["--"] + list(cmd),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300, cwd=cwd)
    if r.returncode != 0:
        sys.stderr.write(r.stderr.decode(errors="replace")[-2000:])
    return r.returncode == 0


def line_of(path, marker):
    """The number (from 1) of the line of a file that holds marker."""
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if marker in line:
                return i
    raise AssertionError("%s: no line with %r" % (path, marker))


def q(**params):
    return "?" + urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})


def get(d, pid, endpoint, **params):
    """A view's JSON; asserts 200."""
    st, j = d.json("GET", "/api/v1/profiles/%d/%s%s" % (pid, endpoint, q(**params)))
    check(st == 200, "%s %r: %d %r" % (endpoint, params, st, j))
    return j


def top_row(d, pid, name, **params):
    """/top's row of one function ({"self": 0, "total": 0} when absent)."""
    params.setdefault("limit", 100000)
    for r in get(d, pid, "top", **params)["functions"]:
        if r["name"] == name:
            return r
    return {"name": name, "self": 0, "total": 0}


def names(tree):
    """Every node name of a tree."""
    out = {tree["name"]}
    for c in tree["children"]:
        out |= names(c)
    return out


def sums_ok(tree):
    """No node is smaller than its children together."""
    return tree["value"] >= sum(c["value"] for c in tree["children"]) and \
        all(sums_ok(c) for c in tree["children"])


def perf_script_stacks(path, event):
    """[(tid, time_ns, period, [symbols innermost first])] of one event's
    samples, from perf script."""
    out = subprocess.run(["perf", "script", "-i", path, "--ns", "-F",
                          "tid,time,event,period,ip,sym"], capture_output=True, text=True,
                         timeout=300).stdout
    res, cur = [], None
    for line in out.splitlines():
        m = re.match(r"^\s*(\d+)\s+(\d+)\.(\d{9}):\s+(\d+)\s+(\S+):\s*$", line)
        if m:
            cur = None
            if m.group(5) == event:
                cur = (int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3)),
                       int(m.group(4)), [])
                res.append(cur)
            continue
        m = re.match(r"^\s+[0-9a-f]+\s+(\S+)", line)
        if m and cur is not None:
            cur[3].append(m.group(1))
    return res


def perf_annotate(path, function):
    """perf annotate --stdio of one function: ({address: percent},
    {source line: percent})."""
    out = subprocess.run(["perf", "annotate", "-i", path, "--stdio", "-s", function],
                         capture_output=True, text=True, timeout=300).stdout
    insns, lines, cur = {}, {}, None
    for line in out.splitlines():
        m = re.match(r"^\s+:\s+(\d+)\s", line)
        if m:
            cur = int(m.group(1))
            continue
        m = re.match(r"^\s*(\d+\.\d+)\s+:\s+([0-9a-f]+):", line)
        if m:
            pct, addr = float(m.group(1)), int(m.group(2), 16)
            insns[addr] = pct
            if cur is not None:
                lines[cur] = lines.get(cur, 0.0) + pct
    return insns, lines


def perf_offcpu(path, under=None):
    """perf script's own view of off-CPU time, (total ns, ns of stacks holding
    the function `under`): each sched_switch sample to its thread's next
    switch-in, unless the switch-out between said preempt."""
    out = subprocess.run(["perf", "script", "-i", path, "--ns", "--show-switch-events",
                          "-F", "tid,time,event"], capture_output=True, text=True,
                         timeout=600).stdout
    stacks = {t: s for (_, t, _, s) in perf_script_stacks(path, "sched:sched_switch")} \
        if under else {}
    held, total, part = {}, 0, 0
    for line in out.splitlines():
        f = line.split()
        if len(f) < 3:
            continue
        tid = int(f[0])
        sec, ns = f[1].rstrip(":").split(".")
        t = int(sec) * 10**9 + int(ns)
        rest = " ".join(f[2:])
        if rest.startswith("sched:sched_switch"):
            held[tid] = [t, False]
        elif rest.startswith("PERF_RECORD_SWITCH OUT") and tid in held:
            held[tid][1] = held[tid][1] or "preempt" in rest
        elif rest.startswith("PERF_RECORD_SWITCH IN") and tid in held:
            t0, preempt = held.pop(tid)
            if not preempt and t > t0:
                total += t - t0
                if under and under in stacks.get(t0, []):
                    part += t - t0
    return total, part

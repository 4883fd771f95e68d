#!/usr/bin/env python3
"""/metrics read by a real Prometheus parser and linter: `promtool check
metrics` (Debian's prometheus package) parses the exposition and lints it
by Prometheus' naming conventions (counters end in _total, base units,
snake_case, HELP present); on top, every family has HELP and TYPE lines,
every name the perfhub_ prefix, and what measures time or size ends in
_seconds or _bytes. The counters move with an upload and its parse."""
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import SKIP, Daemon, check, corpus

UNITS = ("_seconds", "_bytes")


def families(text):
    """{name: (type, help)} and the sample lines."""
    fams, samples = {}, []
    for line in text.splitlines():
        m = re.match(r"^# (HELP|TYPE) (\S+) (.*)$", line)
        if m:
            t, h = fams.get(m.group(2), (None, None))
            fams[m.group(2)] = (m.group(3), h) if m.group(1) == "TYPE" else (t, m.group(3))
        elif line and not line.startswith("#"):
            samples.append(line)
    return fams, samples


def lint(text, work):
    promtool = shutil.which("promtool")
    check(promtool, "promtool (Debian's prometheus package) is needed")
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(),
          "promtool check metrics:\n%s%s" % (r.stdout, r.stderr))


def main():
    rec = corpus("mstange-sleep.data")
    if not os.path.exists(rec):
        print("the external corpus is not here (PERFHUB_SHARED)")
        return SKIP
    work = os.path.dirname(rec)
    with Daemon() as d:
        st, h, body = d.request("GET", "/metrics")
        check(st == 200 and h.get("Content-Type", "").startswith("text/plain; version=0.0.4"),
              "metrics: %s %s" % (st, h))
        text = body.decode()
        lint(text, work)
        fams, samples = families(text)
        for name, (typ, helptext) in fams.items():
            check(typ in ("counter", "gauge", "histogram", "summary"), "%s: TYPE %s" % (name, typ))
            check(helptext, "%s: no HELP" % name)
            check(re.match(r"^perfhub_[a-z0-9_]+$", name), "%s: not perfhub_snake_case" % name)
            if typ == "counter":
                check(name.endswith("_total"), "counter %s without _total" % name)
            if typ == "histogram" or re.search(r"\b(time|duration|size)\b", helptext, re.I):
                base = name[:-6] if name.endswith("_total") else name
                check(base.endswith(UNITS), "%s measures time or size: ends in %s" % (name, UNITS))
        for s in samples:
            name = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)", s).group(1)
            base = re.sub(r"_(bucket|sum|count)$", "", name)
            check(name in fams or base in fams, "sample %s has no HELP/TYPE family" % s)
        before = int(re.search(r"^perfhub_uploads_total (\d+)$", text, re.M).group(1))
        st, r = d.upload(rec)
        check(st == 202 and d.wait(r["id"])["status"] == "ready", "upload: %s %s" % (st, r))
        # the worker counts the parse just after the profile turns ready
        deadline = time.time() + 10
        while True:
            text = d.request("GET", "/metrics")[2].decode()
            if re.search(r"^perfhub_parses_total 1$", text, re.M) or time.time() > deadline:
                break
            time.sleep(0.05)
        lint(text, work)
        check(re.search(r"^perfhub_uploads_total %d$" % (before + 1), text, re.M), "uploads")
        check(re.search(r"^perfhub_parses_total 1$", text, re.M), "parses")
        check(re.search(r'^perfhub_parse_seconds_bucket\{le="\+Inf"\} 1$', text, re.M),
              "parse_seconds histogram")
    print("ok: /metrics parses and lints clean with promtool; %d families" % len(fams))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The man pages cannot drift from the programs: every option that
`perfhubd --help` lists is described in docs/perfhubd.8 and every option
docs/perfhubd.8 describes is in --help; every command of `perfhub --help`
has a section in docs/perfhub.1 describing each option its
`perfhub COMMAND --help` shows. Both pages must render without warnings
when man(1) is installed. Skips (77) when the programs are not built."""
import os
import re
import shutil
import subprocess
import sys

SRC = os.environ.get("top_srcdir", os.path.join(os.path.dirname(__file__), ".."))
BLD = os.environ.get("top_builddir", ".")
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg)
    return cond


def run(args):
    r = subprocess.run(args, capture_output=True, text=True, timeout=30)
    return r.stdout + r.stderr


def options(text):
    """Long options of a help text, from its usage lines and its option list
    (not from prose, which may quote perf's own options)."""
    lines = [l.strip() for l in text.splitlines()]
    lines = [l for l in lines if l.startswith(("usage:", "[", "--"))]
    found = re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", "\n".join(lines))
    return sorted(set(found) - {"help"})


def in_page(page, opt):
    return ("\\-\\-" + opt.replace("-", "\\-")) in page


def page_text(name):
    with open(os.path.join(SRC, "docs", name)) as f:
        return f.read()


def main():
    perfhubd = os.path.join(BLD, "daemon", "perfhubd")
    perfhub = os.path.join(BLD, "cli", "perfhub")
    if not (os.access(perfhubd, os.X_OK) and os.access(perfhub, os.X_OK)):
        print("SKIP: perfhubd or perfhub not built")
        return 77

    page = page_text("perfhubd.8")
    listed = options(run([perfhubd, "--help"]))
    check(len(listed) >= 10, "perfhubd --help lists only %r" % listed)
    for o in listed:
        check(in_page(page, o), "perfhubd.8 does not describe --%s" % o)
    described = re.findall(r"^\.BI? \\-\\-([a-z0-9\\-]+)", page, re.M)
    for o in described:
        o = o.replace("\\-", "-")
        check(o == "help" or o in listed, "perfhubd.8 describes --%s, which --help lacks" % o)
    print("ok: perfhubd.8 and --help agree on %d options" % len(listed))

    page = page_text("perfhub.1")
    top = run([perfhub, "--help"])
    commands = re.findall(r"^  ([a-z]+) ", top, re.M)
    check(len(commands) >= 3, "perfhub --help lists only %r" % commands)
    n = 0
    for cmd in commands:
        check(re.search(r"^\.SS %s\b" % cmd, page, re.M) is not None,
              "perfhub.1 has no section for '%s'" % cmd)
        for o in options(run([perfhub, cmd, "--help"])):
            n += 1
            check(in_page(page, o), "perfhub.1 does not describe '%s --%s'" % (cmd, o))
    print("ok: perfhub.1 covers %d commands and their %d options" % (len(commands), n))

    if shutil.which("man"):
        for name in ("perfhubd.8", "perfhub.1"):
            r = subprocess.run(["man", "--warnings", "-l", os.path.join(SRC, "docs", name)],
                               capture_output=True, text=True, timeout=60,
                               env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="0"))
            check(r.returncode == 0 and not r.stderr.strip(),
                  "man %s: %s" % (name, r.stderr.strip()[:500]))
        print("ok: both pages render without warnings")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

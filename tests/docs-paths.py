#!/usr/bin/env python3
"""Every file the documents name is in the repository: README, docs/*.md,
the man pages, folder READMEs and docs/openapi.json are searched for paths
under the repository's folders (docs/query.md, daemon/http/routes.c,
lib/jsonbuf.{c,h}, tests/engine-*.c) and for *.md names; each must exist
(a {a,b} list is each of its names, a * pattern must match something), be
a module or program named without its extension (lib/dirpack is
lib/dirpack.c, tests/unwind-self is built from tests/unwind-self.c), or be
something the build makes (named in a Makefile fragment: daemon/perfhubd,
tests/web-e2e.out)."""
import glob
import os
import re
import sys

SRC = os.environ.get("top_srcdir", ".")
TOP = ("docs", "daemon", "cli", "lib", "parser", "tests", "web", "systemd", "build-aux", "m4")
PATH = re.compile(r"(?<![\w./-])((?:%s)/[\w./*{},+-]*[\w*}])" % "|".join(TOP))
MD = re.compile(r"(?<![\w./-])([A-Z][A-Z_]+\.md)\b")


def expand(p):
    m = re.search(r"\{([^}]*)\}", p)
    if not m:
        return [p]
    return [x for alt in m.group(1).split(",") for x in expand(p[:m.start()] + alt + p[m.end():])]


def build_text():
    text = ""
    for f in glob.glob(os.path.join(SRC, "**", "*.mk"), recursive=True) + \
            [os.path.join(SRC, "Makefile.am")]:
        if "node_modules" not in f:
            text += open(f, encoding="utf-8").read()
    return text


BUILD = None


def exists(p):
    global BUILD
    p = p.rstrip(".").rstrip("/")
    for n in expand(p):
        full = os.path.join(SRC, n)
        if "*" in n:
            if not glob.glob(full):
                return False
            continue
        if os.path.exists(full) or glob.glob(full + ".[chs]*") or glob.glob(full + ".py"):
            continue
        if BUILD is None:
            BUILD = build_text()
        if not re.search(r"(?<![\w/.-])%s(?![\w-])" % re.escape(n), BUILD):
            return False
    return True


def main():
    files = [os.path.join(SRC, "README")] + glob.glob(os.path.join(SRC, "docs", "*")) + \
        glob.glob(os.path.join(SRC, "*", "README.md")) + glob.glob(os.path.join(SRC, "*", "*", "README.md"))
    bad = []
    for f in files:
        if os.path.isdir(f):
            continue
        text = open(f, encoding="utf-8", errors="replace").read()
        rel = os.path.relpath(f, SRC)
        for m in PATH.finditer(text):
            if not exists(m.group(1)):
                bad.append("%s names %s, which is not in the repository" % (rel, m.group(1)))
        for m in MD.finditer(text):
            name = m.group(1)
            if name != "README.md" and not glob.glob(os.path.join(SRC, "**", name), recursive=True):
                bad.append("%s names %s, which is not in the repository" % (rel, name))
    for b in bad:
        print("FAIL: " + b)
    print("docs-paths: %d files, %d missing names" % (len(files), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The page's files, checked with the standard library only: index.html is
well-formed; every element id the scripts look up exists; every asset the
page loads exists and is installed by web/local.mk (and every file
installed is one the page loads); nothing is fetched from outside (no
absolute URL, no protocol-relative URL, no CSS import); every API path
the scripts call is an endpoint perfhubd routes (daemon/http/). With
node, the scripts' syntax is checked too."""
import html.parser
import os
import re
import shutil
import subprocess
import sys

TOP = os.environ.get("top_srcdir", os.path.join(os.path.dirname(__file__), ".."))
WEB = os.path.join(TOP, "web")
HTTP = os.path.join(TOP, "daemon", "http")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


class Checker(html.parser.HTMLParser):
    """Tag balance, ids, and what the page loads."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.ids = set()
        self.assets = []
        self.urls = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            if a["id"] in self.ids:
                fail("duplicate id %r (line %d)" % (a["id"], self.getpos()[0]))
            self.ids.add(a["id"])
        for k in ("src", "href", "action", "data", "poster"):
            if a.get(k):
                self.urls.append((a[k], self.getpos()[0]))
        if tag == "script" and a.get("src"):
            self.assets.append(a["src"])
        if tag == "link" and a.get("rel") == "stylesheet":
            self.assets.append(a["href"])
        if tag not in VOID:
            self.stack.append((tag, self.getpos()[0]))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in VOID:
            fail("end tag for void element </%s> (line %d)" % (tag, self.getpos()[0]))
            return
        if not self.stack or self.stack[-1][0] != tag:
            top = self.stack[-1] if self.stack else ("(none)", 0)
            fail("</%s> at line %d closes <%s> from line %d" % (tag, self.getpos()[0], top[0], top[1]))
            return
        self.stack.pop()


def read(p):
    with open(p, encoding="utf-8") as f:
        return f.read()


def main():
    page = read(os.path.join(WEB, "index.html"))
    if not page.lstrip().lower().startswith("<!doctype html>"):
        fail("index.html does not start with <!DOCTYPE html>")
    c = Checker()
    c.feed(page)
    c.close()
    for tag, line in c.stack:
        fail("<%s> from line %d never closed" % (tag, line))

    # Assets: exist, installed, and nothing installed that the page does not load.
    mk = read(os.path.join(WEB, "local.mk"))
    m = re.search(r"dist_web_DATA\s*=\s*((?:.*\\\n)*.*)", mk)
    installed = set(os.path.basename(x) for x in re.findall(r"web/([\w.-]+)", m.group(1) if m else ""))
    wanted = set(["index.html"]) | set(c.assets)
    for a in c.assets:
        if "/" in a or ":" in a:
            fail("asset %r is not a plain file name in the web root" % a)
        elif not os.path.isfile(os.path.join(WEB, a)):
            fail("asset %r does not exist in web/" % a)
    if installed != wanted:
        fail("web/local.mk installs %s, the page loads %s" % (sorted(installed), sorted(wanted)))

    # Nothing from outside: no scheme-qualified or protocol-relative URL.
    for url, line in c.urls:
        if url.startswith("data:"):
            continue  # inline, fetches nothing (the empty favicon)
        if re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I) or url.startswith("//"):
            fail("index.html line %d loads %r from outside" % (line, url))
    for name in sorted(installed):
        text = read(os.path.join(WEB, name))
        for i, ln in enumerate(text.splitlines(), 1):
            if re.search(r"\b(https?|wss?|ftp):", ln) or re.search(r"[\"'(]//[\w.-]", ln):
                fail("%s line %d names an outside URL: %s" % (name, i, ln.strip()))
            if "@import" in ln or re.search(r"\burl\(", ln):
                fail("%s line %d loads a resource from CSS: %s" % (name, i, ln.strip()))

    # Ids the scripts look up ('#id' in selectors) exist in the page.
    js = {n: read(os.path.join(WEB, n)) for n in sorted(installed) if n.endswith(".js")}
    for n, text in js.items():
        sel = r"(?:\$|querySelector(?:All)?)\(\s*['\"`]#([A-Za-z][\w-]*)"
        # an id built at run time ('#view-' + name) ends in '-': not checked
        for ident in sorted(i for i in set(re.findall(sel, text)) if not i.endswith("-")):
            if ident not in c.ids:
                fail("%s looks up #%s, which index.html does not have" % (n, ident))
    print("ok: %d ids, assets %s" % (len(c.ids), ", ".join(sorted(wanted))))

    # API paths the scripts call are endpoints the daemon routes: every
    # path segment of a string literal in daemon/http/.
    app = js.get("app.js", "")
    calls = set(re.findall(r"api\('([a-z]+)", app)) | set(re.findall(r"'/([a-z]+)'", app))
    calls |= set(re.findall(r"API \+ '([a-z]+)", app))
    endpoints = set()
    for name in sorted(os.listdir(HTTP)):
        if name.endswith((".c", ".h")):
            for path in re.findall(r'"(/[a-z0-9_/{}.]*)', read(os.path.join(HTTP, name))):
                endpoints.update(seg for seg in path.split("/") if seg)
    if not {"api", "profiles"} <= endpoints:
        fail("no routes found in %s" % HTTP)
    for call in sorted(calls):
        if call not in endpoints:
            fail("app.js calls %r, which perfhubd does not route (daemon/http/)" % call)
    print("ok: API calls %s are routed by perfhubd" % ", ".join(sorted(calls)))
    if not {"profiles", "flamegraph", "timeline", "top", "threads", "diff"} <= calls:
        fail("app.js does not call every endpoint the page needs: %s" % sorted(calls))

    # JavaScript syntax, when node is there.
    node = shutil.which("node")
    if node:
        for n in js:
            r = subprocess.run([node, "--check", os.path.join(WEB, n)], capture_output=True, text=True)
            if r.returncode != 0:
                fail("%s: %s" % (n, r.stderr.strip()))
        print("ok: node --check %s" % " ".join(js))
    else:
        print("note: node not installed; JavaScript syntax not checked")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/bin/sh
# The page in a real headless browser (Debian's chromium driven by
# playwright-core) against daemon/perfhubd, with recordings `perf record`
# makes here; see tests/web-e2e.js. Screenshots of every view go to
# tests/web-e2e.out/ in the build directory.
# Skips (77) without node, playwright-core (cd tests/web && npm ci),
# chromium ($PERFHUB_CHROMIUM, default /usr/bin/chromium), a working
# `perf record`, daemon/perfhubd or tests/web/hotspot.
src=${top_srcdir:-.}
bld=${top_builddir:-.}
driver=playwright-core
browser=${PERFHUB_CHROMIUM:-/usr/bin/chromium}
progs=tests/web/hotspot
. "$src/tests/web/e2e-requires.sh"
exec node "$src/tests/web-e2e.js" "$bld/daemon/perfhubd" "$bld/tests/web/hotspot" "$browser"

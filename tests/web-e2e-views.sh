#!/bin/sh
# The page's trend, compare-by-selector, off-CPU, callers/callees and
# annotate views in headless Chromium (Debian's chromium driven by
# playwright-core) against daemon/perfhubd, with recordings `perf record`
# makes here; see tests/web-e2e-views.js and tests/web/e2e-views.js.
# Screenshots go to tests/web-e2e-views-chromium.out/ in the build
# directory. Skips (77) without node, playwright-core (cd tests/web &&
# npm ci), chromium ($PERFHUB_CHROMIUM, default /usr/bin/chromium), a
# working `perf record` (and its sched:sched_switch tracepoint),
# daemon/perfhubd, tests/web/hotspot or tests/progs/regress.
src=${top_srcdir:-.}
bld=${top_builddir:-.}
driver=playwright-core
browser=${PERFHUB_CHROMIUM:-/usr/bin/chromium}
progs="tests/web/hotspot tests/progs/regress"
. "$src/tests/web/e2e-requires.sh"
exec node "$src/tests/web-e2e-views.js" chromium "$bld/daemon/perfhubd" "$bld/tests/web/hotspot" \
	"$bld/tests/progs/regress" "$browser"

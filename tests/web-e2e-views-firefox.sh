#!/bin/sh
# The page's trend, compare-by-selector, off-CPU, callers/callees and
# annotate views in headless Firefox (Debian's firefox-esr driven by
# puppeteer-core over WebDriver BiDi), the same checks as
# tests/web-e2e-views.sh; see tests/web-e2e-views.js. Screenshots go to
# tests/web-e2e-views-firefox.out/ in the build directory. Skips (77)
# without node, puppeteer-core (cd tests/web && npm ci), firefox
# ($PERFHUB_FIREFOX, default /usr/bin/firefox-esr), a working
# `perf record` (and its sched:sched_switch tracepoint),
# daemon/perfhubd, tests/web/hotspot or tests/progs/regress.
src=${top_srcdir:-.}
bld=${top_builddir:-.}
driver=puppeteer-core
browser=${PERFHUB_FIREFOX:-/usr/bin/firefox-esr}
progs="tests/web/hotspot tests/progs/regress"
. "$src/tests/web/e2e-requires.sh"
exec node "$src/tests/web-e2e-views.js" firefox "$bld/daemon/perfhubd" "$bld/tests/web/hotspot" \
	"$bld/tests/progs/regress" "$browser"

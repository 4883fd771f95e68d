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
browser=${PERFHUB_CHROMIUM:-/usr/bin/chromium}
command -v node >/dev/null 2>&1 || { echo "SKIP: node not installed"; exit 77; }
[ -d "$src/tests/web/node_modules/playwright-core" ] ||
	{ echo "SKIP: playwright-core not installed (cd tests/web && npm ci)"; exit 77; }
[ -x "$browser" ] || { echo "SKIP: no chromium at $browser"; exit 77; }
. "$src/tests/web/e2e-requires.sh"
[ -x "$bld/tests/progs/regress" ] || { echo "SKIP: tests/progs/regress not built"; exit 77; }
exec node "$src/tests/web-e2e-views.js" chromium "$bld/daemon/perfhubd" "$bld/tests/web/hotspot" \
	"$bld/tests/progs/regress" "$browser"

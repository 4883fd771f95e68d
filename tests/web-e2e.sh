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
browser=${PERFHUB_CHROMIUM:-/usr/bin/chromium}
command -v node >/dev/null 2>&1 || { echo "SKIP: node not installed"; exit 77; }
[ -d "$src/tests/web/node_modules/playwright-core" ] ||
	{ echo "SKIP: playwright-core not installed (cd tests/web && npm ci)"; exit 77; }
[ -x "$browser" ] || { echo "SKIP: no chromium at $browser"; exit 77; }
[ -x "$bld/daemon/perfhubd" ] || { echo "SKIP: daemon/perfhubd not built"; exit 77; }
[ -x "$bld/tests/web/hotspot" ] || { echo "SKIP: tests/web/hotspot not built"; exit 77; }
command -v perf >/dev/null 2>&1 || { echo "SKIP: perf not installed"; exit 77; }
probe=$(mktemp -d "${TMPDIR:-/tmp}/web-e2e-perf.XXXXXX") || exit 1
if ! perf record -q -o "$probe/p.data" -- true >/dev/null 2>&1; then
	rm -rf "$probe"
	echo "SKIP: perf record does not work here (not root? perf_event_paranoid?)"
	exit 77
fi
rm -rf "$probe"
exec node "$src/tests/web-e2e.js" "$bld/daemon/perfhubd" "$bld/tests/web/hotspot" "$browser"

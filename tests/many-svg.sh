#!/bin/sh
# perfhub flamegraph --svg in a real headless browser (Debian's chromium
# driven by playwright-core): a recording of tests/progs/regress drawn as
# an SVG, then its script zooms, searches and resets; see tests/many-svg.js.
# Skips (77) without node, playwright-core (cd tests/web && npm ci),
# chromium ($PERFHUB_CHROMIUM, default /usr/bin/chromium) or a working
# `perf record`.
src=${top_srcdir:-.}
bld=${top_builddir:-.}
browser=${PERFHUB_CHROMIUM:-/usr/bin/chromium}
command -v node >/dev/null 2>&1 || { echo "SKIP: node not installed"; exit 77; }
[ -d "$src/tests/web/node_modules/playwright-core" ] ||
	{ echo "SKIP: playwright-core not installed (cd tests/web && npm ci)"; exit 77; }
[ -x "$browser" ] || { echo "SKIP: no chromium at $browser"; exit 77; }
command -v perf >/dev/null 2>&1 || { echo "SKIP: perf not installed"; exit 77; }
work=$(mktemp -d "${PERFHUB_TEST_TMP:-/tmp}/many-svg.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
if ! perf record -q -g -o "$work/regress.data" -- "$bld/tests/progs/regress" --slow \
		>/dev/null 2>&1; then
	echo "SKIP: perf record does not work here (not root? perf_event_paranoid?)"
	exit 77
fi
"$bld/cli/perfhub" flamegraph "$work/regress.data" --svg --weight samples \
	--title 'regress <slow>' > "$work/flame.svg" || exit 1
"$bld/cli/perfhub" top "$work/regress.data" --json --limit 1000 > "$work/top.json" || exit 1
node "$src/tests/many-svg.js" "$work/flame.svg" "$work/top.json" "$browser"

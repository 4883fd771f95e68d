#!/bin/sh
# The page's trend, compare-by-selector, off-CPU, callers/callees and
# annotate views in a DOM against a stand-in server; see
# tests/web-views.js. Skips (77) without node or jsdom.
src=${top_srcdir:-.}
command -v node >/dev/null 2>&1 || { echo "SKIP: node not installed"; exit 77; }
[ -d "$src/tests/web/node_modules/jsdom" ] || { echo "SKIP: jsdom not installed (cd tests/web && npm ci)"; exit 77; }
exec node "$src/tests/web-views.js"

#!/bin/sh
# The page in a DOM against a stand-in server; see tests/web-page.js.
# jsdom is a test-only npm dependency (cd tests/web && npm ci; .ci/run
# does it). Skips (77) without node or jsdom.
src=${top_srcdir:-.}
command -v node >/dev/null 2>&1 || { echo "SKIP: node not installed"; exit 77; }
[ -d "$src/tests/web/node_modules/jsdom" ] || { echo "SKIP: jsdom not installed (cd tests/web && npm ci)"; exit 77; }
exec node "$src/tests/web-page.js"

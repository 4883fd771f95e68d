#!/bin/sh
# The page against the real perfhubd with real recordings; see
# tests/web-live.js. Skips (77) without node, jsdom, daemon/perfhubd or
# the shared corpus.
src=${top_srcdir:-.}
bld=${top_builddir:-.}
corpus="${PERFHUB_SHARED:-}/corpus/external"
command -v node >/dev/null 2>&1 || { echo "SKIP: node not installed"; exit 77; }
[ -d "$src/tests/web/node_modules/jsdom" ] || { echo "SKIP: jsdom not installed (cd tests/web && npm ci)"; exit 77; }
[ -x "$bld/daemon/perfhubd" ] || { echo "SKIP: daemon/perfhubd not built"; exit 77; }
[ -f "$corpus/mstange-sleep.data" ] || { echo "SKIP: no corpus at $corpus"; exit 77; }
exec node "$src/tests/web-live.js" "$bld/daemon/perfhubd" "$corpus"

#!/bin/sh
# The page in headless Firefox (Debian's firefox-esr, driven by
# puppeteer-core over WebDriver BiDi) against daemon/perfhubd, with
# recordings `perf record` makes here; see tests/web-e2e-firefox.js.
# Screenshots of every view go to tests/web-e2e-firefox.out/ in the
# build directory.
# Skips (77) without node, puppeteer-core (cd tests/web && npm ci),
# firefox ($PERFHUB_FIREFOX, default /usr/bin/firefox-esr), a working
# `perf record`, daemon/perfhubd or tests/web/hotspot.
src=${top_srcdir:-.}
bld=${top_builddir:-.}
driver=puppeteer-core
browser=${PERFHUB_FIREFOX:-/usr/bin/firefox-esr}
progs=tests/web/hotspot
. "$src/tests/web/e2e-requires.sh"
exec node "$src/tests/web-e2e-firefox.js" "$bld/daemon/perfhubd" "$bld/tests/web/hotspot" "$browser"

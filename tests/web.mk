# tests/web.mk: tests of the flame-graph page. The node-based ones skip
# without node; web-lint, web-page and web-views need `npm ci` in
# tests/web, web-e2e and web-e2e-views also chromium and a working
# `perf record`, their -firefox twins firefox-esr.
TESTS += tests/web-assets.py tests/web-model.sh tests/web-lint.sh tests/web-page.sh tests/web-views.sh \
	tests/web-live.sh tests/web-e2e.sh tests/web-e2e-views.sh
# The page in Firefox: once per CI run. The sanitizer build's daemon is
# already driven through the same endpoints by web-e2e, and the page is
# the same in both builds.
if !ENABLE_ASAN
TESTS += tests/web-e2e-firefox.sh tests/web-e2e-views-firefox.sh
endif
EXTRA_DIST += tests/web-assets.py tests/web-model.sh tests/web-model.js tests/web-lint.sh \
	tests/web-page.sh tests/web-page.js tests/web-views.sh tests/web-views.js tests/web-live.sh tests/web-live.js \
	tests/web/stub-server.js tests/web/stub-views.js tests/web/harness.js tests/web/e2e-common.js \
	tests/web/package.json tests/web/package-lock.json tests/web/eslint.config.js \
	tests/web-e2e.sh tests/web-e2e.js tests/web-e2e-firefox.sh tests/web-e2e-firefox.js tests/web/e2e-requires.sh \
	tests/web-e2e-views.sh tests/web-e2e-views-firefox.sh tests/web-e2e-views.js tests/web/e2e-views.js

# The workload web-e2e and web-e2e-views record (tests/progs/regress too):
# frame pointers, no inlining, and none of the sanitizer flags (their own
# CFLAGS/LDFLAGS replace AM_*), so that `perf record -g` sees every frame.
check_PROGRAMS += tests/web/hotspot
tests_web_hotspot_SOURCES = tests/web/hotspot.c
tests_web_hotspot_CFLAGS = -g -O1 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls
tests_web_hotspot_LDFLAGS =

# Screenshots of the browser tests' views.
clean-local: clean-web-e2e
clean-web-e2e:
	rm -rf tests/web-e2e.out tests/web-e2e-firefox.out tests/web-e2e-views-chromium.out tests/web-e2e-views-firefox.out
.PHONY: clean-web-e2e

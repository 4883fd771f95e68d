# tests/web.mk: tests of the flame-graph page. The node-based ones skip
# without node; web-lint and web-page need `npm ci` in tests/web.
TESTS += tests/web-assets.py tests/web-model.sh tests/web-lint.sh tests/web-page.sh tests/web-live.sh
EXTRA_DIST += tests/web-assets.py tests/web-model.sh tests/web-model.js tests/web-lint.sh \
	tests/web-page.sh tests/web-page.js tests/web-live.sh tests/web-live.js tests/web/stub-server.js tests/web/harness.js \
	tests/web/package.json tests/web/package-lock.json tests/web/eslint.config.js

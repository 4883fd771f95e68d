#!/bin/sh
# ESLint on the page's JavaScript and its tests (tests/web/eslint.config.js).
# eslint is a test-only npm dependency: `npm ci` in tests/web installs it
# (.ci/run does). Skips (77) when it is not installed.
src=${top_srcdir:-.}
eslint="$src/tests/web/node_modules/.bin/eslint"
command -v node >/dev/null 2>&1 || { echo "SKIP: node not installed"; exit 77; }
[ -x "$eslint" ] || { echo "SKIP: eslint not installed (cd tests/web && npm ci)"; exit 77; }
# ESLint only lints files under the directory it runs in.
cd "$src" || exit 1
"$eslint" --max-warnings 0 -c tests/web/eslint.config.js web/*.js tests/web-*.js tests/many-*.js tests/bench-web.js \
	tests/web/*.js &&
	echo "ok: eslint clean"

#!/bin/sh
# The README's test command must test everything on a fresh machine:
# - the README has one test command, `build-aux/install-deps --test && ...
#   make -j2 check`;
# - `install-deps --test` installs the npm packages of every test folder
#   that has a lock file (tests/web, tests/s3), so no page or S3 test skips
#   for want of them;
# - .ci/run runs that command as the README writes it (read from the
#   README) and no in-tree build or npm step of its own;
# - the README says where the recordings of other projects come from and
#   how to point the tests at them (PERFHUB_SHARED, corpus/external/).
set -u
src=${top_srcdir:-.}
fail=0
bad() { echo "FAIL: $*"; fail=1; }

cmds=$(grep -c '^    build-aux/install-deps --test ' "$src/README")
[ "$cmds" = 1 ] || bad "README has $cmds test commands (want one)"
cmd=$(sed -n 's/^    \(build-aux\/install-deps --test .*\)$/\1/p' "$src/README")
case $cmd in
*"make -j2 check") echo "ok: README test command: $cmd" ;;
*) bad "README test command does not end in 'make -j2 check': $cmd" ;;
esac

for lock in "$src"/tests/*/package-lock.json; do
	dir=tests/$(basename "$(dirname "$lock")")
	grep -q "$dir" "$src/build-aux/install-deps" ||
		bad "install-deps --test does not install the npm packages of $dir"
done
grep -q 'npm ci' "$src/build-aux/install-deps" || bad "install-deps runs no npm ci"
echo "ok: install-deps --test installs the npm packages of every test folder"

# .ci/run: the README's command, not its own variant of it
grep -q 'README' "$src/.ci/run" && grep -q 'install-deps --test' "$src/README" ||
	bad ".ci/run does not take its command from the README"
if grep -v '^[[:space:]]*#' "$src/.ci/run" | grep -q 'npm '; then
	bad ".ci/run runs npm itself"
fi
if grep -v '^[[:space:]]*#' "$src/.ci/run" | grep -q '&& \./configure\|^[[:space:]]*\./configure'; then
	bad ".ci/run configures the source tree itself"
fi
if grep -q '^[[:space:]]*build-aux/install-deps' "$src/.ci/run"; then
	bad ".ci/run calls install-deps outside the README's command"
fi
echo "ok: .ci/run runs the README's command and no in-tree build of its own"

grep -q 'PERFHUB_SHARED' "$src/README" && grep -q 'corpus/external/' "$src/README" ||
	bad "README does not say how to point the tests at the external recordings"
exit $fail

# What the browser tests (tests/web-e2e*.sh) need, sourced by them with
# $driver (the npm package that drives the browser), $browser (its path)
# and $progs (programs of the build they record) set: node, the driver,
# the browser, daemon/perfhubd, the programs and a working `perf record`.
# Exits 77 (skip) naming what is missing.
command -v node >/dev/null 2>&1 || { echo "SKIP: node not installed"; exit 77; }
[ -d "$src/tests/web/node_modules/$driver" ] ||
	{ echo "SKIP: $driver not installed (cd tests/web && npm ci)"; exit 77; }
[ -x "$browser" ] || { echo "SKIP: no browser at $browser (build-aux/install-deps --test)"; exit 77; }
[ -x "$bld/daemon/perfhubd" ] || { echo "SKIP: daemon/perfhubd not built"; exit 77; }
for p in $progs; do
	[ -x "$bld/$p" ] || { echo "SKIP: $p not built"; exit 77; }
done
command -v perf >/dev/null 2>&1 || { echo "SKIP: perf not installed"; exit 77; }
probe=$(mktemp -d "${TMPDIR:-/tmp}/web-e2e-perf.XXXXXX") || exit 1
if ! perf record -q -o "$probe/p.data" -- true >/dev/null 2>&1; then
	rm -rf "$probe"
	echo "SKIP: perf record does not work here (not root? perf_event_paranoid?)"
	exit 77
fi
rm -rf "$probe"

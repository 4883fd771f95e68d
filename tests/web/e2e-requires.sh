# What the browser tests (tests/web-e2e.sh, tests/web-e2e-firefox.sh)
# need besides the browser and its driver, sourced by them: node,
# daemon/perfhubd, tests/web/hotspot and a working `perf record`.
# Exits 77 (skip) naming what is missing.
command -v node >/dev/null 2>&1 || { echo "SKIP: node not installed"; exit 77; }
[ -x "$bld/daemon/perfhubd" ] || { echo "SKIP: daemon/perfhubd not built"; exit 77; }
[ -x "$bld/tests/web/hotspot" ] || { echo "SKIP: tests/web/hotspot not built"; exit 77; }
command -v perf >/dev/null 2>&1 || { echo "SKIP: perf not installed"; exit 77; }
probe=$(mktemp -d "${TMPDIR:-/tmp}/web-e2e-perf.XXXXXX") || exit 1
if ! perf record -q -o "$probe/p.data" -- true >/dev/null 2>&1; then
	rm -rf "$probe"
	echo "SKIP: perf record does not work here (not root? perf_event_paranoid?)"
	exit 77
fi
rm -rf "$probe"

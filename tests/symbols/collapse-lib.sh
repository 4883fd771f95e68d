# collapse-lib.sh - sourced by the real-recording collapse tests: paths,
# a scratch directory, record and compare. Exits 77 (skip) when perf cannot
# record here.
: "${top_builddir:=.}" "${top_srcdir:=.}" "${PERFHUB_TEST_TMP:=/tmp}"
PERFHUB="$top_builddir/cli/perfhub"
PROGS="$top_builddir/tests/progs"
PROGS_SRC="$top_srcdir/tests/progs"	# sources of programs a test builds itself
ADDR_SAMPLES="$top_builddir/tests/symbols/addr-samples"
CC=${CC:-cc}
FOLD="python3 $top_srcdir/tests/symbols/stackcollapse.py"
T="$PERFHUB_TEST_TMP/$(basename "$0" .sh).$$"
mkdir -p "$T" || exit 99
trap "${KEEP_T:+:} rm -rf \"\$T\"" EXIT
command -v perf >/dev/null 2>&1 || { echo "SKIP: perf not installed"; exit 77; }
perf record -q -o "$T/probe.data" -g true >/dev/null 2>&1 ||
	{ echo "SKIP: perf record does not work here"; exit 77; }
fail=0
# the calls program's own frames (tests/progs/calls.c, libsymlib.so)
CALLS_FRAMES=main,outer_a,middle_b,leaf_spin,outer_c,recurse,lib_work,lib_inner

# compare NAME DATA MIN [collapse options] -- [perf script options] -- [fold options] [-- user frames]
# perfhub collapse against perf script folded by the stackcollapse rules;
# prints the agreement, sets fail=1 under MIN percent or when the named
# frames (the program's own) differ at all
compare() {
	name=$1 data=$2 min=$3
	shift 3
	copts="" popts="" fopts="" user=""
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do copts="$copts $1"; shift; done
	[ $# -gt 0 ] && shift
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do popts="$popts $1"; shift; done
	[ $# -gt 0 ] && shift
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do fopts="$fopts $1"; shift; done
	[ $# -gt 0 ] && shift
	[ $# -gt 0 ] && user="--user-of $1"
	# shellcheck disable=SC2086
	if ! "$PERFHUB" collapse "$data" $copts >"$T/$name.ours" 2>"$T/$name.err"; then
		echo "FAIL $name: perfhub collapse failed:"; cat "$T/$name.err"; fail=1; return
	fi
	# shellcheck disable=SC2086
	perf script -i "$data" $popts 2>/dev/null | $FOLD fold $fopts >"$T/$name.perf"
	# only_pids "PID ...": the lines of those processes (folded with
	# their pids), the whole of ours kept as NAME.all.ours
	if [ -n "${only_pids:-}" ]; then
		for side in ours perf; do
			mv "$T/$name.$side" "$T/$name.all.$side"
			awk -v pids=" $only_pids " '{ f = $0; sub(/;.*/, "", f); sub(/ [0-9]+$/, "", f);
				n = split(f, a, "-"); if (index(pids, " " a[n] " ")) print }' \
				"$T/$name.all.$side" >"$T/$name.$side"
		done
	fi
	# shellcheck disable=SC2086
	$FOLD compare "$T/$name.ours" "$T/$name.perf" --min "$min" --label "$name" $user || {
		echo "FAIL $name"; fail=1; }
}

# record OUT [perf record options] -- command...
record() {
	out=$1; shift
	perf record -q -o "$out" "$@" >"$T/record.log" 2>&1
}

# expect NAME FILE PATTERN WHAT: fail unless FILE has a line matching PATTERN
expect() {
	grep -q -- "$3" "$2" || { echo "FAIL $1: $4"; fail=1; }
}

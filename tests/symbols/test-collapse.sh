#!/bin/sh
# test-collapse.sh - perfhub collapse against `perf script` folded with the
# stackcollapse-perf.pl rules (tests/symbols/stackcollapse.py), on
# recordings of the test programs made now. Prints the agreement of each
# case; skips (77) when perf cannot record here.
set -u
: "${top_builddir:=.}" "${top_srcdir:=.}" "${PERFHUB_TEST_TMP:=/tmp}"
PERFHUB="$top_builddir/cli/perfhub"
PROGS="$top_builddir/tests/progs"
FOLD="python3 $top_srcdir/tests/symbols/stackcollapse.py"
T="$PERFHUB_TEST_TMP/collapse.$$"
mkdir -p "$T" || exit 99
trap 'rm -rf "$T"' EXIT
command -v perf >/dev/null 2>&1 || { echo "perf not installed"; exit 77; }
perf record -q -o "$T/probe.data" -g true >/dev/null 2>&1 || { echo "perf record does not work here"; exit 77; }

fail=0
CALLS_FRAMES=main,outer_a,middle_b,leaf_spin,outer_c,recurse,lib_work,lib_inner
CXX_FRAMES=main,perfhub_test::overloaded,perfhub_test::depth,perfhub_test::Worker,perfhub_test::hidden_spin

# compare NAME DATA MIN [collapse options] -- [perf script options] -- [fold options] [-- user frames]
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
	# shellcheck disable=SC2086
	$FOLD compare "$T/$name.ours" "$T/$name.perf" --min "$min" --label "$name" $user || {
		echo "FAIL $name"; fail=1; }
}

record() {	# record OUT [perf record options] -- command...
	out=$1; shift
	perf record -q -o "$out" "$@" >"$T/record.log" 2>&1
}

# frame pointers, C with a shared library
record "$T/calls.data" -g -- "$PROGS/calls" 0.6 || { echo "perf record -g failed"; cat "$T/record.log"; exit 77; }
compare calls "$T/calls.data" 99 -- -- -- "$CALLS_FRAMES"
compare calls-samples "$T/calls.data" 99 --weight samples -- -F comm,tid,time,event,ip,sym,dso -- -- "$CALLS_FRAMES"
compare calls-tid "$T/calls.data" 99 --tid -- -F comm,pid,tid,time,period,event,ip,sym,dso -- --tid -- "$CALLS_FRAMES"
compare calls-pid "$T/calls.data" 99 --pid -- -F comm,pid,tid,time,period,event,ip,sym,dso -- --pid -- "$CALLS_FRAMES"
compare calls-kernel "$T/calls.data" 99 --kernel -- -- --kernel -- "$CALLS_FRAMES"
grep -q 'main;outer_c;recurse;recurse;.*leaf_spin' "$T/calls.ours" ||
	{ echo "FAIL calls: the known chain main;outer_c;recurse...;leaf_spin is missing"; fail=1; }
grep -q 'main;.*lib_inner' "$T/calls.ours" ||
	{ echo "FAIL calls: the shared library frame lib_inner is missing"; fail=1; }

# --format=json: a tree whose leaf paths carry the folded counts
if "$PERFHUB" collapse "$T/calls.data" --format=json >"$T/calls.json" 2>/dev/null; then
	python3 - "$T/calls.json" "$T/calls.ours" <<'PY' || { echo "FAIL json: tree and folded stacks differ"; fail=1; }
import json, sys
tree = json.load(open(sys.argv[1]))
folded = {}
for line in open(sys.argv[2]):
    k, _, v = line.rstrip('\n').rpartition(' ')
    folded[k] = int(v)
got = {}
def walk(node, path):
    own = node['value'] - sum(c['value'] for c in node['children'])
    if own:
        got[';'.join(path)] = own
    for c in node['children']:
        walk(c, path + [c['name']])
assert tree['name'] == 'all' and tree['value'] == sum(folded.values())
for c in tree['children']:
    walk(c, [c['name']])
sys.exit(0 if got == folded else 1)
PY
else
	echo "FAIL json: perfhub collapse --format=json failed"; fail=1
fi

# C++: namespaces, templates, overloads, an anonymous namespace
record "$T/cxx.data" -g -- "$PROGS/cxx" 0.5 && {
	compare cxx "$T/cxx.data" 99 -- -- -- "$CXX_FRAMES"
	grep -q 'perfhub_test::depth<3>;perfhub_test::depth<2>' "$T/cxx.ours" ||
		{ echo "FAIL cxx: demangled template names missing"; fail=1; }
}

# zstd-compressed records
record "$T/z.data" -g -z -- "$PROGS/calls" 0.3 && compare zstd "$T/z.data" 99 -- -- -- "$CALLS_FRAMES"

# pipe mode
if perf record -q -g -o - "$PROGS/calls" 0.3 2>/dev/null >"$T/pipe.data"; then
	compare pipe "$T/pipe.data" 99 -- -- -- "$CALLS_FRAMES"
fi

# a perf.data directory (--threads)
record "$T/threads.data" -g --threads -- "$PROGS/calls" 0.3 &&
	compare threads "$T/threads.data" 99 -- -- -- "$CALLS_FRAMES"

# several events: the first that samples by default, or the one named
record "$T/multi.data" -g -e cpu-clock -e task-clock -- "$PROGS/calls" 0.3 && {
	compare multi-default "$T/multi.data" 99 -- -- -- "$CALLS_FRAMES"
	compare multi-task-clock "$T/multi.data" 99 --event task-clock -- -- --event task-clock -- "$CALLS_FRAMES"
}

# after perf inject -b (build-ids injected)
if perf inject -b -i "$T/calls.data" -o "$T/inject.data" 2>/dev/null; then
	compare inject "$T/inject.data" 99 -- -- -- "$CALLS_FRAMES"
fi

# --call-graph dwarf on a program without frame pointers
record "$T/dwarf.data" --call-graph dwarf -- "$PROGS/calls_nofp" 2 && {
	# frames named from DWARF as perf does (addr2line -i), the program's own
	# frames exactly (ld.so's start-up: tests/symbols/test-startup.sh)
	compare dwarf "$T/dwarf.data" 97 -- -- -- "$CALLS_FRAMES"
	grep -q 'main;outer_a;middle_b;leaf_spin\|main;outer_a;leaf_spin' "$T/dwarf.ours" ||
		{ echo "FAIL dwarf: no unwound stack main;outer_a;...;leaf_spin"; fail=1; }
}

# comm changes (prctl, fork inheritance, exec into calls)
record "$T/fork.data" -g -- "$PROGS/forker" "$PROGS/calls" && {
	compare fork-tid "$T/fork.data" 99 --tid -- -F comm,pid,tid,time,period,event,ip,sym,dso -- --tid -- \
		"main,parent_spin,child_spin,$CALLS_FRAMES"
	grep -q '^fk-renamed;.*child_spin' "$T/fork-tid.ours" 2>/dev/null ||
		grep -q '^fk-renamed-[0-9]*/[0-9]*;.*child_spin' "$T/fork-tid.ours" ||
		{ echo "FAIL fork: the child does not inherit the renamed comm"; fail=1; }
	grep -q '^calls-[0-9]*/[0-9]*;.*leaf_spin' "$T/fork-tid.ours" ||
		{ echo "FAIL fork: no samples under the comm set at exec"; fail=1; }
}

# system-wide with kernel stacks; a tracepoint
if record "$T/sys.data" -a -g -- "$PROGS/calls" 0.4; then
	compare system-wide "$T/sys.data" 97 -- -- --
	compare system-wide-kernel "$T/sys.data" 97 --kernel -- -- --kernel
fi
if record "$T/tp.data" -g -e sched:sched_switch -a -- "$PROGS/forker"; then
	compare tracepoint "$T/tp.data" 97 -- -- --
	# a dying task samples with pid/tid -1; perf script prints "-1", which
	# the stackcollapse rules cannot parse, so the pipeline drops it: make
	# one such sample by rewriting the first sample's pid/tid
	perf report -D -i "$T/tp.data" 2>/dev/null |
		sed -n 's/^[0-9]* [0-9]* \(0x[0-9a-f]*\) \[\(0x[0-9a-f]*\)\]: PERF_RECORD_SAMPLE([^)]*): \([0-9]*\)\/\([0-9]*\):.*/\1 \2 \3 \4/p' |
		head -1 >"$T/tp.first"
	if [ -s "$T/tp.first" ] && python3 - "$T/tp.data" "$T/tp-dying.data" $(cat "$T/tp.first") <<'PY'
import struct, sys
src, dst, off, size, pid, tid = sys.argv[1], sys.argv[2], int(sys.argv[3], 16), int(sys.argv[4], 16), int(sys.argv[5]), int(sys.argv[6])
data = bytearray(open(src, 'rb').read())
at = data.find(struct.pack('<II', pid, tid), off + 8, off + size)
if at < 0:
    sys.exit(1)
data[at:at + 8] = b'\xff' * 8
open(dst, 'wb').write(data)
PY
	then
		compare tracepoint-dying "$T/tp-dying.data" 97 -- -- --
		if grep -q '^:-1' "$T/tracepoint-dying.ours"; then
			echo "FAIL tracepoint-dying: a pid -1 sample is folded"; fail=1
		fi
	fi
fi

# a binary replaced after recording (different build-id): no wrong names
mkdir -p "$T/home" "$T/bin"
cp "$PROGS/calls" "$T/bin/calls"
if HOME="$T/home" perf record -q --no-buildid-cache -g -o "$T/replaced.data" "$T/bin/calls" 0.2 >/dev/null 2>&1; then
	cp "$PROGS/cxx" "$T/bin/calls"
	HOME="$T/home" "$PERFHUB" collapse "$T/replaced.data" >"$T/replaced.ours" 2>"$T/replaced.err"
	if grep -q 'perfhub_test\|overloaded\|depth<' "$T/replaced.ours"; then
		echo "FAIL replaced: names from the replacement binary"; fail=1
	fi
	grep -q 'outer_a' "$T/replaced.ours" && { echo "FAIL replaced: names without a binary"; fail=1; }
	grep -q 'build-id mismatch' "$T/replaced.err" ||
		{ echo "FAIL replaced: no build-id mismatch warning"; cat "$T/replaced.err"; fail=1; }
	[ "$(grep -c 'build-id mismatch' "$T/replaced.err")" -le 1 ] ||
		{ echo "FAIL replaced: the warning is repeated"; fail=1; }
	echo "replaced binary: $(grep -c '\[calls\]' "$T/replaced.ours") stacks keep [calls] frames, no wrong names"
fi
exit $fail

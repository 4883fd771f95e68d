#!/bin/sh
# Recordings made by perf here and now (plain, -g, --call-graph dwarf, -z,
# pipe mode, --threads directory, several events, a tracepoint,
# --switch-events --namespaces, perf inject -b, perf stat record): pd-walk's record counts by type, total,
# and samples per event must equal `perf report --stats` on the same file.
# Skips (77) where perf cannot record.
set -u
walk="${top_builddir:-.}/tests/pd-walk"
tmp="${PERFHUB_TEST_TMP:-/tmp}/perf-stats.$$"
command -v perf > /dev/null 2>&1 || { echo "SKIP: no perf"; exit 77; }
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
HOME="$tmp"; export HOME	# no ~/.debug cache outside the test
work='i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done; sleep 0.01'

if ! perf record -q -e cpu-clock -o "$tmp/probe.data" -- true > /dev/null 2>&1; then
	echo "SKIP: perf record does not work here"
	exit 77
fi

fail=0
n=0

# perf report --stats into "record NAME: N", "total: N", "event: NAME samples=N"
perf_counts() {
	perf report --stats -i "$1" 2> /dev/null | awk '
		/^Aggregated stats:/ { ev = ""; next }
		/TOTAL events:/ { print "total: " $3; next }
		/ stats:$/ { sub(/ stats:$/, ""); sub(/^ +/, ""); ev = $0; next }
		/ events:/ {
			name = $1; count = $3
			if (ev != "") print "event: " ev " samples=" count
			else print "record " name ": " count
		}' | sort
}

walk_counts() {
	"$walk" "$1" | awk '
		/^record / || /^total: / { print; next }
		/^event: / {
			line = $0; sub(/^event: /, "", line)
			name = line; sub(/ samples=.*/, "", name)
			s = line; sub(/.* samples=/, "", s); sub(/ .*/, "", s)
			if (s != "0") print "event: " name " samples=" s
		}' | sort
}

check() {
	label=$1; data=$2
	n=$((n + 1))
	if [ ! -e "$data" ]; then
		echo "FAIL $label: perf record made no output"
		fail=$((fail + 1))
		return
	fi
	perf_counts "$data" > "$tmp/perf.txt"
	walk_counts "$data" > "$tmp/walk.txt"
	if [ ! -s "$tmp/perf.txt" ]; then
		echo "FAIL $label: perf report --stats printed nothing"
		fail=$((fail + 1))
	elif ! cmp -s "$tmp/perf.txt" "$tmp/walk.txt"; then
		echo "FAIL $label: counts differ from perf report --stats (< perf, > pd-walk):"
		diff "$tmp/perf.txt" "$tmp/walk.txt" | sed 's/^/    /'
		fail=$((fail + 1))
	else
		echo "ok   $label: $(grep -c . "$tmp/perf.txt") counts agree" \
			"($(sed -n 's/^record SAMPLE: //p' "$tmp/walk.txt") samples)"
	fi
}

record() {
	label=$1; shift
	perf record -q "$@" -- sh -c "$work" > /dev/null 2> "$tmp/rec.err" ||
		echo "note $label: perf record said: $(head -n 2 "$tmp/rec.err")"
}

record plain -e cpu-clock -o "$tmp/plain.data"
check plain "$tmp/plain.data"
record callgraph -e cpu-clock -g -o "$tmp/g.data"
check "-g" "$tmp/g.data"
record dwarf -e cpu-clock --call-graph dwarf,4096 -o "$tmp/dwarf.data"
check "--call-graph dwarf" "$tmp/dwarf.data"
record zstd -e cpu-clock -z -o "$tmp/z.data"
check "-z" "$tmp/z.data"
record multi -e cpu-clock,task-clock,page-faults -o "$tmp/multi.data"
check "several events" "$tmp/multi.data"
record tracepoint -e sched:sched_switch -e cpu-clock -o "$tmp/tp.data"
check "tracepoint" "$tmp/tp.data"
record switch -e cpu-clock --switch-events --namespaces -o "$tmp/sw.data"
check "--switch-events --namespaces" "$tmp/sw.data"
record threads -e cpu-clock --threads -o "$tmp/threads.data"
check "--threads (directory)" "$tmp/threads.data"
perf inject -b -i "$tmp/g.data" -o "$tmp/inject.data" > /dev/null 2>&1
check "perf inject -b" "$tmp/inject.data"
perf stat record -o "$tmp/stat.data" -- sh -c "$work" > /dev/null 2>&1
check "perf stat record" "$tmp/stat.data"
perf record -q -e cpu-clock -o - -- sh -c "$work" > "$tmp/pipe.data" 2> /dev/null
check "pipe mode" "$tmp/pipe.data"
perf record -q -e cpu-clock -g -o - -- sh -c "$work" > "$tmp/pipeg.data" 2> /dev/null
check "pipe mode -g" "$tmp/pipeg.data"
# (perf 6.1 cannot read back its own pipe-mode -z output: "Couldn't
# decompress data"; the corpus test covers compressed pipe files.)

echo "$n recordings compared, $fail failures"
[ $fail -eq 0 ]

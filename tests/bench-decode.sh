#!/bin/sh
# bench-decode.sh [FILE] - parser speed against perf on one recording.
# Records a >= 200 MB file (cpu-clock, -g, system wide) when none is given,
# then prints: libperfhub-parse decoding every sample field and counting
# only (MB/s and records/s by wall and CPU time, peak RSS), the wall time of
# `perf report --stats` and of `perf script`, and the ratios.
set -u
bin="${top_builddir:-.}/tests"
[ -x "$bin/bench-decode" ] || bin=tests
file="${1:-}"
tmp="${PERFHUB_TEST_TMP:-/tmp}/bench.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
if [ -z "$file" ]; then
	file="$tmp/bench.data"
	echo "recording $file (>= 200 MB) ..."
	HOME="$tmp" perf record -q -e cpu-clock -c 20000 -g -a -o "$file" -- sh -c '
		for j in 1 2; do (i=0; while [ $i -lt 1200000 ]; do i=$((i+1)); done) & done; wait' \
		> /dev/null 2>&1 || { echo "perf record failed"; exit 1; }
fi
cat "$file" > /dev/null 2>&1	# page cache, as the goals assume
size=$(stat -c %s "$file" 2>/dev/null || du -sb "$file" | cut -f1)
echo "file: $file ($size bytes)"
now() { date +%s.%N; }
echo "libperfhub-parse, every sample field decoded:"
"$bin/bench-decode" "$file"
echo "libperfhub-parse, counting only:"
"$bin/bench-decode" --count-only "$file"
t0=$(now); HOME="$tmp" perf report --stats -i "$file" > /dev/null 2>&1; t1=$(now)
stats=$(echo "$t1 - $t0" | bc)
echo "perf report --stats: wall_s $stats"
t0=$(now); HOME="$tmp" perf script -i "$file" > /dev/null 2>&1; t1=$(now)
script=$(echo "$t1 - $t0" | bc)
echo "perf script: wall_s $script ($(echo "$size / $script / 1000000" | bc) MB/s)"
ours=$("$bin/bench-decode" "$file" | sed -n 's/^wall_s \([0-9.]*\) .*/\1/p')
echo "ratios (wall): perf report --stats / ours = $(echo "scale=2; $stats / $ours" | bc)," \
	"perf script / ours = $(echo "scale=1; $script / $ours" | bc)"

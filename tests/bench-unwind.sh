#!/bin/sh
# bench-unwind.sh: DWARF unwinding throughput (a benchmark, not a test).
# Records tests/unwind-deep.c (built -O0 -g -fomit-frame-pointer) with
# perf record --call-graph dwarf, then prints samples/s unwound by
# tests/unwind-walk --bench (unwinding time only) and the wall time of
# the whole walk next to perf script's on the same file.
# Run from the build directory (make bench). ROUNDS and FREQ tune the size.
srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=$(pwd)
walk=$builddir/tests/unwind-walk
tmp=${PERFHUB_TEST_TMP:-$builddir/tests/tmp}/bench-unwind
rounds=${ROUNDS:-4000}
freq=${FREQ:-4000}
mkdir -p "$tmp" || exit 1
command -v perf >/dev/null || { echo "bench-unwind: perf not installed, skipped"; exit 0; }
[ -x "$walk" ] || { echo "bench-unwind: build $walk first (make check)"; exit 1; }
${CC:-cc} -O0 -g -fomit-frame-pointer -pthread -o "$tmp/deep" "$srcdir/tests/unwind-deep.c" || exit 1
if ! perf record -q --call-graph dwarf -e cpu-clock:u -F "$freq" -o "$tmp/deep.data" \
	"$tmp/deep" "$rounds" >/dev/null 2>&1; then
	echo "bench-unwind: perf record --call-graph dwarf failed, skipped"
	exit 0
fi
size=$(wc -c < "$tmp/deep.data")
echo "recording: $size bytes, --call-graph dwarf (8 KiB stacks)"
"$walk" --bench "$tmp/deep.data" || exit 1
now() { date +%s.%N; }
t0=$(now); "$walk" "$tmp/deep.data" >/dev/null 2>&1; t1=$(now)
perf script -i "$tmp/deep.data" >/dev/null 2>&1; t2=$(now)
echo "$t0 $t1 $t2" | awk '{ printf "unwind-walk (read + unwind + print): %.3f s; perf script: %.3f s; %.1fx\n", $2 - $1, $3 - $2, ($3 - $2) / ($2 - $1) }'

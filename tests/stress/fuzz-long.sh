#!/bin/sh
# fuzz-long.sh [SECONDS] - the parser fuzzer for a long run outside CI
# (default 1800 s; CI runs 60 s). Builds tests/fuzz-parser with
# --enable-fuzzing CC=clang in $FUZZ_BUILD (default ./build-fuzz-long),
# seeds it from tests/fuzz-corpus/ and the small recordings of the shared
# corpus, and keeps going after a crash (libFuzzer fork mode): every
# crash, timeout or out-of-memory input is written to
# tests/fuzz-corpus/known-crashes/, which `make check` replays (printed as
# KNOWN until the reader is fixed; then move the file up into
# tests/fuzz-corpus/ so it guards the fix). `make fuzz-long` runs this.
set -eu
secs=${1:-1800}
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD:-$(pwd)/build-fuzz-long}
shared=${PERFHUB_SHARED:-$src/../shared}
crashes=$src/tests/fuzz-corpus/known-crashes

mkdir -p "$build" "$crashes"
if [ ! -x "$build/tests/fuzz-parser" ]; then
	echo "building the fuzzer in $build"
	(cd "$build" && "$src/configure" --enable-fuzzing CC=clang >configure.log 2>&1 &&
	 make -j2 tests/fuzz-parser >make.log 2>&1) || {
		echo "fuzz-long: cannot build tests/fuzz-parser (see $build/*.log)" >&2; exit 1; }
fi
corpus=$build/corpus
mkdir -p "$corpus"
find "$src/tests/fuzz-corpus" -maxdepth 1 -type f -exec cp {} "$corpus/" \;
for f in "$shared"/corpus/external/*; do
	case "$f" in *.md) continue;; esac
	[ -f "$f" ] && [ "$(stat -c %s "$f")" -le 262144 ] && cp "$f" "$corpus/"
done
before=$(ls "$crashes" | wc -l)
log=$build/fuzz-long.log
echo "fuzzing the parser for $secs s (log: $log)"
start=$(date +%s)
# -fork=1 with -ignore_*: a crash is saved and the run goes on
"$build/tests/fuzz-parser" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
	-max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -max_len=262144 \
	-artifact_prefix="$crashes/" "$corpus" >"$log" 2>&1 || true
end=$(date +%s)
after=$(ls "$crashes" | wc -l)
echo "ran $((end - start)) s; corpus now $(ls "$corpus" | wc -l) inputs"
grep -E "^#[0-9]+: cov" "$log" | tail -1 || true
if [ "$after" -gt "$before" ]; then
	echo "NEW: $((after - before)) crashing inputs in $crashes:"
	ls -t "$crashes" | head -n $((after - before))
	exit 1
fi
echo "no crash found"

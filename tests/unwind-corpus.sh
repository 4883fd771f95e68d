#!/bin/sh
# unwind-corpus.sh: unwind-walk over every recording of the external
# corpus (many perf versions and architectures; the binaries they name
# are mostly absent here, or other builds). The walk must end with exit
# status 0 or 1 (a file the reader refuses) within the time limit: never
# a crash, never a hang. Skips when the corpus is not there.
corpus=${PERFHUB_SHARED:-}/corpus/external
walk=${top_builddir:-.}/tests/unwind-walk
[ -d "$corpus" ] || { echo "SKIP: no corpus at $corpus"; exit 77; }
n=0
bad=0
for f in "$corpus"/*; do
	case $f in *.md) continue ;; esac
	[ -f "$f" ] || continue
	n=$((n + 1))
	out=$(timeout 120 "$walk" --bench "$f" 2>&1)
	rc=$?
	if [ $rc -gt 1 ]; then
		echo "FAIL: $(basename "$f"): exit status $rc: $out"
		bad=$((bad + 1))
	else
		echo "ok ($rc): $(basename "$f") $(echo "$out" | head -1)"
	fi
done
echo "$n recordings walked, $bad failed"
[ $n -gt 0 ] || { echo "SKIP: empty corpus"; exit 77; }
[ $bad -eq 0 ]

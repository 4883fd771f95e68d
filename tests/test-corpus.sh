#!/bin/sh
# Every recording of the external corpus parses as its SOURCES.md says:
# sample count, number of events, mode, byte order, version, zstd output,
# and the corrupted one fails naming its offset. Each file is read three
# ways (mapped, streamed through stdin, time-ordered) and the ways must agree.
# The table is tests/corpus-expect.tsv; a corpus file missing from it fails.
set -u
corpus="${PERFHUB_SHARED:-}/corpus/external"
walk="${top_builddir:-.}/tests/pd-walk"
table="${top_srcdir:-.}/tests/corpus-expect.tsv"
tmp="${PERFHUB_TEST_TMP:-/tmp}/corpus.$$"

if [ ! -d "$corpus" ]; then
	echo "SKIP: no corpus at $corpus"
	exit 77
fi
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0

field() { sed -n "s/^$1: //p" "$2" | head -n 1; }

while IFS="$(printf '\t')" read -r file outcome samples events mode order version decomp must; do
	case "$file" in ''|'#'*) continue ;; esac
	n=$((n + 1))
	f="$corpus/$file"
	bad() { echo "FAIL $file: $*"; fail=$((fail + 1)); }
	if [ ! -f "$f" ]; then
		bad "missing from the corpus"
		continue
	fi
	"$walk" --fields "$f" > "$tmp/map" 2>&1; rc=$?
	"$walk" --fields --stream - < "$f" > "$tmp/stream" 2>&1; src=$?
	"$walk" --fields --ordered "$f" > "$tmp/ordered" 2>&1; orc=$?
	if [ "$outcome" = ok ] && [ $rc -ne 0 ]; then
		bad "expected to parse, got: $(grep '^error' "$tmp/map")"
		continue
	fi
	if [ "$outcome" = error ] && [ $rc -ne 1 ]; then
		bad "expected an error, exit status $rc"
		continue
	fi
	got=$(field samples "$tmp/map")
	[ "$got" = "$samples" ] || bad "samples $got, expected $samples"
	got=$(field events "$tmp/map")
	[ "$events" = - ] || [ "$got" = "$events" ] || bad "events $got, expected $events"
	got=$(field mode "$tmp/map")
	[ "$got" = "$mode" ] || bad "mode $got, expected $mode"
	got=$(field byte_order "$tmp/map")
	[ "$got" = "$order" ] || bad "byte order $got, expected $order"
	got=$(field version "$tmp/map")
	[ "$got" = "$version" ] || bad "version $got, expected $version"
	got=$(field bytes_decompressed "$tmp/map")
	[ "$got" = "$decomp" ] || bad "decompressed $got bytes, expected $decomp"
	if [ "$must" != - ] && ! grep -q -- "$must" "$tmp/map"; then
		bad "output lacks '$must'"
	fi
	# per-event sample counts add up to the SAMPLE records
	sum=$(sed -n 's/^event: .* samples=\([0-9]*\) .*/\1/p' "$tmp/map" | awk '{s += $1} END {print s + 0}')
	[ "$outcome" = error ] || [ "$sum" = "$samples" ] || bad "samples per event sum to $sum"
	# streamed through a pipe: the same records, fields and names
	[ $src -eq $rc ] || bad "streamed: exit status $src, mapped $rc"
	if ! cmp -s "$tmp/map" "$tmp/stream"; then
		bad "streamed output differs: $(diff "$tmp/map" "$tmp/stream" | head -n 3 | tr '\n' ' ')"
	fi
	# time-ordered: the same counts, and samples in time order
	[ $orc -eq $rc ] || bad "ordered: exit status $orc, unordered $rc"
	[ "$(field samples "$tmp/ordered")" = "$samples" ] || [ "$outcome" = error ] ||
		bad "ordered: samples $(field samples "$tmp/ordered")"
	got=$(field order_errors "$tmp/ordered")
	[ "$outcome" = error ] || [ "$got" = 0 ] || bad "ordered: $got samples out of time order"
done < "$table"

# every recording in the corpus has a row
for f in "$corpus"/*; do
	b=$(basename "$f")
	case "$b" in *.md) continue ;; esac
	if ! grep -q "^$b	" "$table"; then
		echo "FAIL $b: not in $table"
		fail=$((fail + 1))
	fi
done

echo "$n recordings checked, $fail failures"
[ $fail -eq 0 ]

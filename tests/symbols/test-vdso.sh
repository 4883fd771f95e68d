#!/bin/sh
# test-vdso.sh - [vdso] frames named from the vdso image that perf record
# saves in its build-id cache ($HOME/.debug/.build-id/XX/REST/vdso), or,
# for a recording without build-ids, from the running kernel's, as perf
# script names them. A program spending its time in clock_gettime
# is recorded with a fresh HOME, so the image comes from this recording.
# Skips (77) when perf cannot record.
set -u
: "${top_builddir:=.}" "${top_srcdir:=.}"
. "$top_srcdir/tests/symbols/collapse-lib.sh"

mkdir -p "$T/home" || exit 99
HOME="$T/home"
export HOME
record "$T/vdso.data" -g -- "$PROGS/vdsoloop" 0.3 ||
	{ echo "FAIL: perf record"; cat "$T/record.log"; exit 1; }
if ! ls "$T"/home/.debug/.build-id/*/*/vdso >/dev/null 2>&1; then
	echo "SKIP: perf record saved no vdso image in its build-id cache"; exit 77
fi
compare vdso "$T/vdso.data" 99
expect vdso "$T/vdso.ours" ';__vdso_clock_gettime ' "the vdso's exported function is not named"
# without the cache the frames cannot be named: perf and perfhub agree on that too
rm -rf "$T/home/.debug"
compare vdso-nocache "$T/vdso.data" 99
if grep -q '__vdso_clock_gettime' "$T/vdso-nocache.ours"; then
	echo "FAIL vdso-nocache: a vdso symbol named without the image"; fail=1
fi
# recorded without build-ids (-B, and -z, whose list carries none): perf
# script names the frames from its own vdso, the running kernel's, and so
# must perfhub (both read this machine's: the recording says the running
# kernel made it)
for how in -B -z; do
	rm -rf "$T/home/.debug"
	record "$T/vdso$how.data" -g $how -- "$PROGS/vdsoloop" 0.3 ||
		{ echo "FAIL: perf record $how"; cat "$T/record.log"; fail=1; continue; }
	compare "vdso$how" "$T/vdso$how.data" 99
	if grep -q ';__vdso_clock_gettime ' "$T/vdso$how.perf"; then
		expect "vdso$how" "$T/vdso$how.ours" ';__vdso_clock_gettime ' \
			"perf script names the vdso's function from the running kernel's vdso; perfhub does not"
	else
		echo "note vdso$how: perf script left the vdso's frames unnamed here"
	fi
done
exit $fail

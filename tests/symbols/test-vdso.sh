#!/bin/sh
# test-vdso.sh - [vdso] frames named from the vdso image that perf record
# saves in its build-id cache ($HOME/.debug/.build-id/XX/REST/vdso), as
# perf script names them. A program spending its time in clock_gettime
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
exit $fail

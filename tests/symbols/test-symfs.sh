#!/bin/sh
# test-symfs.sh - perfhub collapse --symfs DIR against perf script --symfs
# DIR: the calls program (and its shared library) recorded at one path,
# then moved under a symfs root at that same path. Names must still
# resolve, and agree with perf's. perf's build-id cache is kept out of it
# (an empty HOME, perf record -N), so the binary is found under the root
# or not at all. Skips (77) when perf cannot record.
set -u
: "${top_builddir:=.}" "${top_srcdir:=.}"
. "$top_srcdir/tests/symbols/collapse-lib.sh"

mkdir -p "$T/home" "$T/bin" || exit 99
HOME="$T/home"
export HOME
# a copy of the program, linked to the library by its absolute rpath
cp "$PROGS/calls" "$T/bin/calls" || exit 99
lib=$(cd "$PROGS" && pwd)/libsymlib.so
record "$T/calls.data" -N -g -- "$T/bin/calls" 0.5 ||
	{ echo "FAIL: perf record"; cat "$T/record.log"; exit 1; }
if [ -n "$(ls -A "$T/home")" ]; then
	echo "FAIL: perf record -N wrote to the build-id cache in \$HOME"; exit 1
fi

# the binaries move under the root; nothing is left at the recorded path
ROOT="$T/root"
mkdir -p "$ROOT$T/bin" "$ROOT$(dirname "$lib")" || exit 99
mv "$T/bin/calls" "$ROOT$T/bin/calls" || exit 99
cp "$lib" "$ROOT$lib" || exit 99

# without the root the program's frames stay [calls] (the control case)
"$PERFHUB" collapse "$T/calls.data" >"$T/nosymfs.ours" 2>/dev/null
if grep -q 'leaf_spin' "$T/nosymfs.ours" || ! grep -q '\[calls\]' "$T/nosymfs.ours"; then
	echo "FAIL nosymfs: the moved binary was still found at its recorded path"; fail=1
fi

compare symfs "$T/calls.data" 99 --symfs "$ROOT" -- --symfs "$ROOT" -- -- "$CALLS_FRAMES"
expect symfs "$T/symfs.ours" 'main;outer_a;.*leaf_spin' "the program's frames are not named under --symfs"
expect symfs "$T/symfs.ours" 'main;outer_c;recurse;recurse;.*leaf_spin' "the recursion is not named under --symfs"
expect symfs "$T/symfs.ours" 'main;lib_work;lib_inner\|main;.*lib_inner' "the shared library's frames are not named under --symfs"
# --symfs=DIR is the same option
compare symfs-eq "$T/calls.data" 99 --symfs="$ROOT" -- --symfs "$ROOT" -- -- "$CALLS_FRAMES"
exit $fail

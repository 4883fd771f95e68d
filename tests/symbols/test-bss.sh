#!/bin/sh
# test-bss.sh - addresses past a segment's file bytes (its .bss) are named
# as perf names them (docs/symbols.md, "Data and .bss"): perf moves each
# symbol of a user ELF by its segment's p_vaddr - p_offset, the segment
# found over its whole memory size, so a map offset in .bss is named by
# the object there. Frame-pointer walks through code built without frame
# pointers land there often (libLLVM's .bss in a system-wide build).
#
# bssobj (tests/progs/bssobj.c) is built here as a PIE program and as a
# shared library; addr-samples writes a recording with a sample at every
# address from just before each one's .bss to its end, which must fold
# exactly as perf script | stackcollapse folds it, and perf must have
# named some of them by the .bss objects. Skips (77) when perf cannot
# record (perf script is the oracle).
set -u
: "${top_builddir:=.}" "${top_srcdir:=.}"
. "$top_srcdir/tests/symbols/collapse-lib.sh"

$CC -O1 -g -fPIE -pie -o "$T/bssobj" "$PROGS_SRC/bssobj.c" ||
	{ echo "FAIL: cannot build bssobj"; exit 1; }
$CC -O1 -g -fPIC -shared -DBSSOBJ_LIB -o "$T/libbssobj.so" "$PROGS_SRC/bssobj.c" ||
	{ echo "FAIL: cannot build libbssobj.so"; exit 1; }
for bin in "$T/bssobj" "$T/libbssobj.so"; do
	name=bss-$(basename "$bin")
	"$ADDR_SAMPLES" bss "$bin" "$T/$name.data" || { echo "FAIL $name: addr-samples"; fail=1; continue; }
	compare "$name" "$T/$name.data" 100
	# the objects past the file bytes, as perf names them
	expect "$name" "$T/$name.perf" '^bssprobe;bss_counters ' "perf names no address bss_counters"
	expect "$name" "$T/$name.perf" '^bssprobe;bss_table ' "perf names no address bss_table"
	expect "$name" "$T/$name.ours" '^bssprobe;bss_counters ' "we name no address bss_counters"
done
exit $fail

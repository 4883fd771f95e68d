#!/bin/sh
# test-plt.sh - frames in PLT slots are named as perf 6.1 names them
# (docs/symbols.md, "PLT slots"): perf adds the slots after stretching
# unsized symbols, so _init covers the .plt too, and where two symbols
# cover an address the one its tree search meets first wins.
#
# pltloop (tests/progs/pltloop.c, calling tests/progs/pltlib.c) is built
# here in three PLT layouts (lazy, -z now, IBT's .plt.sec); addr-samples
# writes a recording with a sample at every address of each binary's
# .init/.plt code (and of vdsoloop's), which must fold exactly as
# perf script | stackcollapse folds it. Then a real -g recording of
# pltloop: the stacks that end in a PLT slot must agree exactly.
# Skips (77) when perf cannot record.
set -u
: "${top_builddir:=.}" "${top_srcdir:=.}"
. "$top_srcdir/tests/symbols/collapse-lib.sh"

$CC -O1 -g -fno-omit-frame-pointer -shared -fPIC -o "$T/libpltlib.so" "$PROGS_SRC/pltlib.c" ||
	{ echo "FAIL: cannot build libpltlib.so"; exit 1; }
# layout flags; IBT's .plt.sec needs a linker that knows -z ibtplt
for layout in lazy now ibt; do
	case $layout in
	lazy) flags= ;;
	now) flags="-Wl,-z,now" ;;
	ibt) flags="-fcf-protection -Wl,-z,ibtplt" ;;
	esac
	# shellcheck disable=SC2086
	if ! $CC -O1 -g -fno-omit-frame-pointer $flags -o "$T/pltloop-$layout" "$PROGS_SRC/pltloop.c" \
		-L"$T" -lpltlib -Wl,-rpath,"$T" 2>"$T/cc.log"; then
		[ $layout = ibt ] && { echo "note: no .plt.sec layout (linker without -z ibtplt)"; continue; }
		echo "FAIL: cannot build pltloop-$layout"; cat "$T/cc.log"; exit 1
	fi
done
if [ -x "$T/pltloop-ibt" ] && ! readelf -SW "$T/pltloop-ibt" | grep -q '\.plt\.sec'; then
	echo "FAIL: pltloop-ibt has no .plt.sec"; fail=1
fi

# every address of the start-up and PLT code
for bin in "$T"/pltloop-* "$PROGS/vdsoloop"; do
	name=addr-$(basename "$bin")
	"$ADDR_SAMPLES" plt "$bin" "$T/$name.data" || { echo "FAIL $name: addr-samples"; fail=1; continue; }
	compare "$name" "$T/$name.data" 100
	# the case this test is about: _init stretched over the PLT header
	expect "$name" "$T/$name.perf" '^pltprobe;_init ' "perf names no address _init"
done

# a real recording: a fifth of pltloop's time is spent in its PLT slots
record "$T/rec.data" -g -- "$T/pltloop-lazy" 3 ||
	{ echo "FAIL: perf record"; cat "$T/record.log"; exit 1; }
compare rec "$T/rec.data" 99
grep -E ';(_init|[^;]*@plt) [0-9]+$' "$T/rec.perf" >"$T/plt.perf"
grep -E ';(_init|[^;]*@plt) [0-9]+$' "$T/rec.ours" >"$T/plt.ours"
if [ ! -s "$T/plt.perf" ]; then
	echo "FAIL rec: no sample of perf's ended in a PLT slot"; fail=1
elif ! cmp -s "$T/plt.perf" "$T/plt.ours"; then
	echo "FAIL rec: stacks ending in a PLT slot differ (perf, then ours):"
	cat "$T/plt.perf"; echo "--"; cat "$T/plt.ours"; fail=1
else
	echo "rec: $(wc -l <"$T/plt.perf") stacks end in a PLT slot, all as perf names them"
fi
exit $fail

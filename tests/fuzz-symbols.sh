#!/bin/sh
# fuzz-symbols.sh - fuzz-symbols' entry point (ELF and DWARF loading: symbol
# tables, PLT, perf's tree, inlined frames) over programs of this build (cli/perfhub
# brings DWARF with inlined subroutines) and
# damaged copies of them (tests/fuzz-symbols-replay.c).
: "${top_builddir:=.}"
P="$top_builddir/tests/progs"
exec "$top_builddir/tests/fuzz-symbols-replay" "$P/calls" "$P/cxx" "$P/libsymlib.so" \
	"$P/vdsoloop" "$top_builddir/tests/symbols/addr-samples" "$top_builddir/cli/perfhub"

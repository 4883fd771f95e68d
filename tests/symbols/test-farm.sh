#!/bin/sh
# test-farm.sh - the recordings a build farm makes, against perf script |
# stackcollapse (tests/symbols/stackcollapse.py), recorded now:
#
# - build: `perf record -a -g` of `make -j2` building a small C project
#   written here (many short-lived compiler processes, kernel stacks, and
#   whatever else runs on the machine meanwhile);
# - inlines: `--call-graph dwarf` of a program calling a shared library
#   built here with -O2 -g whose hot code is static inline helpers three
#   levels deep (tests/progs/inlinelib.c) and an assembler function under
#   two names (tests/progs/inlineasm.S): the library's frames named from
#   its DWARF exactly as perf names them (inl_work;inl_round;inl_step;
#   inl_mix, and inl_spin_b, the later of the two names).
#
# Skips (77) when perf cannot record; the inlines case needs x86-64.
set -u
: "${top_builddir:=.}" "${top_srcdir:=.}"
. "$top_srcdir/tests/symbols/collapse-lib.sh"

# same_with_threads NAME DATA: folding with 1 and with 3 threads gives the
# same lines (the threads share the samples out by process, dwarf ones by
# blocks, and merge their folds)
same_with_threads() {
	"$PERFHUB" collapse --threads 1 "$2" >"$T/$1.t1" 2>/dev/null &&
		"$PERFHUB" collapse --threads 3 "$2" >"$T/$1.t3" 2>/dev/null ||
		{ echo "FAIL $1: perfhub collapse --threads failed"; fail=1; return; }
	cmp -s "$T/$1.t1" "$T/$1.t3" ||
		{ echo "FAIL $1: 1 and 3 folding threads disagree"; fail=1; return; }
	echo "$1: the same $(wc -l <"$T/$1.t1") stacks with 1 and 3 folding threads"
}

# ---- a system-wide recording of a parallel build ----
mkdir -p "$T/proj" || exit 99
i=0
while [ $i -lt 12 ]; do
	cat >"$T/proj/unit$i.c" <<EOF
#include <stdio.h>
#include <string.h>
struct item$i { int key; char name[32]; double weight; };
static int cmp$i(const void *a, const void *b)
{
	const struct item$i *x = a, *y = b;
	return x->key - y->key;
}
int unit$i(int n)
{
	struct item$i v[64];
	int s = 0;
	for (int k = 0; k < 64; k++) {
		v[k].key = (k * 7919 + n) % 101;
		snprintf(v[k].name, sizeof(v[k].name), "item-%d-%d", $i, k);
		v[k].weight = k * 0.5;
	}
	qsort(v, 64, sizeof(v[0]), cmp$i);
	for (int k = 0; k < 64; k++)
		s += v[k].key + (int)strlen(v[k].name);
	return s;
}
EOF
	i=$((i + 1))
done
{
	printf 'OBJS ='
	i=0
	while [ $i -lt 12 ]; do printf ' unit%d.o' $i; i=$((i + 1)); done
	printf '\nall: prog\nprog: $(OBJS) main.o\n\t$(CC) -o $@ $(OBJS) main.o\n'
	printf '%%.o: %%.c\n\t$(CC) -O2 -g -c -o $@ $<\n'
} >"$T/proj/Makefile"
{
	i=0
	while [ $i -lt 12 ]; do printf 'int unit%d(int);\n' $i; i=$((i + 1)); done
	printf 'int main(void) { int s = 0;\n'
	i=0
	while [ $i -lt 12 ]; do printf ' s += unit%d(%d);\n' $i $i; i=$((i + 1)); done
	printf ' return s == 42; }\n'
} >"$T/proj/main.c"
if record "$T/build.data" -a -g -- make -s -j2 -C "$T/proj" CC="$CC"; then
	compare build "$T/build.data" 99 -- -- --
	compare build-kernel "$T/build.data" 99 --kernel -- -- --kernel
	# perf record saved the kernel's table in its build-id cache: taken
	# while it is still the running kernel's, it names what
	# /proc/kallsyms names
	if "$PERFHUB" collapse --kernel --kallsyms /proc/kallsyms "$T/build.data" \
		>"$T/build-proc.ours" 2>/dev/null; then
		cmp -s "$T/build-proc.ours" "$T/build-kernel.ours" ||
			{ echo "FAIL build: kernel names differ from /proc/kallsyms'"; fail=1; }
		ls "${HOME:-/root}"/.debug/'[kernel.kallsyms]'/*/kallsyms >/dev/null 2>&1 &&
			echo "build: the same kernel names from perf's saved kallsyms"
	else
		echo "FAIL build: perfhub collapse --kallsyms /proc/kallsyms failed"; fail=1
	fi
	expect build "$T/build.perf" '^cc1;' "perf saw no compiler process (not a build?)"
	same_with_threads build "$T/build.data"
else
	echo "FAIL build: perf record -a -g failed"; cat "$T/record.log"; fail=1
fi

# ---- --call-graph dwarf through a library of inlined helpers ----
if [ "$(uname -m)" != x86_64 ]; then
	echo "note: the inlines case needs x86-64 (its assembler function)"
	exit $fail
fi
if ! $CC -O2 -g -shared -fPIC -o "$T/libinl.so" "$PROGS_SRC/inlinelib.c" "$PROGS_SRC/inlineasm.S" \
	2>"$T/cc.log" ||
   ! $CC -O2 -g -o "$T/inlinemain" "$PROGS_SRC/inlinemain.c" -L"$T" -linl -Wl,-rpath,"$T" \
	2>>"$T/cc.log"; then
	echo "FAIL inlines: cannot build the library"; cat "$T/cc.log"; exit 1
fi
if record "$T/inl.data" --call-graph dwarf -- "$T/inlinemain" 4; then
	compare inlines "$T/inl.data" 97 -- -- -- \
		main,inl_work,inl_round,inl_step,inl_mix,inl_spin_a,inl_spin_b
	expect inlines "$T/inlines.ours" ';main;inl_work;inl_round;inl_step;inl_mix ' \
		"no sample in the innermost inlined helper"
	expect inlines "$T/inlines.ours" ';main;inl_work;inl_spin_b ' \
		"the assembler function is not named by its later name"
	same_with_threads inlines "$T/inl.data"
else
	echo "FAIL inlines: perf record --call-graph dwarf failed"; cat "$T/record.log"; fail=1
fi
exit $fail

#!/bin/sh
# test-rust.sh - Rust demangling against perf's: tests/progs/rustcalls.rs
# built now by rustc with frame pointers, with the legacy symbol mangling
# and, when this rustc takes -C symbol-mangling-version=v0, the v0 one;
# each recorded by perf record -g and folded by perfhub collapse and by
# perf script | the stackcollapse rules. Skips (77) without rustc or when
# perf cannot record.
set -u
: "${top_builddir:=.}" "${top_srcdir:=.}"
command -v rustc >/dev/null 2>&1 || { echo "SKIP: rustc not installed"; exit 77; }
. "$top_srcdir/tests/symbols/collapse-lib.sh"

SRC="$top_srcdir/tests/progs/rustcalls.rs"
RUST_FRAMES="rustcalls::main,rustcalls::recurse,rustcalls::apply,rustcalls::outer::inner::leaf_spin,rustcalls::outer::Worker,<rustcalls::outer::Worker"
rustc --version

build() {	# build OUT [rustc options]
	out=$1; shift
	rustc -g -C opt-level=1 -C force-frame-pointers=yes "$@" -o "$out" "$SRC" >"$T/rustc.log" 2>&1
}

# no frame may keep a mangled name: perf demangles both schemes
unmangled() {	# unmangled NAME
	if grep -E -q '(^|;)(_ZN|_R[A-Z])' "$T/$1.ours"; then
		echo "FAIL $1: mangled names left:"; grep -E -o '(^|;)(_ZN|_R[A-Z])[^;]*' "$T/$1.ours" | head -3
		fail=1
	fi
}

cases=0
# rust_case NAME BINARY [PATTERN WHAT]...: record and compare, each PATTERN
# expected in the folded stacks (WHAT says what is missing), no mangled name
rust_case() {
	name=$1 bin=$2
	shift 2
	record "$T/$name.data" -g -- "$bin" 0.5 ||
		{ echo "FAIL: perf record of the Rust program"; cat "$T/record.log"; exit 1; }
	compare "$name" "$T/$name.data" 99 -- -- -- "$RUST_FRAMES"
	while [ $# -ge 2 ]; do
		expect "$name" "$T/$name.ours" "$1" "$2"
		shift 2
	done
	unmangled "$name"
	cases=$((cases + 1))
}

# legacy (_ZN...17h<hash>E): rustc's default up to now
if ! build "$T/rust_legacy"; then
	echo "FAIL: rustc could not build $SRC:"; cat "$T/rustc.log"; exit 1
fi
if grep -a -q '_ZN9rustcalls' "$T/rust_legacy"; then
	rust_case rust-legacy "$T/rust_legacy" \
		'rustcalls::outer::Worker<T>::run;rustcalls::outer::inner::leaf_spin' \
		"no demangled generic method rustcalls::outer::Worker<T>::run" \
		';<rustcalls::outer::Worker<u32> as rustcalls::outer::Job>::work;' \
		"no demangled trait method <... as rustcalls::outer::Job>::work" \
		'rustcalls::main;rustcalls::recurse;rustcalls::recurse;' \
		"no recursion main;recurse;recurse"
else
	echo "SKIP case rust-legacy: this rustc's default mangling is not legacy"
fi

# v0 (_R...)
if build "$T/rust_v0" -C symbol-mangling-version=v0 && grep -a -q '_RNv' "$T/rust_v0"; then
	rust_case rust-v0 "$T/rust_v0" \
		';<rustcalls::outer::Worker<u64>>::run;rustcalls::outer::inner::leaf_spin' \
		"no demangled generic method <rustcalls::outer::Worker<u64>>::run" \
		';rustcalls::apply::<rustcalls::main::{closure#[0-9]}>;' \
		"no demangled generic function with a closure argument" \
		';<rustcalls::outer::Worker<u32> as rustcalls::outer::Job>::work;' \
		"no demangled trait method <... as rustcalls::outer::Job>::work"
else
	echo "SKIP case rust-v0: this rustc does not take -C symbol-mangling-version=v0"
fi
[ "$cases" -gt 0 ] || { echo "SKIP: no Rust case could be built"; exit 77; }
exit $fail

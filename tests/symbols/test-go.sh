#!/bin/sh
# test-go.sh - a Go program recorded with --call-graph dwarf, against perf
# script | the stackcollapse rules (docs/symbols.md): a Go binary has no
# .eh_frame_hdr, so perf's walk ends at the sampled frame, and names a
# DWARF function whose DW_AT_name is not its symbol's (Go is not C) by
# the symbol starting where it does: crypto/sha256.block.abi0.
# tests/progs/gohash.go is built now by `go build`. Skips (77) without
# the go toolchain or when perf cannot record.
set -u
: "${top_builddir:=.}" "${top_srcdir:=.}"
command -v go >/dev/null 2>&1 || { echo "SKIP: go not installed"; exit 77; }
. "$top_srcdir/tests/symbols/collapse-lib.sh"

go version
mkdir -p "$T/gocache" "$T/gopath"
if ! (cd "$T" && GOCACHE="$T/gocache" GOPATH="$T/gopath" GO111MODULE=off \
	go build -o "$T/gohash" "$top_srcdir/tests/progs/gohash.go") >"$T/go.log" 2>&1; then
	echo "FAIL: go build"; cat "$T/go.log"; exit 1
fi
record "$T/go.data" --call-graph dwarf -- "$T/gohash" 1 ||
	{ echo "FAIL: perf record of the Go program"; cat "$T/record.log"; exit 1; }
# the rest: binutils names a function by the symbol covering the address
# on the first question about it (docs/symbols.md, known differences)
compare go "$T/go.data" 90
expect go "$T/go.perf" '^gohash;crypto/sha256.block.abi0 ' "perf names no crypto/sha256.block.abi0 frame"
expect go "$T/go.ours" '^gohash;crypto/sha256.block.abi0 ' "we name no crypto/sha256.block.abi0 frame"
# a walk past the sampled frame reaches the goroutine's start
if grep -q 'runtime\.goexit' "$T/go.ours"; then
	echo "FAIL go: a walk went on from a file without .eh_frame_hdr"; fail=1
fi
exit $fail

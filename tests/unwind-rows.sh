#!/bin/sh
# unwind-rows.sh: the kept CFI rows (parser/cfirows.c) against lookups of
# one address, over every address of the test programs without frame
# pointers, the dynamic loader and the C library this machine runs (their
# .eh_frame has the mid-function epilogues that broke it).
b=${top_builddir:-.}
files="$b/tests/progs/calls_nofp $b/tests/progs/libsymlib.so"
for lib in $(ldd "$b/tests/progs/calls_nofp" | awk '/libc\.so|ld-linux/ { print ($3 ~ /^\//) ? $3 : $1 }'); do
	[ -f "$lib" ] && files="$files $lib"
done
case $files in
*libc.so*) ;;
*) echo "FAIL: no C library found by ldd"; exit 1 ;;
esac
# shellcheck disable=SC2086
exec "$b/tests/unwind-rows" $files

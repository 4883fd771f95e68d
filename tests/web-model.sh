#!/bin/sh
# The page's model (web/flame.js) under node; see tests/web-model.js.
# With the offline tool built, also checks the tree built from the folded
# stacks of a real recording. Skips (77) without node.
src=${top_srcdir:-.}
bld=${top_builddir:-.}
command -v node >/dev/null 2>&1 || { echo "SKIP: node not installed"; exit 77; }
folded=
rec="${PERFHUB_SHARED:-}/corpus/external"
cli="$bld/cli/perfhub"
if [ -x "$cli" ] && [ -d "$rec" ]; then
	f="$rec/perfparser-vector_static_clang-perf.data"
	tmp=${PERFHUB_TEST_TMP:-/tmp}/web-model.folded
	if [ -f "$f" ] && "$cli" collapse "$f" > "$tmp" 2>/dev/null && [ -s "$tmp" ]; then
		echo "real recording: $f"
		folded=$tmp
	fi
fi
exec node "$src/tests/web-model.js" $folded

#!/bin/sh
# Figures for the page's model on 10k-300k frame trees (tests/bench-web.js).
src=$(cd "$(dirname "$0")/.." && pwd)
command -v node >/dev/null 2>&1 || { echo "bench-web: node not installed"; exit 0; }
top_srcdir=$src node "$src/tests/bench-web.js"

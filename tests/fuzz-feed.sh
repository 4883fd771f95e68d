#!/bin/sh
# Replays tests/fuzz-feed/ (seeds: off-CPU recordings of every rule, and
# fixed crash reproducers) and the parser's tests/fuzz-corpus/ through the
# fuzz target of the engine's feed and views; a crash or sanitizer report
# fails the test.
exec "${top_builddir:-.}/tests/fuzz-feed-replay" "${top_srcdir:-.}/tests/fuzz-feed" \
	"${top_srcdir:-.}/tests/fuzz-corpus"

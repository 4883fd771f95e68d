#!/bin/sh
# Replays tests/fuzz-selector/ (seeds and fixed crash reproducers) through the
# fuzz target of the profile selector and time bounds; a crash or sanitizer
# report fails the test.
exec "${top_builddir:-.}/tests/fuzz-selector-replay" "${top_srcdir:-.}/tests/fuzz-selector"

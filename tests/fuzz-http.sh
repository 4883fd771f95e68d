#!/bin/sh
# Replays tests/fuzz-http/ (seeds and fixed crash reproducers) through the
# fuzz target of perfhubd's request parsing (query strings, Host and
# Origin, Accept-Encoding, JSON bodies); a crash or sanitizer report fails
# the test.
exec "${top_builddir:-.}/tests/fuzz-http-replay" "${top_srcdir:-.}/tests/fuzz-http"

#!/bin/sh
# Replays tests/fuzz-s3/ (seeds and fixed crash reproducers) through the
# fuzz target of the S3 answers' XML reader; a crash or sanitizer report
# fails the test.
exec "${top_builddir:-.}/tests/fuzz-s3xml-replay" "${top_srcdir:-.}/tests/fuzz-s3"

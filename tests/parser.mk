# tests/parser.mk: build rules for this area (included from Makefile.am)
# The perf.data reader: a walker the tests drive, the external corpus, and
# recordings made by perf at test time compared with perf report --stats.
check_PROGRAMS += tests/pd-walk
tests_pd_walk_SOURCES = tests/pd-walk.c
tests_pd_walk_LDADD = $(PARSER_LIBS)

TESTS += tests/test-corpus.sh
EXTRA_DIST += tests/test-corpus.sh tests/corpus-expect.tsv
TESTS += tests/test-perf-stats.sh
EXTRA_DIST += tests/test-perf-stats.sh

# synthesized recordings (every sample field, both byte orders, file and
# pipe, zstd) read back field by field
check_PROGRAMS += tests/test-readback
tests_test_readback_SOURCES = tests/test-readback.c tests/wbuf.h
tests_test_readback_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)
tests_test_readback_LDADD = $(PARSER_LIBS) $(ZSTD_LIBS)
TESTS += tests/test-readback

# must-fail inputs with their messages, and random mutations
check_PROGRAMS += tests/test-hostile
tests_test_hostile_SOURCES = tests/test-hostile.c tests/wbuf.h tests/xorshift.h
tests_test_hostile_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)
tests_test_hostile_LDADD = $(PARSER_LIBS) $(ZSTD_LIBS)
TESTS += tests/test-hostile

# benchmark (prints figures; `make bench`)
check_PROGRAMS += tests/bench-decode
tests_bench_decode_SOURCES = tests/bench-decode.c
tests_bench_decode_LDADD = $(PARSER_LIBS)
BENCHES += tests/bench-decode.sh
EXTRA_DIST += tests/bench-decode.sh

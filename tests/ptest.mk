# tests/ptest.mk: the parser's adversarial tests: a perf.data writer for
# synthesized files, round trips, must-fail files, and the fuzz target
# with its corpus replay.

PDWRITE_SOURCES = tests/pdwrite.c tests/pdwrite.h
PDWRITE_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)

# the writer, checked against perf itself
check_PROGRAMS += tests/pdwrite-gen
tests_pdwrite_gen_SOURCES = tests/pdwrite-gen.c $(PDWRITE_SOURCES)
tests_pdwrite_gen_CFLAGS = $(PDWRITE_CFLAGS)
tests_pdwrite_gen_LDADD = $(ZSTD_LIBS)
TESTS += tests/test-pdwrite-perf.sh
EXTRA_DIST += tests/test-pdwrite-perf.sh

# round trips: every combination written and read back field by field
check_PROGRAMS += tests/test-roundtrip
tests_test_roundtrip_SOURCES = tests/test-roundtrip.c $(PDWRITE_SOURCES)
tests_test_roundtrip_CFLAGS = $(PDWRITE_CFLAGS) $(JANSSON_CFLAGS)
tests_test_roundtrip_LDADD = $(PARSER_LIBS)
TESTS += tests/test-roundtrip

# must-fail files: error code and offset of each broken thing
check_PROGRAMS += tests/test-mustfail
tests_test_mustfail_SOURCES = tests/test-mustfail.c $(PDWRITE_SOURCES)
tests_test_mustfail_CFLAGS = $(PDWRITE_CFLAGS)
tests_test_mustfail_LDADD = $(PARSER_LIBS)
TESTS += tests/test-mustfail

# large files read through the read-ahead thread against memory
check_PROGRAMS += tests/test-readahead
tests_test_readahead_SOURCES = tests/test-readahead.c tests/check.h $(PDWRITE_SOURCES)
tests_test_readahead_CFLAGS = $(PDWRITE_CFLAGS)
tests_test_readahead_LDADD = $(PARSER_LIBS)
TESTS += tests/test-readahead

# the fuzz target's entry point replayed over tests/fuzz-corpus/
check_PROGRAMS += tests/fuzz-replay
tests_fuzz_replay_SOURCES = tests/fuzz-replay.c tests/fuzz-parser.c
tests_fuzz_replay_LDADD = $(PARSER_LIBS)
TESTS += tests/fuzz-replay
EXTRA_DIST += tests/fuzz-corpus

# libFuzzer target (configure --enable-fuzzing CC=clang; make tests/fuzz-parser).
# The reader's sources are compiled into it so that they are instrumented.
if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz-parser
tests_fuzz_parser_SOURCES = tests/fuzz-parser.c $(PARSER_CORE_SOURCES) $(PARSER_FEATURE_SOURCES)
tests_fuzz_parser_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS) $(ZSTD_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_parser_LDFLAGS = -fsanitize=fuzzer,address,undefined
tests_fuzz_parser_LDADD = $(ZSTD_LIBS) $(JANSSON_LIBS) -lpthread
endif

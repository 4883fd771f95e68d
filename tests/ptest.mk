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

# Round trips, must-fail files and the fuzz replay need the reader
# (parser/reader.c); they join check_PROGRAMS and TESTS once it is merged.
EXTRA_DIST += tests/test-roundtrip.c tests/test-mustfail.c tests/fuzz-parser.c \
	tests/fuzz-replay.c tests/fuzz-corpus

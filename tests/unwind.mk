# tests/unwind.mk: DWARF unwinding of --call-graph dwarf samples (included
# from Makefile.am).

# the unwinder on stacks the test captures of itself, and on garbage
check_PROGRAMS += tests/unwind-self
tests_unwind_self_SOURCES = tests/unwind-self.c
tests_unwind_self_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS)
tests_unwind_self_LDADD = $(PARSER_LIBS)
TESTS += tests/unwind-self

# the parser + the unwinder + a map table over a real recording
check_PROGRAMS += tests/unwind-walk
tests_unwind_walk_SOURCES = tests/unwind-walk.c
tests_unwind_walk_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS)
tests_unwind_walk_LDADD = $(PARSER_LIBS)

# a -fomit-frame-pointer program recorded with --call-graph dwarf, its
# stacks compared with perf script's and with its known call chains
TESTS += tests/unwind-dwarf.py
EXTRA_DIST += tests/unwind-dwarf.py tests/unwind-deep.c

# samples/s unwound (make bench)
BENCHES += tests/bench-unwind.sh
EXTRA_DIST += tests/bench-unwind.sh

# no crash, no hang on any recording of the external corpus
TESTS += tests/unwind-corpus.sh
EXTRA_DIST += tests/unwind-corpus.sh

# a kept CFI row answers for its whole range exactly as a lookup of one
# address does, on the test programs and the C library
check_PROGRAMS += tests/unwind-rows
tests_unwind_rows_SOURCES = tests/unwind-rows.c
tests_unwind_rows_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS)
tests_unwind_rows_LDADD = $(PARSER_LIBS)
TESTS += tests/unwind-rows.sh
EXTRA_DIST += tests/unwind-rows.sh

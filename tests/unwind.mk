# tests/unwind.mk: DWARF unwinding of --call-graph dwarf samples (included
# from Makefile.am).

# the unwinder on stacks the test captures of itself, and on garbage
check_PROGRAMS += tests/unwind-self
tests_unwind_self_SOURCES = tests/unwind-self.c
tests_unwind_self_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS)
tests_unwind_self_LDADD = $(PARSER_LIBS)
TESTS += tests/unwind-self

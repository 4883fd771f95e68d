# tests/parser.mk: build rules for this area (included from Makefile.am)
# The perf.data reader: a walker the tests drive, the external corpus, and
# recordings made by perf at test time compared with perf report --stats.
check_PROGRAMS += tests/pd-walk
tests_pd_walk_SOURCES = tests/pd-walk.c
tests_pd_walk_LDADD = $(PARSER_LIBS)

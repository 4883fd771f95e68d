# tests/engine.mk: unit tests of the profile engine (daemon/store/engine/):
# models built in memory with the engine's builder, no database; every
# answer compared with one worked out by hand.
EXTRA_DIST += tests/engine_common.h tests/check.h
ENGINE_TESTS = tests/engine-query tests/engine-blocks tests/engine-compare
check_PROGRAMS += $(ENGINE_TESTS)
TESTS += $(ENGINE_TESTS)
tests_engine_query_SOURCES = tests/engine-query.c tests/engine_common.h
tests_engine_query_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_engine_query_CFLAGS = $(DAEMON_CFLAGS)
tests_engine_query_LDADD = $(DAEMON_LIBS)
tests_engine_blocks_SOURCES = tests/engine-blocks.c tests/engine_common.h
tests_engine_blocks_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_engine_blocks_CFLAGS = $(DAEMON_CFLAGS)
tests_engine_blocks_LDADD = $(DAEMON_LIBS)
tests_engine_compare_SOURCES = tests/engine-compare.c tests/engine_common.h
tests_engine_compare_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_engine_compare_CFLAGS = $(DAEMON_CFLAGS)
tests_engine_compare_LDADD = $(DAEMON_LIBS)

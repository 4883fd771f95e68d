# tests/engine.mk: unit tests of the profile engine (daemon/store/engine/):
# models built in memory with the engine's builder, no database; every
# answer compared with one worked out by hand.
EXTRA_DIST += tests/engine_common.h tests/check.h
ENGINE_TESTS = tests/engine-query tests/engine-blocks tests/engine-compare \
	tests/engine-selector tests/engine-many
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
tests_engine_selector_SOURCES = tests/engine-selector.c
tests_engine_selector_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_engine_selector_CFLAGS = $(DAEMON_CFLAGS)
tests_engine_selector_LDADD = $(DAEMON_LIBS)
tests_engine_many_SOURCES = tests/engine-many.c tests/engine_common.h
tests_engine_many_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_engine_many_CFLAGS = $(DAEMON_CFLAGS)
tests_engine_many_LDADD = $(DAEMON_LIBS)

# the selector's fuzz target, replayed over tests/fuzz-selector/ in make check
check_PROGRAMS += tests/fuzz-selector-replay
tests_fuzz_selector_replay_SOURCES = tests/fuzz-replay.c tests/fuzz-selector.c
tests_fuzz_selector_replay_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_fuzz_selector_replay_CFLAGS = $(DAEMON_CFLAGS)
tests_fuzz_selector_replay_LDADD = $(DAEMON_LIBS)
TESTS += tests/fuzz-selector.sh
EXTRA_DIST += tests/fuzz-selector tests/fuzz-selector.sh
if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz-selector
tests_fuzz_selector_SOURCES = tests/fuzz-selector.c daemon/store/engine/selector.c
tests_fuzz_selector_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_fuzz_selector_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_selector_LDFLAGS = -fsanitize=fuzzer,address,undefined
endif

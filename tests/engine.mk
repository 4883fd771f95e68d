# tests/engine.mk: unit tests of the profile engine (engine/):
# models built in memory with the engine's builder, no database; every
# answer compared with one worked out by hand.
EXTRA_DIST += tests/engine_common.h tests/check.h
ENGINE_TESTS = tests/engine-query tests/engine-blocks tests/engine-compare tests/engine-export \
	tests/engine-views
check_PROGRAMS += $(ENGINE_TESTS)
TESTS += $(ENGINE_TESTS)
tests_engine_query_SOURCES = tests/engine-query.c tests/engine_common.h
tests_engine_query_CPPFLAGS = $(AM_CPPFLAGS) $(ENGINE_CPPFLAGS)
tests_engine_query_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)
tests_engine_query_LDADD = $(ENGINE_LIBS)
tests_engine_blocks_SOURCES = tests/engine-blocks.c tests/engine_common.h
tests_engine_blocks_CPPFLAGS = $(AM_CPPFLAGS) $(ENGINE_CPPFLAGS)
tests_engine_blocks_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)
tests_engine_blocks_LDADD = $(ENGINE_LIBS)
tests_engine_compare_SOURCES = tests/engine-compare.c tests/engine_common.h
tests_engine_compare_CPPFLAGS = $(AM_CPPFLAGS) $(ENGINE_CPPFLAGS)
tests_engine_compare_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)
tests_engine_compare_LDADD = $(ENGINE_LIBS)
tests_engine_views_SOURCES = tests/engine-views.c tests/engine_common.h
tests_engine_views_CPPFLAGS = $(AM_CPPFLAGS) $(ENGINE_CPPFLAGS)
tests_engine_views_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)
tests_engine_views_LDADD = $(ENGINE_LIBS)

# The engine offline over a recording made at test time: engine-fold reads
# a perf.data into a profile in memory (engine/feed.h) and folds it; the
# test compares it with perfhub collapse and with perfhubd's /collapsed.
check_PROGRAMS += tests/engine-fold
tests_engine_fold_SOURCES = tests/engine-fold.c
tests_engine_fold_CPPFLAGS = $(AM_CPPFLAGS) $(ENGINE_CPPFLAGS)
tests_engine_fold_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_engine_fold_LDADD = $(ENGINE_LIBS) $(PARSER_LIBS)
TESTS += tests/engine-offline.py
EXTRA_DIST += tests/engine-offline.py
tests_engine_export_SOURCES = tests/engine-export.c tests/engine_common.h
tests_engine_export_CPPFLAGS = $(AM_CPPFLAGS) $(ENGINE_CPPFLAGS)
tests_engine_export_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS) $(JANSSON_CFLAGS) $(PROTOBUF_C_CFLAGS)
tests_engine_export_LDADD = $(ENGINE_LIBS) $(JANSSON_LIBS)

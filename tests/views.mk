# tests/views.mk: the deeper views of one profile - off-CPU time, callers
# and callees, annotation - on programs built and recorded at test time,
# against perf script and perf annotate on the same files; the off-CPU
# tracker alone; synthetic recordings that pin each off-CPU rule.
EXTRA_DIST += tests/views_common.py
check_PROGRAMS += tests/engine-offcpu tests/views-gen
TESTS += tests/engine-offcpu
tests_engine_offcpu_SOURCES = tests/engine-offcpu.c tests/check.h
tests_engine_offcpu_CPPFLAGS = $(AM_CPPFLAGS) $(ENGINE_CPPFLAGS)
tests_engine_offcpu_CFLAGS = $(AM_CFLAGS)
tests_engine_offcpu_LDADD = $(ENGINE_LIBS)
tests_views_gen_SOURCES = tests/views-gen.c $(PDWRITE_SOURCES)
tests_views_gen_CFLAGS = $(PDWRITE_CFLAGS)
tests_views_gen_LDADD = $(ZSTD_LIBS)
VIEWS_TESTS = tests/views-offcpu.py tests/views-sandwich.py tests/views-annotate.py \
	tests/views-migrate.py
TESTS += $(VIEWS_TESTS)
EXTRA_DIST += $(VIEWS_TESTS)
# lib/annotate on this test's own code, damaged copies of it, source lines
check_PROGRAMS += tests/lib-annotate
TESTS += tests/lib-annotate
tests_lib_annotate_SOURCES = tests/lib-annotate.c tests/check.h
tests_lib_annotate_CPPFLAGS = $(AM_CPPFLAGS) $(COMMON_CPPFLAGS)
tests_lib_annotate_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS) -g
tests_lib_annotate_LDADD = $(COMMON_LIBS) $(PARSER_LIBS)
dist_doc_DATA += docs/views.md
# make bench: the views beside perf annotate, perf report, perf script
BENCHES += tests/bench-views
EXTRA_DIST += tests/bench-views tests/bench_views.py
# the feed and the views under fuzzing: the target's entry point replayed
# over tests/fuzz-feed/ and the parser's corpus in every make check
check_PROGRAMS += tests/fuzz-feed-replay
tests_fuzz_feed_replay_SOURCES = tests/fuzz-replay.c tests/fuzz-feed.c
tests_fuzz_feed_replay_CPPFLAGS = $(AM_CPPFLAGS) $(ENGINE_CPPFLAGS)
tests_fuzz_feed_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_feed_replay_LDADD = $(ENGINE_LIBS) $(PARSER_LIBS)
TESTS += tests/fuzz-feed.sh
EXTRA_DIST += tests/fuzz-feed.sh tests/fuzz-feed
# libFuzzer target (configure --enable-fuzzing CC=clang; make tests/fuzz-feed):
# the engine's and the parser's sources compiled into it, instrumented
if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz-feed
tests_fuzz_feed_SOURCES = tests/fuzz-feed.c $(engine_libperfhub_engine_a_SOURCES) \
	$(parser_libperfhub_parse_a_SOURCES)
tests_fuzz_feed_CPPFLAGS = $(AM_CPPFLAGS) $(ENGINE_CPPFLAGS)
tests_fuzz_feed_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS) $(ZSTD_CFLAGS) $(JANSSON_CFLAGS) $(ELF_CFLAGS)
tests_fuzz_feed_LDFLAGS = -fsanitize=fuzzer,address,undefined
tests_fuzz_feed_LDADD = $(ZSTD_LIBS) $(JANSSON_LIBS) $(ELF_LIBS) $(IBERTY_LIBS) -lpthread
endif

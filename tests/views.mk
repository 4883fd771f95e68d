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

# tests/cluster.mk: the pieces several nodes share, against real servers
# the tests start themselves: an S3-compatible store (s3rver from npm,
# tests/s3/) and PostgreSQL (initdb and pg_ctl, tests/pg_harness.py).
EXTRA_DIST += tests/s3_harness.py tests/s3/serve.js tests/s3/package.json \
	tests/s3/package-lock.json
check_PROGRAMS += tests/s3-tool
tests_s3_tool_SOURCES = tests/s3-tool.c
tests_s3_tool_CPPFLAGS = $(DAEMON_CPPFLAGS) -I$(top_srcdir)/daemon/intake
tests_s3_tool_CFLAGS = $(DAEMON_CFLAGS)
tests_s3_tool_LDADD = $(DAEMON_LIBS)
check_PROGRAMS += tests/pg-tool
tests_pg_tool_SOURCES = tests/pg-tool.c
tests_pg_tool_CPPFLAGS = $(DAEMON_CPPFLAGS) -I$(top_srcdir)/daemon/store/pg
tests_pg_tool_CFLAGS = $(DAEMON_CFLAGS)
tests_pg_tool_LDADD = $(DAEMON_LIBS)
EXTRA_DIST += tests/pg_harness.py

# the XML reader's fuzz target, replayed over tests/fuzz-s3/ in make check
check_PROGRAMS += tests/fuzz-s3xml-replay
tests_fuzz_s3xml_replay_SOURCES = tests/fuzz-replay.c tests/fuzz-s3xml.c
tests_fuzz_s3xml_replay_CPPFLAGS = $(DAEMON_CPPFLAGS) -I$(top_srcdir)/daemon/intake
tests_fuzz_s3xml_replay_CFLAGS = $(DAEMON_CFLAGS)
tests_fuzz_s3xml_replay_LDADD = $(DAEMON_LIBS)
EXTRA_DIST += tests/fuzz-s3
if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz-s3xml
tests_fuzz_s3xml_SOURCES = tests/fuzz-s3xml.c daemon/intake/s3xml.c
tests_fuzz_s3xml_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon/intake
tests_fuzz_s3xml_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS) $(EXPAT_CFLAGS)
tests_fuzz_s3xml_LDFLAGS = -fsanitize=fuzzer,address,undefined
tests_fuzz_s3xml_LDADD = $(EXPAT_LIBS)
endif

EXTRA_DIST += tests/cluster_lib.py
CLUSTER_TESTS = \
	tests/cluster-dir.py \
	tests/pg-copy.py \
	tests/s3-client.py \
	tests/pg-queue.py \
	tests/fuzz-s3xml.sh
TESTS += $(CLUSTER_TESTS)
# the S3 spool's cluster run: in the plain build (the sanitizer build
# reaches the S3 spool through pg-copy and s3-client)
if !ENABLE_ASAN
TESTS += tests/cluster-s3.py
endif
EXTRA_DIST += tests/cluster-s3.py
EXTRA_DIST += $(CLUSTER_TESTS)
dist_doc_DATA += docs/cluster.md

# The API tests a second time, their daemons on PostgreSQL: a stub
# tests/on-pg/NAME.pg (made here) names tests/NAME.py, which tests/on-pg.sh
# runs with PERFHUB_TEST_BACKEND=postgresql. Not here: tests that open the
# SQLite file themselves (daemon-migrate, views-migrate, the other
# service-* tests, stress/load, kill9).
PG_API_TESTS = \
	tests/daemon-upload.py tests/daemon-intake.py tests/daemon-corpus.py \
	tests/daemon-crash.py tests/daemon-watch.py tests/daemon-client.py \
	tests/daemon-query.py tests/daemon-access.py tests/daemon-flame.py \
	tests/daemon-formats.py tests/api-openapi.py tests/daemon-metrics.py \
	tests/debuginfo-resym.py tests/debuginfo-client.py tests/debuginfo-archive.py \
	tests/debuginfo-debuginfod.py tests/debuginfo-vdso.py \
	tests/client-record.py tests/client-upload.py tests/client-token.py \
	tests/client-stream.py tests/engine-offline.py \
	tests/views-offcpu.py tests/views-sandwich.py tests/views-annotate.py \
	tests/service-retention.py \
	tests/stress/upload-gzip.py tests/stress/faults.py tests/stress/hostile.py \
	tests/stress/http-hostile.py \
	tests/many-api.py tests/many-cli.py tests/daemon-defaults.py tests/daemon-refuse.py \
	tests/daemon-hardening.py tests/daemon-models.py tests/daemon-prepared.py
# Not on PostgreSQL (docs/cluster.md, limits): daemon-resymbolize (a
# re-symbolization on PostgreSQL replaces the parse; it is not served
# meanwhile).
# The sanitizer build runs the PostgreSQL backend under the tests that
# reach every op of it (profiles, jobs and the lease keeper, writes and
# snapshots, PATCH and /perf.data, debuginfo and re-symbolization, leaf
# addresses, retention), plus cluster-dir and pg-copy, not every API test
# a second time: CI's time.
if ENABLE_ASAN
PG_API_RUN = tests/daemon-upload.py tests/daemon-query.py tests/daemon-crash.py \
	tests/daemon-formats.py tests/debuginfo-archive.py tests/views-annotate.py \
	tests/service-retention.py
else
PG_API_RUN = $(PG_API_TESTS)
endif
PG_RUNS = $(PG_API_RUN:tests/%.py=tests/on-pg/%.pg)
TEST_EXTENSIONS += .pg
PG_LOG_COMPILER = $(SHELL) $(srcdir)/tests/on-pg.sh
tests/on-pg/%.pg:
	@$(MKDIR_P) $(@D) && echo 'tests/$*.py' > $@
TESTS += $(PG_RUNS)
CLEANFILES += $(PG_RUNS)
EXTRA_DIST += tests/on-pg.sh

# make bench: SQLite beside PostgreSQL on the same recordings (prints figures)
BENCHES += tests/bench-pg
EXTRA_DIST += tests/bench-pg tests/bench_pg.py

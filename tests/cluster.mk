# tests/cluster.mk: the pieces several nodes share, against real servers
# the tests start themselves: an S3-compatible store (s3rver from npm,
# tests/s3/) and PostgreSQL (initdb and pg_ctl, tests/pg_harness.py).
EXTRA_DIST += tests/s3_harness.py tests/s3/serve.js tests/s3/package.json \
	tests/s3/package-lock.json
check_PROGRAMS += tests/s3-tool
tests_s3_tool_SOURCES = tests/s3-tool.c
tests_s3_tool_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon/intake
tests_s3_tool_CFLAGS = $(CLUSTER_CFLAGS)
tests_s3_tool_LDADD = $(CLUSTER_LIBS)
check_PROGRAMS += tests/pg-tool
tests_pg_tool_SOURCES = tests/pg-tool.c
tests_pg_tool_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon/store/pg
tests_pg_tool_CFLAGS = $(CLUSTER_CFLAGS)
tests_pg_tool_LDADD = $(CLUSTER_LIBS)
EXTRA_DIST += tests/pg_harness.py

# the XML reader's fuzz target, replayed over tests/fuzz-s3/ in make check
check_PROGRAMS += tests/fuzz-s3xml-replay
tests_fuzz_s3xml_replay_SOURCES = tests/fuzz-replay.c tests/fuzz-s3xml.c
tests_fuzz_s3xml_replay_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon/intake
tests_fuzz_s3xml_replay_CFLAGS = $(CLUSTER_CFLAGS)
tests_fuzz_s3xml_replay_LDADD = $(CLUSTER_LIBS)
EXTRA_DIST += tests/fuzz-s3
if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz-s3xml
tests_fuzz_s3xml_SOURCES = tests/fuzz-s3xml.c daemon/intake/s3xml.c
tests_fuzz_s3xml_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon/intake
tests_fuzz_s3xml_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS) $(EXPAT_CFLAGS)
tests_fuzz_s3xml_LDFLAGS = -fsanitize=fuzzer,address,undefined
tests_fuzz_s3xml_LDADD = $(EXPAT_LIBS)
endif

CLUSTER_TESTS = \
	tests/s3-client.py \
	tests/pg-queue.py \
	tests/fuzz-s3xml.sh
TESTS += $(CLUSTER_TESTS)
EXTRA_DIST += $(CLUSTER_TESTS)
dist_doc_DATA += docs/cluster.md

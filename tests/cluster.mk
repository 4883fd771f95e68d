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
CLUSTER_TESTS = \
	tests/s3-client.py \
	tests/pg-queue.py
TESTS += $(CLUSTER_TESTS)
EXTRA_DIST += $(CLUSTER_TESTS)
dist_doc_DATA += docs/cluster.md

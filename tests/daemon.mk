# tests/daemon.mk: perfhubd integration tests (Python 3 standard library,
# a daemon on a free loopback port with a fresh state directory each).
EXTRA_DIST += tests/perfhubd_harness.py tests/web/speedscope-check.js
DAEMON_TESTS = \
	tests/daemon-upload.py \
	tests/daemon-intake.py \
	tests/daemon-corpus.py \
	tests/daemon-crash.py \
	tests/daemon-watch.py \
	tests/daemon-client.py \
	tests/daemon-query.py \
	tests/daemon-access.py \
	tests/daemon-migrate.py \
	tests/daemon-flame.py \
	tests/daemon-formats.py \
	tests/api-openapi.py \
	tests/daemon-metrics.py
TESTS += $(DAEMON_TESTS) tests/docs-paths.py
EXTRA_DIST += tests/docs-paths.py

# the routing table, printed for tests/api-openapi.py and checked itself
check_PROGRAMS += tests/http-routes
TESTS += tests/http-routes
EXTRA_DIST += tests/web/openapi-check.js
tests_http_routes_SOURCES = tests/http-routes.c tests/check.h
tests_http_routes_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_http_routes_CFLAGS = $(DAEMON_CFLAGS)
tests_http_routes_LDADD = $(DAEMON_LIBS)
EXTRA_DIST += $(DAEMON_TESTS)

# make bench: the ingest benchmark (prints figures; not a test)
BENCHES += tests/bench-ingest tests/bench-query tests/bench-export
EXTRA_DIST += tests/bench-ingest tests/bench_ingest.py tests/bench-query tests/bench_query.py \
	tests/bench-export tests/bench_export.py
dist_doc_DATA += docs/query.md

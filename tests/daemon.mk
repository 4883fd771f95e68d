# tests/daemon.mk: perfhubd integration tests (Python 3 standard library,
# a daemon on a free loopback port with a fresh state directory each).
EXTRA_DIST += tests/perfhubd_harness.py tests/web/speedscope-check.js
DAEMON_TESTS = \
	tests/daemon-upload.py \
	tests/daemon-intake.py \
	tests/daemon-corpus.py \
	tests/daemon-crash.py \
	tests/daemon-watch.py \
	tests/daemon-watch-partial.py \
	tests/daemon-client.py \
	tests/daemon-query.py \
	tests/daemon-access.py \
	tests/daemon-migrate.py \
	tests/daemon-flame.py \
	tests/daemon-formats.py \
	tests/api-openapi.py \
	tests/daemon-metrics.py \
	tests/daemon-hardening.py \
	tests/daemon-defaults.py \
	tests/daemon-resymbolize.py \
	tests/daemon-refuse.py \
	tests/daemon-models.py \
	tests/daemon-prepared.py
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

# the request parsing's fuzz target (query strings, Host and Origin,
# Accept-Encoding, JSON bodies), replayed over tests/fuzz-http/ in make check
FUZZ_HTTP_SOURCES = tests/fuzz-http.c daemon/http/params.c daemon/http/access.c \
	daemon/intake/labels.c
check_PROGRAMS += tests/fuzz-http-replay
tests_fuzz_http_replay_SOURCES = tests/fuzz-replay.c $(FUZZ_HTTP_SOURCES)
tests_fuzz_http_replay_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_fuzz_http_replay_CFLAGS = $(DAEMON_CFLAGS)
tests_fuzz_http_replay_LDADD = $(ENGINE_LIBS) $(PARSER_LIBS) $(JANSSON_LIBS)
TESTS += tests/fuzz-http.sh
EXTRA_DIST += tests/fuzz-http.sh tests/fuzz-http
if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz-http
tests_fuzz_http_SOURCES = $(FUZZ_HTTP_SOURCES)
tests_fuzz_http_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_fuzz_http_CFLAGS = $(DAEMON_CFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_http_LDFLAGS = -fsanitize=fuzzer,address,undefined
tests_fuzz_http_LDADD = $(ENGINE_LIBS) $(PARSER_LIBS) $(JANSSON_LIBS)
endif

# tests/daemon.mk: perfhubd integration tests (Python 3 standard library,
# a daemon on a free loopback port with a fresh state directory each).
EXTRA_DIST += tests/perfhubd_harness.py
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
	tests/daemon-defaults.py \
	tests/daemon-resymbolize.py
TESTS += $(DAEMON_TESTS)
EXTRA_DIST += $(DAEMON_TESTS)

# make bench: the ingest benchmark (prints figures; not a test)
BENCHES += tests/bench-ingest tests/bench-query
EXTRA_DIST += tests/bench-ingest tests/bench_ingest.py tests/bench-query tests/bench_query.py
dist_doc_DATA += docs/query.md

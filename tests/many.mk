# tests/many.mk: questions about many recordings - selectors, merged views,
# series, the ranked diff and the CLI's diff, top, flamegraph and the
# record gate - against a workload with a known regression, recorded at
# test time.
check_PROGRAMS += tests/progs/regress
tests_progs_regress_SOURCES = tests/progs/regress.c
tests_progs_regress_CFLAGS = $(PROGS_CFLAGS)
# no sanitizer runtime: a workload, and LSan's scan at its exit spins under
# a loaded machine's scheduler, a share of samples the runs must not have
tests_progs_regress_LDFLAGS =
EXTRA_DIST += tests/many_common.py tests/many-svg.js
MANY_TESTS = tests/many-api.py tests/many-cli.py tests/many-svg.sh
TESTS += $(MANY_TESTS)
EXTRA_DIST += $(MANY_TESTS)

# make bench: the benchmark of questions about many recordings (prints figures)
BENCHES += tests/bench-many
EXTRA_DIST += tests/bench-many tests/bench_many.py
dist_doc_DATA += docs/many.md

# tests/stress.mk: the reliability and load suite (tests/stress/). The
# CI-size versions run as tests; `make stress` runs the full sizes and
# prints every figure (STRESS_SIZE=full).
EXTRA_DIST += tests/stress/stress_lib.py
STRESS_TESTS = \
	tests/stress/upload-gzip.py \
	tests/stress/load.py \
	tests/stress/kill9.py \
	tests/stress/faults.py \
	tests/stress/hostile.py \
	tests/stress/http-hostile.py \
	tests/stress/slow-headers.py \
	tests/stress/diff-memory.py \
	tests/stress/local-files.py
TESTS += $(STRESS_TESTS)
EXTRA_DIST += $(STRESS_TESTS)
EXTRA_DIST += tests/stress/report.py tests/stress/fuzz-long.sh

# make stress: the full sizes, one table of every figure at the end.
stress: all
	@$(AM_TESTS_ENVIRONMENT) python3 $(srcdir)/tests/stress/report.py

# make fuzz-long: the parser fuzzer for FUZZ_SECONDS (30 minutes) in
# build-fuzz-long/; crashing inputs land in tests/fuzz-corpus/known-crashes/.
FUZZ_SECONDS = 1800
fuzz-long:
	$(SHELL) $(srcdir)/tests/stress/fuzz-long.sh $(FUZZ_SECONDS)
.PHONY: stress fuzz-long

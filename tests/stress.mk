# tests/stress.mk: the reliability and load suite (tests/stress/). The
# CI-size versions run as tests; `make stress` runs the full sizes and
# prints every figure (STRESS_SIZE=full).
EXTRA_DIST += tests/stress/stress_lib.py
STRESS_TESTS = \
	tests/stress/upload-gzip.py \
	tests/stress/load.py \
	tests/stress/kill9.py \
	tests/stress/faults.py \
	tests/stress/hostile.py
TESTS += $(STRESS_TESTS)
EXTRA_DIST += $(STRESS_TESTS)

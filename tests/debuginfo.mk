# tests/debuginfo.mk: symbols for recordings made on other machines
# (debuginfo by build-id, re-symbolization, perf archive, debuginfod).
EXTRA_DIST += tests/debuginfo_common.py
DEBUGINFO_TESTS = \
	tests/debuginfo-resym.py \
	tests/debuginfo-client.py \
	tests/debuginfo-archive.py \
	tests/debuginfo-debuginfod.py \
	tests/debuginfo-vdso.py
TESTS += $(DEBUGINFO_TESTS)
EXTRA_DIST += $(DEBUGINFO_TESTS)
dist_doc_DATA += docs/debuginfo.md

# tests/inspect.mk: perfhub inspect against perf, the external corpus, bench-parse

# Real recordings made at test time, compared with perf report --stats,
# --header-only and -D; the text output and the failure messages.
TESTS += tests/inspect-recordings.py tests/inspect-text.py tests/inspect-unfinished.py
EXTRA_DIST += tests/inspect-recordings.py tests/inspect-text.py tests/inspect-unfinished.py \
	tests/perfcompare.py \
	tests/bench-parse tests/bench_parse.py

# make bench: MB/s and records/s of perfhub inspect next to perf
BENCHES += tests/bench-parse

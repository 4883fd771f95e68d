# tests/inspect.mk: perfhub inspect against perf, the external corpus, bench-parse

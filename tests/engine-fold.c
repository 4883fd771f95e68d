/*
 * engine-fold.c - folded stacks of a perf.data file answered by the
 * profile engine offline: the file is read into a profile in memory
 * (pe_feed_load) and folded as the daemon's /collapsed folds it (pe_select,
 * pe_fold). The smallest complete use of the offline engine; the test
 * tests/engine-offline.py compares its output with `perfhub collapse` and
 * with the daemon.
 *
 *   engine-fold FILE [--weight period|samples] [--event NAME] [--pid]
 *               [--tid] [--kernel] [--from NS] [--to NS]
 *
 * Prints "line count" per folded line, bytewise sorted; exit 0, 1 on an
 * error (named on stderr), 2 on bad usage.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/feed.h"
#include "engine/offline.h"
#include "engine/query.h"

typedef struct out {
	int by_samples;
	FILE *fp;
} out;

static int print_line(void *ctx, const char *line, uint64_t samples, uint64_t period)
{
	out *o = ctx;

	return fprintf(o->fp, "%s %llu\n", line,
		       (unsigned long long)(o->by_samples ? samples : period)) < 0;
}

static void warn(void *ctx, const char *text)
{
	(void)ctx;
	fprintf(stderr, "engine-fold: warning: %s\n", text);
}

static int usage(void)
{
	fprintf(stderr, "usage: engine-fold FILE [--weight period|samples] [--event NAME] [--pid]"
			" [--tid] [--kernel] [--from NS] [--to NS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	pe_filter f;
	pe_offline *p = NULL;
	pe_selection *sel = NULL;
	out o = { 0, stdout };
	char msg[512];
	int i, status = 1;

	memset(&f, 0, sizeof(f));
	f.pid = f.tid = -1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--pid"))
			f.with_pid = 1;
		else if (!strcmp(a, "--tid"))
			f.with_tid = 1;
		else if (!strcmp(a, "--kernel"))
			f.kernel = 1;
		else if (!strcmp(a, "--weight") && v && (!strcmp(v, "samples") || !strcmp(v, "period")))
			o.by_samples = !strcmp(argv[++i], "samples");
		else if (!strcmp(a, "--event") && v)
			f.event = argv[++i];
		else if (!strcmp(a, "--from") && v)
			f.from_ns = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(a, "--to") && v)
			f.to_ns = strtoull(argv[++i], NULL, 10);
		else if (a[0] != '-' && !path)
			path = a;
		else
			return usage();
	}
	if (!path)
		return usage();
	p = pe_feed_load(path, NULL, warn, NULL, msg, sizeof(msg));
	if (!p) {
		fprintf(stderr, "engine-fold: %s: %s\n", path, msg);
		return 1;
	}
	if (pe_select(pe_offline_model(p), &f, pe_offline_blocks(p), &sel) < 0 ||
	    pe_fold(pe_offline_model(p), &f, sel, print_line, &o) != 0) {
		fprintf(stderr, "engine-fold: %s: cannot fold the profile\n", path);
		goto out;
	}
	status = fflush(stdout) ? 1 : 0;
out:
	pe_selection_free(sel);
	pe_offline_free(p);
	return status;
}

/*
 * inspect.c - perfhub inspect FILE [--json]: parse a perf.data file or
 * directory offline and print what it holds (header facts, features,
 * events, record counts as perf report --stats counts them).
 *
 * A file that cannot be parsed: exit 1 and one line on stderr naming the
 * file, the byte offset and what is wrong.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "commands.h"
#include "perfdata.h"
#include "report.h"

/* Files smaller than this parse in well under a second: no progress line. */
#define INSPECT_PROGRESS_MIN_BYTES (256ULL << 20)

struct progress {
	int shown;
	struct timespec last;
};

static void show_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct progress *p = ctx;
	struct timespec now;

	if (total < INSPECT_PROGRESS_MIN_BYTES)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* at most ten updates a second */
	if (p->shown && (now.tv_sec - p->last.tv_sec) * 1000000000L + (now.tv_nsec - p->last.tv_nsec) <
				100000000L)
		return;
	p->last = now;
	p->shown = 1;
	fprintf(stderr, "\rperfhub inspect: %3u%% of %llu MB", (unsigned)(done * 100 / total),
		(unsigned long long)(total >> 20));
	fflush(stderr);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: perfhub inspect FILE [--json]\n"
		     "\n"
		     "Parse a perf.data file (file or pipe mode, any byte order, zstd records),\n"
		     "a perf.data directory (perf record --threads, --kcore) or - (stdin) and\n"
		     "print its header, features, events, record counts by type (as perf\n"
		     "report --stats counts them), samples per event and lost samples.\n"
		     "\n"
		     "  --json    one JSON object instead of text\n");
}

int cmd_inspect(int argc, char **argv)
{
	const char *path = NULL;
	int as_json = 0;
	int status = 1;
	pd_error err;
	pd_file *f = NULL;
	json_t *rep = NULL;
	struct progress prog = {0};
	int tty = isatty(STDERR_FILENO);

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			as_json = 1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			fprintf(stderr, "perfhub inspect: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		} else if (!path) {
			path = argv[i];
		} else {
			fprintf(stderr, "perfhub inspect: more than one FILE ('%s')\n", argv[i]);
			return 2;
		}
	}
	if (!path) {
		usage(stderr);
		return 2;
	}

	memset(&err, 0, sizeof(err));
	f = pd_open_path(path, NULL, &err);
	if (!f)
		goto fail;
	if (report_read_all(f, tty ? show_progress : NULL, &prog, &err) < 0)
		goto fail;
	if (prog.shown)
		fputs("\r\033[K", stderr);
	rep = report_json(f);
	if (!rep) {
		fprintf(stderr, "perfhub inspect: %s: out of memory building the report\n", path);
		goto out;
	}
	if (as_json) {
		if (json_dumpf(rep, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
			goto write_error;
		fputc('\n', stdout);
	} else {
		printf("%-18s %s\n", "file", path);
		if (report_print_text(stdout, rep) < 0)
			goto write_error;
		/* Warnings are already in the report; the person reading text
		 * output also sees them on stderr. */
		for (size_t i = 0; i < pd_nr_warnings(f); i++)
			fprintf(stderr, "perfhub inspect: %s: warning: %s\n", path, pd_warning(f, i));
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		goto write_error;
	status = 0;
	goto out;

fail: {
	char buf[320];

	if (prog.shown)
		fputs("\r\033[K", stderr);
	pd_strerror(&err, buf, sizeof(buf));
	for (char *c = buf; *c; c++)	/* the message is one line, always */
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	fprintf(stderr, "perfhub inspect: %s: %s\n", path, buf);
	goto out;
}
write_error:
	perror("perfhub inspect: writing the report");
	status = 1;
out:
	json_decref(rep);
	pd_close(f);
	return status;
}

/*
 * bench-decode - how fast libperfhub-parse walks a recording, decoding every
 * sample field (and touching callchains, branches and registers so nothing
 * is skipped): prints MB/s, records/s and peak RSS.
 *
 *   bench-decode [--count-only] [--ordered] FILE|DIR
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "perfdata.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	pd_options opt;
	pd_error err;
	pd_record r;
	pd_file *f;
	const char *path = NULL;
	double t0, t1, cpu;
	uint64_t sink = 0, bytes, recs, i;
	struct rusage ru;
	char buf[400];
	int rc, a;

	memset(&opt, 0, sizeof(opt));
	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--count-only"))
			opt.no_decode_samples = 1;
		else if (!strcmp(argv[a], "--ordered"))
			opt.ordered = 1;
		else
			path = argv[a];
	}
	if (!path) {
		fprintf(stderr, "usage: bench-decode [--count-only] [--ordered] FILE|DIR\n");
		return 2;
	}
	t0 = now();
	f = pd_open_path(path, &opt, &err);
	if (!f) {
		fprintf(stderr, "%s: %s\n", path, pd_strerror(&err, buf, sizeof(buf)));
		return 1;
	}
	while ((rc = pd_next(f, &r, &err)) > 0) {
		if (r.type == PD_RECORD_SAMPLE) {
			const pd_sample *s = &r.u.sample;

			sink += s->ip + s->time + s->period + s->tid + s->cpu + s->addr;
			for (i = 0; i < s->nr_callchain; i++)
				sink += s->callchain[i];
			for (i = 0; i < s->nr_branches; i++)
				sink += s->branches[i].from;
			for (i = 0; i < s->regs_user.nr; i++)
				sink += s->regs_user.regs[i];
			for (i = 0; i < s->read.nr; i++)
				sink += s->read.values[i].value;
		}
	}
	t1 = now();
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", path, pd_strerror(&err, buf, sizeof(buf)));
		pd_close(f);
		return 1;
	}
	bytes = pd_get_stats(f)->bytes_read;
	recs = pd_get_stats(f)->total_records;
	getrusage(RUSAGE_SELF, &ru);
	cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	      (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	printf("file_bytes %" PRIu64 " decompressed_bytes %" PRIu64 " records %" PRIu64
	       " samples %" PRIu64 "\n", bytes, pd_get_stats(f)->bytes_decompressed, recs,
	       pd_get_stats(f)->records[PD_RECORD_SAMPLE]);
	/* CPU time as well as wall time: on a shared machine the wall clock
	 * measures the neighbours too */
	printf("wall_s %.3f cpu_s %.3f MB/s(wall) %.0f MB/s(cpu) %.0f decompressed_MB/s(cpu) %.0f"
	       " records/s(cpu) %.0f peak_rss_MB %.1f (checksum %" PRIx64 ")\n", t1 - t0, cpu,
	       (double)bytes / 1e6 / (t1 - t0), (double)bytes / 1e6 / cpu,
	       (double)pd_get_stats(f)->bytes_decompressed / 1e6 / cpu, (double)recs / cpu,
	       (double)ru.ru_maxrss / 1024.0, sink & 0xff);
	pd_close(f);
	return 0;
}

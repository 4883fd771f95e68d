/*
 * pd-walk - walk a perf.data file, directory or stream with libperfhub-parse
 * and print what was found, for tests to compare with perf's own output:
 *
 *   pd-walk [--ordered] [--stream] [--no-decode] [--fields] FILE|DIR|-
 *
 * Prints "key: value" lines: mode, byte order, events (name, samples),
 * records by perf's type name, total, samples, lost, warnings. A file that
 * does not parse prints "error: <message>" and exits 1.
 * --stream reads FILE through pd_open_reader (the streaming path);
 * --ordered asks for time-ordered delivery and checks the order;
 * --fields prints a digest of every decoded sample field.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdata.h"

static long read_fd(void *ctx, void *buf, size_t len)
{
	return (long)read(*(int *)ctx, buf, len);
}

/* A digest of the decoded fields, so tests can compare two ways of reading. */
static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

static uint64_t sample_digest(uint64_t h, const pd_sample *s)
{
	uint64_t i;

	h = mix(h, s->ip);
	h = mix(h, s->pid);
	h = mix(h, s->tid);
	h = mix(h, s->time);
	h = mix(h, s->addr);
	h = mix(h, s->id);
	h = mix(h, s->cpu);
	h = mix(h, s->period);
	h = mix(h, s->nr_callchain);
	for (i = 0; i < s->nr_callchain; i++)
		h = mix(h, s->callchain[i]);
	h = mix(h, s->raw_size);
	h = mix(h, s->nr_branches);
	for (i = 0; i < s->nr_branches; i++)
		h = mix(mix(h, s->branches[i].from), s->branches[i].to);
	for (i = 0; i < s->regs_user.nr; i++)
		h = mix(h, s->regs_user.regs[i]);
	h = mix(h, s->stack_user_size);
	h = mix(h, s->weight);
	h = mix(h, s->data_src);
	for (i = 0; i < s->read.nr; i++)
		h = mix(h, s->read.values[i].value);
	return h;
}

int main(int argc, char **argv)
{
	pd_options opt;
	pd_error err;
	pd_file *f;
	pd_record r;
	const char *path = NULL;
	int stream = 0, fields = 0, rc, fd = -1, i;
	uint64_t digest = 0, last_time = 0, order_errors = 0;
	char buf[400];
	size_t n;
	const pd_stats *st;
	const pd_info *info;

	memset(&opt, 0, sizeof(opt));
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ordered"))
			opt.ordered = 1;
		else if (!strcmp(argv[i], "--stream"))
			stream = 1;
		else if (!strcmp(argv[i], "--no-decode"))
			opt.no_decode_samples = 1;
		else if (!strcmp(argv[i], "--fields"))
			fields = 1;
		else
			path = argv[i];
	}
	if (!path) {
		fprintf(stderr, "usage: pd-walk [--ordered] [--stream] [--no-decode] [--fields] FILE|DIR|-\n");
		return 2;
	}
	if (stream) {
		fd = strcmp(path, "-") ? open(path, O_RDONLY) : 0;
		if (fd < 0) {
			perror(path);
			return 2;
		}
		f = pd_open_reader(read_fd, &fd, &opt, &err);
	} else {
		f = pd_open_path(path, &opt, &err);
	}
	if (!f) {
		printf("error: %s\n", pd_strerror(&err, buf, sizeof(buf)));
		return 1;
	}
	while ((rc = pd_next(f, &r, &err)) > 0) {
		if (r.type == PD_RECORD_SAMPLE && r.u.sample.event) {
			if (fields)
				digest = sample_digest(digest, &r.u.sample);
			if (opt.ordered && (r.u.sample.fields & PD_SAMPLE_TIME)) {
				if (r.u.sample.time < last_time)
					order_errors++;
				last_time = r.u.sample.time;
			}
		}
	}
	info = pd_get_info(f);
	st = pd_get_stats(f);
	printf("mode: %s\n", info->mode == PD_MODE_PIPE ? "pipe" : "file");
	printf("version: %d\n", info->version);
	printf("byte_order: %s\n", info->big_endian ? "big" : "little");
	printf("data_files: %u\n", info->nr_data_files);
	printf("events: %zu\n", pd_nr_events(f));
	for (n = 0; n < pd_nr_events(f); n++) {
		const pd_event *ev = pd_get_event(f, n);

		printf("event: %s samples=%" PRIu64 " type=%u config=0x%" PRIx64
		       " sample_type=0x%" PRIx64 " ids=%zu\n",
		       ev->name, ev->nr_samples, ev->attr.type, ev->attr.config,
		       ev->attr.sample_type, ev->nr_ids);
	}
	for (i = 0; i < PD_RECORD_TYPE_MAX; i++) {
		const char *name = pd_record_name((uint32_t)i);

		if (!st->records[i])
			continue;
		if (name)
			printf("record %s: %" PRIu64 "\n", name, st->records[i]);
		else
			printf("record type %d: %" PRIu64 "\n", i, st->records[i]);
	}
	if (st->unknown_records)
		printf("record unknown: %" PRIu64 "\n", st->unknown_records);
	printf("total: %" PRIu64 "\n", st->total_records);
	printf("samples: %" PRIu64 "\n", st->records[PD_RECORD_SAMPLE]);
	printf("lost: %" PRIu64 "\n", st->lost + st->lost_samples);
	printf("bytes_decompressed: %" PRIu64 "\n", st->bytes_decompressed);
	if (fields)
		printf("digest: %016" PRIx64 "\n", digest);
	if (opt.ordered)
		printf("order_errors: %" PRIu64 "\n", order_errors);
	for (n = 0; n < pd_nr_warnings(f); n++)
		printf("warning: %s\n", pd_warning(f, n));
	if (rc < 0)
		printf("error: %s\n", pd_strerror(&err, buf, sizeof(buf)));
	pd_close(f);
	if (fd > 0)
		close(fd);
	return rc < 0 ? 1 : 0;
}

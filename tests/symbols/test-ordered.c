/*
 * test-ordered.c - time-ordered delivery (pd_options.ordered) on files large
 * enough to cycle the queue's blocks many times: rounds written as two
 * interleaved ascending runs (two CPUs' buffers), each round's times
 * reaching past the start of the next, so part of every round is held back
 * and merged with the next one. Checked: every sample once, ascending,
 * its fields and callchain intact; the same through zstd COMPRESSED
 * records; and with a queue cap far below a round, every sample still
 * delivered once, with the overflow warning. A keep_sample hook that
 * wants one CPU's process only gets exactly its samples, in order, in
 * both modes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdwrite.h"

#define ROUNDS 120
#define PER_RUN 400		/* samples per CPU run in a round */
#define CHAIN 24		/* callchain entries: records of ~260 bytes */
#define SPAN 1500		/* a round's times: [1000 j, 1000 j + SPAN) */

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
	printf(__VA_ARGS__); printf("\n"); } } while (0)

static uint8_t *build(int compress, size_t *len, uint64_t *nr)
{
	pdw *w = pdw_new(&(pdw_config){ .attr_size = 128 });
	uint64_t chain[CHAIN];
	uint8_t *buf = NULL;

	pdw_add_cpu_clock(w, PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME |
			      PD_SAMPLE_CALLCHAIN, 9);
	*nr = 0;
	if (compress)
		pdw_compress_begin(w, 0, 8192, 1);
	for (unsigned j = 0; j < ROUNDS; j++) {
		for (unsigned cpu = 0; cpu < 2; cpu++) {
			for (unsigned i = 0; i < PER_RUN; i++) {
				/* each CPU ascending; the two runs interleave in time */
				uint64_t t = 1000ULL * (j + 1) + (uint64_t)i * SPAN / PER_RUN + cpu;
				pd_sample s = { .identifier = 9, .pid = 1 + cpu, .tid = 1 + cpu,
						.time = t, .ip = 0x400000 + t,
						.nr_callchain = CHAIN, .callchain = chain };

				for (unsigned k = 0; k < CHAIN; k++)
					chain[k] = t * 64 + k;
				pdw_sample(w, 0, PD_MISC_USER, &s);
				(*nr)++;
			}
		}
		if (compress)
			pdw_compress_flush(w);
		pdw_finished_round(w);
	}
	if (compress)
		pdw_compress_end(w);
	if (pdw_finish(w, &buf, len)) {
		printf("FAIL: the writer failed\n");
		failures++;
		buf = NULL;
	}
	pdw_free(w);
	return buf;
}

/* pd_options.keep_sample: the process *ctx only (0: every one) */
static int keep_pid(void *ctx, const pd_sample *s)
{
	const uint32_t *pid = ctx;

	return !*pid || s->pid == *pid;
}

/* Walks the file, keeping the samples of process `only` (0: all);
 * returns the samples seen, and counts those out of order or altered. */
static uint64_t walk_only(const uint8_t *buf, size_t len, int ordered, uint64_t max_bytes,
			  uint32_t only, uint64_t *disorder, uint64_t *altered, int *warned)
{
	pd_options opt = { .ordered = ordered, .max_ordered_bytes = max_bytes,
			   .keep_sample = keep_pid, .keep_ctx = &only };
	pd_error err;
	char eb[400];
	pd_file *f = pd_open_mem(buf, len, &opt, &err);
	pd_record r;
	uint64_t n = 0, last = 0;
	int rc;

	*disorder = *altered = 0;
	*warned = 0;
	if (!f) {
		printf("FAIL: pd_open_mem: %s\n", pd_strerror(&err, eb, sizeof(eb)));
		failures++;
		return 0;
	}
	while ((rc = pd_next(f, &r, &err)) > 0) {
		const pd_sample *s = &r.u.sample;

		if (r.type != PD_RECORD_SAMPLE)
			continue;
		n++;
		if (s->time < last)
			(*disorder)++;
		last = s->time;
		if (s->ip != 0x400000 + s->time || s->nr_callchain != CHAIN ||
		    s->callchain[0] != s->time * 64 || s->callchain[CHAIN - 1] != s->time * 64 + CHAIN - 1 ||
		    s->pid != s->tid || (only && s->pid != only))
			(*altered)++;
	}
	CHECK(rc == 0, "pd_next: %s", pd_strerror(&err, eb, sizeof(eb)));
	for (size_t k = 0; k < pd_nr_warnings(f); k++)
		if (strstr(pd_warning(f, k), "ordered events"))
			*warned = 1;
	pd_close(f);
	return n;
}

static uint64_t walk(const uint8_t *buf, size_t len, int ordered, uint64_t max_bytes,
		     uint64_t *disorder, uint64_t *altered, int *warned)
{
	return walk_only(buf, len, ordered, max_bytes, 0, disorder, altered, warned);
}

int main(void)
{
	for (int compress = 0; compress < 2; compress++) {
		size_t len;
		uint64_t nr, disorder, altered;
		int warned;
		uint8_t *buf = build(compress, &len, &nr);
		const char *how = compress ? "zstd" : "plain";

		if (!buf)
			continue;
		/* read as written, the samples are out of order */
		uint64_t got = walk(buf, len, 0, 0, &disorder, &altered, &warned);

		CHECK(got == nr && disorder >= ROUNDS, "%s: the file does not need sorting (%" PRIu64
		      " of %" PRIu64 " out of order)", how, disorder, got);
		/* over 20 MB of records: the 1 MB blocks are reused many times */
		got = walk(buf, len, 1, 0, &disorder, &altered, &warned);
		printf("%s: %zu bytes, %" PRIu64 " samples delivered of %" PRIu64
		       ", %" PRIu64 " out of order, %" PRIu64 " altered\n",
		       how, len, got, nr, disorder, altered);
		CHECK(got == nr, "%s: %" PRIu64 " samples of %" PRIu64, how, got, nr);
		CHECK(disorder == 0, "%s: %" PRIu64 " samples out of order", how, disorder);
		CHECK(altered == 0, "%s: %" PRIu64 " samples altered", how, altered);
		CHECK(!warned, "%s: overflow warning without an overflow", how);

		/* a cap of 64 KB, far below a round: delivered early, all of them */
		got = walk(buf, len, 1, 64 << 10, &disorder, &altered, &warned);
		printf("%s, 64 KB cap: %" PRIu64 " samples delivered, %" PRIu64
		       " out of order, warning %s\n", how, got, disorder, warned ? "given" : "missing");
		CHECK(got == nr, "%s capped: %" PRIu64 " samples of %" PRIu64, how, got, nr);
		CHECK(altered == 0, "%s capped: %" PRIu64 " samples altered", how, altered);
		CHECK(warned, "%s capped: no overflow warning", how);

		/* one process's samples only: half of them, still in order */
		for (int ordered = 0; ordered < 2; ordered++) {
			got = walk_only(buf, len, ordered, 0, 2, &disorder, &altered, &warned);
			CHECK(got == nr / 2 && altered == 0 && (!ordered || disorder == 0),
			      "%s, %s, process 2 only: %" PRIu64 " samples of %" PRIu64 ", %" PRIu64
			      " altered or of another process, %" PRIu64 " out of order", how,
			      ordered ? "ordered" : "as written", got, nr / 2, altered, disorder);
		}
		free(buf);
	}
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}

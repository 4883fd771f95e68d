/*
 * test-readahead.c - files large enough for the input's read-ahead thread
 * give, record by record and byte for byte, what a memory input of the same
 * bytes gives: records of every size up to 64 KB straddling the chunk
 * boundaries, in file order and time-ordered, file and pipe mode, zstd,
 * AUXTRACE payloads skipped across chunks, an unfinished recording, a
 * directory of data.N files. A file shrinking while read fails as before,
 * at the offset where it now ends. The thread runs while a large file is
 * read (and not for a small one) and is gone after pd_close(). Below the
 * parser, the input itself: random peeks up to the largest, skips and
 * seeks, which start the reading over while the thread may be reading.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "input.h"
#include "pdwrite.h"

#define BIG	(12u << 20)	/* bytes of records, well past the threshold */
#define SMALL	(1u << 20)	/* below it: read in line */
#define ID	7
#define MAX_CHAIN 8000		/* a sample of ~64 KB, near a record's limit */

typedef struct gen {
	int pipe, compress, aux;
	size_t bytes;		/* records to write, roughly */
	uint64_t seed;
} gen;

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Mostly short callchains, some long, a few near the largest record. */
static size_t chain_len(void)
{
	unsigned k = (unsigned)(rnd() % 100);

	if (k < 70)
		return 1 + rnd() % 40;
	if (k < 95)
		return 41 + rnd() % 2000;
	return 2000 + rnd() % (MAX_CHAIN - 2000);
}

static void put_sample(pdw *w, uint64_t t, uint64_t *chain)
{
	pd_sample s = { .identifier = ID, .ip = rnd(), .pid = 10, .tid = 11, .time = t,
			.period = 1 + rnd() % 1000, .callchain = chain };

	s.nr_callchain = chain_len();
	for (size_t i = 0; i < s.nr_callchain; i++)
		chain[i] = rnd();	/* incompressible: zstd output stays large */
	pdw_sample(w, 0, PD_MISC_USER, &s);
}

static void put_comm(pdw *w, unsigned k)
{
	char name[40];
	pd_sample_id sid = { .identifier = ID };

	snprintf(name, sizeof(name), "task-%.*s", (int)(k % 24), "abcdefghijklmnopqrstuvwx");
	pdw_comm(w, 0, &(pd_comm){ .pid = k, .tid = k, .comm = name }, &sid);
}

/* AUXTRACE and its payload, up to 768 KB: skips past what is buffered. */
static void put_aux(pdw *w)
{
	size_t n = 8 * (1 + rnd() % (96 * 1024));
	uint8_t *p = malloc(n);

	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + 7);
	pdw_record_begin(w, PD_RECORD_AUXTRACE, 0);
	pdw_put_u64(w, n);
	pdw_put_u64(w, 0);
	pdw_put_u64(w, 0xfeed);
	pdw_put_u32(w, 0);
	pdw_put_u32(w, 11);
	pdw_put_u32(w, 0);
	pdw_put_u32(w, 0);
	pdw_record_end(w, -1, NULL);
	pdw_raw(w, p, n);
	free(p);
}

static uint8_t *build(const gen *g, size_t *len, uint64_t *data_off, uint64_t *data_size)
{
	pdw *w = pdw_new(&(pdw_config){ .pipe = g->pipe });
	uint64_t *chain = malloc(MAX_CHAIN * sizeof(*chain));
	uint8_t *buf = NULL;
	size_t written = 0;

	rng = g->seed;
	pdw_add_cpu_clock(w, PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID |
			      PD_SAMPLE_TIME | PD_SAMPLE_CALLCHAIN | PD_SAMPLE_PERIOD, ID);
	pdw_feature_string(w, PD_FEAT_HOSTNAME, "readahead");
	if (g->compress)
		pdw_compress_begin(w, 1, 60000, 1);
	for (unsigned k = 0; written < g->bytes; k++) {
		/* times go back a little at each round: the ordered queue sorts */
		uint64_t t = 1000000 + 10ULL * k - (k % 200 ? 0 : 500);

		if (k % 97 == 0)
			put_comm(w, k);
		if (g->aux && k % 300 == 150)
			put_aux(w);
		put_sample(w, t, chain);
		if (k % 200 == 199) {
			if (g->compress)
				pdw_compress_flush(w);
			pdw_finished_round(w);
		}
		written = (size_t)pdw_data_size(w);
	}
	if (g->compress)
		pdw_compress_end(w);
	if (pdw_finish(w, &buf, len))
		CHECK(0, "the writer failed");
	*data_off = pdw_data_offset(w);
	*data_size = pdw_data_size(w);
	pdw_free(w);
	free(chain);
	return buf;
}

static char tmpdir[4096];

static const char *tmp_path(const char *name)
{
	static char path[4200];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

static int base_threads;	/* before any file is read */

/* The threads of this process beside base_threads: 1 while a read-ahead
 * thread runs. */
static int nr_threads(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n - base_threads;
}

static void *nothing(void *arg)
{
	return arg;
}

/* A sanitizer starts a thread of its own at the first pthread_create():
 * one made and joined first, the count is what the files leave. */
static void count_base_threads(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, nothing, NULL) == 0)
		pthread_join(t, NULL);
	base_threads = nr_threads();
}

/* The record read from the file (a) against the one from memory (b). */
static int same_record(const char *what, size_t i, const pd_record *a, const pd_record *b)
{
	int ok = a->type == b->type && a->size == b->size && a->offset == b->offset &&
		 a->data_file == b->data_file && a->compressed == b->compressed &&
		 !memcmp(a->raw, b->raw, a->size);

	if (ok && a->type == PD_RECORD_SAMPLE) {
		const pd_sample *x = &a->u.sample, *y = &b->u.sample;

		ok = x->time == y->time && x->ip == y->ip && x->nr_callchain == y->nr_callchain &&
		     !memcmp(x->callchain, y->callchain, x->nr_callchain * 8);
	}
	CHECK(ok, "%s: record %zu (type %u, %u bytes at %llu) differs from memory's "
	      "(type %u, %u bytes at %llu)", what, i, a->type, a->size,
	      (unsigned long long)a->offset, b->type, b->size, (unsigned long long)b->offset);
	return ok;
}

static void same_end(const char *what, pd_file *a, pd_file *b, int rc,
		     const pd_error *ea, const pd_error *eb)
{
	CHECK(pd_get_stats(a)->total_records == pd_get_stats(b)->total_records &&
	      pd_get_stats(a)->bytes_read == pd_get_stats(b)->bytes_read,
	      "%s: stats differ", what);
	CHECK(pd_nr_warnings(a) == pd_nr_warnings(b), "%s: %zu warnings, memory %zu", what,
	      pd_nr_warnings(a), pd_nr_warnings(b));
	for (size_t i = 0; i < pd_nr_warnings(a) && i < pd_nr_warnings(b); i++)
		CHECK(!strcmp(pd_warning(a, i), pd_warning(b, i)), "%s: warning '%s', memory '%s'",
		      what, pd_warning(a, i), pd_warning(b, i));
	if (rc < 0)
		CHECK(ea->code == eb->code && ea->offset == eb->offset && !strcmp(ea->msg, eb->msg),
		      "%s: error '%s' at %llu, memory '%s' at %llu", what, ea->msg,
		      (unsigned long long)ea->offset, eb->msg, (unsigned long long)eb->offset);
}

/* Walks `path` and the same bytes in memory side by side; the records read
 * from the file (thread or not, as `threaded` says). */
static size_t compare(const char *what, const char *path, const uint8_t *buf, size_t len,
		      int ordered, int threaded)
{
	pd_options opt = { .ordered = ordered };
	pd_error ea, eb;
	pd_file *a = pd_open_path(path, &opt, &ea), *b = pd_open_mem(buf, len, &opt, &eb);
	pd_record ra, rb;
	size_t n = 0;
	int rc = 0;

	CHECK(a && b, "%s: open failed: %s", what, a ? eb.msg : ea.msg);
	while (a && b) {
		int xa = pd_next(a, &ra, &ea), xb = pd_next(b, &rb, &eb);

		CHECK(xa == xb, "%s: record %zu: pd_next %d, memory %d", what, n, xa, xb);
		if (xa <= 0)	/* the thread lives as long as the input */
			CHECK(nr_threads() == threaded, "%s: %d threads at the end", what,
			      nr_threads());
		rc = xa;
		if (xa != xb || xa <= 0 || !same_record(what, n, &ra, &rb))
			break;
		n++;
	}
	if (a && b)
		same_end(what, a, b, rc, &ea, &eb);
	pd_close(a);
	pd_close(b);
	CHECK(nr_threads() == 0, "%s: %d threads after pd_close", what, nr_threads());
	return n;
}

static void check_gen(const char *what, const gen *g, int threaded)
{
	size_t len;
	uint64_t doff, dsize;
	uint8_t *buf = build(g, &len, &doff, &dsize);
	const char *path = tmp_path("file.data");

	if (!buf || pdw_write_file(path, buf, len)) {
		CHECK(0, "%s: cannot write %s", what, path);
		free(buf);
		return;
	}
	for (int ordered = 0; ordered < 2; ordered++) {
		char name[80];

		snprintf(name, sizeof(name), "%s%s", what, ordered ? ", ordered" : "");
		CHECK(compare(name, path, buf, len, ordered, threaded) > 100, "%s: few records", name);
	}
	free(buf);
	unlink(path);
}

/* perf killed while it wrote: data size 0, no features, the last record
 * cut at the end of the file, or (space allocated, never written) followed
 * by zeros well past the read-ahead. */
static void check_unfinished(int zeros)
{
	gen g = { .bytes = BIG / 2, .seed = 99 };
	size_t len;
	uint64_t doff, dsize;
	uint8_t *buf = build(&g, &len, &doff, &dsize);
	const char *path = tmp_path("unfinished.data");
	const char *what = zeros ? "unfinished, zeros after" : "unfinished";

	len = (size_t)(doff + dsize - 20);
	memset(buf + 48, 0, 8);		/* data size */
	memset(buf + 72, 0, 32);	/* feature bits */
	if (zeros) {
		len = (size_t)(doff + dsize / 2);
		buf = realloc(buf, len + (2u << 20));
		memset(buf + len, 0, 2u << 20);
		len += 2u << 20;
	}
	CHECK(!pdw_write_file(path, buf, len), "cannot write %s", path);
	CHECK(compare(what, path, buf, len, 0, 1) > 100, "%s: few records", what);
	free(buf);
	unlink(path);
}

/* The records of a file's data section alone, as a data.N file holds them. */
static uint8_t *data_part(uint64_t seed, size_t bytes, size_t *len)
{
	gen g = { .bytes = bytes, .seed = seed };
	size_t n;
	uint64_t doff, dsize;
	uint8_t *buf = build(&g, &n, &doff, &dsize);

	memmove(buf, buf + doff, (size_t)dsize);
	*len = (size_t)dsize;
	return buf;
}

/* A file of the header and attrs of `head` and the records `rec` alone. */
static uint8_t *with_header(const uint8_t *head, uint64_t doff, const uint8_t *rec, size_t n,
			    size_t *len)
{
	uint64_t dsize = n;
	uint8_t *b = malloc((size_t)doff + n);

	memcpy(b, head, (size_t)doff);
	memcpy(b + doff, rec, n);
	memcpy(b + 48, &dsize, 8);	/* data size */
	memset(b + 72, 0, 32);		/* no features */
	*len = (size_t)doff + n;
	return b;
}

/* The next records of the directory f against all of m's; the count. */
static size_t same_part(pd_file *f, pd_file *m, unsigned file, uint64_t doff, size_t n)
{
	pd_record r, rm;
	pd_error e, em;

	while (m && pd_next(m, &rm, &em) > 0) {
		if (pd_next(f, &r, &e) <= 0) {
			CHECK(0, "directory: part %u ends early", file);
			break;
		}
		rm.offset -= doff;	/* a data.N file has its records alone */
		rm.data_file = file;
		if (!same_record("directory", n++, &r, &rm))
			break;
	}
	return n;
}

/* perf record --threads: data (header, a few records), data.0 and data.1
 * large; each part's records as memory gives them. */
static void check_directory(void)
{
	gen g = { .bytes = 4096, .seed = 5 };
	uint64_t doff, dsize;
	size_t len[3], n = 0;
	uint8_t *part[3];
	const char *names[3] = { "dir.data/data", "dir.data/data.0", "dir.data/data.1" };
	pd_error e;
	pd_record r;
	pd_file *f;

	mkdir(tmp_path("dir.data"), 0700);
	part[0] = build(&g, &len[0], &doff, &dsize);
	part[1] = data_part(6, BIG / 2, &len[1]);
	part[2] = data_part(7, BIG / 2, &len[2]);
	for (unsigned k = 0; k < 3; k++)
		CHECK(!pdw_write_file(tmp_path(names[k]), part[k], len[k]), "cannot write %s",
		      names[k]);
	f = pd_open_path(tmp_path("dir.data"), NULL, &e);
	CHECK(f != NULL, "directory: %s", f ? "" : e.msg);
	for (unsigned k = 0; f && k < 3; k++) {
		size_t blen = len[0];
		uint8_t *b = k ? with_header(part[0], doff, part[k], len[k], &blen) : NULL;
		pd_file *m = pd_open_mem(k ? b : part[0], blen, NULL, &e);

		n = same_part(f, m, k, k ? doff : 0, n);
		pd_close(m);
		free(b);
	}
	CHECK(n > 100 && f && pd_next(f, &r, &e) == 0, "directory: %zu records, then more", n);
	pd_close(f);
	CHECK(nr_threads() == 0, "directory: %d threads after pd_close", nr_threads());
	for (unsigned k = 0; k < 3; k++) {
		unlink(tmp_path(names[k]));
		free(part[k]);
	}
	rmdir(tmp_path("dir.data"));
}

/* Cut to `cut` bytes of data after pd_open: the records before the cut,
 * then "file ends early" at the cut, whether read ahead or in line. */
static void check_shrinking(size_t bytes, uint64_t cut)
{
	gen g = { .bytes = bytes, .seed = 3 };
	size_t len, n = 0;
	uint64_t doff, dsize, last_end = 0;
	uint8_t *buf = build(&g, &len, &doff, &dsize);
	const char *path = tmp_path("shrinking.data");
	pd_error e;
	pd_file *f;
	pd_record r;
	int rc;

	CHECK(!pdw_write_file(path, buf, len), "cannot write %s", path);
	f = pd_open_path(path, NULL, &e);
	CHECK(f != NULL, "shrinking: %s", f ? "" : e.msg);
	CHECK(truncate(path, (off_t)(doff + cut)) == 0, "cannot truncate %s", path);
	while (f && (rc = pd_next(f, &r, &e)) > 0) {
		CHECK(!memcmp(r.raw, buf + r.offset, r.size), "shrinking: record %zu differs", n);
		last_end = r.offset + r.size;
		n++;
	}
	CHECK(f && rc < 0 && e.code == PD_ERR_TRUNCATED && e.offset == doff + cut &&
	      strstr(e.msg, "file ends early"), "shrinking %zu bytes: got '%s' at %llu", bytes,
	      f ? e.msg : "", (unsigned long long)e.offset);
	CHECK(last_end <= doff + cut && doff + cut - last_end < 65536,
	      "shrinking: the last record ends at %llu", (unsigned long long)last_end);
	pd_close(f);
	CHECK(nr_threads() == 0, "shrinking: %d threads after pd_close", nr_threads());
	free(buf);
	unlink(path);
}

/* pd_close() in the middle: the thread, likely reading, is joined. */
static void check_close_early(void)
{
	gen g = { .bytes = BIG / 2, .seed = 11 };
	size_t len;
	uint64_t doff, dsize;
	uint8_t *buf = build(&g, &len, &doff, &dsize);
	const char *path = tmp_path("early.data");
	pd_error e;
	pd_record r;

	CHECK(!pdw_write_file(path, buf, len), "cannot write %s", path);
	for (int k = 1; k < 2000; k *= 3) {
		pd_file *f = pd_open_path(path, NULL, &e);

		for (int i = 0; f && i < k && pd_next(f, &r, &e) > 0; i++)
			;
		pd_close(f);
		CHECK(nr_threads() == 0, "closed after %d records: %d threads", k, nr_threads());
	}
	free(buf);
	unlink(path);
}

/* One step of the walk over the input: peek and advance, skip or seek.
 * Returns the new position. */
static uint64_t input_step(pd_input *in, const uint8_t *want, uint64_t len, uint64_t pos)
{
	unsigned k = (unsigned)(rnd() % 100);
	pd_error e;

	if (k < 80 && pos < len) {
		size_t n = k < 3 ? IN_STREAM_BUF : 1 + rnd() % 70000;
		uint64_t expect = n < len - pos ? n : len - pos;
		const uint8_t *p;
		long got = in_peek(in, n, &p, &e);

		CHECK(got == (long)expect && !memcmp(p, want + pos, (size_t)expect),
		      "input: peek of %zu at %llu: %ld bytes%s", n, (unsigned long long)pos, got,
		      got == (long)expect ? ", not the file's" : "");
		if (got <= 0)
			return pos;
		n = 1 + rnd() % (size_t)got;
		in_advance(in, n);
		return pos + n;
	}
	if (k < 95 && pos < len) {
		uint64_t n = rnd() % 800000;

		n = n < len - pos ? n : len - pos;
		CHECK(in_skip(in, n, &e) == 0, "input: skip of %llu at %llu: %s",
		      (unsigned long long)n, (unsigned long long)pos, e.msg);
		return pos + n;
	}
	pos = rnd() % len;
	CHECK(in_seek(in, pos) == 0, "input: seek to %llu", (unsigned long long)pos);
	return pos;
}

/* The input alone on a file of random bytes, against those bytes. */
static void check_input(void)
{
	size_t len = 16u << 20;
	uint8_t *want = malloc(len);
	const char *path = tmp_path("input.bin");
	uint64_t pos = 0;
	pd_input *in = NULL;
	pd_error e;
	int fd;

	rng = 42;
	for (size_t i = 0; i < len; i++)
		want[i] = (uint8_t)rnd();
	CHECK(!pdw_write_file(path, want, len), "cannot write %s", path);
	fd = open(path, O_RDONLY);
	if (fd >= 0)
		in = in_open_mmap(fd, len, &e);
	if (fd >= 0)
		close(fd);
	CHECK(in != NULL, "input: cannot open %s", path);
	for (int i = 0; in && i < 4000; i++) {
		if (i % 8 == 0)
			usleep(100);	/* the thread fills the ring meanwhile */
		pos = input_step(in, want, len, pos);
		CHECK(in_pos(in) == pos, "input: at %llu, expected %llu",
		      (unsigned long long)in_pos(in), (unsigned long long)pos);
		if (failures > 20)
			break;
	}
	/* the largest peek from every place in the ring, after small steps
	 * from a seek and the time for the thread to fill every free slot */
	for (uint64_t d = 0; in && d < (3u << 19) && !failures; d += 12345) {
		const uint8_t *p;
		long got;

		pos = 1 << 20;
		CHECK(in_seek(in, pos) == 0, "input: seek to %llu", (unsigned long long)pos);
		for (; pos < (1u << 20) + d; pos += 8192) {
			CHECK(in_peek(in, 16384, &p, &e) == 16384, "input: peek at %llu",
			      (unsigned long long)pos);
			in_advance(in, 8192);
		}
		usleep(300);
		got = in_peek(in, IN_STREAM_BUF, &p, &e);
		CHECK(got == IN_STREAM_BUF && !memcmp(p, want + pos, IN_STREAM_BUF),
		      "input: the largest peek at %llu: %ld bytes", (unsigned long long)pos, got);
	}
	CHECK(nr_threads() == 1, "input: %d threads while reading", nr_threads());
	in_free(in);
	CHECK(nr_threads() == 0, "input: %d threads after in_free", nr_threads());
	free(want);
	unlink(path);
}

int main(void)
{
	const char *base = getenv("PERFHUB_TEST_TMP");

	snprintf(tmpdir, sizeof(tmpdir), "%s/readahead.XXXXXX", base && *base ? base : "/tmp");
	count_base_threads();
	if (!mkdtemp(tmpdir)) {
		perror(tmpdir);
		return 1;
	}
	check_gen("file mode", &(gen){ .bytes = BIG, .seed = 1 }, 1);
	check_gen("pipe mode", &(gen){ .pipe = 1, .bytes = BIG, .seed = 2 }, 1);
	check_gen("zstd", &(gen){ .compress = 1, .bytes = BIG, .seed = 4 }, 1);
	check_gen("AUXTRACE payloads", &(gen){ .aux = 1, .bytes = BIG, .seed = 8 }, 1);
	check_gen("small file", &(gen){ .bytes = SMALL, .seed = 9 }, 0);
	check_unfinished(0);
	check_unfinished(1);
	check_directory();
	check_shrinking(BIG, (3u << 20) + 1234);
	check_shrinking(BIG, BIG / 2);
	check_shrinking(SMALL, SMALL / 2);
	check_close_early();
	check_input();
	rmdir(tmpdir);
	return check_done("test-readahead");
}

/* input.c - memory, mmap and stream inputs behind one sequential interface. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "input.h"
#include "perr.h"

enum in_kind { IN_MEM, IN_MMAP, IN_STREAM };

/* Release mapped pages behind the reader every this many bytes, so the
 * resident set stays small however large the file is. */
#define IN_RELEASE_STEP	(16u << 20)

struct pd_input {
	enum in_kind kind;
	/* memory and mmap */
	const uint8_t *base;
	uint64_t size, end;
	uint64_t released;	/* mmap: bytes before this were madvise'd away */
	/* streams */
	pd_read_fn read;
	void *ctx;
	int fd;
	uint8_t *buf;
	size_t head, tail;	/* unread bytes are buf[head..tail) */
	int eof;
	uint64_t pos;		/* offset of the next unread byte */
};

pd_input *in_open_mem(const void *buf, size_t len)
{
	pd_input *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->kind = IN_MEM;
	in->base = buf;
	in->size = in->end = len;
	return in;
}

pd_input *in_open_mmap(int fd, uint64_t size, pd_error *err)
{
	pd_input *in;
	void *map;

	if (size == 0) {
		pd_set_error(err, PD_ERR_TRUNCATED, 0, "empty file, expected a perf.data header");
		return NULL;
	}
	if (size > SIZE_MAX) {
		pd_set_error(err, PD_ERR_LIMIT, 0, "file too large to map");
		return NULL;
	}
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		pd_set_error(err, PD_ERR_IO, 0, "mmap: %s", strerror(errno));
		return NULL;
	}
	(void)madvise(map, (size_t)size, MADV_SEQUENTIAL);
	in = calloc(1, sizeof(*in));
	if (!in) {
		munmap(map, (size_t)size);
		pd_set_error(err, PD_ERR_NOMEM, 0, "out of memory");
		return NULL;
	}
	in->kind = IN_MMAP;
	in->base = map;
	in->size = in->end = size;
	return in;
}

static long fd_read(void *ctx, void *buf, size_t len)
{
	int fd = *(int *)ctx;
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

static pd_input *stream_new(void)
{
	pd_input *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->kind = IN_STREAM;
	in->buf = malloc(IN_STREAM_BUF);
	if (!in->buf) {
		free(in);
		return NULL;
	}
	return in;
}

pd_input *in_open_fd_stream(int fd)
{
	pd_input *in = stream_new();

	if (!in)
		return NULL;
	in->fd = fd;
	in->read = fd_read;
	in->ctx = &in->fd;
	return in;
}

pd_input *in_open_reader(pd_read_fn read, void *ctx)
{
	pd_input *in = stream_new();

	if (!in)
		return NULL;
	in->read = read;
	in->ctx = ctx;
	return in;
}

void in_free(pd_input *in)
{
	if (!in)
		return;
	if (in->kind == IN_MMAP)
		munmap((void *)in->base, (size_t)in->size);
	free(in->buf);
	free(in);
}

int in_is_stream(const pd_input *in)
{
	return in->kind == IN_STREAM;
}

uint64_t in_size(const pd_input *in)
{
	return in->kind == IN_STREAM ? 0 : in->size;
}

uint64_t in_pos(const pd_input *in)
{
	return in->pos;
}

const uint8_t *in_at(const pd_input *in, uint64_t off, uint64_t n)
{
	if (in->kind == IN_STREAM || off > in->size || n > in->size - off)
		return NULL;
	return in->base + off;
}

int in_seek(pd_input *in, uint64_t off)
{
	if (in->kind == IN_STREAM || off > in->end)
		return -1;
	in->pos = off;
	return 0;
}

void in_set_end(pd_input *in, uint64_t end)
{
	if (in->kind != IN_STREAM)
		in->end = end < in->size ? end : in->size;
}

static void release_behind(pd_input *in)
{
	uint64_t upto;
	long pg;

	if (in->kind != IN_MMAP || in->pos - in->released < IN_RELEASE_STEP)
		return;
	pg = sysconf(_SC_PAGESIZE);
	if (pg <= 0)
		pg = 4096;
	/* keep the last step mapped: the current record may point into it */
	upto = (in->pos - IN_RELEASE_STEP / 2) & ~((uint64_t)pg - 1);
	if (upto > in->released) {
		(void)madvise((void *)(in->base + in->released), (size_t)(upto - in->released),
			      MADV_DONTNEED);
		in->released = upto;
	}
}

long in_peek(pd_input *in, size_t n, const uint8_t **p, pd_error *err)
{
	if (in->kind != IN_STREAM) {
		uint64_t left = in->end > in->pos ? in->end - in->pos : 0;

		*p = in->base + in->pos;
		return (long)(left < n ? left : n);
	}
	if (n > IN_STREAM_BUF)
		n = IN_STREAM_BUF;
	while (in->tail - in->head < n && !in->eof) {
		long got;

		if (IN_STREAM_BUF - in->head < n) {
			memmove(in->buf, in->buf + in->head, in->tail - in->head);
			in->tail -= in->head;
			in->head = 0;
		}
		got = in->read(in->ctx, in->buf + in->tail, IN_STREAM_BUF - in->tail);
		if (got < 0) {
			pd_set_error(err, PD_ERR_IO, in->pos + (in->tail - in->head),
				     "read failed: %s", strerror(errno));
			return -1;
		}
		if (got == 0)
			in->eof = 1;
		in->tail += (size_t)got;
	}
	*p = in->buf + in->head;
	return (long)(in->tail - in->head < n ? in->tail - in->head : n);
}

void in_advance(pd_input *in, size_t n)
{
	in->pos += n;
	if (in->kind == IN_STREAM)
		in->head += n;
	else
		release_behind(in);
}

int in_skip(pd_input *in, uint64_t n, pd_error *err)
{
	if (in->kind != IN_STREAM) {
		if (in->end < in->pos || n > in->end - in->pos) {
			pd_set_error(err, PD_ERR_TRUNCATED, in->pos,
				     "payload of %llu bytes runs past the end of the data",
				     (unsigned long long)n);
			return -1;
		}
		in->pos += n;
		release_behind(in);
		return 0;
	}
	while (n > 0) {
		const uint8_t *p;
		size_t want = n > IN_STREAM_BUF ? IN_STREAM_BUF : (size_t)n;
		long got = in_peek(in, want, &p, err);

		if (got < 0)
			return -1;
		if (got == 0) {
			pd_set_error(err, PD_ERR_TRUNCATED, in->pos,
				     "stream ends inside a payload (%llu bytes missing)",
				     (unsigned long long)n);
			return -1;
		}
		in_advance(in, (size_t)got);
		n -= (uint64_t)got;
	}
	return 0;
}

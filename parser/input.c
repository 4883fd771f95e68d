/* input.c - memory, mmap and stream inputs behind one sequential interface. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cursor.h"
#include "input.h"
#include "perr.h"
#include "readahead.h"

enum in_kind { IN_MEM, IN_MMAP, IN_STREAM };

/* A mapped file serves random access to its header sections; its records
 * are read with pread(2) into the bounded buffer instead: page faults on a
 * mapping cost more than the copy (830 MB/s against 3 GB/s here), and the
 * resident set stays at the buffer's size however large the file is.
 *
 * The buffer is a ring of IN_SLOTS chunks (readahead.h) after IN_RESERVE
 * bytes: chunks follow each other in it, so records straddle them as they
 * are; at the ring's end the unread bytes, fewer than the largest
 * in_peek() (IN_STREAM_BUF), are copied into the reserve, in front of the
 * first slot, and reading goes on there. In a large file a thread fills
 * the free slots while the full ones are decoded. */
#define IN_CHUNK	(256u << 10)
#define IN_SLOTS	4
#define IN_RESERVE	IN_STREAM_BUF
#define IN_RING		(IN_RESERVE + IN_SLOTS * IN_CHUNK)
#define IN_AHEAD_MIN	((uint64_t)4 << 20)	/* bytes left that pay for a thread */

struct pd_input {
	enum in_kind kind;
	/* memory and mmap */
	const uint8_t *base;
	uint64_t size, end;
	int map_fd;		/* mmap: a dup of the file, read sequentially */
	ra_ring *ra;		/* mmap: reads into buf + IN_RESERVE */
	uint64_t next, live;	/* mmap: the next chunk; the oldest in [head, tail) */
	int stale;		/* mmap: buf does not go on at pos: restart the ring */
	int stop;		/* mmap: the last chunk stopped short (RA_EOF, errno) */
	int spawn_tried;	/* mmap: once per input */
	/* streams */
	pd_read_fn read;
	void *ctx;
	int fd;
	uint8_t *buf;
	size_t head, tail;	/* unread bytes are buf[head..tail) */
	int eof;
	uint64_t pos;		/* offset of the next unread byte (buf[head] when mmap) */
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
	in = calloc(1, sizeof(*in));
	if (in)
		in->buf = malloc(IN_RING);
	if (in)
		in->map_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (in && in->buf && in->map_fd >= 0)
		in->ra = ra_new(in->map_fd, in->buf + IN_RESERVE, IN_CHUNK, IN_SLOTS);
	if (!in || !in->ra) {
		munmap(map, (size_t)size);
		if (in) {
			if (in->map_fd >= 0)
				close(in->map_fd);
			free(in->buf);
		}
		free(in);
		pd_set_error(err, PD_ERR_NOMEM, 0, "out of memory or file descriptors");
		return NULL;
	}
	(void)posix_fadvise(fd, 0, (off_t)size, POSIX_FADV_SEQUENTIAL);
	in->kind = IN_MMAP;
	in->base = map;
	in->size = in->end = size;
	in->stale = 1;
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
	if (in->kind == IN_MMAP) {
		ra_free(in->ra);	/* its thread first: it reads into buf */
		munmap((void *)in->base, (size_t)in->size);
		close(in->map_fd);
	}
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
	in->head = in->tail = 0;	/* the buffer no longer matches */
	in->stale = 1;
	return 0;
}

void in_set_end(pd_input *in, uint64_t end)
{
	if (in->kind == IN_STREAM)
		return;
	in->end = end < in->size ? end : in->size;
	/* nothing buffered past the end is taken */
	if (in->kind == IN_MMAP && in->end >= in->pos && in->tail - in->head > in->end - in->pos)
		in->tail = in->head + (size_t)(in->end - in->pos);
}

/* No more bytes at file offset `at`: stop is RA_EOF, the end of a file
 * shorter than when it was opened, or the errno of a failed read. */
static void read_failed(pd_error *err, uint64_t at, int stop)
{
	if (stop == RA_EOF)
		pd_set_error(err, PD_ERR_TRUNCATED, at, "file ends early (changed while read?)");
	else
		pd_set_error(err, PD_ERR_IO, at, "read failed: %s", strerror(stop));
}

/* The buffer starts over at file offset `at` (after a seek or a skip). */
static void ring_restart(pd_input *in, uint64_t at)
{
	in->head = in->tail = IN_RESERVE;
	in->next = in->live = 0;
	in->stale = 0;
	in->stop = 0;
	ra_restart(in->ra, at, in->end);
}

/* At the ring's end: the unread bytes into the reserve, every slot free. */
static void ring_wrap(pd_input *in)
{
	size_t left = in->tail - in->head;

	memcpy(in->buf + IN_RESERVE - left, in->buf + in->head, left);
	in->head = IN_RESERVE - left;
	in->tail = IN_RESERVE;
	in->live = in->next;
	ra_release(in->ra, in->live);
}

/* Chunks wholly before head are read: their slots go back to the ring. */
static void ring_release(pd_input *in)
{
	uint64_t live = in->live;

	while (live < in->next && IN_RESERVE + (live % IN_SLOTS + 1) * IN_CHUNK <= in->head)
		live++;
	if (live != in->live) {
		in->live = live;
		ra_release(in->ra, live);
	}
}

/* A thread for the rest of a large file; not for its header at 0, which
 * may be all it is opened for. */
static void maybe_spawn(pd_input *in, uint64_t at)
{
	if (in->spawn_tried || in->pos == 0 || in->end < at || in->end - at < IN_AHEAD_MIN)
		return;
	in->spawn_tried = 1;
	(void)ra_spawn(in->ra);	/* without one, reads stay in line */
}

/* The next chunk after the buffered bytes; -1 when there is none to read. */
static int ring_advance(pd_input *in, pd_error *err)
{
	uint64_t at = in->pos + (in->tail - in->head);
	long got;
	int stop;

	if (in->stale) {
		ring_restart(in, at);
	} else if (in->stop) {
		read_failed(err, at, in->stop);
		return -1;
	} else if (in->tail == IN_RING) {
		ring_wrap(in);
	}
	ring_release(in);
	maybe_spawn(in, at);
	got = ra_get(in->ra, in->next++, &stop);
	if (got <= 0) {
		read_failed(err, at, stop ? stop : RA_EOF);
		return -1;
	}
	in->tail += (uint64_t)got < in->end - at ? (size_t)got : (size_t)(in->end - at);
	in->stop = stop;
	return 0;
}

/* Mapped file: make buf hold [pos, pos + n) or up to the end. */
static long file_fill(pd_input *in, size_t n, pd_error *err)
{
	uint64_t left = in->end > in->pos ? in->end - in->pos : 0;

	if (n > left)
		n = (size_t)left;
	while (in->tail - in->head < n)
		if (ring_advance(in, err) < 0)
			return -1;
	return (long)n;
}

long in_peek(pd_input *in, size_t n, const uint8_t **p, pd_error *err)
{
	if (in->kind == IN_MEM) {
		uint64_t left = in->end > in->pos ? in->end - in->pos : 0;

		*p = in->base + in->pos;
		return (long)(left < n ? left : n);
	}
	if (n > IN_STREAM_BUF)
		n = IN_STREAM_BUF;
	if (in->kind == IN_MMAP) {
		long got = file_fill(in, n, err);

		*p = in->buf + in->head;
		return got;
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

uint32_t in_take_buffered(pd_input *in, int swap, const uint8_t **p, uint64_t *off)
{
	const uint8_t *q;
	uint64_t avail;
	uint16_t size;

	if (in->kind == IN_MEM) {
		q = in->base + in->pos;
		avail = in->end > in->pos ? in->end - in->pos : 0;
	} else {
		q = in->buf + in->head;
		avail = in->tail - in->head;
	}
	if (avail < 8)
		return 0;
	size = load_u16(q + 6, swap);
	if (size < 8 || size > avail)
		return 0;
	*p = q;
	*off = in->pos;
	in->pos += size;
	if (in->kind != IN_MEM)
		in->head += size;
	return size;
}

void in_advance(pd_input *in, size_t n)
{
	in->pos += n;
	if (in->kind != IN_MEM)
		in->head += n;
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
		if (in->kind == IN_MMAP) {
			size_t have = in->tail - in->head;

			if (n < have) {
				in->head += (size_t)n;
			} else {
				in->head = in->tail = 0;
				in->stale = 1;
			}
		}
		in->pos += n;
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

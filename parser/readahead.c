/* readahead.c - chunks of a file into a ring of slots. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "readahead.h"

typedef struct ra_slot {
	uint64_t seq;		/* the chunk in it */
	int ready;		/* read: got and stop below are set */
	int stop;		/* 0, RA_EOF or errno */
	long got;		/* bytes read */
} ra_slot;

struct ra_ring {
	int fd;
	uint8_t *slots;
	size_t chunk;
	unsigned nslots;
	ra_slot *meta;		/* per slot */
	uint64_t off, end;	/* the range since the last restart */
	uint64_t claimed;	/* chunks whose read has begun */
	uint64_t released;	/* chunks the caller is done with */
	int done;		/* the range is claimed or a read stopped short */
};

/* pread until len bytes, the end of the file (*stop RA_EOF) or an error. */
static long read_full(int fd, uint8_t *dst, size_t len, uint64_t off, int *stop)
{
	size_t got = 0;

	*stop = 0;
	while (got < len) {
		ssize_t n = pread(fd, dst + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*stop = n < 0 ? errno : RA_EOF;
			break;
		}
		got += (size_t)n;
	}
	return (long)got;
}

/* Claims the next chunk and reads it into its slot. */
static void produce(ra_ring *ra)
{
	uint64_t s = ra->claimed++;
	uint64_t off = ra->off + s * ra->chunk;
	uint64_t left = ra->end > off ? ra->end - off : 0;
	size_t len = left < ra->chunk ? (size_t)left : ra->chunk;
	ra_slot *m = &ra->meta[s % ra->nslots], r = { s, 1, 0, 0 };

	m->ready = 0;
	m->seq = s;
	if (off + len >= ra->end)
		ra->done = 1;
	r.got = read_full(ra->fd, ra->slots + (s % ra->nslots) * ra->chunk, len, off, &r.stop);
	*m = r;
	if (r.stop)
		ra->done = 1;
}

ra_ring *ra_new(int fd, uint8_t *slots, size_t chunk, unsigned nslots)
{
	ra_ring *ra = calloc(1, sizeof(*ra));

	if (ra)
		ra->meta = calloc(nslots, sizeof(*ra->meta));
	if (!ra || !ra->meta) {
		free(ra);
		return NULL;
	}
	ra->fd = fd;
	ra->slots = slots;
	ra->chunk = chunk;
	ra->nslots = nslots;
	ra->done = 1;	/* nothing to read before a restart */
	return ra;
}

void ra_free(ra_ring *ra)
{
	if (!ra)
		return;
	free(ra->meta);
	free(ra);
}

void ra_restart(ra_ring *ra, uint64_t off, uint64_t end)
{
	ra->off = off;
	ra->end = end;
	ra->claimed = ra->released = 0;
	for (unsigned i = 0; i < ra->nslots; i++)
		ra->meta[i].ready = 0;
	ra->done = off >= end;
}

long ra_get(ra_ring *ra, uint64_t s, int *stop)
{
	ra_slot *m = &ra->meta[s % ra->nslots];
	ra_slot r = { s, 1, RA_EOF, 0 };

	if (s == ra->claimed && !ra->done)
		produce(ra);
	if (m->ready && m->seq == s)
		r = *m;
	*stop = r.stop;
	return r.got;
}

void ra_release(ra_ring *ra, uint64_t s)
{
	ra->released = s;
}

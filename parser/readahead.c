/* readahead.c - chunks of a file into a ring of slots, in line or on a thread. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
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
	int threaded;
	pthread_t thread;
	pthread_mutex_t lock;	/* with a thread, everything below */
	pthread_cond_t reader_cv, caller_cv;
	ra_slot *meta;		/* per slot */
	uint64_t off, end;	/* the range since the last restart */
	uint64_t gen;		/* restarts: a read begun before one is dropped */
	uint64_t claimed;	/* chunks whose read has begun (by either thread) */
	uint64_t released;	/* chunks the caller is done with */
	long writing;		/* the slot the thread reads into, -1 */
	int done;		/* the range is claimed or a read stopped short */
	int filling;		/* 0: the ring was full; wait until half is free */
	int reader_waits, caller_waits, quit;
};

static void lock(ra_ring *ra)
{
	if (ra->threaded)
		pthread_mutex_lock(&ra->lock);
}

static void unlock(ra_ring *ra)
{
	if (ra->threaded)
		pthread_mutex_unlock(&ra->lock);
}

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

/* Claims the next chunk and reads it into its slot, the lock released
 * meanwhile (the slot is the reader's alone until it is ready). */
static void produce(ra_ring *ra, int by_thread)
{
	uint64_t s = ra->claimed++, gen = ra->gen;
	uint64_t off = ra->off + s * ra->chunk;
	uint64_t left = ra->end > off ? ra->end - off : 0;
	size_t len = left < ra->chunk ? (size_t)left : ra->chunk;
	ra_slot *m = &ra->meta[s % ra->nslots], r = { s, 1, 0, 0 };

	m->ready = 0;
	m->seq = s;
	if (off + len >= ra->end)
		ra->done = 1;
	if (by_thread)
		ra->writing = (long)(s % ra->nslots);
	unlock(ra);
	r.got = read_full(ra->fd, ra->slots + (s % ra->nslots) * ra->chunk, len, off, &r.stop);
	lock(ra);
	if (by_thread)
		ra->writing = -1;
	if (gen == ra->gen) {	/* else restarted meanwhile: not wanted */
		*m = r;
		if (r.stop)
			ra->done = 1;
	}
	if (ra->caller_waits)
		pthread_cond_signal(&ra->caller_cv);
}

/* Whether the thread may read the next chunk now: once the ring is full
 * it waits until half of it is free, to be woken once for several. */
static int may_read(ra_ring *ra)
{
	uint64_t busy = ra->claimed - ra->released;

	if (ra->quit || ra->done)
		return 0;
	if (busy >= ra->nslots)
		ra->filling = 0;
	else if (busy <= ra->nslots / 2)
		ra->filling = 1;
	return ra->filling;
}

static void *reader(void *arg)
{
	ra_ring *ra = arg;

	pthread_mutex_lock(&ra->lock);
	while (!ra->quit) {
		if (may_read(ra)) {
			produce(ra, 1);
			continue;
		}
		ra->reader_waits = 1;
		pthread_cond_wait(&ra->reader_cv, &ra->lock);
		ra->reader_waits = 0;
	}
	pthread_mutex_unlock(&ra->lock);
	return NULL;
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
	ra->writing = -1;
	ra->done = 1;	/* nothing to read before a restart */
	return ra;
}

/* The thread takes no signals: a program's handlers and sigwait() keep
 * seeing them on the threads they expect. */
int ra_spawn(ra_ring *ra)
{
	sigset_t all, old;
	int rc;

	if (ra->threaded)
		return 0;
	if (pthread_mutex_init(&ra->lock, NULL) != 0)
		return -1;
	if (pthread_cond_init(&ra->reader_cv, NULL) != 0)
		goto no_reader_cv;
	if (pthread_cond_init(&ra->caller_cv, NULL) != 0)
		goto no_caller_cv;
	ra->filling = 1;
	ra->threaded = 1;	/* before the thread reads it */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&ra->thread, NULL, reader, ra);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		return 0;
	ra->threaded = 0;
	pthread_cond_destroy(&ra->caller_cv);
no_caller_cv:
	pthread_cond_destroy(&ra->reader_cv);
no_reader_cv:
	pthread_mutex_destroy(&ra->lock);
	return -1;
}

void ra_free(ra_ring *ra)
{
	if (!ra)
		return;
	if (ra->threaded) {
		pthread_mutex_lock(&ra->lock);
		ra->quit = 1;
		pthread_cond_signal(&ra->reader_cv);
		pthread_mutex_unlock(&ra->lock);
		pthread_join(ra->thread, NULL);
		pthread_cond_destroy(&ra->caller_cv);
		pthread_cond_destroy(&ra->reader_cv);
		pthread_mutex_destroy(&ra->lock);
	}
	free(ra->meta);
	free(ra);
}

void ra_restart(ra_ring *ra, uint64_t off, uint64_t end)
{
	lock(ra);
	ra->gen++;
	ra->off = off;
	ra->end = end;
	ra->claimed = ra->released = 0;
	for (unsigned i = 0; i < ra->nslots; i++)
		ra->meta[i].ready = 0;
	ra->done = off >= end;
	ra->filling = 1;
	if (ra->reader_waits)
		pthread_cond_signal(&ra->reader_cv);
	unlock(ra);
}

/* Whether the caller, waiting for a chunk the thread reads, may read the
 * next one itself: two copies at once when copying is all there is. */
static int may_take(const ra_ring *ra)
{
	return !ra->done && ra->claimed - ra->released < ra->nslots &&
	       ra->writing != (long)(ra->claimed % ra->nslots);
}

/* Waits for the other thread (a chunk it reads, or its slot). */
static void caller_wait(ra_ring *ra)
{
	ra->caller_waits = 1;
	pthread_cond_wait(&ra->caller_cv, &ra->lock);
	ra->caller_waits = 0;
}

long ra_get(ra_ring *ra, uint64_t s, int *stop)
{
	ra_slot *m = &ra->meta[s % ra->nslots];
	ra_slot r = { s, 1, RA_EOF, 0 };

	lock(ra);
	for (;;) {
		if (m->ready && m->seq == s) {
			r = *m;
			break;
		}
		if (s < ra->claimed || ra->writing == (long)(s % ra->nslots)) {
			/* being read: read the next one meanwhile, or wait */
			if (may_take(ra))
				produce(ra, 0);
			else
				caller_wait(ra);
			continue;
		}
		if (s > ra->claimed || ra->done)
			break;	/* past the range: nothing */
		/* nobody reads it: read it here rather than wait */
		produce(ra, 0);
	}
	unlock(ra);
	*stop = r.stop;
	return r.got;
}

void ra_release(ra_ring *ra, uint64_t s)
{
	lock(ra);
	ra->released = s;
	if (ra->reader_waits && may_read(ra))
		pthread_cond_signal(&ra->reader_cv);
	unlock(ra);
}

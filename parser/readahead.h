/*
 * readahead.h - a range of a file read in order into a ring of fixed-size
 * slots: the s-th chunk since the last restart goes to slot s % nslots.
 * Without a thread, ra_get() reads the chunk asked for. Once ra_spawn()
 * succeeded, a second thread keeps the free slots filled while the caller
 * decodes the full ones, so the copy out of the page cache (a third of a
 * parse) overlaps the decoding instead of adding to it. The caller reads
 * a chunk itself when nobody reads it (the thread asleep or not given a
 * CPU on a busy machine), and the next one while the thread reads the one
 * it waits for: never slower than reading in line, by more than locking.
 *
 * A slot is the caller's from ra_get() until ra_release() frees it.
 */
#ifndef PERFHUB_READAHEAD_H
#define PERFHUB_READAHEAD_H

#include <stddef.h>
#include <stdint.h>

#define RA_EOF	(-1)	/* a chunk's stop: the file ended before the range did */

typedef struct ra_ring ra_ring;

/* Reads fd (not closed by ra_free()) into slots (nslots of chunk bytes,
 * the caller's memory). NULL when out of memory. */
ra_ring *ra_new(int fd, uint8_t *slots, size_t chunk, unsigned nslots);
/* A reading thread from now on: 0, or -1 when none can be made (reads
 * stay in line). */
int ra_spawn(ra_ring *ra);
/* Ends the thread (a read under way finishes first) and frees ra. */
void ra_free(ra_ring *ra);
/* Reading starts over at file offset off, up to end; every slot is free. */
void ra_restart(ra_ring *ra, uint64_t off, uint64_t end);
/* Chunk s (at most one past the last asked for, with fewer than nslots
 * chunks before it not released): its bytes in slot s % nslots, the chunk size but at the
 * range's end. *stop is 0, or when the chunk stopped short RA_EOF or the
 * errno of a failed read. */
long ra_get(ra_ring *ra, uint64_t s, int *stop);
/* The chunks before s are done with; their slots may be read into again. */
void ra_release(ra_ring *ra, uint64_t s);

#endif

/*
 * input.h - where the bytes come from: a buffer in memory, an mmap'ed file,
 * or a stream (fd or callback) read through one bounded buffer.
 *
 * Reading is sequential: in_peek() makes up to n bytes at the current
 * position visible without consuming them, in_advance() consumes them.
 * Memory inputs also allow random access with in_at() (file-mode headers).
 * A stream's buffer never grows past IN_STREAM_BUF, whatever the input size.
 */
#ifndef PERFHUB_INPUT_H
#define PERFHUB_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata.h"

#define IN_STREAM_BUF	(1u << 20)	/* also the largest in_peek() of a stream */

typedef struct pd_input pd_input;

/* buf is not copied and must outlive the input. */
pd_input *in_open_mem(const void *buf, size_t len);
/* Maps a regular file read-only; the fd is not kept. NULL with err set. */
pd_input *in_open_mmap(int fd, uint64_t size, pd_error *err);
/* An fd read with read(2); not closed by in_free(). */
pd_input *in_open_fd_stream(int fd);
pd_input *in_open_reader(pd_read_fn read, void *ctx);
void in_free(pd_input *in);

int in_is_stream(const pd_input *in);
/* Total size of a memory input (0 for streams). */
uint64_t in_size(const pd_input *in);
/* Offset of the next unread byte. */
uint64_t in_pos(const pd_input *in);

/* Random access into a memory input: pointer to [off, off+n) or NULL. */
const uint8_t *in_at(const pd_input *in, uint64_t off, uint64_t n);
/* Memory inputs: move the read position (must be <= size). */
int in_seek(pd_input *in, uint64_t off);
/* Limit sequential reads of a memory input to [.., end). */
void in_set_end(pd_input *in, uint64_t end);

/* Up to n bytes at the current position (n <= IN_STREAM_BUF for streams).
 * Returns how many are available: fewer than n only at the end of input.
 * -1 on a read error (err filled). */
long in_peek(pd_input *in, size_t n, const uint8_t **p, pd_error *err);
void in_advance(pd_input *in, size_t n);
/* The fast path of the record loop: when a whole record (u16 size at byte 6,
 * at least 8) is already buffered before the end, consume it and return its
 * size with *p and *off set; else return 0, consume nothing, and let the
 * caller take the slow path through in_peek(). */
uint32_t in_take_buffered(pd_input *in, int swap, const uint8_t **p, uint64_t *off);
/* Skip n bytes (may be large: AUXTRACE payloads). Returns 0, or -1 when the
 * input ends first or a read fails (err filled). */
int in_skip(pd_input *in, uint64_t n, pd_error *err);

#endif

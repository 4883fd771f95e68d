/*
 * pdfile.h - the inside of a pd_file, shared by the reader's modules
 * (reader.c, record.c, sample.c, events.c, ordered.c). Not installed.
 */
#ifndef PERFHUB_PDFILE_H
#define PERFHUB_PDFILE_H

#include <stddef.h>
#include <stdint.h>

#include "decomp.h"
#include "feat.h"
#include "input.h"
#include "perfdata.h"

/* Limits on what a file can make us allocate. */
#define PD_MAX_EVENTS		65536
#define PD_MAX_IDS		(1u << 20)	/* ids and their hash stay under ~32 MB */
#define PD_MAX_WARNINGS		64
#define PD_MAX_RECORD		65536		/* header.size is a u16 */
/* Per-record scratch: swapped or unaligned arrays of one record (at most
 * 3x its size for read values) and its strings. */
#define PD_SCRATCH_SIZE		(4 * PD_MAX_RECORD + 4096)

typedef struct pd_ordered pd_ordered;

struct pd_file {
	pd_options opt;
	pd_info info;
	int swap;

	pd_input *in;		/* the input being read */
	pd_input *main_in;
	int own_fd;		/* main file's fd to close, or -1 */
	char *dir;		/* directory format: the directory */
	unsigned *data_nums;	/* data.N numbers, ascending */
	unsigned nr_data_nums, next_data;
	unsigned cur_file;	/* 0 = main, N+1 = data.N */

	feat_set *feats;
	pd_event **events;	/* each allocated once: pointers stay valid */
	char **event_names;	/* owned names, parallel to events */
	unsigned char *event_named;	/* name came from the file, not a fallback */
	uint64_t **event_ids;	/* owned id arrays, parallel to events */
	size_t nr_events, cap_events;
	size_t nr_ids_total;
	int id_pos, is_pos;	/* where the sample id sits (perf's id_pos/is_pos) */
	int pipe_seen_attr;	/* pipe: a HEADER_ATTR arrived */
	/* legacy event_types / HEADER_EVENT_TYPE: config -> name */
	struct pd_legacy_type { uint64_t id; char name[65]; } *legacy;
	size_t nr_legacy;

	/* id -> event index, open addressing, key 0 kept aside */
	uint64_t *id_keys;
	uint32_t *id_vals;
	size_t id_cap, id_n;
	int has_zero_id;
	uint32_t zero_id_val;
	/* sample.c: where each field of samples of layout fast_st is (a
	 * byte offset, -1 when absent); fast_st 0 when none is planned */
	uint64_t fast_st;
	int fast_ok;		/* fast_st is one the plan takes */
	int16_t fast_off[10];
	uint32_t fast_fixed;	/* bytes up to the callchain's nr (or the end) */
	const pd_record *clean_rec;	/* holds a fully decoded sample of clean_ev */
	const pd_event *clean_ev;
	/* the time-order queue decodes a sample up to its time and reads no
	 * further: the rest of the struct is not cleared either */
	int prefix_only;
	uint64_t last_id;	/* the last sample id looked up, and its event */
	const pd_event *last_ev;

	pd_stats stats;
	char *warnings[PD_MAX_WARNINGS];
	size_t nr_warnings;

	pd_decomp *decomp;
	int draining;		/* records are coming out of the zstd stream */
	uint64_t comp_offset;	/* the COMPRESSED record they came from */
	unsigned comp_file;

	pd_ordered *ordered;
	int quiet;		/* re-decoding a queued record: count nothing */

	/* file mode read from a stream */
	uint8_t *stream_head;	/* bytes [104, data offset) */
	uint64_t stream_bits[4];	/* feature bitmap */
	uint64_t stream_data_end;
	int tail_read;
	int unfinished;		/* data size 0: perf record never ended it */

	uint64_t pending_skip;	/* payload after the last record (AUXTRACE) */
	int legacy_pipe;	/* Google perf 3.3 pipe header records */

	uint8_t *scratch;
	size_t scratch_used;

	int done;		/* end reached or error: pd_next returns this */
	int done_rc;
	pd_error done_err;
};

/* reader.c */
void pd_warn(pd_file *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void *pd_scratch(pd_file *f, size_t n);
const char *pd_string(pd_file *f, const uint8_t *p, size_t n);

/* events.c */
int ev_add(pd_file *f, const pd_attr *attr, const uint8_t *ids, size_t nr_ids, int swap_ids,
	   pd_error *err, uint64_t offset);
void ev_free_all(pd_file *f);
/* strong: the name came from the file (EVENT_DESC, EVENT_UPDATE, ...). */
int ev_set_name(pd_file *f, size_t idx, const char *name, size_t len, int strong);
void ev_name_defaults(pd_file *f);
const pd_event *ev_by_id(const pd_file *f, uint64_t id);
void ev_update_positions(pd_file *f);
/* Decode a perf_event_attr of `len` bytes (its own size field says how
 * much is valid) into host order. */
void attr_decode(pd_attr *a, const uint8_t *p, size_t len, int swap);
int legacy_add(pd_file *f, uint64_t id, const char *name, size_t len);

/* sample.c */
int sample_decode(pd_file *f, const uint8_t *rec, uint32_t size, pd_record *r, pd_error *err);
const pd_event *sample_event(pd_file *f, const uint8_t *rec, uint32_t size);
uint64_t sample_time_of(pd_file *f, const uint8_t *rec, uint32_t size, int *has_time);

/* reader.c: one record in input order (ordered.c sorts on top of it) */
int pd_next_unordered(pd_file *f, pd_record *r, pd_error *err);
/* Decode a record's bytes again (a queued copy) without counting it. */
int pd_redecode(pd_file *f, const uint8_t *rec, uint32_t size, pd_record *r, pd_error *err);

/* record.c */
int record_decode(pd_file *f, const uint8_t *rec, uint32_t size, pd_record *r, pd_error *err);

#endif

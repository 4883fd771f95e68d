/*
 * pdwrite.h - a small perf.data writer for tests: synthesizes recordings
 * with chosen byte order, attr size, sample_type/read_format, events and
 * ids, feature sections, and zstd COMPRESSED/COMPRESSED2 records, in file
 * mode (PERFILE2 or the legacy PERFFILE v1 header) or pipe mode.
 *
 * Values are given in host order (as the parser's pd_* structs hold them)
 * and written in the chosen file order, each field at its own width, the
 * attr bitfield word laid out as a compiler of that byte order lays it out.
 *
 * Usage:
 *	pdw *w = pdw_new(&(pdw_config){ .big_endian = 1, .attr_size = 96 });
 *	pdw_add_event(w, &ev);
 *	pdw_feature_string(w, PD_FEAT_HOSTNAME, "host");
 *	pdw_sample(w, 0, &sample);
 *	uint8_t *buf; size_t len;
 *	pdw_finish(w, &buf, &len);	(buf is malloc'ed; caller frees)
 *	pdw_free(w);
 */
#ifndef PERFHUB_TESTS_PDWRITE_H
#define PERFHUB_TESTS_PDWRITE_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata.h"

typedef struct pdw pdw;

typedef struct pdw_config {
	int pipe;		/* pipe mode: header {magic, 16} and records only */
	int big_endian;		/* file byte order */
	int version1;		/* file mode: legacy "PERFFILE" header (72 bytes, no features) */
	unsigned attr_size;	/* perf_event_attr size written: 64..136 (0 = 136) */
} pdw_config;

#define PDW_MAX_IDS 16

typedef struct pdw_event {
	pd_attr attr;		/* size is ignored: pdw_config.attr_size is written */
	const char *name;	/* EVENT_DESC (file) / EVENT_UPDATE name (pipe); NULL = none */
	uint64_t ids[PDW_MAX_IDS];
	size_t nr_ids;
} pdw_event;

pdw *pdw_new(const pdw_config *cfg);
void pdw_free(pdw *w);

/* Events, in order; returns the event's index. Add all events before the
 * first record. */
int pdw_add_event(pdw *w, const pdw_event *ev);
/* The event most tests need: cpu-clock (software, period 1,
 * sample_id_all) with these sample fields and one id. */
int pdw_add_cpu_clock(pdw *w, uint64_t sample_type, uint64_t id);

/* ---- feature sections (file mode: the section table; pipe mode:
 * HEADER_FEATURE records written before the data records) ---------- */

/* perf_header_string: u32 len (NUL and padding to 64 included), chars */
void pdw_feature_string(pdw *w, int feat, const char *s);
/* A feature whose body is built field by field: begin, pdw_put_*, end. */
void pdw_feature_begin(pdw *w, int feat);
void pdw_feature_end(pdw *w);
/* EVENT_DESC from the events added (name and ids). */
void pdw_feature_event_desc(pdw *w);

/* ---- records ---------------------------------------------------------- */

/* A record built field by field. With trailer_event >= 0 and that event's
 * attr having sample_id_all, pdw_record_end appends the sample_id trailer
 * from *sid (may be NULL for all zero). */
void pdw_record_begin(pdw *w, uint32_t type, uint16_t misc);
void pdw_record_end(pdw *w, int trailer_event, const pd_sample_id *sid);

/* Field writers, for records and features alike (into the open one). */
void pdw_put_u8(pdw *w, uint8_t v);
void pdw_put_u16(pdw *w, uint16_t v);
void pdw_put_u32(pdw *w, uint32_t v);
void pdw_put_u64(pdw *w, uint64_t v);
void pdw_put_bytes(pdw *w, const void *p, size_t n);
/* NUL-terminated string padded with zeros to a multiple of `align`. */
void pdw_put_string(pdw *w, const char *s, size_t align);
/* perf_header_string (u32 len, string padded to 64). */
void pdw_put_header_string(pdw *w, const char *s);
/* Pad the open record/feature with zeros to a multiple of 8. */
void pdw_put_pad8(pdw *w);

/* A SAMPLE record of event `ev`, fields as its sample_type/read_format say.
 * s->fields is ignored. misc: cpumode bits. */
void pdw_sample(pdw *w, int ev, uint16_t misc, const pd_sample *s);
/* Common record types, each with the sample_id trailer of event `ev`. */
void pdw_mmap(pdw *w, int ev, const pd_mmap *m, const pd_sample_id *sid);
void pdw_mmap2(pdw *w, int ev, uint16_t misc, const pd_mmap *m, const pd_sample_id *sid);
void pdw_comm(pdw *w, int ev, const pd_comm *c, const pd_sample_id *sid);
void pdw_task(pdw *w, int ev, uint32_t type, const pd_task *t, const pd_sample_id *sid);
void pdw_lost(pdw *w, int ev, uint32_t type, const pd_lost *l, const pd_sample_id *sid);
void pdw_finished_round(pdw *w);

/* Raw bytes appended to the data as they are (an AUXTRACE payload,
 * garbage after a pipe stream, deliberately broken records); not counted
 * as a record by pdw_nr_records. */
void pdw_raw(pdw *w, const void *p, size_t n);

/* ---- compression ------------------------------------------------------- */

/* Records written between begin and end go through one zstd stream (one
 * frame, flushed but never closed, as perf writes it) and come out as
 * COMPRESSED (type 81) or, with compressed2, COMPRESSED2 (type 83, with a
 * data_size field and 8-byte padding) records of at most `chunk` payload
 * bytes each, so frames and records span record boundaries. */
void pdw_compress_begin(pdw *w, int compressed2, size_t chunk, int level);
void pdw_compress_end(pdw *w);
/* Compress what is pending now (ZSTD_e_flush) into COMPRESSED records, as
 * perf does after each ring-buffer read; the frame goes on. */
void pdw_compress_flush(pdw *w);

/* ---- output ------------------------------------------------------------ */

/* The whole recording (malloc'ed into *buf). Returns 0, -1 on error
 * (out of memory, zstd failure, misuse). */
int pdw_finish(pdw *w, uint8_t **buf, size_t *len);
/* Where the data section starts and ends in the finished output (file
 * mode), and where each record started (offsets into the output, for
 * checking record offsets and building broken files). */
uint64_t pdw_data_offset(const pdw *w);
uint64_t pdw_data_size(const pdw *w);
size_t pdw_nr_records(const pdw *w);	/* outer records, COMPRESSED included */
uint64_t pdw_record_offset(const pdw *w, size_t i);
/* The attrs section offset and the header size (file mode). */
uint64_t pdw_attrs_offset(const pdw *w);

/* Write a buffer to a file; 0 or -1. */
int pdw_write_file(const char *path, const void *buf, size_t len);

#endif

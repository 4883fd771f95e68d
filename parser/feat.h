/*
 * feat.h - header feature sections: kept raw, decoded on demand
 * (internal to libperfhub-parse; the public face is in perfdata.h).
 *
 * The reader hands every feature section it finds to feat_add(): in file
 * mode from the feature section table after the data, in pipe mode from
 * HEADER_FEATURE records. Decoding never fails the recording: a malformed
 * section decodes to {"error": ...} and leaves a warning.
 */
#ifndef PERFHUB_FEAT_H
#define PERFHUB_FEAT_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata.h"

typedef struct pd_features pd_features;

pd_features *feat_new(void);
void feat_free(pd_features *fs);

/* Keep a copy of feature `id`'s section bytes (file byte order; `swap` set
 * when that differs from the host's). `offset` is where the section starts
 * in the input, for messages. A second section with the same id replaces
 * the first. Returns 0, or -1 only when out of memory. */
int feat_add(pd_features *fs, int id, const void *data, size_t len, int swap, uint64_t offset);

int feat_has(const pd_features *fs, int id);
size_t feat_list(const pd_features *fs, int *out, size_t max);
const void *feat_raw(const pd_features *fs, int id, size_t *len);

/* Decoded JSON text of feature `id` (malloc'ed; caller frees), NULL if absent. */
char *feat_json(const pd_features *fs, int id);

/* Header facts decoded from the features seen so far. */
const pd_header *feat_header(pd_features *fs);

/* EVENT_DESC: the event name recorded for sample id `id`, or NULL.
 * Used by the reader to name attrs in file mode. */
const char *feat_event_name_by_id(pd_features *fs, uint64_t id);
/* EVENT_DESC: the name of the i-th described event (order as stored), or
 * NULL; with its attr's config/type for matching when ids are missing. */
size_t feat_nr_event_desc(pd_features *fs);
const char *feat_event_desc(pd_features *fs, size_t i, uint32_t *type, uint64_t *config);

/* Warnings produced while decoding (malformed sections, unknown ids). */
size_t feat_nr_warnings(const pd_features *fs);
const char *feat_warning(const pd_features *fs, size_t i);

#endif

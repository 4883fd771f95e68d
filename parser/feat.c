/*
 * feat.c - header feature sections: stored raw as the reader finds them,
 * decoded into JSON and pd_header facts.
 *
 * Sections are copied (the reader's buffer may be a stream window) and kept
 * by id; ids outside 0..PD_FEAT_MAX-1 are reported and dropped.
 */
#include <stdlib.h>
#include <string.h>

#include "feat.h"

struct feat_section {
	uint8_t *data;		/* owned copy, file byte order */
	size_t len;
	int swap;
	uint64_t offset;	/* where the section starts in the input */
	int present;
};

#define FEAT_MAX_WARNINGS 64	/* more are counted into one last message */

struct feat_set {
	struct feat_section sec[PD_FEAT_MAX];
	char **warnings;
	size_t nr_warnings;
	pd_header header;
};

feat_set *feat_new(void)
{
	return calloc(1, sizeof(feat_set));
}

void feat_free(feat_set *fs)
{
	if (!fs)
		return;
	for (size_t i = 0; i < PD_FEAT_MAX; i++)
		free(fs->sec[i].data);
	for (size_t i = 0; i < fs->nr_warnings; i++)
		free(fs->warnings[i]);
	free(fs->warnings);
	free(fs);
}

int feat_add(feat_set *fs, int id, const void *data, size_t len, int swap, uint64_t offset)
{
	if (id < 0 || id >= PD_FEAT_MAX)
		return 0;
	uint8_t *copy = malloc(len ? len : 1);
	if (!copy)
		return -1;
	if (len)
		memcpy(copy, data, len);
	struct feat_section *s = &fs->sec[id];
	free(s->data);
	s->data = copy;
	s->len = len;
	s->swap = swap;
	s->offset = offset;
	s->present = 1;
	return 0;
}

int feat_has(const feat_set *fs, int id)
{
	return id >= 0 && id < PD_FEAT_MAX && fs->sec[id].present;
}

size_t feat_list(const feat_set *fs, int *out, size_t max)
{
	size_t n = 0;
	for (int id = 0; id < PD_FEAT_MAX; id++) {
		if (!fs->sec[id].present)
			continue;
		if (n < max)
			out[n] = id;
		n++;
	}
	return n;
}

const void *feat_raw(const feat_set *fs, int id, size_t *len)
{
	if (!feat_has(fs, id))
		return NULL;
	if (len)
		*len = fs->sec[id].len;
	return fs->sec[id].data;
}

char *feat_json(const feat_set *fs, int id)
{
	(void)fs;
	(void)id;
	return NULL;	/* decoding not written yet */
}

const pd_header *feat_header(feat_set *fs)
{
	return &fs->header;
}

const char *feat_event_name_by_id(feat_set *fs, uint64_t id)
{
	(void)fs;
	(void)id;
	return NULL;
}

size_t feat_nr_event_desc(feat_set *fs)
{
	(void)fs;
	return 0;
}

const char *feat_event_desc(feat_set *fs, size_t i, uint32_t *type, uint64_t *config)
{
	(void)fs;
	(void)i;
	(void)type;
	(void)config;
	return NULL;
}

size_t feat_nr_warnings(const feat_set *fs)
{
	return fs->nr_warnings;
}

const char *feat_warning(const feat_set *fs, size_t i)
{
	return i < fs->nr_warnings ? fs->warnings[i] : NULL;
}

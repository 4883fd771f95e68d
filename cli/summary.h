/*
 * summary.h - one profile for a person (perfhub show, upload --wait,
 * record) or as JSON, and waiting until the server has parsed it.
 */
#ifndef PERFHUB_CLI_SUMMARY_H
#define PERFHUB_CLI_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "api-client.h"

/* GET /api/v1/profiles/ID until it is ready or failed; the last answer,
 * NULL on an error (printed). `settle`: debuginfo went up while it was
 * parsed, so a first "ready" may be followed by a re-symbolization. */
json_t *sm_wait(ac_client *c, int64_t id, int settle, const char *who);

/* The page that shows the profile: SERVER/#/profile/ID (malloc'ed). */
char *sm_page_url(const ac_client *c, int64_t id);

/* The first line is "ID STATUS..." (scripts may take the first word);
 * then name, tags, events, where it was recorded, the upload, the page. */
void sm_print(FILE *out, const ac_client *c, json_t *profile);

/* " k=v k=v" of a profile's tags object, on one line (no newline). */
void sm_print_tags(FILE *out, json_t *tags);

/* The profile object with "page" added, one JSON document. */
void sm_print_json(FILE *out, const ac_client *c, json_t *profile);

#endif

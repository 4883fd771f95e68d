/*
 * labels.h - the one check of a profile's name, tag keys and tag values,
 * whoever sets them (an upload's query, a watched file's name, later an
 * edit): bounded, UTF-8 (JSON answers carry them), no control characters.
 */
#ifndef PERFHUB_DAEMON_INTAKE_LABELS_H
#define PERFHUB_DAEMON_INTAKE_LABELS_H

#include <stddef.h>

/* Longest profile name, tag key and tag value, in bytes. */
#define INTAKE_MAX_NAME 256
#define INTAKE_MAX_TAG_KEY 128
#define INTAKE_MAX_TAG_VALUE 256

enum intake_label { INTAKE_NAME, INTAKE_TAG_KEY, INTAKE_TAG_VALUE };
/* The one check of a profile's name, tag key or tag value (from an upload,
 * a watched file's name, later an edit): at most its INTAKE_MAX_* bytes,
 * valid UTF-8, no control characters; a key is not empty and has no '='.
 * 0, or -1 with
 * the reason in why. */
int intake_check_label(int what, const char *s, char *why, size_t whylen);

#endif

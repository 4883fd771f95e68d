/*
 * selector.h - which profiles a question is about: a profile selector in
 * Prometheus' label-matcher syntax, as Pyroscope and Parca take it,
 *
 *     {branch="main", host=~"ci-.*", name!="smoke", kind!~"tmp|test"}
 *
 * over a profile's labels: its tags, plus `name`, `hostname` and `id` (these
 * three are the profile's own, whatever its tags say). A label a profile
 * lacks has the value "" (so `{host!="x"}` matches a profile without host,
 * and `{host=""}` only those). `=~` and `!~` take a POSIX extended regular
 * expression (regcomp(3), with GNU's \w \s \b), anchored at both ends as
 * Prometheus anchors them; back-references, a repetition right after
 * another (a++) and expressions that regcomp would build of more than
 * PE_SEL_MAX_PARTS parts, the selector's together (characters, branches,
 * groups, with repetitions expanded), are refused: they make regcomp or
 * matching explode. `{}` matches every profile.
 *
 * Grammar (whitespace allowed between tokens):
 *
 *     selector = "{" [ matcher { "," matcher } [ "," ] ] "}"
 *     matcher  = label ( "=" | "!=" | "=~" | "!~" ) string
 *     label    = [A-Za-z_][A-Za-z0-9_.:/-]*  |  string
 *     string   = '"' ... '"' | "'" ... "'"   (escapes \" \' \\ \a \b \f \n
 *                \r \t \v \xHH \uHHHH \UHHHHHHHH \NNN octal)
 *              | "`" ... "`"                 (raw, no escapes)
 *
 * Also the time bounds questions take beside a selector (since, until): a
 * duration back from now (`7d`, `36h`, `1h30m`; units s m h d w), an RFC
 * 3339 time (`2024-05-01T12:00:00Z`, `...+02:00`, fractions ignored, or a
 * bare date), or unix seconds.
 *
 * Everything here reads untrusted text: lengths are capped, every error
 * names its 1-based byte position and what was expected there.
 */
#ifndef PERFHUB_ENGINE_SELECTOR_H
#define PERFHUB_ENGINE_SELECTOR_H

#include <stddef.h>
#include <stdint.h>

#define PE_SEL_MAX_TEXT 4096		/* bytes of a selector */
#define PE_SEL_MAX_MATCHERS 64
#define PE_SEL_MAX_REGEX 1024		/* bytes of one regular expression */
#define PE_SEL_MAX_PARTS 2000		/* of the expressions, repetitions expanded */

enum pe_sel_op { PE_SEL_EQ, PE_SEL_NE, PE_SEL_RE, PE_SEL_NRE };

typedef struct pe_sel pe_sel;

typedef struct pe_sel_error {
	size_t pos;		/* 1-based byte position of the problem */
	char msg[256];		/* "at position 12: expected ..." */
} pe_sel_error;

/* Parses text[0..len). NULL and *err on a malformed selector (or out of
 * memory: pos 0). */
pe_sel *pe_sel_parse(const char *text, size_t len, pe_sel_error *err);
void pe_sel_free(pe_sel *s);

/* The matchers, in the order written. */
size_t pe_sel_count(const pe_sel *s);
void pe_sel_matcher(const pe_sel *s, size_t i, const char **label, int *op,
		    const char **value);

/* One profile's labels, as a selector sees them. */
typedef struct pe_labels {
	int64_t id;
	const char *name, *hostname;	/* NULL = none */
	size_t nr_tags;
	const char *const *tag_keys, *const *tag_values;
} pe_labels;

/* 1 when every matcher matches l. */
int pe_sel_match(const pe_sel *s, const pe_labels *l);

/* The value of `label` in l ("" when it has none); an id is written in
 * idbuf. */
const char *pe_sel_label(const pe_labels *l, const char *label, char idbuf[24]);

/* A time bound as unix seconds (`now` for durations). 0, or -1 and *err. */
int pe_sel_time(const char *text, int64_t now, int64_t *out, pe_sel_error *err);

#endif

/* selector.c - profile selectors (Prometheus label matchers) and time bounds: parsing and matching. */
#include "config.h"

#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/selector.h"

typedef struct matcher {
	char *label, *value;
	int op;
	int compiled;		/* re holds the anchored expression */
	regex_t re;
} matcher;

struct pe_sel {
	matcher m[PE_SEL_MAX_MATCHERS];
	size_t n;
};

typedef struct parser {
	const char *s;
	size_t len, pos;
	pe_sel_error *err;
	int failed;
	unsigned long parts;	/* of the regular expressions read so far */
} parser;

static void fail_at(parser *p, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The first error wins: it is where the text went wrong. */
static void fail_at(parser *p, size_t pos, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	if (p->failed)
		return;
	p->failed = 1;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	p->err->pos = pos + 1;
	snprintf(p->err->msg, sizeof(p->err->msg), "at position %zu: %s", pos + 1, what);
}

/* What stands at pos, for "expected X, found Y". */
static const char *found(const parser *p, char *buf, size_t len)
{
	unsigned char c;

	if (p->pos >= p->len)
		return "the end of the text";
	c = (unsigned char)p->s[p->pos];
	if (c >= 0x21 && c < 0x7f)
		snprintf(buf, len, "'%c'", c);
	else if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
		snprintf(buf, len, "white space");
	else
		snprintf(buf, len, "byte 0x%02x", c);
	return buf;
}

static void expected(parser *p, const char *what)
{
	char b[32];

	fail_at(p, p->pos, "expected %s, found %s", what, found(p, b, sizeof(b)));
}

static void skip_ws(parser *p)
{
	while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
				   p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
		p->pos++;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Code point cp as UTF-8 into out (4 bytes room); its length, 0 if invalid. */
static size_t utf8_put(unsigned long cp, char *out)
{
	if (cp >= 0xd800 && cp <= 0xdfff)
		return 0;
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	if (cp <= 0x10ffff) {
		out[0] = (char)(0xf0 | cp >> 18);
		out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[3] = (char)(0x80 | (cp & 0x3f));
		return 4;
	}
	return 0;
}

/* One escape after the backslash at p->pos - 1, appended to out[*n].
 * q: the string's quote. 0 or -1 (failed). */
static int escape(parser *p, char q, char *out, size_t *n)
{
	size_t at = p->pos - 1, digits, k;
	unsigned long cp = 0;
	char c;

	if (p->pos >= p->len) {
		fail_at(p, at, "a '\\' at the end of the text");
		return -1;
	}
	c = p->s[p->pos++];
	switch (c) {
	case 'a': out[(*n)++] = '\a'; return 0;
	case 'b': out[(*n)++] = '\b'; return 0;
	case 'f': out[(*n)++] = '\f'; return 0;
	case 'n': out[(*n)++] = '\n'; return 0;
	case 'r': out[(*n)++] = '\r'; return 0;
	case 't': out[(*n)++] = '\t'; return 0;
	case 'v': out[(*n)++] = '\v'; return 0;
	case '\\': out[(*n)++] = '\\'; return 0;
	case 'x': digits = 2; break;
	case 'u': digits = 4; break;
	case 'U': digits = 8; break;
	default:
		if (c == q) {
			out[(*n)++] = c;
			return 0;
		}
		if (c >= '0' && c <= '7') {
			/* three octal digits */
			cp = (unsigned long)(c - '0');
			for (k = 0; k < 2; k++) {
				if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '7') {
					fail_at(p, at, "an octal escape takes three digits (\\NNN)");
					return -1;
				}
				cp = cp * 8 + (unsigned long)(p->s[p->pos++] - '0');
			}
			if (cp > 0xff || cp == 0) {
				fail_at(p, at, "octal escape \\%03lo is not a byte from 1 to 255", cp);
				return -1;
			}
			out[(*n)++] = (char)cp;
			return 0;
		}
		fail_at(p, at, "unknown escape '\\%c' (known: \\%c \\\\ \\a \\b \\f \\n \\r \\t "
			"\\v \\xHH \\uHHHH \\UHHHHHHHH \\NNN)", c >= 0x21 && c < 0x7f ? c : '?', q);
		return -1;
	}
	for (k = 0; k < digits; k++) {
		int h = p->pos < p->len ? hexval(p->s[p->pos]) : -1;
		if (h < 0) {
			fail_at(p, at, "'\\%c' takes %zu hexadecimal digits", c, digits);
			return -1;
		}
		cp = cp * 16 + (unsigned long)h;
		p->pos++;
	}
	if (cp == 0) {
		fail_at(p, at, "a NUL character is not allowed in a selector");
		return -1;
	}
	if (c == 'x') {
		out[(*n)++] = (char)cp;
		return 0;
	}
	k = utf8_put(cp, out + *n);
	if (!k) {
		fail_at(p, at, "'\\%c%0*lX' is not a Unicode character", c, (int)digits, cp);
		return -1;
	}
	*n += k;
	return 0;
}

/* A quoted string at p->pos (the quote). OUT: malloc'ed text. */
static char *quoted(parser *p)
{
	size_t open = p->pos, n = 0;
	char q = p->s[p->pos++];
	/* an escape never makes the text longer than its source */
	char *out = malloc(p->len - open + 1);

	if (!out) {
		fail_at(p, open, "out of memory");
		return NULL;
	}
	for (;;) {
		char c;

		if (p->pos >= p->len) {
			fail_at(p, open, "the string opened here with %c is not closed", q);
			break;
		}
		c = p->s[p->pos++];
		if (c == q) {
			out[n] = 0;
			return out;
		}
		if (c == '\\' && q != '`') {
			if (escape(p, q, out, &n) < 0)
				break;
			continue;
		}
		if (c == 0) {
			fail_at(p, p->pos - 1, "a NUL character is not allowed in a selector");
			break;
		}
		if (c == '\n' && q != '`') {
			fail_at(p, p->pos - 1, "a new line inside a %c string (write \\n)", q);
			break;
		}
		out[n++] = c;
	}
	free(out);
	return NULL;
}

static int ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int ident_char(char c)
{
	return ident_start(c) || (c >= '0' && c <= '9') || c == '.' || c == ':' || c == '/' ||
	       c == '-';
}

static char *label(parser *p)
{
	size_t start = p->pos;
	char *out;

	if (p->pos < p->len && (p->s[p->pos] == '"' || p->s[p->pos] == '\'' ||
				p->s[p->pos] == '`')) {
		out = quoted(p);
		if (out && !*out) {
			fail_at(p, start, "a label name cannot be empty");
			free(out);
			return NULL;
		}
		return out;
	}
	if (p->pos >= p->len || !ident_start(p->s[p->pos])) {
		expected(p, "a label name (a letter or '_' first, or a quoted name)");
		return NULL;
	}
	while (p->pos < p->len && ident_char(p->s[p->pos]))
		p->pos++;
	out = malloc(p->pos - start + 1);
	if (!out) {
		fail_at(p, start, "out of memory");
		return NULL;
	}
	memcpy(out, p->s + start, p->pos - start);
	out[p->pos - start] = 0;
	return out;
}

static int op(parser *p)
{
	const char *s = p->s + p->pos;
	size_t left = p->len - p->pos;

	if (left >= 2 && s[0] == '=' && s[1] == '~') {
		p->pos += 2;
		return PE_SEL_RE;
	}
	if (left >= 2 && s[0] == '!' && s[1] == '~') {
		p->pos += 2;
		return PE_SEL_NRE;
	}
	if (left >= 2 && s[0] == '!' && s[1] == '=') {
		p->pos += 2;
		return PE_SEL_NE;
	}
	if (left >= 1 && s[0] == '=') {
		p->pos += 1;
		return PE_SEL_EQ;
	}
	expected(p, "one of =, !=, =~, !~ after the label name");
	return -1;
}

/*
 * The size of a regular expression as regcomp builds it, in parts (nodes:
 * a character, a class, an anchor, a branch, a group's two ends, what a
 * repetition adds), counted per group being read. regcomp copies what a
 * repetition repeats (a+ is aa*, a{3,5} is aaa(a(a)?)?), so nested
 * repetitions multiply; and its memory and time grow with the square of
 * a run of parts it can pass without reading a character, or faster:
 * (a?){N}, a{1,N}, (||||||||||){N}, (((a?)?)?){N} took 1.5 GB, 0.8 GB,
 * 1.9 GB and 0.5 GB here for N = 10,000, 10,000, 86 and 130. So the
 * parts are bounded, and what builds such runs out of few parts (a
 * repetition of what can match nothing, an empty branch) is refused.
 */
typedef struct re_level {
	unsigned long done;	/* parts before the last one */
	unsigned long last;	/* the last atom or group, repeated as it says */
	int empty;		/* nothing read yet in this branch */
	int last_null;		/* the last one can match nothing */
	int seq_null;		/* so can every one before it in this branch */
	int alt_null;		/* so can an earlier branch of this group */
} re_level;

#define RE_MAX_DEPTH 32

/* The parts the repetition at re[*i] ('{' read there too) makes of a last
 * item of `n` parts: its copies and a branch for each optional one; 0
 * when there is none. *optional: it lets the item be left out (?, *, a
 * least count of 0). */
static unsigned long re_repeat(const char *re, size_t len, size_t *i, unsigned long n,
			       int *optional)
{
	unsigned long lo = 0, hi = 0;
	size_t j;
	int have_lo = 0, have_hi = 0, comma = 0;

	*optional = 0;
	switch (re[*i]) {
	case '*':
	case '?':
		(*i)++;
		*optional = 1;
		return n + 2;
	case '+':
		(*i)++;
		return 2 * n + 2;
	case '{':
		break;
	default:
		return 0;
	}
	for (j = *i + 1; j < len && re[j] >= '0' && re[j] <= '9'; j++) {
		lo = lo < 100000 ? lo * 10 + (unsigned long)(re[j] - '0') : lo;
		have_lo = 1;
	}
	*optional = lo == 0 && j < len && (re[j] == ',' || re[j] == '}');
	if (j < len && re[j] == ',') {
		comma = 1;
		for (j++; j < len && re[j] >= '0' && re[j] <= '9'; j++) {
			hi = hi < 100000 ? hi * 10 + (unsigned long)(re[j] - '0') : hi;
			have_hi = 1;
		}
	}
	*i = j < len && re[j] == '}' ? j + 1 : j;	/* a bad interval: regcomp says so */
	if (!comma)
		hi = lo;
	else if (!have_hi)
		hi = lo + 1;	/* a{3,}: aaaa* */
	if (!have_lo && !have_hi)
		lo = 0, hi = 1;
	if (hi < lo) {
		unsigned long t = hi;
		hi = lo;
		lo = t;
	}
	return n * (hi ? hi : 1) + (hi - lo) + 2;
}

#define RE_LEVEL_NEW ((re_level){ .empty = 1, .last_null = 1, .seq_null = 1 })

/* The last item of a branch goes into what came before it. */
static void re_fold(re_level *l)
{
	l->done += l->last;
	l->last = 0;
	l->seq_null = l->seq_null && l->last_null;
	l->last_null = 1;
}

/*
 * What regcomp must not see: back-references (\1..\9: exponential time), a
 * ')' without its '(' (the expression is wrapped in "^(...)$"), an
 * unclosed '(' or '[', a repetition right after another (a++: undefined in
 * POSIX, and each one copies the last), a repetition of what can match
 * nothing ((a?)*, ^*), an empty branch or group ((|a), a|, ()), and
 * expressions that make the selector's together more than
 * PE_SEL_MAX_PARTS parts (p->parts counts them). `at` is the value's
 * position in the text, for the messages.
 */
static int regex_check(parser *p, const char *re, size_t at)
{
	re_level lv[RE_MAX_DEPTH + 1];
	size_t i = 0, n = strlen(re), depth = 0;
	int after_repeat = 0;

	if (n > PE_SEL_MAX_REGEX) {
		fail_at(p, at, "a regular expression of %zu bytes (at most %d)", n,
			PE_SEL_MAX_REGEX);
		return -1;
	}
	lv[0] = RE_LEVEL_NEW;
	while (i < n) {
		re_level *l = &lv[depth];
		char c = re[i];
		int null = 0, optional;
		unsigned long parts = re_repeat(re, n, &i, l->last, &optional), atom = 1;

		if (parts) {
			if (after_repeat) {
				fail_at(p, at, "a repetition ('%c') right after another in the regular "
					"expression", c);
				return -1;
			}
			after_repeat = 1;
			/* regcomp's closures over what it can pass without a
			 * character blow up when such a thing is repeated:
			 * (((a?)?)?){130} took 0.5 GB */
			if (!l->empty && l->last_null) {	/* (nothing: regcomp says) */
				fail_at(p, at, "a repetition ('%c') of what can match nothing in the "
					"regular expression", c);
				return -1;
			}
			l->last = parts;
			l->last_null = optional;
			if (p->parts + l->done + l->last > PE_SEL_MAX_PARTS)
				goto too_big;
			continue;
		}
		after_repeat = 0;
		if (c == '\\') {
			if (i + 1 >= n) {
				fail_at(p, at, "the regular expression ends with '\\'");
				return -1;
			}
			if (re[i + 1] >= '1' && re[i + 1] <= '9') {
				fail_at(p, at, "back-references (\\%c) are not allowed in a regular "
					"expression", re[i + 1]);
				return -1;
			}
			/* \b \B \< \> \` \': anchors, they read nothing */
			null = strchr("bB<>`'", re[i + 1]) != NULL;
			i += 2;
		} else if (c == '[') {
			/* a bracket expression: ']' first is literal, [:class:] inside */
			size_t j = i + 1;
			if (j < n && re[j] == '^')
				j++;
			if (j < n && re[j] == ']')
				j++;
			while (j < n && re[j] != ']') {
				if (re[j] == '[' && j + 1 < n && (re[j + 1] == ':' || re[j + 1] == '.' ||
								  re[j + 1] == '=')) {
					char kind = re[j + 1];
					size_t k;
					for (k = j + 2; k + 1 < n; k++)
						if (re[k] == kind && re[k + 1] == ']')
							break;
					if (k + 1 >= n)
						break;
					j = k + 2;
				} else {
					j++;
				}
			}
			if (j >= n) {
				fail_at(p, at, "a '[' in the regular expression is not closed");
				return -1;
			}
			i = j + 1;
		} else if (c == '(') {
			if (depth == RE_MAX_DEPTH) {
				fail_at(p, at, "groups nested deeper than %d in the regular expression",
					RE_MAX_DEPTH);
				return -1;
			}
			lv[++depth] = RE_LEVEL_NEW;
			i++;
			continue;
		} else if (c == ')') {
			if (!depth) {
				fail_at(p, at, "a ')' without its '(' in the regular expression");
				return -1;
			}
			if (l->empty) {
				fail_at(p, at, "an empty %s in the regular expression",
					l->done ? "alternative" : "group");
				return -1;
			}
			re_fold(l);
			atom = l->done + 2;	/* and its two ends */
			null = l->seq_null || l->alt_null;
			depth--;
			i++;
		} else if (c == '|') {
			/* (|a) or a|: an empty branch, which only adds what
			 * regcomp passes without reading (write a? for it) */
			if (l->empty) {
				fail_at(p, at, "an empty alternative in the regular expression");
				return -1;
			}
			re_fold(l);
			l->done++;	/* the branch */
			l->alt_null = l->alt_null || l->seq_null;
			l->seq_null = 1;
			l->empty = 1;
			i++;
			continue;
		} else {
			null = c == '^' || c == '$';	/* anchors */
			i++;
		}
		l = &lv[depth];
		re_fold(l);
		l->last = atom;
		l->last_null = null;
		l->empty = 0;
	}
	if (depth) {
		fail_at(p, at, "a '(' in the regular expression is not closed");
		return -1;
	}
	if (lv[0].empty && lv[0].done) {
		fail_at(p, at, "an empty alternative in the regular expression");
		return -1;
	}
	re_fold(&lv[0]);
	/* and the "^(...)$" around it */
	p->parts += lv[0].done + 4;
	if (p->parts <= PE_SEL_MAX_PARTS)
		return 0;
too_big:
	fail_at(p, at, "the regular expression's repetitions make it more than %d parts "
		"(characters, branches, groups; the selector's together)", PE_SEL_MAX_PARTS);
	return -1;
}

static int compile(parser *p, matcher *m, size_t at)
{
	size_t n = strlen(m->value);
	char *anchored;
	int rc;

	if (regex_check(p, m->value, at) < 0)
		return -1;
	if (!(anchored = malloc(n + 5))) {
		fail_at(p, at, "out of memory");
		return -1;
	}
	/* Prometheus anchors both ends */
	snprintf(anchored, n + 5, "^(%s)$", m->value);
	rc = regcomp(&m->re, anchored, REG_EXTENDED | REG_NOSUB);
	free(anchored);
	if (rc) {
		char why[120];
		regerror(rc, NULL, why, sizeof(why));
		fail_at(p, at, "bad regular expression: %s", why);
		return -1;
	}
	m->compiled = 1;
	return 0;
}

void pe_sel_free(pe_sel *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		free(s->m[i].label);
		free(s->m[i].value);
		if (s->m[i].compiled)
			regfree(&s->m[i].re);
	}
	free(s);
}

/* One matcher at p->pos into s->m[s->n]. */
static int parse_matcher(parser *p, pe_sel *s)
{
	matcher *m = &s->m[s->n];
	size_t at;

	if (s->n >= PE_SEL_MAX_MATCHERS) {
		fail_at(p, p->pos, "more than %d matchers", PE_SEL_MAX_MATCHERS);
		return -1;
	}
	memset(m, 0, sizeof(*m));
	if (!(m->label = label(p)))
		return -1;
	s->n++;	/* freed with the selector from here on */
	skip_ws(p);
	if ((m->op = op(p)) < 0)
		return -1;
	skip_ws(p);
	at = p->pos;
	if (p->pos >= p->len || (p->s[p->pos] != '"' && p->s[p->pos] != '\'' &&
				 p->s[p->pos] != '`')) {
		expected(p, "a quoted value (\"...\", '...' or `...`)");
		return -1;
	}
	if (!(m->value = quoted(p)))
		return -1;
	if ((m->op == PE_SEL_RE || m->op == PE_SEL_NRE) && compile(p, m, at) < 0)
		return -1;
	return 0;
}

pe_sel *pe_sel_parse(const char *text, size_t len, pe_sel_error *err)
{
	parser p = { .s = text, .len = len, .err = err };
	pe_sel *s;

	memset(err, 0, sizeof(*err));
	if (len > PE_SEL_MAX_TEXT) {
		fail_at(&p, PE_SEL_MAX_TEXT, "a selector of %zu bytes (at most %d)", len,
			PE_SEL_MAX_TEXT);
		return NULL;
	}
	if (!(s = calloc(1, sizeof(*s)))) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return NULL;
	}
	skip_ws(&p);
	if (p.pos >= p.len || p.s[p.pos] != '{') {
		expected(&p, "'{' (a selector looks like {label=\"value\", ...})");
		goto fail;
	}
	p.pos++;
	skip_ws(&p);
	while (p.pos < p.len && p.s[p.pos] != '}') {
		if (parse_matcher(&p, s) < 0)
			goto fail;
		skip_ws(&p);
		if (p.pos < p.len && p.s[p.pos] == ',') {
			p.pos++;
			skip_ws(&p);
			continue;
		}
		if (p.pos >= p.len || p.s[p.pos] != '}') {
			expected(&p, "',' or '}' after a matcher");
			goto fail;
		}
	}
	if (p.pos >= p.len) {
		expected(&p, "a matcher or '}'");
		goto fail;
	}
	p.pos++;
	skip_ws(&p);
	if (p.pos < p.len) {
		expected(&p, "nothing after the closing '}'");
		goto fail;
	}
	return s;
fail:
	pe_sel_free(s);
	return NULL;
}

size_t pe_sel_count(const pe_sel *s)
{
	return s->n;
}

void pe_sel_matcher(const pe_sel *s, size_t i, const char **lbl, int *o, const char **value)
{
	*lbl = s->m[i].label;
	*o = s->m[i].op;
	*value = s->m[i].value;
}

const char *pe_sel_label(const pe_labels *l, const char *lbl, char idbuf[24])
{
	size_t i;

	if (!strcmp(lbl, "id")) {
		snprintf(idbuf, 24, "%lld", (long long)l->id);
		return idbuf;
	}
	if (!strcmp(lbl, "name"))
		return l->name ? l->name : "";
	if (!strcmp(lbl, "hostname"))
		return l->hostname ? l->hostname : "";
	for (i = 0; i < l->nr_tags; i++)
		if (!strcmp(l->tag_keys[i], lbl))
			return l->tag_values[i];
	return "";
}

int pe_sel_match(const pe_sel *s, const pe_labels *l)
{
	char idbuf[24];
	size_t i;

	for (i = 0; s && i < s->n; i++) {
		const matcher *m = &s->m[i];
		const char *v = pe_sel_label(l, m->label, idbuf);
		int hit;

		if (m->op == PE_SEL_EQ || m->op == PE_SEL_NE)
			hit = !strcmp(v, m->value);
		else
			hit = regexec(&m->re, v, 0, NULL, 0) == 0;
		if (hit != (m->op == PE_SEL_EQ || m->op == PE_SEL_RE))
			return 0;
	}
	return 1;
}

/* ---- time bounds ------------------------------------------------------------------ */

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* n digits at *pos into *v; -1 if they are not there. */
static int digits(const char *s, size_t len, size_t *pos, size_t n, unsigned *v)
{
	size_t k;

	*v = 0;
	for (k = 0; k < n; k++) {
		if (*pos >= len || s[*pos] < '0' || s[*pos] > '9')
			return -1;
		*v = *v * 10 + (unsigned)(s[(*pos)++] - '0');
	}
	return 0;
}

/* Two digits of a clock time up to max, after `sep` (0: none). */
static int clock_field(parser *p, char sep, unsigned max, unsigned *v, const char *what)
{
	size_t at;

	if (sep) {
		if (p->pos >= p->len || p->s[p->pos] != sep) {
			char b[32];
			fail_at(p, p->pos, "expected %s, found %s", what, found(p, b, sizeof(b)));
			return -1;
		}
		p->pos++;
	}
	at = p->pos;
	if (digits(p->s, p->len, &p->pos, 2, v) < 0 || *v > max) {
		fail_at(p, at, "expected %s", what);
		return -1;
	}
	return 0;
}

static int rfc3339(parser *p, int64_t *out)
{
	static const unsigned mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	unsigned y, mo, d, h = 0, mi = 0, sec = 0, oh, om;
	int64_t t, off = 0;
	const char *s = p->s;
	int leap;

	if (digits(s, p->len, &p->pos, 4, &y) < 0) {
		expected(p, "a time: unix seconds, a duration back from now (7d, 36h, 1h30m) "
			 "or RFC 3339 (2024-05-01T12:00:00Z)");
		return -1;
	}
	if (p->pos >= p->len || s[p->pos] != '-') {
		expected(p, "'-' after the year");
		return -1;
	}
	p->pos++;
	if (digits(s, p->len, &p->pos, 2, &mo) < 0 || mo < 1 || mo > 12) {
		fail_at(p, 5, "expected a month 01..12");
		return -1;
	}
	if (p->pos >= p->len || s[p->pos] != '-') {
		expected(p, "'-' after the month");
		return -1;
	}
	p->pos++;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (digits(s, p->len, &p->pos, 2, &d) < 0 || d < 1 ||
	    d > (mo == 2 && !leap ? 28 : mdays[mo - 1])) {
		fail_at(p, 8, "expected a day of that month");
		return -1;
	}
	t = days_from_civil(y, mo, d) * 86400;
	if (p->pos == p->len) {
		*out = t;	/* a date: its midnight, UTC */
		return 0;
	}
	if (s[p->pos] != 'T' && s[p->pos] != 't' && s[p->pos] != ' ') {
		expected(p, "'T' between the date and the time");
		return -1;
	}
	p->pos++;
	if (clock_field(p, 0, 23, &h, "an hour 00..23") < 0 ||
	    clock_field(p, ':', 59, &mi, "':' and minutes 00..59") < 0 ||
	    clock_field(p, ':', 60, &sec, "':' and seconds 00..60") < 0)
		return -1;
	if (p->pos < p->len && s[p->pos] == '.') {
		size_t f0 = ++p->pos;
		while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9')
			p->pos++;
		if (p->pos == f0) {
			expected(p, "digits after '.'");
			return -1;
		}
	}
	if (p->pos < p->len && (s[p->pos] == 'Z' || s[p->pos] == 'z')) {
		p->pos++;
	} else if (p->pos < p->len && (s[p->pos] == '+' || s[p->pos] == '-')) {
		size_t at = p->pos;
		int sign = s[p->pos++] == '-' ? -1 : 1;
		if (digits(s, p->len, &p->pos, 2, &oh) < 0 || oh > 23 || p->pos >= p->len ||
		    s[p->pos++] != ':' || digits(s, p->len, &p->pos, 2, &om) < 0 || om > 59) {
			fail_at(p, at, "expected an offset +HH:MM or -HH:MM");
			return -1;
		}
		off = sign * (int64_t)(oh * 3600 + om * 60);
	} else {
		expected(p, "'Z' or an offset +HH:MM (RFC 3339 names the time zone)");
		return -1;
	}
	if (p->pos != p->len) {
		expected(p, "the end of the time");
		return -1;
	}
	*out = t + h * 3600 + mi * 60 + sec - off;
	return 0;
}

int pe_sel_time(const char *text, int64_t now, int64_t *out, pe_sel_error *err)
{
	parser p = { .s = text, .len = strlen(text), .err = err };
	size_t i;
	int all_digits = p.len > 0, unit = 0;

	memset(err, 0, sizeof(*err));
	if (p.len > 64) {
		fail_at(&p, 64, "a time of %zu bytes", p.len);
		return -1;
	}
	for (i = 0; i < p.len; i++) {
		if (text[i] < '0' || text[i] > '9')
			all_digits = 0;
		if (strchr("smhdw", text[i]))
			unit = 1;
		if (text[i] == '-' || text[i] == ':')
			unit = 0, i = p.len;
	}
	if (all_digits) {
		int64_t v = 0;
		for (i = 0; i < p.len; i++) {
			if (v > (INT64_MAX - 9) / 10) {
				fail_at(&p, i, "unix seconds out of range");
				return -1;
			}
			v = v * 10 + (text[i] - '0');
		}
		*out = v;
		return 0;
	}
	if (unit && p.len && text[0] >= '0' && text[0] <= '9') {
		/* a duration back from now: 7d, 36h, 1h30m */
		int64_t total = 0;
		while (p.pos < p.len) {
			int64_t v = 0, mult;
			size_t start = p.pos;
			while (p.pos < p.len && text[p.pos] >= '0' && text[p.pos] <= '9') {
				if (v > 1000000000) {
					fail_at(&p, start, "a duration out of range");
					return -1;
				}
				v = v * 10 + (text[p.pos++] - '0');
			}
			if (p.pos == start) {
				expected(&p, "a number in the duration");
				return -1;
			}
			switch (p.pos < p.len ? text[p.pos] : 0) {
			case 's': mult = 1; break;
			case 'm': mult = 60; break;
			case 'h': mult = 3600; break;
			case 'd': mult = 86400; break;
			case 'w': mult = 604800; break;
			default:
				expected(&p, "a unit: s, m, h, d or w");
				return -1;
			}
			p.pos++;
			total += v * mult;
			if (total > (int64_t)100 * 366 * 86400) {
				fail_at(&p, start, "a duration of more than 100 years");
				return -1;
			}
		}
		*out = now - total;
		return 0;
	}
	return rfc3339(&p, out);
}

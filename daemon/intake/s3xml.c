/* s3xml.c - S3 answers through expat, element by element. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <expat.h>

#include "s3xml.h"

struct s3x_reader {
	XML_Parser p;
	const char *const *names;
	s3x_element_cb cb;
	void *ctx;
	size_t fed;		/* bytes so far, capped by S3X_MAX_BYTES */
	int depth;
	int wanted[S3X_MAX_DEPTH + 1];	/* the element at each depth is listed */
	char text[S3X_MAX_TEXT + 1];	/* of the innermost listed element */
	size_t text_len;
	char root[64];
	char err[160];
	int failed;
};

static int listed(const s3x_reader *r, const char *name)
{
	const char *const *n;

	if (!r->names)
		return 1;
	for (n = r->names; *n; n++)
		if (!strcmp(*n, name))
			return 1;
	return 0;
}

static void stop(s3x_reader *r, const char *why)
{
	if (!r->failed)
		snprintf(r->err, sizeof(r->err), "%s", why);
	r->failed = 1;
	XML_StopParser(r->p, XML_FALSE);
}

static void XMLCALL on_start(void *data, const XML_Char *name, const XML_Char **attrs)
{
	s3x_reader *r = data;

	(void)attrs;
	if (r->failed)
		return;
	if (r->depth >= S3X_MAX_DEPTH) {
		stop(r, "elements nested too deep");
		return;
	}
	r->depth++;
	if (r->depth == 1)
		snprintf(r->root, sizeof(r->root), "%s", name);
	r->wanted[r->depth] = listed(r, name);
	/* text belongs to the innermost element: a new one starts afresh */
	r->text_len = 0;
	r->text[0] = 0;
}

static void XMLCALL on_end(void *data, const XML_Char *name)
{
	s3x_reader *r = data;
	int wanted;

	if (r->failed || r->depth <= 0)
		return;
	wanted = r->wanted[r->depth];
	if (wanted && r->cb(r->ctx, name, r->text, r->text_len, r->depth) != 0) {
		stop(r, "answer refused by its reader");
		return;
	}
	r->depth--;
	r->text_len = 0;
	r->text[0] = 0;
}

static void XMLCALL on_text(void *data, const XML_Char *s, int len)
{
	s3x_reader *r = data;
	size_t n;

	if (r->failed || len <= 0 || r->depth <= 0 || !r->wanted[r->depth])
		return;
	n = (size_t)len;
	if (n > S3X_MAX_TEXT - r->text_len)
		n = S3X_MAX_TEXT - r->text_len;
	memcpy(r->text + r->text_len, s, n);
	r->text_len += n;
	r->text[r->text_len] = 0;
}

s3x_reader *s3x_new(const char *const *names, s3x_element_cb cb, void *ctx)
{
	s3x_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->p = XML_ParserCreate("UTF-8");
	if (!r->p) {
		free(r);
		return NULL;
	}
	r->names = names;
	r->cb = cb;
	r->ctx = ctx;
	XML_SetUserData(r->p, r);
	XML_SetElementHandler(r->p, on_start, on_end);
	XML_SetCharacterDataHandler(r->p, on_text);
	/* no parameter entities and no external DTD: nothing is fetched */
	XML_SetParamEntityParsing(r->p, XML_PARAM_ENTITY_PARSING_NEVER);
	return r;
}

void s3x_free(s3x_reader *r)
{
	if (!r)
		return;
	XML_ParserFree(r->p);
	free(r);
}

int s3x_feed(s3x_reader *r, const void *data, size_t len, int last)
{
	if (r->failed)
		return -1;
	if (len > S3X_MAX_BYTES - r->fed) {
		snprintf(r->err, sizeof(r->err), "XML answer longer than %zu bytes", S3X_MAX_BYTES);
		r->failed = 1;
		return -1;
	}
	r->fed += len;
	if (XML_Parse(r->p, data, (int)len, last ? XML_TRUE : XML_FALSE) == XML_STATUS_ERROR) {
		if (!r->failed)
			snprintf(r->err, sizeof(r->err), "XML line %lu: %s",
				 (unsigned long)XML_GetCurrentLineNumber(r->p),
				 XML_ErrorString(XML_GetErrorCode(r->p)));
		r->failed = 1;
		return -1;
	}
	return r->failed ? -1 : 0;
}

const char *s3x_error(const s3x_reader *r)
{
	return r->err[0] ? r->err : "no error";
}

const char *s3x_root(const s3x_reader *r)
{
	return r->root;
}

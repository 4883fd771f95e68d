/* annotate-json.c - the /annotate answer: a DSO's files by the symbolizer's lookup, the annotation as JSON. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate-json.h"

#define AN_MAX_BUILD_ID 20

/* "0a1B..." -> bytes; the count, or 0 when it is not an even run of hex digits. */
static size_t parse_hex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;

	for (; hex && hex[0] && hex[1] && n < max; hex += 2) {
		unsigned v;
		if (sscanf(hex, "%2x", &v) != 1 || !strchr("0123456789abcdefABCDEF", hex[0]) ||
		    !strchr("0123456789abcdefABCDEF", hex[1]))
			return 0;
		out[n++] = (uint8_t)v;
	}
	return hex && *hex ? 0 : n;
}

int an_annotate_dso(pd_dso_cache *cache, const pd_dso_paths *paths, const char *dso,
		    const char *build_id, an_request *rq, an_result *out)
{
	uint8_t bid[AN_MAX_BUILD_ID];
	size_t nb = parse_hex(build_id, bid, sizeof(bid));
	pd_dso *d = NULL;
	int rc;

	rq->code_path = rq->debug_path = NULL;
	/* the symbolizer's lookup: by the recorded build-id, uploads first */
	if (!rq->kernel && dso && dso[0] == '/' &&
	    (d = pd_dso_get(cache, PD_DSO_ELF, dso, nb ? bid : NULL, nb, paths))) {
		rq->code_path = pd_dso_file(d);
		rq->debug_path = pd_dso_debug_file(d);
	}
	rc = an_annotate(rq, out);
	if (d)
		pd_dso_put(cache, d);
	return rc;
}

static json_t *hex_addr(uint64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "0x%" PRIx64, v);
	return json_string(s);
}

json_t *an_json(const an_result *r, const an_meta *m)
{
	const char *ffile = r->function_file >= 0 ? r->files[r->function_file] : NULL;
	json_t *o, *lines = json_array(), *insns = json_array(), *others;
	size_t i;

	for (i = 0; lines && i < r->nr_lines; i++) {
		const an_line *l = &r->lines[i];
		json_t *e = json_pack("{s:I,s:I}", "line", (json_int_t)l->line, "samples",
				      (json_int_t)(m->by_samples ? l->samples : l->value));
		/* inlined code from another file says which */
		if (e && l->file != r->function_file)
			json_object_set_new(e, "file", json_string(r->files[l->file]));
		json_array_append_new(lines, e);
	}
	for (i = 0; insns && i < r->nr_insns; i++) {
		const an_insn *in = &r->insns[i];
		json_t *e = json_pack("{s:o,s:s?,s:o,s:I}", "address", hex_addr(in->addr), "text",
				      in->text, "line", in->file >= 0 ? json_integer(in->line) :
				      json_null(), "samples",
				      (json_int_t)(m->by_samples ? in->samples : in->value));
		if (e && in->file >= 0 && in->file != r->function_file)
			json_object_set_new(e, "file", json_string(r->files[in->file]));
		json_array_append_new(insns, e);
	}
	o = json_pack("{s:s,s:s,s:s?,s:s?,s:s?,s:s?,s:I,s:s,s:s?,s:o*,s:o*}", "function",
		      m->function, "weight", m->weight, "dso", m->dso, "build_id",
		      m->build_id && m->build_id[0] ? m->build_id : NULL, "file", ffile,
		      "symbol", r->symbol, "self", (json_int_t)m->self,
		      "addresses", m->kernel ? "kernel" : r->mapped ? "dso" : "file_offset",
		      "disassembler", r->disassembler, "lines", lines, "instructions", insns);
	if (!o || !lines || !insns) {
		json_decref(o);
		return NULL;
	}
	if (r->problem[0])
		json_object_set_new(o, "problem", json_string(r->problem));
	/* a name in several DSOs: the others, so the sums can be told apart */
	if (m->nr_other && (others = json_array())) {
		for (i = 0; i < m->nr_other; i++)
			json_array_append_new(others, json_pack("{s:s?,s:I}", "dso", m->other_dsos[i],
								"self", (json_int_t)m->other_self[i]));
		json_object_set_new(o, "other_dsos", others);
	}
	return o;
}

json_t *an_source_json(const an_result *r, an_source_fn read, void *ctx)
{
	unsigned first = UINT32_MAX, last = 0, n, i;
	char **text;
	json_t *arr;
	size_t k;

	if (r->function_file < 0)
		return NULL;
	for (k = 0; k < r->nr_lines; k++)
		if (r->lines[k].file == r->function_file) {
			if (r->lines[k].line < first)
				first = r->lines[k].line;
			if (r->lines[k].line > last)
				last = r->lines[k].line;
		}
	if (!last || last - first >= AN_MAX_SOURCE_LINES)
		return NULL;
	if (read(ctx, r->files[r->function_file], first, last, &text) != 0)
		return NULL;
	n = last - first + 1;
	arr = json_array();
	for (i = 0; arr && i < n; i++)
		json_array_append_new(arr, text[i] ? json_string(text[i]) : json_null());
	an_source_free(text, n);
	return arr ? json_pack("{s:s,s:I,s:o}", "file", r->files[r->function_file], "first_line",
			       (json_int_t)first, "text", arr) : NULL;
}

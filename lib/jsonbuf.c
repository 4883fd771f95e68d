/* jsonbuf.c - JSON text into a growing buffer. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonbuf.h"
#include "utf8.h"

void jb_add(jbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap : 65536;
		char *p;
		while (ncap < b->len + n + 1)
			ncap *= 2;
		if (!(p = realloc(b->p, ncap))) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
void jb_json_str(jbuf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0;

	/* most names are printable ASCII: one copy */
	while (i < n && u[i] >= 0x20 && u[i] < 0x80 && u[i] != '"' && u[i] != '\\')
		i++;
	if (i == n && !b->oom && b->len + n + 3 <= b->cap) {
		b->p[b->len] = '"';
		memcpy(b->p + b->len + 1, s, n);
		b->p[b->len + n + 1] = '"';
		b->len += n + 2;
		return;
	}
	i = 0;
	jb_add(b, "\"", 1);
	while (i < n) {
		size_t k = utf8_seq_len(u + i, n - i);
		if (k && u[i] >= 0x20 && u[i] != '"' && u[i] != '\\') {
			i += k;
			run += k;
			continue;
		}
		jb_add(b, s + i - run, run);
		run = 0;
		if (!k) {
			jb_add(b, "\\ufffd", 6);
		} else if (u[i] == '"' || u[i] == '\\') {
			char e[2] = { '\\', (char)u[i] };
			jb_add(b, e, 2);
		} else {
			char e[8];
			snprintf(e, sizeof(e), "\\u%04x", u[i]);
			jb_add(b, e, 6);
		}
		i += k ? k : 1;
	}
	jb_add(b, s + i - run, run);
	jb_add(b, "\"", 1);
}


/* Decimal digits of v, written backwards from end; returns the start. */
char *jb_u64_dec(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

void jb_node_open(jb_tree *t, const char *name, size_t len, const char *dso)
{
	jbuf *b = &t->b;

	if (t->comma)
		jb_add(b, ",{\"name\":", 9);
	else
		jb_add(b, "{\"name\":", 8);
	jb_json_str(b, name, len);
	if (dso) {
		jb_add(b, ",\"dso\":", 7);
		jb_json_str(b, dso, strlen(dso));
	}
	t->comma = 0;
}

int jb_node_close(void *ctx)
{
	jb_tree *t = ctx;

	jb_add(&t->b, "]}", 2);
	t->comma = 1;
	return t->b.oom ? -1 : 0;
}

int jb_value_node_open(void *ctx, const char *name, size_t len, const char *dso, uint64_t value)
{
	static const char tail[] = ",\"children\":[";
	jb_tree *w = ctx;
	char num[64], *d;

	jb_node_open(w, name, len, dso);
	/* ,"value":N,"children":[ without printf */
	memcpy(num + sizeof(num) - sizeof(tail), tail, sizeof(tail) - 1);
	d = jb_u64_dec(num + sizeof(num) - sizeof(tail), value);
	d -= 9;
	memcpy(d, ",\"value\":", 9);
	jb_add(&w->b, d, (size_t)(num + sizeof(num) - 1 - d));
	return w->b.oom ? -1 : 0;
}

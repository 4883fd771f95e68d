/*
 * fold.c - stacks to folded lines: the lines in an array whose indexes stay
 * (callers may keep them, pd_fold_last_id), found by an open-addressing
 * hash table of indexes keyed by the line.
 */
#include "fold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FOLD_MAX_STACKS (64u << 20)	/* distinct stacks kept */
#define FOLD_NAME_MAX 4096

typedef struct fold_entry {
	char *key;
	size_t len;
	uint64_t hash, count;
} fold_entry;

/* Folded names of frames already seen: the same symbol of the same dso
 * folds to the same name, so the rules run once per distinct frame. Keys
 * are the frame's string pointers, checked against copies of the strings
 * so a reused pointer can never give a stale name. */
typedef struct memo_entry {
	const char *symp, *dsop;
	char *sym, *dso;	/* copies (NULL for NULL) */
	char *name;		/* folded; NULL when the frame is dropped */
	size_t len;
	int split;		/* named per offset: folded each time */
} memo_entry;

#define MEMO_CAP (1u << 16)	/* entries; the table is cleared when full */

struct pd_fold {
	unsigned flags;
	memo_entry *memo;
	size_t memo_n;
	fold_entry *ents;	/* the distinct lines, in the order first seen */
	size_t n, ents_cap;
	uint32_t *slots;	/* index + 1 into ents; 0 = free */
	size_t cap;
	size_t last_id;		/* the entry the last add went to */
	uint64_t total;
	char *buf;		/* the line being built */
	size_t buf_cap, last_len;
};

pd_fold *pd_fold_new(unsigned flags)
{
	pd_fold *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->flags = flags;
	f->cap = 1024;
	f->slots = calloc(f->cap, sizeof(*f->slots));
	f->ents_cap = f->cap / 2;
	f->ents = malloc(f->ents_cap * sizeof(*f->ents));
	if (!f->slots || !f->ents) {
		free(f->slots);
		free(f->ents);
		free(f);
		return NULL;
	}
	return f;
}

void pd_fold_free(pd_fold *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->n; i++)
		free(f->ents[i].key);
	free(f->ents);
	for (i = 0; f->memo && i < MEMO_CAP; i++) {
		free(f->memo[i].sym);
		free(f->memo[i].dso);
		free(f->memo[i].name);
	}
	free(f->memo);
	free(f->slots);
	free(f->buf);
	free(f);
}

static int same_str(const char *copy, const char *s)
{
	return copy ? s && !strcmp(copy, s) : !s;
}

static void memo_clear(pd_fold *f)
{
	size_t i;

	for (i = 0; i < MEMO_CAP; i++) {
		free(f->memo[i].sym);
		free(f->memo[i].dso);
		free(f->memo[i].name);
	}
	memset(f->memo, 0, MEMO_CAP * sizeof(*f->memo));
	f->memo_n = 0;
}

/* The folded name of fr: *name (NULL when dropped) and its length; 0, or -1
 * out of memory. buf is scratch space. */
static int frame_name(pd_fold *f, const pd_frame *fr, char *buf, size_t len,
		      const char **name, size_t *nlen)
{
	uint64_t h;
	size_t i;
	memo_entry *e;

	if (!f->memo) {
		f->memo = calloc(MEMO_CAP, sizeof(*f->memo));
		if (!f->memo)
			return -1;
	}
	h = ((uint64_t)(uintptr_t)fr->sym * 0x9e3779b97f4a7c15ULL) ^
	    ((uint64_t)(uintptr_t)fr->dso * 0xc2b2ae3d27d4eb4fULL);
	h ^= h >> 29;
	for (i = h & (MEMO_CAP - 1);; i = (i + 1) & (MEMO_CAP - 1)) {
		e = &f->memo[i];
		if (!e->symp && !e->dsop && !e->sym && !e->dso && !e->len && !e->name && !e->split)
			break;
		if (e->symp == fr->sym && e->dsop == fr->dso &&
		    same_str(e->sym, fr->sym) && same_str(e->dso, fr->dso)) {
			if (e->split)
				goto fresh;
			*name = e->name;
			*nlen = e->len;
			return 0;
		}
	}
	/* names split by blanks depend on the offset: marked, not memoised */
	if ((fr->dso && strpbrk(fr->dso, " \t")) || (fr->sym && strstr(fr->sym, " ("))) {
		if (f->memo_n * 2 < MEMO_CAP) {
			e->symp = fr->sym;
			e->dsop = fr->dso;
			e->sym = fr->sym ? strdup(fr->sym) : NULL;
			e->dso = fr->dso ? strdup(fr->dso) : NULL;
			e->split = 1;
			f->memo_n++;
		}
fresh:
		*name = pd_fold_frame_name(fr, f->flags, buf, len) ? buf : NULL;
		*nlen = *name ? strlen(buf) : 0;
		return 0;
	}
	if (f->memo_n * 2 >= MEMO_CAP) {
		memo_clear(f);
		return frame_name(f, fr, buf, len, name, nlen);
	}
	e->symp = fr->sym;
	e->dsop = fr->dso;
	e->sym = fr->sym ? strdup(fr->sym) : NULL;
	e->dso = fr->dso ? strdup(fr->dso) : NULL;
	if (pd_fold_frame_name(fr, f->flags, buf, len)) {
		e->len = strlen(buf);
		e->name = strdup(buf);
		if (!e->name)
			return -1;
	}
	/* an entry with all fields empty would read as a free slot */
	if (!e->symp && !e->dsop && !e->name)
		e->len = (size_t)-1;
	f->memo_n++;
	*name = e->name;
	*nlen = e->name ? e->len : 0;
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/*
 * Split a frame the way stackcollapse-perf.pl's /^\s*(\w+)\s*(.+) \((\S*)\)/
 * splits the line perf script prints for it ("sym+0xoff (dso)"): the last
 * " (" followed by non-blanks up to a ")". Only dsos with blanks ("... (deleted)")
 * or names with " (" need this; the rest split where one expects.
 */
static void perl_split(const pd_frame *fr, char *raw, size_t rlen, char *mod, size_t mlen)
{
	char line[2 * FOLD_NAME_MAX];
	size_t n, p;

	if (fr->sym)
		snprintf(line, sizeof(line), "%s+0x%llx (%s)", fr->sym,
			 (unsigned long long)fr->sym_off, fr->dso ? fr->dso : "[unknown]");
	else
		snprintf(line, sizeof(line), "[unknown] (%s)", fr->dso ? fr->dso : "[unknown]");
	n = strlen(line);
	for (p = n; p-- > 1;) {
		size_t k, close = 0;

		if (line[p] != ' ' || line[p + 1] != '(')
			continue;
		for (k = p + 2; k < n && line[k] != ' ' && line[k] != '\t'; k++)
			if (line[k] == ')')
				close = k;
		if (!close)
			continue;
		snprintf(raw, rlen, "%.*s", (int)p, line);
		snprintf(mod, mlen, "%.*s", (int)(close - p - 2), line + p + 2);
		/* the symbol offset perf appends is stripped from the end */
		{
			char *plus = strrchr(raw, '+');

			if (plus && plus[1] == '0' && plus[2] == 'x' && plus[3] &&
			    strspn(plus + 3, "0123456789abcdef") == strlen(plus + 3))
				*plus = '\0';
		}
		return;
	}
	snprintf(raw, rlen, "%s", fr->sym ? fr->sym : "[unknown]");
	snprintf(mod, mlen, "%s", fr->dso ? fr->dso : "[unknown]");
}

int pd_fold_frame_name(const pd_frame *fr, unsigned flags, char *buf, size_t len)
{
	size_t o = 0, i;
	const char *raw = fr->sym ? fr->sym : "[unknown]";
	const char *dso = fr->dso ? fr->dso : "[unknown]";
	char rbuf[FOLD_NAME_MAX], mbuf[FOLD_NAME_MAX];
	char *paren;

	if (len < 8)
		return 0;
	if (strpbrk(dso, " \t") || (fr->sym && strstr(fr->sym, " ("))) {
		perl_split(fr, rbuf, sizeof(rbuf), mbuf, sizeof(mbuf));
		raw = rbuf;
		dso = mbuf;
	}
	if (raw[0] == '(')	/* stackcollapse skips these lines */
		return 0;
	if (strcmp(raw, "[unknown]"))
		o = (size_t)snprintf(buf, len, "%s", raw);
	else if (strcmp(dso, "[unknown]"))
		o = (size_t)snprintf(buf, len, "[%s]", base_name(dso));
	else
		o = (size_t)snprintf(buf, len, "[unknown]");
	if (o >= len)
		o = len - 1;
	for (i = 0; i < o; i++)
		if (buf[i] == ';')
			buf[i] = ':';
	/* drop arguments: from the first '(' that does not open
	 * "(anonymous namespace)", unless the name looks like ".(...)." */
	{
		char *a = strstr(buf, ".("), *b = a ? strstr(a + 2, ").") : NULL;

		if (!b) {
			for (paren = strchr(buf, '('); paren; paren = strchr(paren + 1, '('))
				if (strncmp(paren, "(anonymous namespace)", 21)) {
					*paren = '\0';
					break;
				}
		}
	}
	/* quotes go */
	for (i = 0, o = 0; buf[i]; i++)
		if (buf[i] != '"' && buf[i] != '\'')
			buf[o++] = buf[i];
	buf[o] = '\0';
	if ((flags & PD_FOLD_KERNEL) && (dso[0] == '[' ||
	    (strlen(dso) >= 7 && !strcmp(dso + strlen(dso) - 7, "vmlinux"))) &&
	    !strstr(dso, "unknown") && o + 4 < len)
		memcpy(buf + o, "_[k]", 5);
	return 1;
}

/* 8 bytes at a time: stacks are long, this runs once per sample */
static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s + i, n - i);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 29;
	return h ? h : 1;
}

/* Twice the slots (the entries stay where they are), rehashed. */
static int grow(pd_fold *f)
{
	uint32_t *slots = calloc(f->cap * 2, sizeof(*slots));
	size_t cap = f->cap * 2, i;

	if (!slots)
		return -1;
	for (i = 0; i < f->n; i++) {
		size_t h = f->ents[i].hash & (cap - 1);

		while (slots[h])
			h = (h + 1) & (cap - 1);
		slots[h] = (uint32_t)i + 1;
	}
	free(f->slots);
	f->slots = slots;
	f->cap = cap;
	return 0;
}

static int append(pd_fold *f, size_t *o, const char *s, size_t n)
{
	if (*o + n + 1 > f->buf_cap) {
		size_t cap = f->buf_cap ? f->buf_cap * 2 : 4096;
		char *p;

		while (cap < *o + n + 1)
			cap *= 2;
		p = realloc(f->buf, cap);
		if (!p)
			return -1;
		f->buf = p;
		f->buf_cap = cap;
	}
	memcpy(f->buf + *o, s, n);
	*o += n;
	f->buf[*o] = '\0';
	return 0;
}

int pd_fold_add(pd_fold *f, const pd_stack *st, uint64_t weight)
{
	char name[FOLD_NAME_MAX];
	size_t o = 0, i;
	int n;

	/* first field: the comm, spaces as '_' */
	if (f->flags & PD_FOLD_TID)
		n = snprintf(name, sizeof(name), "%s-%u/%u", st->comm ? st->comm : "", st->pid, st->tid);
	else if (f->flags & PD_FOLD_PID)
		n = snprintf(name, sizeof(name), "%s-%u", st->comm ? st->comm : "", st->pid);
	else
		n = snprintf(name, sizeof(name), "%s", st->comm ? st->comm : "");
	if (n < 0)
		return -1;
	for (i = 0; name[i]; i++)
		if (name[i] == ' ')
			name[i] = '_';
	if (append(f, &o, name, strlen(name)) < 0)
		return -1;
	for (i = st->nr; i-- > 0;) {
		const char *fn;
		size_t fl;

		if (frame_name(f, &st->frames[i], name, sizeof(name), &fn, &fl) < 0)
			return -1;
		if (!fn)
			continue;
		if (append(f, &o, ";", 1) < 0 || append(f, &o, fn, fl) < 0)
			return -1;
	}
	f->last_len = o;
	return pd_fold_add_line(f, f->buf, o, weight);
}

const char *pd_fold_last(const pd_fold *f, size_t *len)
{
	*len = f->last_len;
	return f->buf;
}

int pd_fold_add_line(pd_fold *f, const char *line, size_t o, uint64_t weight)
{
	uint64_t hv = hash_bytes(line, o);
	size_t h = hv & (f->cap - 1);
	fold_entry *e;

	while (f->slots[h]) {
		e = &f->ents[f->slots[h] - 1];
		if (e->hash == hv && e->len == o && !memcmp(e->key, line, o)) {
			e->count += weight;
			f->total += weight;
			f->last_id = f->slots[h] - 1;
			return 0;
		}
		h = (h + 1) & (f->cap - 1);
	}
	if (f->n >= FOLD_MAX_STACKS)
		return -1;
	if (f->n == f->ents_cap) {
		fold_entry *v = realloc(f->ents, 2 * f->ents_cap * sizeof(*v));

		if (!v)
			return -1;
		f->ents = v;
		f->ents_cap *= 2;
	}
	e = &f->ents[f->n];
	e->key = malloc(o + 1);
	if (!e->key)
		return -1;
	memcpy(e->key, line, o);
	e->key[o] = '\0';
	e->len = o;
	e->hash = hv;
	e->count = weight;
	f->slots[h] = (uint32_t)f->n + 1;
	f->last_id = f->n;
	f->n++;
	f->total += weight;
	if (f->n * 2 > f->cap && grow(f) < 0)
		return -1;
	return 0;
}

size_t pd_fold_last_id(const pd_fold *f)
{
	return f->last_id;
}

int pd_fold_add_id(pd_fold *f, size_t id, uint64_t weight)
{
	if (id >= f->n)
		return -1;
	f->ents[id].count += weight;
	f->total += weight;
	f->last_id = id;
	return 0;
}

size_t pd_fold_count(const pd_fold *f)
{
	return f->n;
}

uint64_t pd_fold_total(const pd_fold *f)
{
	return f->total;
}

static int entry_cmp(const void *a, const void *b)
{
	const fold_entry *x = *(fold_entry * const *)a, *y = *(fold_entry * const *)b;

	return strcmp(x->key, y->key);
}

/* the entries sorted by key; the caller frees the array */
static fold_entry **sorted(const pd_fold *f)
{
	fold_entry **v = malloc((f->n ? f->n : 1) * sizeof(*v));
	size_t i, k = 0;

	if (!v)
		return NULL;
	for (i = 0; i < f->n; i++)
		v[k++] = &f->ents[i];
	qsort(v, k, sizeof(*v), entry_cmp);
	return v;
}

int pd_fold_foreach(const pd_fold *f, pd_fold_fn cb, void *ctx)
{
	fold_entry **v = sorted(f);
	size_t i;
	int rc = 0;

	if (!v)
		return -1;
	for (i = 0; i < f->n && !rc; i++)
		rc = cb(ctx, v[i]->key, v[i]->count);
	free(v);
	return rc;
}

/* child of node named name[0..n), created when absent */
static json_t *child(json_t *node, const char *name, size_t n)
{
	json_t *kids = json_object_get(node, "children"), *c;
	size_t i;

	/* sorted input: the one wanted is nearly always the last */
	c = json_array_get(kids, json_array_size(kids) - 1);
	if (c) {
		const char *cn = json_string_value(json_object_get(c, "name"));

		if (cn && strlen(cn) == n && !memcmp(cn, name, n))
			return c;
	}
	json_array_foreach(kids, i, c) {
		const char *cn = json_string_value(json_object_get(c, "name"));

		if (cn && strlen(cn) == n && !memcmp(cn, name, n))
			return c;
	}
	c = json_pack("{s:s%,s:I,s:[]}", "name", name, n, "value", (json_int_t)0, "children");
	if (!c || json_array_append_new(kids, c) < 0)
		return NULL;
	return c;
}

static void add_value(json_t *node, uint64_t v)
{
	json_t *val = json_object_get(node, "value");

	json_integer_set(val, json_integer_value(val) + (json_int_t)v);
}

json_t *pd_fold_tree(const pd_fold *f)
{
	fold_entry **v = sorted(f);
	json_t *root;
	size_t i;

	if (!v)
		return NULL;
	root = json_pack("{s:s,s:I,s:[]}", "name", "all", "value", (json_int_t)0, "children");
	for (i = 0; root && i < f->n; i++) {
		const char *p = v[i]->key;
		json_t *node = root;

		add_value(root, v[i]->count);
		/* sorted input: siblings share prefixes, linear child search is
		 * cheap enough for flame-graph sized trees */
		while (node) {
			size_t n = strcspn(p, ";");

			node = child(node, p, n);
			if (!node)
				break;
			add_value(node, v[i]->count);
			if (!p[n])
				break;
			p += n + 1;
		}
		if (!node) {
			json_decref(root);
			root = NULL;
		}
	}
	free(v);
	return root;
}

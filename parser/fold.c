/*
 * fold.c - stacks to folded lines. A stack is kept as the ids of its
 * interned folded names (comm field first, then frames outermost first),
 * found by an open-addressing hash table of entry indexes keyed by the ids;
 * entry indexes stay (callers may keep them, pd_fold_last_id). Lines are
 * only built when they are printed: folding a sample is hashing a few
 * integers, not building and hashing a string per frame.
 */
#include "config.h"

#include "fold.h"
#include "strhash.h"
#include "table.h"

#include <stdio.h>
#include <sys/types.h>
#include <stdlib.h>
#include <string.h>

#define FOLD_MAX_STACKS (64u << 20)	/* distinct stacks kept */
#define FOLD_MAX_NAMES (64u << 20)	/* distinct folded names */
#define FOLD_MAX_IDS ((size_t)1 << 31)	/* ids of all stacks together */
#define FOLD_NAME_MAX 4096

/* A stack is found by two 64-bit hashes of its ids computed apart and its
 * length, not by comparing its ids: those lie elsewhere in a large array,
 * and reading them cost a cache miss on nearly every sample folded
 * address by address. Two stacks that agree in both hashes and length
 * but differ, unless built to, have a chance of about 2^-128. */
typedef struct fold_entry {
	size_t off;		/* its ids: f->ids[off .. off + len) */
	uint32_t len;
	uint64_t hash, check, count;
} fold_entry;

/* Folded names of frames already seen: the same symbol of the same dso
 * folds to the same name, so the rules run once per distinct frame. Keys
 * are the frame's string pointers, checked against copies of the strings
 * so a reused pointer can never give a stale name. */
typedef struct memo_entry {
	const char *symp, *dsop;
	char *sym, *dso;	/* copies (NULL for NULL) */
	uint32_t id;		/* the folded name, or PD_FOLD_DROPPED */
	uint8_t used;
	uint8_t split;		/* named per offset: folded each time */
} memo_entry;

#define MEMO_CAP (1u << 16)	/* entries; the table is cleared when full */

/* Names of symbols of symbol tables: a table's serial is never reused and
 * its names stay while it does, so (serial, name pointer) needs no string
 * compared. The frame's dso name does not vary within one table as far
 * as folding looks at it (a '[' first, "vmlinux" last). */
typedef struct sym_memo {
	uint64_t serial;	/* 0: free */
	const char *sym;
	uint32_t id;
	uint8_t kernel;
} sym_memo;

#define SYM_MEMO_SLOTS (1u << 16)

struct pd_fold {
	unsigned flags;
	memo_entry *memo;
	size_t memo_n;
	sym_memo *syms;
	/* the folded names, interned */
	char **names;
	size_t *name_len;
	size_t nnames, cap_names;
	uint32_t *name_slots;	/* index + 1 into names; 0 = free */
	uint64_t *name_hash;	/* per name */
	size_t name_cap;
	/* the stacks */
	fold_entry *ents;	/* the distinct stacks, in the order first seen */
	size_t n, ents_cap;
	uint32_t *slots;	/* index + 1 into ents; 0 = free */
	size_t cap;
	uint32_t *ids;		/* every stack's ids, back to back */
	size_t nids, cap_ids;
	uint32_t *scratch;	/* the stack being added */
	size_t cap_scratch;
	size_t last_id;		/* the entry the last add went to */
	uint64_t total;
	/* the comm field asked last: a sample's stack folded whole (unwound
	 * dwarf samples) asks for its thread's on every sample */
	char *comm_last;
	uint32_t comm_pid, comm_tid, comm_id;
};

pd_fold *pd_fold_new(unsigned flags)
{
	pd_fold *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->flags = flags;
	f->cap = 1024;
	f->slots = pd_table_new(f->cap, sizeof(*f->slots));
	f->ents_cap = f->cap / 2;
	f->ents = malloc(f->ents_cap * sizeof(*f->ents));
	f->name_cap = 1024;
	f->name_slots = pd_table_new(f->name_cap, sizeof(*f->name_slots));
	if (!f->slots || !f->ents || !f->name_slots) {
		pd_fold_free(f);
		return NULL;
	}
	return f;
}

void pd_fold_free(pd_fold *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nnames; i++)
		free(f->names[i]);
	free(f->names);
	free(f->name_len);
	free(f->name_hash);
	free(f->name_slots);
	free(f->ents);
	free(f->slots);
	free(f->ids);
	free(f->scratch);
	for (i = 0; f->memo && i < MEMO_CAP; i++) {
		free(f->memo[i].sym);
		free(f->memo[i].dso);
	}
	free(f->memo);
	free(f->syms);
	free(f->comm_last);
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
	}
	memset(f->memo, 0, MEMO_CAP * sizeof(*f->memo));
	f->memo_n = 0;
}

static int name_id(pd_fold *f, const char *s, size_t n, uint32_t *id);

/* The folded name of fr as an id (PD_FOLD_DROPPED when stackcollapse
 * drops the frame); 0, or -1 out of memory. */
static int frame_id_slow(pd_fold *f, const pd_frame *fr, uint32_t *id);

int pd_fold_frame_id(pd_fold *f, const pd_frame *fr, uint32_t *id)
{
	sym_memo *m;

	if (!fr->dso_serial || !fr->sym)
		return frame_id_slow(f, fr, id);
	if (!f->syms && !(f->syms = pd_table_new(SYM_MEMO_SLOTS, sizeof(*f->syms))))
		return -1;
	m = &f->syms[((fr->dso_serial * 0x9e3779b97f4a7c15ULL) ^
		      ((uint64_t)(uintptr_t)fr->sym * 0xc2b2ae3d27d4eb4fULL)) >> 48];
	if (m->serial == fr->dso_serial && m->sym == fr->sym && m->kernel == (fr->kernel != 0)) {
		*id = m->id;
		return 0;
	}
	/* a name split at " (" depends on the offset: never remembered here,
	 * so a name found above needs no such test */
	if (strstr(fr->sym, " ("))
		return frame_id_slow(f, fr, id);
	if (frame_id_slow(f, fr, id) < 0)
		return -1;
	*m = (sym_memo){ .serial = fr->dso_serial, .sym = fr->sym, .id = *id,
			 .kernel = fr->kernel != 0 };
	return 0;
}

/* The memo by string pointers, checked against copies of the strings. */
static int frame_id_slow(pd_fold *f, const pd_frame *fr, uint32_t *id)
{
	char buf[FOLD_NAME_MAX];
	uint64_t h;
	size_t i;
	memo_entry *e;

	if (!f->memo) {
		f->memo = pd_table_new(MEMO_CAP, sizeof(*f->memo));
		if (!f->memo)
			return -1;
	}
	h = ((uint64_t)(uintptr_t)fr->sym * 0x9e3779b97f4a7c15ULL) ^
	    ((uint64_t)(uintptr_t)fr->dso * 0xc2b2ae3d27d4eb4fULL);
	h ^= h >> 29;
	for (i = h & (MEMO_CAP - 1);; i = (i + 1) & (MEMO_CAP - 1)) {
		e = &f->memo[i];
		if (!e->used)
			break;
		if (e->symp == fr->sym && e->dsop == fr->dso &&
		    same_str(e->sym, fr->sym) && same_str(e->dso, fr->dso)) {
			if (e->split)
				goto fresh;
			*id = e->id;
			return 0;
		}
	}
	if (f->memo_n * 2 >= MEMO_CAP) {
		memo_clear(f);
		return frame_id_slow(f, fr, id);
	}
	e->used = 1;
	e->symp = fr->sym;
	e->dsop = fr->dso;
	e->sym = fr->sym ? strdup(fr->sym) : NULL;
	e->dso = fr->dso ? strdup(fr->dso) : NULL;
	f->memo_n++;
	if ((fr->sym && !e->sym) || (fr->dso && !e->dso))
		return -1;
	/* names split by blanks depend on the offset: marked, not memoised */
	if ((fr->dso && strpbrk(fr->dso, " \t")) || (fr->sym && strstr(fr->sym, " ("))) {
		e->split = 1;
fresh:
		if (!pd_fold_frame_name(fr, f->flags, buf, sizeof(buf))) {
			*id = PD_FOLD_DROPPED;
			return 0;
		}
		return name_id(f, buf, strlen(buf), id);
	}
	e->id = PD_FOLD_DROPPED;
	if (pd_fold_frame_name(fr, f->flags, buf, sizeof(buf)) &&
	    name_id(f, buf, strlen(buf), &e->id) < 0)
		return -1;
	*id = e->id;
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

/* ---- names ------------------------------------------------------------ */

static int names_grow(pd_fold *f)
{
	size_t cap = f->name_cap * 2, i;
	uint32_t *slots = pd_table_new(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (i = 0; i < f->nnames; i++) {
		size_t h = f->name_hash[i] & (cap - 1);

		while (slots[h])
			h = (h + 1) & (cap - 1);
		slots[h] = (uint32_t)i + 1;
	}
	free(f->name_slots);
	f->name_slots = slots;
	f->name_cap = cap;
	return 0;
}

/* The id of the folded name s[0..n), interned when new. */
static int name_id(pd_fold *f, const char *s, size_t n, uint32_t *id)
{
	uint64_t hv = hash_bytes(s, n);
	size_t h = hv & (f->name_cap - 1);
	char *copy;

	while (f->name_slots[h]) {
		uint32_t k = f->name_slots[h] - 1;

		if (f->name_hash[k] == hv && f->name_len[k] == n && !memcmp(f->names[k], s, n)) {
			*id = k;
			return 0;
		}
		h = (h + 1) & (f->name_cap - 1);
	}
	if (f->nnames >= FOLD_MAX_NAMES)
		return -1;
	if (f->nnames == f->cap_names) {
		size_t cap = f->cap_names ? f->cap_names * 2 : 1024;
		char **v = realloc(f->names, cap * sizeof(*v));
		size_t *l;
		uint64_t *hs;

		if (!v)
			return -1;
		f->names = v;
		l = realloc(f->name_len, cap * sizeof(*l));
		if (!l)
			return -1;
		f->name_len = l;
		hs = realloc(f->name_hash, cap * sizeof(*hs));
		if (!hs)
			return -1;
		f->name_hash = hs;
		f->cap_names = cap;
	}
	copy = malloc(n + 1);
	if (!copy)
		return -1;
	memcpy(copy, s, n);
	copy[n] = '\0';
	f->names[f->nnames] = copy;
	f->name_len[f->nnames] = n;
	f->name_hash[f->nnames] = hv;
	f->name_slots[h] = (uint32_t)f->nnames + 1;
	*id = (uint32_t)f->nnames++;
	if (f->nnames * 2 > f->name_cap && names_grow(f) < 0)
		return -1;
	return 0;
}

int pd_fold_comm_id(pd_fold *f, const pd_stack *st, uint32_t *id)
{
	const char *comm = st->comm ? st->comm : "";
	char name[FOLD_NAME_MAX];
	int n;
	size_t i;

	if (f->comm_last && st->pid == f->comm_pid && st->tid == f->comm_tid &&
	    !strcmp(comm, f->comm_last)) {
		*id = f->comm_id;
		return 0;
	}
	/* the comm, spaces as '_' */
	if (f->flags & PD_FOLD_TID)
		n = snprintf(name, sizeof(name), "%s-%u/%u", comm, st->pid, st->tid);
	else if (f->flags & PD_FOLD_PID)
		n = snprintf(name, sizeof(name), "%s-%u", comm, st->pid);
	else
		n = snprintf(name, sizeof(name), "%s", comm);
	if (n < 0)
		return -1;
	for (i = 0; name[i]; i++)
		if (name[i] == ' ')
			name[i] = '_';
	if (name_id(f, name, i, id) < 0)
		return -1;
	free(f->comm_last);
	f->comm_last = strdup(comm);	/* NULL: no memo, still right */
	f->comm_pid = st->pid;
	f->comm_tid = st->tid;
	f->comm_id = *id;
	return 0;
}

/* ---- stacks ----------------------------------------------------------- */

/* The stack's hash; its second, computed apart, goes to *check. */
static uint64_t hash_ids(const uint32_t *ids, size_t n, uint64_t *check)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, k = PD_HASH2_SEED + n;
	size_t i;

	for (i = 0; i < n; i++) {
		h = (h ^ ids[i]) * 0xff51afd7ed558ccdULL;
		h ^= h >> 31;
		k = pd_hash2_step(k, ids[i]);
	}
	*check = k;
	return h ? h : 1;
}

/* Twice the slots (the entries stay where they are), rehashed. */
static int grow(pd_fold *f)
{
	uint32_t *slots = pd_table_new(f->cap * 2, sizeof(*slots));
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

int pd_fold_add_ids(pd_fold *f, const uint32_t *in, size_t n_in, uint64_t weight)
{
	const uint32_t *ids = in;
	size_t n = n_in, i, h;
	uint64_t hv, check;
	fold_entry *e;

	/* dropped frames are not part of the stack */
	for (i = 0; i < n_in && in[i] != PD_FOLD_DROPPED; i++)
		;
	if (i < n_in) {
		if (n_in > f->cap_scratch) {
			uint32_t *v = realloc(f->scratch, n_in * sizeof(*v));

			if (!v)
				return -1;
			f->scratch = v;
			f->cap_scratch = n_in;
		}
		for (i = 0, n = 0; i < n_in; i++)
			if (in[i] != PD_FOLD_DROPPED)
				f->scratch[n++] = in[i];
		ids = f->scratch;
	}
	hv = hash_ids(ids, n, &check);
	for (h = hv & (f->cap - 1); f->slots[h]; h = (h + 1) & (f->cap - 1)) {
		e = &f->ents[f->slots[h] - 1];
		if (e->hash == hv && e->check == check && e->len == n) {
			e->count += weight;
			f->total += weight;
			f->last_id = f->slots[h] - 1;
			return 0;
		}
	}
	if (f->n >= FOLD_MAX_STACKS || f->nids + n > FOLD_MAX_IDS)
		return -1;
	if (f->n == f->ents_cap) {
		fold_entry *v = realloc(f->ents, 2 * f->ents_cap * sizeof(*v));

		if (!v)
			return -1;
		f->ents = v;
		f->ents_cap *= 2;
	}
	if (f->nids + n > f->cap_ids) {
		size_t cap = f->cap_ids ? f->cap_ids * 2 : 4096;
		uint32_t *v;

		while (cap < f->nids + n)
			cap *= 2;
		v = realloc(f->ids, cap * sizeof(*v));
		if (!v)
			return -1;
		f->ids = v;
		f->cap_ids = cap;
	}
	memcpy(f->ids + f->nids, ids, n * sizeof(*ids));
	e = &f->ents[f->n];
	e->off = f->nids;
	e->len = (uint32_t)n;
	e->hash = hv;
	e->check = check;
	e->count = weight;
	f->nids += n;
	f->slots[h] = (uint32_t)f->n + 1;
	f->last_id = f->n;
	f->n++;
	f->total += weight;
	if (f->n * 2 > f->cap && grow(f) < 0)
		return -1;
	return 0;
}

int pd_fold_add(pd_fold *f, const pd_stack *st, uint64_t weight)
{
	uint32_t small[128], *ids = small;
	size_t n = 0, i;
	int rc = -1;

	if (st->nr + 1 > sizeof(small) / sizeof(*small)) {
		ids = malloc((st->nr + 1) * sizeof(*ids));
		if (!ids)
			return -1;
	}
	if (pd_fold_comm_id(f, st, &ids[n++]) < 0)
		goto out;
	for (i = st->nr; i-- > 0;)
		if (pd_fold_frame_id(f, &st->frames[i], &ids[n++]) < 0)
			goto out;
	rc = pd_fold_add_ids(f, ids, n, weight);
out:
	if (ids != small)
		free(ids);
	return rc;
}

int pd_fold_merge(pd_fold *dst, const pd_fold *src)
{
	uint32_t *map = malloc((src->nnames ? src->nnames : 1) * sizeof(*map));
	uint32_t *ids = NULL;
	size_t i, j, cap = 0;
	int rc = -1;

	if (!map)
		return -1;
	for (i = 0; i < src->nnames; i++)
		if (name_id(dst, src->names[i], src->name_len[i], &map[i]) < 0)
			goto out;
	for (i = 0; i < src->n; i++) {
		const fold_entry *e = &src->ents[i];

		if (e->len > cap) {
			uint32_t *v = realloc(ids, e->len * sizeof(*v));

			if (!v)
				goto out;
			ids = v;
			cap = e->len;
		}
		for (j = 0; j < e->len; j++)
			ids[j] = map[src->ids[e->off + j]];
		if (pd_fold_add_ids(dst, ids, e->len, e->count) < 0)
			goto out;
	}
	rc = 0;
out:
	free(map);
	free(ids);
	return rc;
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

/* ---- lines -------------------------------------------------------------- */

/* The byte order of two stacks' lines, read from their ids: the lines
 * agree up to the first id where the stacks differ (names are interned),
 * and from there are walked a byte at a time, a name's end read as the
 * ';' or the end of line that follows it. Nearly always the names differ
 * in their first bytes: no line is built or scanned from its start. */
typedef struct sort_ctx {
	const pd_fold *f;
	/* per name, the first 8 bytes of its line from there on, big-endian:
	 * [2 id] followed by ';', [2 id + 1] ending the line; NULL when a
	 * name holds a ';' (then a name and what follows it are not
	 * ordered by the name alone) */
	uint64_t *head;
} sort_ctx;

/* The first 8 bytes of s[0..len) then `end`, zeros after. */
static uint64_t head8(const char *s, size_t len, unsigned char end)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < 8; i++)
		v = v << 8 | (i < len ? (unsigned char)s[i] : i == len ? end : 0);
	return v;
}

/* Heads for every name, unless one holds a ';'. */
static uint64_t *make_heads(const pd_fold *f)
{
	uint64_t *h;
	size_t i;

	for (i = 0; i < f->nnames; i++)
		if (memchr(f->names[i], ';', f->name_len[i]))
			return NULL;
	h = malloc((f->nnames ? f->nnames : 1) * 2 * sizeof(*h));
	for (i = 0; h && i < f->nnames; i++) {
		h[2 * i] = head8(f->names[i], f->name_len[i], ';');
		h[2 * i + 1] = head8(f->names[i], f->name_len[i], '\0');
	}
	return h;
}

static int stack_cmp(const void *pa, const void *pb, void *ctx)
{
	const sort_ctx *c = ctx;
	const pd_fold *f = c->f;
	const fold_entry *a = &f->ents[*(const uint32_t *)pa], *b = &f->ents[*(const uint32_t *)pb];
	const uint32_t *ia = f->ids + a->off, *ib = f->ids + b->off;
	size_t m = a->len < b->len ? a->len : b->len, ka = 0, kb;
	const char *sa, *sb;

	while (ka < m && ia[ka] == ib[ka])
		ka++;
	if (ka == m)	/* one is the other's start: the shorter ends first */
		return a->len < b->len ? -1 : a->len > b->len;
	/* where neither name holds a ';', two lines differing here are
	 * ordered by what follows this point; its first 8 bytes mostly tell */
	if (c->head) {
		uint64_t ha = c->head[2 * ia[ka] + (ka + 1 >= a->len)];
		uint64_t hb = c->head[2 * ib[ka] + (ka + 1 >= b->len)];

		if (ha != hb)
			return ha < hb ? -1 : 1;
	}
	kb = ka;
	sa = f->names[ia[ka]];
	sb = f->names[ib[kb]];
	for (;;) {
		unsigned char ca = (unsigned char)*sa, cb = (unsigned char)*sb;

		if (!ca)
			ca = ka + 1 < a->len ? ';' : 0;
		if (!cb)
			cb = kb + 1 < b->len ? ';' : 0;
		if (ca != cb)
			return ca < cb ? -1 : 1;
		if (!ca)
			return 0;	/* a comm with a ';' made two stacks one line */
		if (*sa)
			sa++;
		else
			sa = f->names[ia[++ka]];
		if (*sb)
			sb++;
		else
			sb = f->names[ib[++kb]];
	}
}

/* Every stack as its line, in byte order, equal lines (a comm with a ';'
 * can make two stacks one line) merged: one line is built at a time, in
 * a buffer reused for the next. */
int pd_fold_foreach(const pd_fold *f, pd_fold_fn cb, void *ctx)
{
	uint32_t *order = malloc((f->n ? f->n : 1) * sizeof(*order));
	char *line = NULL;
	size_t cap = 0, i, j, k;
	sort_ctx sctx;
	int rc = 0;

	if (!order)
		return -1;
	for (i = 0; i < f->n; i++)
		order[i] = (uint32_t)i;
	sctx.f = f;
	sctx.head = make_heads(f);	/* NULL: compared byte by byte */
	qsort_r(order, f->n, sizeof(*order), stack_cmp, &sctx);
	for (i = 0; i < f->n && !rc; i = k) {
		const fold_entry *e = &f->ents[order[i]];
		uint64_t count = e->count;
		size_t need = 1, o = 0;

		for (k = i + 1; k < f->n && !stack_cmp(&order[i], &order[k], &sctx); k++)
			count += f->ents[order[k]].count;
		for (j = 0; j < e->len; j++)
			need += f->name_len[f->ids[e->off + j]] + 1;
		if (need > cap) {
			char *v = realloc(line, need * 2);

			if (!v) {
				rc = -1;
				break;
			}
			line = v;
			cap = need * 2;
		}
		for (j = 0; j < e->len; j++) {
			uint32_t id = f->ids[e->off + j];

			if (j)
				line[o++] = ';';
			memcpy(line + o, f->names[id], f->name_len[id]);
			o += f->name_len[id];
		}
		line[o] = '\0';
		rc = cb(ctx, line, count);
	}
	free(order);
	free(sctx.head);
	free(line);
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

/* One line into the tree: sorted input, so siblings share prefixes and
 * a linear child search is cheap enough for flame-graph sized trees. */
static int tree_line(void *ctx, const char *p, uint64_t count)
{
	json_t *node = ctx;

	add_value(node, count);
	for (;;) {
		size_t k = strcspn(p, ";");

		node = child(node, p, k);
		if (!node)
			return -1;
		add_value(node, count);
		if (!p[k])
			return 0;
		p += k + 1;
	}
}

json_t *pd_fold_tree(const pd_fold *f)
{
	json_t *root = json_pack("{s:s,s:I,s:[]}", "name", "all", "value", (json_int_t)0,
				 "children");

	if (root && pd_fold_foreach(f, tree_line, root)) {
		json_decref(root);
		root = NULL;
	}
	return root;
}

/*
 * inlines.c - an index of a DWARF file's function ranges: address ->
 * compile unit (from the units' own ranges), then per unit, built on first
 * use, sorted spans -> the function addr2line picks there -> its callers.
 *
 * addr2line (binutils 2.40, what perf 6.1 runs) picks, among the
 * subprograms, inlined subroutines and entry points whose ranges contain
 * the address, the one with the smallest such range, the later DIE of two
 * equal ones (gas emits one DIE per alias of an assembler function: libc's
 * __memmove_* and __memcpy_* share their code, and the later is named).
 * When that one is an inlined subroutine, -i adds the function it sits
 * in, and so on up to a function that is not inlined. Names: the linkage
 * name, else the name, through DW_AT_abstract_origin and
 * DW_AT_specification.
 */
#include "inlines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strhash.h"
#include "symtab.h"

#define INL_DEFAULT_BYTES	(256u << 20)
#define INL_MAX_DEPTH		256	/* DIE nesting followed (hostile files) */
#define INL_MAX_CHAIN		1024	/* perf's MAX_INLINE_NEST */
#define INL_MAX_NAMES		(4u << 20)
#define INL_MAX_FUNCS		(16u << 20)	/* per compile unit */
#define INL_NONE		UINT32_MAX

typedef struct inl_func {
	uint64_t low;		/* its first range's start (bfd's arange.low) */
	uint32_t name;		/* into the file's names */
	uint32_t caller;	/* the function it was inlined into, or NONE */
	uint8_t by_symbol;	/* named like the ELF symbol starting at low */
} inl_func;

typedef struct inl_cu {
	uint64_t *lo;		/* span i is [lo[i], lo[i + 1]); the last ends at end */
	uint32_t *func;		/* per span: the function, or NONE (a gap) */
	size_t n;
	uint64_t end;
	inl_func *funcs;
	size_t nfuncs;
	uint64_t used;		/* LRU tick */
	size_t bytes;
} inl_cu;

typedef struct inl_range {	/* address -> compile unit */
	uint64_t lo, hi;
	uint32_t cu;
} inl_range;

typedef struct inl_name {	/* open addressing: string -> index */
	uint64_t hash;
	uint32_t idx;		/* + 1; 0 = free */
} inl_name;

struct pd_inl {
	pd_inl *next;
	pd_inl_cache *cache;
	char *path;
	uint8_t build_id[20];
	size_t build_id_size;
	long long size, mtime_ns;	/* identify a file without a build-id */
	long refs;		/* under the cache lock */
	pthread_mutex_t lock;	/* everything below */
	int opened, fd;
	Dwarf *dw;
	inl_range *ranges;
	size_t nranges;
	Dwarf_Off *cu_off;	/* the units, in file order */
	inl_cu **cus;		/* NULL until indexed */
	size_t ncus;
	char **names;
	size_t nnames, cap_names;
	inl_name *name_tab;
	size_t name_cap;
	size_t bytes;		/* counted in the cache's total */
	uint64_t clock;
};

struct pd_inl_cache {
	pthread_mutex_t lock;
	pd_inl *list;
	size_t bytes, max_bytes;
};

/* ---- the cache ------------------------------------------------------- */

pd_inl_cache *pd_inl_cache_new(size_t max_bytes)
{
	pd_inl_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->max_bytes = max_bytes ? max_bytes : INL_DEFAULT_BYTES;
	return c;
}

static void cu_free(inl_cu *u)
{
	if (!u)
		return;
	free(u->lo);
	free(u->func);
	free(u->funcs);
	free(u);
}

static void inl_free(pd_inl *f)
{
	size_t i;

	for (i = 0; i < f->ncus; i++)
		cu_free(f->cus ? f->cus[i] : NULL);
	free(f->cus);
	free(f->cu_off);
	free(f->ranges);
	for (i = 0; i < f->nnames; i++)
		free(f->names[i]);
	free(f->names);
	free(f->name_tab);
	if (f->dw)
		dwarf_end(f->dw);
	if (f->fd >= 0)
		close(f->fd);
	pthread_mutex_destroy(&f->lock);
	free(f->path);
	free(f);
}

void pd_inl_cache_free(pd_inl_cache *c)
{
	pd_inl *f, *n;

	if (!c)
		return;
	for (f = c->list; f; f = n) {
		n = f->next;
		inl_free(f);
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}

size_t pd_inl_cache_bytes(pd_inl_cache *c)
{
	size_t n;

	pthread_mutex_lock(&c->lock);
	n = c->bytes;
	pthread_mutex_unlock(&c->lock);
	return n;
}

static void account(pd_inl *f, long long delta)
{
	f->bytes += (size_t)delta;
	pthread_mutex_lock(&f->cache->lock);
	f->cache->bytes += (size_t)delta;
	pthread_mutex_unlock(&f->cache->lock);
}

pd_inl *pd_inl_get(pd_inl_cache *c, const char *path, const uint8_t *build_id,
		   size_t build_id_size)
{
	struct stat st = { 0 };
	pd_inl *f;

	if (!build_id)
		build_id_size = 0;
	if (build_id_size > sizeof(f->build_id))
		build_id_size = sizeof(f->build_id);
	if (!build_id_size)
		stat(path, &st);
	pthread_mutex_lock(&c->lock);
	for (f = c->list; f; f = f->next) {
		if (f->build_id_size != build_id_size)
			continue;
		if (strcmp(f->path, path))
			continue;
		if (build_id_size ? !memcmp(f->build_id, build_id, build_id_size) :
		    f->size == (long long)st.st_size &&
		    f->mtime_ns == (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec)
			break;
	}
	if (f) {
		f->refs++;
		goto out;
	}
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		f = NULL;
		goto out;
	}
	pthread_mutex_init(&f->lock, NULL);
	f->cache = c;
	f->fd = -1;
	f->refs = 1;
	memcpy(f->build_id, build_id ? build_id : f->build_id, build_id_size);
	f->build_id_size = build_id_size;
	f->size = (long long)st.st_size;
	f->mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	f->next = c->list;
	c->list = f;
out:
	pthread_mutex_unlock(&c->lock);
	return f;
}

/* Unreferenced indexes stay (the next recording of the same library uses
 * them) until the cache is over its budget. */
void pd_inl_put(pd_inl_cache *c, pd_inl *f)
{
	pd_inl **pp;

	if (!f)
		return;
	pthread_mutex_lock(&c->lock);
	f->refs--;
	for (pp = &c->list; *pp && c->bytes > c->max_bytes;) {
		pd_inl *x = *pp;

		if (x->refs == 0) {
			*pp = x->next;
			c->bytes -= x->bytes;
			inl_free(x);
			continue;
		}
		pp = &x->next;
	}
	pthread_mutex_unlock(&c->lock);
}

/* ---- names ---------------------------------------------------------- */

static uint64_t str_hash(const char *s)
{
	uint64_t h = pd_fnv_str(PD_FNV_BASIS, s);

	return h ? h : 1;
}

static int names_grow(pd_inl *f)
{
	size_t cap = f->name_cap ? f->name_cap * 2 : 1024, i;
	inl_name *t = calloc(cap, sizeof(*t));

	if (!t)
		return -1;
	for (i = 0; i < f->name_cap; i++) {
		size_t h;

		if (!f->name_tab[i].idx)
			continue;
		for (h = f->name_tab[i].hash & (cap - 1); t[h].idx; h = (h + 1) & (cap - 1))
			;
		t[h] = f->name_tab[i];
	}
	account(f, (long long)((cap - f->name_cap) * sizeof(*t)));
	free(f->name_tab);
	f->name_tab = t;
	f->name_cap = cap;
	return 0;
}

/* The index of name (demangled as perf demangles it), added when new. */
static uint32_t intern(pd_inl *f, const char *raw)
{
	char *dm = pd_demangle(raw);
	const char *s = dm ? dm : raw;
	uint64_t hv = str_hash(s);
	size_t h;
	char *copy;

	if ((f->nnames + 1) * 2 > f->name_cap && names_grow(f) < 0)
		goto fail;
	for (h = hv & (f->name_cap - 1); f->name_tab[h].idx; h = (h + 1) & (f->name_cap - 1))
		if (f->name_tab[h].hash == hv && !strcmp(f->names[f->name_tab[h].idx - 1], s)) {
			free(dm);
			return f->name_tab[h].idx - 1;
		}
	if (f->nnames >= INL_MAX_NAMES)
		goto fail;
	if (f->nnames == f->cap_names) {
		size_t cap = f->cap_names ? f->cap_names * 2 : 256;
		char **v = realloc(f->names, cap * sizeof(*v));

		if (!v)
			goto fail;
		account(f, (long long)((cap - f->cap_names) * sizeof(*v)));
		f->names = v;
		f->cap_names = cap;
	}
	copy = dm ? dm : strdup(s);
	if (!copy)
		goto fail;
	account(f, (long long)strlen(copy) + 1);
	f->names[f->nnames] = copy;
	f->name_tab[h].hash = hv;
	f->name_tab[h].idx = (uint32_t)++f->nnames;
	return (uint32_t)(f->nnames - 1);
fail:
	free(dm);
	return INL_NONE;
}

/* The DIE's name; *linkage 1 when it is a linkage name. */
static const char *die_name(Dwarf_Die *die, int *linkage)
{
	Dwarf_Attribute at;
	const char *n;

	*linkage = 1;
	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &at) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &at)) &&
	    (n = dwarf_formstring(&at)))
		return n;
	*linkage = 0;
	if (dwarf_attr_integrate(die, DW_AT_name, &at) && (n = dwarf_formstring(&at)))
		return n;
	return "??";
}

/* Languages whose DW_AT_name is the symbol's name (binutils' non_mangled):
 * elsewhere (C++, Go, Rust, ...) a plain DW_AT_name may not be. */
static int names_are_symbols(int lang)
{
	switch (lang) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_Ada83:
	case DW_LANG_Cobol74:
	case DW_LANG_Cobol85:
	case DW_LANG_Fortran77:
	case DW_LANG_Pascal83:
	case DW_LANG_C99:
	case DW_LANG_Ada95:
	case DW_LANG_PLI:
	case DW_LANG_UPC:
	case DW_LANG_C11:
	case DW_LANG_Mips_Assembler:
		return 1;
	default:
		return 0;
	}
}

/* ---- opening: address -> compile unit ------------------------------- */

static int range_cmp(const void *a, const void *b)
{
	const inl_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->cu < y->cu ? -1 : x->cu > y->cu;
}

static int add_range(pd_inl *f, size_t *cap, uint64_t lo, uint64_t hi, size_t cu)
{
	if (lo >= hi)
		return 0;
	if (f->nranges == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		inl_range *v = realloc(f->ranges, n * sizeof(*v));

		if (!v)
			return -1;
		f->ranges = v;
		*cap = n;
	}
	f->ranges[f->nranges++] = (inl_range){ lo, hi, (uint32_t)cu };
	return 0;
}

/* Open the file and list its units with their ranges (under f->lock). */
static void open_dwarf(pd_inl *f)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap_cu = 0, cap_r = 0;

	f->opened = 1;
	f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0 || !(f->dw = dwarf_begin(f->fd, DWARF_C_READ)))
		return;
	while (dwarf_nextcu(f->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t r = 0;

		if (dwarf_offdie(f->dw, off + hsize, &cu)) {
			if (f->ncus == cap_cu) {
				size_t n = cap_cu ? cap_cu * 2 : 64;
				Dwarf_Off *v = realloc(f->cu_off, n * sizeof(*v));

				if (!v)
					break;
				f->cu_off = v;
				cap_cu = n;
			}
			f->cu_off[f->ncus] = off + hsize;
			while ((r = dwarf_ranges(&cu, r, &base, &lo, &hi)) > 0)
				if (add_range(f, &cap_r, lo, hi, f->ncus) < 0)
					break;
			f->ncus++;
		}
		off = next;
	}
	if (f->nranges)
		qsort(f->ranges, f->nranges, sizeof(*f->ranges), range_cmp);
	f->cus = calloc(f->ncus ? f->ncus : 1, sizeof(*f->cus));
	account(f, (long long)(f->nranges * sizeof(inl_range) +
			       f->ncus * (sizeof(Dwarf_Off) + sizeof(inl_cu *))));
}

/* The unit whose ranges contain addr, or NONE. Units' ranges may nest (a
 * few compilers list a whole section): the closest start wins. */
static uint32_t cu_of(const pd_inl *f, uint64_t addr)
{
	size_t lo = 0, hi = f->nranges, k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo; k-- > 0 && lo - k <= 8;)
		if (addr < f->ranges[k].hi)
			return f->ranges[k].cu;
	return INL_NONE;
}

/* ---- building a unit's index ---------------------------------------- */

typedef struct span_in {	/* one range of one function */
	uint64_t lo, hi;
	uint32_t func;
} span_in;

typedef struct builder {
	pd_inl *f;
	int plain_names;	/* the unit's DW_AT_names are symbol names */
	inl_func *funcs;
	size_t nfuncs, cap_funcs;
	span_in *in;
	size_t nin, cap_in;
	int failed;
} builder;

static uint32_t add_func(builder *b, uint32_t name, uint32_t caller, uint64_t low,
			 int by_symbol)
{
	if (b->nfuncs >= INL_MAX_FUNCS) {
		b->failed = 1;
		return INL_NONE;
	}
	if (b->nfuncs == b->cap_funcs) {
		size_t n = b->cap_funcs ? b->cap_funcs * 2 : 256;
		inl_func *v = realloc(b->funcs, n * sizeof(*v));

		if (!v) {
			b->failed = 1;
			return INL_NONE;
		}
		b->funcs = v;
		b->cap_funcs = n;
	}
	b->funcs[b->nfuncs] = (inl_func){ .low = low, .name = name, .caller = caller,
					  .by_symbol = (uint8_t)by_symbol };
	return (uint32_t)b->nfuncs++;
}

static void add_span(builder *b, uint64_t lo, uint64_t hi, uint32_t func)
{
	if (lo >= hi)
		return;
	if (b->nin == b->cap_in) {
		size_t n = b->cap_in ? b->cap_in * 2 : 256;
		span_in *v = realloc(b->in, n * sizeof(*v));

		if (!v) {
			b->failed = 1;
			return;
		}
		b->in = v;
		b->cap_in = n;
	}
	b->in[b->nin++] = (span_in){ lo, hi, func };
}

/* Children of a DIE that can hold code: scopes and namespaces, not types. */
static int may_hold_code(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_entry_point:
	case DW_TAG_lexical_block:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
		return 1;
	default:
		return 0;
	}
}

/* Every function DIE under `die`, in DIE order; `encl` is the function
 * the children sit in. */
static void walk(builder *b, Dwarf_Die *die, uint32_t encl, int depth)
{
	Dwarf_Die child;
	int rc;

	if (depth > INL_MAX_DEPTH || b->failed || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		uint32_t in = encl;

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		    tag == DW_TAG_entry_point) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t r = 0;
			uint32_t fn = INL_NONE;

			while ((r = dwarf_ranges(&child, r, &base, &lo, &hi)) > 0) {
				if (fn == INL_NONE) {
					int linkage;
					const char *name = die_name(&child, &linkage);

					fn = add_func(b, intern(b->f, name),
						      tag == DW_TAG_inlined_subroutine ? encl :
						      INL_NONE, lo, !linkage && !b->plain_names);
					if (fn == INL_NONE)
						return;
				}
				add_span(b, lo, hi, fn);
			}
			/* an abstract instance or a declaration holds no code */
			if (fn == INL_NONE)
				continue;
			in = fn;
		} else if (!may_hold_code(tag)) {
			continue;
		}
		walk(b, &child, in, depth + 1);
	} while ((rc = dwarf_siblingof(&child, &child)) == 0 && !b->failed);
}

static int span_cmp(const void *a, const void *b)
{
	const span_in *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* heap of open spans: the best on top (smallest, then the later DIE) */
static int better(const span_in *x, const span_in *y)
{
	uint64_t lx = x->hi - x->lo, ly = y->hi - y->lo;

	return lx != ly ? lx < ly : x->func > y->func;
}

static void heap_push(uint32_t *h, size_t *n, const span_in *in, uint32_t v)
{
	size_t i = (*n)++;

	while (i && better(&in[v], &in[h[(i - 1) / 2]])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n, const span_in *in)
{
	uint32_t v = h[--*n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && better(&in[h[c + 1]], &in[h[c]]))
			c++;
		if (!better(&in[h[c]], &in[v]))
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/* Flatten the ranges into spans naming the best function of each. */
static inl_cu *flatten(builder *b)
{
	inl_cu *u = calloc(1, sizeof(*u));
	uint64_t *bounds = malloc((2 * b->nin + 1) * sizeof(*bounds));
	uint32_t *heap = malloc((b->nin + 1) * sizeof(*heap));
	size_t nb = 0, nu = 0, i, k = 0, nh = 0;

	if (!u || !bounds || !heap)
		goto fail;
	if (b->nin)	/* a unit without code has no ranges */
		qsort(b->in, b->nin, sizeof(*b->in), span_cmp);
	for (i = 0; i < b->nin; i++) {
		bounds[nb++] = b->in[i].lo;
		bounds[nb++] = b->in[i].hi;
	}
	if (nb)
		qsort(bounds, nb, sizeof(*bounds), u64_cmp);
	for (i = 0; i < nb; i++)
		if (!nu || bounds[nu - 1] != bounds[i])
			bounds[nu++] = bounds[i];
	u->lo = malloc((nu ? nu : 1) * sizeof(*u->lo));
	u->func = malloc((nu ? nu : 1) * sizeof(*u->func));
	if (!u->lo || !u->func)
		goto fail;
	for (i = 0; i + 1 < nu; i++) {
		uint32_t best;

		while (k < b->nin && b->in[k].lo <= bounds[i])
			heap_push(heap, &nh, b->in, (uint32_t)k++);
		while (nh && b->in[heap[0]].hi <= bounds[i])
			heap_pop(heap, &nh, b->in);
		best = nh ? b->in[heap[0]].func : INL_NONE;
		if (u->n && u->func[u->n - 1] == best)
			continue;
		u->lo[u->n] = bounds[i];
		u->func[u->n++] = best;
	}
	u->end = nu ? bounds[nu - 1] : 0;
	u->funcs = b->funcs;
	u->nfuncs = b->nfuncs;
	b->funcs = NULL;
	u->bytes = sizeof(*u) + u->n * (sizeof(*u->lo) + sizeof(*u->func)) +
		   u->nfuncs * sizeof(*u->funcs);
	free(bounds);
	free(heap);
	return u;
fail:
	cu_free(u);
	free(bounds);
	free(heap);
	return NULL;
}

/* Drop the least recently used units of this file while the cache is
 * over its budget (under f->lock; other files keep theirs). */
static void trim(pd_inl *f, size_t want)
{
	for (;;) {
		size_t i, lru = SIZE_MAX;
		int over;

		pthread_mutex_lock(&f->cache->lock);
		over = f->cache->bytes + want > f->cache->max_bytes;
		pthread_mutex_unlock(&f->cache->lock);
		if (!over)
			return;
		for (i = 0; i < f->ncus; i++)
			if (f->cus[i] && (lru == SIZE_MAX || f->cus[i]->used < f->cus[lru]->used))
				lru = i;
		if (lru == SIZE_MAX)
			return;
		account(f, -(long long)f->cus[lru]->bytes);
		cu_free(f->cus[lru]);
		f->cus[lru] = NULL;
	}
}

static inl_cu *build_cu(pd_inl *f, uint32_t cu)
{
	builder b = { .f = f };
	Dwarf_Die die;
	inl_cu *u = NULL;

	if (dwarf_offdie(f->dw, f->cu_off[cu], &die)) {
		b.plain_names = names_are_symbols(dwarf_srclang(&die));
		walk(&b, &die, INL_NONE, 0);
		if (!b.failed)
			u = flatten(&b);
	}
	free(b.funcs);
	free(b.in);
	if (!u)
		return NULL;
	trim(f, u->bytes);
	account(f, (long long)u->bytes);
	f->cus[cu] = u;
	return u;
}

/* ---- lookup --------------------------------------------------------- */

void pd_inl_prepare(pd_inl *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	if (!f->opened)
		open_dwarf(f);
	pthread_mutex_unlock(&f->lock);
}

size_t pd_inl_lookup(pd_inl *f, uint64_t addr, const char **names, size_t max,
		     pd_inl_naming *how)
{
	size_t n = 0, lo, hi;
	uint32_t cu, fn;
	inl_cu *u;

	*how = (pd_inl_naming){ .func = UINT64_MAX, .low = UINT64_MAX };
	if (!f || !max)
		return 0;
	pthread_mutex_lock(&f->lock);
	if (!f->opened)
		open_dwarf(f);
	if (!f->dw || !f->cus || (cu = cu_of(f, addr)) == INL_NONE)
		goto out;
	u = f->cus[cu] ? f->cus[cu] : build_cu(f, cu);
	if (!u || !u->n || addr >= u->end)
		goto out;
	u->used = ++f->clock;
	for (lo = 0, hi = u->n; lo < hi;) {	/* the last span starting <= addr */
		size_t mid = lo + (hi - lo) / 2;

		if (u->lo[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		goto out;
	fn = u->func[lo - 1];
	if (fn != INL_NONE && u->funcs[fn].by_symbol)
		*how = (pd_inl_naming){ .func = (uint64_t)cu << 32 | fn, .low = u->funcs[fn].low };
	for (; fn != INL_NONE && n < max && n < INL_MAX_CHAIN; fn = u->funcs[fn].caller)
		if (u->funcs[fn].name != INL_NONE)
			names[n++] = f->names[u->funcs[fn].name];
out:
	pthread_mutex_unlock(&f->lock);
	return n;
}

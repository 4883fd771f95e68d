/*
 * store.c - the store's facade: picks the persistence backend from --db
 * once, and hands profiles, jobs, the debuginfo index and retention's
 * questions to it. Answers are in store-query.c, writing a parse in
 * store-writer.c.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "store/store-int.h"

/* The backend --db names: a libpq URI selects PostgreSQL, anything else is
 * an SQLite file. */
static const st_persist_ops *backend_of(const char *where, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	return st_is_uri(where) ? &st_pg_ops : &st_sqlite_ops;
}

int st_is_uri(const char *where)
{
	return !strncmp(where, "postgresql://", 13) || !strncmp(where, "postgres://", 11);
}

const char *st_display(const char *where, char *out, size_t outlen)
{
	const char *auth, *at, *colon, *query;
	size_t len = strlen(where);

	snprintf(out, outlen, "%s", where);
	if (!st_is_uri(where))
		return out;
	auth = strstr(where, "://") + 3;
	query = strchr(auth, '?');
	at = memchr(auth, '@', (size_t)((query ? query : where + len) - auth));
	colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
	/* a password among the parameters: they all go */
	if (query && strstr(query, "password"))
		len = (size_t)(query - where);
	if (colon)
		snprintf(out, outlen, "%.*s***%.*s", (int)(colon + 1 - where), where,
			 (int)(where + len - at), at);
	else
		snprintf(out, outlen, "%.*s", (int)len, where);
	return out;
}

st_store *st_open(const char *where, char *err, size_t errlen)
{
	st_options o = { 0 };

	return st_open_with(where, &o, err, errlen);
}

st_store *st_open_with(const char *where, const st_options *opt, char *err, size_t errlen)
{
	st_store *st;
	const st_persist_ops *ops = backend_of(where, err, errlen);
	st_options o = *opt;

	if (!ops)
		return NULL;
	if (!o.job_lease_s)
		o.job_lease_s = ST_JOB_LEASE_S;
	if (!(st = calloc(1, sizeof(*st))) || !(st->cache = pe_cache_new(ST_CACHE_BYTES))) {
		free(st);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	st->ops = ops;
	pthread_mutex_init(&st->finish_lock, NULL);
	pthread_cond_init(&st->finished, NULL);
	pthread_rwlock_init(&st->hook_lock, NULL);
	atomic_init(&st->backfilling, 0);
	atomic_init(&st->backfill_done, 0);
	atomic_init(&st->backfill_below, 0);
	atomic_init(&st->backfill_made, 0);
	if (!(st->p = ops->open(where, &o, err, errlen))) {
		st_close(st);
		return NULL;
	}
	return st;
}

void st_close(st_store *st)
{
	if (!st)
		return;
	if (st->p)
		st->ops->close(st->p);
	pe_cache_free(st->cache);
	pthread_cond_destroy(&st->finished);
	pthread_mutex_destroy(&st->finish_lock);
	pthread_rwlock_destroy(&st->hook_lock);
	free(st);
}

void st_set_prepare_hook(st_store *st, const st_prepare_hook *h)
{
	pthread_rwlock_wrlock(&st->hook_lock);
	if (h)
		st->hook = *h;
	else
		memset(&st->hook, 0, sizeof(st->hook));
	pthread_rwlock_unlock(&st->hook_lock);
}

int st_ping(st_store *st)
{
	return st->ops->ping(st->p);
}

int st_shared(const st_store *st)
{
	return st->ops->job_lost != NULL;
}

static const char *const status_names[] = { "queued", "parsing", "ready", "failed" };

const char *st_status_name(int status)
{
	return status >= 0 && status < 4 ? status_names[status] : "unknown";
}

int st_status_parse(const char *name)
{
	int i;

	for (i = 0; i < 4; i++)
		if (!strcmp(name, status_names[i]))
			return i;
	return -1;
}

/* ---- profiles and their jobs -------------------------------------------------- */

int st_profile_add(st_store *st, const st_new_profile *p, int64_t *id, int *existed)
{
	return st->ops->profile_add(st->p, p, id, existed);
}

int st_profile_by_sha(st_store *st, const char *sha256, int64_t *id)
{
	return st->ops->profile_by_sha(st->p, sha256, id);
}

int st_profile_local(st_store *st, int64_t id)
{
	return st->ops->profile_local(st->p, id);
}

int st_profile_claim_next(st_store *st, int64_t *id, char **spool_path, char **kind)
{
	return st->ops->profile_claim_next(st->p, id, spool_path, kind);
}

int st_profile_fail(st_store *st, int64_t id, const char *msg, int64_t offset, int64_t parse_ms)
{
	return st->ops->profile_fail(st->p, id, msg, offset, parse_ms);
}

int st_profile_requeue(st_store *st, int64_t id)
{
	return st->ops->profile_requeue(st->p, id);
}

int st_requeue_parsing(st_store *st, int *count)
{
	return st->ops->requeue_parsing(st->p, count);
}

void st_set_wakeup(st_store *st, void (*fn)(void *ctx), void *ctx)
{
	if (st->ops->set_wakeup)
		st->ops->set_wakeup(st->p, fn, ctx);
}

void st_set_debuginfo_hook(st_store *st, void (*fn)(void *ctx, const char *build_id),
			   void *ctx)
{
	if (st->ops->set_debuginfo_hook)
		st->ops->set_debuginfo_hook(st->p, fn, ctx);
}

int st_announce_debuginfo(st_store *st, const char *build_id)
{
	return st->ops->announce_debuginfo ? st->ops->announce_debuginfo(st->p, build_id) : 0;
}

int st_job_lost(st_store *st, int64_t id)
{
	return st->ops->job_lost ? st->ops->job_lost(st->p, id) : 0;
}

int st_singleton_begin(st_store *st, const char *name, int wait)
{
	return st->ops->singleton_begin ? st->ops->singleton_begin(st->p, name, wait) : 1;
}

void st_singleton_end(st_store *st, const char *name)
{
	if (st->ops->singleton_end)
		st->ops->singleton_end(st->p, name);
}

int st_profile_delete(st_store *st, int64_t id, char **spool_path)
{
	return st->ops->profile_delete(st->p, id, spool_path);
}

int st_profile_resymbolize(st_store *st, int64_t id)
{
	return st->ops->profile_resymbolize(st->p, id);
}

int st_profile_file(st_store *st, int64_t id, char **spool_path, char **kind, char **name)
{
	return st->ops->profile_file(st->p, id, spool_path, kind, name);
}

int st_profile_update(st_store *st, int64_t id, const st_profile_patch *patch)
{
	return st->ops->profile_update(st->p, id, patch);
}

json_t *st_profile_json(st_store *st, int64_t id, int *notfound)
{
	return st->ops->profile_json(st->p, id, notfound);
}

json_t *st_profile_list_json(st_store *st, const st_list_filter *f)
{
	/* a selector is matched above the seam */
	if (f->sel)
		return st_list_selected(st, f);
	return st->ops->profile_list_json(st->p, f);
}

int st_counts_get(st_store *st, st_counts *c)
{
	int rc;

	memset(c, 0, sizeof(*c));
	rc = st->ops->counts(st->p, c);
	c->models_memory = atomic_load(&st->models_memory);
	c->models_loaded = atomic_load(&st->models_loaded);
	return rc;
}

/* ---- debuginfo index ------------------------------------------------------------ */

int st_debuginfo_init(st_store *st)
{
	return st->ops->debuginfo_init(st->p);
}

int st_debuginfo_put(st_store *st, const char *build_id, const char *kind, const char *path,
		     uint64_t size, int symbols, const char *source)
{
	return st->ops->debuginfo_put(st->p, build_id, kind, path, size, symbols, source);
}

int st_debuginfo_get(st_store *st, const char *build_id, char **path, char **kind,
		     uint64_t *size)
{
	return st->ops->debuginfo_get(st->p, build_id, path, kind, size);
}

int st_debuginfo_has_symbols(st_store *st, const char *build_id)
{
	return st->ops->debuginfo_has_symbols(st->p, build_id);
}

int st_debuginfo_added_since(st_store *st, const char *build_id, int64_t since)
{
	return st->ops->debuginfo_added_since(st->p, build_id, since);
}

int st_debuginfo_delete(st_store *st, const char *build_id)
{
	return st->ops->debuginfo_delete(st->p, build_id);
}

int st_debuginfo_orphan(st_store *st, int64_t before, char hex[41])
{
	return st->ops->debuginfo_orphan(st->p, before, hex);
}

int st_profile_dsos_set(st_store *st, int64_t id, size_t n, const char *const *build_ids,
			const char *const *paths, const uint64_t *unresolved)
{
	return st->ops->profile_dsos_set(st->p, id, n, build_ids, paths, unresolved);
}

int st_profiles_unresolved_in(st_store *st, const char *build_id, int64_t **ids, size_t *n)
{
	return st->ops->profiles_unresolved_in(st->p, build_id, ids, n);
}

/* ---- retention and the operator's tools --------------------------------------------- */

int st_used_bytes(st_store *st, int64_t *bytes)
{
	return st->ops->used_bytes(st->p, bytes);
}

int st_expired(st_store *st, int64_t before, int64_t *ids, size_t max, size_t *n)
{
	return st->ops->expired(st->p, before, ids, max, n);
}

int st_oldest_prunable(st_store *st, int64_t *id)
{
	return st->ops->oldest_prunable(st->p, id);
}

int st_backup(const char *where, const char *dest, char *err, size_t errlen)
{
	const st_persist_ops *ops = backend_of(where, err, errlen);

	if (ops && !ops->backup)
		snprintf(err, errlen, "the %s store has no --backup; use its own tools", ops->name);
	return ops && ops->backup ? ops->backup(where, dest, err, errlen) : -1;
}

int st_copy_to(const char *from, const char *to, st_relocate_fn relocate, void *ctx,
	       st_copy_stats *stats, char *err, size_t errlen)
{
	st_store *src;

	if (st_is_uri(from) || !st_is_uri(to)) {
		snprintf(err, errlen, "--copy-to copies an SQLite store (--db FILE) into a"
			 " postgresql:// one");
		return -1;
	}
	/* the source at this perfhubd's schema first (a migration if older) */
	if (!(src = st_open(from, err, errlen)))
		return -1;
	st_debuginfo_init(src);
	st_close(src);
	return pg_copy_from_sqlite(from, to, relocate, ctx, stats, err, errlen);
}

int st_vacuum(const char *where, int64_t *before, int64_t *after, char *err, size_t errlen)
{
	const st_persist_ops *ops = backend_of(where, err, errlen);

	if (ops && !ops->vacuum)
		snprintf(err, errlen, "the %s store has no --vacuum; use its own tools", ops->name);
	return ops && ops->vacuum ? ops->vacuum(where, before, after, err, errlen) : -1;
}

/* pgdebuginfo.c - the PostgreSQL backend's index of debuginfo files by build-id, and what each profile left unresolved. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/pg/pg.h"

int pg_debuginfo_init(st_persist *p)
{
	(void)p;	/* the tables are in the schema (pgschema.c) */
	return 0;
}

typedef struct dbg_ctx {
	const char *build_id, *kind, *path, *source;
	uint64_t size;
	int symbols;
	int64_t since;
	/* answers */
	char *out_path, *out_kind;
	int found;
} dbg_ctx;

static int put_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	dbg_ctx *x = ctx;
	struct timespec ts;
	pg_params pp;
	int rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	pgp_init(&pp);
	pgp_text(&pp, x->build_id);
	pgp_text(&pp, x->kind);
	pgp_text(&pp, x->path);
	pgp_i64(&pp, (int64_t)x->size);
	pgp_i64(&pp, x->symbols != 0);
	pgp_text(&pp, x->source);
	/* milliseconds of this node's clock, as the SQLite store keeps them:
	 * a parse compares them with its own start */
	pgp_i64(&pp, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	rc = pg_cmd(conn, "indexing debuginfo", "INSERT INTO debuginfo (build_id, kind, path, size,"
		    " symbols, source, added_at) VALUES ($1, $2, $3, $4, $5, $6, $7)"
		    " ON CONFLICT (build_id, kind) DO UPDATE SET path = excluded.path,"
		    " size = excluded.size, symbols = excluded.symbols, source = excluded.source,"
		    " added_at = excluded.added_at", &pp, NULL, err, errlen);
	pgp_free(&pp);
	return rc;
}

int pg_debuginfo_put(st_persist *p, const char *build_id, const char *kind, const char *path,
		     uint64_t size, int symbols, const char *source)
{
	dbg_ctx x = { .build_id = build_id, .kind = kind, .path = path, .source = source,
		      .size = size, .symbols = symbols };

	return pg_txn(p, "indexing debuginfo", put_body, &x);
}

static int get_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	dbg_ctx *x = ctx;
	pg_params pp;
	PGresult *r;
	int rc;

	free(x->out_path);
	free(x->out_kind);
	x->out_path = x->out_kind = NULL;
	pgp_init(&pp);
	pgp_text(&pp, x->build_id);
	/* symbols first; of two with symbols the binary (it also has .plt) */
	rc = pg_exec(conn, "looking up debuginfo", "SELECT path, kind, size FROM debuginfo"
		     " WHERE build_id = $1 ORDER BY symbols DESC, kind = 'elf' DESC LIMIT 1", &pp, 0,
		     PGRES_TUPLES_OK, &r, err, errlen);
	pgp_free(&pp);
	if (rc < 0)
		return -1;
	x->found = PQntuples(r) == 1;
	if (x->found) {
		x->out_path = pg_strdup(r, 0, 0);
		x->out_kind = pg_strdup(r, 0, 1);
		x->size = (uint64_t)pg_i64(r, 0, 2);
		if (!x->out_path || !x->out_kind)
			rc = -1;
	}
	PQclear(r);
	return rc;
}

int pg_debuginfo_get(st_persist *p, const char *build_id, char **path, char **kind,
		     uint64_t *size)
{
	dbg_ctx x = { .build_id = build_id };

	if (pg_txn(p, "looking up debuginfo", get_body, &x) < 0) {
		free(x.out_path);
		free(x.out_kind);
		return -1;
	}
	if (!x.found)
		return 1;
	*path = x.out_path;
	*kind = x.out_kind;
	*size = x.size;
	return 0;
}

static int has_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	dbg_ctx *x = ctx;
	pg_params pp;
	long n = 0;
	int rc;

	pgp_init(&pp);
	pgp_text(&pp, x->build_id);
	if (x->since >= 0) {
		pgp_i64(&pp, x->since);
		rc = pg_cmd(conn, "looking up debuginfo", "SELECT 1 FROM debuginfo WHERE build_id = $1"
			    " AND symbols = 1 AND added_at >= $2 AND source <> 'debuginfod' LIMIT 1",
			    &pp, &n, err, errlen);
	} else {
		rc = pg_cmd(conn, "looking up debuginfo", "SELECT 1 FROM debuginfo WHERE build_id = $1"
			    " AND symbols = 1 LIMIT 1", &pp, &n, err, errlen);
	}
	pgp_free(&pp);
	x->found = n > 0;
	return rc;
}

int pg_debuginfo_has_symbols(st_persist *p, const char *build_id)
{
	dbg_ctx x = { .build_id = build_id, .since = -1 };

	if (pg_txn(p, "looking up debuginfo", has_body, &x) < 0)
		return -1;
	return x.found;
}

int pg_debuginfo_added_since(st_persist *p, const char *build_id, int64_t since)
{
	dbg_ctx x = { .build_id = build_id, .since = since < 0 ? 0 : since };

	if (pg_txn(p, "looking up debuginfo", has_body, &x) < 0)
		return -1;
	return x.found;
}

typedef struct dsos_ctx {
	int64_t id;
	size_t n;
	const char *const *build_ids, *const *paths;
	const uint64_t *unresolved;
	int64_t *ids;
	size_t nr_ids;
} dsos_ctx;

static int dsos_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	dsos_ctx *x = ctx;
	pg_params pp;
	size_t i;
	int rc;

	pgp_init(&pp);
	pgp_i64(&pp, x->id);
	rc = pg_cmd(conn, "noting unresolved dsos", "DELETE FROM profile_dsos WHERE profile_id = $1",
		    &pp, NULL, err, errlen);
	for (i = 0; i < x->n && rc == 0; i++) {
		pgp_free(&pp);
		pgp_i64(&pp, x->id);
		pgp_text(&pp, x->build_ids[i]);
		pgp_text(&pp, x->paths[i]);
		pgp_i64(&pp, (int64_t)x->unresolved[i]);
		rc = pg_cmd(conn, "noting unresolved dsos", "INSERT INTO profile_dsos (profile_id,"
			    " build_id, path, unresolved) VALUES ($1, $2, $3, $4)"
			    " ON CONFLICT (profile_id, build_id, path) DO UPDATE"
			    " SET unresolved = excluded.unresolved", &pp, NULL, err, errlen);
	}
	pgp_free(&pp);
	return rc;
}

int pg_profile_dsos_set(st_persist *p, int64_t id, size_t n, const char *const *build_ids,
			const char *const *paths, const uint64_t *unresolved)
{
	dsos_ctx x = { id, n, build_ids, paths, unresolved, NULL, 0 };

	return pg_txn(p, "noting unresolved dsos", dsos_body, &x);
}

static int unresolved_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	dsos_ctx *x = ctx;
	pg_params pp;
	PGresult *r;
	int i, rc;

	free(x->ids);
	x->ids = NULL;
	x->nr_ids = 0;
	pgp_init(&pp);
	pgp_text(&pp, x->build_ids[0]);
	rc = pg_exec(conn, "profiles to re-symbolize", "SELECT DISTINCT d.profile_id FROM"
		     " profile_dsos d JOIN profiles p ON p.id = d.profile_id WHERE d.build_id = $1"
		     " AND d.unresolved > 0 AND p.status = 2 ORDER BY d.profile_id", &pp, 0,
		     PGRES_TUPLES_OK, &r, err, errlen);
	pgp_free(&pp);
	if (rc < 0)
		return -1;
	if (PQntuples(r) && !(x->ids = calloc((size_t)PQntuples(r), sizeof(*x->ids))))
		rc = -1;
	for (i = 0; rc == 0 && i < PQntuples(r); i++)
		x->ids[x->nr_ids++] = pg_i64(r, i, 0);
	PQclear(r);
	return rc;
}

int pg_profiles_unresolved_in(st_persist *p, const char *build_id, int64_t **ids, size_t *n)
{
	const char *bid[1] = { build_id };
	dsos_ctx x = { .build_ids = bid };

	*ids = NULL;
	*n = 0;
	if (pg_txn(p, "profiles to re-symbolize", unresolved_body, &x) < 0) {
		free(x.ids);
		return -1;
	}
	*ids = x.ids;
	*n = x.nr_ids;
	return 0;
}

typedef struct dso_ctx {
	int64_t id;
	const char *path;
	char *hex;
	size_t hexlen;
	int found;
} dso_ctx;

static int dso_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	dso_ctx *x = ctx;
	pg_params pp;
	PGresult *r;
	int rc;

	pgp_init(&pp);
	pgp_i64(&pp, x->id);
	pgp_text(&pp, x->path);
	rc = pg_exec(conn, "a dso's build-id", "SELECT build_id FROM profile_dsos"
		     " WHERE profile_id = $1 AND path = $2 ORDER BY build_id LIMIT 1", &pp, 0,
		     PGRES_TUPLES_OK, &r, err, errlen);
	pgp_free(&pp);
	if (rc < 0)
		return -1;
	x->found = PQntuples(r) == 1;
	if (x->found)
		snprintf(x->hex, x->hexlen, "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
	return 0;
}

int pg_profile_dso_build_id(st_persist *p, int64_t id, const char *path, char *hex,
			    size_t hexlen)
{
	dso_ctx x = { id, path, hex, hexlen, 0 };

	if (pg_txn(p, "a dso's build-id", dso_body, &x) < 0)
		return -1;
	return x.found ? 0 : 1;
}

typedef struct del_ctx {
	const char *build_id;
	int64_t before;
	char hex[41];
	int rc;
} del_ctx;

static int delete_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	del_ctx *x = ctx;
	pg_params pp;
	long changed = 0;
	int rc;

	pgp_init(&pp);
	pgp_text(&pp, x->build_id);
	rc = pg_cmd(conn, "deleting debuginfo", "DELETE FROM debuginfo WHERE build_id = $1", &pp,
		    &changed, err, errlen);
	pgp_free(&pp);
	x->rc = changed ? 0 : 1;
	return rc;
}

int pg_debuginfo_delete(st_persist *p, const char *build_id)
{
	del_ctx x = { .build_id = build_id };

	if (pg_txn(p, "deleting debuginfo", delete_body, &x) < 0)
		return -1;
	return x.rc;
}

static int orphan_body(PGconn *conn, void *ctx, char *err, size_t errlen)
{
	del_ctx *x = ctx;
	pg_params pp;
	PGresult *r;
	int rc;

	pgp_init(&pp);
	pgp_i64(&pp, x->before);
	/* profile_dsos keeps rows of deleted profiles: only live ones count */
	rc = pg_exec(conn, "debuginfo no profile names", "SELECT d.build_id FROM debuginfo d"
		     " WHERE d.added_at < $1 AND NOT EXISTS (SELECT 1 FROM profile_dsos u"
		     " JOIN profiles p ON p.id = u.profile_id WHERE u.build_id = d.build_id)"
		     " ORDER BY d.added_at LIMIT 1", &pp, 0, PGRES_TUPLES_OK, &r, err, errlen);
	pgp_free(&pp);
	if (rc < 0)
		return -1;
	x->rc = 1;
	if (PQntuples(r) == 1) {
		snprintf(x->hex, sizeof(x->hex), "%s", PQgetvalue(r, 0, 0));
		x->rc = 0;
	}
	PQclear(r);
	return 0;
}

int pg_debuginfo_orphan(st_persist *p, int64_t before, char hex[41])
{
	del_ctx x = { .before = before };

	if (pg_txn(p, "debuginfo no profile names", orphan_body, &x) < 0)
		return -1;
	if (x.rc == 0)
		memcpy(hex, x.hex, sizeof(x.hex));
	return x.rc;
}

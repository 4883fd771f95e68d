/*
 * read.c - the SQLite backend's read snapshots: a read transaction on a
 * pooled connection, opened on a profile that has a complete parse (ready,
 * or being parsed again: the earlier parse is served until the new one
 * replaces it), in which its model and its sample blocks are read, so both
 * belong to the same parse.
 */
#include "config.h"

#include <stdlib.h>

#include "log.h"
#include "store/sqlite/db.h"

struct st_persist_read {
	st_persist *p;
	sqlite3 *db;
	int64_t id;		/* the rows' key: the profile's data_id */
	int64_t profile;	/* the profile's id (profile_dsos is by profile) */
};

int sq_read_begin(st_persist *p, int64_t id, int64_t *gen, st_persist_read **rd)
{
	sqlite3 *db = sq_conn_get(p);
	sqlite3_stmt *s;
	int64_t key = 0;
	int rc = 1;

	*rd = NULL;
	if (!db)
		return -1;
	if (sq_exec(db, "BEGIN") < 0) {
		sq_conn_put(p, db);
		return -1;
	}
	s = sq_prep(db, "SELECT data_id, generation FROM profiles WHERE id = ?");
	if (!s) {
		rc = -1;
	} else {
		sqlite3_bind_int64(s, 1, id);
		if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) {
			key = sqlite3_column_int64(s, 0);
			*gen = sqlite3_column_int64(s, 1);
			rc = 0;
		}
	}
	sqlite3_finalize(s);
	if (rc == 0 && !(*rd = malloc(sizeof(**rd))))
		rc = -1;
	if (rc) {
		sq_exec(db, "COMMIT");
		sq_conn_put(p, db);
		return rc;
	}
	(*rd)->p = p;
	(*rd)->db = db;
	(*rd)->id = key;
	(*rd)->profile = id;
	return 0;
}

void sq_read_end(st_persist_read *rd)
{
	if (!rd)
		return;
	sq_exec(rd->db, "COMMIT");
	sq_conn_put(rd->p, rd->db);
	free(rd);
}

enum { L_STRING, L_FRAME, L_STACK, L_EVENT };

/* One table of the model: "SELECT id, ... FROM t WHERE profile_id = ?". */
static int load(sqlite3 *db, const char *sql, int64_t id, int what, pe_model *m)
{
	sqlite3_stmt *s = sq_prep(db, sql);
	int r, rc = 0;

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	while (rc == 0 && (r = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t k = sqlite3_column_int64(s, 0);
		uint32_t a = (uint32_t)sqlite3_column_int64(s, 1);
		uint32_t b = (uint32_t)sqlite3_column_int64(s, 2);
		uint32_t c = (uint32_t)sqlite3_column_int64(s, 3);

		if (k < 0 || k >= (int64_t)PE_MAX_NODES)
			continue;
		switch (what) {
		case L_STRING:
			rc = pe_model_add_string(m, (uint32_t)k,
						 (const char *)sqlite3_column_text(s, 1));
			break;
		case L_FRAME:
			rc = pe_model_add_frame(m, (uint32_t)k, a, c, (int)b);
			break;
		case L_STACK:
			rc = pe_model_add_stack(m, (uint32_t)k, a, b);
			break;
		default:
			rc = pe_model_add_event(m, (uint32_t)k,
						(const char *)sqlite3_column_text(s, 1));
			break;
		}
	}
	sqlite3_finalize(s);
	return rc;
}

/* The build-ids of the profile's DSOs (by the string id of their paths,
 * among the model's strings, loaded before: a join on the strings' text
 * in SQL scans them once per DSO): what the parse noted in profile_dsos,
 * from the recording's build-id section, its build-id records and its
 * MMAP2 records. That table comes with the debuginfo index
 * (st_debuginfo_init): a store without it has none to give. */
static int load_build_ids(sqlite3 *db, int64_t profile, pe_model *m)
{
	sqlite3_stmt *s = NULL;
	int rc = 0;

	if (sqlite3_prepare_v2(db, "SELECT path, build_id FROM profile_dsos WHERE profile_id = ?",
			       -1, &s, NULL) != SQLITE_OK) {
		sqlite3_finalize(s);
		return 0;
	}
	sqlite3_bind_int64(s, 1, profile);
	while (rc == 0 && sqlite3_step(s) == SQLITE_ROW) {
		const char *path = (const char *)sqlite3_column_text(s, 0);
		uint32_t k = path ? pe_model_string_id(m, path) : 0;
		if (k)
			rc = pe_model_add_build_id(m, k, (const char *)sqlite3_column_text(s, 1));
	}
	sqlite3_finalize(s);
	return rc;
}

int sq_read_model(st_persist_read *rd, pe_model *m)
{
	if (load(rd->db, "SELECT id, text FROM strings WHERE profile_id = ?", rd->id, L_STRING,
		 m) < 0 ||
	    load(rd->db, "SELECT id, name, kernel, coalesce(dso, 0) FROM frames"
		 " WHERE profile_id = ?", rd->id, L_FRAME, m) < 0 ||
	    load(rd->db, "SELECT id, parent, frame FROM stacks WHERE profile_id = ?", rd->id,
		 L_STACK, m) < 0 ||
	    load(rd->db, "SELECT idx, name FROM events WHERE profile_id = ?", rd->id, L_EVENT,
		 m) < 0 ||
	    load_build_ids(rd->db, rd->profile, m) < 0)
		return -1;
	return 0;
}

/* The end of a loop handing rows to a callback: the callback's stop (rc),
 * or a step that failed (r), logged; s is finalized. */
static int steps_end(st_persist_read *rd, sqlite3_stmt *s, int r, int rc)
{
	if (!rc && r != SQLITE_DONE) {
		log_warn("msg=\"sqlite read\" profile=%lld error=\"%s\"", (long long)rd->id,
			 sqlite3_errmsg(rd->db));
		rc = -1;
	}
	sqlite3_finalize(s);
	return rc;
}

int sq_read_blocks(st_persist_read *rd, uint64_t from_ns, uint64_t to_ns, pe_block_cb cb,
		   void *ctx)
{
	sqlite3_stmt *s = sq_prep(rd->db, "SELECT nr, data FROM sample_blocks WHERE profile_id = ?1"
					  " AND (?2 = 0 OR max_time >= ?2) AND (?3 = 0 OR min_time < ?3)"
					  " ORDER BY seq");
	int r, rc = 0;

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, rd->id);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)from_ns);
	sqlite3_bind_int64(s, 3, (sqlite3_int64)to_ns);
	while ((r = sqlite3_step(s)) == SQLITE_ROW) {
		rc = cb(ctx, sqlite3_column_int64(s, 0), sqlite3_column_blob(s, 1),
			(size_t)sqlite3_column_bytes(s, 1));
		if (rc)
			break;
	}
	return steps_end(rd, s, r, rc);
}

int sq_read_leaf_addrs(st_persist_read *rd, uint32_t frame, pe_leaf_cb cb, void *ctx)
{
	sqlite3_stmt *s = sq_prep(rd->db, "SELECT event, addr, samples, period, offcpu"
					  " FROM leaf_addrs WHERE profile_id = ? AND frame = ?");
	int r, rc = 0;

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, rd->id);
	sqlite3_bind_int64(s, 2, frame);
	while ((r = sqlite3_step(s)) == SQLITE_ROW) {
		pe_leaf_row l;

		l.frame = frame;
		l.event = (uint32_t)sqlite3_column_int64(s, 0);
		l.addr = (uint64_t)sqlite3_column_int64(s, 1);
		l.samples = (uint64_t)sqlite3_column_int64(s, 2);
		l.period = (uint64_t)sqlite3_column_int64(s, 3);
		l.offcpu = (uint64_t)sqlite3_column_int64(s, 4);
		if ((rc = cb(ctx, &l)) != 0)
			break;
	}
	return steps_end(rd, s, r, rc);
}

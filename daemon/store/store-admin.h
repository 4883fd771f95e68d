/*
 * store-admin.h - the operator's side of the SQLite store: what retention
 * needs to choose profiles, and the online backup and compaction behind
 * `perfhubd --backup` and `perfhubd --vacuum`. Each st_admin is a
 * connection of its own on the database file, so it can run next to a
 * serving perfhubd (WAL mode: readers never block the writer). Deleting a
 * profile stays st_profile_delete's job (store.h).
 */
#ifndef PERFHUB_DAEMON_STORE_ADMIN_H
#define PERFHUB_DAEMON_STORE_ADMIN_H

#include <stddef.h>
#include <stdint.h>

typedef struct st_admin st_admin;

/* Opens the existing database (never creates one). NULL and err on failure. */
st_admin *sta_open(const char *path, char *err, size_t errlen);
void sta_close(st_admin *a);

/* Bytes the data take: pages in use times the page size. Free pages left by
 * deleted profiles do not count (the file keeps them until --vacuum). */
int sta_used_bytes(st_admin *a, int64_t *bytes);

/* Up to `max` ready or failed profiles uploaded before `before` (unix
 * seconds), oldest first. OUT: ids, count. 0 or -1. */
int sta_expired(st_admin *a, int64_t before, int64_t *ids, size_t max, size_t *n);

/* The oldest ready or failed profile that is not the newest profile of all
 * (the last upload is never pruned for size). 0 and *id, 1 = none, -1. */
int sta_oldest_prunable(st_admin *a, int64_t *id);

/* Copies the database at `src` to `dest` with SQLite's online backup API,
 * as one consistent snapshot, while others may be writing. The copy is
 * written next to `dest` and renamed over it when complete. 0 or -1 (err). */
int sta_backup(const char *src, const char *dest, char *err, size_t errlen);

/* VACUUM (rewrites the file without its free pages), then truncates the
 * WAL. OUT: file sizes before and after. 0 or -1 (err). */
int sta_vacuum(const char *path, int64_t *before, int64_t *after, char *err, size_t errlen);

#endif

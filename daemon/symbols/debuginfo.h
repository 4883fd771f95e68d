/*
 * debuginfo.h - symbols for recordings made on other machines: a store of
 * ELF files (binaries, separate debug files) and kallsyms files keyed by
 * build-id, kept in the spool and indexed in the database.
 *
 * Layout: debuginfo/.build-id/xx/rest/{elf,debug,kallsyms} in the spool -
 * perf's build-id cache layout, which the parser reads first when
 * pd_sym_options.debuginfo_dir names it (spool_debuginfo_dir). The index
 * keeps each file's spool ref. A bucket's files come to this node when a
 * parse needs them (dbg_prepare, and the parser's fetch hook) or a client
 * asks for one. "elf" holds a file
 * with code (a binary, stripped or not), "debug" one whose code sections
 * are NOBITS (a separate .debug file), "kallsyms" a kernel's symbols.
 *
 * Optionally missing build-ids are fetched through libdebuginfod
 * (DEBUGINFOD_URLS or --debuginfod) from the parser's lookup, which runs in
 * worker threads only.
 */
#ifndef PERFHUB_DAEMON_DEBUGINFO_H
#define PERFHUB_DAEMON_DEBUGINFO_H

#include <stddef.h>
#include <stdint.h>

#include "intake/spool.h"
#include "store/store.h"
#include "symbols.h"

#define DBG_MAX_BUILD_ID 20		/* bytes; what perf.data records carry */
/* bytes: the shortest GNU build-id a linker makes (lld's --build-id=fast);
 * shorter keys name almost anything and are refused */
#define DBG_MIN_BUILD_ID 8
#define DBG_HEX_LEN (2 * DBG_MAX_BUILD_ID + 1)

typedef struct dbg_store dbg_store;

/* The debuginfo of spool `sp`, indexed in st. `debuginfod_urls` NULL or ""
 * = no debuginfod; `timeout_s` bounds one fetch. NULL on error (err). */
dbg_store *dbg_open(spool *sp, st_store *st, const char *debuginfod_urls, unsigned timeout_s,
		    char *err, size_t errlen);
void dbg_close(dbg_store *d);

/* The directory for pd_sym_options.debuginfo_dir. */
const char *dbg_dir(const dbg_store *d);
/* 1 when missing build-ids are fetched from debuginfod. */
int dbg_fetches(const dbg_store *d);
/* Before a parse: the stored files of the recording's build-ids onto this
 * node's disk (a bucket's; a directory spool has them already). */
void dbg_prepare(dbg_store *d, const pd_header *h);
/* Indexes the files debuginfod gave during a parse: the parse's own
 * transaction holds the database then, so they wait for this call (the
 * worker makes it once the profile is written). */
void dbg_flush_index(dbg_store *d);
/* The workers' symbol tables: dbg_delete forgets what was loaded from a
 * deleted file, and debuginfod (when configured) is the cache's last
 * resort. */
void dbg_attach(dbg_store *d, pd_symcache *cache);

/* "ABCD..." -> normalized lowercase hex of 16..40 even digits, and bytes.
 * 0, or -1 when it is not a build-id. */
int dbg_parse_build_id(const char *in, char hex[DBG_HEX_LEN], uint8_t *bytes, size_t *n);

enum dbg_result {
	DBG_STORED = 0,		/* new: 201 */
	DBG_EXISTS = 1,		/* that file was there already: 200 */
	DBG_ERR_IO = -1,
	DBG_ERR_NOT_ELF = -2,	/* neither ELF nor kallsyms: 400 */
	DBG_ERR_MISMATCH = -3,	/* its build-id note is not the key: 400 */
	DBG_ERR_NO_BUILD_ID = -4,
};

/*
 * Validates `src` and moves it into the store (rename when `move`, else a
 * copy). `key` is the build-id it must carry (NULL = whatever its note
 * says; a kallsyms file needs a key). `source` says where it came from
 * ("upload", "archive", "debuginfod"). OUT: hex of the stored build-id,
 * a message on error. enum dbg_result.
 */
int dbg_add_file(dbg_store *d, const char *src, int move, const char *key, const char *source,
		 char out_hex[DBG_HEX_LEN], char *msg, size_t msglen);

/* Every ELF and kallsyms file in a perf archive bundle (.tar.bz2, any
 * compression libarchive reads), each at most max_file bytes, all together
 * at most max_total bytes and SP_MAX_RATIO times the bundle's size (a
 * bundle that unpacks to more stops there: -1); `stored` (may be NULL) is
 * told each new build-id. OUT: how many files were stored (new) and found.
 * -1 when the archive is unreadable or too large (msg). */
int dbg_import_archive(dbg_store *d, const char *path, uint64_t max_file, uint64_t max_total,
		       void (*on_stored)(void *ctx, const char *hex), void *ctx,
		       unsigned *stored, unsigned *found, char *msg, size_t msglen);

/* Removes every stored file of a build-id (hex as dbg_parse_build_id gives
 * it) and its index rows; tables loaded from them are forgotten. OUT:
 * bytes freed (may be NULL). 0, 1 when none was stored, -1 on a storage
 * error. */
int dbg_delete(dbg_store *d, const char *hex, uint64_t *freed);

/* The file to serve for GET: the one with symbols first. 0, or 1 = none. */
int dbg_lookup(dbg_store *d, const char *hex, char *path, size_t pathlen, uint64_t *size);
/* 1 when the server has symbols for it (a file with .symtab, a debug file or
 * kallsyms), 0 when not, -1 on a storage error. */
int dbg_has_symbols(dbg_store *d, const char *hex);

/* The kallsyms file stored for a kernel build-id, or 1 = none. */
int dbg_kallsyms(dbg_store *d, const uint8_t *bid, size_t n, char *path, size_t pathlen);

#endif

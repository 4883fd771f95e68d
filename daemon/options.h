/* options.h - perfhubd's settings: one option table shared by flags and the config file. */
#ifndef PERFHUB_DAEMON_OPTIONS_H
#define PERFHUB_DAEMON_OPTIONS_H

#include <stdint.h>

#define CFG_MAX_WATCH 16

typedef struct cfg {
	char *listen_addr;	/* "127.0.0.1" */
	unsigned listen_port;	/* 8080 */
	char *db_path;		/* STATE/perfhub.db */
	char *spool_dir;	/* STATE/spool */
	char *watch[CFG_MAX_WATCH];
	unsigned nr_watch;
	int watch_remove;	/* delete watched originals once spooled */
	unsigned workers;	/* default: number of CPUs */
	unsigned queue_size;	/* bounded job queue; full answers 503 */
	char *web_root;
	char *token_file;
	uint64_t max_upload;	/* bytes, after decoding */
	unsigned max_connections;
	int debug;
	uint64_t max_debuginfo;	/* bytes of one debuginfo file */
	char *debuginfod;	/* URLs; NULL = $DEBUGINFOD_URLS */
} cfg;

/* Fills *c from defaults, then the config file (--config), then the flags.
 * Returns 0, 1 when --help was printed (exit 0), -1 on a bad option (message
 * printed on stderr). */
int cfg_load(cfg *c, int argc, char **argv);
void cfg_free(cfg *c);

#endif

/* log.h - one structured line per event on stderr (journald under systemd). */
#ifndef PERFHUB_DAEMON_LOG_H
#define PERFHUB_DAEMON_LOG_H

#include <stdarg.h>
#include <stddef.h>

enum log_level { LL_DEBUG, LL_INFO, LL_WARN, LL_ERROR };

/* Lines look like: "ts=... level=info msg=... key=value ...". The format
 * arguments after msg are the caller's "key=value" pairs. errno is kept.
 * When stderr is the journal ($JOURNAL_STREAM names it), each line starts
 * with its syslog priority, "<6>", and carries no timestamp (journald adds
 * its own). Lines below the level are dropped; the level may change at any
 * time (SIGHUP). */
void log_set_level(int level);
int log_get_level(void);
/* "debug", "info", "warn" (or "warning"), "error" -> enum log_level; -1. */
int log_level_parse(const char *name);
const char *log_level_name(int level);
/* Rechecks $JOURNAL_STREAM against stderr (done once on the first line). */
void log_detect_journal(void);

void log_set_debug(int on);	/* on: LL_DEBUG, off: LL_INFO */

/* Room for a quoted value of a log line (log_q). */
#define LOG_Q_MAX 1024
/* s made safe inside a "quoted" value: '\' and '"' get a backslash,
 * control characters and DEL become \xNN, so a value from outside (a tar
 * entry, an event name, a file name) cannot end the quotes and forge keys
 * or lines. Cut to fit buf (NULL s: ""). Returns buf. */
const char *log_q(char *buf, size_t n, const char *s);
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Logs (level=fatal) and exits with status 1. */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif

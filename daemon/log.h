/* log.h - one structured line per event on stderr (journald under systemd). */
#ifndef PERFHUB_DAEMON_LOG_H
#define PERFHUB_DAEMON_LOG_H

#include <stdarg.h>

/* Lines look like: "perfhubd level=info msg=... key=value ...". The format
 * arguments after msg are the caller's "key=value" pairs. errno is kept. */
void log_set_debug(int on);
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Logs and exits with status 1. */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif

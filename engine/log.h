/*
 * log.h - how the profile engine says that something went wrong (a zstd
 * error, a corrupt stored block, no memory for a name order): one line of
 * "key=value" pairs handed to a hook the program sets once - the daemon
 * sends it to its log, an offline tool may print it. Without a hook the
 * line goes to stderr. The engine depends on no program's logger.
 */
#ifndef PERFHUB_ENGINE_LOG_H
#define PERFHUB_ENGINE_LOG_H

/* Gets each line (no trailing newline); may be called from any thread. */
typedef void (*pe_log_fn)(const char *line);

/* Sets the hook (NULL: stderr). Call before other threads use the engine. */
void pe_log_set(pe_log_fn fn);
/* A warning: formatted into one line of at most PE_LOG_LINE bytes. */
void pe_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define PE_LOG_LINE 512

#endif

/* log.c - structured log lines on stderr. */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static atomic_int min_level = LL_INFO;
static atomic_int journal = -1;	/* -1: not yet looked at */

void log_set_level(int level)
{
	atomic_store(&min_level, level);
}

int log_get_level(void)
{
	return atomic_load(&min_level);
}

void log_set_debug(int on)
{
	log_set_level(on ? LL_DEBUG : LL_INFO);
}

int log_level_parse(const char *name)
{
	if (!name)
		return -1;
	if (!strcmp(name, "debug"))
		return LL_DEBUG;
	if (!strcmp(name, "info"))
		return LL_INFO;
	if (!strcmp(name, "warn") || !strcmp(name, "warning"))
		return LL_WARN;
	if (!strcmp(name, "error"))
		return LL_ERROR;
	return -1;
}

const char *log_level_name(int level)
{
	static const char *const names[] = { "debug", "info", "warn", "error" };

	return level >= LL_DEBUG && level <= LL_ERROR ? names[level] : "?";
}

const char *log_q(char *buf, size_t n, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (!n)
		return buf;
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[4];
		size_t k = 0;

		if (c == '\\' || c == '"') {
			esc[k++] = '\\';
			esc[k++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			esc[k++] = '\\';
			esc[k++] = 'x';
			esc[k++] = hex[c >> 4];
			esc[k++] = hex[c & 15];
		} else {
			esc[k++] = (char)c;
		}
		if (o + k >= n)
			break;
		memcpy(buf + o, esc, k);
		o += k;
	}
	buf[o] = 0;
	return buf;
}

/* systemd sets JOURNAL_STREAM=DEV:INODE of the stream it connected to
 * stderr; it is only the journal if stderr is still that stream. */
void log_detect_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	int on = 0;

	if (js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0)
		on = (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
	atomic_store(&journal, on);
}

static void vlog(const char *level, int prio, const char *fmt, va_list ap)
{
	char line[2048];
	struct timespec ts;
	struct tm tm;
	int saved = errno;
	int n;

	if (atomic_load(&journal) < 0)
		log_detect_journal();
	if (atomic_load(&journal)) {
		n = snprintf(line, sizeof(line), "<%d>level=%s ", prio, level);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		n = snprintf(line, sizeof(line),
			     "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s ", tm.tm_year + 1900,
			     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			     ts.tv_nsec / 1000000, level);
	}
	if (n > 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	/* a newline inside a value would start a new journal entry */
	for (char *p = line; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	/* one write per line so lines from threads do not interleave */
	fprintf(stderr, "%s\n", line);
	errno = saved;
}

/* syslog priorities: debug 7, info 6, warning 4, err 3, crit 2 */
#define LOG_AT(fn, lvl, name, prio)					\
	void fn(const char *fmt, ...)					\
	{								\
		va_list ap;						\
		if (atomic_load(&min_level) > (lvl))			\
			return;						\
		va_start(ap, fmt);					\
		vlog(name, prio, fmt, ap);				\
		va_end(ap);						\
	}

LOG_AT(log_debug, LL_DEBUG, "debug", 7)
LOG_AT(log_info, LL_INFO, "info", 6)
LOG_AT(log_warn, LL_WARN, "warn", 4)
LOG_AT(log_error, LL_ERROR, "error", 3)

void fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("fatal", 2, fmt, ap);
	va_end(ap);
	exit(1);
}

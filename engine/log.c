/* log.c - the engine's warnings, through the program's hook. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "engine/log.h"

static pe_log_fn hook;

void pe_log_set(pe_log_fn fn)
{
	hook = fn;
}

void pe_warn(const char *fmt, ...)
{
	char line[PE_LOG_LINE];
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (hook)
		hook(line);
	else
		fprintf(stderr, "level=warn %s\n", line);
	errno = saved;
}

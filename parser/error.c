/* error.c - the parser's error values and their text. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "perfdata.h"
#include "perr.h"

static const char *const errcode_names[] = {
	[PD_OK] = "ok",
	[PD_ERR_IO] = "I/O error",
	[PD_ERR_MAGIC] = "not a perf.data file",
	[PD_ERR_TRUNCATED] = "truncated",
	[PD_ERR_BAD_SIZE] = "bad size",
	[PD_ERR_BAD_OFFSET] = "bad offset",
	[PD_ERR_BAD_RECORD] = "bad record",
	[PD_ERR_DECOMPRESS] = "decompression failed",
	[PD_ERR_LIMIT] = "limit exceeded",
	[PD_ERR_NOMEM] = "out of memory",
	[PD_ERR_USAGE] = "usage error",
};

const char *pd_errcode_name(int code)
{
	if (code < 0 || (size_t)code >= sizeof(errcode_names) / sizeof(errcode_names[0]) ||
	    !errcode_names[code])
		return "unknown error";
	return errcode_names[code];
}

const char *pd_strerror(const pd_error *err, char *buf, size_t len)
{
	if (!err || err->code == PD_OK) {
		snprintf(buf, len, "no error");
		return buf;
	}
	snprintf(buf, len, "offset %llu (0x%llx): %s: %s", (unsigned long long)err->offset,
		 (unsigned long long)err->offset, pd_errcode_name(err->code), err->msg);
	return buf;
}

void pd_set_error(pd_error *err, int code, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	err->code = code;
	err->offset = offset;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

/* perr.h - filling a pd_error (internal to libperfhub-parse). */
#ifndef PERFHUB_PERR_H
#define PERFHUB_PERR_H

#include <stdint.h>

#include "perfdata.h"

/* Sets err (if not NULL) to code at offset with a printf-style message. */
void pd_set_error(pd_error *err, int code, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif

/*
 * vdso.h - this process's vDSO as a file, for recordings that carry no
 * build-id of theirs.
 *
 * perf record -B, -z and pipe mode leave [vdso] without a build-id; perf
 * script then names its frames from its own vDSO, the running kernel's.
 * The symbolizer does the same when the recording's kernel release is the
 * running one (the rule perf's /proc/kallsyms follows): the image is
 * copied once into a memfd, whose /proc/self/fd path opens like a file.
 */
#ifndef PERFHUB_VDSO_H
#define PERFHUB_VDSO_H

#include <stdint.h>

/* The path of a file holding this process's vDSO and the length of its
 * [vdso] mapping; NULL when it has none or it cannot be copied. Thread
 * safe; the file lives as long as the process. */
const char *pd_own_vdso(uint64_t *len);

#endif

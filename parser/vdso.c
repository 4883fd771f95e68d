/* vdso.c - this process's vDSO as a file; see vdso.h. */
#include "config.h"

#include "vdso.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char path[64];
static uint64_t vdso_len;

/* The [vdso] line of /proc/self/maps: its range. */
static int find_vdso(uintptr_t *start, uintptr_t *end)
{
	FILE *fp = fopen("/proc/self/maps", "re");
	char line[512];
	int found = 0;

	if (!fp)
		return 0;
	while (!found && fgets(line, sizeof(line), fp)) {
		size_t n = strlen(line);

		while (n && (line[n - 1] == '\n' || line[n - 1] == ' '))
			line[--n] = 0;
		if (n >= 6 && !strcmp(line + n - 6, "[vdso]"))
			found = sscanf(line, "%" SCNxPTR "-%" SCNxPTR, start, end) == 2 && *end > *start;
	}
	fclose(fp);
	return found;
}

static void copy_vdso(void)
{
	uintptr_t start, end;
	int fd;

	if (!find_vdso(&start, &end))
		return;
	fd = memfd_create("perfhub-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return;
	/* the mapping is readable: it is this process's own code */
	if (write(fd, (const void *)start, end - start) != (ssize_t)(end - start)) {
		close(fd);
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	vdso_len = end - start;
}

const char *pd_own_vdso(uint64_t *len)
{
	pthread_once(&once, copy_vdso);
	*len = vdso_len;
	return vdso_len ? path : NULL;
}

/*
 * ksaved.c - perf's saved copy of the running kernel's symbol table: when
 * it still says what /proc/kallsyms would.
 */
#define _GNU_SOURCE
#include "ksaved.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define KS_NOTES_MAX 65536		/* /sys/kernel/notes is a few notes */
#define KS_HEAD_MAX (1024 * 1024)	/* _text comes after the per-cpu symbols */
#define KS_COPY_MAX ((size_t)256 << 20)	/* larger: not a kallsyms */
#define KS_MAX_MODULES 8192
#define KS_MODULE_NAME 64		/* MODULE_NAME_LEN */
#define KS_MODULE_LINE 65536		/* the dependency list may be long */
#define NT_GNU_BUILD_ID_TYPE 3

typedef struct ks_module {
	char name[KS_MODULE_NAME];
	uint64_t base, size;
	int seen;
} ks_module;

static int read_small(const char *path, unsigned char *buf, size_t cap, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	*len = 0;
	if (fd < 0)
		return -1;
	while (*len < cap && (r = read(fd, buf + *len, cap - *len)) > 0)
		*len += (size_t)r;
	close(fd);
	return 0;
}

/* The running kernel's GNU build-id note equals id[0..size). */
static int running_build_id_is(const char *notes, const uint8_t *id, size_t size)
{
	unsigned char *buf = malloc(KS_NOTES_MAX);
	size_t len, off = 0;
	int same = 0;

	if (!buf || read_small(notes, buf, KS_NOTES_MAX, &len) < 0) {
		free(buf);
		return 0;
	}
	while (off + 12 <= len) {
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off, next;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		desc_off = name_off + (((size_t)namesz + 3) & ~(size_t)3);
		next = desc_off + (((size_t)descsz + 3) & ~(size_t)3);
		if (namesz > len || descsz > len || next > len)
			break;
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 && !memcmp(buf + name_off, "GNU", 4)) {
			same = descsz == size && !memcmp(buf + desc_off, id, size);
			break;
		}
		off = next;
	}
	free(buf);
	return same;
}

/* An address as kallsyms writes it: 16 hex digits, then a blank. */
static int hex_addr(const char *p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = p;

	for (; p < end && *p != ' '; p++) {
		int c = *p, d = c >= '0' && c <= '9' ? c - '0' :
				 c >= 'a' && c <= 'f' ? c - 'a' + 10 :
				 c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0 || p - s >= 16)
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	if (p == s || p >= end)
		return -1;
	*out = v;
	return (int)(p - s);
}

/* The address of _text among the first KS_HEAD_MAX bytes of a kallsyms
 * file; 0 when not there (or hidden: kptr_restrict prints zeros). */
static uint64_t text_address(const char *path)
{
	FILE *fp = fopen(path, "re");
	char line[512];
	size_t seen = 0;
	uint64_t addr = 0;

	if (!fp)
		return 0;
	while (seen < KS_HEAD_MAX && fgets(line, sizeof(line), fp)) {
		size_t n = strlen(line);
		uint64_t a;
		int digits;

		seen += n;
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		digits = hex_addr(line, line + n, &a);
		if (digits > 0 && (size_t)digits + 3 < n && (line[digits + 1] == 'T' ||
		    line[digits + 1] == 't') && !strcmp(line + digits + 3, "_text")) {
			addr = a;
			break;
		}
	}
	fclose(fp);
	return addr;
}

/* /proc/modules: "name size refcount deps state address [taints]". No
 * file is no modules (a kernel built without them); -1: cannot compare. */
static int read_modules(const char *path, ks_module **out, size_t *n)
{
	FILE *fp = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0, nr = 0;
	ks_module *v = NULL;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!fp)
		return access(path, F_OK) == 0 ? -1 : 0;
	line = malloc(KS_MODULE_LINE);
	while (line && fgets(line, KS_MODULE_LINE, fp)) {
		ks_module m = { .seen = 0 };
		unsigned long long size, base;
		char name[KS_MODULE_NAME];

		if (sscanf(line, "%63s %llu %*s %*s %*s %llx", name, &size, &base) != 3 || !base ||
		    nr >= KS_MAX_MODULES) {
			rc = -1;	/* hidden addresses, or a line not understood */
			break;
		}
		if (nr == cap) {
			size_t c = cap ? cap * 2 : 64;
			ks_module *p = realloc(v, c * sizeof(*p));

			if (!p) {
				rc = -1;
				break;
			}
			v = p;
			cap = c;
		}
		memcpy(m.name, name, sizeof(name));
		m.base = base;
		m.size = size;
		v[nr++] = m;
	}
	if (!line)
		rc = -1;
	free(line);
	fclose(fp);
	if (rc < 0) {
		free(v);
		return -1;
	}
	*out = v;
	*n = nr;
	return 0;
}

static ks_module *find_module(ks_module *v, size_t n, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strlen(v[i].name) == len && !memcmp(v[i].name, name, len))
			return &v[i];
	return NULL;
}

/* One "ADDR TYPE NAME\t[MODULE]" line of the copy, [line, end): its
 * module is loaded and a text symbol lies inside it. */
static int module_line_holds(const char *line, const char *tab, const char *end,
			     ks_module *mods, size_t nmods, ks_module **last)
{
	const char *name = tab + 2, *close = memchr(name, ']', (size_t)(end - name));
	uint64_t addr;
	int digits = hex_addr(line, tab, &addr);
	size_t len;
	ks_module *m;
	char type;

	if (tab + 1 >= end || tab[1] != '[' || !close || digits < 0 || line + digits + 2 >= tab)
		return 0;
	len = (size_t)(close - name);
	if ((len == 3 && !memcmp(name, "bpf", 3)) || (len > 11 && !memcmp(name, "__builtin__", 11)))
		return 1;	/* pseudo-modules: see the header */
	m = *last && strlen((*last)->name) == len && !memcmp((*last)->name, name, len) ? *last :
		find_module(mods, nmods, name, len);
	if (!m)
		return 0;	/* unloaded since the copy was made */
	*last = m;
	m->seen = 1;
	type = line[digits + 1];
	if (type == 'T' || type == 't' || type == 'W' || type == 'w')
		return addr >= m->base && addr - m->base < m->size;
	return 1;
}

/* Every module of the copy is loaded where it was, and no other is. */
static int modules_match(const char *copy, const char *proc_modules)
{
	int fd = open(copy, O_RDONLY | O_CLOEXEC);
	ks_module *mods = NULL, *last = NULL;
	size_t nmods = 0, i;
	struct stat st;
	const char *buf, *p, *end;
	void *map = MAP_FAILED;
	int ok = 0;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (size_t)st.st_size > KS_COPY_MAX || read_modules(proc_modules, &mods, &nmods) < 0)
		goto out;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		goto out;
	buf = map;
	end = buf + st.st_size;
	/* only module lines have a tab: look for those, not at every line */
	for (p = buf; p < end && (p = memchr(p, '\t', (size_t)(end - p))); ) {
		const char *ls = p, *le = memchr(p, '\n', (size_t)(end - p));

		if (!le)
			le = end;
		while (ls > buf && ls[-1] != '\n')
			ls--;
		if (!module_line_holds(ls, p, le, mods, nmods, &last))
			goto out;
		p = le;
	}
	for (i = 0; i < nmods; i++)
		if (!mods[i].seen)
			goto out;	/* loaded since the copy was made */
	ok = 1;
out:
	if (map != MAP_FAILED)
		munmap(map, (size_t)st.st_size);
	free(mods);
	close(fd);
	return ok;
}

int pd_ksaved_matches(const char *copy, const uint8_t *id, size_t size,
		      const char *notes, const char *proc_kallsyms, const char *proc_modules)
{
	uint64_t text;

	if (!size || !running_build_id_is(notes, id, size))
		return 0;
	text = text_address(copy);
	return text && text == text_address(proc_kallsyms) && modules_match(copy, proc_modules);
}

char *pd_ksaved_copy(const char *buildid_dir, const uint8_t *id, size_t size)
{
	const char *home = getenv("HOME");
	char hex[2 * 64 + 1], *path = NULL;
	size_t i;

	if (!size || size > 64)
		return NULL;
	for (i = 0; i < size; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	if (asprintf(&path, "%s%s/[kernel.kallsyms]/%s/kallsyms",
		     buildid_dir ? buildid_dir : home && *home ? home : "/root",
		     buildid_dir ? "" : "/.debug", hex) < 0)
		return NULL;
	if (!pd_ksaved_matches(path, id, size, "/sys/kernel/notes", "/proc/kallsyms",
			       "/proc/modules")) {
		free(path);
		return NULL;
	}
	return path;
}

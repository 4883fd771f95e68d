/*
 * lib-annotate: lib/annotate.h on this very program (built with -g): a
 * function's instructions with their text and lines, samples added up on
 * the instruction that holds them, sums kept; kernel addresses read no
 * file; and damaged copies of the program (bytes flipped, cut short) never
 * crash it nor lose a sample. Source lines of a file, cut as promised.
 */
#include "config.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "annotate.h"
#include "check.h"

#define DAMAGED_COPIES 300

/* The file offset of symbol `name`'s code in ELF file `path`, and its size. */
static int code_offset(const char *path, const char *name, uint64_t *off, uint64_t *size)
{
	int fd = open(path, O_RDONLY), found = 0;
	Elf *e;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	elf_version(EV_CURRENT);
	if (fd < 0 || !(e = elf_begin(fd, ELF_C_READ, NULL)))
		return -1;
	while (!found && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !d)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n && !found; i++) {
			GElf_Sym s;
			const char *nm;
			size_t k, np;

			if (!gelf_getsym(d, (int)i, &s) || !(nm = elf_strptr(e, sh.sh_link, s.st_name)) ||
			    strcmp(nm, name))
				continue;
			elf_getphdrnum(e, &np);
			for (k = 0; k < np && !found; k++) {
				GElf_Phdr ph;
				if (gelf_getphdr(e, (int)k, &ph) && ph.p_type == PT_LOAD &&
				    s.st_value >= ph.p_vaddr && s.st_value - ph.p_vaddr < ph.p_filesz) {
					*off = s.st_value - ph.p_vaddr + ph.p_offset;
					*size = s.st_size;
					found = 1;
				}
			}
		}
	}
	elf_end(e);
	close(fd);
	return found ? 0 : -1;
}

/* A function with a loop, to be annotated. */
__attribute__((noinline)) unsigned long lib_annotate_target(unsigned long n);
__attribute__((noinline)) unsigned long lib_annotate_target(unsigned long n)
{
	unsigned long s = 0, i;

	for (i = 0; i < n; i++)
		s += i ^ (s >> 1);
	return s;
}

static uint64_t sum_insns(const an_result *r, uint64_t *value)
{
	uint64_t s = 0;
	size_t i;

	*value = 0;
	for (i = 0; i < r->nr_insns; i++) {
		s += r->insns[i].samples;
		*value += r->insns[i].value;
	}
	return s;
}

static void test_self(const char *exe, uint64_t off, uint64_t size)
{
	uint64_t addrs[3] = { off, off + size / 2, off + size - 1 };
	uint64_t samples[3] = { 5, 7, 1 }, values[3] = { 50, 70, 10 }, v, ls = 0;
	an_request rq = { exe, exe, 0, addrs, samples, values, 3 };
	an_result r;
	size_t i, texts = 0;

	CHECK(an_annotate(&rq, &r) == 0, "annotate");
	CHECK(r.mapped && r.symbol && !strcmp(r.symbol, "lib_annotate_target"), "symbol %s",
	      r.symbol ? r.symbol : "(none)");
	CHECK(r.end - r.start == size, "range %llu", (unsigned long long)(r.end - r.start));
	CHECK(sum_insns(&r, &v) == 13 && v == 130, "sums");
	for (i = 0; i < r.nr_insns; i++)
		texts += r.insns[i].text != NULL;
	CHECK(r.nr_insns > 3 && texts == r.nr_insns, "%zu instructions, %zu with text",
	      r.nr_insns, texts);
	CHECK(r.function_file >= 0 && strstr(r.files[r.function_file], "lib-annotate.c"),
	      "declared in this file");
	for (i = 0; i < r.nr_lines; i++)
		ls += r.lines[i].samples;
	CHECK(r.nr_lines >= 2 && ls == 13, "lines: %zu, %llu samples", r.nr_lines,
	      (unsigned long long)ls);
	CHECK(!r.problem[0], "no problem: %s", r.problem);
	an_result_free(&r);
	/* kernel: nothing is read, the addresses stay */
	rq.kernel = 1;
	CHECK(an_annotate(&rq, &r) == 0 && r.nr_insns == 3 && !r.insns[0].text && !r.nr_lines &&
	      sum_insns(&r, &v) == 13, "kernel addresses");
	an_result_free(&r);
	/* no file at all: offsets, no text */
	rq.kernel = 0;
	rq.code_path = rq.debug_path = "/nonexistent/binary";
	CHECK(an_annotate(&rq, &r) == 0 && !r.mapped && r.nr_insns == 3 && r.problem[0] &&
	      sum_insns(&r, &v) == 13, "no binary");
	an_result_free(&r);
}

static void test_damaged(const char *exe, uint64_t off, uint64_t size)
{
	char tmp[] = "/tmp/lib-annotate-XXXXXX";
	int fd = mkstemp(tmp);
	FILE *fp = fopen(exe, "rb");
	unsigned char *orig = NULL, *buf = NULL;
	long len = 0;
	uint64_t seed = 0x9e3779b97f4a7c15ULL, bad = 0;
	unsigned k;

	if (fd < 0 || !fp || fseek(fp, 0, SEEK_END) < 0 || (len = ftell(fp)) <= 0) {
		CHECK(0, "cannot copy %s", exe);
		goto out;
	}
	rewind(fp);
	orig = malloc((size_t)len);
	buf = malloc((size_t)len);
	if (!orig || !buf || fread(orig, 1, (size_t)len, fp) != (size_t)len) {
		CHECK(0, "read %s", exe);
		goto out;
	}
	for (k = 0; k < DAMAGED_COPIES; k++) {
		uint64_t addrs[2] = { off, off + size / 2 }, samples[2] = { 3, 4 }, values[2] = { 3, 4 };
		an_request rq = { tmp, tmp, 0, addrs, samples, values, 2 };
		size_t n = (size_t)len, flips, i;
		an_result r;
		uint64_t v;

		memcpy(buf, orig, (size_t)len);
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		if (k % 3 == 0)
			n = (size_t)(seed >> 33) % (size_t)len;	/* cut short */
		flips = 1 + (seed >> 40) % 64;
		for (i = 0; i < flips; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			/* headers and tables are at both ends: hit them more */
			size_t at = i % 2 ? (size_t)(seed >> 33) % 4096 : (size_t)(seed >> 33) % (size_t)len;
			if (at < n)
				buf[at] ^= (unsigned char)(1u << ((seed >> 20) % 8));
		}
		if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, n, 0) != (ssize_t)n) {
			CHECK(0, "write");
			break;
		}
		if (an_annotate(&rq, &r) != 0 || sum_insns(&r, &v) != 7 || v != 7)
			bad++;
		an_result_free(&r);
	}
	CHECK(!bad, "%llu damaged copies lost samples", (unsigned long long)bad);
out:
	if (fp)
		fclose(fp);
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	free(orig);
	free(buf);
}

static void test_source_lines(void)
{
	char tmp[] = "/tmp/lib-annotate-src-XXXXXX", **l;
	int fd = mkstemp(tmp);
	FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
	unsigned i;

	if (!fp) {
		CHECK(0, "tmp file");
		return;
	}
	fprintf(fp, "one\ntwo\n");
	for (i = 0; i < AN_MAX_SOURCE_LINE + 100; i++)
		fputc('x', fp);
	fprintf(fp, "\nfour");	/* no newline at the end */
	fclose(fp);
	CHECK(an_source_lines(tmp, 2, 6, &l) == 0, "read");
	CHECK(l && !strcmp(l[0], "two") && strlen(l[1]) == AN_MAX_SOURCE_LINE &&
	      !strcmp(l[2], "four") && !l[3] && !l[4], "lines 2..6");
	an_source_free(l, 5);
	CHECK(an_source_lines("/nonexistent/file.c", 1, 2, &l) < 0 && !l, "missing file");
	CHECK(an_source_lines(tmp, 0, 2, &l) < 0, "line numbers start at 1");
	unlink(tmp);
}

int main(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	uint64_t off = 0, size = 0;

	if (n <= 0) {
		printf("lib-annotate: cannot find this program\n");
		return 1;
	}
	exe[n] = 0;
	lib_annotate_target(3);
	if (code_offset(exe, "lib_annotate_target", &off, &size) < 0) {
		printf("lib-annotate: no symbol table in %s\n", exe);
		return 1;
	}
	test_self(exe, off, size);
	test_damaged(exe, off, size);
	test_source_lines();
	return check_done("lib-annotate");
}

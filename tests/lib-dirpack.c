/*
 * lib-dirpack: lib/dirpack packs a perf.data directory and unpacks it
 * again byte for byte (the same bytes every time), accepts what
 * `tar -C dir -cf - .` writes (entries "./", "./data", ...), strips one
 * common top directory, and refuses or skips everything that could write
 * outside the destination or without bound: absolute names, ".." and "."
 * parts, symbolic and hard links (and files through them), more than
 * DIRPACK_MAX_ENTRIES entries, entries or totals over the cap, truncated
 * archives and garbage.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "check.h"
#include "dirpack.h"

static char work[256];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		printf("FAIL: cannot write %s\n", path);
		exit(1);
	}
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(1 << 20);

	*n = 0;
	if (f && buf)
		*n = fread(buf, 1, 1 << 20, f);
	if (f)
		fclose(f);
	if (!f) {
		free(buf);
		return NULL;
	}
	buf[*n < (1 << 20) ? *n : (1 << 20) - 1] = 0;
	return buf;
}

static int same_text(const char *path, const char *want)
{
	size_t n;
	char *got = slurp(path, &n);
	int ok = got && n == strlen(want) && !memcmp(got, want, n);

	free(got);
	return ok;
}

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static int to_file(void *ctx, const void *data, size_t len)
{
	return fwrite(data, 1, len, ctx) != len;
}

/* ---- archives made entry by entry ---- */

typedef struct ent {
	const char *name;
	int type;		/* AE_IFREG, AE_IFDIR, AE_IFLNK, AE_IFIFO; 'h' a hard link */
	const char *data;	/* content, or the link target */
} ent;

static void make_tar(const char *path, const ent *e, size_t n, int64_t fake_size)
{
	struct archive *a = archive_write_new();
	size_t i;

	archive_write_set_format_pax_restricted(a);
	archive_write_open_filename(a, path);
	for (i = 0; i < n; i++) {
		struct archive_entry *x = archive_entry_new();
		size_t len = e[i].type == AE_IFREG && e[i].data ? strlen(e[i].data) : 0;
		archive_entry_set_pathname(x, e[i].name);
		archive_entry_set_perm(x, 0644);
		if (e[i].type == 'h') {
			archive_entry_set_filetype(x, AE_IFREG);
			archive_entry_set_hardlink(x, e[i].data);
		} else {
			archive_entry_set_filetype(x, (unsigned)e[i].type);
			if (e[i].type == AE_IFLNK)
				archive_entry_set_symlink(x, e[i].data);
			archive_entry_set_size(x, fake_size && i == n - 1 ? fake_size : (int64_t)len);
		}
		archive_write_header(a, x);
		if (len)
			archive_write_data(a, e[i].data, len);
		archive_entry_free(x);
	}
	archive_write_close(a);
	archive_write_free(a);
}

/* Unpacks `tar` into a fresh work/out; returns dirpack_extract's result. */
static int unpack(const char *tar, uint64_t max, char *err, size_t errlen)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/out'", work);
	if (system(cmd) != 0)
		return -2;
	snprintf(cmd, sizeof(cmd), "%s/out", work);
	err[0] = 0;
	return dirpack_extract(tar, cmd, max, err, errlen);
}

static void test_round_trip(void)
{
	char dir[300], tar[300], tar2[300], path[400], err[256];
	char *a, *b;
	size_t na, nb;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/perf.data", work);
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/data", dir);
	put(path, "PERFILE2 header and records");
	snprintf(path, sizeof(path), "%s/data.1", dir);
	put(path, "a thread's records");
	snprintf(path, sizeof(path), "%s/.hidden", dir);
	put(path, "not packed");
	snprintf(path, sizeof(path), "%s/kcore_dir", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/kcore_dir/kcore", dir);
	put(path, "kernel core");
	snprintf(path, sizeof(path), "%s/kcore_dir/deeper", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/kcore_dir/deeper/x", dir);
	put(path, "one level of subdirectories only");
	snprintf(path, sizeof(path), "%s/link", dir);
	symlink("/etc/passwd", path);

	snprintf(tar, sizeof(tar), "%s/a.tar", work);
	snprintf(tar2, sizeof(tar2), "%s/b.tar", work);
	f = fopen(tar, "wb");
	CHECK(f && dirpack_write(dir, to_file, f) == 0, "write: %s", strerror(errno));
	fclose(f);
	sleep(1);	/* another second: times must not show in the bytes */
	f = fopen(tar2, "wb");
	CHECK(f && dirpack_write(dir, to_file, f) == 0, "write again");
	fclose(f);
	a = slurp(tar, &na);
	b = slurp(tar2, &nb);
	CHECK(a && b && na == nb && na % 512 == 0 && !memcmp(a, b, na),
	      "the same directory makes the same bytes (%zu, %zu)", na, nb);
	free(a);
	free(b);

	CHECK(unpack(tar, 1 << 20, err, sizeof(err)) == 0, "extract: %s", err);
	snprintf(path, sizeof(path), "%s/out/data", work);
	CHECK(same_text(path, "PERFILE2 header and records"), "data");
	snprintf(path, sizeof(path), "%s/out/data.1", work);
	CHECK(same_text(path, "a thread's records"), "data.1");
	snprintf(path, sizeof(path), "%s/out/kcore_dir/kcore", work);
	CHECK(same_text(path, "kernel core"), "kcore_dir/kcore");
	snprintf(path, sizeof(path), "%s/out/.hidden", work);
	CHECK(!exists(path), "dot files stay out");
	snprintf(path, sizeof(path), "%s/out/kcore_dir/deeper", work);
	CHECK(!exists(path), "two levels down stays out");
	snprintf(path, sizeof(path), "%s/out/link", work);
	CHECK(!exists(path), "links stay out");
	/* tar(1) reads it back */
	if (system("command -v tar >/dev/null 2>&1") == 0) {
		char cmd[700];
		snprintf(cmd, sizeof(cmd), "tar -tf '%s' | sort | tr '\\n' ' ' > '%s/list'", tar,
			 work);
		CHECK(system(cmd) == 0, "tar -tf");
		snprintf(path, sizeof(path), "%s/list", work);
		CHECK(same_text(path, "data data.1 kcore_dir/ kcore_dir/kcore "), "tar -tf lists it");
	}
}

/* What `tar -C dir -cf - .` writes: "./" first, every name under "./". */
static void test_dot_entries(void)
{
	static const ent dot[] = {
		{ "./", AE_IFDIR, NULL }, { "./data", AE_IFREG, "records" },
		{ "./kcore_dir/", AE_IFDIR, NULL }, { "./kcore_dir/kcore", AE_IFREG, "core" },
		{ ".", AE_IFDIR, NULL },
	};
	char tar[300], path[400], err[256], cmd[1600];

	snprintf(tar, sizeof(tar), "%s/dot.tar", work);
	make_tar(tar, dot, 5, 0);
	CHECK(unpack(tar, 1 << 20, err, sizeof(err)) == 0, "./ entries: %s", err);
	snprintf(path, sizeof(path), "%s/out/data", work);
	CHECK(same_text(path, "records"), "./data");
	snprintf(path, sizeof(path), "%s/out/kcore_dir/kcore", work);
	CHECK(same_text(path, "core"), "./kcore_dir/kcore");
	/* and tar(1) itself, when the machine has it */
	if (system("command -v tar >/dev/null 2>&1") != 0)
		return;
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/t/sub' && echo one > '%s/t/data' && "
		 "echo two > '%s/t/sub/data.0' && tar -C '%s/t' -cf '%s/gnu.tar' .",
		 work, work, work, work, work);
	CHECK(system(cmd) == 0, "tar -C dir -cf - .");
	snprintf(tar, sizeof(tar), "%s/gnu.tar", work);
	CHECK(unpack(tar, 1 << 20, err, sizeof(err)) == 0, "tar(1)'s archive: %s", err);
	snprintf(path, sizeof(path), "%s/out/data", work);
	CHECK(same_text(path, "one\n"), "data from tar(1)");
	snprintf(path, sizeof(path), "%s/out/sub/data.0", work);
	CHECK(same_text(path, "two\n"), "sub/data.0 from tar(1)");
}

static void test_top_directory(void)
{
	static const ent top[] = {
		{ "perf.data/", AE_IFDIR, NULL }, { "perf.data/data", AE_IFREG, "x" },
	};
	static const ent two[] = {
		{ "a/data", AE_IFREG, "x" }, { "b/data", AE_IFREG, "y" },
	};
	char tar[300], path[400], err[256];

	snprintf(tar, sizeof(tar), "%s/top.tar", work);
	make_tar(tar, top, 2, 0);
	CHECK(unpack(tar, 1 << 20, err, sizeof(err)) == 0, "top: %s", err);
	snprintf(path, sizeof(path), "%s/out/data", work);
	CHECK(same_text(path, "x"), "the one top directory is stripped");
	make_tar(tar, two, 2, 0);
	CHECK(unpack(tar, 1 << 20, err, sizeof(err)) == 0, "two tops: %s", err);
	snprintf(path, sizeof(path), "%s/out/b/data", work);
	CHECK(same_text(path, "y"), "two top directories stay");
}

/* Each must fail with `want` in the message and write nothing outside. */
static void refused(const char *what, const ent *e, size_t n, int64_t fake_size, uint64_t max,
		    const char *want)
{
	char tar[300], err[256], path[400];

	snprintf(tar, sizeof(tar), "%s/bad.tar", work);
	make_tar(tar, e, n, fake_size);
	CHECK(unpack(tar, max, err, sizeof(err)) < 0 && strstr(err, want),
	      "%s: refused with '%s'? got '%s'", what, want, err);
	snprintf(path, sizeof(path), "%s/escaped", work);
	CHECK(!exists(path) && !exists("/tmp/perfhub-dirpack-escaped"), "%s: escaped", what);
}

static void test_refused(void)
{
	static const ent dotdot[] = { { "perf.data/data", AE_IFREG, "x" },
				      { "../escaped", AE_IFREG, "oops" } };
	static const ent deep[] = { { "perf.data/../../escaped", AE_IFREG, "oops" } };
	static const ent middot[] = { { "perf.data/./data", AE_IFREG, "oops" } };
	static const ent abs[] = { { "/tmp/perfhub-dirpack-escaped", AE_IFREG, "oops" } };
	static const ent through[] = { { "perf.data/", AE_IFDIR, NULL },
				       { "perf.data/link", AE_IFLNK, "/tmp" },
				       { "perf.data/link/perfhub-dirpack-escaped", AE_IFREG, "x" } };
	static const ent big[] = { { "perf.data/data", AE_IFREG, "0123456789" } };
	static const ent total[] = { { "d/a", AE_IFREG, "0123456789" },
				     { "d/b", AE_IFREG, "0123456789" } };
	static const ent bomb[] = { { "perf.data/data", AE_IFREG, "x" } };

	refused("..", dotdot, 2, 0, 1 << 20, "unsafe");
	refused("a/../..", deep, 1, 0, 1 << 20, "unsafe");
	refused("a/./b", middot, 1, 0, 1 << 20, "unsafe");
	refused("absolute", abs, 1, 0, 1 << 20, "unsafe");
	refused("a file through a symlink", through, 3, 0, 1 << 20, "below a link");
	refused("an entry over the cap", big, 1, 0, 5, "too large");
	refused("a total over the cap", total, 2, 0, 15, "more than 15 bytes");
	refused("a size the archive does not hold", bomb, 1, (int64_t)8 << 30, 1 << 20,
		"too large");
}

static void test_links_skipped(void)
{
	static const ent links[] = { { "p/data", AE_IFREG, "x" }, { "p/dir", AE_IFDIR, NULL },
				     { "p/hard", 'h', "/etc/passwd" },
				     { "p/soft", AE_IFLNK, "/etc/passwd" },
				     { "p/fifo", AE_IFIFO, NULL } };
	char tar[300], path[400], err[256];

	snprintf(tar, sizeof(tar), "%s/links.tar", work);
	make_tar(tar, links, 5, 0);
	CHECK(unpack(tar, 1 << 20, err, sizeof(err)) == 0, "links: %s", err);
	snprintf(path, sizeof(path), "%s/out/hard", work);
	CHECK(!exists(path), "a hard link is not made");
	snprintf(path, sizeof(path), "%s/out/soft", work);
	CHECK(!exists(path), "a symbolic link is not made");
	snprintf(path, sizeof(path), "%s/out/fifo", work);
	CHECK(!exists(path), "a fifo is not made");
}

static void test_many_and_broken(void)
{
	ent *many = calloc(DIRPACK_MAX_ENTRIES + 1, sizeof(*many));
	char (*names)[32] = calloc(DIRPACK_MAX_ENTRIES + 1, sizeof(*names));
	char tar[300], cut[300], err[256];
	size_t i, n;
	char *bytes;
	FILE *f;

	for (i = 0; many && names && i <= DIRPACK_MAX_ENTRIES; i++) {
		snprintf(names[i], sizeof(names[i]), "p/f%zu", i);
		many[i].name = names[i];
		many[i].type = AE_IFREG;
		many[i].data = "";
	}
	refused("too many entries", many, DIRPACK_MAX_ENTRIES + 1, 0, 1 << 20, "more than 4096");
	free(many);
	free(names);

	/* cut inside the content, and garbage */
	snprintf(tar, sizeof(tar), "%s/top.tar", work);
	snprintf(cut, sizeof(cut), "%s/cut.tar", work);
	{
		static const ent one[] = { { "p/data", AE_IFREG,
			"a few hundred bytes of records ......................................"
			"......................................................................"
			"......................................................................" } };
		make_tar(tar, one, 1, 0);
	}
	bytes = slurp(tar, &n);
	f = fopen(cut, "wb");
	if (bytes && f)
		fwrite(bytes, 1, 600, f);
	if (f)
		fclose(f);
	CHECK(unpack(cut, 1 << 20, err, sizeof(err)) < 0 && err[0], "truncated: '%s'", err);
	f = fopen(cut, "wb");
	for (i = 0; f && i < 3000; i++)
		fputc((int)((i * 7919) % 251), f);
	if (f)
		fclose(f);
	CHECK(unpack(cut, 1 << 20, err, sizeof(err)) < 0 && err[0], "garbage: '%s'", err);
	free(bytes);
}

int main(void)
{
	char cmd[700];
	const char *tmp = getenv("PERFHUB_TEST_TMP");

	snprintf(work, sizeof(work), "%s/lib-dirpack", tmp && *tmp ? tmp : "/tmp");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", work, work);
	if (system(cmd) != 0)
		return 99;
	test_round_trip();
	test_dot_entries();
	test_top_directory();
	test_refused();
	test_links_skipped();
	test_many_and_broken();
	return check_done("lib-dirpack");
}

/*
 * test-ksaved.c - perf's saved kallsyms is taken for the running kernel's
 * only when it still is that: the same build-id, _text where
 * /proc/kallsyms has it, and the same modules at the same addresses.
 * Each way it can stop being true is written as files and must be
 * refused; then this machine's own kernel, with a copy of its
 * /proc/kallsyms saved where perf saves it, must be accepted.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ksaved.h"
#include "check.h"

static char dir[] = "/tmp/test-ksaved-XXXXXX";
static char notes[256], live[256], mods[256], copy[256];
static const uint8_t id[20] = { 0x4a, 0x5a, 0x9b, 0x0a, 0xff, 0xb6, 0x6c, 0x43, 0x7a, 0xbc,
				0xd4, 0x55, 0xd2, 0x73, 0x8a, 0xf8, 0x79, 0x98, 0x5f, 0xa9 };

static void put(const char *path, const void *data, size_t len)
{
	FILE *fp = fopen(path, "w");

	if (!fp || fwrite(data, 1, len, fp) != len || fclose(fp)) {
		printf("cannot write %s\n", path);
		exit(99);
	}
}

static void puts_file(const char *path, const char *text)
{
	put(path, text, strlen(text));
}

/* ELF notes as /sys/kernel/notes has them: a Xen note first when
 * `other`, then GNU's build-id note with b[0..n) */
static void write_notes(const uint8_t *b, uint32_t n, int other)
{
	unsigned char buf[256];
	size_t len = 0;
	uint32_t h[3];

	if (other) {
		h[0] = 4, h[1] = 8, h[2] = 6;	/* "Xen", 8 bytes */
		memcpy(buf + len, h, 12), len += 12;
		memcpy(buf + len, "Xen", 4), len += 4;
		memset(buf + len, 0xee, 8), len += 8;
	}
	h[0] = 4, h[1] = n, h[2] = 3;	/* NT_GNU_BUILD_ID */
	memcpy(buf + len, h, 12), len += 12;
	memcpy(buf + len, "GNU", 4), len += 4;
	memcpy(buf + len, b, n), len += (n + 3) & ~3u;
	put(notes, buf, len);
}

#define HEAD "ffffffff81000000 T _stext\nffffffff81000000 T _text\nffffffff81000100 T start_kernel\n"
#define LIVE_HEAD "ffffffff81000000 T srso_alias_untrain_ret\n" HEAD
#define EXT4 "ffffffffc0000010 t ext4_fill_super\t[ext4]\nffffffffc0000200 T ext4_iget\t[ext4]\n" \
	     "ffffffffc0900000 d ext4_data\t[ext4]\n"
#define PSEUDO "ffffffffc1000000 t bpf_prog_6deef7357e7b4530_sd_fw_egress\t[bpf]\n" \
	       "ffffffffc1100000 t ftrace_trampoline\t[__builtin__ftrace]\n"
#define MOD_EXT4 "ext4 1048576 1 - Live 0xffffffffc0000000\n"
#define MOD_XFS "xfs 2097152 0 - Live 0xffffffffc0200000 (E)\n"

static int matches(void)
{
	return pd_ksaved_matches(copy, id, sizeof(id), notes, live, mods);
}

static void fabricated(void)
{
	uint8_t other[20];

	write_notes(id, sizeof(id), 0);
	puts_file(live, LIVE_HEAD "ffffffff81000200 T live_only\n");
	puts_file(mods, MOD_EXT4);
	puts_file(copy, HEAD EXT4 PSEUDO);
	CHECK(matches() == 1, "the same kernel, _text and modules: taken");
	write_notes(id, sizeof(id), 1);
	CHECK(matches() == 1, "the build-id note after another note: taken");

	memcpy(other, id, sizeof(other));
	other[19] ^= 1;
	write_notes(other, sizeof(other), 0);
	CHECK(matches() == 0, "another running kernel: refused");
	write_notes(id, 16, 0);
	CHECK(matches() == 0, "a shorter build-id: refused");
	write_notes(id, sizeof(id), 0);

	puts_file(live, "ffffffff9a000000 T _stext\nffffffff9a000000 T _text\n");
	CHECK(matches() == 0, "another KASLR slide: refused");
	puts_file(live, "0000000000000000 T _stext\n0000000000000000 T _text\n");
	puts_file(copy, "0000000000000000 T _stext\n0000000000000000 T _text\n");
	CHECK(matches() == 0, "addresses hidden (kptr_restrict): refused");
	puts_file(live, "ffffffff81000000 T _stext\n");
	puts_file(copy, HEAD EXT4);
	CHECK(matches() == 0, "no _text in /proc/kallsyms: refused");
	puts_file(live, LIVE_HEAD);

	puts_file(mods, MOD_EXT4 MOD_XFS);
	CHECK(matches() == 0, "a module loaded since the copy: refused");
	puts_file(mods, "");
	CHECK(matches() == 0, "a module unloaded since the copy: refused");
	unlink(mods);
	CHECK(matches() == 0, "no /proc/modules, a copy with modules: refused");
	puts_file(copy, HEAD PSEUDO);
	CHECK(matches() == 1, "no /proc/modules, no module in the copy: taken");
	puts_file(mods, "ext4 1048576 1 - Live 0xffffffffc4000000\n");
	puts_file(copy, HEAD EXT4);
	CHECK(matches() == 0, "a module loaded again elsewhere: refused");
	puts_file(mods, "ext4 1048576 1 - Live 0x0000000000000000\n");
	CHECK(matches() == 0, "module addresses hidden: refused");
	puts_file(mods, MOD_EXT4);
	CHECK(matches() == 1, "back as it was: taken");
	puts_file(copy, HEAD "ffffffffc0000010 t ext4_fill_super\t[ext4\n");
	CHECK(matches() == 0, "a module line cut short: refused");
	unlink(copy);
	CHECK(matches() == 0, "no copy: refused");
}

/* The running kernel's build-id, read here the long way */
static size_t running_id(uint8_t *out)
{
	unsigned char buf[4096];
	int fd = open("/sys/kernel/notes", O_RDONLY);
	ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
	size_t off = 0;

	if (fd >= 0)
		close(fd);
	while (len > 0 && off + 12 <= (size_t)len) {
		uint32_t h[3];
		size_t desc;

		memcpy(h, buf + off, 12);
		desc = off + 12 + ((h[0] + 3) & ~3u);
		if (h[2] == 3 && h[0] == 4 && !memcmp(buf + off + 12, "GNU", 4) && h[1] <= 20 &&
		    desc + h[1] <= (size_t)len) {
			memcpy(out, buf + desc, h[1]);
			return h[1];
		}
		off = desc + ((h[1] + 3) & ~3u);
	}
	return 0;
}

static void this_machine(void)
{
	uint8_t rid[20];
	size_t n = running_id(rid), i;
	char hex[41], path[512], cmd[2 * 512 + 64];
	char *got;
	int hidden;

	if (!n) {
		printf("note: no build-id in /sys/kernel/notes: this machine's case not run\n");
		return;
	}
	for (i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", rid[i]);
	got = pd_ksaved_copy(dir, rid, n);
	CHECK(!got, "a copy found where none was saved: %s", got ? got : "");
	free(got);
	snprintf(path, sizeof(path), "%s/[kernel.kallsyms]/%s", dir, hex);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cat /proc/kallsyms > '%s/kallsyms'", path, path);
	if (system(cmd) != 0) {
		printf("cannot copy /proc/kallsyms\n");
		exit(99);
	}
	/* perf saves what it reads: with addresses hidden there is nothing
	 * to take, and the copy must be refused */
	hidden = system("head -1 /proc/kallsyms | grep -q '^0000000000000000 ' || "
			"grep -qs ' 0x0000000000000000' /proc/modules") == 0;
	got = pd_ksaved_copy(dir, rid, n);
	if (hidden) {
		CHECK(!got, "a copy with hidden addresses taken");
	} else {
		strcat(path, "/kallsyms");
		CHECK(got && !strcmp(got, path), "this kernel's copy saved now not taken: %s",
		      got ? got : "(none)");
		printf("this machine: %s taken\n", path);
	}
	free(got);
	rid[0] ^= 0xff;
	got = pd_ksaved_copy(dir, rid, n);
	CHECK(!got, "a copy taken for another build-id");
	free(got);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(dir))
		return 99;
	snprintf(notes, sizeof(notes), "%s/notes", dir);
	snprintf(live, sizeof(live), "%s/kallsyms", dir);
	snprintf(mods, sizeof(mods), "%s/modules", dir);
	snprintf(copy, sizeof(copy), "%s/copy", dir);
	fabricated();
	this_machine();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("note: %s left behind\n", dir);
	return check_done("test-ksaved");
}

/*
 * addr-samples - write a perf.data with one sample at every address of a
 * part of a binary, so that `perf script` and `perfhub collapse` can be
 * compared on how each address is named, with no sampling luck involved:
 *
 *   addr-samples plt BINARY OUT   start-up and PLT code (from .init to 64
 *	bytes into .text: .init, .plt, .plt.got and .plt.sec in the usual
 *	layouts); process "pltprobe"
 *   addr-samples bss BINARY OUT   each loadable segment's memory past its
 *	file bytes (.bss), from 64 bytes before that point; process
 *	"bssprobe"
 *
 * The binary is mapped whole, file offset 0 at a fixed address of process
 * 4242 (as a frame-pointer walk sees it: the map's offsets run on through
 * .bss), the mapping as long as the file or its last segment's memory;
 * each sample has period 1 and a one-entry user callchain. Exit 0, or 1
 * with a message.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pdwrite.h"

#define PROBE_PID 4242
#define PROBE_BASE 0x555555554000ull
#define PROBE_TEXT_BYTES 64	/* how far into .text the samples go */
#define PROBE_MAX_BYTES (1u << 20)

#define BSS_BEFORE 64	/* file bytes sampled before a segment's .bss */

/* [lo, hi) in file offsets: .init's start to PROBE_TEXT_BYTES into .text */
static int code_range(Elf *e, uint64_t *lo, uint64_t *hi)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	*lo = UINT64_MAX;
	*hi = 0;
	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return -1;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(n, ".init") || !strncmp(n, ".plt", 4)) {
			if (sh.sh_offset < *lo)
				*lo = sh.sh_offset;
			if (sh.sh_offset + sh.sh_size > *hi)
				*hi = sh.sh_offset + sh.sh_size;
		} else if (!strcmp(n, ".text") && sh.sh_offset + PROBE_TEXT_BYTES > *hi) {
			*hi = sh.sh_offset + PROBE_TEXT_BYTES;
		}
	}
	return *lo < *hi && *hi - *lo <= PROBE_MAX_BYTES ? 0 : -1;
}

/* [lo, hi) in map offsets: the first segment with more memory than file
 * bytes, from BSS_BEFORE bytes before its file bytes end to its memory's
 * end; *size grows to the segments' memory when it passes the file */
static int bss_range(Elf *e, uint64_t *lo, uint64_t *hi, uint64_t *size)
{
	size_t n, i;

	*lo = *hi = 0;
	if (elf_getphdrnum(e, &n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset + ph.p_memsz > *size)
			*size = ph.p_offset + ph.p_memsz;
		if (ph.p_memsz > ph.p_filesz && !*hi) {
			*lo = ph.p_offset + ph.p_filesz;
			*lo = *lo - ph.p_offset > BSS_BEFORE ? *lo - BSS_BEFORE : ph.p_offset;
			*hi = ph.p_offset + ph.p_memsz;
		}
	}
	return *lo < *hi && *hi - *lo <= PROBE_MAX_BYTES ? 0 : -1;
}

/* The range mode asks for in the binary at path; *size the mapping's
 * length. 0, or -1 with a message. */
static int probe_range(const char *mode, const char *path, uint64_t *lo, uint64_t *hi,
		       uint64_t *size)
{
	int fd = open(path, O_RDONLY), rc = -1;
	Elf *e = NULL;
	struct stat st;

	elf_version(EV_CURRENT);
	if (fd < 0 || fstat(fd, &st) < 0 || !(e = elf_begin(fd, ELF_C_READ, NULL))) {
		fprintf(stderr, "addr-samples: %s: not a readable ELF file\n", path);
		goto out;
	}
	*size = (uint64_t)st.st_size;
	if (!strcmp(mode, "plt")) {
		if ((rc = code_range(e, lo, hi)) < 0)
			fprintf(stderr, "addr-samples: %s: no .init/.plt code found\n", path);
	} else if ((rc = bss_range(e, lo, hi, size)) < 0) {
		fprintf(stderr, "addr-samples: %s: no segment with .bss\n", path);
	}
out:
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	uint64_t lo, hi, size, a;
	uint8_t *buf = NULL;
	const char *comm;
	size_t len;
	pdw *w;
	int rc = 1;

	if (argc != 4 || (strcmp(argv[1], "plt") && strcmp(argv[1], "bss"))) {
		fprintf(stderr, "usage: addr-samples plt|bss BINARY OUT\n");
		return 1;
	}
	comm = !strcmp(argv[1], "plt") ? "pltprobe" : "bssprobe";
	if (probe_range(argv[1], argv[2], &lo, &hi, &size) < 0)
		return 1;
	w = pdw_new(&(pdw_config){ .attr_size = 128 });
	if (!w)
		return 1;
	pdw_add_cpu_clock(w, PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME |
			      PD_SAMPLE_PERIOD | PD_SAMPLE_CALLCHAIN, 9);
	{
		pd_sample_id sid = { .pid = PROBE_PID, .tid = PROBE_PID, .time = 1, .id = 9,
				     .identifier = 9 };
		pd_comm c = { .pid = PROBE_PID, .tid = PROBE_PID, .comm = comm };
		pd_mmap m = { .pid = PROBE_PID, .tid = PROBE_PID, .start = PROBE_BASE,
			      .len = (size + 4095) & ~4095ull, .pgoff = 0, .prot = 5, .flags = 2,
			      .filename = argv[2] };

		pdw_comm(w, 0, &c, &sid);
		pdw_mmap2(w, 0, PD_MISC_USER, &m, &sid);
	}
	for (a = lo; a < hi; a++) {
		uint64_t chain[2] = { PD_CONTEXT_USER, PROBE_BASE + a };
		pd_sample s = { .identifier = 9, .ip = PROBE_BASE + a, .pid = PROBE_PID,
				.tid = PROBE_PID, .time = 10 + a, .period = 1,
				.nr_callchain = 2, .callchain = chain };

		pdw_sample(w, 0, PD_MISC_USER, &s);
	}
	if (pdw_finish(w, &buf, &len) == 0 && pdw_write_file(argv[3], buf, len) == 0)
		rc = 0;
	else
		fprintf(stderr, "addr-samples: cannot write %s\n", argv[3]);
	free(buf);
	pdw_free(w);
	return rc;
}

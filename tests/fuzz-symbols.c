/*
 * fuzz-symbols - libFuzzer target over what reads ELF and DWARF files that
 * may come from outside (the daemon takes binaries and debug files by
 * upload): the input is written to a scratch file, loaded as a dso's
 * symbol table (symtab.c: .symtab, .dynsym, PLT, perf's tree) and asked
 * for names and inlined frames (inlines.c) at addresses spread over it.
 * Built with --enable-fuzzing as tests/fuzz-symbols; tests/fuzz-symbols-
 * replay runs the same entry point over ELF files of the build and
 * damaged copies of them in every `make check`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dso.h"

#define FUZZ_MAX_INPUT (8u << 20)
#define FUZZ_PROBES 512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/fuzz-symbols.XXXXXX";
	int fd;
	FILE *fp;
	pd_dso_cache *c;
	pd_dso *d;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	fd = mkstemp(path);
	if (fd < 0)
		return 0;
	fp = fdopen(fd, "wb");
	if (!fp) {
		close(fd);
		unlink(path);
		return 0;
	}
	fwrite(data, 1, size, fp);
	fclose(fp);
	c = pd_dso_cache_new(0);
	d = c ? pd_dso_get(c, PD_DSO_ELF, path, NULL, 0, NULL) : NULL;
	if (d) {
		/* offsets over the whole file and a little past it */
		for (uint64_t i = 0; i < FUZZ_PROBES; i++) {
			uint64_t off = (size + 64) * i / FUZZ_PROBES, so = 0;
			const char *n = pd_dso_lookup(d, off, &so);
			const char *inl[32];
			size_t k = pd_dso_inlines(d, off, inl, 32, NULL);

			if (n)
				sink += strlen(n) + so;
			while (k-- > 0)
				sink += strlen(inl[k]);
		}
		sink += pd_dso_nr_symbols(d);
		pd_dso_put(c, d);
	}
	pd_dso_cache_free(c);
	unlink(path);
	return 0;
}

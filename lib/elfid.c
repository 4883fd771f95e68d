/* elfid.c - what an uploaded file is: ELF (build-id note, symbols, code) or kallsyms. */
#include "config.h"

#include <ctype.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfid.h"

#define ELFID_KALLSYMS_PROBE 65536	/* bytes looked at to recognise kallsyms */

/* The GNU build-id note, from note sections or PT_NOTE segments. */
static size_t note_build_id(Elf *e, uint8_t *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t nph = 0, i;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)data->d_buf + noff, "GNU", 4) && nh.n_descsz) {
				size_t n = nh.n_descsz < ELFID_MAX_BUILD_ID ? nh.n_descsz :
									    ELFID_MAX_BUILD_ID;
				memcpy(out, (char *)data->d_buf + doff, n);
				return n;
			}
	}
	if (elf_getphdrnum(e, &nph) < 0)
		return 0;
	for (i = 0; i < nph && i < 4096; i++) {
		GElf_Phdr ph;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		while (data && (off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)data->d_buf + noff, "GNU", 4) && nh.n_descsz) {
				size_t n = nh.n_descsz < ELFID_MAX_BUILD_ID ? nh.n_descsz :
									    ELFID_MAX_BUILD_ID;
				memcpy(out, (char *)data->d_buf + doff, n);
				return n;
			}
	}
	return 0;
}

/* "ffffffff81000000 T name" lines (an optional "\t[module]" after). */
static int looks_like_kallsyms(int fd)
{
	char *buf = malloc(ELFID_KALLSYMS_PROBE + 1);
	ssize_t n;
	char *line, *nl;
	int lines = 0, ok = 1;

	if (!buf)
		return 0;
	n = pread(fd, buf, ELFID_KALLSYMS_PROBE, 0);
	if (n <= 0) {
		free(buf);
		return 0;
	}
	buf[n] = 0;
	if (memchr(buf, 0, (size_t)n))
		ok = 0;
	for (line = buf; ok && (nl = strchr(line, '\n')); line = nl + 1) {
		char *p = line;
		size_t digits = 0;

		*nl = 0;
		while (isxdigit((unsigned char)*p)) {
			p++;
			digits++;
		}
		if (digits < 8 || digits > 16 || p[0] != ' ' || !isalpha((unsigned char)p[1]) ||
		    p[2] != ' ' || !p[3] || isspace((unsigned char)p[3]))
			ok = 0;
		else
			lines++;
	}
	free(buf);
	return ok && lines > 0;
}

void elfid_of_fd(int fd, elfid *f)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	memset(f, 0, sizeof(*f));
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		f->kallsyms = looks_like_kallsyms(fd);
		return;
	}
	f->elf = 1;
	f->bid_size = note_build_id(e, f->bid);
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			f->has_symtab = 1;
		if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR) && sh.sh_size)
			f->has_code = 1;
	}
	elf_end(e);
}

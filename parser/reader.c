/*
 * reader.c - opening a recording (file mode, v1, pipe mode, directories),
 * the record loop behind pd_next(), and the handle's accessors.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cursor.h"
#include "ordered.h"
#include "pdfile.h"
#include "perr.h"

#define MAGIC2_LE	0x32454c4946524550ULL	/* "PERFILE2" read little-endian */
#define MAGIC1		0x454c494646524550ULL	/* "PERFFILE" */
#define FILE_HEADER_SIZE	104
#define FILE_HEADER_V1_SIZE	72		/* without the feature bitmap */
#define PIPE_HEADER_SIZE	16
/* A stream in file mode keeps what precedes the data section (attrs, ids)
 * and what follows it (features) in memory, up to this much each. */
#define STREAM_SECTION_CAP	(64u << 20)

static int host_big_endian(void)
{
	return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
}

/* ---- small services for the other modules --------------------------- */

void pd_warn(pd_file *f, const char *fmt, ...)
{
	va_list ap;
	char buf[256];

	if (f->nr_warnings >= PD_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	f->warnings[f->nr_warnings] = strdup(buf);
	if (f->warnings[f->nr_warnings])
		f->nr_warnings++;
}

void *pd_scratch(pd_file *f, size_t n)
{
	void *p;

	n = (n + 7) & ~(size_t)7;
	if (n > PD_SCRATCH_SIZE - f->scratch_used)
		return NULL;
	p = f->scratch + f->scratch_used;
	f->scratch_used += n;
	return p;
}

const char *pd_string(pd_file *f, const uint8_t *p, size_t n)
{
	char *s;

	if (n && memchr(p, 0, n))
		return (const char *)p;
	s = pd_scratch(f, n + 1);
	if (!s)
		return "";
	memcpy(s, p, n);
	s[n] = 0;
	return s;
}

/* ---- creation ----------------------------------------------------------- */

static pd_file *file_new(const pd_options *opt, pd_error *err)
{
	pd_file *f = calloc(1, sizeof(*f));

	if (!f)
		goto nomem;
	if (opt)
		f->opt = *opt;
	if (!f->opt.max_decompressed)
		f->opt.max_decompressed = PD_DEFAULT_MAX_DECOMPRESSED;
	if (!f->opt.max_ordered_bytes)
		f->opt.max_ordered_bytes = PD_DEFAULT_MAX_ORDERED_BYTES;
	f->own_fd = -1;
	f->id_pos = f->is_pos = -1;
	f->scratch = malloc(PD_SCRATCH_SIZE);
	f->feats = feat_new();
	if (!f->scratch || !f->feats)
		goto nomem;
	f->info.nr_data_files = 1;
	return f;
nomem:
	pd_set_error(err, PD_ERR_NOMEM, 0, "out of memory");
	if (f) {
		free(f->scratch);
		feat_free(f->feats);
		free(f);
	}
	return NULL;
}

void pd_close(pd_file *f)
{
	size_t i;

	if (!f)
		return;
	if (f->in != f->main_in)
		in_free(f->in);
	in_free(f->main_in);
	if (f->own_fd >= 0)
		close(f->own_fd);
	free(f->dir);
	free(f->data_nums);
	feat_free(f->feats);
	ev_free_all(f);
	for (i = 0; i < f->nr_warnings; i++)
		free(f->warnings[i]);
	decomp_free(f->decomp);
	ordered_free(f->ordered);
	free(f->stream_head);
	free(f->scratch);
	free(f);
}

/* ---- file mode header --------------------------------------------------- */

static int check_section(const char *what, uint64_t off, uint64_t size, uint64_t avail,
			 uint64_t at, pd_error *err)
{
	if (off > avail || size > avail - off) {
		pd_set_error(err, PD_ERR_BAD_OFFSET, at,
			     "%s section [%llu, +%llu) lies outside the %llu bytes of the file",
			     what, (unsigned long long)off, (unsigned long long)size,
			     (unsigned long long)avail);
		return -1;
	}
	return 0;
}

/*
 * The attrs section: nr entries of attr_size bytes, each
 *   struct perf_event_attr (attr_size - 16 bytes) + { u64 offset, size } ids
 * `base` holds the input's first `avail` bytes.
 */
static int read_attrs(pd_file *f, const uint8_t *base, uint64_t avail, uint64_t attr_size,
		      uint64_t off, uint64_t size, pd_error *err)
{
	uint64_t nr, i;

	if (attr_size < 64 + 16 || attr_size > 4096) {
		pd_set_error(err, PD_ERR_BAD_SIZE, 16, "attr_size %llu, expected 80..4096",
			     (unsigned long long)attr_size);
		return -1;
	}
	if (check_section("attrs", off, size, avail, 24, err) < 0)
		return -1;
	if (size % attr_size) {
		pd_set_error(err, PD_ERR_BAD_SIZE, 32,
			     "attrs section size %llu is not a multiple of attr_size %llu",
			     (unsigned long long)size, (unsigned long long)attr_size);
		return -1;
	}
	nr = size / attr_size;
	for (i = 0; i < nr; i++) {
		const uint8_t *p = base + off + i * attr_size;
		uint64_t at = off + i * attr_size;
		uint64_t ids_off = load_u64(p + attr_size - 16, f->swap);
		uint64_t ids_size = load_u64(p + attr_size - 8, f->swap);
		pd_attr a;

		attr_decode(&a, p, (size_t)(attr_size - 16), f->swap);
		if (check_section("ids", ids_off, ids_size, avail, at + attr_size - 16, err) < 0)
			return -1;
		if (ev_add(f, &a, base + ids_off, (size_t)(ids_size / 8), f->swap, err, at) < 0)
			return -1;
	}
	return 0;
}

/* The legacy event_types section: { u64 event_id; char name[64]; }[]. */
static void read_event_types(pd_file *f, const uint8_t *base, uint64_t avail, uint64_t off,
			     uint64_t size)
{
	uint64_t i;

	if (!size)
		return;
	if (off > avail || size > avail - off) {
		pd_warn(f, "event_types section at %llu outside the file, ignored",
			(unsigned long long)off);
		return;
	}
	for (i = 0; i + 72 <= size; i += 72)
		legacy_add(f, load_u64(base + off + i, f->swap), (const char *)base + off + i + 8, 64);
}

/*
 * The feature table at the end of the data section: one { u64 offset, size }
 * per bit set in adds_features, in bit order. `buf` holds the input's bytes
 * [buf_off, buf_off + buf_len).
 */
static void read_features(pd_file *f, const uint64_t bits[4], const uint8_t *buf, uint64_t buf_off,
			  uint64_t buf_len, uint64_t table_off)
{
	int feat, n = 0, j;
	uint64_t at = table_off;
	uint64_t seen_off[256], seen_end[256];

	for (feat = 1; feat < 256; feat++) {
		uint64_t soff, ssize;

		if (!(bits[feat / 64] >> (feat % 64) & 1))
			continue;
		if (at < buf_off || at + 16 > buf_off + buf_len) {
			pd_warn(f, "offset %llu: feature table entry for feature %d outside the file",
				(unsigned long long)at, feat);
			return;
		}
		soff = load_u64(buf + (at - buf_off), f->swap);
		ssize = load_u64(buf + (at - buf_off) + 8, f->swap);
		if (soff < buf_off || soff - buf_off > buf_len || ssize > buf_len - (soff - buf_off)) {
			pd_warn(f, "offset %llu: feature %d section [%llu, +%llu) outside the file",
				(unsigned long long)at, feat, (unsigned long long)soff,
				(unsigned long long)ssize);
		} else {
			/* sections must not overlap each other or the data */
			for (j = 0; j < n && ssize; j++)
				if (soff < seen_end[j] && seen_off[j] < soff + ssize) {
					pd_warn(f, "offset %llu: feature %d section [%llu, +%llu) "
						"overlaps another feature section",
						(unsigned long long)at, feat, (unsigned long long)soff,
						(unsigned long long)ssize);
					break;
				}
			if (ssize && soff < f->info.data_offset + f->info.data_size &&
			    f->info.data_offset < soff + ssize && f->info.mode == PD_MODE_FILE &&
			    !in_is_stream(f->in))
				pd_warn(f, "offset %llu: feature %d section overlaps the data section",
					(unsigned long long)at, feat);
			if (ssize && n < 256) {
				seen_off[n] = soff;
				seen_end[n++] = soff + ssize;
			}
			if (feat_add(f->feats, feat, buf + (soff - buf_off), (size_t)ssize, f->swap,
				     soff) < 0)
				pd_warn(f, "out of memory keeping feature %d", feat);
		}
		at += 16;
	}
}

/* Read exactly n bytes of a stream into a new buffer. */
static uint8_t *stream_slurp(pd_file *f, uint64_t n, pd_error *err)
{
	uint8_t *buf;
	uint64_t got = 0;

	if (n > STREAM_SECTION_CAP) {
		pd_set_error(err, PD_ERR_LIMIT, in_pos(f->in),
			     "%llu bytes of header sections before the data, more than a stream may hold",
			     (unsigned long long)n);
		return NULL;
	}
	buf = malloc(n ? n : 1);
	if (!buf) {
		pd_set_error(err, PD_ERR_NOMEM, in_pos(f->in), "out of memory");
		return NULL;
	}
	while (got < n) {
		const uint8_t *p;
		size_t want = n - got > IN_STREAM_BUF ? IN_STREAM_BUF : (size_t)(n - got);
		long k = in_peek(f->in, want, &p, err);

		if (k < 0)
			goto fail;
		if (k == 0) {
			pd_set_error(err, PD_ERR_TRUNCATED, in_pos(f->in),
				     "stream ends before the data section");
			goto fail;
		}
		memcpy(buf + got, p, (size_t)k);
		in_advance(f->in, (size_t)k);
		got += (uint64_t)k;
	}
	return buf;
fail:
	free(buf);
	return NULL;
}

/*
 * struct perf_file_header (104 bytes; v1 files may stop at 72):
 *   u64 magic, size, attr_size;
 *   { u64 offset, size } attrs, data, event_types;
 *   u64 adds_features[4];	bitmap of feature sections after the data
 */
static int read_file_header(pd_file *f, const uint8_t *hdr, size_t hdr_len, pd_error *err)
{
	uint64_t hsize = load_u64(hdr + 8, f->swap);
	uint64_t attr_size = load_u64(hdr + 16, f->swap);
	uint64_t a_off = load_u64(hdr + 24, f->swap), a_size = load_u64(hdr + 32, f->swap);
	uint64_t d_off = load_u64(hdr + 40, f->swap), d_size = load_u64(hdr + 48, f->swap);
	uint64_t t_off = load_u64(hdr + 56, f->swap), t_size = load_u64(hdr + 64, f->swap);
	uint64_t bits[4] = { 0, 0, 0, 0 };
	const uint8_t *base;
	uint64_t avail;
	int i;

	if (hsize < FILE_HEADER_V1_SIZE || hsize > 4096) {
		pd_set_error(err, PD_ERR_BAD_SIZE, 8, "file header size %llu, expected 104",
			     (unsigned long long)hsize);
		return -1;
	}
	if (hsize >= FILE_HEADER_SIZE && hdr_len >= FILE_HEADER_SIZE)
		for (i = 0; i < 4; i++)
			bits[i] = load_u64(hdr + 72 + 8 * i, f->swap);
	/* A writer of the other byte order with 32-bit longs stored the
	 * bitmap as u32 words: perf's test is a missing HOSTNAME bit. */
	if (f->swap && !(bits[0] & (1ULL << PD_FEAT_HOSTNAME)) && hsize >= FILE_HEADER_SIZE) {
		for (i = 0; i < 4; i++) {
			uint64_t v = load_u64(hdr + 72 + 8 * i, 0);
			uint32_t lo = (uint32_t)v, hi = (uint32_t)(v >> 32);

			if (!host_big_endian())
				bits[i] = (uint64_t)__builtin_bswap32(lo) |
					  ((uint64_t)__builtin_bswap32(hi) << 32);
		}
		if (!(bits[0] & (1ULL << PD_FEAT_HOSTNAME))) {
			memset(bits, 0, sizeof(bits));
			bits[0] = 1ULL << PD_FEAT_BUILD_ID;
		}
	}
	/* perf record writes the data size when it ends the recording: 0 means
	 * it never did (killed, crashed). Its records then run to the end of
	 * the file, and no feature table follows them: the bytes after
	 * data_offset are records, not sections to decode. */
	if (d_size == 0) {
		f->unfinished = 1;
		memset(bits, 0, sizeof(bits));
	}
	f->info.header_size = hsize;
	f->info.attr_size = attr_size;
	f->info.data_offset = d_off;
	f->info.data_size = d_size;
	f->info.feat_offset = d_off + d_size;

	if (d_off < hsize) {
		pd_set_error(err, PD_ERR_BAD_OFFSET, 40, "data section at %llu overlaps the header",
			     (unsigned long long)d_off);
		return -1;
	}
	if (in_is_stream(f->in)) {
		/* keep everything before the data; the header is consumed */
		f->stream_head = stream_slurp(f, d_off - FILE_HEADER_SIZE, err);
		if (!f->stream_head)
			return -1;
		/* stream_head holds [FILE_HEADER_SIZE, d_off): shift views */
		base = f->stream_head - FILE_HEADER_SIZE;
		avail = d_off;
		if ((a_size && a_off < FILE_HEADER_SIZE) || (t_size && t_off < FILE_HEADER_SIZE)) {
			pd_set_error(err, PD_ERR_BAD_OFFSET, 24, "attrs section overlaps the header");
			return -1;
		}
	} else {
		base = in_at(f->in, 0, in_size(f->in));
		avail = in_size(f->in);
		if (f->unfinished && avail > d_off)
			d_size = f->info.data_size = avail - d_off;
		if (check_section("data", d_off, d_size, avail, 40, err) < 0)
			return -1;
	}
	if (f->unfinished)
		pd_warn(f, "offset 48: the header's data size is 0: perf record did not end this "
			"recording (killed?); its records are read to the end of the file and it "
			"has no header features");
	if (a_size && a_off < hsize) {
		pd_set_error(err, PD_ERR_BAD_OFFSET, 24, "attrs section at %llu overlaps the header",
			     (unsigned long long)a_off);
		return -1;
	}
	if (a_size && d_size && a_off <= avail && a_size <= avail - a_off &&
	    a_off < d_off + d_size && d_off < a_off + a_size) {
		pd_set_error(err, PD_ERR_BAD_OFFSET, 40,
			     "data section [%llu, +%llu) overlaps the attrs section [%llu, +%llu)",
			     (unsigned long long)d_off, (unsigned long long)d_size,
			     (unsigned long long)a_off, (unsigned long long)a_size);
		return -1;
	}
	if (read_attrs(f, base, avail, attr_size, a_off, a_size, err) < 0)
		return -1;
	read_event_types(f, base, avail, t_off, t_size);
	if (!in_is_stream(f->in)) {
		read_features(f, bits, base, 0, avail, d_off + d_size);
		ev_name_defaults(f);
		if (in_seek(f->in, d_off) < 0) {
			pd_set_error(err, PD_ERR_BAD_OFFSET, 40, "data offset %llu outside the file",
				     (unsigned long long)d_off);
			return -1;
		}
		in_set_end(f->in, d_off + d_size);
	} else {
		memcpy(f->stream_bits, bits, sizeof(bits));
		f->stream_data_end = f->unfinished ? 0 : d_off + d_size;	/* 0: to the end */
		ev_name_defaults(f);
	}
	return 0;
}

/* After the data section of a file-mode stream: read what follows (the
 * feature table and sections, capped) and hand it to the features. */
static void stream_read_tail(pd_file *f)
{
	uint8_t *buf = malloc(STREAM_SECTION_CAP);
	uint64_t got = 0, start = in_pos(f->in);
	pd_error e;

	if (!buf)
		return;
	for (;;) {
		const uint8_t *p;
		size_t want = STREAM_SECTION_CAP - got > IN_STREAM_BUF ? IN_STREAM_BUF
								       : (size_t)(STREAM_SECTION_CAP - got);
		long k;

		if (!want)
			break;
		k = in_peek(f->in, want, &p, &e);
		if (k <= 0)
			break;
		memcpy(buf + got, p, (size_t)k);
		in_advance(f->in, (size_t)k);
		got += (uint64_t)k;
	}
	read_features(f, f->stream_bits, buf, start, got, start);
	free(buf);
	ev_name_defaults(f);
}

/* ---- opening -------------------------------------------------------------- */

static int open_input(pd_file *f, pd_error *err)
{
	const uint8_t *p;
	long n;
	uint64_t magic, hsize;

	f->in = f->main_in;
	n = in_peek(f->in, FILE_HEADER_SIZE, &p, err);
	if (n < 0)
		return -1;
	if (n < 16) {
		pd_set_error(err, PD_ERR_TRUNCATED, 0,
			     "%ld bytes, too short for a perf.data header (16 at least)", n);
		return -1;
	}
	magic = load_u64(p, 0);
	if (host_big_endian())
		magic = __builtin_bswap64(magic);	/* compare as little-endian */
	if (magic == MAGIC2_LE) {
		f->info.big_endian = 0;
		f->info.version = 2;
	} else if (magic == __builtin_bswap64(MAGIC2_LE)) {
		f->info.big_endian = 1;
		f->info.version = 2;
	} else if (magic == MAGIC1) {
		/* v1: the byte order shows in the header size field */
		uint64_t le = load_u64(p + 8, host_big_endian());

		f->info.version = 1;
		f->info.big_endian = le > 0xffff;
	} else {
		pd_set_error(err, PD_ERR_MAGIC, 0,
			     "bad magic %02x %02x %02x %02x %02x %02x %02x %02x, expected PERFILE2",
			     p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
		return -1;
	}
	f->swap = f->info.big_endian != host_big_endian();
	f->info.swapped = f->swap;
	hsize = load_u64(p + 8, f->swap);
	f->info.file_size = in_size(f->in);
	if (hsize == PIPE_HEADER_SIZE) {
		f->info.mode = PD_MODE_PIPE;
		f->info.header_size = hsize;
		in_advance(f->in, PIPE_HEADER_SIZE);
		return 0;
	}
	f->info.mode = PD_MODE_FILE;
	if (n < FILE_HEADER_V1_SIZE || (hsize >= FILE_HEADER_SIZE && n < FILE_HEADER_SIZE)) {
		pd_set_error(err, PD_ERR_TRUNCATED, (uint64_t)n,
			     "input ends inside the %llu-byte file header", (unsigned long long)hsize);
		return -1;
	}
	if (in_is_stream(f->in)) {
		uint8_t hdr[FILE_HEADER_SIZE];

		memset(hdr, 0, sizeof(hdr));
		memcpy(hdr, p, (size_t)n);
		in_advance(f->in, (size_t)n);
		if (n < FILE_HEADER_SIZE || hsize != FILE_HEADER_SIZE) {
			pd_set_error(err, PD_ERR_BAD_SIZE, 8,
				     "file header of %llu bytes in a stream, expected 104",
				     (unsigned long long)hsize);
			return -1;
		}
		return read_file_header(f, hdr, sizeof(hdr), err);
	}
	return read_file_header(f, p, (size_t)n, err);
}

static pd_file *open_with(pd_input *in, const pd_options *opt, pd_error *err)
{
	pd_file *f;

	if (!in) {
		pd_set_error(err, PD_ERR_NOMEM, 0, "out of memory");
		return NULL;
	}
	f = file_new(opt, err);
	if (!f) {
		in_free(in);
		return NULL;
	}
	f->main_in = in;
	if (open_input(f, err) < 0)
		goto fail;
	if (f->opt.ordered) {
		f->ordered = ordered_new(f->opt.max_ordered_bytes);
		if (!f->ordered) {
			pd_set_error(err, PD_ERR_NOMEM, 0, "out of memory");
			goto fail;
		}
	}
	return f;
fail:
	pd_close(f);
	return NULL;
}

pd_file *pd_open_mem(const void *buf, size_t len, const pd_options *opt, pd_error *err)
{
	if (!buf && len) {
		pd_set_error(err, PD_ERR_USAGE, 0, "NULL buffer");
		return NULL;
	}
	return open_with(in_open_mem(buf ? buf : "", len), opt, err);
}

pd_file *pd_open_reader(pd_read_fn read, void *ctx, const pd_options *opt, pd_error *err)
{
	if (!read) {
		pd_set_error(err, PD_ERR_USAGE, 0, "no read function");
		return NULL;
	}
	return open_with(in_open_reader(read, ctx), opt, err);
}

pd_file *pd_open_fd(int fd, const pd_options *opt, pd_error *err)
{
	struct stat st;
	pd_input *in;

	if (fstat(fd, &st) < 0) {
		pd_set_error(err, PD_ERR_IO, 0, "fstat: %s", strerror(errno));
		return NULL;
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0 && lseek(fd, 0, SEEK_CUR) == 0) {
		in = in_open_mmap(fd, (uint64_t)st.st_size, err);
		if (!in)
			return NULL;
	} else {
		in = in_open_fd_stream(fd);
	}
	return open_with(in, opt, err);
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* The data.N files of a directory-format recording, ascending N. */
static int list_data_files(pd_file *f, pd_error *err)
{
	DIR *d = opendir(f->dir);
	struct dirent *de;
	size_t cap = 0;

	if (!d) {
		pd_set_error(err, PD_ERR_IO, 0, "%s: %s", f->dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		char *end;
		unsigned long n;

		if (strncmp(de->d_name, "data.", 5) || !de->d_name[5])
			continue;
		errno = 0;
		n = strtoul(de->d_name + 5, &end, 10);
		if (*end || errno || n > 1000000)
			continue;
		if (f->nr_data_nums == cap) {
			unsigned *nn;

			if (cap >= 65536)
				break;
			cap = cap ? cap * 2 : 16;
			nn = realloc(f->data_nums, cap * sizeof(*nn));
			if (!nn) {
				closedir(d);
				pd_set_error(err, PD_ERR_NOMEM, 0, "out of memory");
				return -1;
			}
			f->data_nums = nn;
		}
		f->data_nums[f->nr_data_nums++] = (unsigned)n;
	}
	closedir(d);
	if (f->nr_data_nums)
		qsort(f->data_nums, f->nr_data_nums, sizeof(unsigned), cmp_unsigned);
	f->info.nr_data_files = 1 + f->nr_data_nums;
	return 0;
}

pd_file *pd_open_path(const char *path, const pd_options *opt, pd_error *err)
{
	struct stat st;
	pd_file *f;
	char *data_path = NULL;
	int fd;

	if (!strcmp(path, "-"))
		return pd_open_fd(0, opt, err);
	if (stat(path, &st) < 0) {
		pd_set_error(err, PD_ERR_IO, 0, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		size_t n = strlen(path) + 8;

		data_path = malloc(n);
		if (!data_path) {
			pd_set_error(err, PD_ERR_NOMEM, 0, "out of memory");
			return NULL;
		}
		snprintf(data_path, n, "%s/data", path);
	}
	fd = open(data_path ? data_path : path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pd_set_error(err, PD_ERR_IO, 0, "%s: %s", data_path ? data_path : path,
			     strerror(errno));
		free(data_path);
		return NULL;
	}
	free(data_path);
	f = pd_open_fd(fd, opt, err);
	if (!f) {
		close(fd);
		return NULL;
	}
	if (!in_is_stream(f->main_in)) {
		close(fd);	/* the mapping stays */
	} else {
		f->own_fd = fd;
	}
	if (S_ISDIR(st.st_mode)) {
		f->info.is_directory = 1;
		f->dir = strdup(path);
		if (!f->dir || list_data_files(f, err) < 0) {
			if (!f->dir)
				pd_set_error(err, PD_ERR_NOMEM, 0, "out of memory");
			pd_close(f);
			return NULL;
		}
	}
	return f;
}

/* ---- the record loop ------------------------------------------------------ */

/* Move on to the next data.N file; 0 when there is none. */
static int next_data_file(pd_file *f, pd_error *err)
{
	while (f->next_data < f->nr_data_nums) {
		unsigned k = f->next_data++;
		size_t n = strlen(f->dir) + 32;
		char *path = malloc(n);
		struct stat st;
		int fd;
		pd_input *in;

		if (!path) {
			pd_set_error(err, PD_ERR_NOMEM, 0, "out of memory");
			return -1;
		}
		snprintf(path, n, "%s/data.%u", f->dir, f->data_nums[k]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			pd_set_error(err, PD_ERR_IO, 0, "%s: %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			free(path);
			return -1;
		}
		free(path);
		if (st.st_size == 0) {
			close(fd);
			continue;
		}
		in = in_open_mmap(fd, (uint64_t)st.st_size, err);
		close(fd);
		if (!in)
			return -1;
		if (f->in != f->main_in)
			in_free(f->in);
		f->in = in;
		f->cur_file = f->data_nums[k] + 1;
		return 1;
	}
	return 0;
}

/* Ends a pipe stream early on bytes that are not a record. */
static int pipe_garbage(pd_file *f, uint64_t at, const char *what)
{
	pd_warn(f, "offset %llu: %s; treating the rest of the stream as trailing garbage",
		(unsigned long long)at, what);
	return 0;
}

/* The end of an unfinished recording's records: perf was stopped while
 * it wrote the last one, which is dropped; the main file's input ends
 * there (a directory's data.N files still follow). 1 when the input is a
 * stream (nothing more comes), else 0. */
static int unfinished_cut(pd_file *f, uint64_t at, long have, const char *what)
{
	pd_warn(f, "offset %llu: the file ends inside %s (%ld bytes); %llu whole records "
		"recovered before it", (unsigned long long)at, what, have,
		(unsigned long long)f->stats.total_records);
	if (in_is_stream(f->in))
		return 1;
	in_set_end(f->in, at);
	return 0;
}

/* The next record of the input(s): 1 with its bytes, size and offset set,
 * 0 at the end. */
static int read_record(pd_file *f, const uint8_t **pp, uint32_t *psize, uint64_t *poff,
		       pd_error *err)
{
	const uint8_t *p;
	long n;
	uint32_t type;
	uint16_t size;
	uint64_t off;
	int pipe = f->info.mode == PD_MODE_PIPE;

	if (f->pending_skip) {
		uint64_t skip = f->pending_skip;

		f->pending_skip = 0;
		if (in_skip(f->in, skip, err) < 0) {
			if (pipe)
				return pipe_garbage(f, in_pos(f->in), "stream ends inside a payload");
			return -1;
		}
		f->stats.bytes_read += skip;
	}
	if (!f->stream_data_end) {
		size = (uint16_t)in_take_buffered(f->in, f->swap, &p, &off);
		if (size) {
			uint32_t t = load_u32(p, f->swap);

			if (pipe && (t >= 0x10000 || t == 0) && f->stats.total_records > 0)
				return pipe_garbage(f, off, "bytes that are not a record header");
			f->stats.bytes_read += size;
			*pp = p;
			*psize = size;
			*poff = off;
			return 1;
		}
	}
again:
	for (;;) {
		int at_end;

		off = in_pos(f->in);
		n = in_peek(f->in, 8, &p, err);
		if (n < 0)
			return -1;
		/* a file-mode stream's data section ends before its features */
		at_end = f->stream_data_end && f->cur_file == 0 && off >= f->stream_data_end;
		if (n == 0 || at_end) {
			int r;

			if (in_is_stream(f->in) && f->info.mode == PD_MODE_FILE && f->cur_file == 0 &&
			    !f->tail_read) {
				f->tail_read = 1;
				stream_read_tail(f);
			}
			r = f->dir ? next_data_file(f, err) : 0;
			if (r <= 0)
				return r;
			continue;
		}
		break;
	}
	if (n < 8) {
		if (pipe)
			return pipe_garbage(f, off, "stream ends inside a record header");
		if (f->unfinished && f->cur_file == 0) {
			if (unfinished_cut(f, off, n, "a record header"))
				return 0;
			goto again;
		}
		pd_set_error(err, PD_ERR_TRUNCATED, off,
			     "data ends inside a record header (%ld of 8 bytes)", n);
		return -1;
	}
	type = load_u32(p, f->swap);
	size = load_u16(p + 6, f->swap);
	if (pipe && (type >= 0x10000 || type == 0) && f->stats.total_records > 0)
		return pipe_garbage(f, off, "bytes that are not a record header");
	if (size < 8 && f->unfinished && f->cur_file == 0) {
		if (unfinished_cut(f, off, n, "a record header of size 0"))
			return 0;
		goto again;
	}
	if (size < 8) {
		pd_set_error(err, PD_ERR_BAD_RECORD, off,
			     "record size %u smaller than its 8-byte header (type %u)", size, type);
		return -1;
	}
	n = in_peek(f->in, size, &p, err);
	if (n < 0)
		return -1;
	if (n < size) {
		if (pipe)
			return pipe_garbage(f, off, "stream ends inside a record");
		if (f->unfinished && f->cur_file == 0) {
			if (unfinished_cut(f, off, n, "a record"))
				return 0;
			goto again;
		}
		pd_set_error(err, PD_ERR_TRUNCATED, off,
			     "record of %u bytes (type %u) runs past the end of the data section",
			     size, type);
		return -1;
	}
	if (f->stream_data_end && f->cur_file == 0 && off + size > f->stream_data_end) {
		pd_set_error(err, PD_ERR_TRUNCATED, off,
			     "record of %u bytes runs past the end of the data section", size);
		return -1;
	}
	in_advance(f->in, size);
	f->stats.bytes_read += size;
	*pp = p;
	*psize = size;
	*poff = off;
	return 1;
}

/* Pipe mode and perf inject: attrs, features and names arriving as records. */
static int apply_header_record(pd_file *f, const uint8_t *rec, uint32_t size, pd_record *r,
			       pd_error *err)
{
	switch (r->type) {
	case PD_RECORD_HEADER_ATTR: {
		pd_attr a;
		uint32_t asz;

		/* file mode already has its attrs from the header: the record
		 * (left by perf inject) defines nothing new */
		r->u.attr = NULL;
		if (f->info.mode != PD_MODE_PIPE)
			return 0;
		if (size < 8 + 64) {
			pd_set_error(err, PD_ERR_BAD_RECORD, r->offset,
				     "ATTR record of %u bytes, expected at least 72", size);
			return -1;
		}
		asz = load_u32(rec + 12, f->swap);
		if (asz == 0)
			asz = 64;
		if (asz < 64 || asz > size - 8) {
			pd_set_error(err, PD_ERR_BAD_RECORD, r->offset,
				     "ATTR record: attr size %u does not fit in %u bytes", asz, size);
			return -1;
		}
		attr_decode(&a, rec + 8, asz, f->swap);
		if (ev_add(f, &a, rec + 8 + asz, (size - 8 - asz) / 8, f->swap, err, r->offset) < 0)
			return -1;
		/* a name for now; EVENT_UPDATE or EVENT_DESC may improve it */
		ev_name_defaults(f);
		f->pipe_seen_attr = 1;
		r->u.attr = f->events[f->nr_events - 1];
		return 0;
	}
	case PD_RECORD_HEADER_EVENT_TYPE:
		/* u64 event_id; char name[64] */
		if (size >= 16 + 1)
			legacy_add(f, load_u64(rec + 8, f->swap), (const char *)rec + 16, size - 16);
		return 0;
	case PD_RECORD_EVENT_UPDATE: {
		/* u64 type; u64 id; then for NAME (2): char name[] */
		uint64_t t, id;
		const pd_event *ev;

		if (size < 24)
			return 0;
		t = load_u64(rec + 8, f->swap);
		id = load_u64(rec + 16, f->swap);
		ev = ev_by_id(f, id);
		if (t == 2 && ev)
			ev_set_name(f, ev->index, (const char *)rec + 24, size - 24, 1);
		return 0;
	}
	case PD_RECORD_HEADER_FEATURE: {
		/* u64 feat_id; data */
		uint64_t id;

		if (size < 16) {
			pd_set_error(err, PD_ERR_BAD_RECORD, r->offset,
				     "FEATURE record of %u bytes, expected at least 16", size);
			return -1;
		}
		id = load_u64(rec + 8, f->swap);
		r->u.feature = id < 256 ? (int)id : -1;
		if (id >= 256) {
			pd_warn(f, "offset %llu: FEATURE record with feature id %llu, ignored",
				(unsigned long long)r->offset, (unsigned long long)id);
			return 0;
		}
		/* perf ends the pipe header's features with an empty record
		 * whose id is its HEADER_LAST_FEATURE: a marker, not a feature */
		if (size == 16 && id > PD_FEAT_PMU_CAPS)
			return 0;
		if (feat_add(f->feats, (int)id, rec + 16, size - 16, f->swap, r->offset + 16) < 0) {
			pd_set_error(err, PD_ERR_NOMEM, r->offset, "out of memory");
			return -1;
		}
		if (id == PD_FEAT_EVENT_DESC)
			ev_name_defaults(f);
		return 0;
	}
	case PD_RECORD_HEADER_TRACING_DATA:
		/* u32 size; perf's pipe mode puts the tracing data after the
		 * record, simpleperf inside it (then the record covers it) */
		if (!r->compressed && size >= 12) {
			uint32_t tsz = load_u32(rec + 8, f->swap);

			if ((uint64_t)tsz + 12 > size)
				f->pending_skip = tsz;
		}
		return 0;
	default:
		return 0;
	}
}

/* Fill *r from one record's bytes and apply what it means to the handle. */
static int deliver(pd_file *f, const uint8_t *rec, uint32_t size, uint64_t off, unsigned file,
		   int compressed, pd_record *r, pd_error *err)
{
	uint32_t type = load_u32(rec, f->swap);

	r->type = type;
	r->misc = load_u16(rec + 4, f->swap);
	r->size = size;
	r->offset = off;
	r->data_file = file;
	r->compressed = compressed;
	r->raw = rec;
	r->has_sample_id = 0;
	if (type != PD_RECORD_SAMPLE)
		f->clean_rec = NULL;	/* the union now holds something else */

	/* Google's pre-upstream pipe header records (perf 3.3): features as
	 * type 66 + feature id, before any attr, instead of FEATURE records. */
	if (f->info.mode == PD_MODE_PIPE && !f->pipe_seen_attr && !compressed &&
	    (f->legacy_pipe || (f->stats.total_records == 0 && type >= 69 && type <= 79)) &&
	    type >= 67 && type <= 80) {
		int feat = (int)type - 66;

		f->legacy_pipe = 1;
		if (feat_add(f->feats, feat, rec + 8, size - 8, f->swap, off + 8) < 0) {
			pd_set_error(err, PD_ERR_NOMEM, off, "out of memory");
			return -1;
		}
		r->type = type = PD_RECORD_HEADER_FEATURE;
		r->u.feature = feat;
		f->stats.records[type]++;
		f->stats.total_records++;
		return 1;
	}

	if (type < PD_RECORD_TYPE_MAX)
		f->stats.records[type]++;
	else
		f->stats.unknown_records++;
	f->stats.total_records++;

	if (type == PD_RECORD_SAMPLE)
		return sample_decode(f, rec, size, r, err) < 0 ? -1 : 1;
	if (type < 64)
		return record_decode(f, rec, size, r, err) < 0 ? -1 : 1;

	switch (type) {
	case PD_RECORD_COMPRESSED:
	case PD_RECORD_COMPRESSED2: {
		const uint8_t *payload = rec + 8;
		uint64_t plen = size - 8;

		if (type == PD_RECORD_COMPRESSED2) {
			/* u64 data_size; payload; padding to 8 bytes */
			if (size < 16) {
				pd_set_error(err, PD_ERR_BAD_RECORD, off,
					     "COMPRESSED2 record of %u bytes, expected at least 16",
					     size);
				return -1;
			}
			plen = load_u64(rec + 8, f->swap);
			payload = rec + 16;
			if (plen > (uint64_t)size - 16) {
				pd_set_error(err, PD_ERR_BAD_RECORD, off,
					     "COMPRESSED2 data_size %llu larger than the record (%u)",
					     (unsigned long long)plen, size);
				return -1;
			}
		}
		r->u.compressed.data_size = plen;
		r->u.compressed.decompressed = 0;
		if (compressed) {
			pd_warn(f, "offset %llu: compressed record inside compressed data, skipped",
				(unsigned long long)off);
			return 1;
		}
		if (!f->decomp) {
			f->decomp = decomp_new(f->opt.max_decompressed);
			if (!f->decomp) {
				pd_set_error(err, PD_ERR_NOMEM, off, "out of memory for zstd");
				return -1;
			}
		}
		if (decomp_feed(f->decomp, payload, (size_t)plen, off, err) < 0)
			return -1;
		f->draining = 1;
		f->comp_offset = off;
		f->comp_file = file;
		return 1;
	}
	case PD_RECORD_AUXTRACE:
		/* the trace data (u64 size at +8) follows the record */
		if (record_decode(f, rec, size, r, err) < 0)
			return -1;
		if (!compressed)
			f->pending_skip = r->u.auxtrace.size;
		return 1;
	case PD_RECORD_HEADER_BUILD_ID:
		return record_decode(f, rec, size, r, err) < 0 ? -1 : 1;
	default:
		return apply_header_record(f, rec, size, r, err) < 0 ? -1 : 1;
	}
}

int pd_redecode(pd_file *f, const uint8_t *rec, uint32_t size, pd_record *r, pd_error *err)
{
	int rc = 0;

	f->scratch_used = 0;
	f->quiet = 1;
	r->type = load_u32(rec, f->swap);
	r->misc = load_u16(rec + 4, f->swap);
	r->size = size;
	r->raw = rec;
	r->has_sample_id = 0;
	if (r->type != PD_RECORD_SAMPLE)
		f->clean_rec = NULL;
	if (r->type == PD_RECORD_SAMPLE)
		rc = sample_decode(f, rec, size, r, err);
	else if (r->type < 64)
		rc = record_decode(f, rec, size, r, err);
	f->quiet = 0;
	return rc < 0 ? -1 : 1;
}

/* One record in file order, not yet sorted. */
int pd_next_unordered(pd_file *f, pd_record *r, pd_error *err)
{
	for (;;) {
		const uint8_t *p;
		uint32_t size;
		uint64_t off;
		int rc;

		f->scratch_used = 0;
		if (f->draining) {
			rc = decomp_next(f->decomp, f->swap, &p, &size, err);
			if (rc < 0)
				return -1;
			if (rc > 0) {
				f->stats.bytes_decompressed += size;
				return deliver(f, p, size, f->comp_offset, f->comp_file, 1, r, err);
			}
			f->draining = 0;
		}
		rc = read_record(f, &p, &size, &off, err);
		if (rc <= 0) {
			if (rc == 0 && f->decomp && decomp_pending(f->decomp))
				pd_warn(f, "%zu bytes of an incomplete record at the end of the "
					"compressed data", decomp_pending(f->decomp));
			return rc;
		}
		return deliver(f, p, size, off, f->cur_file, 0, r, err);
	}
}

int pd_next(pd_file *f, pd_record *r, pd_error *err)
{
	int rc;

	if (!f || !r) {
		pd_set_error(err, PD_ERR_USAGE, 0, "NULL handle or record");
		return -1;
	}
	if (f->done) {
		if (err)
			*err = f->done_err;
		return f->done_rc;
	}
	if (f->ordered)
		rc = ordered_next(f, r, err);	/* asks keep_sample itself */
	else
		do
			rc = pd_next_unordered(f, r, err);
		while (rc > 0 && r->type == PD_RECORD_SAMPLE && f->opt.keep_sample &&
		       r->u.sample.event && !f->opt.keep_sample(f->opt.keep_ctx, &r->u.sample));
	if (rc <= 0) {
		f->done = 1;
		f->done_rc = rc;
		if (rc < 0 && err)
			f->done_err = *err;
		if (rc == 0)
			ev_name_defaults(f);
	}
	return rc;
}

/* ---- accessors ------------------------------------------------------------- */

const pd_info *pd_get_info(const pd_file *f)
{
	return &f->info;
}

size_t pd_nr_events(const pd_file *f)
{
	return f->nr_events;
}

const pd_event *pd_get_event(const pd_file *f, size_t i)
{
	return i < f->nr_events ? f->events[i] : NULL;
}

const pd_event *pd_event_by_id(const pd_file *f, uint64_t id)
{
	return ev_by_id(f, id);
}

size_t pd_nr_warnings(const pd_file *f)
{
	return f->nr_warnings + feat_nr_warnings(f->feats);
}

const char *pd_warning(const pd_file *f, size_t i)
{
	if (i < f->nr_warnings)
		return f->warnings[i];
	return feat_warning(f->feats, i - f->nr_warnings);
}

const pd_stats *pd_get_stats(const pd_file *f)
{
	return &f->stats;
}

const pd_header *pd_get_header(const pd_file *f)
{
	return feat_header(f->feats);
}

int pd_has_feature(const pd_file *f, int feat)
{
	return feat_has(f->feats, feat);
}

size_t pd_features(const pd_file *f, int *out, size_t max)
{
	return feat_list(f->feats, out, max);
}

const void *pd_feature_raw(const pd_file *f, int feat, size_t *len)
{
	return feat_raw(f->feats, feat, len);
}

char *pd_feature_json(const pd_file *f, int feat)
{
	return feat_json(f->feats, feat);
}

/*
 * dso.h - symbol tables of binaries (ELF files, kallsyms, perf-PID.map JIT
 * maps), loaded once and shared read-only between threads through a cache.
 *
 * A pd_dso is identified by what the recording saw: its path and, when the
 * recording had one, its build-id. The table is loaded on first lookup from
 * the best matching file (build-id cache, separate debug files, the binary
 * under the --symfs root). A file whose build-id differs from the recorded
 * one is never used for names.
 */
#ifndef PERFHUB_DSO_H
#define PERFHUB_DSO_H

#include <stddef.h>
#include <stdint.h>

typedef struct pd_dso pd_dso;
typedef struct pd_dso_cache pd_dso_cache;

enum pd_dso_kind {
	PD_DSO_ELF = 0,		/* a user-space ELF file: lookups by file offset */
	PD_DSO_KALLSYMS,	/* kernel symbols: lookups by address */
	PD_DSO_PERFMAP,		/* /tmp/perf-PID.map: lookups by address */
};

/* Where files are looked for; strings are copied by the cache's users as
 * part of the key, so one cache can serve different roots. */
typedef struct pd_dso_paths {
	const char *symfs;	/* root prefixed to recorded paths; NULL = "" */
	const char *buildid_dir;/* perf's build-id cache; NULL = $HOME/.debug */
	const char *debug_dir;	/* separate debug files; NULL = /usr/lib/debug */
	const char *debuginfo_dir;/* files uploaded by build-id, tried first:
				     DIR/.build-id/xx/rest/{elf,debug}; NULL = none */
} pd_dso_paths;

/* max_bytes bounds the memory of symbol tables no one holds; 0 = default. */
pd_dso_cache *pd_dso_cache_new(size_t max_bytes);
void pd_dso_cache_free(pd_dso_cache *c);

/* Last resort for an ELF dso with a build-id that no local file matched
 * (the daemon asks debuginfod): write the path of a file to try into
 * `path` and return 0, or return -1. Called from the thread that loads the
 * table, once per dso; it may block (the caller bounds the time). */
typedef int (*pd_dso_fetch_fn)(void *ctx, const uint8_t *build_id, size_t build_id_size,
			       char *path, size_t pathlen);
void pd_dso_cache_set_fetch(pd_dso_cache *c, pd_dso_fetch_fn fn, void *ctx);

/* Debuginfo for this build-id arrived: dsos loaded before are forgotten so
 * the next pd_dso_get() looks again (held references stay valid). */
void pd_dso_cache_forget(pd_dso_cache *c, const uint8_t *build_id, size_t build_id_size);

/* Find or add the dso; a reference the caller returns with pd_dso_put().
 * build_id may be NULL (unknown). NULL only when out of memory. */
pd_dso *pd_dso_get(pd_dso_cache *c, int kind, const char *path,
		   const uint8_t *build_id, size_t build_id_size,
		   const pd_dso_paths *paths);
void pd_dso_put(pd_dso_cache *c, pd_dso *d);
/* One more reference to a dso already held (NULL is ignored). */
void pd_dso_ref(pd_dso_cache *c, pd_dso *d);

/*
 * The symbol covering `addr` (a file offset for ELF dsos, an address for
 * the others), loading the table on first use. Returns its name (valid
 * while the reference is held) and the offset into it, or NULL.
 */
const char *pd_dso_lookup(pd_dso *d, uint64_t addr, uint64_t *sym_off);
/* A number no other dso of the same cache has or had (from 1): unlike the
 * pointer, it is never reused, so callers may key lookups by it. */
uint64_t pd_dso_serial(const pd_dso *d);

/* Why the table is empty, once loaded: NULL when it is not, else a
 * sentence ("build-id mismatch: ... not used for names"). */
const char *pd_dso_problem(pd_dso *d);
size_t pd_dso_nr_symbols(pd_dso *d);

/* Load the table and do now what its first lookups would (for loading
 * ahead, preload.h). */
void pd_dso_prepare(pd_dso *d);

/* Whether the table is loaded (lookups will not wait for it). Never
 * loads. */
int pd_dso_loaded(const pd_dso *d);
/* Open the DWARF that names its inlined frames, as the first
 * pd_dso_inlines would: opening decompresses its debug sections (a
 * distribution's libc: ~70 ms). */
void pd_dso_prepare_inlines(pd_dso *d);

/* What binutils may name the innermost function by instead of its DWARF
 * name (pd_inl_naming): the answer depends on the questions asked before
 * in the same run, which the caller keeps. */
typedef struct pd_dso_naming {
	uint64_t func;		/* pd_inl_naming.func; UINT64_MAX: names[0] stands */
	const char *sym;	/* the ELF symbol covering the address, or NULL */
	int sym_at_low;		/* it starts where the function does */
} pd_dso_naming;

/* The functions at `off` (a file offset) as perf names the frames of
 * DWARF-unwound stacks (addr2line -i on the file with the symbols): the
 * function there and, when it is an inlined copy, each one it was inlined
 * into, innermost first (inlines.h). Returns how many names were written
 * (0 when the DWARF has no function there). With how, names[0] is the
 * DWARF name and *how what the caller needs to name it as binutils
 * would; without, names[0] is the symbol when it starts where the
 * function does (as if every question were a later one). */
size_t pd_dso_inlines(pd_dso *d, uint64_t off, const char **names, size_t max,
		      pd_dso_naming *how);

/* The binary found for the dso (symfs, build-id cache, the recorded
 * path; build-id checked), loading it on first use; NULL when none. */
const char *pd_dso_file(pd_dso *d);

/* The file the symbols came from (a separate debug file, or the binary
 * itself), where DWARF is looked for; NULL when none. */
const char *pd_dso_debug_file(pd_dso *d);

/* What the recording saw: the path and build-id (size 0 when unknown). */
const char *pd_dso_path(const pd_dso *d);
const uint8_t *pd_dso_build_id(const pd_dso *d, size_t *size);

/* Memory held by loaded tables (for tests and the daemon's metrics). */
size_t pd_dso_cache_bytes(pd_dso_cache *c);
/* Memory held by the DWARF indexes of inlined frames (for tests). */
size_t pd_dso_cache_inline_bytes(pd_dso_cache *c);

#endif

/*
 * perfdata.h - libperfhub-parse: a streaming, bounds-checked reader of perf.data.
 *
 * One opaque handle (pd_file) per recording. No globals: many handles may be
 * used from many threads at once, each handle from one thread at a time.
 * Every byte of the input is untrusted; a malformed file yields a pd_error
 * naming the byte offset and what was expected, never a crash.
 *
 * Inputs: file mode (PERFILE2 and the legacy PERFFILE v1), pipe mode, either
 * byte order, and the perf.data directory format (data, data.N, kcore_dir/).
 *
 * Usage:
 *	pd_error err;
 *	pd_file *f = pd_open_path("perf.data", NULL, &err);
 *	pd_record r;
 *	int rc;
 *	while ((rc = pd_next(f, &r, &err)) > 0)
 *		if (r.type == PD_RECORD_SAMPLE) use(r.u.sample);
 *	if (rc < 0) report(&err);
 *	pd_close(f);
 *
 * All pointers in a pd_record stay valid until the next pd_next() or
 * pd_close() on the same handle. Decoded values are in host byte order.
 *
 * The records of a large regular file (4 MB or more) are read ahead by a
 * thread of the handle's own, which takes no signals and ends in pd_close().
 */
#ifndef PERFHUB_PERFDATA_H
#define PERFHUB_PERFDATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pd_file pd_file;

/* ---- errors ------------------------------------------------------------ */

enum pd_errcode {
	PD_OK = 0,
	PD_ERR_IO,		/* read/open/mmap failed (errno in message) */
	PD_ERR_MAGIC,		/* not a perf.data file */
	PD_ERR_TRUNCATED,	/* input ends before a structure does */
	PD_ERR_BAD_SIZE,	/* a size or count is impossible */
	PD_ERR_BAD_OFFSET,	/* a section lies outside the file or overlaps */
	PD_ERR_BAD_RECORD,	/* a record is malformed */
	PD_ERR_DECOMPRESS,	/* zstd failed or exceeded the cap */
	PD_ERR_LIMIT,		/* a configured limit was exceeded */
	PD_ERR_NOMEM,
	PD_ERR_USAGE,		/* API misuse */
};

typedef struct pd_error {
	int code;		/* enum pd_errcode */
	uint64_t offset;	/* byte offset in the input where it went wrong */
	char msg[240];		/* "what was expected", without the offset */
} pd_error;

/* "offset 0x1a2b: record size 0 smaller than its header" into buf. */
const char *pd_strerror(const pd_error *err, char *buf, size_t len);
const char *pd_errcode_name(int code);

/* ---- options ----------------------------------------------------------- */

struct pd_sample;

typedef struct pd_options {
	int ordered;		  /* deliver timed records sorted by time between
				     FINISHED_ROUNDs, as perf's ordered events */
	uint64_t max_decompressed; /* cap on all zstd output; 0 = default */
	uint64_t max_ordered_bytes; /* cap on queued bytes when ordered; 0 = default */
	int no_decode_samples;	  /* count only: skip sample field decoding */
	/* Samples this answers 0 for are not delivered (they are still
	 * counted): asked with each sample decoded up to its time (event,
	 * pid, tid, time), before it is queued for time order. NULL: all.
	 * For readers that share a recording's samples out between them. */
	int (*keep_sample)(void *ctx, const struct pd_sample *s);
	void *keep_ctx;
} pd_options;

#define PD_DEFAULT_MAX_DECOMPRESSED	(64ULL << 30)	/* 64 GiB; also capped at 2000x input */
#define PD_DEFAULT_MAX_ORDERED_BYTES	(32ULL << 20)

/* ---- opening ----------------------------------------------------------- */

/* A regular file (mmap'ed), a perf.data directory, or "-" for stdin. */
pd_file *pd_open_path(const char *path, const pd_options *opt, pd_error *err);
/* A file descriptor: mmap'ed when it is a regular file, else read as a
 * stream (pipe, socket). The fd is not closed by pd_close(). */
pd_file *pd_open_fd(int fd, const pd_options *opt, pd_error *err);
/* A byte stream through a callback (e.g. an HTTP upload). read returns the
 * number of bytes read, 0 at end, -1 on error. */
typedef long (*pd_read_fn)(void *ctx, void *buf, size_t len);
pd_file *pd_open_reader(pd_read_fn read, void *ctx, const pd_options *opt, pd_error *err);
/* A buffer in memory (not copied; must outlive the handle). Fuzzing, tests. */
pd_file *pd_open_mem(const void *buf, size_t len, const pd_options *opt, pd_error *err);
void pd_close(pd_file *f);

/* ---- the recording's shape ------------------------------------------- */

enum pd_mode { PD_MODE_FILE = 1, PD_MODE_PIPE = 2 };

typedef struct pd_info {
	int mode;		/* enum pd_mode */
	int version;		/* 1 for PERFFILE, 2 for PERFILE2 */
	int big_endian;		/* the file's byte order */
	int swapped;		/* file order differs from the host's */
	int is_directory;	/* opened from a perf.data directory */
	unsigned nr_data_files;	/* 1 + number of data.N files */
	uint64_t file_size;	/* bytes of the main file (0 for a stream) */
	uint64_t header_size;	/* file header size field */
	uint64_t attr_size;	/* file mode: size of one attrs-section entry */
	uint64_t data_offset, data_size;
	uint64_t feat_offset;	/* where feature sections start (file mode) */
} pd_info;

const pd_info *pd_get_info(const pd_file *f);

/* perf_event_attr, decoded into host order whatever size the file wrote
 * (PERF_ATTR_SIZE_VER0 64 bytes ... VER8 136 bytes; fields the file did not
 * carry are zero). */
typedef struct pd_attr {
	uint32_t type;
	uint32_t size;
	uint64_t config;
	uint64_t sample_period;	/* or sample_freq when freq is set */
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags;		/* the bitfield word: disabled, inherit, ... */
	uint32_t wakeup_events;
	uint32_t bp_type;
	uint64_t config1, config2;
	uint64_t branch_sample_type;
	uint64_t sample_regs_user;
	uint32_t sample_stack_user;
	int32_t clockid;
	uint64_t sample_regs_intr;
	uint32_t aux_watermark;
	uint16_t sample_max_stack;
	uint32_t aux_sample_size;
	uint64_t sig_data;
	uint64_t config3;
} pd_attr;

/* bits of pd_attr.flags used by the parser */
#define PD_ATTR_FREQ		(1ULL << 10)
#define PD_ATTR_SAMPLE_ID_ALL	(1ULL << 18)
#define PD_ATTR_EXCLUDE_USER	(1ULL << 4)
#define PD_ATTR_EXCLUDE_KERNEL	(1ULL << 5)
#define PD_ATTR_EXCLUDE_HV	(1ULL << 6)

typedef struct pd_event {
	unsigned index;		/* position among the recording's events */
	pd_attr attr;
	const char *name;	/* as perf names it; never NULL ("unknown" at worst) */
	const uint64_t *ids;
	size_t nr_ids;
	uint64_t nr_samples;	/* samples seen so far for this event */
} pd_event;

size_t pd_nr_events(const pd_file *f);
const pd_event *pd_get_event(const pd_file *f, size_t i);
/* The event a sample id belongs to (multi-event files); NULL if unknown. */
const pd_event *pd_event_by_id(const pd_file *f, uint64_t id);

/* ---- records ----------------------------------------------------------- */

enum pd_record_type {
	PD_RECORD_MMAP = 1,
	PD_RECORD_LOST = 2,
	PD_RECORD_COMM = 3,
	PD_RECORD_EXIT = 4,
	PD_RECORD_THROTTLE = 5,
	PD_RECORD_UNTHROTTLE = 6,
	PD_RECORD_FORK = 7,
	PD_RECORD_READ = 8,
	PD_RECORD_SAMPLE = 9,
	PD_RECORD_MMAP2 = 10,
	PD_RECORD_AUX = 11,
	PD_RECORD_ITRACE_START = 12,
	PD_RECORD_LOST_SAMPLES = 13,
	PD_RECORD_SWITCH = 14,
	PD_RECORD_SWITCH_CPU_WIDE = 15,
	PD_RECORD_NAMESPACES = 16,
	PD_RECORD_KSYMBOL = 17,
	PD_RECORD_BPF_EVENT = 18,
	PD_RECORD_CGROUP = 19,
	PD_RECORD_TEXT_POKE = 20,
	PD_RECORD_AUX_OUTPUT_HW_ID = 21,
	PD_RECORD_HEADER_ATTR = 64,
	PD_RECORD_HEADER_EVENT_TYPE = 65,
	PD_RECORD_HEADER_TRACING_DATA = 66,
	PD_RECORD_HEADER_BUILD_ID = 67,
	PD_RECORD_FINISHED_ROUND = 68,
	PD_RECORD_ID_INDEX = 69,
	PD_RECORD_AUXTRACE_INFO = 70,
	PD_RECORD_AUXTRACE = 71,
	PD_RECORD_AUXTRACE_ERROR = 72,
	PD_RECORD_THREAD_MAP = 73,
	PD_RECORD_CPU_MAP = 74,
	PD_RECORD_STAT_CONFIG = 75,
	PD_RECORD_STAT = 76,
	PD_RECORD_STAT_ROUND = 77,
	PD_RECORD_EVENT_UPDATE = 78,
	PD_RECORD_TIME_CONV = 79,
	PD_RECORD_HEADER_FEATURE = 80,
	PD_RECORD_COMPRESSED = 81,
	PD_RECORD_FINISHED_INIT = 82,
	PD_RECORD_COMPRESSED2 = 83,
	PD_RECORD_TYPE_MAX = 128,	/* counts are kept for types below this */
};

/* perf's name for a record type ("SAMPLE", "MMAP2", ...), as perf report
 * --stats prints it; NULL for types perf has no name for. */
const char *pd_record_name(uint32_t type);

/* sample_type bits (PERF_SAMPLE_*) */
#define PD_SAMPLE_IP		(1ULL << 0)
#define PD_SAMPLE_TID		(1ULL << 1)
#define PD_SAMPLE_TIME		(1ULL << 2)
#define PD_SAMPLE_ADDR		(1ULL << 3)
#define PD_SAMPLE_READ		(1ULL << 4)
#define PD_SAMPLE_CALLCHAIN	(1ULL << 5)
#define PD_SAMPLE_ID		(1ULL << 6)
#define PD_SAMPLE_CPU		(1ULL << 7)
#define PD_SAMPLE_PERIOD	(1ULL << 8)
#define PD_SAMPLE_STREAM_ID	(1ULL << 9)
#define PD_SAMPLE_RAW		(1ULL << 10)
#define PD_SAMPLE_BRANCH_STACK	(1ULL << 11)
#define PD_SAMPLE_REGS_USER	(1ULL << 12)
#define PD_SAMPLE_STACK_USER	(1ULL << 13)
#define PD_SAMPLE_WEIGHT	(1ULL << 14)
#define PD_SAMPLE_DATA_SRC	(1ULL << 15)
#define PD_SAMPLE_IDENTIFIER	(1ULL << 16)
#define PD_SAMPLE_TRANSACTION	(1ULL << 17)
#define PD_SAMPLE_REGS_INTR	(1ULL << 18)
#define PD_SAMPLE_PHYS_ADDR	(1ULL << 19)
#define PD_SAMPLE_AUX		(1ULL << 20)
#define PD_SAMPLE_CGROUP	(1ULL << 21)
#define PD_SAMPLE_DATA_PAGE_SIZE (1ULL << 22)
#define PD_SAMPLE_CODE_PAGE_SIZE (1ULL << 23)
#define PD_SAMPLE_WEIGHT_STRUCT	(1ULL << 24)

/* read_format bits */
#define PD_FORMAT_TOTAL_TIME_ENABLED	(1ULL << 0)
#define PD_FORMAT_TOTAL_TIME_RUNNING	(1ULL << 1)
#define PD_FORMAT_ID			(1ULL << 2)
#define PD_FORMAT_GROUP			(1ULL << 3)
#define PD_FORMAT_LOST			(1ULL << 4)

/* callchain context markers (PERF_CONTEXT_*) */
#define PD_CONTEXT_HV		((uint64_t)-32)
#define PD_CONTEXT_KERNEL	((uint64_t)-128)
#define PD_CONTEXT_USER		((uint64_t)-512)
#define PD_CONTEXT_GUEST	((uint64_t)-2048)
#define PD_CONTEXT_GUEST_KERNEL	((uint64_t)-2176)
#define PD_CONTEXT_GUEST_USER	((uint64_t)-2560)
#define PD_CONTEXT_MAX		((uint64_t)-4095)

/* record header misc bits */
#define PD_MISC_CPUMODE_MASK	7
#define PD_MISC_KERNEL		1
#define PD_MISC_USER		2
#define PD_MISC_HYPERVISOR	3
#define PD_MISC_GUEST_KERNEL	4
#define PD_MISC_GUEST_USER	5
#define PD_MISC_MMAP_BUILD_ID	(1 << 14)	/* MMAP2 carries a build-id */
#define PD_MISC_COMM_EXEC	(1 << 13)
#define PD_MISC_FORK_EXEC	(1 << 13)	/* FORK synthesized for a running
						   process: its maps follow */
#define PD_MISC_SWITCH_OUT	(1 << 13)

typedef struct pd_read_value {
	uint64_t value, id, lost;
} pd_read_value;

typedef struct pd_read {
	uint64_t time_enabled, time_running;
	uint64_t nr;			/* 1 unless PD_FORMAT_GROUP */
	const pd_read_value *values;	/* nr entries */
} pd_read;

typedef struct pd_branch_entry {
	uint64_t from, to, flags;
} pd_branch_entry;

typedef struct pd_regs {
	uint64_t abi;			/* 0 = none */
	uint64_t mask;
	unsigned nr;			/* popcount(mask) when abi != 0 */
	const uint64_t *regs;
} pd_regs;

/* identity of the sample_id_all trailer / the common sample fields */
typedef struct pd_sample_id {
	uint64_t fields;	/* which of the below were present (PD_SAMPLE_*) */
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id, stream_id;
	uint32_t cpu;
	uint64_t identifier;
} pd_sample_id;

typedef struct pd_sample {
	const pd_event *event;	/* the attr this sample belongs to (a sample
				   whose id matches no event is an error) */
	uint64_t fields;	/* the event's sample_type */
	uint64_t identifier;
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t id, stream_id;
	uint32_t cpu;
	uint64_t period;	/* attr's sample_period when PERIOD is absent */
	pd_read read;
	uint64_t nr_callchain;
	const uint64_t *callchain;	/* includes PD_CONTEXT_* markers */
	uint32_t raw_size;
	const void *raw;		/* in the file's byte order */
	uint64_t nr_branches;
	uint64_t branch_hw_idx;		/* when branch_sample_type has HW_INDEX */
	int has_branch_hw_idx;
	const pd_branch_entry *branches;
	pd_regs regs_user;
	uint64_t stack_user_size;	/* bytes in stack_user */
	uint64_t stack_user_dyn_size;	/* bytes of it that are valid */
	const void *stack_user;		/* the copied user stack, file order */
	uint64_t weight;		/* WEIGHT, or WEIGHT_STRUCT's var1_dw */
	uint16_t weight_var2, weight_var3;	/* WEIGHT_STRUCT only */
	uint64_t data_src;
	uint64_t transaction;
	pd_regs regs_intr;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size, code_page_size;
	uint64_t aux_size;
	const void *aux;
} pd_sample;

/* The weight stackcollapse-perf.pl gives a sample: the period `perf
 * script` prints (the attr's sample_period where the sample carries none:
 * a `record -c N` recording weighs N a sample); 1 where it prints none (a
 * tracepoint), prints 0, or prints no time before it (the script reads
 * the period after the time's colon). */
uint64_t pd_sample_script_period(const pd_sample *s);

typedef struct pd_mmap {	/* MMAP and MMAP2 */
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	/* MMAP2 only: */
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	uint8_t build_id[20];
	uint8_t build_id_size;	/* > 0 when misc has PD_MISC_MMAP_BUILD_ID */
	const char *filename;
} pd_mmap;

typedef struct pd_comm {
	uint32_t pid, tid;
	const char *comm;
	int exec;		/* misc has PD_MISC_COMM_EXEC */
} pd_comm;

typedef struct pd_task {	/* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
} pd_task;

typedef struct pd_lost {	/* LOST and LOST_SAMPLES (id 0) */
	uint64_t id, lost;
} pd_lost;

typedef struct pd_ksymbol {
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type, flags;
	const char *name;
} pd_ksymbol;

typedef struct pd_bpf_event {
	uint16_t type, flags;
	uint32_t id;
	uint8_t tag[8];
} pd_bpf_event;

typedef struct pd_switch {	/* SWITCH and SWITCH_CPU_WIDE */
	int out;
	int preempt;
	uint32_t next_prev_pid, next_prev_tid;	/* CPU_WIDE only */
} pd_switch;

typedef struct pd_build_id {	/* HEADER_BUILD_ID record and feature entries */
	uint32_t pid;
	uint16_t misc;
	uint8_t build_id[20];
	uint8_t size;		/* bytes of build_id that are meaningful */
	const char *filename;
} pd_build_id;

typedef struct pd_auxtrace {
	uint64_t size, offset, reference;
	uint32_t idx, tid, cpu;
} pd_auxtrace;

typedef struct pd_compressed {
	uint64_t data_size;	/* payload bytes */
	uint64_t decompressed;	/* 0: the payload is decompressed lazily as
				   its records are read, so its output size is
				   not known yet; see pd_stats.bytes_decompressed */
} pd_compressed;

typedef struct pd_record {
	uint32_t type;		/* enum pd_record_type, or an unknown value */
	uint16_t misc;
	uint32_t size;		/* whole record, header included */
	uint64_t offset;	/* byte offset in the input; for records from a
				   COMPRESSED payload, the COMPRESSED record's */
	unsigned data_file;	/* 0 = data/main file, N+1 = data.N */
	int compressed;		/* came out of a COMPRESSED(2) payload */
	const void *raw;	/* whole record, file byte order */
	int has_sample_id;	/* sample_id below is valid */
	pd_sample_id sample_id;	/* sample_id_all trailer of non-sample records */
	union {
		pd_sample sample;
		pd_mmap mmap;
		pd_comm comm;
		pd_task task;
		pd_lost lost;
		pd_ksymbol ksymbol;
		pd_bpf_event bpf_event;
		pd_switch sw;
		pd_build_id build_id;
		pd_auxtrace auxtrace;
		pd_compressed compressed;
		const pd_event *attr;	/* HEADER_ATTR: the event it defined
					   (pipe mode; NULL in file mode) */
		int feature;		/* HEADER_FEATURE: feature id */
	} u;
} pd_record;

/*
 * Next record. Returns 1 and fills *rec, 0 at the end of the data, -1 on
 * error (err filled; the handle is then finished). In pipe mode attrs and
 * features arrive as records and are applied before they are returned.
 * COMPRESSED/COMPRESSED2 records are returned themselves (for counting)
 * and then the records inside them, one by one.
 */
int pd_next(pd_file *f, pd_record *rec, pd_error *err);

/* Warnings the reader recovered from (trailing garbage after a pipe stream,
 * an ordered-events overflow, an unknown feature ...): count and text. */
size_t pd_nr_warnings(const pd_file *f);
const char *pd_warning(const pd_file *f, size_t i);

/* ---- statistics (updated as records are read) ------------------------ */

typedef struct pd_stats {
	uint64_t records[PD_RECORD_TYPE_MAX];	/* by type; inner records of
						   COMPRESSED counted as theirs */
	uint64_t unknown_records;		/* type >= PD_RECORD_TYPE_MAX */
	uint64_t total_records;
	uint64_t lost;				/* sum of LOST.lost */
	uint64_t lost_samples;			/* sum of LOST_SAMPLES.lost */
	uint64_t bytes_read;			/* input bytes consumed */
	uint64_t bytes_decompressed;
	uint64_t first_time, last_time;		/* min/max sample time */
} pd_stats;

const pd_stats *pd_get_stats(const pd_file *f);

/* ---- header features ---------------------------------------------------- */

enum pd_feature {
	PD_FEAT_TRACING_DATA = 1,
	PD_FEAT_BUILD_ID = 2,
	PD_FEAT_HOSTNAME = 3,
	PD_FEAT_OSRELEASE = 4,
	PD_FEAT_VERSION = 5,
	PD_FEAT_ARCH = 6,
	PD_FEAT_NRCPUS = 7,
	PD_FEAT_CPUDESC = 8,
	PD_FEAT_CPUID = 9,
	PD_FEAT_TOTAL_MEM = 10,
	PD_FEAT_CMDLINE = 11,
	PD_FEAT_EVENT_DESC = 12,
	PD_FEAT_CPU_TOPOLOGY = 13,
	PD_FEAT_NUMA_TOPOLOGY = 14,
	PD_FEAT_BRANCH_STACK = 15,
	PD_FEAT_PMU_MAPPINGS = 16,
	PD_FEAT_GROUP_DESC = 17,
	PD_FEAT_AUXTRACE = 18,
	PD_FEAT_STAT = 19,
	PD_FEAT_CACHE = 20,
	PD_FEAT_SAMPLE_TIME = 21,
	PD_FEAT_SAMPLE_TOPOLOGY = 22,
	PD_FEAT_CLOCKID = 23,
	PD_FEAT_DIR_FORMAT = 24,
	PD_FEAT_BPF_PROG_INFO = 25,
	PD_FEAT_BPF_BTF = 26,
	PD_FEAT_COMPRESSED = 27,
	PD_FEAT_CPU_PMU_CAPS = 28,
	PD_FEAT_CLOCK_DATA = 29,
	PD_FEAT_HYBRID_TOPOLOGY = 30,
	PD_FEAT_PMU_CAPS = 31,
	PD_FEAT_MAX = 256,
};

/* perf's name ("hostname", "cpu_topology", ... lower case as perf's
 * feature table spells it); NULL for ids perf does not define. */
const char *pd_feature_name(int feat);

/* The header facts most consumers want, decoded once. Strings are NULL
 * when the feature is absent. Available after the header was read (file
 * mode) or after the stream delivered the feature (pipe mode): in pipe
 * mode read to the end first. */
typedef struct pd_header {
	const char *hostname, *os_release, *perf_version, *arch;
	const char *cpu_desc, *cpuid, *cmdline;	/* cmdline words joined by ' ' */
	int has_nr_cpus;
	uint32_t nr_cpus_online, nr_cpus_available;
	int has_total_mem;
	uint64_t total_mem;			/* kB, as stored */
	int has_sample_time;
	uint64_t first_sample_ns, last_sample_ns;
	int has_clockid;
	uint64_t clockid_res_ns;
	int compressed;				/* COMPRESSED feature present */
	uint32_t comp_type, comp_level;
	size_t nr_build_ids;
	const pd_build_id *build_ids;		/* BUILD_ID feature entries */
} pd_header;

const pd_header *pd_get_header(const pd_file *f);

/* Is feature `feat` present (its bit set / its record seen)? */
int pd_has_feature(const pd_file *f, int feat);
/* Feature ids present, ascending (known and unknown). Returns count. */
size_t pd_features(const pd_file *f, int *out, size_t max);
/* The raw bytes of a feature section (file order), or NULL. */
const void *pd_feature_raw(const pd_file *f, int feat, size_t *len);
/*
 * The feature decoded to JSON text (an object or value, perf's field names
 * in snake case), written into a malloc'ed string the caller frees; NULL
 * if absent. Unknown features decode to {"id": N, "size": N, "raw": true}.
 * A feature that is present but malformed decodes to {"error": "..."} and
 * adds a warning: a bad feature section is never fatal to the samples.
 */
char *pd_feature_json(const pd_file *f, int feat);

#ifdef __cplusplus
}
#endif
#endif /* PERFHUB_PERFDATA_H */

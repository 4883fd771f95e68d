/* pgschema.c - the PostgreSQL schema, one migration per version. */
#include "config.h"

#include "pgschema.h"

/* Each entry moves the schema from version i to i+1; never edit a shipped one. */
const char *const pgs_migrations[] = {
	/* 1: profiles with their job's lease, the parsed rows, debuginfo */
	"CREATE TABLE profiles ("
	" id bigserial PRIMARY KEY, sha256 text NOT NULL UNIQUE, name text,"
	" kind text NOT NULL, spool_path text NOT NULL, size bigint NOT NULL,"
	" uploaded_at bigint NOT NULL, status smallint NOT NULL, error text,"
	" error_offset bigint, parse_ms bigint, hostname text, first_ns bigint,"
	" last_ns bigint, nr_samples bigint, symbolized_pct double precision, header text,"
	" events text, records text, samples_per_event text, lost bigint,"
	" generation bigint NOT NULL DEFAULT 0,"
	/* the job: the claim's number fences late writes; the lease says who
	 * holds it and until when (the database's clock, not the nodes') */
	" attempt integer NOT NULL DEFAULT 0, lease_owner text, lease_until timestamptz,"
	" lease_expiries integer NOT NULL DEFAULT 0);"
	"CREATE INDEX profiles_queued ON profiles (id) WHERE status = 0;"
	"CREATE INDEX profiles_leased ON profiles (lease_until) WHERE status = 1;"
	"CREATE INDEX profiles_status ON profiles (status, id);"
	"CREATE INDEX profiles_host ON profiles (hostname);"
	"CREATE TABLE tags (profile_id bigint NOT NULL, key text NOT NULL, value text NOT NULL,"
	" PRIMARY KEY (profile_id, key, value));"
	"CREATE INDEX tags_kv ON tags (key, value);"
	"CREATE TABLE features (profile_id bigint NOT NULL, name text NOT NULL, json text,"
	" PRIMARY KEY (profile_id, name));"
	"CREATE TABLE events (profile_id bigint NOT NULL, idx integer NOT NULL, name text,"
	" type bigint, config bigint, sample_type bigint, period bigint, freq integer,"
	" samples bigint, PRIMARY KEY (profile_id, idx));"
	"CREATE TABLE record_counts (profile_id bigint NOT NULL, type text NOT NULL,"
	" count bigint, PRIMARY KEY (profile_id, type));"
	"CREATE TABLE strings (profile_id bigint NOT NULL, id integer NOT NULL, text text,"
	" PRIMARY KEY (profile_id, id));"
	"CREATE TABLE frames (profile_id bigint NOT NULL, id integer NOT NULL, name integer,"
	" dso integer, resolved smallint, kernel smallint NOT NULL DEFAULT 0,"
	" PRIMARY KEY (profile_id, id));"
	"CREATE TABLE stacks (profile_id bigint NOT NULL, id integer NOT NULL,"
	" parent integer NOT NULL, frame integer NOT NULL, PRIMARY KEY (profile_id, id));"
	"CREATE TABLE comms (profile_id bigint NOT NULL, seq integer NOT NULL, pid bigint,"
	" tid bigint, time bigint, comm integer, PRIMARY KEY (profile_id, seq));"
	"CREATE TABLE maps (profile_id bigint NOT NULL, seq integer NOT NULL, pid bigint,"
	" start bigint, len bigint, pgoff bigint, filename integer, build_id text,"
	" time bigint, PRIMARY KEY (profile_id, seq));"
	/* sample blocks are zstd already: stored as they are, not compressed again */
	"CREATE TABLE sample_blocks (profile_id bigint NOT NULL, seq integer NOT NULL,"
	" nr integer NOT NULL, min_time bigint NOT NULL, max_time bigint NOT NULL,"
	" data bytea NOT NULL, PRIMARY KEY (profile_id, seq));"
	"ALTER TABLE sample_blocks ALTER COLUMN data SET STORAGE EXTERNAL;"
	"CREATE TABLE sample_agg (profile_id bigint NOT NULL, event integer NOT NULL,"
	" pid bigint NOT NULL, tid bigint NOT NULL, comm integer NOT NULL,"
	" stack integer NOT NULL, samples bigint NOT NULL, period bigint NOT NULL,"
	" first_seq bigint NOT NULL, PRIMARY KEY (profile_id, event, pid, tid, comm, stack));"
	"CREATE TABLE frame_offsets (profile_id bigint NOT NULL, frame integer NOT NULL,"
	" dso_off bigint NOT NULL, PRIMARY KEY (profile_id, frame, dso_off));"
	"CREATE TABLE debuginfo (build_id text NOT NULL, kind text NOT NULL, path text NOT NULL,"
	" size bigint, symbols smallint, source text, added_at bigint,"
	" PRIMARY KEY (build_id, kind));"
	"CREATE TABLE profile_dsos (profile_id bigint NOT NULL, build_id text NOT NULL,"
	" path text NOT NULL, unresolved bigint, PRIMARY KEY (profile_id, build_id, path));"
	"CREATE INDEX profile_dsos_bid ON profile_dsos (build_id);",
	/* 2: strings keep a recording's bytes exactly (names in a perf.data
	 * file need not be UTF-8; a text column would refuse them), and the
	 * profile row counts the batches its parse committed, which makes a
	 * batch's transaction safe to run twice (after a commit whose answer
	 * was lost with the connection) */
	"ALTER TABLE strings ALTER COLUMN text TYPE bytea USING convert_to(text, 'UTF8');"
	"ALTER TABLE profiles ADD COLUMN batches bigint NOT NULL DEFAULT 0;",
	/* 3: off-CPU nanoseconds in the aggregate, and the samples of each leaf
	 * frame by address (annotation), as SQLite's schema 4 */
	"ALTER TABLE sample_agg ADD COLUMN offcpu bigint NOT NULL DEFAULT 0;"
	"CREATE TABLE leaf_addrs (profile_id bigint NOT NULL, frame integer NOT NULL,"
	" event integer NOT NULL, addr bigint NOT NULL, samples bigint NOT NULL,"
	" period bigint NOT NULL, offcpu bigint NOT NULL,"
	" PRIMARY KEY (profile_id, frame, event, addr));",
	/* 4: the bytes of each profile's rows and blocks as its parse wrote
	 * them: the data size retention counts (deleting a profile frees them
	 * inside the tables at once; the files shrink only with VACUUM FULL) */
	"ALTER TABLE profiles ADD COLUMN stored_bytes bigint NOT NULL DEFAULT 0;",
	/* 5: what SQLite's schema 5 and its side tables keep too: whether a
	 * recording is this machine's (a watched directory's: symbolized from
	 * its files), the parser's warnings, and the per-profile summaries the
	 * questions about many profiles read (summary_state: the generation a
	 * summary is of; a new parse deletes it with its other rows) */
	"ALTER TABLE profiles ADD COLUMN local smallint NOT NULL DEFAULT 0;"
	"ALTER TABLE profiles ADD COLUMN warnings text;"
	"CREATE TABLE summary_state (profile_id bigint PRIMARY KEY, generation bigint NOT NULL);"
	"CREATE TABLE summary_events (profile_id bigint NOT NULL, ord integer NOT NULL,"
	" event text NOT NULL, samples bigint NOT NULL, period bigint NOT NULL,"
	" PRIMARY KEY (profile_id, ord));"
	"CREATE TABLE summary_keys (kind integer NOT NULL, key text NOT NULL,"
	" profile_id bigint NOT NULL, ord integer NOT NULL, dso text,"
	" self_samples bigint NOT NULL, self_period bigint NOT NULL,"
	" total_samples bigint NOT NULL, total_period bigint NOT NULL,"
	" PRIMARY KEY (kind, key, profile_id, ord));"
	"CREATE INDEX summary_keys_profile ON summary_keys (profile_id);",
	/* 6: no stored aggregate, as SQLite's schema 7: a model sums it from
	 * the sample blocks */
	"DROP TABLE sample_agg;",
};
const int pgs_nr_migrations = (int)(sizeof(pgs_migrations) / sizeof(pgs_migrations[0]));

const char *const pgs_profile_tables[] = {
	"features", "events", "record_counts", "strings", "frames", "stacks", "comms",
	"maps", "sample_blocks", "frame_offsets", "leaf_addrs",
	"summary_state", "summary_events", "summary_keys",
};
const int pgs_nr_profile_tables =
	(int)(sizeof(pgs_profile_tables) / sizeof(pgs_profile_tables[0]));

/* match_recognize--1.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION match_recognize" to load this file. \quit

CREATE FUNCTION match_recognize(query text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'match_recognize'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION match_recognize(text) IS
'runs one "<input> MATCH_RECOGNIZE (...)" FROM item; call it with a column definition list (match_recognize_sql writes it)';
-- statement rewriter (src/mr_sql.c)
CREATE FUNCTION match_recognize_sql(query text)
RETURNS text
AS 'MODULE_PATHNAME', 'match_recognize_sql'
LANGUAGE C STRICT STABLE;

COMMENT ON FUNCTION match_recognize_sql(text) IS
'rewrites a statement so that each "<input> MATCH_RECOGNIZE (...) [AS alias]" FROM item becomes a call of match_recognize() with its column definition list';

CREATE FUNCTION match_recognize_create_view(name text, query text)
RETURNS void
AS 'MODULE_PATHNAME', 'match_recognize_create_view'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION match_recognize_create_view(text, text) IS
'CREATE VIEW name AS the query rewritten by match_recognize_sql; name may be schema-qualified and quoted';

-- custom scan (src/mr_scan_*.c): a planner support function, so that planning
-- a call of match_recognize() loads the library (and its planner hook)
-- before the planner chooses paths, also on a session's first query
CREATE FUNCTION match_recognize_support(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'match_recognize_support'
LANGUAGE C STRICT;

ALTER FUNCTION match_recognize(text) SUPPORT match_recognize_support;

-- bound queries (src/mr_scan_path.c, src/mr_sql.c): statement parameters,
-- and the form in which match_recognize_create_view stores a query
CREATE FUNCTION match_recognize(query text, VARIADIC params "any")
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'match_recognize'
LANGUAGE C VOLATILE
SUPPORT match_recognize_support;

COMMENT ON FUNCTION match_recognize(text, "any") IS
'runs one "<input> MATCH_RECOGNIZE (...)" FROM item whose $1, $2, ... are the arguments after it';

CREATE FUNCTION match_recognize_bound(query text, VARIADIC parts boolean[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'match_recognize_bound'
LANGUAGE C VOLATILE
SUPPORT match_recognize_support;

COMMENT ON FUNCTION match_recognize_bound(text, boolean[]) IS
'a MATCH_RECOGNIZE FROM item with its analysed parts (EXISTS subqueries), as match_recognize_create_view writes it; runs only as the MatchRecognize plan node';

CREATE FUNCTION match_recognize_bound_scan(internal)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'match_recognize_bound_scan'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION match_recognize_bound_scan(internal) IS
'internal: what the planner makes of match_recognize_bound(); runs only as the MatchRecognize plan node';

CREATE FUNCTION match_recognize_slot(slot integer, type anyelement)
RETURNS anyelement
AS 'MODULE_PATHNAME', 'match_recognize_slot'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION match_recognize_slot(integer, anyelement) IS
'in the parts of match_recognize_bound(): a value the engine computes, of the type of the second argument';

-- ---------------------------------------------------------------------------
-- Streaming mode (src/stream/): a MATCH_RECOGNIZE query run continuously over
-- the rows committed to a table.  The catalog is written only by the C
-- functions below and by the stream workers (directly, not through SQL), so
-- nobody can forge a stream that runs as another role.
CREATE TABLE match_recognize_stream (
	id integer PRIMARY KEY,
	name text NOT NULL UNIQUE,
	owner regrole NOT NULL,
	source regclass NOT NULL,
	output regclass NOT NULL,
	query text NOT NULL,
	search_path text NOT NULL,
	lateness text NOT NULL,
	lateness_type regtype NOT NULL,
	late_table regclass,
	idle_advance boolean NOT NULL,
	batch_size integer NOT NULL,
	slot_name name NOT NULL,
	created_at timestamptz NOT NULL,
	state text NOT NULL,
	last_error text,
	backfilled boolean NOT NULL,
	snapshot text,
	rows_in bigint NOT NULL,
	late_rows bigint NOT NULL,
	null_rows bigint NOT NULL,
	matches_out bigint NOT NULL,
	rows_out bigint NOT NULL,
	skip_degraded bigint NOT NULL,
	rows_pending bigint NOT NULL,
	rows_retained bigint NOT NULL,
	max_seen text,
	watermark text,
	next_seq bigint NOT NULL,
	next_part bigint NOT NULL,
	worker_pid integer,
	last_lsn pg_lsn,
	last_commit_time timestamptz,
	updated_at timestamptz,
	bound text,
	max_held_wal bigint NOT NULL DEFAULT 268435456,
	rows_stored bigint NOT NULL DEFAULT 0,
	checkpoint_lsn pg_lsn,
	restart_lsn pg_lsn,
	restart_seq bigint,
	checkpoint_state bytea,
	checkpointed_at timestamptz
);
REVOKE ALL ON match_recognize_stream FROM PUBLIC;
-- the query (its constants), the last error and the event times (values of
-- the source's rows) and the checkpoint (rows kept) are the owner's: the
-- view match_recognize_streams shows them to whom pg_stat_activity would
GRANT SELECT (id, name, owner, source, output, search_path, lateness, lateness_type, late_table, idle_advance, batch_size, slot_name, created_at, state, backfilled, rows_in, late_rows, null_rows, matches_out, rows_out, skip_degraded, rows_pending, rows_retained, next_seq, next_part, worker_pid, last_lsn, last_commit_time, updated_at, max_held_wal, rows_stored, checkpoint_lsn, restart_lsn, restart_seq, checkpointed_at)
	ON match_recognize_stream TO PUBLIC;

COMMENT ON COLUMN match_recognize_stream.bound IS
'the query as bound at creation (nodeToString of its analyses): the worker replays it and resolves no name';
COMMENT ON COLUMN match_recognize_stream.checkpoint_lsn IS
'the end of the last source transaction the last checkpoint covers';
COMMENT ON COLUMN match_recognize_stream.restart_lsn IS
'the commit of the oldest source transaction whose rows the last checkpoint keeps without storing them (NULL: none); the slot is not confirmed past it';

COMMENT ON TABLE match_recognize_stream IS
'streams (match_recognize_create_stream) and their workers'' progress; written only by the extension''s C code';

-- Interval join streams (src/stream/mr_stream_join*.c): what a stream runs
-- (NULL: a MATCH_RECOGNIZE query; 'interval join') and the event time below
-- which no output row can come any more.
ALTER TABLE match_recognize_stream
	ADD COLUMN kind text,
	ADD COLUMN output_watermark text;
-- the view shows kind to everybody and output_watermark (an event time of
-- the sources) to the roles that see watermark: PUBLIC may read kind only
GRANT SELECT (kind) ON match_recognize_stream TO PUBLIC;
COMMENT ON COLUMN match_recognize_stream.kind IS
'what the stream runs: NULL for a MATCH_RECOGNIZE query, ''interval join'' for an interval join';
COMMENT ON COLUMN match_recognize_stream.output_watermark IS
'the event time below which the stream writes no more output rows (interval joins: the watermark minus max(-lower, upper) of the bounds)';

CREATE FUNCTION match_recognize_create_stream(name text, query text, lateness anyelement DEFAULT NULL::text,
	late_table text DEFAULT NULL, idle_advance boolean DEFAULT false,
	batch_size integer DEFAULT 100000, max_held_wal text DEFAULT '256MB')
RETURNS void
AS 'MODULE_PATHNAME', 'match_recognize_create_stream'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION match_recognize_create_stream(text, text, anyelement, text, boolean, integer, text) IS
'creates the output table name and a stream that writes the final matches of query (SELECT * FROM <table> MATCH_RECOGNIZE (...)) to it as rows are committed';

CREATE FUNCTION match_recognize_drop_stream(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'match_recognize_drop_stream'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION match_recognize_drop_stream(text) IS
'stops a stream and removes its worker, replication slot and internal tables; the output table stays';

-- controls of a running stream (src/stream/mr_stream_sql.c)
CREATE FUNCTION match_recognize_pause_stream(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'match_recognize_pause_stream'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION match_recognize_pause_stream(text) IS
'stops the stream''s worker and keeps its replication slot: state paused (also across restarts) until match_recognize_resume_stream';

CREATE FUNCTION match_recognize_resume_stream(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'match_recognize_resume_stream'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION match_recognize_resume_stream(text) IS
'starts the worker of a paused stream again; it goes on from where it stopped';

CREATE FUNCTION match_recognize_alter_stream(name text, batch_size integer DEFAULT NULL,
	on_error text DEFAULT NULL, max_held_wal text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'match_recognize_alter_stream'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION match_recognize_alter_stream(text, integer, text, text) IS
'changes the settings given (NULL: unchanged) of a stream, restarting its worker';

CREATE FUNCTION match_recognize_rename_stream(name text, new_name text)
RETURNS void
AS 'MODULE_PATHNAME', 'match_recognize_rename_stream'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION match_recognize_rename_stream(text, text) IS
'renames a stream and its output table (in the same schema)';

-- DDL on a stream's tables: a DROP that takes the source, the output, the
-- late table or an internal table of a stream (CASCADE, DROP OWNED BY its
-- owner, DROP SCHEMA ... CASCADE) drops the stream with them; ALTER TABLE
-- of a source must leave its columns as the stream decodes them
CREATE FUNCTION match_recognize_stream_ddl()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'match_recognize_stream_ddl'
LANGUAGE C;

COMMENT ON FUNCTION match_recognize_stream_ddl() IS
'internal: the event triggers match_recognize_stream_drop and match_recognize_stream_alter';

CREATE EVENT TRIGGER match_recognize_stream_drop ON sql_drop
	EXECUTE FUNCTION match_recognize_stream_ddl();
CREATE EVENT TRIGGER match_recognize_stream_alter ON ddl_command_end
	WHEN TAG IN ('ALTER TABLE')
	EXECUTE FUNCTION match_recognize_stream_ddl();

CREATE FUNCTION match_recognize_stream_drop_extension()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'match_recognize_stream_drop_extension'
LANGUAGE C;

COMMENT ON FUNCTION match_recognize_stream_drop_extension() IS
'internal: the event trigger match_recognize_stream_drop_extension (DROP EXTENSION drops the slots no worker holds)';

CREATE EVENT TRIGGER match_recognize_stream_drop_extension ON ddl_command_start
	WHEN TAG IN ('DROP EXTENSION')
	EXECUTE FUNCTION match_recognize_stream_drop_extension();

-- dump and restore: pg_dump dumps the catalog's rows (the streams'
-- definitions); restoring one (COPY into the catalog fires this trigger,
-- which nothing else does: the C code writes the catalog directly) keeps
-- the definition and forgets what belonged to the dumped cluster (slot,
-- positions, checkpoint, bound query): state 'restored', until
-- match_recognize_restore_streams() starts it again from its source
SELECT pg_catalog.pg_extension_config_dump('match_recognize_stream', '');

CREATE FUNCTION match_recognize_stream_restored()
RETURNS trigger
LANGUAGE plpgsql
AS $fn$
BEGIN
	NEW.state := 'restored';
	NEW.last_error := 'restored from a dump without its replication slot and state; '
		'match_recognize_restore_streams() starts it again from its source';
	NEW.slot_name := '';
	NEW.bound := NULL;
	NEW.worker_pid := NULL;
	NEW.backfilled := false;
	NEW.snapshot := NULL;
	-- the worker's own record of the slot and of its starts
	NEW.confirmed_lsn := NULL;
	NEW.start_failures := 0;
	NEW.rows_in := 0;
	NEW.late_rows := 0;
	NEW.null_rows := 0;
	NEW.matches_out := 0;
	NEW.timeouts_out := NULL;
	NEW.rows_out := 0;
	NEW.skip_degraded := 0;
	NEW.rows_pending := 0;
	NEW.rows_retained := 0;
	NEW.rows_stored := 0;
	NEW.max_seen := NULL;
	NEW.watermark := NULL;
	NEW.next_seq := 1;
	NEW.next_part := 1;
	NEW.last_lsn := NULL;
	NEW.last_commit_time := NULL;
	NEW.checkpoint_lsn := NULL;
	NEW.restart_lsn := NULL;
	NEW.restart_seq := NULL;
	NEW.checkpoint_state := NULL;
	NEW.checkpointed_at := NULL;
	NEW.updated_at := pg_catalog.now();
	RETURN NEW;
END
$fn$;

COMMENT ON FUNCTION match_recognize_stream_restored() IS
'internal: a catalog row inserted by SQL (a restore) becomes a restored stream';

CREATE TRIGGER match_recognize_stream_restored BEFORE INSERT ON match_recognize_stream
	FOR EACH ROW EXECUTE FUNCTION match_recognize_stream_restored();

CREATE FUNCTION match_recognize_restore_streams()
RETURNS integer
AS 'MODULE_PATHNAME', 'match_recognize_restore_streams'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION match_recognize_restore_streams() IS
'after a restore: starts every restored stream again (new slot and internal tables, output recomputed from the source); returns how many';

CREATE FUNCTION match_recognize_stream_done_lsn(slot name)
RETURNS pg_lsn
AS 'MODULE_PATHNAME', 'match_recognize_stream_done_lsn'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION match_recognize_stream_done_lsn(name) IS
'the WAL position up to which the running worker of the stream with this slot has decoded and committed everything (NULL when it is not running)';

CREATE FUNCTION match_recognize_stream_caught_up(slot name)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'match_recognize_stream_caught_up'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION match_recognize_stream_caught_up(name) IS
'the last time the running worker of the stream with this slot had read all WAL then flushed and committed what was the stream''s (NULL when it is not running)';

CREATE FUNCTION match_recognize_stream_no_worker(slot name)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'match_recognize_stream_no_worker'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION match_recognize_stream_no_worker(name) IS
'since when the launcher has found no background worker slot free for the worker of the stream with this slot (NULL when it has not)';

CREATE FUNCTION match_recognize_stream_backfill(slot name, OUT rows bigint, OUT total bigint)
AS 'MODULE_PATHNAME', 'match_recognize_stream_backfill'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION match_recognize_stream_backfill(name) IS
'how far the backfill of the running worker of the stream with this slot has got: rows copied, rows to copy (NULLs when no backfill runs)';

CREATE VIEW match_recognize_streams AS
SELECT s.name,
	s.source,
	s.output,
	s.owner,
	CASE WHEN s.state <> 'failed' AND match_recognize_stream_no_worker(s.slot_name) IS NOT NULL
		THEN 'waiting' ELSE s.state END AS state,
	CASE WHEN v.visible THEN s.last_error ELSE '<insufficient privilege>' END AS last_error,
	s.rows_in,
	s.late_rows,
	s.null_rows,
	s.matches_out,
	s.rows_out,
	s.skip_degraded,
	s.rows_pending,
	s.rows_retained,
	s.rows_pending + s.rows_retained AS rows_buffered,
	CASE WHEN v.visible THEN s.watermark END AS watermark,
	CASE WHEN v.visible THEN s.max_seen END AS max_event_time,
	CASE WHEN p.caught_up > pg_catalog.now() - interval '1 second' THEN 0
		ELSE GREATEST(0, pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), p.done)) END::bigint AS lag_bytes,
	CASE WHEN p.caught_up > pg_catalog.now() - interval '1 second' THEN 0
		WHEN p.caught_up IS NOT NULL THEN EXTRACT(epoch FROM pg_catalog.now() - p.caught_up)
		WHEN pg_catalog.pg_current_wal_lsn() > p.done
		THEN EXTRACT(epoch FROM pg_catalog.now() - COALESCE(s.last_commit_time, s.created_at))
		ELSE 0 END::double precision AS lag_seconds,
	a.pid AS worker_pid,
	s.slot_name,
	r.wal_status AS slot_wal_status,
	s.late_table,
	s.lateness,
	s.idle_advance,
	s.created_at,
	s.updated_at,
	s.rows_stored,
	GREATEST(0, pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), r.restart_lsn))::bigint AS held_wal_bytes,
	s.max_held_wal,
	s.checkpoint_lsn,
	s.checkpointed_at,
	b.rows AS backfill_rows,
	b.total AS backfill_total,
	CASE WHEN v.visible THEN s.query ELSE '<insufficient privilege>' END AS query,
	s.kind,
	CASE WHEN v.visible THEN s.output_watermark END AS output_watermark
FROM match_recognize_stream s
-- what the source's rows and the query's constants reveal: to the owner,
-- superusers and pg_read_all_stats only, as pg_stat_activity shows query
CROSS JOIN LATERAL (SELECT CASE WHEN NOT EXISTS (SELECT FROM pg_catalog.pg_roles o WHERE o.oid = s.owner)
		THEN pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE')
		ELSE pg_catalog.pg_has_role(s.owner, 'USAGE') OR pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE') END AS visible) v
LEFT JOIN pg_catalog.pg_replication_slots r ON r.slot_name = s.slot_name
CROSS JOIN LATERAL (SELECT GREATEST(match_recognize_stream_done_lsn(s.slot_name),
	r.confirmed_flush_lsn, s.last_lsn) AS done,
	match_recognize_stream_caught_up(s.slot_name) AS caught_up) p
CROSS JOIN LATERAL match_recognize_stream_backfill(s.slot_name) b
LEFT JOIN pg_catalog.pg_stat_activity a
	ON a.pid = s.worker_pid AND a.backend_type = 'match_recognize stream';

GRANT SELECT ON match_recognize_streams TO PUBLIC;

COMMENT ON VIEW match_recognize_streams IS
'one row per stream: state, last error, counters, watermark and lag';

CREATE FUNCTION match_recognize_wait_stream(name text, timeout interval DEFAULT '60 seconds')
RETURNS boolean
LANGUAGE plpgsql VOLATILE
AS $fn$
DECLARE
	target pg_lsn := pg_catalog.pg_current_wal_insert_lsn();
	deadline timestamptz := pg_catalog.clock_timestamp() + timeout;
	st record;
BEGIN
	LOOP
		SELECT s.state, s.backfilled,
			GREATEST(@extschema@.match_recognize_stream_done_lsn(s.slot_name), s.last_lsn) AS done_lsn
		INTO st
		FROM @extschema@.match_recognize_stream s
		WHERE s.output = pg_catalog.to_regclass(match_recognize_wait_stream.name)
			OR s.name = match_recognize_wait_stream.name;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'stream "%" does not exist', match_recognize_wait_stream.name
				USING ERRCODE = 'undefined_object';
		END IF;
		IF st.state = 'failed' OR (st.backfilled AND st.done_lsn >= target) THEN
			RETURN true;
		END IF;
		IF pg_catalog.clock_timestamp() > deadline THEN
			RETURN false;
		END IF;
		PERFORM pg_catalog.pg_sleep(0.05);
	END LOOP;
END
$fn$;

COMMENT ON FUNCTION match_recognize_wait_stream(text, interval) IS
'waits until the stream has processed every change committed before the call (or has failed); false on timeout';

-- The stream worker's own columns (src/stream/mr_stream_worker.c).
ALTER TABLE match_recognize_stream
	ADD COLUMN start_failures integer NOT NULL DEFAULT 0;

COMMENT ON COLUMN match_recognize_stream.start_failures IS
'how many times in a row the worker stopped (an error or a crash) before it made progress; at 5 the stream is failed';

ALTER TABLE match_recognize_stream
	ADD COLUMN confirmed_lsn pg_lsn;

COMMENT ON COLUMN match_recognize_stream.confirmed_lsn IS
'how far the worker may confirm the stream''s replication slot, written before it does: a slot found further on was moved by someone else';

-- Time in patterns in streams (src/stream/mr_stream_timers.c): the timer
-- queue and the timeout rows, as of the worker's last cycle.
ALTER TABLE match_recognize_stream
	ADD COLUMN timers_pending bigint,
	ADD COLUMN timeouts_out bigint;

COMMENT ON COLUMN match_recognize_stream.timers_pending IS
'partitions whose run waits for the watermark to pass a deadline (a trailing absence, a timeout): the timer queue''s size';
COMMENT ON COLUMN match_recognize_stream.timeouts_out IS
'timed-out attempts written as timeout rows (WITH TIMEOUT ROWS); matches_out does not count them';

CREATE OR REPLACE VIEW match_recognize_streams AS
SELECT s.name,
	s.source,
	s.output,
	s.owner,
	CASE WHEN s.state <> 'failed' AND match_recognize_stream_no_worker(s.slot_name) IS NOT NULL
		THEN 'waiting' ELSE s.state END AS state,
	CASE WHEN v.visible THEN s.last_error ELSE '<insufficient privilege>' END AS last_error,
	s.rows_in,
	s.late_rows,
	s.null_rows,
	s.matches_out,
	s.rows_out,
	s.skip_degraded,
	s.rows_pending,
	s.rows_retained,
	s.rows_pending + s.rows_retained AS rows_buffered,
	CASE WHEN v.visible THEN s.watermark END AS watermark,
	CASE WHEN v.visible THEN s.max_seen END AS max_event_time,
	CASE WHEN p.caught_up > pg_catalog.now() - interval '1 second' THEN 0
		ELSE GREATEST(0, pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), p.done)) END::bigint AS lag_bytes,
	CASE WHEN p.caught_up > pg_catalog.now() - interval '1 second' THEN 0
		WHEN p.caught_up IS NOT NULL THEN EXTRACT(epoch FROM pg_catalog.now() - p.caught_up)
		WHEN pg_catalog.pg_current_wal_lsn() > p.done
		THEN EXTRACT(epoch FROM pg_catalog.now() - COALESCE(s.last_commit_time, s.created_at))
		ELSE 0 END::double precision AS lag_seconds,
	a.pid AS worker_pid,
	s.slot_name,
	r.wal_status AS slot_wal_status,
	s.late_table,
	s.lateness,
	s.idle_advance,
	s.created_at,
	s.updated_at,
	s.rows_stored,
	GREATEST(0, pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), r.restart_lsn))::bigint AS held_wal_bytes,
	s.max_held_wal,
	s.checkpoint_lsn,
	s.checkpointed_at,
	b.rows AS backfill_rows,
	b.total AS backfill_total,
	CASE WHEN v.visible THEN s.query ELSE '<insufficient privilege>' END AS query,
	s.kind,
	CASE WHEN v.visible THEN s.output_watermark END AS output_watermark,
	-- time in patterns
	s.timers_pending,
	s.timeouts_out
FROM match_recognize_stream s
-- what the source's rows and the query's constants reveal: to the owner,
-- superusers and pg_read_all_stats only, as pg_stat_activity shows query
CROSS JOIN LATERAL (SELECT CASE WHEN NOT EXISTS (SELECT FROM pg_catalog.pg_roles o WHERE o.oid = s.owner)
		THEN pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE')
		ELSE pg_catalog.pg_has_role(s.owner, 'USAGE') OR pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE') END AS visible) v
LEFT JOIN pg_catalog.pg_replication_slots r ON r.slot_name = s.slot_name
CROSS JOIN LATERAL (SELECT GREATEST(match_recognize_stream_done_lsn(s.slot_name),
	r.confirmed_flush_lsn, s.last_lsn) AS done,
	match_recognize_stream_caught_up(s.slot_name) AS caught_up) p
CROSS JOIN LATERAL match_recognize_stream_backfill(s.slot_name) b
LEFT JOIN pg_catalog.pg_stat_activity a
	ON a.pid = s.worker_pid AND a.backend_type = 'match_recognize stream';
-- ops3: streams whose slot is missing, a lateness changed while a stream
-- runs (src/stream/mr_stream_launcher.c, mr_stream_checkpoint.c)
ALTER TABLE match_recognize_stream
	ADD COLUMN checkpoint_lateness text,
	ADD COLUMN lateness_since pg_lsn;

COMMENT ON COLUMN match_recognize_stream.checkpoint_lateness IS
'the lateness the last checkpoint was written under (NULL: the lateness column''s)';
COMMENT ON COLUMN match_recognize_stream.lateness_since IS
'match_recognize_alter_stream(lateness => ...): the source transactions committed after this position are processed with the new lateness';

DROP FUNCTION match_recognize_alter_stream(text, integer, text, text);
CREATE FUNCTION match_recognize_alter_stream(name text, batch_size integer DEFAULT NULL,
	on_error text DEFAULT NULL, max_held_wal text DEFAULT NULL, lateness text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'match_recognize_alter_stream'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION match_recognize_alter_stream(text, integer, text, text, text) IS
'changes the settings given (NULL: unchanged) of a stream, restarting its worker; a new lateness applies to the source transactions committed after the stream''s last processed one';

-- a stream without its replication slot cannot get anywhere: say so at once
CREATE OR REPLACE FUNCTION match_recognize_wait_stream(name text, timeout interval DEFAULT '60 seconds')
RETURNS boolean
LANGUAGE plpgsql VOLATILE
AS $fn$
DECLARE
	target pg_lsn := pg_catalog.pg_current_wal_insert_lsn();
	deadline timestamptz := pg_catalog.clock_timestamp() + timeout;
	st record;
BEGIN
	LOOP
		SELECT s.state, s.backfilled,
			GREATEST(@extschema@.match_recognize_stream_done_lsn(s.slot_name), s.last_lsn) AS done_lsn,
			EXISTS (SELECT FROM pg_catalog.pg_replication_slots r WHERE r.slot_name = s.slot_name) AS has_slot
		INTO st
		FROM @extschema@.match_recognize_stream s
		WHERE s.output = pg_catalog.to_regclass(match_recognize_wait_stream.name)
			OR s.name = match_recognize_wait_stream.name;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'stream "%" does not exist', match_recognize_wait_stream.name
				USING ERRCODE = 'undefined_object';
		END IF;
		IF NOT st.has_slot AND st.state <> 'restored' THEN
			RAISE EXCEPTION 'stream "%" has no replication slot', match_recognize_wait_stream.name
				USING ERRCODE = 'object_not_in_prerequisite_state',
					DETAIL = 'Its state is ' || st.state || '; last_error in match_recognize_streams says why.',
					HINT = 'match_recognize_restore_streams() copies its source again and recomputes its output.';
		END IF;
		IF st.state = 'failed' OR (st.backfilled AND st.done_lsn >= target) THEN
			RETURN true;
		END IF;
		IF pg_catalog.clock_timestamp() > deadline THEN
			RETURN false;
		END IF;
		PERFORM pg_catalog.pg_sleep(0.05);
	END LOOP;
END
$fn$;

COMMENT ON FUNCTION match_recognize_wait_stream(text, interval) IS
'waits until the stream has processed every change committed before the call (or has failed); false on timeout, an error when the stream has no replication slot';
-- Output watermarks and chains of streams (src/stream/mr_stream_watermark.c):
-- the output columns a stream's output watermark bounds (NULL: none known),
-- and whether a stream follows its source's published watermark (created
-- without a lateness over another stream's output table).
ALTER TABLE match_recognize_stream
	ADD COLUMN watermark_columns text[],
	ADD COLUMN follows boolean;
GRANT SELECT (watermark_columns, follows) ON match_recognize_stream TO PUBLIC;

COMMENT ON COLUMN match_recognize_stream.watermark_columns IS
'the output columns whose values are never below the output watermark in an output row written after it was published';
COMMENT ON COLUMN match_recognize_stream.follows IS
'true: the watermark is the output watermark its source''s stream publishes (created without a lateness)';
COMMENT ON COLUMN match_recognize_stream.output_watermark IS
'the output watermark last published: no output row written after it has a value below it in a column of watermark_columns';
-- ops4: the on_error policy of a MATCH_RECOGNIZE stream and its dead-letter
-- table (src/stream/mr_stream_deadletter.c): with 'skip', a source row whose
-- DEFINE or MEASURES raises an error is listed there with the error and
-- dropped from the stream
ALTER TABLE match_recognize_stream
	ADD COLUMN on_error text DEFAULT 'stop',
	ADD COLUMN error_table regclass,
	ADD COLUMN error_rows bigint DEFAULT 0;
GRANT SELECT (on_error, error_table, error_rows) ON match_recognize_stream TO PUBLIC;

COMMENT ON COLUMN match_recognize_stream.on_error IS
'what the stream does with a source row whose DEFINE or MEASURES raises an error: stop (the stream stops on it) or skip (the row and the error go to error_table)';
COMMENT ON COLUMN match_recognize_stream.error_table IS
'the dead-letter table of on_error ''skip'' (<output>_errors): the rows skipped, with their error';
COMMENT ON COLUMN match_recognize_stream.error_rows IS
'source rows skipped by on_error ''skip'' (listed in error_table)';

DROP FUNCTION match_recognize_create_stream(text, text, anyelement, text, boolean, integer, text);
CREATE FUNCTION match_recognize_create_stream(name text, query text, lateness anyelement DEFAULT NULL::text,
	late_table text DEFAULT NULL, idle_advance boolean DEFAULT false,
	batch_size integer DEFAULT 100000, max_held_wal text DEFAULT '256MB', on_error text DEFAULT 'stop')
RETURNS void
AS 'MODULE_PATHNAME', 'match_recognize_create_stream'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION match_recognize_create_stream(text, text, anyelement, text, boolean, integer, text, text) IS
'creates the output table name and a stream that writes the final matches of query (SELECT * FROM <table> MATCH_RECOGNIZE (...)) to it as rows are committed';

CREATE OR REPLACE VIEW match_recognize_streams AS
SELECT s.name,
	s.source,
	s.output,
	s.owner,
	CASE WHEN s.state <> 'failed' AND match_recognize_stream_no_worker(s.slot_name) IS NOT NULL
		THEN 'waiting' ELSE s.state END AS state,
	CASE WHEN v.visible THEN s.last_error ELSE '<insufficient privilege>' END AS last_error,
	s.rows_in,
	s.late_rows,
	s.null_rows,
	s.matches_out,
	s.rows_out,
	s.skip_degraded,
	s.rows_pending,
	s.rows_retained,
	s.rows_pending + s.rows_retained AS rows_buffered,
	CASE WHEN v.visible THEN s.watermark END AS watermark,
	CASE WHEN v.visible THEN s.max_seen END AS max_event_time,
	CASE WHEN p.caught_up > pg_catalog.now() - interval '1 second' THEN 0
		ELSE GREATEST(0, pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), p.done)) END::bigint AS lag_bytes,
	CASE WHEN p.caught_up > pg_catalog.now() - interval '1 second' THEN 0
		WHEN p.caught_up IS NOT NULL THEN EXTRACT(epoch FROM pg_catalog.now() - p.caught_up)
		WHEN pg_catalog.pg_current_wal_lsn() > p.done
		THEN EXTRACT(epoch FROM pg_catalog.now() - COALESCE(s.last_commit_time, s.created_at))
		ELSE 0 END::double precision AS lag_seconds,
	a.pid AS worker_pid,
	s.slot_name,
	r.wal_status AS slot_wal_status,
	s.late_table,
	s.lateness,
	s.idle_advance,
	s.created_at,
	s.updated_at,
	s.rows_stored,
	GREATEST(0, pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), r.restart_lsn))::bigint AS held_wal_bytes,
	s.max_held_wal,
	s.checkpoint_lsn,
	s.checkpointed_at,
	b.rows AS backfill_rows,
	b.total AS backfill_total,
	CASE WHEN v.visible THEN s.query ELSE '<insufficient privilege>' END AS query,
	s.kind,
	CASE WHEN v.visible THEN s.output_watermark END AS output_watermark,
	-- time in patterns
	s.timers_pending,
	s.timeouts_out,
	-- ops4: on_error
	COALESCE(s.on_error, 'stop') AS on_error,
	s.error_table,
	COALESCE(s.error_rows, 0) AS error_rows
FROM match_recognize_stream s
-- what the source's rows and the query's constants reveal: to the owner,
-- superusers and pg_read_all_stats only, as pg_stat_activity shows query
CROSS JOIN LATERAL (SELECT CASE WHEN NOT EXISTS (SELECT FROM pg_catalog.pg_roles o WHERE o.oid = s.owner)
		THEN pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE')
		ELSE pg_catalog.pg_has_role(s.owner, 'USAGE') OR pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE') END AS visible) v
LEFT JOIN pg_catalog.pg_replication_slots r ON r.slot_name = s.slot_name
CROSS JOIN LATERAL (SELECT GREATEST(match_recognize_stream_done_lsn(s.slot_name),
	r.confirmed_flush_lsn, s.last_lsn) AS done,
	match_recognize_stream_caught_up(s.slot_name) AS caught_up) p
CROSS JOIN LATERAL match_recognize_stream_backfill(s.slot_name) b
LEFT JOIN pg_catalog.pg_stat_activity a
	ON a.pid = s.worker_pid AND a.backend_type = 'match_recognize stream';

-- pstream: a stream's partitions spread over several matcher processes
-- (src/stream/mr_stream_lanes.c): workers => n of create_stream and
-- alter_stream; 1 (or NULL, a stream created before) is one process
ALTER TABLE match_recognize_stream
	ADD COLUMN workers integer DEFAULT 1;
GRANT SELECT (workers) ON match_recognize_stream TO PUBLIC;

COMMENT ON COLUMN match_recognize_stream.workers IS
'the processes that match the stream''s partitions (by a hash of the PARTITION BY key), fed by its worker; 1: the worker itself';

DROP FUNCTION match_recognize_create_stream(text, text, anyelement, text, boolean, integer, text, text);
CREATE FUNCTION match_recognize_create_stream(name text, query text, lateness anyelement DEFAULT NULL::text,
	late_table text DEFAULT NULL, idle_advance boolean DEFAULT false,
	batch_size integer DEFAULT 100000, max_held_wal text DEFAULT '256MB', on_error text DEFAULT 'stop',
	workers integer DEFAULT 1)
RETURNS void
AS 'MODULE_PATHNAME', 'match_recognize_create_stream'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION match_recognize_create_stream(text, text, anyelement, text, boolean, integer, text, text, integer) IS
'creates the output table name and a stream that writes the final matches of query (SELECT * FROM <table> MATCH_RECOGNIZE (...)) to it as rows are committed';

DROP FUNCTION match_recognize_alter_stream(text, integer, text, text, text);
CREATE FUNCTION match_recognize_alter_stream(name text, batch_size integer DEFAULT NULL,
	on_error text DEFAULT NULL, max_held_wal text DEFAULT NULL, lateness text DEFAULT NULL,
	workers integer DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'match_recognize_alter_stream'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION match_recognize_alter_stream(text, integer, text, text, text, integer) IS
'changes the settings given (NULL: unchanged) of a stream, restarting its worker; a new lateness applies to the source transactions committed after the stream''s last processed one';

CREATE OR REPLACE VIEW match_recognize_streams AS
SELECT s.name,
	s.source,
	s.output,
	s.owner,
	CASE WHEN s.state <> 'failed' AND match_recognize_stream_no_worker(s.slot_name) IS NOT NULL
		THEN 'waiting' ELSE s.state END AS state,
	CASE WHEN v.visible THEN s.last_error ELSE '<insufficient privilege>' END AS last_error,
	s.rows_in,
	s.late_rows,
	s.null_rows,
	s.matches_out,
	s.rows_out,
	s.skip_degraded,
	s.rows_pending,
	s.rows_retained,
	s.rows_pending + s.rows_retained AS rows_buffered,
	CASE WHEN v.visible THEN s.watermark END AS watermark,
	CASE WHEN v.visible THEN s.max_seen END AS max_event_time,
	CASE WHEN p.caught_up > pg_catalog.now() - interval '1 second' THEN 0
		ELSE GREATEST(0, pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), p.done)) END::bigint AS lag_bytes,
	CASE WHEN p.caught_up > pg_catalog.now() - interval '1 second' THEN 0
		WHEN p.caught_up IS NOT NULL THEN EXTRACT(epoch FROM pg_catalog.now() - p.caught_up)
		WHEN pg_catalog.pg_current_wal_lsn() > p.done
		THEN EXTRACT(epoch FROM pg_catalog.now() - COALESCE(s.last_commit_time, s.created_at))
		ELSE 0 END::double precision AS lag_seconds,
	a.pid AS worker_pid,
	s.slot_name,
	r.wal_status AS slot_wal_status,
	s.late_table,
	s.lateness,
	s.idle_advance,
	s.created_at,
	s.updated_at,
	s.rows_stored,
	GREATEST(0, pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), r.restart_lsn))::bigint AS held_wal_bytes,
	s.max_held_wal,
	s.checkpoint_lsn,
	s.checkpointed_at,
	b.rows AS backfill_rows,
	b.total AS backfill_total,
	CASE WHEN v.visible THEN s.query ELSE '<insufficient privilege>' END AS query,
	s.kind,
	CASE WHEN v.visible THEN s.output_watermark END AS output_watermark,
	-- time in patterns
	s.timers_pending,
	s.timeouts_out,
	-- ops4: on_error
	COALESCE(s.on_error, 'stop') AS on_error,
	s.error_table,
	COALESCE(s.error_rows, 0) AS error_rows,
	-- pstream: the matcher processes (lanes) of a stream with workers > 1
	COALESCE(s.workers, 1) AS workers,
	(SELECT pg_catalog.array_agg(l.pid ORDER BY l.application_name)
		FROM pg_catalog.pg_stat_activity l
		WHERE l.backend_type = 'match_recognize stream lane'
			AND l.datname = pg_catalog.current_database()
			AND l.application_name LIKE 'match_recognize stream ' || s.id || ' lane %') AS lane_pids
FROM match_recognize_stream s
-- what the source's rows and the query's constants reveal: to the owner,
-- superusers and pg_read_all_stats only, as pg_stat_activity shows query
CROSS JOIN LATERAL (SELECT CASE WHEN NOT EXISTS (SELECT FROM pg_catalog.pg_roles o WHERE o.oid = s.owner)
		THEN pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE')
		ELSE pg_catalog.pg_has_role(s.owner, 'USAGE') OR pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE') END AS visible) v
LEFT JOIN pg_catalog.pg_replication_slots r ON r.slot_name = s.slot_name
CROSS JOIN LATERAL (SELECT GREATEST(match_recognize_stream_done_lsn(s.slot_name),
	r.confirmed_flush_lsn, s.last_lsn) AS done,
	match_recognize_stream_caught_up(s.slot_name) AS caught_up) p
CROSS JOIN LATERAL match_recognize_stream_backfill(s.slot_name) b
LEFT JOIN pg_catalog.pg_stat_activity a
	ON a.pid = s.worker_pid AND a.backend_type = 'match_recognize stream';
-- ---------------------------------------------------------------------------
-- par: parallel query (src/scan/mr_scan_parallel.c).  A call planned as the
-- MatchRecognize node may run under Gather, which needs the statement to be
-- allowed parallel mode: the functions are parallel restricted (the
-- set-returning function itself runs in the leader only), not unsafe.
ALTER FUNCTION match_recognize(text) PARALLEL RESTRICTED;
ALTER FUNCTION match_recognize(text, "any") PARALLEL RESTRICTED;
ALTER FUNCTION match_recognize_bound(text, boolean[]) PARALLEL RESTRICTED;
ALTER FUNCTION match_recognize_bound_scan(internal) PARALLEL RESTRICTED;
ALTER FUNCTION match_recognize_slot(integer, anyelement) PARALLEL RESTRICTED;

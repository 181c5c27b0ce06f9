--
-- The stream core: state in memory, rebuilt after a restart from a
-- checkpoint and the WAL the slot holds; rows the WAL cannot give back
-- (the backfill's, the oldest past max_held_wal) stored; output written in
-- batches, through the executor when the output table asks for it.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

-- the batch query's rows, the stream's rows, and how many differ
CREATE FUNCTION core_diff(stream regclass, query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  cols text;
  n_stream bigint;
  n_batch bigint;
  d bigint;
BEGIN
  PERFORM match_recognize_create_view('core_batch', query);
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
  FROM pg_attribute WHERE attrelid = 'core_batch'::regclass AND attnum > 0;
  EXECUTE format('SELECT count(*) FROM %s', stream) INTO n_stream;
  EXECUTE 'SELECT count(*) FROM core_batch' INTO n_batch;
  EXECUTE format('SELECT count(*) FROM ((SELECT %1$s FROM core_batch EXCEPT ALL SELECT %1$s FROM %2$s)
                  UNION ALL (SELECT %1$s FROM %2$s EXCEPT ALL SELECT %1$s FROM core_batch)) x',
                 cols, stream) INTO d;
  DROP VIEW core_batch;
  RETURN format('stream %s rows, batch %s rows, %s differ', n_stream, n_batch, d);
END $$;

-- a new worker for the stream (the old one is stopped, the launcher starts
-- the next one at once or within two seconds)
CREATE FUNCTION core_restart(s text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  old int := (SELECT worker_pid FROM match_recognize_streams WHERE name = 'public.' || s);
BEGIN
  PERFORM pg_terminate_backend(old);
  FOR i IN 1 .. 400 LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN EXISTS (SELECT FROM match_recognize_streams WHERE name = 'public.' || s
                      AND worker_pid IS NOT NULL AND worker_pid <> old);
    PERFORM pg_sleep(0.025);
  END LOOP;
  RETURN (SELECT worker_pid IS NOT NULL AND worker_pid <> old FROM match_recognize_streams
          WHERE name = 'public.' || s);
END $$;

-- the plugin works only inside a stream's worker
SELECT 'core_probe' FROM pg_create_logical_replication_slot('core_probe', 'match_recognize');
SELECT data FROM pg_logical_slot_peek_changes('core_probe', NULL, NULL);
SELECT pg_drop_replication_slot('core_probe');

-- ORDER BY with a second column and ties on the event time, a NULL
-- partition key; rows before the stream (backfill: stored by its first
-- checkpoint), rows kept in the WAL only (pending and retained), a restart
-- in between
CREATE TABLE ct (k int, ts int, sub int, v int);
INSERT INTO ct SELECT CASE WHEN i % 7 = 0 THEN NULL ELSE i % 3 END, i / 4, (i * 5) % 4, (abs(hashint4(i)) % 10)
FROM generate_series(0, 199) i;
\set q '$$SELECT * FROM ct MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, sub DESC MEASURES FIRST(ts) AS t0, FIRST(sub) AS s0, LAST(ts) AS t1, COUNT(*) AS n ALL ROWS PER MATCH PATTERN (a b+ c?) DEFINE a AS v < 5, b AS v >= PREV(v), c AS v = 0)$$'
SELECT match_recognize_create_stream('ct_out', :q, lateness => 30);
SELECT match_recognize_wait_stream('ct_out');
SELECT state, rows_in, rows_pending > 0 AS pending, rows_stored = rows_pending + rows_retained AS all_stored,
       checkpoint_lsn IS NOT NULL AS checkpointed, backfill_rows, held_wal_bytes >= 0 AS held,
       max_held_wal FROM match_recognize_streams WHERE name = 'public.ct_out';
-- rows that only the WAL holds, then a restart: the worker rebuilds them
INSERT INTO ct SELECT CASE WHEN i % 7 = 0 THEN NULL ELSE i % 3 END, i / 4, (i * 5) % 4, (abs(hashint4(i)) % 10)
FROM generate_series(200, 399) i;
SELECT match_recognize_wait_stream('ct_out');
SELECT core_restart('ct_out');
INSERT INTO ct SELECT CASE WHEN i % 7 = 0 THEN NULL ELSE i % 3 END, i / 4, (i * 5) % 4, (abs(hashint4(i)) % 10)
FROM generate_series(400, 599) i;
SELECT match_recognize_wait_stream('ct_out');
SELECT core_restart('ct_out');
-- terminators (v NULL satisfies no DEFINE), then a sentinel past them all
INSERT INTO ct SELECT k, 150, 9, NULL FROM (VALUES (0), (1), (2), (NULL)) p(k);
INSERT INTO ct VALUES (99, 1000, 0, 0);
SELECT match_recognize_wait_stream('ct_out');
SELECT state, last_error, rows_in, late_rows FROM match_recognize_streams WHERE name = 'public.ct_out';
SELECT core_diff('ct_out', 'SELECT * FROM (SELECT * FROM ct WHERE k IS DISTINCT FROM 99) ct MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, sub DESC MEASURES FIRST(ts) AS t0, FIRST(sub) AS s0, LAST(ts) AS t1, COUNT(*) AS n ALL ROWS PER MATCH PATTERN (a b+ c?) DEFINE a AS v < 5, b AS v >= PREV(v), c AS v = 0)');
SELECT count(*) = count(DISTINCT _match_id) AS unique_ids FROM ct_out;
SELECT match_recognize_drop_stream('ct_out');

-- max_held_wal: past half of it, a checkpoint stores the oldest kept rows,
-- so the slot need not hold their WAL; a restart reads them back
CREATE TABLE sp (k int, ts int, v int);
SELECT match_recognize_create_stream('sp_out',
  $$SELECT * FROM sp MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, LAST(ts) AS t1, COUNT(*) AS n PATTERN (a+ b) DEFINE a AS v > 0, b AS v = 0)$$,
  lateness => 5, max_held_wal => '8kB');
SELECT match_recognize_wait_stream('sp_out');
INSERT INTO sp SELECT i % 2, i, 1 FROM generate_series(1, 100) i;
SELECT match_recognize_wait_stream('sp_out');
-- more WAL, so that what the stream keeps is older than half of 8kB
CREATE TABLE sp_noise AS SELECT i, repeat('x', 100) AS pad FROM generate_series(1, 200) i;
INSERT INTO sp VALUES (0, 101, 1);
SELECT match_recognize_wait_stream('sp_out');
-- VACUUM FULL moves the rows of the internal tables: the worker, which
-- writes them by tuple id, finds them again at its next checkpoint
SELECT format('VACUUM FULL %I.%I', 'public', '_mr_' || id || '_' || t)
  FROM match_recognize_stream, unnest(ARRAY['parts', 'rows']) t WHERE name = 'public.sp_out' \gexec
INSERT INTO sp VALUES (1, 102, 1);
SELECT match_recognize_wait_stream('sp_out');
SELECT rows_retained + rows_pending AS kept, rows_stored > 0 AS some_stored, max_held_wal
  FROM match_recognize_streams WHERE name = 'public.sp_out';
SELECT core_restart('sp_out');
INSERT INTO sp VALUES (0, 200, 0), (1, 201, 0), (7, 300, 0);
SELECT match_recognize_wait_stream('sp_out');
SELECT state, last_error, rows_in FROM match_recognize_streams WHERE name = 'public.sp_out';
-- the released stored rows leave the rows table at the next checkpoint
-- (the durable one may still need them until then): more WAL than half of
-- max_held_wal and one more row make one
SELECT checkpoint_lsn AS cp_before FROM match_recognize_streams WHERE name = 'public.sp_out' \gset
CREATE TABLE sp_noise2 AS SELECT i, repeat('x', 100) AS pad FROM generate_series(1, 200) i;
INSERT INTO sp VALUES (9, 301, 1);
SELECT match_recognize_wait_stream('sp_out');
SELECT checkpoint_lsn > :'cp_before' AS checkpointed FROM match_recognize_streams WHERE name = 'public.sp_out';
-- the rows table holds exactly the stored rows the stream keeps
SELECT format('SELECT count(*) = (SELECT rows_stored FROM match_recognize_stream WHERE id = %s) AS rows_table_agrees FROM %I.%I',
              id, 'public', '_mr_' || id || '_rows')
  FROM match_recognize_stream WHERE name = 'public.sp_out' \gexec
SELECT k, t0, t1, n, _match_id FROM sp_out ORDER BY _match_id;
SELECT match_recognize_drop_stream('sp_out');
SELECT match_recognize_create_stream('sp_bad', $$SELECT * FROM sp MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES COUNT(*) AS n PATTERN (a) WITHIN 5 DEFINE a AS v > 0)$$, 0, max_held_wal => '-1');

-- the output table as its owner changes it: a column with a default is
-- filled by it, a CHECK constraint holds, a trigger runs (the stream then
-- writes through INSERT statements; like the stream's own statements, it
-- runs with search_path pg_catalog, pg_temp, so it names its tables)
CREATE TABLE ot (k int, ts int, v int);
SELECT match_recognize_create_stream('ot_out',
  $$SELECT * FROM ot MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, COUNT(*) AS n PATTERN (a b) WITHIN 10 DEFINE a AS v = 1, b AS v = 2)$$,
  lateness => 0);
SELECT match_recognize_wait_stream('ot_out');
ALTER TABLE ot_out ADD COLUMN note text DEFAULT 'by default', ADD CHECK (n > 1);
INSERT INTO ot VALUES (1, 1, 1), (1, 2, 2), (1, 3, 0);
SELECT match_recognize_wait_stream('ot_out');
SELECT k, t0, n, note, _match_id FROM ot_out ORDER BY _match_id;
CREATE TABLE ot_log (id text, at_trigger text);
CREATE FUNCTION ot_log_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.ot_log VALUES (NEW._match_id, NEW.note);
  NEW.note := 'by trigger';
  RETURN NEW;
END $$;
CREATE TRIGGER ot_log BEFORE INSERT ON ot_out FOR EACH ROW EXECUTE FUNCTION ot_log_row();
INSERT INTO ot VALUES (1, 4, 1), (1, 5, 2), (1, 6, 0);
SELECT match_recognize_wait_stream('ot_out');
SELECT k, t0, n, note, _match_id FROM ot_out ORDER BY _match_id;
SELECT * FROM ot_log;
SELECT match_recognize_drop_stream('ot_out');

-- an idle stream writes nothing
CREATE TABLE idle_src (k int, ts int, v int);
SELECT match_recognize_create_stream('idle_out',
  $$SELECT * FROM idle_src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES COUNT(*) AS n PATTERN (a+) WITHIN 100 DEFINE a AS v > 0)$$, lateness => 10);
INSERT INTO idle_src VALUES (1, 1, 1), (1, 2, 1);
SELECT match_recognize_wait_stream('idle_out');
SELECT pg_sleep(12);			-- past the stream's next checkpoint
SELECT xmin AS row_xmin FROM match_recognize_stream WHERE name = 'public.idle_out' \gset
SELECT pg_sleep(2.5);
SELECT xmin = :'row_xmin' AS unchanged FROM match_recognize_stream WHERE name = 'public.idle_out';
SELECT match_recognize_drop_stream('idle_out');

-- a failed stream is dropped at once: its worker gives its slot up
CREATE TABLE fs (k int, ts int, v int);
SELECT match_recognize_create_stream('fs_out',
  $$SELECT * FROM fs MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES COUNT(*) AS n PATTERN (a) WITHIN 5 DEFINE a AS v > 0)$$, lateness => 0);
SELECT match_recognize_wait_stream('fs_out');
INSERT INTO fs VALUES (1, 1, 1);
DELETE FROM fs;
SELECT match_recognize_wait_stream('fs_out');
SELECT state FROM match_recognize_streams WHERE name = 'public.fs_out';
SELECT match_recognize_drop_stream('fs_out');
SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'mr\_%';

DROP TABLE ct, ct_out, sp, sp_out, sp_noise, ot, ot_out, ot_log, idle_src, idle_out, fs, fs_out;
DROP FUNCTION core_diff(regclass, text), core_restart(text), ot_log_row();

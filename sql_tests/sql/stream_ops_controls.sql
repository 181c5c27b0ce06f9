--
-- Controls of a running stream: pause and resume, alter its settings,
-- rename it; creating a stream over tables that exist; backfill progress.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE ROLE regress_mr_ctl_other LOGIN REPLICATION;
CREATE TABLE ctl_src (k int, ts int, v int);
INSERT INTO ctl_src VALUES (1, 1, 1), (1, 2, 2), (1, 3, 0);
\set q '$$SELECT * FROM ctl_src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a b) WITHIN 10 DEFINE a AS v = 1, b AS v = 2)$$'
SELECT match_recognize_create_stream('ctl_out', :q, 0, late_table => 'ctl_late');
SELECT match_recognize_wait_stream('ctl_out');
SELECT t0 FROM ctl_out ORDER BY t0;

-- pause: the worker stops, the slot stays (and keeps every change)
SELECT match_recognize_pause_stream('ctl_out');
SELECT state, worker_pid, slot_wal_status FROM match_recognize_streams WHERE name = 'public.ctl_out';
SELECT active_pid FROM pg_replication_slots
  WHERE slot_name = (SELECT slot_name FROM match_recognize_streams WHERE name = 'public.ctl_out');
INSERT INTO ctl_src VALUES (1, 4, 1), (1, 5, 2), (1, 6, 0);
SELECT match_recognize_wait_stream('ctl_out', '1 second') AS caught_up;
SELECT state, rows_in FROM match_recognize_streams WHERE name = 'public.ctl_out';
SELECT t0 FROM ctl_out ORDER BY t0;
-- pausing a paused stream changes nothing
SELECT match_recognize_pause_stream('ctl_out');
-- settings can change while it is paused
SELECT match_recognize_alter_stream('ctl_out', batch_size => 2);
SELECT state, worker_pid FROM match_recognize_streams WHERE name = 'public.ctl_out';
-- resume: it goes on from where it stopped, nothing lost or repeated
SELECT match_recognize_resume_stream('ctl_out');
SELECT match_recognize_wait_stream('ctl_out');
SELECT state, rows_in, matches_out, worker_pid IS NOT NULL AS has_worker
  FROM match_recognize_streams WHERE name = 'public.ctl_out';
SELECT t0 FROM ctl_out ORDER BY t0;
SELECT match_recognize_resume_stream('ctl_out');

-- alter a running stream: its worker restarts with the new settings
SELECT match_recognize_alter_stream('ctl_out', batch_size => 3, max_held_wal => '1GB');
SELECT batch_size FROM match_recognize_stream WHERE name = 'public.ctl_out';
SELECT max_held_wal FROM match_recognize_streams WHERE name = 'public.ctl_out';
INSERT INTO ctl_src VALUES (1, 7, 1), (1, 8, 2), (1, 9, 0);
SELECT match_recognize_wait_stream('ctl_out');
SELECT state, rows_in, matches_out FROM match_recognize_streams WHERE name = 'public.ctl_out';
SELECT match_recognize_alter_stream('ctl_out');
SELECT match_recognize_alter_stream('ctl_out', batch_size => 0);
SELECT match_recognize_alter_stream('ctl_out', on_error => 'ignore');
SELECT match_recognize_alter_stream('ctl_out', max_held_wal => '-1MB');
SELECT match_recognize_alter_stream(NULL, batch_size => 5);
SELECT match_recognize_alter_stream('ctl_nosuch', batch_size => 5);

-- not in a transaction block (the worker stops and starts outside it)
BEGIN;
SELECT match_recognize_pause_stream('ctl_out');
ROLLBACK;
BEGIN;
SELECT match_recognize_alter_stream('ctl_out', batch_size => 5);
ROLLBACK;

-- only the owner (or a superuser) controls a stream
SET ROLE regress_mr_ctl_other;
SELECT match_recognize_pause_stream('ctl_out');
SELECT match_recognize_resume_stream('ctl_out');
SELECT match_recognize_alter_stream('ctl_out', batch_size => 5);
SELECT match_recognize_rename_stream('ctl_out', 'ctl_mine');
RESET ROLE;
SELECT state FROM match_recognize_streams WHERE name = 'public.ctl_out';

-- rename: the stream and its output table, in their schema
CREATE SCHEMA ctl_elsewhere;
SELECT match_recognize_rename_stream('ctl_out', 'ctl_elsewhere.ctl_moved');
SELECT match_recognize_rename_stream('ctl_out', 'ctl_renamed');
SELECT name, output FROM match_recognize_streams WHERE name LIKE 'public.ctl\_%';
SELECT match_recognize_wait_stream('ctl_out');
INSERT INTO ctl_src VALUES (1, 10, 1), (1, 11, 2), (1, 12, 0);
SELECT match_recognize_wait_stream('ctl_renamed');
SELECT t0 FROM ctl_renamed ORDER BY t0;
-- not with ALTER TABLE: the stream would keep the old name
ALTER TABLE ctl_renamed RENAME TO ctl_by_hand;
ALTER TABLE ctl_renamed SET SCHEMA ctl_elsewhere;
SELECT name, output FROM match_recognize_streams WHERE name LIKE 'public.ctl\_%';
DROP SCHEMA ctl_elsewhere;

-- creating over tables that exist: a clear error, and nothing left behind
SELECT count(*) AS slots_before FROM pg_replication_slots WHERE database = current_database() \gset
SELECT match_recognize_create_stream('ctl_renamed', :q, 0);
SELECT match_recognize_create_stream('ctl_out2', :q, 0, late_table => 'ctl_late');
SELECT match_recognize_create_stream('ctl_out2', :q, 0, late_table => 'ctl_out2');
SELECT count(*) = :slots_before AS no_slot_left FROM pg_replication_slots WHERE database = current_database();
-- tables named like a stream's internal tables (restored as plain tables,
-- say) do not stop the next stream: it takes another id
SELECT max(id) + 1 AS next_id FROM match_recognize_stream \gset
SELECT set_config('regress_mr.next_id', :'next_id', false) IS NOT NULL AS noted;
DO $$ BEGIN EXECUTE format('CREATE TABLE %I (x int)',
  '_mr_' || current_setting('regress_mr.next_id') || '_rows'); END $$;
SELECT match_recognize_create_stream('ctl_out2', :q, 0);
SELECT id > :next_id AS took_another_id FROM match_recognize_stream WHERE name = 'public.ctl_out2';
SELECT match_recognize_wait_stream('ctl_out2');
SELECT count(*) FROM ctl_out2;
SELECT match_recognize_drop_stream('ctl_out2');
SELECT count(*) AS plain_tables FROM pg_class WHERE relname = '_mr_' || :next_id || '_rows';
DO $$ BEGIN EXECUTE format('DROP TABLE %I',
  '_mr_' || current_setting('regress_mr.next_id') || '_rows'); END $$;

-- a paused stream can be dropped
SELECT match_recognize_pause_stream('ctl_renamed');
SELECT slot_name AS ctl_slot FROM match_recognize_streams WHERE name = 'public.ctl_renamed' \gset
SELECT match_recognize_drop_stream('ctl_renamed');
SELECT count(*) FROM pg_replication_slots WHERE slot_name = :'ctl_slot';

-- backfill progress is in the view while the worker copies
INSERT INTO ctl_src SELECT 2, g, g % 3 FROM generate_series(100, 400099) g;
SELECT match_recognize_create_stream('ctl_big', :q, 0, batch_size => 1000);
CREATE TEMP TABLE ctl_seen (rows bigint, total bigint);
DO $$
BEGIN
  FOR i IN 1 .. 2000 LOOP
    INSERT INTO ctl_seen SELECT backfill_rows, backfill_total FROM match_recognize_streams
      WHERE name = 'public.ctl_big' AND backfill_total IS NOT NULL;
    EXIT WHEN (SELECT state FROM match_recognize_streams WHERE name = 'public.ctl_big') = 'running';
    PERFORM pg_sleep(0.01);
  END LOOP;
END $$;
SELECT count(*) > 0 AS progress_seen, bool_and(rows <= total) AS rows_within_total,
       min(total) = max(total) AND max(total) = (SELECT count(*) FROM ctl_src) AS total_is_the_source
  FROM ctl_seen;
SELECT match_recognize_wait_stream('ctl_big');
SELECT backfill_rows, backfill_total, rows_in FROM match_recognize_streams WHERE name = 'public.ctl_big';
SELECT match_recognize_drop_stream('ctl_big');

DROP TABLE ctl_src, ctl_renamed, ctl_late, ctl_out2, ctl_big;
DROP ROLE regress_mr_ctl_other;

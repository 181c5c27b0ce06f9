--
-- Levels streams and match_recognize_restore_streams(): a levels stream
-- whose catalog row came back from a dump (state 'restored') is bound
-- again as its owner, gets a new slot and a new internal table, its output
-- is emptied and its worker backfills the input and the standing queries
-- again: the same fires with the same _match_ids.  The dump and restore
-- are simulated in the same database: the catalog row is saved and
-- deleted (the worker then drops its slot and exits, as for a stream
-- that is gone), and inserted again, which fires the trigger a restore's
-- COPY fires.  (Before, restore_streams() failed on a levels stream,
-- "MATCH_LEVELS cannot run as a stream yet", and restored no stream.)
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE TABLE lsr_ticks (key int, ts int, price int);
CREATE TABLE lsr_q (key int, qid int, level int);
ALTER TABLE lsr_q REPLICA IDENTITY FULL;
INSERT INTO lsr_q SELECT k, l, l * 10 FROM generate_series(0, 3) k, generate_series(1, 9) l;
INSERT INTO lsr_ticks SELECT j % 4, j, abs(hashint4(j)) % 100 FROM generate_series(1, 2000) j;
SELECT match_recognize_create_stream('lsr_out',
  'lsr_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price '
  'QUERIES lsr_q (ID qid, LEVEL level) CROSSING DOWN BAND 5)', lateness => 10, late_table => 'lsr_late');
INSERT INTO lsr_ticks SELECT j % 4, j, abs(hashint4(j)) % 100 FROM generate_series(2001, 2500) j;
SELECT match_recognize_wait_stream('lsr_out');
SELECT state, rows_in, matches_out > 1000 AS many FROM match_recognize_streams WHERE name = 'public.lsr_out';
CREATE TABLE lsr_before AS SELECT * FROM lsr_out;

CREATE FUNCTION lsr_wait_slot_gone(slot name) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. 400 LOOP
    EXIT WHEN NOT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = slot);
    PERFORM pg_sleep(0.025);
  END LOOP;
  RETURN NOT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = slot);
END $$;

-- the "dump": the catalog row; the "restore": the row inserted again
CREATE TABLE lsr_row AS SELECT * FROM match_recognize_stream WHERE name = 'public.lsr_out';
DELETE FROM match_recognize_stream WHERE name = 'public.lsr_out';
SELECT lsr_wait_slot_gone((SELECT slot_name FROM lsr_row));
INSERT INTO match_recognize_stream SELECT * FROM lsr_row;
SELECT state, last_error, worker_pid FROM match_recognize_streams WHERE name = 'public.lsr_out';

SELECT match_recognize_restore_streams();
SELECT match_recognize_wait_stream('lsr_out');
-- (the same tables here, so the same spec)
SELECT s.state, s.last_error, c.backfilled, s.rows_in,
       EXISTS (SELECT FROM pg_replication_slots r WHERE r.slot_name = c.slot_name) AS has_slot,
       c.bound = (SELECT bound FROM lsr_row) AS same_spec
FROM match_recognize_streams s JOIN match_recognize_stream c USING (name) WHERE name = 'public.lsr_out';
-- the same fires, the same ids
SELECT (SELECT count(*) FROM lsr_out) AS fires,
       (SELECT count(*) FROM ((TABLE lsr_out EXCEPT ALL TABLE lsr_before)
                              UNION ALL (TABLE lsr_before EXCEPT ALL TABLE lsr_out)) d) AS differ;

-- and it runs on
INSERT INTO lsr_ticks SELECT j % 4, j, abs(hashint4(j)) % 100 FROM generate_series(2501, 3000) j;
SELECT match_recognize_wait_stream('lsr_out');
SELECT count(*) AS differ FROM (
  (SELECT key, qid, level, ts FROM match_recognize(
     'lsr_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price '
     'QUERIES lsr_q (ID qid, LEVEL level) CROSSING DOWN BAND 5)') AS f(key int, qid int, level int, ts int)
   WHERE ts < 2990
   EXCEPT ALL SELECT key, qid, level, ts FROM lsr_out)
  UNION ALL
  (SELECT key, qid, level, ts FROM lsr_out
   EXCEPT ALL SELECT key, qid, level, ts FROM match_recognize(
     'lsr_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price '
     'QUERIES lsr_q (ID qid, LEVEL level) CROSSING DOWN BAND 5)') AS f(key int, qid int, level int, ts int)
   WHERE ts < 2990)) d;
SELECT match_recognize_restore_streams();

SELECT match_recognize_drop_stream('lsr_out');
SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'mr%';
DROP TABLE lsr_ticks, lsr_q, lsr_late, lsr_out, lsr_before, lsr_row;
DROP FUNCTION lsr_wait_slot_gone;

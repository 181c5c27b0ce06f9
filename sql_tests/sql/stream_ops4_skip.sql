--
-- on_error 'skip': a source row whose DEFINE (or, for MEASURES, the row
-- that decided the match) raises an error is listed with the error in the
-- dead-letter table <output>_errors and dropped from the stream, which goes
-- on: its output is the batch query's over the source without the listed
-- rows, exactly once, also after a worker is killed.  on_error 'stop' (the
-- default) stops on the error as before (stream_ops3_errors).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY terse

-- wait until the stream's worker stopped on an error (state error or failed)
CREATE FUNCTION sk_wait_error(s text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. 400 LOOP
    EXIT WHEN EXISTS (SELECT FROM match_recognize_streams WHERE name = 'public.' || s
                      AND state IN ('error', 'failed') AND last_error IS NOT NULL);
    PERFORM pg_sleep(0.025);
  END LOOP;
  RETURN (SELECT state FROM match_recognize_streams WHERE name = 'public.' || s);
END $$;

-- the stream's output (without _match_id) against the batch query over the
-- source without the rows its dead-letter table lists: rows in one only
CREATE FUNCTION sk_diff(s text, src text, q text) RETURNS bigint LANGUAGE plpgsql
SET client_min_messages = warning AS $$
DECLARE
  n bigint;
  cols text;
BEGIN
  EXECUTE format('DROP TABLE IF EXISTS sk_clean; CREATE TABLE sk_clean AS SELECT * FROM %I s '
                 'WHERE NOT EXISTS (SELECT FROM %I e WHERE (e.k, e.ts, e.v) = (s.k, s.ts, s.v))',
                 src, s || '_errors');
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
    FROM pg_attribute WHERE attrelid = s::regclass AND attnum > 0 AND NOT attisdropped
                        AND attname <> '_match_id';
  EXECUTE format('SELECT count(*) FROM ((SELECT %1$s FROM %2$I EXCEPT ALL SELECT %1$s FROM (%3$s) b) '
                 'UNION ALL (SELECT %1$s FROM (%3$s) b EXCEPT ALL SELECT %1$s FROM %2$I)) d',
                 cols, s, match_recognize_sql(replace(q, src, 'sk_clean'))) INTO n;
  RETURN n;
END $$;

-- a new worker for the stream
CREATE FUNCTION sk_restart(s text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  old int;
BEGIN
  FOR i IN 1 .. 400 LOOP
    PERFORM pg_stat_clear_snapshot();
    old := (SELECT worker_pid FROM match_recognize_streams WHERE name = 'public.' || s AND state = 'running');
    EXIT WHEN old IS NOT NULL;
    PERFORM pg_sleep(0.025);
  END LOOP;
  PERFORM pg_terminate_backend(old);
  FOR i IN 1 .. 400 LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN EXISTS (SELECT FROM match_recognize_streams WHERE name = 'public.' || s
                      AND worker_pid IS NOT NULL AND worker_pid <> old AND state = 'running');
    PERFORM pg_sleep(0.025);
  END LOOP;
  RETURN (SELECT worker_pid IS NOT NULL AND worker_pid <> old FROM match_recognize_streams
          WHERE name = 'public.' || s);
END $$;

-- Rows come in event-time order (a row below the watermark would be late:
-- lateness 0); a row of partition 9 at a later time releases the others.
CREATE TABLE sk_src (k int, ts int, v int);
INSERT INTO sk_src VALUES (1, 1, 5), (2, 1, 5), (1, 2, 6), (2, 2, 7);

-- 1. DEFINE: 10 / v divides by zero at a row with v = 0 (as b)
\set q '$$SELECT * FROM sk_src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES FIRST(ts) AS t0, LAST(ts) AS t1 PATTERN (a b) DEFINE b AS 10 / v < 5)$$'
SET client_min_messages = warning;
SELECT match_recognize_create_stream('sk_def', :q, 0, on_error => 'skip');
RESET client_min_messages;
SELECT match_recognize_wait_stream('sk_def');
SELECT on_error, error_table, error_rows FROM match_recognize_streams WHERE name = 'public.sk_def';
-- the dead-letter table: the source's columns, then the row's key and error
SELECT attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute
 WHERE attrelid = 'sk_def_errors'::regclass AND attnum > 0 ORDER BY attnum;
SELECT pg_get_userbyid(relowner) = current_user AS owned_by_owner, relacl FROM pg_class
 WHERE oid = 'sk_def_errors'::regclass;
-- two bad rows in one transaction (two partitions), then good ones
INSERT INTO sk_src VALUES (1, 3, 5), (2, 3, 4), (1, 4, 0), (2, 4, 0), (1, 5, 9), (2, 5, 1);
INSERT INTO sk_src VALUES (1, 6, 0), (2, 6, 5), (1, 7, 8), (2, 7, 9), (9, 8, 1);
SELECT match_recognize_wait_stream('sk_def');
SELECT state, error_rows, rows_in, late_rows FROM match_recognize_streams WHERE name = 'public.sk_def';
SELECT k, ts, v, _seq, _sqlstate, _error, _context FROM sk_def_errors ORDER BY _seq;
SELECT k, t0, t1, _match_id FROM sk_def ORDER BY k, t0;
SELECT sk_diff('sk_def', 'sk_src', :q) AS differences;
-- last_error says what was skipped last
SELECT last_error FROM match_recognize_streams WHERE name = 'public.sk_def';

-- a killed worker replays the same WAL: the listed rows stay dropped,
-- nothing is listed or written twice
SELECT sk_restart('sk_def');
INSERT INTO sk_src VALUES (1, 9, 5), (2, 9, 5), (1, 10, 1), (2, 10, 5), (2, 11, 0), (2, 12, 3), (9, 13, 1);
SELECT match_recognize_wait_stream('sk_def');
SELECT count(*) AS listed, count(DISTINCT _seq) AS distinct_rows FROM sk_def_errors;
SELECT error_rows FROM match_recognize_streams WHERE name = 'public.sk_def';
SELECT k, t0, t1, _match_id FROM sk_def ORDER BY k, t0;
SELECT sk_diff('sk_def', 'sk_src', :q) AS differences;
-- and right after a skip (the replay then starts before the listed row)
INSERT INTO sk_src VALUES (3, 14, 5), (3, 15, 0), (9, 16, 1);
SELECT match_recognize_wait_stream('sk_def');
SELECT sk_restart('sk_def');
INSERT INTO sk_src VALUES (1, 17, 5), (3, 17, 5), (1, 18, 2), (3, 18, 1), (9, 19, 1);
SELECT match_recognize_wait_stream('sk_def');
SELECT k, ts, v, _seq FROM sk_def_errors ORDER BY _seq;
SELECT error_rows, late_rows FROM match_recognize_streams WHERE name = 'public.sk_def';
SELECT k, t0, t1, _match_id FROM sk_def ORDER BY k, t0;
SELECT sk_diff('sk_def', 'sk_src', :q) AS differences;

-- 2. MEASURES: 100 / (LAST(v) - 7) fails for the match ending at v = 7; the
-- row listed is the one that decided the match (its last row here)
CREATE TABLE sk_src2 (k int, ts int, v int);
INSERT INTO sk_src2 VALUES (1, 1, 1), (1, 2, 2);
\set q2 '$$SELECT * FROM sk_src2 MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES FIRST(ts) AS t0, 100 / (LAST(v) - 7) AS ratio PATTERN (a b) DEFINE b AS v > PREV(v))$$'
SET client_min_messages = warning;
SELECT match_recognize_create_stream('sk_mea', :q2, 0, on_error => 'skip');
RESET client_min_messages;
SELECT match_recognize_wait_stream('sk_mea');
INSERT INTO sk_src2 VALUES (2, 3, 3), (2, 4, 7), (2, 5, 8), (2, 6, 9), (9, 7, 1);
SELECT match_recognize_wait_stream('sk_mea');
SELECT k, ts, v, _seq, _sqlstate, _error, _context FROM sk_mea_errors ORDER BY _seq;
SELECT k, t0, ratio, _match_id FROM sk_mea ORDER BY k, t0;
SELECT sk_diff('sk_mea', 'sk_src2', :q2) AS differences;

-- 3. stop -> skip: a stream stopped by an error (state error, or failed
-- after its retries) starts again when on_error becomes 'skip'
CREATE TABLE sk_src3 (k int, ts int, v int);
INSERT INTO sk_src3 VALUES (1, 1, 5), (1, 2, 6);
\set q3 '$$SELECT * FROM sk_src3 MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES FIRST(ts) AS t0, LAST(ts) AS t1 PATTERN (a b) DEFINE b AS 10 / v < 5)$$'
SET client_min_messages = warning;
SELECT match_recognize_create_stream('sk_stop', :q3, 0);
RESET client_min_messages;
SELECT match_recognize_wait_stream('sk_stop');
SELECT on_error, error_table, error_rows FROM match_recognize_streams WHERE name = 'public.sk_stop';
SELECT to_regclass('sk_stop_errors') IS NULL AS no_dead_letter_table;
INSERT INTO sk_src3 VALUES (1, 3, 5), (1, 4, 0), (1, 5, 9), (9, 6, 1);
SELECT sk_wait_error('sk_stop') IN ('error', 'failed') AS stopped;
SELECT last_error FROM match_recognize_streams WHERE name = 'public.sk_stop';
SELECT k, t0, t1 FROM sk_stop ORDER BY k, t0;
SELECT match_recognize_alter_stream('sk_stop', on_error => 'skip');
SELECT match_recognize_wait_stream('sk_stop');
SELECT state, on_error, error_rows FROM match_recognize_streams WHERE name = 'public.sk_stop';
SELECT k, ts, v, _seq, _sqlstate FROM sk_stop_errors ORDER BY _seq;
SELECT k, t0, t1, _match_id FROM sk_stop ORDER BY k, t0;
SELECT sk_diff('sk_stop', 'sk_src3', :q3) AS differences;
-- back to stop: the listed row stays dropped (on every replay: the output
-- stays the same), and a new bad row stops the stream again
SELECT match_recognize_alter_stream('sk_stop', on_error => 'stop');
SELECT sk_restart('sk_stop');
INSERT INTO sk_src3 VALUES (1, 7, 5), (1, 8, 0), (9, 9, 1);
SELECT sk_wait_error('sk_stop') IN ('error', 'failed') AS stopped;
SELECT last_error FROM match_recognize_streams WHERE name = 'public.sk_stop';
SELECT count(*) AS listed FROM sk_stop_errors;
SELECT k, t0, t1, _match_id FROM sk_stop ORDER BY k, t0;
-- skip again: the stream retrying on that error goes on
SELECT match_recognize_alter_stream('sk_stop', on_error => 'skip');
SELECT match_recognize_wait_stream('sk_stop');
SELECT state, error_rows FROM match_recognize_streams WHERE name = 'public.sk_stop';
SELECT k, ts, v, _seq FROM sk_stop_errors ORDER BY _seq;
SELECT sk_diff('sk_stop', 'sk_src3', :q3) AS differences;

-- 4. refused
SELECT match_recognize_alter_stream('sk_stop', on_error => 'ignore');
SELECT match_recognize_create_stream('sk_bad', :q3, 0, on_error => 'retry');
CREATE TABLE sk_bad_errors ();
SELECT match_recognize_create_stream('sk_bad', :q3, 0, on_error => 'skip');
DROP TABLE sk_bad_errors;
SELECT to_regclass('sk_bad') IS NULL AS not_created;
-- a bad row of the backfill is not skipped (its number is not final yet)
CREATE TABLE sk_src4 (k int, ts int, v int);
INSERT INTO sk_src4 VALUES (1, 1, 5), (1, 2, 0), (1, 3, 1);
SET client_min_messages = warning;
SELECT match_recognize_create_stream('sk_back', replace(:q3, 'sk_src3', 'sk_src4'), 0, on_error => 'skip');
RESET client_min_messages;
SELECT sk_wait_error('sk_back') IN ('error', 'failed') AS stopped;
SELECT last_error FROM match_recognize_streams WHERE name = 'public.sk_back';
SELECT count(*) AS listed FROM sk_back_errors;
SELECT match_recognize_drop_stream('sk_back');
DROP TABLE sk_back, sk_src4;
-- the dead-letter table cannot be dropped under its stream
DROP TABLE sk_def_errors;
-- interval joins have no on_error 'skip'
CREATE TABLE sk_l (k int, ts int);
CREATE TABLE sk_r (k int, ts int);
\set qj '$$SELECT l.k, l.ts AS lts, r.ts AS rts FROM sk_l l JOIN sk_r r ON l.k = r.k AND r.ts BETWEEN l.ts - 1 AND l.ts + 1$$'
SELECT match_recognize_create_stream('sk_join', :qj, 0, on_error => 'skip');
SET client_min_messages = warning;
SELECT match_recognize_create_stream('sk_join', :qj, 0);
RESET client_min_messages;
SELECT match_recognize_alter_stream('sk_join', on_error => 'skip');
SELECT match_recognize_alter_stream('sk_join', on_error => 'stop');

-- rename_stream renames <output>_errors with the output, and the worker
-- goes on writing to it
SELECT match_recognize_rename_stream('sk_mea', 'sk_mea2');
SELECT name, error_table FROM match_recognize_streams WHERE name LIKE 'public.sk_mea%';
SELECT to_regclass('sk_mea_errors') IS NULL AS old_name_gone;
INSERT INTO sk_src2 VALUES (3, 8, 3), (3, 9, 7), (9, 10, 1);
SELECT match_recognize_wait_stream('sk_mea2');
SELECT k, ts, v, _seq, _sqlstate FROM sk_mea2_errors ORDER BY _seq;
-- one the user renamed keeps its name
ALTER TABLE sk_stop_errors RENAME TO sk_stop_dead;
SELECT match_recognize_rename_stream('sk_stop', 'sk_stop2');
SELECT match_recognize_rename_stream('sk_stop2', 'sk_stop');
SELECT name, error_table FROM match_recognize_streams WHERE name LIKE 'public.sk_stop%';
ALTER TABLE sk_stop_dead RENAME TO sk_stop_errors;

-- drop_stream drops the dead-letter table with the stream
SELECT match_recognize_drop_stream('sk_def');
SELECT match_recognize_drop_stream('sk_mea2');
SELECT match_recognize_drop_stream('sk_stop');
SELECT match_recognize_drop_stream('sk_join');
SELECT to_regclass('sk_def_errors') IS NULL, to_regclass('sk_mea2_errors') IS NULL,
       to_regclass('sk_stop_errors') IS NULL;
DROP TABLE sk_def, sk_mea2, sk_stop, sk_join, sk_src, sk_src2, sk_src3, sk_l, sk_r, sk_clean;
DROP FUNCTION sk_wait_error(text), sk_diff(text, text, text), sk_restart(text);

--
-- A row whose DEFINE or MEASURES raises an error stops the stream (on_error
-- 'stop'); the error says which DEFINE variable or measure, with the
-- stream, partition, key, source row and event time (last_error), and the
-- batch query's error has the same context line.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;

-- wait until the stream's worker stopped on an error (state error or failed)
CREATE FUNCTION er_wait_error(s text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. 400 LOOP
    EXIT WHEN EXISTS (SELECT FROM match_recognize_streams WHERE name = 'public.' || s
                      AND state IN ('error', 'failed') AND last_error IS NOT NULL);
    PERFORM pg_sleep(0.025);
  END LOOP;
  RETURN (SELECT state FROM match_recognize_streams WHERE name = 'public.' || s);
END $$;

CREATE TABLE er_src (k int, ts int, v int);
INSERT INTO er_src VALUES (1, 1, 5), (1, 2, 6), (2, 1, 5), (2, 2, 7);

-- DEFINE: 10 / v divides by zero at a row with v = 0
\set q '$$SELECT * FROM er_src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES FIRST(ts) AS t0, LAST(ts) AS t1 PATTERN (a b) DEFINE b AS 10 / v < 5)$$'
SET client_min_messages = warning;
SELECT match_recognize_create_stream('er_def', :q, 0);
RESET client_min_messages;
SELECT match_recognize_wait_stream('er_def');
SELECT k, t0, t1, _match_id FROM er_def ORDER BY k, t0;
INSERT INTO er_src VALUES (1, 3, 5), (1, 4, 0), (1, 5, 9);
SELECT er_wait_error('er_def') IN ('error', 'failed') AS stopped;
SELECT last_error FROM match_recognize_streams WHERE name = 'public.er_def';
-- nothing of the transaction with the bad row was written
SELECT k, t0, t1, _match_id FROM er_def ORDER BY k, t0;
-- the batch query says the same
SELECT match_recognize_sql(:q) AS batch \gset
\set VERBOSITY default
:batch;
\set VERBOSITY terse

-- MEASURES: 100 / (LAST(v) - 7) divides by zero for the match ending at v = 7
CREATE TABLE er_src2 (k int, ts int, v int);
INSERT INTO er_src2 VALUES (1, 1, 1), (1, 2, 2);
\set q2 '$$SELECT * FROM er_src2 MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES FIRST(ts) AS t0, 100 / (LAST(v) - 7) AS ratio PATTERN (a b) DEFINE b AS v > PREV(v))$$'
SET client_min_messages = warning;
SELECT match_recognize_create_stream('er_mea', :q2, 0);
RESET client_min_messages;
SELECT match_recognize_wait_stream('er_mea');
SELECT k, t0, ratio, _match_id FROM er_mea ORDER BY k, t0;
INSERT INTO er_src2 VALUES (2, 3, 3), (2, 4, 7), (2, 5, 0);
SELECT er_wait_error('er_mea') IN ('error', 'failed') AS stopped;
SELECT last_error FROM match_recognize_streams WHERE name = 'public.er_mea';
SELECT k, t0, ratio, _match_id FROM er_mea ORDER BY k, t0;
SELECT match_recognize_sql(:q2) AS batch \gset
\set VERBOSITY default
:batch;
\set VERBOSITY terse

SELECT match_recognize_drop_stream('er_def');
SELECT match_recognize_drop_stream('er_mea');
DROP TABLE er_def, er_mea, er_src, er_src2;
DROP FUNCTION er_wait_error(text);

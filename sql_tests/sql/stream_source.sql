--
-- Source changes: UPDATE, DELETE and TRUNCATE stop a stream with a clear
-- error (its input is no longer append-only); partitioned sources; AFTER
-- MATCH SKIP targets that are invalid for a match degrade instead of failing;
-- an error in a DEFINE expression is reported and retried.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE FUNCTION stream_status(s text)
RETURNS TABLE (state text, last_error text, rows_in bigint, matches_out bigint, skip_degraded bigint)
LANGUAGE sql AS $$
  SELECT state, regexp_replace(last_error, '\(transaction .*\)', '(transaction ..., commit at ...)'),
         rows_in, matches_out, skip_degraded
  FROM match_recognize_streams WHERE name = 'public.' || s $$;

-- UPDATE, DELETE, TRUNCATE
CREATE TABLE src_u (k int, ts int, v int);
CREATE TABLE src_d (k int, ts int, v int);
CREATE TABLE src_t (k int, ts int, v int);
-- (one stream per transaction: \gexec runs each statement on its own)
SELECT format($f$SELECT match_recognize_create_stream('out_%s',
  'SELECT * FROM src_%s MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, COUNT(*) AS n PATTERN (a b) DEFINE a AS v = 1, b AS v = 2)',
  lateness => 0)$f$, t, t)
FROM unnest(ARRAY['u', 'd', 't']) t \gexec
SELECT match_recognize_wait_stream('out_' || t) FROM unnest(ARRAY['u', 'd', 't']) t;
INSERT INTO src_u VALUES (1, 1, 1), (1, 2, 2), (1, 3, 0), (1, 4, 0);
INSERT INTO src_d SELECT * FROM src_u;
INSERT INTO src_t SELECT * FROM src_u;
UPDATE src_u SET v = 3 WHERE ts = 4;
DELETE FROM src_d WHERE ts = 4;
TRUNCATE src_t;
-- rows committed after the change are not read any more
INSERT INTO src_u VALUES (2, 10, 1), (2, 11, 2), (2, 12, 0);
SELECT match_recognize_wait_stream('out_' || t) FROM unnest(ARRAY['u', 'd', 't']) t;
SELECT t, s.* FROM unnest(ARRAY['u', 'd', 't']) t, stream_status('out_' || t) s;
-- the matches decided before the change are there
SELECT k, t0, n FROM out_u;
SELECT k, t0, n FROM out_t;
SELECT match_recognize_drop_stream('out_' || t) FROM unnest(ARRAY['u', 'd', 't']) t;

-- a partitioned source whose partitions order their columns differently
CREATE TABLE pt (k int, ts int, v int) PARTITION BY RANGE (ts);
CREATE TABLE pt_1 PARTITION OF pt FOR VALUES FROM (0) TO (100);
CREATE TABLE pt_2 (v int, k int, ts int);
ALTER TABLE pt ATTACH PARTITION pt_2 FOR VALUES FROM (100) TO (1000);
INSERT INTO pt VALUES (1, 98, 1), (1, 99, 1);
SELECT match_recognize_create_stream('pt_out',
  $$SELECT * FROM pt MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, LAST(ts) AS t1, SUM(v) AS s PATTERN (a+ b) DEFINE a AS v = 1, b AS v = 2)$$,
  lateness => 0);
SELECT match_recognize_wait_stream('pt_out');
INSERT INTO pt VALUES (1, 100, 1), (1, 101, 2), (2, 150, 1), (2, 200, 2), (9, 999, 0);
INSERT INTO pt_2 VALUES (2, 3, 300);
SELECT match_recognize_wait_stream('pt_out');
SELECT k, t0, t1, s, _match_id FROM pt_out ORDER BY k;
SELECT match_recognize_drop_stream('pt_out');

-- AFTER MATCH SKIP TO FIRST a, where a is optional: batch raises an error ...
CREATE TABLE sk (k int, ts int, v int);
INSERT INTO sk VALUES (1, 1, 2), (1, 2, -1), (1, 3, 2), (1, 4, 2);
SELECT * FROM match_recognize($$ sk MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
    MEASURES FIRST(ts) AS t0 AFTER MATCH SKIP TO FIRST a PATTERN (a? b) DEFINE a AS v < 0, b AS v > 0) $$)
  AS m(k int, t0 int);
-- ... the stream resumes past the match instead, and counts it
SELECT match_recognize_create_stream('sk_out',
  $$SELECT * FROM sk MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
    MEASURES FIRST(ts) AS t0 AFTER MATCH SKIP TO FIRST a PATTERN (a? b) DEFINE a AS v < 0, b AS v > 0)$$,
  lateness => 0);
INSERT INTO sk VALUES (1, 5, 0);
SELECT match_recognize_wait_stream('sk_out');
SELECT k, t0 FROM sk_out ORDER BY t0;
SELECT * FROM stream_status('sk_out');
SELECT match_recognize_drop_stream('sk_out');

-- an error in a DEFINE expression: the stream reports it and retries
CREATE TABLE dz (k int, ts int, v int);
SELECT match_recognize_create_stream('dz_out',
  $$SELECT * FROM dz MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
    MEASURES COUNT(*) AS n PATTERN (a+) DEFINE a AS 10 / v > 1)$$,
  lateness => 0);
INSERT INTO dz VALUES (1, 1, 1), (1, 2, 0), (1, 3, 1);
DO $$
BEGIN
  FOR i IN 1 .. 200 LOOP
    EXIT WHEN (SELECT state FROM match_recognize_streams WHERE name = 'public.dz_out') = 'error';
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT state, last_error FROM stream_status('dz_out');
SELECT match_recognize_drop_stream('dz_out');

-- the slot dropped behind the stream's back: changes may have been missed,
-- so the stream stops instead of going on with a gap.  While the worker
-- runs it holds the slot, so the slot cannot be dropped ...
CREATE TABLE gs (k int, ts int, v int);
SELECT match_recognize_create_stream('gs_out',
  $$SELECT * FROM gs MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
    MEASURES COUNT(*) AS n PATTERN (a+) WITHIN 5 DEFINE a AS v > 0)$$,
  lateness => 0);
SELECT match_recognize_wait_stream('gs_out');
DO $$
BEGIN
  PERFORM pg_drop_replication_slot(slot_name) FROM match_recognize_streams WHERE name = 'public.gs_out';
EXCEPTION WHEN object_in_use THEN
  RAISE NOTICE 'the slot is in use';
END $$;
-- ... but between a worker and the next one it can: stop the worker, and
-- stop the next one too if it took the slot first
DO $$
DECLARE
  s name := (SELECT slot_name FROM match_recognize_streams WHERE name = 'public.gs_out');
BEGIN
  FOR i IN 1 .. 1000 LOOP
    PERFORM pg_terminate_backend(active_pid) FROM pg_replication_slots
      WHERE slot_name = s AND active_pid IS NOT NULL;
    BEGIN
      PERFORM pg_drop_replication_slot(s);
      EXIT;
    EXCEPTION WHEN object_in_use THEN
      PERFORM pg_sleep(0.01);
    END;
  END LOOP;
END $$;
DO $$
BEGIN
  FOR i IN 1 .. 200 LOOP
    EXIT WHEN (SELECT state FROM match_recognize_streams WHERE name = 'public.gs_out') = 'failed';
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT state, last_error ~ 'was dropped' AS says_so FROM match_recognize_streams WHERE name = 'public.gs_out';
SELECT match_recognize_drop_stream('gs_out');

DROP FUNCTION stream_status(text);
DROP TABLE src_u, src_d, src_t, out_u, out_d, out_t, pt, pt_out, sk, sk_out, dz, dz_out, gs, gs_out;

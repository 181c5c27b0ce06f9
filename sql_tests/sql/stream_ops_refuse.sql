--
-- What a stream's worker could never run is refused by create_stream, with
-- a message, a SQLSTATE and a hint: create_stream builds and checks what
-- the worker will (the replayed bind, the lateness and the WITHIN bound on
-- event times).
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set SHOW_CONTEXT never
\pset null '(null)'

CREATE TABLE rf_int (k int, ts int, v int);
CREATE TABLE rf_num (k int, ts numeric, v int);
CREATE TABLE rf_tz (k int, ts timestamptz, v int);
CREATE UNLOGGED TABLE rf_unlogged (k int, ts int, v int);
CREATE TEMP TABLE rf_temp (k int, ts int, v int);
CREATE TABLE rf_parted (k int, ts int, v int) PARTITION BY RANGE (ts);
CREATE TABLE rf_parted_1 PARTITION OF rf_parted FOR VALUES FROM (0) TO (100);
CREATE UNLOGGED TABLE rf_parted_2 PARTITION OF rf_parted FOR VALUES FROM (100) TO (200);

-- never decoded: unlogged, temporary, an unlogged partition
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_unlogged MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN 5 DEFINE a AS v = 1)$$, 0);
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_temp MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN 5 DEFINE a AS v = 1)$$, 0);
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_parted MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN 5 DEFINE a AS v = 1)$$, 0);
-- WITHIN must be a constant the event time can be added to
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_int MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN v DEFINE a AS v = 1)$$, 0);
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_int MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN (v + 1) DEFINE a AS v = 1)$$, 0);
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_int MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN (SELECT 5) DEFINE a AS v = 1)$$, 0);
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_num MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN INTERVAL '1 second' DEFINE a AS v = 1)$$, 0::numeric);
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_tz MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN 5 DEFINE a AS v = 1)$$, interval '1 s');
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_int MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN -5 DEFINE a AS v = 1)$$, 0);
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_int MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN NULL::int DEFINE a AS v = 1)$$, 0);
-- lateness and WITHIN that overflow the event time's type, a negative lateness
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_tz MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN INTERVAL '1 hour' DEFINE a AS v = 1)$$, interval '300000 years');
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_tz MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN INTERVAL '300000 years' DEFINE a AS v = 1)$$, interval '1 s');
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_int MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN 5 DEFINE a AS v = 1)$$, -5);
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_tz MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN INTERVAL '1 hour' DEFINE a AS v = 1)$$, interval '-1 minute');
-- the SQLSTATEs
\set VERBOSITY terse
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_unlogged MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN 5 DEFINE a AS v = 1)$$, 0) \gset
\echo :LAST_ERROR_SQLSTATE
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_int MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN v DEFINE a AS v = 1)$$, 0) \gset
\echo :LAST_ERROR_SQLSTATE
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_num MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN INTERVAL '1 second' DEFINE a AS v = 1)$$, 0::numeric) \gset
\echo :LAST_ERROR_SQLSTATE
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_tz MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN INTERVAL '1 hour' DEFINE a AS v = 1)$$, interval '300000 years') \gset
\echo :LAST_ERROR_SQLSTATE
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_int MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN 5 DEFINE a AS v = 1)$$, -5) \gset
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
-- nothing was left behind
SELECT count(*) AS streams FROM match_recognize_stream WHERE name LIKE 'public.rf\_%';
SELECT count(*) AS slots FROM pg_replication_slots WHERE database = current_database();
SELECT count(*) AS tables FROM pg_class WHERE relname LIKE 'rf\_out%' OR relname LIKE '\_mr\_%';

-- what runs: a numeric event time with a numeric WITHIN and lateness
INSERT INTO rf_num VALUES (1, 1, 1), (1, 2.5, 1);
SELECT match_recognize_create_stream('rf_out', $$SELECT * FROM rf_num MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN 100 DEFINE a AS v = 1)$$, 0.5);
INSERT INTO rf_num VALUES (1, 200, 1);
SELECT match_recognize_wait_stream('rf_out');
SELECT state, rows_in, matches_out FROM match_recognize_streams WHERE name = 'public.rf_out';
SELECT t0 FROM rf_out ORDER BY t0;
SELECT match_recognize_drop_stream('rf_out');
DROP TABLE rf_out, rf_int, rf_num, rf_tz, rf_unlogged, rf_temp, rf_parted;

--
-- MATCH_LEVELS as a stream: create_stream accepts it (a levels stream,
-- stream_lstream_*.sql run it) and refuses, before it makes anything (no
-- slot, no output table), what a levels stream cannot run.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY default
CREATE TABLE slv_ticks (key int, ts bigint, price bigint, k2 numeric);
CREATE TABLE slv_alerts (key int, qid int, level bigint, k2 numeric);
-- a DELETE of a standing query is decoded with its row only under
-- REPLICA IDENTITY FULL
SELECT match_recognize_create_stream('slv_stream', $$ SELECT * FROM slv_ticks MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE price QUERIES slv_alerts (ID qid, LEVEL level)) AS f $$,
    0::bigint);
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'mr%';
SELECT to_regclass('slv_stream');

\set VERBOSITY terse
ALTER TABLE slv_alerts REPLICA IDENTITY FULL;
CREATE FUNCTION slv_refusal(item text, lateness text DEFAULT '0::bigint', extra text DEFAULT '') RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('SELECT match_recognize_create_stream(%L, %L, lateness => %s%s)', 'slv_bad', item, lateness, extra);
  RETURN 'created';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT slv_refusal('slv_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price QUERIES slv_alerts (ID qid, LEVEL level) MEASURES FIRE_ROW() AS r)');
SELECT slv_refusal('slv_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price + 1 QUERIES slv_alerts (ID qid, LEVEL level))');
SELECT slv_refusal('slv_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price QUERIES slv_alerts (ID qid, LEVEL level) BAND level / 10)');
SELECT slv_refusal('slv_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts, price VALUE price QUERIES slv_alerts (ID qid, LEVEL level))');
SELECT slv_refusal('slv_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts DESC VALUE price QUERIES slv_alerts (ID qid, LEVEL level))');
SELECT slv_refusal('(SELECT * FROM slv_ticks) t MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price QUERIES slv_alerts (ID qid, LEVEL level))');
SELECT slv_refusal('slv_ticks MATCH_LEVELS (PARTITION BY k2 ORDER BY ts VALUE price QUERIES slv_alerts (ID qid, LEVEL level))');
SELECT slv_refusal('slv_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price QUERIES slv_alerts (ID qid, LEVEL level))', 'interval ''1 s''');
SELECT slv_refusal('slv_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price QUERIES slv_alerts (ID qid, LEVEL level))', '0::bigint', ', idle_advance => true');
SELECT slv_refusal('slv_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price QUERIES slv_alerts (ID qid, LEVEL level))', '0::bigint', ', on_error => ''skip''');
SELECT slv_refusal('slv_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price QUERIES slv_alerts (ID qid, LEVEL level))', 'NULL::bigint');
SELECT slv_refusal('slv_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price QUERIES slv_alerts (ID qid, LEVEL nosuch))');
SELECT slv_refusal('SELECT f.key FROM slv_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price QUERIES slv_alerts (ID qid, LEVEL level)) AS f');
SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'mr%';
SELECT to_regclass('slv_bad');

-- accepted: the stream, its output table and its copy of the queries
INSERT INTO slv_alerts VALUES (1, 1, 100, NULL), (1, 2, NULL, NULL), (NULL, 3, 100, NULL);
SELECT match_recognize_create_stream('slv_stream', $$ SELECT * FROM slv_ticks MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE price QUERIES slv_alerts (ID qid, LEVEL level)) AS f $$,
    0::bigint);
SELECT name, source, kind, lateness, next_part FROM match_recognize_stream WHERE name = 'public.slv_stream';
SELECT match_recognize_drop_stream('slv_stream');
DROP TABLE slv_ticks, slv_alerts, slv_stream;
DROP FUNCTION slv_refusal;

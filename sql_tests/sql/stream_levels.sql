--
-- MATCH_LEVELS runs in batch only: create_stream refuses it before it makes
-- anything (no slot, no output table).
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY default
CREATE TABLE slv_ticks (key int, ts bigint, price bigint);
CREATE TABLE slv_alerts (key int, qid int, level bigint);
SELECT match_recognize_create_stream('slv_stream', $$ SELECT * FROM slv_ticks MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE price QUERIES slv_alerts (ID qid, LEVEL level)) AS f $$,
    0::bigint);
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'mr%';
SELECT to_regclass('slv_stream');
DROP TABLE slv_ticks, slv_alerts;

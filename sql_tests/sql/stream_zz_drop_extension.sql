--
-- DROP EXTENSION removes the streams' workers, slots and internal tables
-- (runs last: the other files create the extension again if needed).
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse
CREATE TABLE dx (k int, ts int, v int);
INSERT INTO dx VALUES (1, 1, 1), (1, 2, 2), (1, 3, 0);
SELECT match_recognize_create_stream('dx_out',
  $$SELECT * FROM dx MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES FIRST(ts) AS t0
      PATTERN (a b) WITHIN 10 DEFINE a AS v = 1, b AS v = 2)$$, 0);
SELECT match_recognize_wait_stream('dx_out');
SELECT slot_name AS dx_slot FROM match_recognize_streams \gset
DROP EXTENSION match_recognize;
-- the worker notices, drops the slot and exits
DO $$
BEGIN
  FOR i IN 1 .. 200 LOOP
    EXIT WHEN NOT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name LIKE 'mr\_%')
          AND NOT EXISTS (SELECT FROM pg_stat_activity WHERE backend_type = 'match_recognize stream');
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT count(*) FROM pg_replication_slots WHERE slot_name = :'dx_slot';
SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'match_recognize stream';
SELECT count(*) FROM pg_class WHERE relname LIKE '\_mr\_%';
-- the output table is the user's and stays
SELECT k, t0 FROM dx_out;
DROP TABLE dx, dx_out;

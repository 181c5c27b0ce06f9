--
-- Time in patterns (->, NOT v, windows FROM/TO, CLOCK) needs the stream's
-- timers, which the worker does not have yet: creating such a stream is
-- refused (0A000) and leaves nothing behind.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY default
\set SHOW_CONTEXT never
CREATE TABLE tr_ticks (key int, ts bigint, price bigint, vol bigint);
SELECT match_recognize_create_stream('tr_out',
  $$SELECT * FROM tr_ticks MATCH_RECOGNIZE (
      PARTITION BY key ORDER BY ts
      MEASURES MATCH_DEADLINE() AS deadline
      AFTER MATCH SKIP TO LAST S
      PATTERN (R -> S -> NOT REV)
      WITHIN 60000 FROM R TO S, 10000 FROM S TO REV
      DEFINE R AS R.price * 100 >= PREV(R.price) * 102, S AS S.vol >= 1000,
             REV AS REV.price * 100 <= S.price * 99)$$, lateness => 0::bigint);
SELECT match_recognize_create_stream('tr_out',
  $$SELECT * FROM tr_ticks MATCH_RECOGNIZE (
      PARTITION BY key ORDER BY ts MEASURES A.ts AS a
      PATTERN (A -> B) DEFINE A AS vol > 1, B AS vol > 2)$$, lateness => 0::bigint);
-- timeout rows, even over today's WITHIN alone
SELECT match_recognize_create_stream('tr_out',
  $$SELECT * FROM tr_ticks MATCH_RECOGNIZE (
      PARTITION BY key ORDER BY ts MEASURES A.ts AS a, TIMED_OUT() AS t
      ONE ROW PER MATCH WITH TIMEOUT ROWS
      PATTERN (A B) WITHIN 10 DEFINE A AS vol > 1, B AS vol > 2)$$, lateness => 0::bigint);
SELECT count(*) FROM match_recognize_streams WHERE name = 'tr_out';
SELECT to_regclass('tr_out');
DROP TABLE tr_ticks;

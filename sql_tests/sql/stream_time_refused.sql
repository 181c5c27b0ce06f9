--
-- Time in patterns in streams: the clock of a stream is its watermark, so
-- an explicit CLOCK expression is refused (0A000; CLOCK MAX, what a stream
-- does anyway, is accepted); a refused stream leaves nothing behind.
-- What streams run is in stream_tstream_time, stream_tstream2_window and
-- stream_tstream2_noskip (AFTER MATCH NO SKIP).
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
      CLOCK 5000
      DEFINE R AS R.price * 100 >= PREV(R.price) * 102, S AS S.vol >= 1000,
             REV AS REV.price * 100 <= S.price * 99)$$, lateness => 0::bigint);
\echo :LAST_ERROR_SQLSTATE
-- timeout rows with a clock
SELECT match_recognize_create_stream('tr_out',
  $$SELECT * FROM tr_ticks MATCH_RECOGNIZE (
      PARTITION BY key ORDER BY ts MEASURES A.ts AS a, TIMED_OUT() AS t
      ONE ROW PER MATCH WITH TIMEOUT ROWS
      PATTERN (A B) WITHIN 10 CLOCK 7 DEFINE A AS vol > 1, B AS vol > 2)$$, lateness => 0::bigint);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM match_recognize_streams WHERE name = 'public.tr_out';
SELECT to_regclass('tr_out');
-- CLOCK MAX is the stream's own clock
SELECT match_recognize_create_stream('tr_out',
  $$SELECT * FROM tr_ticks MATCH_RECOGNIZE (
      PARTITION BY key ORDER BY ts
      MEASURES MATCH_DEADLINE() AS deadline
      AFTER MATCH SKIP TO LAST S
      PATTERN (R -> S -> NOT REV)
      WITHIN 60000 FROM R TO S, 10000 FROM S TO REV
      CLOCK MAX
      DEFINE R AS R.price * 100 >= PREV(R.price) * 102, S AS S.vol >= 1000,
             REV AS REV.price * 100 <= S.price * 99)$$, lateness => 0::bigint);
SELECT count(*) FROM match_recognize_streams WHERE name = 'public.tr_out';
SELECT match_recognize_drop_stream('tr_out');
DROP TABLE tr_ticks, tr_out;

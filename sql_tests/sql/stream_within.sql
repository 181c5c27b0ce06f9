--
-- WITHIN decides held matches when the watermark passes the deadline, also
-- in partitions that receive no more rows; idle_advance lets the wall clock
-- move the watermark of a quiet source.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE TABLE ev (k text, ts timestamptz, kind text);
SELECT match_recognize_create_stream('within_out',
  $$SELECT * FROM ev MATCH_RECOGNIZE (
      PARTITION BY k ORDER BY ts
      MEASURES FIRST(a.ts) AS a_ts, LAST(b.ts) AS last_b, COUNT(b.*) AS nb
      PATTERN (a b+) WITHIN INTERVAL '1 minute'
      DEFINE a AS kind = 'a', b AS kind = 'b')$$,
  lateness => interval '0 seconds');
-- x: a b b; the greedy b+ could still take a later b, so the match is held
INSERT INTO ev VALUES ('x', '2024-01-01 00:00:00', 'a'), ('x', '2024-01-01 00:00:10', 'b'),
                      ('x', '2024-01-01 00:00:20', 'b');
-- only y moves the watermark from now on
INSERT INTO ev VALUES ('y', '2024-01-01 00:00:30', 'a');
SELECT match_recognize_wait_stream('within_out');
SELECT k, a_ts, last_b, nb FROM within_out ORDER BY k;
-- watermark = deadline (00:01:00): a row at 00:01:00 could still join, held
INSERT INTO ev VALUES ('y', '2024-01-01 00:01:00', 'c');
SELECT match_recognize_wait_stream('within_out');
SELECT k, a_ts, last_b, nb FROM within_out ORDER BY k;
-- watermark past the deadline: x's match is final although x is idle
INSERT INTO ev VALUES ('y', '2024-01-01 00:01:00.000001', 'c');
SELECT match_recognize_wait_stream('within_out');
SELECT k, a_ts, last_b, nb, _match_id FROM within_out ORDER BY k;
-- a match that no future row can change is written as soon as the row that
-- decides it is released, not at its deadline (00:03:00): z's a b is decided
-- by the c right after it
INSERT INTO ev VALUES ('z', '2024-01-01 00:02:00', 'a'), ('z', '2024-01-01 00:02:01', 'b'),
                      ('z', '2024-01-01 00:02:02', 'c');
INSERT INTO ev VALUES ('y', '2024-01-01 00:02:03', 'c');
SELECT match_recognize_wait_stream('within_out');
SELECT k, a_ts, last_b, nb FROM within_out ORDER BY k;
SELECT rows_retained, matches_out FROM match_recognize_streams;
SELECT match_recognize_drop_stream('within_out');

-- idle_advance: the wall clock is an event time, so a quiet source finalizes
CREATE TABLE quiet (k text, ts timestamptz, kind text);
INSERT INTO quiet VALUES ('q', now() - interval '10 minutes', 'a'), ('q', now() - interval '9 minutes', 'b');
SELECT match_recognize_create_stream('quiet_out',
  $$SELECT * FROM quiet MATCH_RECOGNIZE (
      PARTITION BY k ORDER BY ts MEASURES COUNT(*) AS n
      PATTERN (a b+) WITHIN INTERVAL '2 minutes'
      DEFINE a AS kind = 'a', b AS kind = 'b')$$,
  lateness => interval '1 second', idle_advance => true);
SELECT match_recognize_wait_stream('quiet_out');
SELECT k, n FROM quiet_out;
-- the same without idle_advance waits for a later row
CREATE TABLE quiet2 (LIKE quiet);
INSERT INTO quiet2 SELECT * FROM quiet;
SELECT match_recognize_create_stream('quiet2_out',
  $$SELECT * FROM quiet2 MATCH_RECOGNIZE (
      PARTITION BY k ORDER BY ts MEASURES COUNT(*) AS n
      PATTERN (a b+) WITHIN INTERVAL '2 minutes'
      DEFINE a AS kind = 'a', b AS kind = 'b')$$,
  lateness => interval '1 second');
SELECT match_recognize_wait_stream('quiet2_out');
SELECT count(*) FROM quiet2_out;
SELECT match_recognize_drop_stream('quiet_out');
SELECT match_recognize_drop_stream('quiet2_out');
DROP TABLE ev, within_out, quiet, quiet_out, quiet2, quiet2_out;

--
-- Levels streams: queries of one key that share an ID.  The batch query
-- returns a row for every query that fires, so the stream writes one too:
-- the fires of one row with the same ID are numbered in (LEVEL, DIRECTION
-- (UP first), BAND, the order the queries were added) order and the second
-- and later get ":<n>" after "<key>:<ID>:<row>".  (Before, the second fire's
-- _match_id repeated the first's and the worker failed on the unique index
-- at every retry.)  The fires are worked out by hand.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE TABLE lsi_ticks (key text, ts int, price int);
CREATE TABLE lsi_q (key text, qid text, level int, dir text, band int);
ALTER TABLE lsi_q REPLICA IDENTITY FULL;
-- key a: ID x four times (levels 100 UP, 100 UP again, 90 UP, 100 DOWN
-- band 5), ID y once at 95 UP; key b: ID x at 10 UP and, with a NULL ID,
-- twice at 10 UP; ID with ':' in it
INSERT INTO lsi_q VALUES
  ('a', 'x', 100, 'UP', 0), ('a', 'x', 100, 'UP', 0), ('a', 'x', 90, 'UP', 0),
  ('a', 'x', 100, 'DOWN', 5), ('a', 'y', 95, 'UP', 0),
  ('b', 'x', 10, 'UP', 0), ('b', NULL, 10, 'UP', 0), ('b', NULL, 10, 'UP', 0),
  ('b', 'p:q', 10, 'UP', 0), ('b', 'p:q', 10, 'UP', 0);
SELECT match_recognize_create_stream('lsi_out',
  'lsi_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price '
  'QUERIES lsi_q (ID qid, LEVEL level, DIRECTION dir, BAND band))', lateness => 0);
SELECT match_recognize_wait_stream('lsi_out');

-- a: 80 (row 1), then 120 (row 2): the rise fires x at 90, both x at 100
-- (UP) and y, numbered a:x:2, a:x:2:2, a:x:2:3 and a:y:2; 50 (row 3): the
-- fall fires the DOWN x at 100 alone (a:x:3, no ordinal) and re-arms the
-- UP queries; 130 (row 4): the same four as row 2 (and re-arms the DOWN
-- one, 130 >= 105); 0 (row 5, released by b's ts 8): the DOWN x again.
-- b: 0 (row 1), then 20 (row 2): x, both NULL IDs and both 'p:q' fire.
INSERT INTO lsi_ticks VALUES ('a', 1, 80), ('b', 2, 0);
INSERT INTO lsi_ticks VALUES ('a', 3, 120), ('b', 4, 20);
INSERT INTO lsi_ticks VALUES ('a', 5, 50);
INSERT INTO lsi_ticks VALUES ('a', 6, 130);
INSERT INTO lsi_ticks VALUES ('a', 7, 0), ('b', 8, 0);
SELECT match_recognize_wait_stream('lsi_out');
SELECT state, last_error, matches_out FROM match_recognize_streams WHERE name = 'public.lsi_out';
SELECT key, qid, level, ts, _match_id FROM lsi_out ORDER BY _match_id COLLATE "C";

-- the same fires as the batch query (without the identity) over the rows
-- below the watermark (8)
SELECT count(*) AS differ FROM (
  (SELECT key, qid, level, ts FROM match_recognize(
     'lsi_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price '
     'QUERIES lsi_q (ID qid, LEVEL level, DIRECTION dir, BAND band))')
     AS f(key text, qid text, level int, ts int)
   WHERE ts < 8
   EXCEPT ALL SELECT key, qid, level, ts FROM lsi_out)
  UNION ALL
  (SELECT key, qid, level, ts FROM lsi_out
   EXCEPT ALL SELECT key, qid, level, ts FROM match_recognize(
     'lsi_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price '
     'QUERIES lsi_q (ID qid, LEVEL level, DIRECTION dir, BAND band))')
     AS f(key text, qid text, level int, ts int) WHERE ts < 8)) d;

-- a restart replays nothing twice and numbers the same way: a 200 (row
-- 6) fires the four UP queries, b 50 (row 4) its five
SELECT pg_terminate_backend(worker_pid) FROM match_recognize_streams WHERE name = 'public.lsi_out';
SELECT pg_sleep(0.3);
INSERT INTO lsi_ticks VALUES ('a', 9, 200), ('b', 10, 50);
INSERT INTO lsi_ticks VALUES ('a', 11, 0);
SELECT match_recognize_wait_stream('lsi_out');
SELECT state, last_error, matches_out FROM match_recognize_streams WHERE name = 'public.lsi_out';
SELECT key, qid, level, ts, _match_id FROM lsi_out WHERE ts > 6 ORDER BY _match_id COLLATE "C";

SELECT match_recognize_drop_stream('lsi_out');
DROP TABLE lsi_ticks, lsi_q, lsi_out;

--
-- Levels streams: INSERT and DELETE of standing queries take effect while
-- the stream runs.  The rule: a change applies to the source rows released
-- after the commit that made it (released: below the watermark, here the
-- largest time seen, lateness 0), so it is decided by the WAL's commit
-- order alone.  A new query starts armed, as every query does in batch.
-- The expected fires are worked out by hand in the comments.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE TABLE lsc_ticks (key int, ts int, price int);
CREATE TABLE lsc_q (key int, qid int, level int, dir text);
ALTER TABLE lsc_q REPLICA IDENTITY FULL;
INSERT INTO lsc_q VALUES (1, 1, 100, 'UP'), (1, 2, 50, 'DOWN');
SELECT match_recognize_create_stream('lsc_out',
  'lsc_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price '
  'QUERIES lsc_q (ID qid, LEVEL level, DIRECTION dir) CROSSING UP BAND 5)', lateness => 0);
-- the backfill (of an empty input) first: a change committed before it is
-- in its snapshot, not applied one transaction at a time
SELECT match_recognize_wait_stream('lsc_out');

-- A: key 1 takes 90 (its first value) and 110; ts 1 is released
INSERT INTO lsc_ticks VALUES (1, 1, 90), (1, 2, 110);
-- B: ts 2 (110) is released: the rise 90 -> 110 fires q1 (100, UP)
INSERT INTO lsc_ticks VALUES (1, 3, 40);
-- C: q3 (60, UP) is added, then ts 3 (40) is released, after C's commit:
-- the fall 110 -> 40 fires q2 (50, DOWN), re-arms q1 (40 <= 95); q3 is
-- armed and a fall does not fire it
BEGIN;
INSERT INTO lsc_q VALUES (1, 3, 60, 'UP');
INSERT INTO lsc_ticks VALUES (1, 4, 70);
COMMIT;
-- D: ts 4 (70): the rise 40 -> 70 fires q3 (added before ts 4 was
-- released) and re-arms q2 (70 >= 55)
INSERT INTO lsc_ticks VALUES (1, 5, 65);
-- E: q3 is deleted, then ts 5 (65) is released: nothing
BEGIN;
DELETE FROM lsc_q WHERE qid = 3;
INSERT INTO lsc_ticks VALUES (1, 6, 50);
COMMIT;
-- F: ts 6 (50): the fall 65 -> 50 fires q2 again
INSERT INTO lsc_ticks VALUES (1, 7, 120);
-- G: q4 (110, UP) alone in a transaction, then H: ts 7 (120): the rise
-- 50 -> 120 fires q1 (re-armed at ts 3) and q4, in level order, and
-- re-arms q2
INSERT INTO lsc_q VALUES (1, 4, 110, NULL);
INSERT INTO lsc_ticks VALUES (1, 8, 0);
-- I: key 2's first row; ts 8 (0) is released: the fall 120 -> 0 fires q2
INSERT INTO lsc_ticks VALUES (2, 9, 10);
-- J: q5 (20, CROSSING UP) on key 2, then ts 9 (10), key 2's first value,
-- is released: nothing
BEGIN;
INSERT INTO lsc_q VALUES (2, 5, 20, NULL);
INSERT INTO lsc_ticks VALUES (2, 10, 30);
COMMIT;
-- K: ts 10 (30): key 2's rise 10 -> 30 fires q5, key 2's second row
INSERT INTO lsc_ticks VALUES (1, 11, 0);
SELECT match_recognize_wait_stream('lsc_out');

-- expected: 1:1:2, 1:2:3, 1:3:4, 1:2:6, 1:1:7, 1:4:7, 1:2:8, 2:5:2
SELECT key, qid, level, ts, _match_id FROM lsc_out ORDER BY ts, level;
SELECT state, last_error, rows_in, matches_out, rows_pending, watermark
FROM match_recognize_streams WHERE name = 'public.lsc_out';

-- the stream's copy of the standing queries follows the table
SELECT count(*) FROM lsc_q;

-- a worker restart keeps the query set: q3 stays deleted, q4 and q5 stay
SELECT pg_terminate_backend(worker_pid) FROM match_recognize_streams WHERE name = 'public.lsc_out';
SELECT pg_sleep(0.5);
-- L: ts 11 (0) released: key 1 falls 0 -> 0, nothing; M: ts 12 (200):
-- the rise 0 -> 200 fires q1 and q4 (re-armed at ts 8), not the deleted q3
INSERT INTO lsc_ticks VALUES (1, 12, 200);
INSERT INTO lsc_ticks VALUES (1, 13, 0);
SELECT match_recognize_wait_stream('lsc_out');
SELECT key, qid, level, ts, _match_id FROM lsc_out WHERE ts >= 11 ORDER BY ts, level;

-- an UPDATE of the query table is refused: the stream stops with the reason
UPDATE lsc_q SET level = 0 WHERE qid = 1;
SELECT match_recognize_wait_stream('lsc_out');
SELECT state, regexp_replace(last_error, 'transaction \d+, commit at [0-9A-F/]+', 'transaction N, commit at L') AS last_error
FROM match_recognize_streams WHERE name = 'public.lsc_out';

SELECT match_recognize_drop_stream('lsc_out');
DROP TABLE lsc_out;
TRUNCATE lsc_ticks, lsc_q;

-- a change of the query table's columns that its decoded rows no longer
-- fit (a type change) stops the stream before it reads such a row
SELECT match_recognize_create_stream('lsc_out2',
  'lsc_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price '
  'QUERIES lsc_q (ID qid, LEVEL level)) AS f', lateness => 0);
INSERT INTO lsc_q VALUES (1, 1, 10, NULL);
INSERT INTO lsc_ticks VALUES (1, 1, 5), (1, 2, 15), (1, 3, 0);
SELECT match_recognize_wait_stream('lsc_out2');
ALTER TABLE lsc_q ALTER COLUMN level TYPE bigint;
INSERT INTO lsc_q VALUES (1, 2, 10, NULL);
INSERT INTO lsc_ticks VALUES (1, 4, 50), (1, 5, 0);
SELECT match_recognize_wait_stream('lsc_out2');
SELECT key, qid, level, ts, _match_id FROM lsc_out2;
SELECT state, regexp_replace(last_error, 'transaction \d+, commit at [0-9A-F/]+', 'transaction N, commit at L') AS last_error
FROM match_recognize_streams WHERE name = 'public.lsc_out2';
SELECT match_recognize_drop_stream('lsc_out2');
DROP TABLE lsc_ticks, lsc_q, lsc_out2;

--
-- Interval join streams: non-finite times, DDL on the inputs, append-only.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE TABLE jd_l (id int, k int, ts timestamp);
CREATE TABLE jd_r (id int, k int, ts timestamp);
SELECT match_recognize_create_stream('jd_full', $$SELECT l.id AS lid, r.id AS rid, l.ts AS lts, r.ts AS rts
  FROM jd_l l FULL JOIN jd_r r ON r.k = l.k AND r.ts BETWEEN l.ts - interval '1 minute' AND l.ts + interval '1 minute'$$,
  lateness => interval '0 seconds', late_table => 'jd_full_late');
SELECT match_recognize_wait_stream('jd_full');

-- infinite times: counted in null_rows, copied to the late table and
-- dropped (the join is the query over the rows with finite times, so they
-- are not padded either); a NULL time matches nothing and is padded at once
INSERT INTO jd_l VALUES (1, 1, '2026-01-01 10:00'), (2, 1, 'infinity'), (3, 1, '-infinity'), (4, 1, NULL);
INSERT INTO jd_r VALUES (11, 1, '2026-01-01 10:00:30'), (12, 1, 'infinity'), (13, 1, NULL);
INSERT INTO jd_l VALUES (5, 2, '2026-01-01 11:00');
INSERT INTO jd_r VALUES (14, 2, '2026-01-01 11:00');
SELECT match_recognize_wait_stream('jd_full');
SELECT lid, rid, lts, rts FROM jd_full ORDER BY lid NULLS LAST, rid NULLS LAST;
SELECT _side, _row, _watermark FROM jd_full_late ORDER BY _side, _row;
SELECT state, last_error, rows_in, null_rows, late_rows FROM match_recognize_streams WHERE name = 'public.jd_full';
-- the batch query over the finite times agrees on every closed row
SELECT l.id AS lid, r.id AS rid FROM (SELECT * FROM jd_l WHERE ts IS NULL OR isfinite(ts)) l
  FULL JOIN (SELECT * FROM jd_r WHERE ts IS NULL OR isfinite(ts)) r
  ON r.k = l.k AND r.ts BETWEEN l.ts - interval '1 minute' AND l.ts + interval '1 minute'
EXCEPT SELECT lid, rid FROM jd_full ORDER BY 1 NULLS LAST, 2 NULLS LAST;

-- ALTER TABLE on either input: a change of the columns the worker decodes,
-- or SET UNLOGGED, is refused at once; anything else goes through
ALTER TABLE jd_r ADD COLUMN extra int;
ALTER TABLE jd_r DROP COLUMN k;
ALTER TABLE jd_r RENAME COLUMN ts TO at;
ALTER TABLE jd_r ALTER COLUMN id TYPE bigint;
ALTER TABLE jd_r SET UNLOGGED;
ALTER TABLE jd_l ADD COLUMN extra int;
ALTER TABLE jd_l RENAME COLUMN k TO kk;
ALTER TABLE jd_l SET UNLOGGED;
ALTER TABLE jd_r ADD CONSTRAINT jd_r_id CHECK (id > 0);
ALTER TABLE jd_l ALTER COLUMN id SET STATISTICS 200;
INSERT INTO jd_r VALUES (15, 2, '2026-01-01 11:00:10');
SELECT match_recognize_wait_stream('jd_full');
SELECT state, last_error, rows_in FROM match_recognize_streams WHERE name = 'public.jd_full';

-- DROP TABLE of an input is refused; with CASCADE it drops the stream
DROP TABLE jd_r;
DROP TABLE jd_l;
SET client_min_messages = warning;
DROP TABLE jd_r CASCADE;
RESET client_min_messages;
SELECT count(*) FROM match_recognize_streams WHERE name = 'public.jd_full';
SELECT to_regclass('jd_full') IS NOT NULL AS output_kept;
DROP TABLE jd_full, jd_full_late;

-- DELETE on an input fails the stream with its reason (append-only)
CREATE TABLE jd_r (id int, k int, ts timestamp);
SELECT match_recognize_create_stream('jd_inner', $$SELECT l.id AS lid, r.id AS rid
  FROM jd_l l JOIN jd_r r ON r.k = l.k AND r.ts BETWEEN l.ts AND l.ts + interval '1 minute'$$,
  lateness => interval '0 seconds');
SELECT match_recognize_wait_stream('jd_inner');
DELETE FROM jd_r;
INSERT INTO jd_r VALUES (16, 1, '2026-01-01 12:00');
DELETE FROM jd_r WHERE id = 16;
SELECT match_recognize_wait_stream('jd_inner');
SELECT state, regexp_replace(last_error, 'transaction \d+, commit at [0-9A-F/]+', 'transaction N, commit at L') AS last_error
FROM match_recognize_streams WHERE name = 'public.jd_inner';
SELECT match_recognize_drop_stream('jd_inner');
-- the workers drop their slots
DO $$ BEGIN
  FOR i IN 1 .. 400 LOOP
    EXIT WHEN NOT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name LIKE 'mr\_%');
    PERFORM pg_sleep(0.025);
  END LOOP;
END $$;
SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'mr\_%';
DROP TABLE jd_inner, jd_l, jd_r;

--
-- Levels streams: the backfill.  The input rows and standing queries that
-- exist when the stream is created are read by the worker's first cycle
-- under one snapshot; a decoded transaction that snapshot saw is skipped,
-- so every row is read exactly once whether it was committed before the
-- stream, while the worker started or during the copy.  The fires equal
-- the batch MATCH_LEVELS query over the whole table (the rows below the
-- watermark that did not go to the late table).  Queries of one key may
-- share an ID: every fire the batch query returns is a row, with its own
-- _match_id.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE TABLE lsf_ticks (id int, key int, ts bigint, price bigint);
CREATE TABLE lsf_q (key int, qid int, level bigint, dir text, band bigint);
ALTER TABLE lsf_q REPLICA IDENTITY FULL;
-- per key 0 .. 19: UP and DOWN queries at levels 0 .. 100 step 10; the IDs
-- repeat (l % 4), so one row can fire several queries of one ID; two
-- exact duplicates per key
INSERT INTO lsf_q
SELECT k, k * 100 + l % 4, l * 10,
       CASE (k + l) % 3 WHEN 0 THEN 'UP' WHEN 1 THEN 'down' ELSE NULL END,
       CASE WHEN l % 4 = 0 THEN NULL ELSE (l * 7) % 16 END
FROM generate_series(0, 19) k, generate_series(0, 10) l;
INSERT INTO lsf_q SELECT key, qid, level, dir, band FROM lsf_q WHERE level = 50;

-- rows j: key and price from a hash of j, the time 40 * j - 2 * (0 .. 19)
-- (out of order by less than the lateness, 40; distinct); some NULL prices
-- and times
CREATE FUNCTION lsf_row(j int) RETURNS lsf_ticks LANGUAGE sql AS $$
  SELECT j, h % 20, CASE WHEN h % 41 = 0 THEN NULL ELSE 40 * j - 2 * ((h / 7) % 20) END,
         CASE WHEN h % 37 = 0 THEN NULL ELSE (h / 11) % 110 - 5 END
  FROM (SELECT abs(hashint4(j)) AS h) x
$$;
CREATE PROCEDURE lsf_feed(first int, last int) LANGUAGE plpgsql AS $$
BEGIN
  FOR j IN first .. last LOOP
    INSERT INTO lsf_ticks SELECT (lsf_row(j)).*;
    IF j % 3 = 0 THEN
      COMMIT;
    END IF;
  END LOOP;
  COMMIT;
END $$;

-- 30 000 rows before the stream
INSERT INTO lsf_ticks SELECT (lsf_row(j)).* FROM generate_series(1, 30000) j;

CREATE FUNCTION lsf_item(input text) RETURNS text LANGUAGE sql AS $$
  SELECT format('%s MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price '
                'QUERIES lsf_q (ID qid, LEVEL level, DIRECTION dir, BAND band) CROSSING UP BAND 3 '
                'MEASURES FIRE_ROW() AS fire_row)', input)
$$;
-- the stream's fires against the batch query's over the whole table: the
-- rows below the watermark and not in the late table; the fire identity
-- without the ordinal, and the number of fires per identity
CREATE FUNCTION lsf_diff() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  w bigint := (SELECT watermark::bigint FROM match_recognize_streams WHERE name = 'public.lsf_out');
  batch text := format('SELECT key, qid, level, ts, key || '':'' || qid || '':'' || fire_row AS id '
                       'FROM match_recognize(%L) AS f(key int, qid int, level bigint, ts bigint, fire_row bigint)',
                       lsf_item(format('(SELECT * FROM lsf_ticks WHERE ts < %s AND id NOT IN (SELECT id FROM lsf_late)) AS s', w)));
  stream text := 'SELECT key, qid, level, ts, substring(_match_id from ''^[^:]*:[^:]*:[^:]*'') FROM lsf_out';
  n_stream bigint;
  n_batch bigint;
  d bigint;
BEGIN
  SELECT count(*) INTO n_stream FROM lsf_out;
  EXECUTE format('SELECT count(*) FROM (%s) b', batch) INTO n_batch;
  EXECUTE format('SELECT count(*) FROM ((%1$s EXCEPT ALL %2$s) UNION ALL (%2$s EXCEPT ALL %1$s)) x',
                 batch, stream) INTO d;
  RETURN format('stream %s fires, batch %s fires, %s differ', n_stream, n_batch, d);
END $$;
-- every row of the table read exactly once: rows_in is the table's count,
-- the rows without a time are the late table's, the pending rows are those
-- at or above the watermark
CREATE FUNCTION lsf_counts() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN (SELECT format('rows_in = table: %s, null_rows = NULL times: %s, late_rows = late table rows with a time: %s, rows_pending = rows at or above the watermark: %s',
                s.rows_in = (SELECT count(*) FROM lsf_ticks),
                s.null_rows = (SELECT count(*) FROM lsf_ticks WHERE ts IS NULL),
                s.late_rows = (SELECT count(*) FROM lsf_late WHERE ts IS NOT NULL),
                s.rows_pending = (SELECT count(*) FROM lsf_ticks WHERE ts >= s.watermark::bigint
                                  AND id NOT IN (SELECT id FROM lsf_late)))
  FROM match_recognize_streams s WHERE name = 'public.lsf_out');
END $$;

SELECT match_recognize_create_stream('lsf_out',
  'SELECT * FROM lsf_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price '
  'QUERIES lsf_q (ID qid, LEVEL level, DIRECTION dir, BAND band) CROSSING UP BAND 3) AS f',
  lateness => 40::bigint, late_table => 'lsf_late');
-- rows committed at once, 3 to a transaction: before the worker's snapshot
-- (read by the copy, their decoded transactions skipped), during the copy
-- and after it (decoded)
CALL lsf_feed(30001, 33000);
SELECT match_recognize_wait_stream('lsf_out');
SELECT s.state, s.last_error, c.backfilled, c.snapshot IS NOT NULL AS snapshot_recorded,
       s.rows_in, s.null_rows, s.matches_out > 10000 AS many
FROM match_recognize_streams s JOIN match_recognize_stream c USING (name) WHERE name = 'public.lsf_out';
SELECT lsf_counts();
SELECT lsf_diff();
-- the standing queries were copied under the snapshot (the stream's copy)
SELECT format('_mr_%s_rows', id) AS rows_tab FROM match_recognize_stream WHERE name = 'public.lsf_out' \gset
SELECT (SELECT count(*) FROM lsf_q) AS queries, (SELECT count(*) FROM :"rows_tab") AS copy,
       (SELECT count(DISTINCT qseq) FROM :"rows_tab") AS numbered;

-- the ordinals: the fires of one row with the same ID, in (LEVEL,
-- DIRECTION, BAND) order, the second and later with ":<n>"
SELECT count(*) = count(DISTINCT _match_id) AS unique_ids,
       count(*) FILTER (WHERE _match_id ~ '^[^:]*:[^:]*:[^:]*:[0-9]+$') > 0 AS some_ordinals,
       bool_and(_match_id !~ ':1$' OR _match_id ~ '^[^:]*:[^:]*:1$') AS no_ordinal_1
FROM lsf_out;
-- where two fires of a row share an ID, the first has the lower or equal level
SELECT count(*) > 0 AS pairs, bool_and(a.level <= b.level AND a.ts = b.ts) AS ordered
FROM lsf_out a JOIN lsf_out b ON b._match_id = a._match_id || ':2';

-- a restart after the backfill keeps going from its checkpoint: the copy is
-- not made again
SELECT pg_terminate_backend(worker_pid) FROM match_recognize_streams WHERE name = 'public.lsf_out';
SELECT pg_sleep(0.3);
CALL lsf_feed(33001, 34000);
SELECT match_recognize_wait_stream('lsf_out');
SELECT lsf_counts();
SELECT lsf_diff();

SELECT match_recognize_drop_stream('lsf_out');
DROP FUNCTION lsf_item, lsf_diff, lsf_counts, lsf_row;
DROP PROCEDURE lsf_feed;
DROP TABLE lsf_ticks, lsf_q, lsf_late, lsf_out;

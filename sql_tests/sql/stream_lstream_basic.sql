--
-- Levels streams (MATCH_LEVELS as a stream): with a fixed set of standing
-- queries the stream's fires equal the batch MATCH_LEVELS query over the
-- rows it released (UP and DOWN queries, bands, rows out of order within
-- the lateness, late rows, NULL values and times), exactly once across a
-- worker restart, with the fire identity (key, ID, FIRE_ROW()) as
-- _match_id.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE TABLE lsb_ticks (id int, key int, ts bigint, price bigint);
CREATE TABLE lsb_q (key int, qid int, level bigint, dir text, band bigint);
ALTER TABLE lsb_q REPLICA IDENTITY FULL;
-- per key 0 .. 4: UP and DOWN queries at levels 0 .. 100 step 10, bands
-- 0 .. 15, some NULL directions (the clause's CROSSING) and bands (BAND 3)
INSERT INTO lsb_q
SELECT k, k * 100 + l, l * 10,
       CASE (k + l) % 3 WHEN 0 THEN 'UP' WHEN 1 THEN 'down' ELSE NULL END,
       CASE WHEN l % 4 = 0 THEN NULL ELSE (l * 7) % 16 END
FROM generate_series(0, 4) k, generate_series(0, 10) l;

CREATE FUNCTION lsb_item(input text) RETURNS text LANGUAGE sql AS $$
  SELECT format('%s MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price '
                'QUERIES lsb_q (ID qid, LEVEL level, DIRECTION dir, BAND band) CROSSING UP BAND 3 '
                'MEASURES FIRE_ROW() AS fire_row)', input)
$$;

SELECT match_recognize_create_stream('lsb_out',
  'SELECT * FROM lsb_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price '
  'QUERIES lsb_q (ID qid, LEVEL level, DIRECTION dir, BAND band) CROSSING UP BAND 3) AS f',
  lateness => 40::bigint, late_table => 'lsb_late');
SELECT name, source, kind, lateness FROM match_recognize_streams WHERE name = 'public.lsb_out';
\d lsb_out
\d lsb_late

-- rows j = first .. last in transactions of 1 to 4 rows: key and price
-- from a hash of j, the time 40 * j - 2 * (0 .. 19): out of order by less than
-- the lateness (40); distinct times; some NULL prices and times
CREATE PROCEDURE lsb_feed(first int, last int) LANGUAGE plpgsql AS $$
DECLARE
  h int;
BEGIN
  FOR j IN first .. last LOOP
    h := abs(hashint4(j));
    INSERT INTO lsb_ticks VALUES (j, h % 5, CASE WHEN h % 41 = 0 THEN NULL ELSE 40 * j - 2 * ((h / 7) % 20) END,
                                  CASE WHEN h % 37 = 0 THEN NULL ELSE (h / 11) % 110 - 5 END);
    IF (h / 13) % 4 = 0 THEN
      COMMIT;
    END IF;
  END LOOP;
  COMMIT;
END $$;

-- the stream's rows against the batch query over the rows it released:
-- not copied to the late table (late or without a time) and below the
-- watermark
CREATE FUNCTION lsb_diff() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  w bigint := (SELECT watermark::bigint FROM match_recognize_streams WHERE name = 'public.lsb_out');
  batch text := format('SELECT key, qid, level, ts, key || '':'' || qid || '':'' || fire_row AS _match_id '
                       'FROM match_recognize(%L) AS f(key int, qid int, level bigint, ts bigint, fire_row bigint)',
                       lsb_item(format('(SELECT * FROM lsb_ticks WHERE ts < %s AND id NOT IN (SELECT id FROM lsb_late)) AS s', w)));
  n_stream bigint;
  n_batch bigint;
  d bigint;
BEGIN
  SELECT count(*) INTO n_stream FROM lsb_out;
  EXECUTE format('SELECT count(*) FROM (%s) b', batch) INTO n_batch;
  EXECUTE format('SELECT count(*) FROM ((%1$s EXCEPT ALL SELECT key, qid, level, ts, _match_id FROM lsb_out) '
                 'UNION ALL (SELECT key, qid, level, ts, _match_id FROM lsb_out EXCEPT ALL %1$s)) x', batch) INTO d;
  RETURN format('stream %s fires, batch %s fires, %s differ', n_stream, n_batch, d);
END $$;

CREATE FUNCTION lsb_restart() RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  old int := (SELECT worker_pid FROM match_recognize_streams WHERE name = 'public.lsb_out');
BEGIN
  PERFORM pg_terminate_backend(old);
  FOR i IN 1 .. 400 LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN EXISTS (SELECT FROM match_recognize_streams WHERE name = 'public.lsb_out'
                      AND worker_pid IS NOT NULL AND worker_pid <> old AND state = 'running');
    PERFORM pg_sleep(0.025);
  END LOOP;
  RETURN (SELECT worker_pid IS NOT NULL AND worker_pid <> old FROM match_recognize_streams
          WHERE name = 'public.lsb_out');
END $$;

CALL lsb_feed(1, 400);
SELECT match_recognize_wait_stream('lsb_out');
SELECT state, last_error, rows_in, late_rows, null_rows, matches_out > 100 AS many, watermark::bigint > 15000 AS moved
FROM match_recognize_streams WHERE name = 'public.lsb_out';
SELECT lsb_diff();

-- a worker restart in the middle: the next one restores the checkpoint
-- (the pending rows, every key's previous value, row count and armed bits)
SELECT lsb_restart();
CALL lsb_feed(401, 700);
SELECT lsb_restart();
CALL lsb_feed(701, 900);
SELECT match_recognize_wait_stream('lsb_out');
SELECT lsb_diff();

-- late rows (time below the watermark at arrival) are counted, copied to
-- the late table and not used; so are rows without a time
INSERT INTO lsb_ticks VALUES (-1, 1, 5, 200), (-2, 2, NULL, 0);
SELECT match_recognize_wait_stream('lsb_out');
SELECT late_rows, null_rows FROM match_recognize_streams WHERE name = 'public.lsb_out';
SELECT id, key, ts, price, _watermark::bigint > 5 AS below FROM lsb_late WHERE id < 0 ORDER BY id;
SELECT lsb_diff();

-- a row far ahead releases every pending row
INSERT INTO lsb_ticks VALUES (100000, 0, 1000000, 50);
SELECT match_recognize_wait_stream('lsb_out');
SELECT lsb_diff();
SELECT count(*) = count(DISTINCT _match_id) AS unique_ids,
       count(*) FILTER (WHERE EXISTS (SELECT FROM lsb_q q WHERE q.key = o.key AND q.qid = o.qid
                                      AND lower(q.dir) = 'down')) > 0 AS some_down
FROM lsb_out o;
SELECT state, last_error, rows_pending FROM match_recognize_streams WHERE name = 'public.lsb_out';

-- append-only source: an UPDATE of it stops the stream
UPDATE lsb_ticks SET price = 0 WHERE id = 1;
SELECT match_recognize_wait_stream('lsb_out');
SELECT state, regexp_replace(last_error, 'transaction \d+, commit at [0-9A-F/]+', 'transaction N, commit at L') AS last_error
FROM match_recognize_streams WHERE name = 'public.lsb_out';

SELECT match_recognize_drop_stream('lsb_out');
SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'mr%';
DROP TABLE lsb_ticks, lsb_q, lsb_late, lsb_out;
DROP FUNCTION lsb_item, lsb_diff, lsb_restart;
DROP PROCEDURE lsb_feed;

--
-- Interval join streams: the output equals the batch query (the same SQL
-- run by PostgreSQL) for every row whose horizon has closed, exactly once,
-- with rows committed out of event-time order in many small transactions
-- and a worker restart in the middle.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE TABLE ij_l (id int, k int, ts int, v int);
CREATE TABLE ij_r (id int, k int, ts int, v int);

-- the join of the four streams: r.ts in [l.ts - 2, l.ts + 5]
CREATE FUNCTION ij_query(jtype text, residual text DEFAULT '') RETURNS text LANGUAGE sql AS $$
  SELECT format('SELECT p.id AS pid, p.k AS pk, p.ts AS pts, p.v AS pv, c.id AS cid, c.k AS ck, c.ts AS cts, c.v AS cv '
                'FROM %s p %s JOIN %s c ON p.k = c.k AND c.ts BETWEEN p.ts - 2 AND p.ts + 5%s',
                'ij_l', jtype, 'ij_r', residual)
$$;

-- the stream's rows against the batch query over the rows that are not
-- late (id >= 0), restricted to what the watermark w has closed: pairs,
-- and padded rows whose horizon is below w (left: ts + 5, right: ts + 2)
-- or that match nothing at all (a NULL key or time)
CREATE FUNCTION ij_diff(stream text, jtype text, residual text DEFAULT '') RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  w int := (SELECT watermark::int FROM match_recognize_streams WHERE name = 'public.' || stream);
  batch text := replace(replace(ij_query(jtype, residual), 'ij_l p', '(SELECT * FROM ij_l WHERE id >= 0) p'),
                        'ij_r c', '(SELECT * FROM ij_r WHERE id >= 0) c');
  cols text := 'pid, pk, pts, pv, cid, ck, cts, cv';
  closed text := format('(pid IS NOT NULL AND cid IS NOT NULL) '
                        'OR (cid IS NULL AND (pk IS NULL OR pts IS NULL OR pts + 5 < %1$s)) '
                        'OR (pid IS NULL AND (ck IS NULL OR cts IS NULL OR cts + 2 < %1$s))', w);
  n_stream bigint;
  n_batch bigint;
  d bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %I', stream) INTO n_stream;
  EXECUTE format('SELECT count(*) FROM (%s) b WHERE %s', batch, closed) INTO n_batch;
  EXECUTE format('SELECT count(*) FROM ((SELECT %1$s FROM (%2$s) b WHERE %3$s EXCEPT ALL SELECT %1$s FROM %4$I)
                  UNION ALL (SELECT %1$s FROM %4$I EXCEPT ALL SELECT %1$s FROM (%2$s) b WHERE %3$s)) x',
                 cols, batch, closed, stream) INTO d;
  RETURN format('stream %s rows, batch %s rows, %s differ', n_stream, n_batch, d);
END $$;

-- rows j = first .. last, one at a time in arrival order, committed in
-- transactions of 1 to 3 rows: side, key (some NULL) and value from a hash
-- of j, the time j - (0 .. 9): out of order by less than the lateness (10),
-- so no row is late
CREATE PROCEDURE ij_feed(first int, last int) LANGUAGE plpgsql AS $$
DECLARE
  h int;
BEGIN
  FOR j IN first .. last LOOP
    h := abs(hashint4(j));
    IF h % 2 = 0 THEN
      INSERT INTO ij_l VALUES (j, CASE WHEN h % 23 = 0 THEN NULL ELSE h % 5 END,
                               CASE WHEN h % 31 = 0 THEN NULL ELSE j - (h / 7) % 10 END, (h / 11) % 4);
    ELSE
      INSERT INTO ij_r VALUES (j, CASE WHEN h % 29 = 0 THEN NULL ELSE h % 5 END,
                               CASE WHEN h % 37 = 0 THEN NULL ELSE j - (h / 7) % 10 END, (h / 11) % 4);
    END IF;
    IF (h / 13) % 3 = 0 THEN
      COMMIT;
    END IF;
  END LOOP;
  COMMIT;
END $$;

-- a new worker for the stream
CREATE FUNCTION ij_restart(s text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  old int := (SELECT worker_pid FROM match_recognize_streams WHERE name = 'public.' || s);
BEGIN
  PERFORM pg_terminate_backend(old);
  FOR i IN 1 .. 400 LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN EXISTS (SELECT FROM match_recognize_streams WHERE name = 'public.' || s
                      AND worker_pid IS NOT NULL AND worker_pid <> old AND state = 'running');
    PERFORM pg_sleep(0.025);
  END LOOP;
  RETURN (SELECT worker_pid IS NOT NULL AND worker_pid <> old FROM match_recognize_streams
          WHERE name = 'public.' || s);
END $$;

SELECT match_recognize_create_stream('ij_inner', ij_query('INNER'), lateness => 10);
SELECT match_recognize_create_stream('ij_left', ij_query('LEFT'), lateness => 10, late_table => 'ij_left_late');
SELECT match_recognize_create_stream('ij_right', ij_query('RIGHT', ' AND p.v <> c.v'), lateness => 10);
SELECT match_recognize_create_stream('ij_full', ij_query('FULL'), lateness => 10);
SELECT match_recognize_wait_stream(s) FROM unnest(ARRAY['ij_inner', 'ij_left', 'ij_right', 'ij_full']) s;
SELECT name, source, kind, lateness FROM match_recognize_streams WHERE kind IS NOT NULL ORDER BY name;
\d ij_full

CALL ij_feed(1, 300);
SELECT match_recognize_wait_stream(s) FROM unnest(ARRAY['ij_inner', 'ij_left', 'ij_right', 'ij_full']) s;
SELECT name, state, last_error, rows_in, late_rows, watermark, output_watermark::int = watermark::int - 5 AS delayed
FROM match_recognize_streams WHERE kind IS NOT NULL ORDER BY name;
SELECT ij_diff('ij_inner', 'INNER');
SELECT ij_diff('ij_left', 'LEFT');
SELECT ij_diff('ij_right', 'RIGHT', ' AND p.v <> c.v');
SELECT ij_diff('ij_full', 'FULL');

-- a worker restart in the middle of the rows: the next one restores the
-- checkpoint (watermark, retained rows and their matched flags) and goes on
SELECT ij_restart(s) FROM unnest(ARRAY['ij_inner', 'ij_left', 'ij_right', 'ij_full']) s;
CALL ij_feed(301, 500);
SELECT ij_restart('ij_full');
CALL ij_feed(501, 600);
SELECT match_recognize_wait_stream(s) FROM unnest(ARRAY['ij_inner', 'ij_left', 'ij_right', 'ij_full']) s;
SELECT ij_diff('ij_inner', 'INNER');
SELECT ij_diff('ij_left', 'LEFT');
SELECT ij_diff('ij_right', 'RIGHT', ' AND p.v <> c.v');
SELECT ij_diff('ij_full', 'FULL');

-- late rows (time below the watermark) are counted, copied to the late
-- table and not joined (the batch side of ij_diff leaves out id < 0)
INSERT INTO ij_l VALUES (-1, 1, 3, 0);
INSERT INTO ij_r VALUES (-2, 1, 4, 0);
SELECT match_recognize_wait_stream(s) FROM unnest(ARRAY['ij_inner', 'ij_left', 'ij_right', 'ij_full']) s;
SELECT name, late_rows FROM match_recognize_streams WHERE kind IS NOT NULL ORDER BY name;
SELECT _side, _row, _watermark::int > 4 AS below FROM ij_left_late ORDER BY _side;

-- rows far ahead on both sides close every horizon: all is output
INSERT INTO ij_l VALUES (0, NULL, 100000, 0);
INSERT INTO ij_r VALUES (0, NULL, 100000, 0);
SELECT match_recognize_wait_stream(s) FROM unnest(ARRAY['ij_inner', 'ij_left', 'ij_right', 'ij_full']) s;
SELECT ij_diff('ij_inner', 'INNER');
SELECT ij_diff('ij_left', 'LEFT');
SELECT ij_diff('ij_right', 'RIGHT', ' AND p.v <> c.v');
SELECT ij_diff('ij_full', 'FULL');
SELECT count(*) = count(DISTINCT _match_id) AS unique_ids, count(*) FILTER (WHERE _match_id LIKE '%:') AS left_padded,
       count(*) FILTER (WHERE _match_id LIKE ':%') AS right_padded FROM ij_full;
SELECT name, state, last_error, rows_retained FROM match_recognize_streams WHERE kind IS NOT NULL ORDER BY name;

-- append-only: an UPDATE of either input stops the stream
UPDATE ij_r SET v = 1 WHERE id = 0;
SELECT match_recognize_wait_stream('ij_inner');
SELECT name, state, regexp_replace(last_error, 'transaction \d+, commit at [0-9A-F/]+', 'transaction N, commit at L') AS last_error
FROM match_recognize_streams WHERE name = 'public.ij_inner';

-- what cannot be streamed is refused, with its SQLSTATE
CREATE FUNCTION ij_refusal(q text, lateness text DEFAULT '1', extra text DEFAULT '') RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('SELECT match_recognize_create_stream(%L, %L, lateness => %s%s)', 'ij_bad', q, lateness, extra);
  RETURN 'created';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT ij_refusal('SELECT p.id FROM ij_l p JOIN ij_r c ON c.ts BETWEEN p.ts - 1 AND p.ts + 1');
SELECT ij_refusal('SELECT p.id FROM ij_l p JOIN ij_r c ON p.k = c.k');
SELECT ij_refusal('SELECT p.id FROM ij_l p JOIN ij_r c ON p.k = c.k AND c.ts BETWEEN p.ts - 1 AND p.ts + 1 AND random() > 0.5');
SELECT ij_refusal('SELECT p.id FROM ij_l p JOIN ij_r c ON p.k = c.k AND c.ts BETWEEN p.ts - 1 AND p.ts + random()::int');
SELECT ij_refusal('SELECT p.id FROM ij_l p LEFT JOIN ij_r c ON p.k IS NOT DISTINCT FROM c.k AND c.ts BETWEEN p.ts - 1 AND p.ts + 1');
SELECT ij_refusal('SELECT p.id FROM ij_l p JOIN (SELECT * FROM ij_r) c ON p.k = c.k AND c.ts BETWEEN p.ts - 1 AND p.ts + 1');
SELECT ij_refusal('SELECT * FROM ij_l p JOIN ij_r c ON p.k = c.k AND c.ts BETWEEN p.ts - 1 AND p.ts + 1');
SELECT ij_refusal('SELECT p.id AS _match_id FROM ij_l p JOIN ij_r c ON p.k = c.k AND c.ts BETWEEN p.ts - 1 AND p.ts + 1');
SELECT ij_refusal('SELECT p.id FROM ij_l p JOIN ij_r c ON p.k = c.k AND c.ts BETWEEN p.ts - 1 AND p.ts + 1', 'interval ''1 s''');
SELECT ij_refusal('SELECT p.id FROM ij_l p JOIN ij_r c ON p.k = c.k AND c.ts BETWEEN p.ts - 1 AND p.ts + 1', '-1');
SELECT ij_refusal('SELECT p.id FROM ij_l p JOIN ij_r c ON p.k = c.k AND c.ts BETWEEN p.ts - 1 AND p.ts + 1', '''1''');
SELECT ij_refusal('SELECT p.id FROM ij_l p JOIN ij_r c ON p.k = c.k AND c.ts BETWEEN p.ts - 1 AND p.ts + 1', '1', ', idle_advance => true');
SELECT ij_refusal('SELECT 1');
SELECT ij_refusal('SELECT p.id FROM ij_l p JOIN ij_r c ON p.k = c.k AND c.ts BETWEEN p.ts - 1 AND p.ts + 1', '1', ', late_table => ''ij_l''');
SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'mr\_%';

-- timestamps: the bounds and the lateness in microseconds
CREATE TABLE ij_tl (k text, ts timestamptz);
CREATE TABLE ij_tr (k text, ts timestamptz);
SELECT match_recognize_create_stream('ij_ts', $$SELECT l.k, l.ts AS lts, r.ts AS rts FROM ij_tl l LEFT JOIN ij_tr r
  ON r.k = l.k AND l.ts BETWEEN r.ts - interval '1 minute' AND r.ts + interval '30 seconds'$$, lateness => interval '1 minute');
-- its first cycle done (the backfill of the empty tables): the ids below are arrival numbers
SELECT match_recognize_wait_stream('ij_ts');
INSERT INTO ij_tl VALUES ('a', '2026-01-01 10:00:00+00'), ('b', '2026-01-01 10:00:00+00');
INSERT INTO ij_tr VALUES ('a', '2026-01-01 10:00:59+00'), ('a', '2026-01-01 10:01:01+00'), ('b', '2026-01-01 09:59:29+00');
INSERT INTO ij_tl VALUES ('c', '2026-01-01 10:05:00+00');
INSERT INTO ij_tr VALUES ('c', '2026-01-01 10:05:00+00');
SELECT match_recognize_wait_stream('ij_ts');
SELECT k, lts AT TIME ZONE 'UTC' AS lts, rts AT TIME ZONE 'UTC' AS rts, _match_id FROM ij_ts ORDER BY _match_id;
SELECT state, rows_in, matches_out, rows_out, rows_retained,
       watermark::timestamptz AT TIME ZONE 'UTC' AS watermark,
       output_watermark::timestamptz AT TIME ZONE 'UTC' AS output_watermark
FROM match_recognize_streams WHERE name = 'public.ij_ts';
SELECT match_recognize_drop_stream('ij_ts');
DROP TABLE ij_ts, ij_tl, ij_tr;

SELECT match_recognize_drop_stream(s) FROM unnest(ARRAY['ij_inner', 'ij_left', 'ij_right', 'ij_full']) s;
SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'mr\_%';
DROP TABLE ij_inner, ij_left, ij_right, ij_full, ij_left_late, ij_l, ij_r;
DROP FUNCTION ij_query(text, text), ij_diff(text, text, text), ij_restart(text), ij_refusal(text, text, text);
DROP PROCEDURE ij_feed(int, int);

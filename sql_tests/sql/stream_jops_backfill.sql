--
-- Interval join streams backfill: the rows already in the tables when the
-- stream is created are joined, and the output equals the batch query for
-- every closed horizon, exactly once, with rows committed while the first
-- cycle copies the tables.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE TABLE jb_l (id int, k int, ts int, v int);
CREATE TABLE jb_r (id int, k int, ts int, v int);

CREATE FUNCTION jb_query(jtype text) RETURNS text LANGUAGE sql AS $$
  SELECT format('SELECT p.id AS pid, p.k AS pk, p.ts AS pts, p.v AS pv, c.id AS cid, c.k AS ck, c.ts AS cts, c.v AS cv '
                'FROM jb_l p %s JOIN jb_r c ON p.k = c.k AND c.ts BETWEEN p.ts - 2 AND p.ts + 5', jtype)
$$;

-- the stream's rows against the batch query, restricted to what the
-- watermark w has closed (as in stream_ijoin), and duplicates
CREATE FUNCTION jb_diff(stream text, jtype text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  w int := (SELECT watermark::int FROM match_recognize_streams WHERE name = 'public.' || stream);
  cols text := 'pid, pk, pts, pv, cid, ck, cts, cv';
  closed text := format('(pid IS NOT NULL AND cid IS NOT NULL) '
                        'OR (cid IS NULL AND (pk IS NULL OR pts IS NULL OR pts + 5 < %1$s)) '
                        'OR (pid IS NULL AND (ck IS NULL OR cts IS NULL OR cts + 2 < %1$s))', w);
  n_stream bigint;
  n_batch bigint;
  n_ids bigint;
  d bigint;
BEGIN
  EXECUTE format('SELECT count(*), count(DISTINCT _match_id) FROM %I', stream) INTO n_stream, n_ids;
  EXECUTE format('SELECT count(*) FROM (%s) b WHERE %s', jb_query(jtype), closed) INTO n_batch;
  EXECUTE format('SELECT count(*) FROM ((SELECT %1$s FROM (%2$s) b WHERE %3$s EXCEPT ALL SELECT %1$s FROM %4$I)
                  UNION ALL (SELECT %1$s FROM %4$I EXCEPT ALL SELECT %1$s FROM (%2$s) b WHERE %3$s)) x',
                 cols, jb_query(jtype), closed, stream) INTO d;
  RETURN format('stream %s rows (%s ids), batch %s rows, %s differ', n_stream, n_ids, n_batch, d);
END $$;

-- rows j = first .. last in transactions of 1 to 3 rows, times out of
-- order by less than the lateness (10), some keys and times NULL
CREATE PROCEDURE jb_feed(first int, last int) LANGUAGE plpgsql AS $$
DECLARE
  h int;
BEGIN
  FOR j IN first .. last LOOP
    h := abs(hashint4(j));
    IF h % 2 = 0 THEN
      INSERT INTO jb_l VALUES (j, CASE WHEN h % 23 = 0 THEN NULL ELSE h % 5 END,
                               CASE WHEN h % 31 = 0 THEN NULL ELSE j - (h / 7) % 10 END, (h / 11) % 4);
    ELSE
      INSERT INTO jb_r VALUES (j, CASE WHEN h % 29 = 0 THEN NULL ELSE h % 5 END,
                               CASE WHEN h % 37 = 0 THEN NULL ELSE j - (h / 7) % 10 END, (h / 11) % 4);
    END IF;
    IF (h / 13) % 3 = 0 THEN
      COMMIT;
    END IF;
  END LOOP;
  COMMIT;
END $$;

-- 2 000 rows before the streams; more rows committed at once after each
-- create_stream, while its worker copies the tables
CALL jb_feed(1, 2000);
SELECT match_recognize_create_stream('jb_inner', jb_query('INNER'), lateness => 10);
CALL jb_feed(2001, 2100);
SELECT match_recognize_create_stream('jb_left', jb_query('LEFT'), lateness => 10);
CALL jb_feed(2101, 2200);
SELECT match_recognize_create_stream('jb_right', jb_query('RIGHT'), lateness => 10);
CALL jb_feed(2201, 2300);
SELECT match_recognize_create_stream('jb_full', jb_query('FULL'), lateness => 10);
CALL jb_feed(2301, 2600);
SELECT match_recognize_wait_stream(s) FROM unnest(ARRAY['jb_inner', 'jb_left', 'jb_right', 'jb_full']) s;
SELECT name, state, last_error, rows_in, late_rows FROM match_recognize_streams
WHERE name LIKE 'public.jb\_%' ORDER BY name;
SELECT jb_diff('jb_inner', 'INNER');
SELECT jb_diff('jb_left', 'LEFT');
SELECT jb_diff('jb_right', 'RIGHT');
SELECT jb_diff('jb_full', 'FULL');

-- rows far ahead close every horizon: the whole batch query
INSERT INTO jb_l VALUES (0, NULL, 100000, 0);
INSERT INTO jb_r VALUES (0, NULL, 100000, 0);
SELECT match_recognize_wait_stream(s) FROM unnest(ARRAY['jb_inner', 'jb_left', 'jb_right', 'jb_full']) s;
SELECT jb_diff('jb_inner', 'INNER');
SELECT jb_diff('jb_left', 'LEFT');
SELECT jb_diff('jb_right', 'RIGHT');
SELECT jb_diff('jb_full', 'FULL');
SELECT name, rows_retained FROM match_recognize_streams WHERE name LIKE 'public.jb\_%' ORDER BY name;

-- a self-join backfills too (one id per row, both sides)
CREATE TABLE jb_s (id int, k int, ts int);
INSERT INTO jb_s SELECT i, i % 3, i FROM generate_series(1, 50) i;
SELECT match_recognize_create_stream('jb_self', 'SELECT a.id AS aid, b.id AS bid FROM jb_s a JOIN jb_s b '
  'ON a.k = b.k AND b.ts BETWEEN a.ts AND a.ts + 3', lateness => 0);
INSERT INTO jb_s VALUES (1000, NULL, 1000);
SELECT match_recognize_wait_stream('jb_self');
(SELECT a.id, b.id FROM jb_s a JOIN jb_s b ON a.k = b.k AND b.ts BETWEEN a.ts AND a.ts + 3
 EXCEPT ALL SELECT aid, bid FROM jb_self)
UNION ALL
(SELECT aid, bid FROM jb_self
 EXCEPT ALL SELECT a.id, b.id FROM jb_s a JOIN jb_s b ON a.k = b.k AND b.ts BETWEEN a.ts AND a.ts + 3);
SELECT count(*) FROM jb_self;

-- a processing-time join reads the rows already there at its creation time
CREATE TABLE jb_pl (id int, k int);
CREATE TABLE jb_pr (id int, k int);
INSERT INTO jb_pl VALUES (1, 1), (2, 2);
INSERT INTO jb_pr VALUES (11, 1), (13, 3);
SELECT match_recognize_create_stream('jb_proc', 'SELECT l.id AS lid, r.id AS rid, '
  'pg_xact_commit_timestamp(l.xmin) AS lat, pg_xact_commit_timestamp(r.xmin) AS rat FROM jb_pl l FULL JOIN jb_pr r '
  'ON r.k = l.k AND pg_xact_commit_timestamp(r.xmin) BETWEEN pg_xact_commit_timestamp(l.xmin) '
  'AND pg_xact_commit_timestamp(l.xmin) + interval ''1 millisecond''', lateness => interval '0 seconds');
SELECT match_recognize_wait_stream('jb_proc');
SELECT pg_sleep(0.01);
-- a later commit moves the clock past the horizons: the padded rows
CREATE TABLE jb_tick (n int);
INSERT INTO jb_tick VALUES (1);
SELECT match_recognize_wait_stream('jb_proc');
SELECT lid, rid, lat = c.created_at AS lat_is_creation, rat = c.created_at AS rat_is_creation
FROM jb_proc, match_recognize_stream c WHERE c.name = 'public.jb_proc' ORDER BY lid, rid;

SELECT match_recognize_drop_stream(s) FROM unnest(ARRAY['jb_inner', 'jb_left', 'jb_right', 'jb_full', 'jb_self', 'jb_proc']) s;
DROP TABLE jb_inner, jb_left, jb_right, jb_full, jb_self, jb_s, jb_l, jb_r, jb_proc, jb_pl, jb_pr, jb_tick;
DROP FUNCTION jb_query(text), jb_diff(text, text);
DROP PROCEDURE jb_feed(int, int);

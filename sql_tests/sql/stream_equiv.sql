--
-- Stream output = batch output.  Rows are committed in a shuffled order in
-- many transactions (within the lateness, so none is late); then every
-- partition gets a terminator row (NULL price: no DEFINE holds for it) that
-- decides what batch decides at the end of the partition, and a sentinel
-- partition moves the watermark past everything.  For each query the
-- stream's output table and the batch query over the same rows must agree
-- row for row (the sentinel partition excluded).
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE TABLE tick (sym text, ts int, price numeric);
-- some rows exist before the streams: backfill
INSERT INTO tick
SELECT 's' || (i % 5), i / 5, (abs(hashint4(i)) % 101)::numeric
FROM generate_series(0, 199) i;

SELECT match_recognize_create_stream('eq_v',
  $$SELECT * FROM tick MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts
      MEASURES FIRST(ts) AS start_ts, LAST(down.ts) AS bottom_ts, LAST(ts) AS end_ts
      ONE ROW PER MATCH AFTER MATCH SKIP TO LAST up
      PATTERN (strt down+ up+)
      DEFINE down AS price < PREV(price), up AS price > PREV(price))$$, lateness => 100000);
SELECT match_recognize_create_stream('eq_all',
  $$SELECT * FROM tick MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts
      MEASURES CLASSIFIER() AS cls, RUNNING COUNT(*) AS n, FINAL LAST(b.price) AS last_b
      ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW
      PATTERN (a b+)
      DEFINE a AS price > 50, b AS price < PREV(price))$$, lateness => 100000);
SELECT match_recognize_create_stream('eq_within',
  $$SELECT * FROM tick MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts
      MEASURES FIRST(a.ts) AS a_ts, LAST(c.ts) AS c_ts, COUNT(b.*) AS nb, AVG(price) AS avg_price
      PATTERN (a b* c) WITHIN 20
      DEFINE a AS price < 20, b AS price BETWEEN 20 AND 80, c AS price > 80)$$, lateness => 100000);
SELECT match_recognize_create_stream('eq_agg',
  $$SELECT * FROM tick MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts
      MEASURES MATCH_NUMBER() AS mn, SUM(price) AS s, MIN(price) AS lo, COUNT(*) AS n
      PATTERN (up{2,} | dn dn dn)
      DEFINE up AS price > PREV(price), dn AS price < PREV(price))$$, lateness => 100000);
SELECT match_recognize_create_stream('eq_unmatched',
  $$SELECT * FROM tick MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts
      MEASURES CLASSIFIER() AS cls, MATCH_NUMBER() AS mn
      ALL ROWS PER MATCH WITH UNMATCHED ROWS
      PATTERN (hi lo?)
      DEFINE hi AS price > 90, lo AS price < 10)$$, lateness => 100000);

SELECT match_recognize_create_stream('eq_next',
  $$SELECT * FROM tick MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts
      MEASURES FIRST(ts) AS t0, LAST(ts) AS t1, NEXT(LAST(price)) AS after
      AFTER MATCH SKIP TO NEXT ROW
      PATTERN (r+ f) DEFINE r AS price < NEXT(price), f AS price > NEXT(price))$$, lateness => 100000);

-- the rest, committed in shuffled order, 20 transactions
SELECT format('INSERT INTO tick SELECT ''s'' || (i %% 5), i / 5, (abs(hashint4(i)) %% 101)::numeric
  FROM generate_series(200, 999) i WHERE (i * 37) %% 20 = %s ORDER BY md5(i::text)', b)
FROM generate_series(0, 19) b \gexec

-- terminators (two: NEXT looks one row ahead), then the sentinel
INSERT INTO tick SELECT 's' || p, t, NULL FROM generate_series(0, 4) p, generate_series(1000, 1001) t;
INSERT INTO tick VALUES ('zzz', 1000000, 0);

SELECT match_recognize_wait_stream(s) FROM unnest(ARRAY['eq_v', 'eq_all', 'eq_within', 'eq_agg', 'eq_unmatched', 'eq_next']) s;
SELECT name, state, rows_in, late_rows, matches_out > 0 AS matched FROM match_recognize_streams ORDER BY name;

-- the batch side: the same queries as views
SELECT match_recognize_create_view('b_' || substr(name, 11), query) FROM match_recognize_stream ORDER BY name;

CREATE FUNCTION diff_count(stream regclass, batch regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  cols text;
  n_stream bigint;
  n_batch bigint;
  d bigint;
BEGIN
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
  FROM pg_attribute WHERE attrelid = batch AND attnum > 0 AND NOT attisdropped;
  EXECUTE format('SELECT count(*) FROM %s WHERE sym <> ''zzz''', stream) INTO n_stream;
  EXECUTE format('SELECT count(*) FROM %s WHERE sym <> ''zzz''', batch) INTO n_batch;
  EXECUTE format('SELECT count(*) FROM ((SELECT %1$s FROM %2$s WHERE sym <> ''zzz'' EXCEPT ALL SELECT %1$s FROM %3$s WHERE sym <> ''zzz'')
                  UNION ALL (SELECT %1$s FROM %3$s WHERE sym <> ''zzz'' EXCEPT ALL SELECT %1$s FROM %2$s WHERE sym <> ''zzz'')) x',
                 cols, stream, batch) INTO d;
  RETURN format('stream %s rows, batch %s rows, %s differ', n_stream, n_batch, d);
END $$;
SELECT s, diff_count(s::regclass, ('b_' || substr(s, 4))::regclass)
FROM unnest(ARRAY['eq_v', 'eq_all', 'eq_within', 'eq_agg', 'eq_unmatched', 'eq_next']) s ORDER BY s;

-- match ids are unique and say partition:first row[:row]
SELECT count(*) = count(DISTINCT _match_id) AS unique_ids, min(_match_id) FROM eq_all;

SELECT match_recognize_drop_stream(s) FROM unnest(ARRAY['eq_v', 'eq_all', 'eq_within', 'eq_agg', 'eq_unmatched', 'eq_next']) s;
DROP FUNCTION diff_count(regclass, regclass);
DROP VIEW b_v, b_all, b_within, b_agg, b_unmatched, b_next;
DROP TABLE tick, eq_v, eq_all, eq_within, eq_agg, eq_unmatched, eq_next;

--
-- workers => n: one stream in n processes, its worker, which decodes and
-- writes, and n - 1 lanes it feeds, which match its partitions
-- (src/stream/mr_stream_lanes.c).  The
-- output of a stream with workers => 2 and 3 equals, row for row and
-- _match_id for _match_id, the output of the same stream with workers => 1,
-- and the batch query's;
-- rows come from a backfill and from many transactions, over 11
-- partitions, with releases, WITHIN expiry and time in patterns spread
-- over many cycles.  Then alter_stream moves a running stream from 1 to 2
-- to 1 workers, a backlog caught up with many rounds in flight, an error
-- raised in a lane, and the refusals.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE TABLE pl_tick (sym text, ts int, price numeric);
-- rows before the streams exist: backfill
INSERT INTO pl_tick
SELECT 's' || (i % 11), i / 11, (abs(hashint4(i)) % 101)::numeric
FROM generate_series(0, 1099) i;

CREATE TABLE pl_q (name text PRIMARY KEY, q text);
INSERT INTO pl_q VALUES
 ('pl_v', $$SELECT * FROM pl_tick MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts
      MEASURES FIRST(ts) AS start_ts, LAST(down.ts) AS bottom_ts, LAST(ts) AS end_ts, COUNT(*) AS n
      ONE ROW PER MATCH AFTER MATCH SKIP TO LAST up
      PATTERN (strt down+ up+)
      DEFINE down AS price < PREV(price), up AS price > PREV(price))$$),
 ('pl_within', $$SELECT * FROM pl_tick MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts
      MEASURES FIRST(a.ts) AS a_ts, LAST(c.ts) AS c_ts, COUNT(b.*) AS nb, AVG(price) AS avg_price
      PATTERN (a b* c) WITHIN 20
      DEFINE a AS price < 20, b AS price BETWEEN 20 AND 80, c AS price > 80)$$),
 ('pl_all', $$SELECT * FROM pl_tick MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts
      MEASURES CLASSIFIER() AS cls, RUNNING COUNT(*) AS n, FINAL LAST(b.price) AS last_b
      ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW
      PATTERN (a b+)
      DEFINE a AS price > 50, b AS price < PREV(price))$$),
 ('pl_time', $$SELECT * FROM pl_tick MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts
      MEASURES a.ts AS a_ts, MATCH_DEADLINE() AS dl
      PATTERN (a -> NOT b) WITHIN 15 FROM a TO b
      DEFINE a AS price > 95, b AS price < 5)$$);

-- the batch side: the same queries as views
SELECT match_recognize_create_view('b_' || name, q) FROM pl_q WHERE name IN ('pl_v', 'pl_within') ORDER BY name;

-- the output of stream s against the batch query b_<base> over the same rows
-- (the sentinel partition zzz excluded), and against stream base
CREATE FUNCTION pl_diff(s text, base text, batch text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
  d_base bigint;
  d_batch bigint;
  cols text;
BEGIN
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
  FROM pg_attribute WHERE attrelid = s::regclass AND attnum > 0 AND NOT attisdropped AND attname <> '_match_id';
  EXECUTE format('SELECT count(*) FROM %I', s) INTO n;
  -- every column, _match_id included
  EXECUTE format('SELECT count(*) FROM ((TABLE %1$I EXCEPT ALL TABLE %2$I) UNION ALL (TABLE %2$I EXCEPT ALL TABLE %1$I)) x',
                 s, base) INTO d_base;
  EXECUTE format('SELECT count(*) FROM ((SELECT %1$s FROM %2$I WHERE sym <> ''zzz'' EXCEPT ALL SELECT %1$s FROM (%3$s) b WHERE sym <> ''zzz'')
                  UNION ALL (SELECT %1$s FROM (%3$s) b WHERE sym <> ''zzz'' EXCEPT ALL SELECT %1$s FROM %2$I WHERE sym <> ''zzz'')) x',
                 cols, s, 'TABLE ' || batch) INTO d_batch;
  RETURN format('%s rows, %s differ from %s, %s from the batch query', n, d_base, base, d_batch);
END $$;

-- the workers and lanes of stream s once it has n lanes (the old ones exit
-- when their worker does; a new one logs in before its first round), at
-- most 30 s later
CREATE FUNCTION pl_lanes(s text, n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  FOR i IN 1 .. 600 LOOP
    SELECT workers, coalesce(cardinality(lane_pids), 0) AS lanes, state INTO r
    FROM match_recognize_streams WHERE name = 'public.' || s;
    EXIT WHEN r.lanes = n;
    PERFORM pg_sleep(0.05);
  END LOOP;
  RETURN format('%s: workers %s, %s lanes, %s', s, r.workers, r.lanes, r.state);
END $$;

-- three streams of each query, with 1, 2 and 3 workers (one at a time:
-- create_stream must begin its transaction)
SELECT match_recognize_create_stream('pl_v', (SELECT q FROM pl_q WHERE name = 'pl_v'), lateness => 3);
SELECT match_recognize_create_stream('pl_v_2', (SELECT q FROM pl_q WHERE name = 'pl_v'), lateness => 3, workers => 2);
SELECT match_recognize_create_stream('pl_v_3', (SELECT q FROM pl_q WHERE name = 'pl_v'), lateness => 3, workers => 3);
SELECT match_recognize_create_stream('pl_within', (SELECT q FROM pl_q WHERE name = 'pl_within'), lateness => 3);
SELECT match_recognize_create_stream('pl_within_2', (SELECT q FROM pl_q WHERE name = 'pl_within'), lateness => 3, workers => 2);
SELECT match_recognize_create_stream('pl_within_3', (SELECT q FROM pl_q WHERE name = 'pl_within'), lateness => 3, workers => 3);
SELECT match_recognize_wait_stream(name) FROM match_recognize_streams ORDER BY name;
SELECT pl_lanes(substr(name, 8), workers - 1) FROM match_recognize_streams ORDER BY 1;

-- 40 transactions in event-time order (none late), then terminators (a NULL
-- price: no DEFINE holds, the partitions are decided as batch decides them
-- at their end) and a sentinel partition past every deadline
SELECT format('INSERT INTO pl_tick SELECT ''s'' || (i %% 11), i / 11, (abs(hashint4(i)) %% 101)::numeric
  FROM generate_series(%s, %s) i', 1100 + b * 110, 1100 + b * 110 + 109)
FROM generate_series(0, 39) b \gexec
INSERT INTO pl_tick SELECT 's' || p, t, NULL FROM generate_series(0, 10) p, generate_series(500, 501) t;
INSERT INTO pl_tick VALUES ('zzz', 100000, 0);
SELECT match_recognize_wait_stream(name) FROM match_recognize_streams ORDER BY name;
SELECT name, state, rows_in, late_rows, matches_out, rows_out, rows_retained, last_error
FROM match_recognize_streams ORDER BY name;
SELECT s, pl_diff(s, base, 'b_' || base) FROM (VALUES ('pl_v', 'pl_v'), ('pl_v_2', 'pl_v'), ('pl_v_3', 'pl_v'),
  ('pl_within', 'pl_within'), ('pl_within_2', 'pl_within'), ('pl_within_3', 'pl_within')) x(s, base) ORDER BY s;
-- ids spread over the partitions
SELECT count(DISTINCT split_part(_match_id, ':', 1)) AS partitions FROM pl_v_2;
SELECT match_recognize_drop_stream(s) FROM unnest(ARRAY['pl_v', 'pl_v_2', 'pl_v_3', 'pl_within', 'pl_within_2', 'pl_within_3']) s;
DROP TABLE pl_v, pl_v_2, pl_v_3, pl_within, pl_within_2, pl_within_3;

-- ALL ROWS PER MATCH and time in patterns (timers fired by the lanes),
-- with 1 and 2 workers, over the table as it is (a backfill) and 20 more
-- transactions
SELECT match_recognize_create_stream('pl_all', (SELECT q FROM pl_q WHERE name = 'pl_all'), lateness => 3);
SELECT match_recognize_create_stream('pl_all_2', (SELECT q FROM pl_q WHERE name = 'pl_all'), lateness => 3, workers => 2);
SELECT match_recognize_create_stream('pl_time', (SELECT q FROM pl_q WHERE name = 'pl_time'), lateness => 3);
SELECT match_recognize_create_stream('pl_time_2', (SELECT q FROM pl_q WHERE name = 'pl_time'), lateness => 3, workers => 2);
SELECT match_recognize_wait_stream(name) FROM match_recognize_streams ORDER BY name;
SELECT format('INSERT INTO pl_tick SELECT ''t'' || (i %% 7), 100001 + i / 7, (abs(hashint4(i)) %% 101)::numeric
  FROM generate_series(%s, %s) i', b * 70, b * 70 + 69)
FROM generate_series(0, 19) b \gexec
INSERT INTO pl_tick VALUES ('zzz', 200000, 0);
SELECT match_recognize_wait_stream(name) FROM match_recognize_streams ORDER BY name;
SELECT name, state, rows_in, late_rows, matches_out, rows_out, timeouts_out, last_error
FROM match_recognize_streams ORDER BY name;
SELECT count(*) AS rows,
  (SELECT count(*) FROM ((TABLE pl_all EXCEPT ALL TABLE pl_all_2) UNION ALL (TABLE pl_all_2 EXCEPT ALL TABLE pl_all)) x) AS differ
FROM pl_all;
SELECT count(*) AS rows,
  (SELECT count(*) FROM ((TABLE pl_time EXCEPT ALL TABLE pl_time_2) UNION ALL (TABLE pl_time_2 EXCEPT ALL TABLE pl_time)) x) AS differ
FROM pl_time;
SELECT match_recognize_drop_stream(s) FROM unnest(ARRAY['pl_all', 'pl_all_2', 'pl_time', 'pl_time_2']) s;
DROP TABLE pl_all, pl_all_2, pl_time, pl_time_2;

-- alter_stream: 1 -> 2 -> 1 workers on a running stream, against a stream
-- that keeps 1; rows come between the changes
TRUNCATE pl_tick;
SELECT match_recognize_create_stream('pl_alt', (SELECT q FROM pl_q WHERE name = 'pl_v'), lateness => 3);
SELECT match_recognize_create_stream('pl_ref', (SELECT q FROM pl_q WHERE name = 'pl_v'), lateness => 3);
SELECT match_recognize_wait_stream(name) FROM match_recognize_streams ORDER BY name;
INSERT INTO pl_tick SELECT 's' || (i % 11), i / 11, (abs(hashint4(i)) % 101)::numeric FROM generate_series(0, 999) i;
SELECT match_recognize_wait_stream('pl_alt');
SELECT match_recognize_alter_stream('pl_alt', workers => 2);
INSERT INTO pl_tick SELECT 's' || (i % 11), i / 11, (abs(hashint4(i)) % 101)::numeric FROM generate_series(1000, 1999) i;
SELECT match_recognize_wait_stream('pl_alt');
SELECT pl_lanes('pl_alt', 1);
SELECT match_recognize_alter_stream('pl_alt', workers => 1);
INSERT INTO pl_tick SELECT 's' || (i % 11), i / 11, (abs(hashint4(i)) % 101)::numeric FROM generate_series(2000, 2999) i;
SELECT match_recognize_wait_stream('pl_alt');
SELECT pl_lanes('pl_alt', 0);
INSERT INTO pl_tick SELECT 's' || p, t, NULL FROM generate_series(0, 10) p, generate_series(500, 501) t;
INSERT INTO pl_tick VALUES ('zzz', 100000, 0);
SELECT match_recognize_wait_stream(name) FROM match_recognize_streams ORDER BY name;
SELECT s, pl_diff(s, 'pl_ref', 'b_pl_v') FROM (VALUES ('pl_alt'), ('pl_ref')) x(s) ORDER BY s;

-- many rounds in flight: a backlog of 120 000 rows over 37 partitions,
-- committed in 120 transactions while the streams are paused, then caught
-- up with 1, 2 and 3 workers (the V shape), 1 and 2 (WITHIN, and time in
-- patterns: expiry and timers between rounds in flight).  The worker of a
-- stream with lanes sends a round every few thousand rows it decodes and
-- goes on decoding and writing while the lanes match (several rounds
-- queued at each lane); the outputs equal the 1-worker stream's
-- (_match_id included) and the batch query's.
CREATE TABLE pl_big (sym text, ts int, price int);
SELECT match_recognize_create_view('b_pl_big_v', replace((SELECT q FROM pl_q WHERE name = 'pl_v'), 'pl_tick', 'pl_big'));
SELECT match_recognize_create_view('b_pl_big_w', replace((SELECT q FROM pl_q WHERE name = 'pl_within'), 'pl_tick', 'pl_big'));
SELECT match_recognize_create_stream('pl_big_v1', replace((SELECT q FROM pl_q WHERE name = 'pl_v'), 'pl_tick', 'pl_big'), lateness => 3);
SELECT match_recognize_create_stream('pl_big_v2', replace((SELECT q FROM pl_q WHERE name = 'pl_v'), 'pl_tick', 'pl_big'), lateness => 3, workers => 2);
SELECT match_recognize_create_stream('pl_big_v3', replace((SELECT q FROM pl_q WHERE name = 'pl_v'), 'pl_tick', 'pl_big'), lateness => 3, workers => 3);
SELECT match_recognize_create_stream('pl_big_w1', replace((SELECT q FROM pl_q WHERE name = 'pl_within'), 'pl_tick', 'pl_big'), lateness => 3);
SELECT match_recognize_create_stream('pl_big_w2', replace((SELECT q FROM pl_q WHERE name = 'pl_within'), 'pl_tick', 'pl_big'), lateness => 3, workers => 2);
SELECT match_recognize_create_stream('pl_big_t1', replace((SELECT q FROM pl_q WHERE name = 'pl_time'), 'pl_tick', 'pl_big'), lateness => 3);
SELECT match_recognize_create_stream('pl_big_t2', replace((SELECT q FROM pl_q WHERE name = 'pl_time'), 'pl_tick', 'pl_big'), lateness => 3, workers => 2);
SELECT match_recognize_wait_stream(name) FROM match_recognize_streams WHERE name LIKE 'public.pl_big%' ORDER BY name;
SELECT match_recognize_pause_stream(name) FROM match_recognize_streams WHERE name LIKE 'public.pl_big%' ORDER BY name;
DO $$
BEGIN
  FOR b IN 0 .. 119 LOOP
    INSERT INTO pl_big SELECT 's' || (i % 37), i / 37, abs(hashint4(i)) % 101
      FROM generate_series(b * 1000, b * 1000 + 999) i;
    COMMIT;
  END LOOP;
END $$;
INSERT INTO pl_big SELECT 's' || p, t, NULL FROM generate_series(0, 36) p, generate_series(4000, 4001) t;
INSERT INTO pl_big VALUES ('zzz', 100000, 0);
SELECT match_recognize_resume_stream(name) FROM match_recognize_streams WHERE name LIKE 'public.pl_big%' ORDER BY name;
SELECT match_recognize_wait_stream(name, '5 minutes') FROM match_recognize_streams WHERE name LIKE 'public.pl_big%' ORDER BY name;
SELECT name, state, workers, rows_in, late_rows, matches_out, rows_out, timeouts_out, rows_retained, last_error
FROM match_recognize_streams WHERE name LIKE 'public.pl_big%' ORDER BY name;
SELECT s, pl_diff(s, base, batch) FROM (VALUES ('pl_big_v1', 'pl_big_v1', 'b_pl_big_v'), ('pl_big_v2', 'pl_big_v1', 'b_pl_big_v'),
  ('pl_big_v3', 'pl_big_v1', 'b_pl_big_v'), ('pl_big_w1', 'pl_big_w1', 'b_pl_big_w'), ('pl_big_w2', 'pl_big_w1', 'b_pl_big_w')) x(s, base, batch)
ORDER BY s;
SELECT count(*) AS rows,
  (SELECT count(*) FROM ((TABLE pl_big_t1 EXCEPT ALL TABLE pl_big_t2) UNION ALL (TABLE pl_big_t2 EXCEPT ALL TABLE pl_big_t1)) x) AS differ
FROM pl_big_t1;
SELECT match_recognize_drop_stream(name) FROM match_recognize_streams WHERE name LIKE 'public.pl_big%' ORDER BY name;
DROP VIEW b_pl_big_v, b_pl_big_w;
DROP TABLE pl_big, pl_big_v1, pl_big_v2, pl_big_v3, pl_big_w1, pl_big_w2, pl_big_t1, pl_big_t2;

-- an error in a lane (a DEFINE dividing by zero on one row) is the
-- stream's error, with the lane's partition and row
CREATE TABLE pl_err (sym int, ts int, price int);
SELECT match_recognize_create_stream('pl_err_2', $$SELECT * FROM pl_err MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts
  MEASURES FIRST(ts) AS t0 PATTERN (a b) DEFINE a AS price > 0, b AS 100 / (price - 50) > 0)$$, lateness => 3, workers => 2);
SELECT match_recognize_wait_stream('pl_err_2');
INSERT INTO pl_err SELECT i % 5, i / 5, i % 97 FROM generate_series(0, 49999) i;
DO $$
BEGIN
  FOR i IN 1 .. 600 LOOP
    EXIT WHEN (SELECT last_error IS NOT NULL FROM match_recognize_streams WHERE name = 'public.pl_err_2');
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT regexp_replace(last_error, 'stream \d+$', 'stream N') AS last_error
FROM match_recognize_streams WHERE name = 'public.pl_err_2';
SELECT match_recognize_drop_stream('pl_err_2');
DROP TABLE pl_err, pl_err_2;

-- refused, with their SQLSTATEs
\set VERBOSITY default
\set SHOW_CONTEXT never
SELECT match_recognize_create_stream('pl_bad', (SELECT q FROM pl_q WHERE name = 'pl_v'), lateness => 3, workers => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT match_recognize_create_stream('pl_bad', (SELECT q FROM pl_q WHERE name = 'pl_v'), lateness => 3, workers => 65);
\echo :LAST_ERROR_SQLSTATE
SELECT match_recognize_create_stream('pl_bad', (SELECT q FROM pl_q WHERE name = 'pl_v'), lateness => 3,
  on_error => 'skip', workers => 2);
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE pl_l (k int, ts int, v int);
CREATE TABLE pl_r (k int, ts int, v int);
SELECT match_recognize_create_stream('pl_bad',
  'SELECT l.k, l.ts AS lts, r.ts AS rts FROM pl_l l JOIN pl_r r ON l.k = r.k AND r.ts BETWEEN l.ts - 2 AND l.ts + 5',
  lateness => 3, workers => 2);
\echo :LAST_ERROR_SQLSTATE
SELECT match_recognize_create_stream('pl_bad',
  'pl_tick MATCH_LEVELS (PARTITION BY sym ORDER BY ts VALUE price LEVELS (10, 20))', lateness => 3, workers => 2);
\echo :LAST_ERROR_SQLSTATE
SELECT match_recognize_alter_stream('pl_alt', workers => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT match_recognize_alter_stream('pl_alt', workers => 2, on_error => 'skip');
\echo :LAST_ERROR_SQLSTATE
SELECT match_recognize_alter_stream('pl_alt', on_error => 'skip');
SELECT match_recognize_alter_stream('pl_alt', workers => 2);
\echo :LAST_ERROR_SQLSTATE
SELECT name, state, workers, on_error FROM match_recognize_streams ORDER BY name;
\set VERBOSITY terse

SELECT match_recognize_drop_stream(s) FROM unnest(ARRAY['pl_alt', 'pl_ref']) s;
DROP FUNCTION pl_diff(text, text, text);
DROP FUNCTION pl_lanes(text, int);
DROP VIEW b_pl_v, b_pl_within;
DROP TABLE pl_alt, pl_ref, pl_tick, pl_q, pl_l, pl_r;

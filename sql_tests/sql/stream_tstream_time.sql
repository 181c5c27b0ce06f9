--
-- Time in patterns in streams: windows FROM/TO, `->`, absence at the end
-- (decided when the watermark passes its deadline, also in a partition
-- that gets no more rows) and mid-pattern, WITH TIMEOUT ROWS (ONE and ALL
-- ROWS PER MATCH), ties at the deadline.  Every stream's output table
-- equals the batch query with CLOCK = the stream's final watermark (CLOCK
-- MAX over the same rows: the last row, alone in its partition, is the
-- watermark), with the workers stopped in the middle.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE TABLE tt (k int, ts bigint, e text);

-- a new worker for the stream (the old one is stopped, the launcher starts
-- the next one at once or within two seconds)
CREATE FUNCTION tt_restart(s text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  old int := (SELECT worker_pid FROM match_recognize_streams WHERE name = 'public.' || s);
BEGIN
  PERFORM pg_terminate_backend(old);
  FOR i IN 1 .. 400 LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN EXISTS (SELECT FROM match_recognize_streams WHERE name = 'public.' || s
                      AND worker_pid IS NOT NULL AND worker_pid <> old);
    PERFORM pg_sleep(0.025);
  END LOOP;
  RETURN (SELECT worker_pid IS NOT NULL AND worker_pid <> old FROM match_recognize_streams
          WHERE name = 'public.' || s);
END $$;

-- the catalog rows of every stream's last cycle show this watermark
CREATE FUNCTION tt_settled(w text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. 400 LOOP
    EXIT WHEN (SELECT count(*) FROM match_recognize_streams
               WHERE name LIKE 'public.tt_%' AND watermark = w) = 5;
    PERFORM pg_sleep(0.025);
  END LOOP;
  RETURN (SELECT count(*) FROM match_recognize_streams
          WHERE name LIKE 'public.tt_%' AND watermark = w) = 5;
END $$;

-- the stream's rows and the batch query's (a view of the same query): how
-- many of each and how many differ (both ways, duplicates counted)
CREATE FUNCTION tt_diff(stream regclass, query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  cols text;
  n_stream bigint;
  n_batch bigint;
  d bigint;
BEGIN
  PERFORM match_recognize_create_view('tt_batch', query);
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
  FROM pg_attribute WHERE attrelid = 'tt_batch'::regclass AND attnum > 0;
  EXECUTE format('SELECT count(*) FROM %s', stream) INTO n_stream;
  EXECUTE 'SELECT count(*) FROM tt_batch' INTO n_batch;
  EXECUTE format('SELECT count(*) FROM ((SELECT %1$s FROM tt_batch EXCEPT ALL SELECT %1$s FROM %2$s)
                  UNION ALL (SELECT %1$s FROM %2$s EXCEPT ALL SELECT %1$s FROM tt_batch)) x',
                 cols, stream) INTO d;
  DROP VIEW tt_batch;
  RETURN format('stream %s rows, batch %s rows, %s differ', n_stream, n_batch, d);
END $$;

-- the queries, as streams and as batch queries
CREATE TABLE tt_q (name text PRIMARY KEY, q text);
INSERT INTO tt_q VALUES
-- a window FROM/TO with ->: the first B within 10 of A, rows between skipped
('tt_win', $$SELECT * FROM tt MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts MEASURES A.ts AS a_ts, B.ts AS b_ts
    PATTERN (A -> B) WITHIN 10 FROM A TO B
    DEFINE A AS e = 'a', B AS e = 'b')$$),
-- an absence at the end: A with no B within 10, decided at A.ts + 10
('tt_abs', $$SELECT * FROM tt MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts MEASURES A.ts AS a_ts, MATCH_DEADLINE() AS dl
    PATTERN (A -> NOT B) WITHIN 10 FROM A TO B
    DEFINE A AS e = 'a', B AS e = 'b')$$),
-- an absence in the middle: A, then C with no X between
('tt_mid', $$SELECT * FROM tt MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts MEASURES A.ts AS a_ts, C.ts AS c_ts
    PATTERN (A -> NOT X -> C)
    DEFINE A AS e = 'a', X AS e = 'x', C AS e = 'c')$$),
-- timeout rows, ONE ROW PER MATCH
('tt_one', $$SELECT * FROM tt MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts
    MEASURES A.ts AS a_ts, B.ts AS b_ts, TIMED_OUT() AS t_o, MATCH_DEADLINE() AS dl
    ONE ROW PER MATCH WITH TIMEOUT ROWS
    PATTERN (A -> B) WITHIN 10 FROM A TO B
    DEFINE A AS e = 'a', B AS e = 'b')$$),
-- timeout rows, ALL ROWS PER MATCH: A, any x, then C within 10
('tt_all', $$SELECT * FROM tt MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts
    MEASURES CLASSIFIER() AS cls, TIMED_OUT() AS t_o, MATCH_DEADLINE() AS dl
    ALL ROWS PER MATCH WITH TIMEOUT ROWS
    PATTERN (A X* C) WITHIN 10 FROM A TO C
    DEFINE A AS e = 'a', X AS e = 'x', C AS e = 'c')$$);

-- (one stream a statement: create_stream must begin its transaction)
SELECT match_recognize_create_stream('tt_win', (SELECT q FROM tt_q WHERE name = 'tt_win'), lateness => 0::bigint);
SELECT match_recognize_create_stream('tt_abs', (SELECT q FROM tt_q WHERE name = 'tt_abs'), lateness => 0::bigint);
SELECT match_recognize_create_stream('tt_mid', (SELECT q FROM tt_q WHERE name = 'tt_mid'), lateness => 0::bigint);
SELECT match_recognize_create_stream('tt_one', (SELECT q FROM tt_q WHERE name = 'tt_one'), lateness => 0::bigint);
SELECT match_recognize_create_stream('tt_all', (SELECT q FROM tt_q WHERE name = 'tt_all'), lateness => 0::bigint);
-- (every worker running before the rows come: partitions are numbered in
-- the order their first rows are decoded)
SELECT match_recognize_wait_stream(name) FROM tt_q ORDER BY name;

-- the first half: hand-made cases, then generated rows
--  k 1: a 100, b 105                 a match, no alert, no timeout
--  k 2: a 100, b 110 (= deadline)    the tie: b is inside the window
--  k 3: a 100, b 111                 the alert at 110; a timeout
--  k 4: a 200, then nothing          decided by the other keys' rows
--  k 5: a 100, x 101, c 103; a 120, c 125, c 126
--  k 6: a 300, x 301, x 302          ALL ROWS timeout of a x x
INSERT INTO tt VALUES (1, 100, 'a'), (2, 100, 'a'), (3, 100, 'a'), (5, 100, 'a'),
  (5, 101, 'x'), (5, 103, 'c'), (1, 105, 'b'), (2, 110, 'b'), (3, 111, 'b'),
  (5, 120, 'a'), (5, 125, 'c'), (5, 126, 'c');
INSERT INTO tt VALUES (4, 200, 'a');
INSERT INTO tt SELECT 10 + i % 7, 400 + i, (ARRAY['a', 'b', 'x', 'c', 'y'])[1 + (i * 7 + i / 3) % 5]
  FROM generate_series(0, 149) i;
SELECT match_recognize_wait_stream(name) FROM tt_q ORDER BY name;
SELECT tt_settled('549');
SELECT name, matches_out, timeouts_out, timers_pending > 0 AS waiting FROM match_recognize_streams
  WHERE name LIKE 'public.tt_%' ORDER BY name;

-- every worker stops and a new one rebuilds from its checkpoint
SELECT tt_restart(name) FROM tt_q ORDER BY name;

-- the second half: k 6's rows, and more generated rows, in transactions
INSERT INTO tt VALUES (6, 600, 'a'), (6, 601, 'x'), (6, 602, 'x');
INSERT INTO tt SELECT 10 + i % 7, 400 + i, (ARRAY['a', 'b', 'x', 'c', 'y'])[1 + (i * 7 + i / 3) % 5]
  FROM generate_series(210, 299) i;
INSERT INTO tt SELECT 10 + i % 7, 400 + i, (ARRAY['a', 'b', 'x', 'c', 'y'])[1 + (i * 7 + i / 3) % 5]
  FROM generate_series(300, 399) i;
-- the last row moves the watermark to 1000, alone in its partition
INSERT INTO tt VALUES (99, 1000, 'z');
SELECT match_recognize_wait_stream(name) FROM tt_q ORDER BY name;
SELECT tt_settled('1000');
SELECT name, state, watermark, timers_pending FROM match_recognize_streams
  WHERE name LIKE 'public.tt_%' ORDER BY name;

-- the outputs, exactly, and the batch queries' (CLOCK MAX = 1000), as views
SELECT match_recognize_create_view(name || '_b', q) FROM tt_q ORDER BY name;
SELECT k, a_ts, b_ts, _match_id FROM tt_win WHERE k < 10 ORDER BY k, a_ts;
SELECT * FROM tt_win_b WHERE k < 10 ORDER BY k, a_ts;
SELECT k, a_ts, dl, _match_id FROM tt_abs WHERE k < 10 ORDER BY k, a_ts;
SELECT * FROM tt_abs_b WHERE k < 10 ORDER BY k, a_ts;
SELECT k, a_ts, c_ts, _match_id FROM tt_mid WHERE k < 10 ORDER BY k, a_ts;
SELECT * FROM tt_mid_b WHERE k < 10 ORDER BY k, a_ts;
SELECT k, a_ts, b_ts, t_o, dl, _match_id FROM tt_one WHERE k < 10 ORDER BY k, a_ts;
SELECT * FROM tt_one_b WHERE k < 10 ORDER BY k, a_ts;
SELECT k, ts, e, cls, t_o, dl, _match_id FROM tt_all WHERE k < 10 ORDER BY k, ts, t_o;
SELECT k, ts, e, cls, t_o, dl FROM tt_all_b WHERE k < 10 ORDER BY k, ts, t_o;
DROP VIEW tt_win_b, tt_abs_b, tt_mid_b, tt_one_b, tt_all_b;

-- and over every key, the generated ones too
SELECT name, tt_diff(('public.' || name)::regclass, q) FROM tt_q ORDER BY name;
SELECT name, matches_out, timeouts_out, rows_out FROM match_recognize_streams
  WHERE name LIKE 'public.tt_%' ORDER BY name;
SELECT count(*) AS ids, count(DISTINCT _match_id) AS distinct_ids FROM tt_all;

SELECT match_recognize_drop_stream(name) FROM tt_q ORDER BY name;

-- more partitions waiting for a deadline than the worker keeps live runs
-- (32 768): those it let go are rebuilt when their timer fires
CREATE TABLE tt_many (k int, ts bigint, e text);
SELECT match_recognize_create_stream('tt_many_out', $$SELECT * FROM tt_many MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts MEASURES A.ts AS a_ts, MATCH_DEADLINE() AS dl
    PATTERN (A -> NOT B) WITHIN 100 FROM A TO B
    DEFINE A AS e = 'a', B AS e = 'b')$$, lateness => 0::bigint);
SELECT match_recognize_wait_stream('tt_many_out');
INSERT INTO tt_many SELECT i, 1000 + i / 1000, 'a' FROM generate_series(0, 39999) i;
INSERT INTO tt_many SELECT i, 1060, 'b' FROM generate_series(0, 39999, 2) i;
SELECT match_recognize_wait_stream('tt_many_out');
SELECT count(*) FROM tt_many_out;
INSERT INTO tt_many VALUES (-1, 2000, 'z');
SELECT match_recognize_wait_stream('tt_many_out');
SELECT count(*), count(*) FILTER (WHERE k % 2 = 1) AS odd, min(dl), max(dl),
       count(DISTINCT _match_id) AS ids FROM tt_many_out;
SELECT count(*) FROM match_recognize($$tt_many MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts MEASURES A.ts AS a_ts, MATCH_DEADLINE() AS dl
    PATTERN (A -> NOT B) WITHIN 100 FROM A TO B
    DEFINE A AS e = 'a', B AS e = 'b')$$) AS m(k int, a_ts bigint, dl bigint);
SELECT match_recognize_drop_stream('tt_many_out');
DROP TABLE tt_many, tt_many_out;
DROP TABLE tt, tt_win, tt_abs, tt_mid, tt_one, tt_all, tt_q;
DROP FUNCTION tt_restart(text), tt_diff(regclass, text), tt_settled(text);

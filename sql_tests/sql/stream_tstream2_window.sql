--
-- Time in patterns in streams: a window FROM/TO with no timeout rows and
-- no trailing absence ends, by the watermark, a preferred path only it
-- ends (`A B+` WITHIN 10 FROM A TO B holding back the match A B..B), also
-- in a partition that gets no more rows: the stream outputs the match once
-- the watermark passes the window's deadline, as batch with CLOCK = that
-- watermark returns it.  Variants: FROM FIRST / FROM LAST, several windows,
-- plain WITHIN (which the WITHIN deadline heap decides) alone and with a
-- window FROM/TO; exact rows before and after a worker is stopped.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE TABLE tw (k int, ts bigint, e text);

-- a new worker for the stream (the old one is stopped, the launcher starts
-- the next one at once or within two seconds)
CREATE FUNCTION tw_restart(s text) RETURNS boolean LANGUAGE plpgsql AS $$
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
CREATE FUNCTION tw_settled(w text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. 400 LOOP
    EXIT WHEN (SELECT count(*) FROM match_recognize_streams
               WHERE name LIKE 'public.tw_%' AND watermark = w) = 6;
    PERFORM pg_sleep(0.025);
  END LOOP;
  RETURN (SELECT count(*) FROM match_recognize_streams
          WHERE name LIKE 'public.tw_%' AND watermark = w) = 6;
END $$;

-- the stream's rows and the batch query's (a view of the same query): how
-- many of each and how many differ (both ways, duplicates counted)
CREATE FUNCTION tw_diff(stream regclass, query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  cols text;
  n_stream bigint;
  n_batch bigint;
  d bigint;
BEGIN
  PERFORM match_recognize_create_view('tw_batch', query);
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
  FROM pg_attribute WHERE attrelid = 'tw_batch'::regclass AND attnum > 0;
  EXECUTE format('SELECT count(*) FROM %s', stream) INTO n_stream;
  EXECUTE 'SELECT count(*) FROM tw_batch' INTO n_batch;
  EXECUTE format('SELECT count(*) FROM ((SELECT %1$s FROM tw_batch EXCEPT ALL SELECT %1$s FROM %2$s)
                  UNION ALL (SELECT %1$s FROM %2$s EXCEPT ALL SELECT %1$s FROM tw_batch)) x',
                 cols, stream) INTO d;
  DROP VIEW tw_batch;
  RETURN format('stream %s rows, batch %s rows, %s differ', n_stream, n_batch, d);
END $$;

CREATE TABLE tw_q (name text PRIMARY KEY, q text);
INSERT INTO tw_q VALUES
-- the greedy B+ waits for more B until A.ts + 10 passes
('tw_ft', $$SELECT * FROM tw MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts MEASURES FIRST(A.ts) AS a_ts, LAST(B.ts) AS b_ts, count(B.*) AS nb
    PATTERN (A B+) WITHIN 10 FROM A TO B
    DEFINE A AS e = 'a', B AS e = 'b')$$),
-- anchored at the first A of A+
('tw_first', $$SELECT * FROM tw MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts MEASURES FIRST(A.ts) AS a_ts, LAST(B.ts) AS b_ts, count(B.*) AS nb
    PATTERN (A+ B+) WITHIN 10 FROM FIRST A TO B
    DEFINE A AS e = 'a', B AS e = 'b')$$),
-- anchored at the last A of A+
('tw_last', $$SELECT * FROM tw MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts MEASURES FIRST(A.ts) AS a_ts, LAST(B.ts) AS b_ts, count(B.*) AS nb
    PATTERN (A+ B+) WITHIN 10 FROM LAST A TO B
    DEFINE A AS e = 'a', B AS e = 'b')$$),
-- two windows: B+ within 10 of A, C+ within 5 of the first B
('tw_two', $$SELECT * FROM tw MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts MEASURES FIRST(A.ts) AS a_ts, LAST(B.ts) AS b_ts, LAST(C.ts) AS c_ts
    PATTERN (A B+ C*) WITHIN 10 FROM A TO B, 5 FROM B TO C
    DEFINE A AS e = 'a', B AS e = 'b', C AS e = 'c')$$),
-- plain WITHIN (the WITHIN deadline heap)
('tw_plain', $$SELECT * FROM tw MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts MEASURES FIRST(A.ts) AS a_ts, LAST(B.ts) AS b_ts, count(B.*) AS nb
    PATTERN (A B+) WITHIN 10
    DEFINE A AS e = 'a', B AS e = 'b')$$),
-- plain WITHIN and a window FROM/TO
('tw_both', $$SELECT * FROM tw MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts MEASURES FIRST(A.ts) AS a_ts, LAST(B.ts) AS b_ts, count(B.*) AS nb
    PATTERN (A X* B+) WITHIN 30, 10 FROM X TO B
    DEFINE A AS e = 'a', X AS e = 'x', B AS e = 'b')$$);

SELECT match_recognize_create_stream('tw_ft', (SELECT q FROM tw_q WHERE name = 'tw_ft'), lateness => 0::bigint);
SELECT match_recognize_create_stream('tw_first', (SELECT q FROM tw_q WHERE name = 'tw_first'), lateness => 0::bigint);
SELECT match_recognize_create_stream('tw_last', (SELECT q FROM tw_q WHERE name = 'tw_last'), lateness => 0::bigint);
SELECT match_recognize_create_stream('tw_two', (SELECT q FROM tw_q WHERE name = 'tw_two'), lateness => 0::bigint);
SELECT match_recognize_create_stream('tw_plain', (SELECT q FROM tw_q WHERE name = 'tw_plain'), lateness => 0::bigint);
SELECT match_recognize_create_stream('tw_both', (SELECT q FROM tw_q WHERE name = 'tw_both'), lateness => 0::bigint);
SELECT match_recognize_wait_stream(name) FROM tw_q ORDER BY name;

-- quiet keys: each gets its rows, then nothing more
--  k 1: a 100, b 102, b 104          B+ waits until 110
--  k 2: a 100, a 103, b 108, b 111   FROM FIRST: deadline 110 (b 111 out);
--                                    FROM LAST: 113
--  k 3: a 100, b 101, c 104, c 106   two windows: C+ until 101 + 5 = 106
--  k 4: a 100, x 105, b 112, b 114   WITHIN 30 and 10 FROM X: until 115
-- (in event-time order: lateness 0)
INSERT INTO tw VALUES (1, 100, 'a'), (2, 100, 'a'), (3, 100, 'a'), (4, 100, 'a'), (3, 101, 'b'), (1,
  102, 'b'), (2, 103, 'a'), (1, 104, 'b'), (3, 104, 'c'), (4, 105, 'x'), (3, 106,
  'c'), (2, 108, 'b'), (2, 111, 'b'), (4, 112, 'b'), (4, 114, 'b');
-- another key moves the watermark to 150: every deadline above passed
INSERT INTO tw VALUES (90, 150, 'z');
SELECT match_recognize_wait_stream(name) FROM tw_q ORDER BY name;
SELECT tw_settled('150');
SELECT k, a_ts, b_ts, nb, _match_id FROM tw_ft ORDER BY k, a_ts;
SELECT k, a_ts, b_ts, nb, _match_id FROM tw_first ORDER BY k, a_ts;
SELECT k, a_ts, b_ts, nb, _match_id FROM tw_last ORDER BY k, a_ts;
SELECT k, a_ts, b_ts, c_ts, _match_id FROM tw_two ORDER BY k, a_ts;
SELECT k, a_ts, b_ts, nb, _match_id FROM tw_plain ORDER BY k, a_ts;
SELECT k, a_ts, b_ts, nb, _match_id FROM tw_both ORDER BY k, a_ts;
SELECT name, matches_out, timers_pending FROM match_recognize_streams
  WHERE name LIKE 'public.tw_%' ORDER BY name;

-- a key left waiting, then every worker stops and a new one rebuilds from
-- its checkpoint: k 5 (a 200, b 201, b 203) is decided after the restart
INSERT INTO tw VALUES (5, 200, 'a'), (5, 201, 'b'), (5, 203, 'b'), (91, 205, 'z');
SELECT match_recognize_wait_stream(name) FROM tw_q ORDER BY name;
SELECT tw_settled('205');
SELECT name, matches_out, timers_pending FROM match_recognize_streams
  WHERE name LIKE 'public.tw_%' ORDER BY name;
SELECT tw_restart(name) FROM tw_q ORDER BY name;

-- generated rows, then the last row moves the watermark to 1000
INSERT INTO tw SELECT 10 + i % 7, 300 + i, (ARRAY['a', 'b', 'x', 'c', 'b', 'y'])[1 + (i * 7 + i / 3) % 6]
  FROM generate_series(0, 299) i;
INSERT INTO tw VALUES (99, 1000, 'z');
SELECT match_recognize_wait_stream(name) FROM tw_q ORDER BY name;
SELECT tw_settled('1000');
SELECT k, a_ts, b_ts, nb, _match_id FROM tw_ft WHERE k < 10 ORDER BY k, a_ts;

-- every stream = its batch query (CLOCK MAX = 1000), generated keys too
SELECT name, tw_diff(('public.' || name)::regclass, q) FROM tw_q ORDER BY name;
SELECT name, count(*) = count(DISTINCT _match_id) AS ids_unique
  FROM (SELECT 'tw_ft' AS name, _match_id FROM tw_ft UNION ALL SELECT 'tw_two', _match_id FROM tw_two) x
  GROUP BY name ORDER BY name;

SELECT match_recognize_drop_stream(name) FROM tw_q ORDER BY name;
DROP TABLE tw, tw_ft, tw_first, tw_last, tw_two, tw_plain, tw_both, tw_q;
DROP FUNCTION tw_restart(text), tw_diff(regclass, text), tw_settled(text);

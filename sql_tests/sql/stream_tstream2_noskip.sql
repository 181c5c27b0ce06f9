--
-- AFTER MATCH NO SKIP in streams: every match of every start, each with
-- its own _match_id (<partition>:<first row>:m<match number>, and
-- :<row> for ALL ROWS PER MATCH), the same on replay: a worker stopped
-- while a start still has live paths and matches already written rebuilds
-- its partition without writing them again, and numbers the later ones as
-- batch does.  `A ->> B` pairs with a window FROM/TO (ONE ROW), with plain
-- WITHIN (ALL ROWS), and `A B+` (one match per prefix); every stream
-- equals its batch query with CLOCK = the final watermark.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE TABLE tn (k int, ts bigint, e text);

CREATE FUNCTION tn_restart(s text) RETURNS boolean LANGUAGE plpgsql AS $$
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

CREATE FUNCTION tn_settled(w text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. 400 LOOP
    EXIT WHEN (SELECT count(*) FROM match_recognize_streams
               WHERE name LIKE 'public.tn_%' AND watermark = w) = 3;
    PERFORM pg_sleep(0.025);
  END LOOP;
  RETURN (SELECT count(*) FROM match_recognize_streams
          WHERE name LIKE 'public.tn_%' AND watermark = w) = 3;
END $$;

CREATE FUNCTION tn_diff(stream regclass, query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  cols text;
  n_stream bigint;
  n_batch bigint;
  d bigint;
BEGIN
  PERFORM match_recognize_create_view('tn_batch', query);
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
  FROM pg_attribute WHERE attrelid = 'tn_batch'::regclass AND attnum > 0;
  EXECUTE format('SELECT count(*) FROM %s', stream) INTO n_stream;
  EXECUTE 'SELECT count(*) FROM tn_batch' INTO n_batch;
  EXECUTE format('SELECT count(*) FROM ((SELECT %1$s FROM tn_batch EXCEPT ALL SELECT %1$s FROM %2$s)
                  UNION ALL (SELECT %1$s FROM %2$s EXCEPT ALL SELECT %1$s FROM tn_batch)) x',
                 cols, stream) INTO d;
  DROP VIEW tn_batch;
  RETURN format('stream %s rows, batch %s rows, %s differ', n_stream, n_batch, d);
END $$;

CREATE TABLE tn_q (name text PRIMARY KEY, q text);
INSERT INTO tn_q VALUES
('tn_one', $$SELECT * FROM tn MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts
    MEASURES A.ts AS a_ts, B.ts AS b_ts, MATCH_NUMBER() AS mn
    AFTER MATCH NO SKIP
    PATTERN (A ->> B) WITHIN 10 FROM A TO B
    DEFINE A AS e = 'a', B AS e = 'b')$$),
('tn_all', $$SELECT * FROM tn MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts
    MEASURES CLASSIFIER() AS cls, MATCH_NUMBER() AS mn
    ALL ROWS PER MATCH AFTER MATCH NO SKIP
    PATTERN (A ->> B) WITHIN 10
    DEFINE A AS e = 'a', B AS e = 'b')$$),
('tn_plus', $$SELECT * FROM tn MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts
    MEASURES FIRST(A.ts) AS a_ts, LAST(B.ts) AS b_ts, count(B.*) AS nb, MATCH_NUMBER() AS mn
    AFTER MATCH NO SKIP
    PATTERN (A B+) WITHIN 10 FROM A TO B
    DEFINE A AS e = 'a', B AS e = 'b')$$);

SELECT match_recognize_create_stream('tn_one', (SELECT q FROM tn_q WHERE name = 'tn_one'), lateness => 0::bigint);
SELECT match_recognize_create_stream('tn_all', (SELECT q FROM tn_q WHERE name = 'tn_all'), lateness => 0::bigint);
SELECT match_recognize_create_stream('tn_plus', (SELECT q FROM tn_q WHERE name = 'tn_plus'), lateness => 0::bigint);
SELECT match_recognize_wait_stream(name) FROM tn_q ORDER BY name;

-- (in event-time order: lateness 0)
--  k 1: a 100, b 102, b 104, then (after the restart) b 106, b 120
--  k 2: a 100, a 101, b 103          two starts, one B: two pairs
INSERT INTO tn VALUES (1, 100, 'a'), (2, 100, 'a'), (2, 101, 'a'), (1, 102, 'b'),
  (2, 103, 'b'), (1, 104, 'b');
-- another key moves the watermark to 105: k 1's start 0 is still live
INSERT INTO tn VALUES (90, 105, 'z');
SELECT match_recognize_wait_stream(name) FROM tn_q ORDER BY name;
SELECT tn_settled('105');
SELECT k, a_ts, b_ts, mn, _match_id FROM tn_one ORDER BY k, mn;
SELECT k, ts, cls, mn, _match_id FROM tn_all ORDER BY k, mn, ts;
SELECT k, a_ts, b_ts, nb, mn, _match_id FROM tn_plus ORDER BY k, mn;

-- every worker stops and a new one rebuilds k 1 from its checkpoint: its
-- start 0 has written matches and still waits for more B
SELECT tn_restart(name) FROM tn_q ORDER BY name;
INSERT INTO tn VALUES (1, 106, 'b'), (1, 120, 'b'), (91, 130, 'z');
SELECT match_recognize_wait_stream(name) FROM tn_q ORDER BY name;
SELECT tn_settled('130');
SELECT k, a_ts, b_ts, mn, _match_id FROM tn_one ORDER BY k, mn;
SELECT k, ts, cls, mn, _match_id FROM tn_all ORDER BY k, mn, ts;
SELECT k, a_ts, b_ts, nb, mn, _match_id FROM tn_plus ORDER BY k, mn;
SELECT name, state, matches_out, timers_pending FROM match_recognize_streams
  WHERE name LIKE 'public.tn_%' ORDER BY name;

-- generated rows, a restart in the middle, then the watermark to 1000
INSERT INTO tn SELECT 10 + i % 5, 200 + i, (ARRAY['a', 'b', 'x', 'b', 'a', 'y'])[1 + (i * 7 + i / 3) % 6]
  FROM generate_series(0, 199) i;
SELECT match_recognize_wait_stream(name) FROM tn_q ORDER BY name;
SELECT tn_restart(name) FROM tn_q ORDER BY name;
INSERT INTO tn SELECT 10 + i % 5, 200 + i, (ARRAY['a', 'b', 'x', 'b', 'a', 'y'])[1 + (i * 7 + i / 3) % 6]
  FROM generate_series(200, 399) i;
INSERT INTO tn VALUES (99, 1000, 'z');
SELECT match_recognize_wait_stream(name) FROM tn_q ORDER BY name;
SELECT tn_settled('1000');
SELECT name, tn_diff(('public.' || name)::regclass, q) FROM tn_q ORDER BY name;
SELECT count(*) = count(DISTINCT _match_id) AS one_ids_unique FROM tn_one;
SELECT count(*) = count(DISTINCT _match_id) AS all_ids_unique FROM tn_all;
SELECT count(*) = count(DISTINCT _match_id) AS plus_ids_unique FROM tn_plus;

SELECT match_recognize_drop_stream(name) FROM tn_q ORDER BY name;
DROP TABLE tn, tn_one, tn_all, tn_plus, tn_q;
DROP FUNCTION tn_restart(text), tn_diff(regclass, text), tn_settled(text);

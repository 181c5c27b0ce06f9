--
-- An interval join stream over two streams' output tables, with no
-- lateness: each side's watermark is the output watermark its stream
-- publishes.  V-shapes of two price tables (level 1, lateness 5 minutes),
-- then pairs of V-shapes of the same symbol ending within 5 minutes of
-- each other (level 2, an interval join).  Rows are committed in many
-- small transactions; level 2 equals the join run by PostgreSQL over level
-- 1's final output once both level 1 watermarks passed it.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY terse

CREATE TABLE ta (sym text, ts timestamptz, price int);
CREATE TABLE tb (LIKE ta);
CREATE FUNCTION vshapes(src text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  PERFORM match_recognize_create_stream('v' || src,
    format($$SELECT * FROM %s MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts
        MEASURES FIRST(ts) AS start_ts, LAST(ts) AS end_ts, MIN(price) AS low
        ONE ROW PER MATCH AFTER MATCH SKIP TO LAST up
        PATTERN (strt down+ up+)
        DEFINE down AS price < PREV(price), up AS price > PREV(price))$$, src),
    lateness => interval '5 minutes');
END $f$;
SET client_min_messages = warning;
SELECT vshapes('ta');
SELECT vshapes('tb');
RESET client_min_messages;

-- without a lateness, both sides must be streams' outputs joined on a time
-- their watermarks bound
\set VERBOSITY default
SELECT match_recognize_create_stream('pairs_bad',
  $$SELECT l.sym, l.end_ts AS a_end, r.ts AS b_ts FROM vta l JOIN tb r
      ON l.sym = r.sym AND r.ts BETWEEN l.end_ts - interval '5 minutes' AND l.end_ts + interval '5 minutes'$$);
SELECT match_recognize_create_stream('pairs_bad',
  $$SELECT l.sym, l.low AS a_low, r.low AS b_low FROM vta l JOIN vtb r
      ON l.sym = r.sym AND r.low BETWEEN l.low - 1 AND l.low + 1$$);
\set VERBOSITY terse
SELECT match_recognize_create_stream('pairs',
  $$SELECT l.sym, l.start_ts AS a_start, l.end_ts AS a_end, r.end_ts AS b_end, l.low AS a_low, r.low AS b_low
    FROM vta l JOIN vtb r
      ON l.sym = r.sym AND r.end_ts BETWEEN l.end_ts - interval '5 minutes' AND l.end_ts + interval '5 minutes'$$);
SELECT name, kind, lateness, follows, watermark_columns FROM match_recognize_stream ORDER BY name;

-- 600 prices a table, 3 symbols, a row every 10 seconds; 4-minute blocks,
-- each in 2 transactions a table, out of order within a block
SELECT format($$INSERT INTO %s SELECT 's' || (i %% 3), timestamptz '2024-01-01 00:00:00+00' + i * interval '10 seconds', abs(hashint4(i * %s + 1)) %% 50 FROM generate_series(%s, %s) i WHERE i %% 2 = %s ORDER BY md5(i::text)$$,
              t, CASE t WHEN 'ta' THEN 7 ELSE 11 END, b * 24, b * 24 + 23, k)
FROM generate_series(0, 24) b, generate_series(0, 1) k, unnest(ARRAY['ta', 'tb']) t ORDER BY b, k, t \gexec
SELECT match_recognize_wait_stream('vta');
SELECT match_recognize_wait_stream('vtb');
SELECT match_recognize_wait_stream('pairs');
-- each side's watermark is its stream's: the join's is the lesser
SELECT (SELECT watermark::timestamptz FROM match_recognize_streams WHERE name = 'public.pairs') =
       (SELECT min(output_watermark::timestamptz) FROM match_recognize_streams
        WHERE name IN ('public.vta', 'public.vtb')) AS follows_both;
-- terminators (NULL price) and a sentinel symbol far ahead, both tables
INSERT INTO ta SELECT 's' || p, timestamptz '2024-01-01 02:00:00+00', NULL FROM generate_series(0, 2) p;
INSERT INTO tb SELECT 's' || p, timestamptz '2024-01-01 02:00:00+00', NULL FROM generate_series(0, 2) p;
INSERT INTO ta VALUES ('zz', '2024-01-02 00:00:00+00', 0);
INSERT INTO tb VALUES ('zz', '2024-01-02 00:00:00+00', 0);
SELECT match_recognize_wait_stream('vta');
SELECT match_recognize_wait_stream('vtb');
SELECT match_recognize_wait_stream('pairs');
SELECT name, state, watermark, output_watermark, rows_in, late_rows
FROM match_recognize_streams ORDER BY name;

-- level 2 = the join run by PostgreSQL over level 1's output (every pair
-- of V-shapes ending before 02:00 - 5 minutes is decided)
CREATE VIEW pairs_b AS
SELECT l.sym, l.start_ts AS a_start, l.end_ts AS a_end, r.end_ts AS b_end, l.low AS a_low, r.low AS b_low
FROM vta l JOIN vtb r
  ON l.sym = r.sym AND r.end_ts BETWEEN l.end_ts - interval '5 minutes' AND l.end_ts + interval '5 minutes';
SELECT (SELECT count(*) FROM pairs) AS stream, (SELECT count(*) FROM pairs_b) AS batch,
       (SELECT count(*) FROM ((SELECT sym, a_start, a_end, b_end, a_low, b_low FROM pairs
          EXCEPT ALL SELECT * FROM pairs_b)
         UNION ALL (SELECT * FROM pairs_b
          EXCEPT ALL SELECT sym, a_start, a_end, b_end, a_low, b_low FROM pairs)) x) AS differ;
SELECT sym, a_end, b_end, a_low, b_low FROM pairs ORDER BY sym, a_end, b_end LIMIT 12;

SELECT match_recognize_drop_stream(s) FROM unnest(ARRAY['pairs', 'vta', 'vtb']) s;
DROP VIEW pairs_b;
DROP TABLE ta, tb, vta, vtb, pairs;
DROP FUNCTION vshapes(text);

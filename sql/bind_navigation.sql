--
-- What navigation reads: merging the candidate paths of one match start
-- when DEFINE reads only the start and the candidate row (FIRST / LAST with
-- offsets over every row, aggregates over every row), and bigint offsets.
--
-- leave the database as found: drop the extension at the end if we create it
SET client_min_messages = warning;
CREATE TEMP TABLE bn_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
SET max_parallel_workers_per_gather = 0;
\set VERBOSITY default
\set SHOW_CONTEXT never

-- v: 0 2 -1 1 -2, repeated
CREATE TABLE bn (id int, v int, k int);
INSERT INTO bn SELECT g, (g * 7) % 5 - 2, g % 2 FROM generate_series(1, 20) g;
CREATE TABLE bn_long (id int, v int);
INSERT INTO bn_long SELECT g, (g * 7) % 5 - 2 FROM generate_series(1, 400) g;
ANALYZE bn, bn_long;

CREATE FUNCTION bn_run(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  FOR r IN EXECUTE match_recognize_sql(q) LOOP
    RETURN NEXT r::text;
  END LOOP;
END $$;
-- bn_same(query, define, extra): the rows of query with DEFINE define, and
-- with "define AND extra" where extra is true but reads a variable's rows
-- (so that the matcher keeps every path apart) are the same; the count
CREATE FUNCTION bn_same(q text, def text, extra text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
  d bigint;
BEGIN
  SELECT count(*) INTO n FROM bn_run(replace(q, '$D', def));
  SELECT count(*) INTO d FROM (
    (SELECT * FROM bn_run(replace(q, '$D', def))
     EXCEPT ALL SELECT * FROM bn_run(replace(q, '$D', def || ' AND ' || extra)))
    UNION ALL
    (SELECT * FROM bn_run(replace(q, '$D', def || ' AND ' || extra))
     EXCEPT ALL SELECT * FROM bn_run(replace(q, '$D', def)))) x;
  RETURN n || ' rows, ' || d || ' differ';
END $$;
-- EXPLAIN ANALYZE with the matcher's work counters masked, but not its
-- peak number of candidate paths
CREATE FUNCTION bn_explain(query text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
    IF line ~ '^\s*(Sort Method|Memory)' THEN CONTINUE; END IF;
    RETURN NEXT regexp_replace(line,
      '^(\s*(Matcher Steps|Memo Hits|Define Evaluations|Merged Threads): )\d+$', '\1N');
  END LOOP;
END $f$;

-- 1. Unqualified FIRST / LAST with an offset read the start and the
-- candidate row only: the paths of one start are merged (this ran out of
-- candidate paths, 54000, over 20 rows before)
SELECT bn_run($$ SELECT * FROM bn MATCH_RECOGNIZE (ORDER BY id
  MEASURES FIRST(id) AS f, LAST(id) AS l, FIRST(v) AS fv
  PATTERN ((B | C)* A) DEFINE A AS LAST(v, 1) < 0) AS m $$);
SET match_recognize.max_threads = 2000;
SELECT bn_explain($$ SELECT * FROM match_recognize($mr$ bn_long MATCH_RECOGNIZE (ORDER BY id
  MEASURES FIRST(id) AS f PATTERN ((B | C)* A) DEFINE A AS LAST(v, 1) < -2) $mr$) AS r(f int) $$);
SELECT count(*), min(l - f), max(l - f) FROM match_recognize($$ bn_long MATCH_RECOGNIZE (ORDER BY id
  MEASURES FIRST(id) AS f, LAST(id) AS l
  PATTERN ((B | C)* A) DEFINE A AS LAST(v, 1) = 2 AND FIRST(v, 2) = -1) $$) AS r(f int, l int);
RESET match_recognize.max_threads;

-- the same rows as with every path kept apart, for each kind of start-
-- dependent condition (the extra condition reads C's rows)
SELECT d, bn_same($$ SELECT * FROM bn MATCH_RECOGNIZE (PARTITION BY k ORDER BY id
  MEASURES FIRST(id) AS f, LAST(id) AS l, CLASSIFIER() AS c ALL ROWS PER MATCH
  AFTER MATCH SKIP TO NEXT ROW PATTERN ((B | C)+ A) SUBSET U = (A, B, C) DEFINE A AS $D) AS m $$,
  d, 'FIRST(C.v) IS NOT DISTINCT FROM FIRST(C.v)')
FROM (VALUES ('LAST(v, 1) > 0'), ('LAST(v, 2) IS NULL'), ('FIRST(v, 1) = 2'),
             ('FIRST(v) < LAST(v, 1)'), ('PREV(LAST(v, 2)) = -1'), ('NEXT(FIRST(v, 1), 1) > 0'),
             ('LAST(U.v, 1) > 0'), ('FIRST(U.v, 2) = v'), ('count(*) = 3'), ('sum(v) > 1'),
             ('avg(U.v) < 0'), ('max(v) - min(v) >= 3'), ('count(*) > 2 AND LAST(v, 3) > v')) AS t(d);
-- and with WITHIN, which reads the start too
SELECT bn_same($$ SELECT * FROM bn MATCH_RECOGNIZE (ORDER BY id
  MEASURES FIRST(id) AS f, LAST(id) AS l PATTERN ((B | C)* A) WITHIN 5 DEFINE A AS $D) AS m $$,
  'LAST(v, 1) < 0', 'FIRST(C.v) IS NOT DISTINCT FROM FIRST(C.v)');
-- conditions that read the labels keep the paths apart (and still work)
SELECT bn_run($$ SELECT * FROM bn MATCH_RECOGNIZE (ORDER BY id
  MEASURES FIRST(id) AS f, LAST(id) AS l, count(C.*) AS nc
  PATTERN ((B | C){1,4} A) DEFINE C AS v > 0, A AS LAST(C.v, 1) = 2 OR PREV(CLASSIFIER()) = 'C') AS m
  LIMIT 3 $$);

-- 2. Offsets are bigint; beyond the partition they read null
SELECT bn_run($$ SELECT * FROM bn MATCH_RECOGNIZE (PARTITION BY k ORDER BY id
  MEASURES NEXT(v, 2147483648) AS a, PREV(v, 9223372036854775807) AS b,
           FIRST(v, 9223372036854775807) AS c, LAST(v, 9223372036854775807) AS d,
           NEXT(FIRST(v, 9223372036854775807), 9223372036854775807) AS e,
           PREV(LAST(v, 9223372036854775806), 9223372036854775807) AS f,
           NEXT(LAST(v), 9223372036854775807) AS g, FIRST(id) AS h, count(*) AS n
  PATTERN (A+) DEFINE A AS PREV(v, 2147483648) IS NULL AND NEXT(v, 9223372036854775807) IS NULL
    AND FIRST(v, 9223372036854775807) IS NULL AND NEXT(LAST(v, 4611686018427387904), 1) IS NULL) AS m
  ORDER BY k $$);
-- through the function too, and ALL ROWS PER MATCH with a huge NEXT
SET match_recognize.enable_custom_scan = off;
SELECT bn_run($$ SELECT * FROM bn MATCH_RECOGNIZE (PARTITION BY k ORDER BY id
  MEASURES NEXT(v, 9223372036854775807) AS a, LAST(v, 9223372036854775807) AS b
  ALL ROWS PER MATCH PATTERN (A{2}) DEFINE A AS PREV(A.v, 9223372036854775807) IS NULL) AS m
  ORDER BY k, id LIMIT 4 $$);
RESET match_recognize.enable_custom_scan;
-- a huge PREV keeps no more rows than the partition has
SELECT bn_explain($$ SELECT * FROM match_recognize($mr$ bn MATCH_RECOGNIZE (ORDER BY id
  MEASURES FIRST(id) AS f PATTERN (A) DEFINE A AS PREV(v, 9223372036854775807) IS NULL AND v > 1) $mr$)
  AS r(f int) $$);
-- still refused: beyond bigint, negative, not an integer, not a constant
SELECT * FROM match_recognize($$ bn MATCH_RECOGNIZE (ORDER BY id
  MEASURES NEXT(v, 9223372036854775808) AS x PATTERN (A) DEFINE A AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bn MATCH_RECOGNIZE (ORDER BY id
  MEASURES PREV(v, -9223372036854775808) AS x PATTERN (A) DEFINE A AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bn MATCH_RECOGNIZE (ORDER BY id
  MEASURES PREV(FIRST(v, -1)) AS x PATTERN (A) DEFINE A AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bn MATCH_RECOGNIZE (ORDER BY id
  MEASURES LAST(v, 1.0) AS x PATTERN (A) DEFINE A AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bn MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS x PATTERN (A) DEFINE A AS NEXT(v, id) > 0) $$) AS r(x int);

DROP FUNCTION bn_explain(text);
DROP FUNCTION bn_same(text, text, text);
-- an offset may be an integer literal cast to an integer type; it must fit the type
SELECT * FROM match_recognize($$ (SELECT g AS id, g % 3 AS v FROM generate_series(1, 6) g) t
  MATCH_RECOGNIZE (ORDER BY id MEASURES NEXT(LAST(v, 1::bigint), 2::smallint) AS x,
    PREV(v, CAST(1 AS int)) AS y, PREV(v, 1::pg_catalog.int8) AS z ALL ROWS PER MATCH PATTERN (a b)) $$)
  AS m(id int, x int, y int, z int, v int);
SELECT * FROM match_recognize($$ (SELECT 1 AS id, 1 AS v) t
  MATCH_RECOGNIZE (ORDER BY id MEASURES PREV(v, 70000::smallint) AS y PATTERN (a)) $$) AS m(y int);
SELECT * FROM match_recognize($$ (SELECT 1 AS id, 1 AS v) t
  MATCH_RECOGNIZE (ORDER BY id MEASURES PREV(v, 1::numeric) AS y PATTERN (a)) $$) AS m(y int);
DROP FUNCTION bn_run(text);
DROP TABLE bn, bn_long;
DO $$ BEGIN
  IF NOT (SELECT had FROM bn_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;

--
-- ROWS PER MATCH, AFTER MATCH SKIP, exclusion, empty and unmatched rows
--
\set VERBOSITY default

-- V shapes per symbol, one row per match: partition columns then measures
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts,
             MATCH_NUMBER() AS mno
    ONE ROW PER MATCH
    AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) AS m ORDER BY symbol, start_ts $$);

-- ALL ROWS PER MATCH: partition columns, order columns, measures, then the
-- rest of the input columns; RUNNING by default, FINAL on request
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES CLASSIFIER() AS cls, RUNNING count(*) AS so_far, FINAL count(*) AS total,
             FINAL LAST(UP.price) AS top
    ALL ROWS PER MATCH
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) AS m ORDER BY symbol, ts $$);

-- each key as listed: an ORDER BY column listed twice is output twice (as
-- Trino); the rewritten FROM item then renames the columns in a subquery,
-- since a column definition list cannot repeat a name
SELECT match_recognize_sql($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts ASC, ts DESC
    MEASURES CLASSIFIER() AS cls ALL ROWS PER MATCH
    PATTERN (A) DEFINE A AS ts <= 2) AS m ORDER BY 1, 2 $$) \gexec
SELECT match_recognize_sql($$
  SELECT m.symbol FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts MEASURES CLASSIFIER() AS symbol
    PATTERN (A) DEFINE A AS ts = 1) AS m $$) \gexec
SELECT match_recognize_sql($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts MEASURES CLASSIFIER() AS symbol
    PATTERN (A) DEFINE A AS ts = 1) AS m(s, "S") ORDER BY 1 $$) \gexec

-- Oracle's measures without AS
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES MATCH_NUMBER() mno, FIRST(ts) start_ts, LAST(ts) - FIRST(ts) span,
             LAST(B.price) "Low"
    ONE ROW PER MATCH
    PATTERN (A B+) DEFINE B AS B.price < PREV(B.price)
  ) AS m ORDER BY symbol, mno $$);

-- SKIP modes over 'abab': overlapping matches appear once per match
SELECT set_seq('aabab');
SELECT mr_run($$
  SELECT n, mno, cls FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES MATCH_NUMBER() AS mno, CLASSIFIER() AS cls
    ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ B) DEFINE A AS c = 'a', B AS c = 'b') AS m ORDER BY mno, n $$);
SELECT mr_run($$
  SELECT n, mno, cls FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES MATCH_NUMBER() AS mno, CLASSIFIER() AS cls
    ALL ROWS PER MATCH AFTER MATCH SKIP TO FIRST B
    PATTERN (A+ B A?) DEFINE A AS c = 'a', B AS c = 'b') AS m ORDER BY mno, n $$);
SELECT mr_run($$
  SELECT n, mno, cls FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES MATCH_NUMBER() AS mno, CLASSIFIER() AS cls
    ALL ROWS PER MATCH AFTER MATCH SKIP TO LAST A
    PATTERN (A+ B A) DEFINE A AS c = 'a', B AS c = 'b') AS m ORDER BY mno, n $$);
-- TO v is TO LAST v; a SUBSET can be the target
SELECT mr_run($$
  SELECT n, mno, cls FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES MATCH_NUMBER() AS mno, CLASSIFIER() AS cls
    ALL ROWS PER MATCH AFTER MATCH SKIP TO U
    PATTERN (A B A) SUBSET U = (B) DEFINE A AS c = 'a', B AS c = 'b') AS m ORDER BY mno, n $$);
-- skipping to the first row of the match, or to a variable bound to no row
SELECT mr_run($$
  SELECT * FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES MATCH_NUMBER() AS mno
    AFTER MATCH SKIP TO FIRST A
    PATTERN (A+ B) DEFINE A AS c = 'a', B AS c = 'b') AS m $$);
SELECT mr_run($$
  SELECT * FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES MATCH_NUMBER() AS mno
    AFTER MATCH SKIP TO LAST C
    PATTERN (A+ B C?) DEFINE A AS c = 'a', B AS c = 'b', C AS c = 'c') AS m $$);

-- empty matches: SHOW (default), OMIT, and WITH UNMATCHED ROWS
SELECT set_seq('xaax');
SELECT mr_run($$
  SELECT n, c, mno, cls FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES MATCH_NUMBER() AS mno, CLASSIFIER() AS cls
    ALL ROWS PER MATCH SHOW EMPTY MATCHES
    PATTERN (A*) DEFINE A AS c = 'a') AS m ORDER BY n, mno $$);
SELECT mr_run($$
  SELECT n, c, mno, cls FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES MATCH_NUMBER() AS mno, CLASSIFIER() AS cls
    ALL ROWS PER MATCH OMIT EMPTY MATCHES
    PATTERN (A*) DEFINE A AS c = 'a') AS m ORDER BY n, mno $$);
SELECT mr_run($$
  SELECT n, c, mno, cls FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES MATCH_NUMBER() AS mno, CLASSIFIER() AS cls
    ALL ROWS PER MATCH WITH UNMATCHED ROWS
    PATTERN (A+) DEFINE A AS c = 'a') AS m ORDER BY n, mno $$);
-- ONE ROW PER MATCH of an empty match: measures over zero rows
SELECT mr_run($$
  SELECT * FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES MATCH_NUMBER() AS mno, count(*) AS cnt, CLASSIFIER() AS cls,
      LAST(n) AS last_n
    PATTERN (A*) DEFINE A AS c = 'a') AS m ORDER BY mno $$);
-- WITH UNMATCHED ROWS and overlapping matches: each row at most once unmatched
SELECT set_seq('aabxab');
SELECT mr_run($$
  SELECT n, c, mno, cls FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES MATCH_NUMBER() AS mno, CLASSIFIER() AS cls
    ALL ROWS PER MATCH WITH UNMATCHED ROWS AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A B) DEFINE A AS c = 'a', B AS c = 'b') AS m ORDER BY n, mno $$);

-- exclusion: matched but not output
SELECT mr_run($$
  SELECT n, c, mno, cls FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES MATCH_NUMBER() AS mno, CLASSIFIER() AS cls, count(*) AS cnt
    ALL ROWS PER MATCH
    PATTERN (A {- A* -} B) DEFINE A AS c = 'a', B AS c = 'b') AS m ORDER BY n, mno $$);
-- ... rejected together with WITH UNMATCHED ROWS
SELECT mr_run($$
  SELECT * FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES MATCH_NUMBER() AS mno
    ALL ROWS PER MATCH WITH UNMATCHED ROWS
    PATTERN (A {- B -}) DEFINE A AS c = 'a', B AS c = 'b') AS m $$);

-- no PARTITION BY, no ORDER BY: one partition in input order (one row here)
SELECT mr_run($$
  SELECT * FROM (SELECT 1 AS x) s MATCH_RECOGNIZE (
    MEASURES count(*) AS cnt PATTERN (A*) DEFINE A AS x = 1) AS m $$);
-- an empty input gives no rows, also with WITH UNMATCHED ROWS
SELECT mr_run($$
  SELECT * FROM (SELECT * FROM seq WHERE false) s MATCH_RECOGNIZE (
    ORDER BY n MEASURES count(*) AS cnt ALL ROWS PER MATCH WITH UNMATCHED ROWS
    PATTERN (A) DEFINE A AS true) AS m $$);

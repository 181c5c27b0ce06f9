--
-- Aggregates in MEASURES and DEFINE: RUNNING/FINAL, over a variable, a
-- SUBSET or all rows; built-in and user-defined, through PostgreSQL's
-- aggregate machinery
--
\set VERBOSITY default

SELECT mr_run($$
  SELECT ts, cls, cnt, cnt_down, cnt_down_star, sum_p, avg_p, min_p, max_p,
         prices, labels, all_up, fsum
  FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES CLASSIFIER() AS cls, count(*) AS cnt, count(DOWN.price) AS cnt_down,
             count(DOWN.*) AS cnt_down_star, sum(price) AS sum_p,
             round(avg(price), 2) AS avg_p, min(DOWN.price) AS min_p, max(price) AS max_p,
             array_agg(price) AS prices, string_agg(CLASSIFIER(), '') AS labels,
             bool_and(UP.price > 8) AS all_up, FINAL sum(price) AS fsum
    ALL ROWS PER MATCH
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) AS m WHERE symbol = 'A' ORDER BY ts $$);

-- aggregates over a SUBSET, with expressions and CLASSIFIER in the argument
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES array_agg(U.ts) AS u_ts, array_agg(CLASSIFIER(U) || U.price) AS u_tags,
             sum(U.price * 2) AS u_double
    PATTERN (STRT DOWN+ UP+)
    SUBSET U = (STRT, UP)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) AS m ORDER BY symbol, u_ts $$);

-- FILTER selects rows like a SUBSET does, with any row condition
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES sum(price) FILTER (WHERE price > 10) AS big_sum,
             count(*) FILTER (WHERE CLASSIFIER() = 'B') AS nb
    PATTERN (A B+) DEFINE B AS price < PREV(price)
  ) AS m ORDER BY symbol, nb, big_sum $$);

-- a user-defined aggregate, and one whose final function cannot run twice
CREATE FUNCTION spread_final(int[]) RETURNS int LANGUAGE sql IMMUTABLE
  AS $$ SELECT max(x) - min(x) FROM unnest($1) x $$;
CREATE AGGREGATE spread(int) (SFUNC = array_append, STYPE = int[],
  FINALFUNC = spread_final, INITCOND = '{}');
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts MEASURES spread(price) AS spread
    PATTERN (X{3}) DEFINE X AS true
  ) AS m ORDER BY symbol, spread $$);
CREATE AGGREGATE rw_agg(int) (SFUNC = array_append, STYPE = int[],
  FINALFUNC = spread_final, FINALFUNC_MODIFY = READ_WRITE, INITCOND = '{}');
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    ORDER BY ts MEASURES rw_agg(price) AS s PATTERN (X+) DEFINE X AS true) AS m $$);

-- aggregates in DEFINE see the candidate row as labeled
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES FIRST(ts) AS from_ts, LAST(ts) AS to_ts, sum(price) AS total
    PATTERN (X+) DEFINE X AS sum(X.price) <= 30
  ) AS m ORDER BY symbol, from_ts $$);
-- the first path in preference order whose counts balance at Z wins
SELECT set_seq('abcdx');
SELECT mr_run($$
  SELECT * FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES array_agg(CLASSIFIER()) AS labels
    PATTERN ((A | B)+ Z)
    DEFINE A AS true, B AS true, Z AS c = 'x' AND count(A.*) = count(B.*)
  ) AS m $$);

-- uncorrelated subqueries in an aggregate's arguments and FILTER, in
-- MEASURES and DEFINE (each runs as its own small planned query)
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES array_agg(CLASSIFIER() || (SELECT '!')) AS tags,
             array_agg(price IN (SELECT 9 UNION SELECT 21)) AS hits,
             count(*) FILTER (WHERE price > (SELECT 10)) AS above,
             bool_and(EXISTS (SELECT 1)) AS ex
    ONE ROW PER MATCH
    PATTERN (X Y+)
    DEFINE Y AS count(Y.* ) FILTER (WHERE Y.price < (SELECT 12)) = count(Y.*)
  ) AS m $$);

-- Trino's count() is count(*)
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count() AS n, count() FILTER (WHERE price > 10) AS above
    PATTERN (X+) DEFINE X AS count() <= 4
  ) AS m $$);

-- rejected forms
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    ORDER BY ts MEASURES count(DISTINCT price) AS d PATTERN (X+) DEFINE X AS true) AS m $$);
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    ORDER BY ts MEASURES percentile_cont(0.5) WITHIN GROUP (ORDER BY price) AS p
    PATTERN (X+) DEFINE X AS true) AS m $$);
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    ORDER BY ts MEASURES FIRST(sum(price)) AS p PATTERN (X+) DEFINE X AS true) AS m $$);
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    ORDER BY ts MEASURES sum(FIRST(price)) AS p PATTERN (X+) DEFINE X AS true) AS m $$);
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    ORDER BY ts MEASURES rank() OVER () AS p PATTERN (X+) DEFINE X AS true) AS m $$);

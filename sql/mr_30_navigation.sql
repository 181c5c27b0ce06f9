--
-- Navigation (PREV/NEXT/FIRST/LAST, nested, offsets), qualified and
-- universal column references, RUNNING/FINAL, CLASSIFIER, MATCH_NUMBER,
-- SUBSET, DEFINE reading other variables
--
\set VERBOSITY default

-- MEASURES at every row of a match (RUNNING) and over the whole match (FINAL)
SELECT mr_run($$
  SELECT ts, price, cls, first_p, last_p, final_last, prev_p, next_p, prev2_p,
         next_of_first, prev_of_last_down, first_up, last_down1
  FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES CLASSIFIER() AS cls,
             FIRST(price) AS first_p, LAST(price) AS last_p,
             FINAL LAST(price) AS final_last,
             PREV(price) AS prev_p, NEXT(price) AS next_p, PREV(price, 2) AS prev2_p,
             NEXT(FIRST(price), 2) AS next_of_first,
             PREV(LAST(DOWN.price), 1) AS prev_of_last_down,
             FIRST(UP.price) AS first_up, LAST(DOWN.price, 1) AS last_down1
    ALL ROWS PER MATCH
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) AS m WHERE symbol = 'A' ORDER BY ts $$);

-- physical navigation leaves the match (but not the partition)
SELECT mr_run($$
  SELECT symbol, before_start, after_end FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES PREV(FIRST(price), 1) AS before_start, NEXT(LAST(price), 1) AS after_end
    PATTERN (DOWN+) DEFINE DOWN AS price < PREV(price)
  ) AS m ORDER BY symbol, before_start $$);

-- DEFINE conditions that read other variables (the running match)
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES FIRST(ts) AS from_ts, LAST(ts) AS to_ts
    PATTERN (LOW HIGHER+)
    DEFINE HIGHER AS HIGHER.price > LOW.price + 1 AND HIGHER.price > FIRST(HIGHER.price, 0) - 1
  ) AS m ORDER BY symbol, from_ts $$);
-- LAST(X.col) in X's own DEFINE is the candidate row: a tautology
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts MEASURES count(*) AS n
    PATTERN (X+) DEFINE X AS LAST(X.price) = X.price
  ) AS m ORDER BY symbol $$);
-- NEXT in DEFINE reads ahead
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts MEASURES FIRST(ts) AS peak_ts
    PATTERN (PEAK) DEFINE PEAK AS price > PREV(price) AND price > NEXT(price)
  ) AS m ORDER BY symbol, peak_ts $$);

-- CLASSIFIER of a subset, CLASSIFIER through navigation, MATCH_NUMBER
SELECT set_seq('abcab');
SELECT mr_run($$
  SELECT n, cls, cls_u, next_cls, prev_cls, mno FROM seq MATCH_RECOGNIZE (
    ORDER BY n
    MEASURES CLASSIFIER() AS cls, CLASSIFIER(U) AS cls_u,
             NEXT(CLASSIFIER()) AS next_cls, PREV(CLASSIFIER()) AS prev_cls,
             MATCH_NUMBER() AS mno
    ALL ROWS PER MATCH
    PATTERN (A B C?)
    SUBSET U = (A, C)
    DEFINE A AS c = 'a', B AS c = 'b', C AS c = 'c'
  ) AS m ORDER BY n $$);
-- CLASSIFIER in DEFINE, and a quoted (case-sensitive) variable name
SELECT mr_run($$
  SELECT n, cls FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES CLASSIFIER() AS cls ALL ROWS PER MATCH
    PATTERN ("a" b)
    DEFINE "a" AS c = 'a' AND CLASSIFIER() = 'a', b AS c = 'b' AND PREV(CLASSIFIER()) = 'a'
  ) AS m ORDER BY n $$);

-- FINAL and RUNNING in ONE ROW PER MATCH are the same
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES RUNNING LAST(price) AS r, FINAL LAST(price) AS f, RUNNING count(*) AS rc
    PATTERN (UP+) DEFINE UP AS price > PREV(price)
  ) AS m ORDER BY symbol, r $$);

-- ORDER BY DESC and NULLS, several keys, several partition keys
CREATE TABLE ev (dev text, site int, ts int, seq int, v int);
INSERT INTO ev VALUES ('d1', 1, 1, 2, 5), ('d1', 1, 1, 1, 4), ('d1', 1, 2, 1, 3),
  ('d1', 2, 1, 3, 9), ('d1', 2, NULL, 1, 8), ('d2', 1, 3, 1, 7), ('d2', 1, 2, 1, 6);
SELECT mr_run($$
  SELECT * FROM ev MATCH_RECOGNIZE (
    PARTITION BY dev, site ORDER BY ts DESC NULLS FIRST, seq
    MEASURES array_agg(v) AS vs, count(*) AS n
    PATTERN (X+) DEFINE X AS true
  ) AS m ORDER BY dev, site $$);
SELECT mr_run($$
  SELECT * FROM ev MATCH_RECOGNIZE (
    PARTITION BY dev ORDER BY ts NULLS FIRST, seq DESC
    MEASURES array_agg(v) AS vs
    PATTERN (X+) DEFINE X AS true
  ) AS m ORDER BY dev $$);

-- RUNNING FIRST with an offset counts over the whole match (as Trino):
-- the third row's price on every row; LAST stops at the current row
SELECT mr_run($$
  SELECT ts, f2, l1, ff2 FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES FIRST(price, 2) AS f2, LAST(price, 1) AS l1, FINAL FIRST(price, 2) AS ff2
    ALL ROWS PER MATCH
    PATTERN (A+) DEFINE A AS true
  ) AS m WHERE symbol = 'B' $$);
-- in DEFINE the rows after the candidate do not exist yet
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n
    PATTERN (A+) DEFINE A AS FIRST(A.price, 2) IS NULL OR FIRST(A.price, 2) > 0
  ) AS m $$);

-- Snowflake's spellings: LAG/LEAD in DEFINE are PREV/NEXT, CLASSIFIER
-- without parentheses, MATCH_SEQUENCE_NUMBER() the row's place in the match
SELECT mr_run($$
  SELECT ts, price, cls, seq, total FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES CLASSIFIER AS cls, MATCH_SEQUENCE_NUMBER() AS seq,
             FINAL MATCH_SEQUENCE_NUMBER() AS total
    ALL ROWS PER MATCH
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < LAG(price), UP AS price > LAG(price, 1) AND LEAD(price) IS DISTINCT FROM 0
  ) AS m WHERE symbol = 'A' $$);
-- in MEASURES, Snowflake's LAG/LEAD stay inside the match, PREV/NEXT do not
SELECT mr_run($$
  SELECT ts, lag_p, prev_p, lead_p, next_p FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES LAG(price) AS lag_p, PREV(price) AS prev_p,
             LEAD(price, 2) AS lead_p, NEXT(price, 2) AS next_p
    ALL ROWS PER MATCH
    PATTERN (UP+) DEFINE UP AS price > LAG(price)
  ) AS m WHERE symbol = 'A' $$);
SELECT mr_run($$
  SELECT * FROM ticks MATCH_RECOGNIZE (
    ORDER BY ts MEASURES count(*) AS n PATTERN (A B)
    DEFINE B AS price > LAG(price, 1, 0)) AS m $$);

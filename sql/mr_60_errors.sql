--
-- Errors: syntax errors carry SQLSTATE 42601 and a position that psql shows
-- under the offending token of the statement; semantic errors are precise.
--
\set VERBOSITY default
\set SHOW_CONTEXT never

-- syntax errors in the clause
-- a qualified name is no bare measure alias: AS is missing
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES A.price PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts PATTERN (A B DEFINE A AS true)$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts PATTERN (A+*) DEFINE A AS true)$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts PATTERN (A{3,2}) DEFINE A AS true)$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts DEFINE A AS true)$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) ONE ROW PER MATCH)$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES price PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts AFTER MATCH SKIP TO PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) DEFINE A AS 'x)$$);
-- a syntax error inside an expression is PostgreSQL's own, at the right place
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES price + AS p PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) DEFINE A AS price >> > 1)$$);

-- names
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts PATTERN (A B) DEFINE C AS true)$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) DEFINE A AS true, A AS false)$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) SUBSET A = (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) SUBSET U = (Z))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts AFTER MATCH SKIP TO FIRST Z PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES Z.price AS p PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES A.volume AS p PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES volume AS p PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts + 1 PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM no_such_table MATCH_RECOGNIZE (ORDER BY ts PATTERN (A))$$);

-- semantics
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) DEFINE A AS FINAL LAST(price) > 1)$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES FINAL abs(price) AS p PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES PREV(price, ts) AS p PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES PREV(price, -1) AS p PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(PREV(price)) AS p PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES LAST(A.price + B.price) AS p PATTERN (A B))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES CLASSIFIER(Q) AS p PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES MATCH_NUMBER(1) AS p PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) DEFINE A AS price)$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) DEFINE A AS symbol > 1)$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES generate_series(1, 2) AS p PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES A.* AS p PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts DESC PATTERN (A) WITHIN interval '1 day')$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (PATTERN (A) WITHIN 1)$$);

-- navigation must navigate a column or CLASSIFIER() (as Trino)
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES LAST(1) AS x PATTERN (A))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES PREV(MATCH_NUMBER()) AS x PATTERN (A))$$);
-- limits
SET match_recognize.max_pattern_states = 100;
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts PATTERN ((A|B|C|D|E) (A|B|C|D|E) (A|B|C|D|E) (A|B|C|D|E) (A|B|C|D|E) (A|B|C|D|E) (A|B|C|D|E) (A|B|C|D|E)))$$);
SELECT match_recognize_sql($$SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts PATTERN (PERMUTE(A, B, C, D, E, F)))$$);
RESET match_recognize.max_pattern_states;
-- a huge bound is a counted loop, within any state limit (matcher_counters.sql)
SELECT * FROM mr_run($$SELECT * FROM ticks MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts
  MEASURES count(*) AS n PATTERN (A{4,788888888} B??) DEFINE A AS price > 0)$$);
-- a path-dependent pattern over many rows hits the thread budget, not a hang
SET match_recognize.max_threads = 1000;
SELECT set_seq(repeat('a', 40));
SELECT mr_run($$
  SELECT * FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES count(*) AS cnt
    PATTERN ((A | B)* Z) DEFINE A AS true, B AS true, Z AS count(A.*) = 100) AS m $$);
RESET match_recognize.max_threads;
-- statement_timeout interrupts a long search
SELECT set_seq(repeat('a', 200000));
SET statement_timeout = '300ms';
SELECT mr_run($$
  SELECT * FROM seq MATCH_RECOGNIZE (
    ORDER BY n MEASURES count(*) AS cnt
    PATTERN (A+ Z) DEFINE A AS true, Z AS sum(A.n) < 0) AS m $$);
RESET statement_timeout;

-- the column definition list of match_recognize() must fit the query
SELECT * FROM match_recognize($$ ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES count(*) AS c PATTERN (A+) DEFINE A AS true) $$) AS m(c int);
SELECT * FROM match_recognize($$ ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES count(*) AS c PATTERN (A+) DEFINE A AS true) $$) AS m(c bigint, d int);

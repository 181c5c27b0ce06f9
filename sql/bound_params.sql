--
-- Statement parameters in MATCH_RECOGNIZE: $k in the clause is the k-th
-- argument after the query text of match_recognize(), never one of the
-- engine's own parameters.  match_recognize_sql() passes the statement's $k
-- with the type the clause gives it.  Also: the dollar-quote tag search.
--
SET client_min_messages = warning;
CREATE TEMP TABLE bq_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;

CREATE TABLE bq_t (id int, price int, tag text);
INSERT INTO bq_t SELECT g, (g * 7) % 10, 't' || (g % 2) FROM generate_series(1, 12) g;

-- $1 is a parameter, not the slot of price (DEFINE used to compare price
-- with itself, matching nothing)
SELECT * FROM match_recognize($$ bq_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES last(id) AS l, last(price) AS p PATTERN (h) DEFINE h AS price > $1) $$, 6)
  AS r(l int, p int);
-- several parameters, in DEFINE, MEASURES, navigation, aggregates, WITHIN,
-- a subquery, and the input
SELECT * FROM match_recognize($$ (SELECT * FROM bq_t WHERE id <= $4) AS s MATCH_RECOGNIZE (
  ORDER BY id
  MEASURES first(id) AS f, count(*) FILTER (WHERE price > $1) AS n, $2 || '!' AS msg,
           sum(price + $3) AS s3, last(price * $3) AS lp
  PATTERN (a b+) WITHIN $3
  DEFINE b AS PREV(price) + $3 > price AND tag = (SELECT $2::text)) $$, 2, 't1', 10, 9)
  AS r(f int, n bigint, msg text, s3 bigint, lp int);
-- the function gives the same rows as the node
SET match_recognize.enable_custom_scan = off;
SELECT * FROM match_recognize($$ (SELECT * FROM bq_t WHERE id <= $4) AS s MATCH_RECOGNIZE (
  ORDER BY id
  MEASURES first(id) AS f, count(*) FILTER (WHERE price > $1) AS n, $2 || '!' AS msg,
           sum(price + $3) AS s3, last(price * $3) AS lp
  PATTERN (a b+) WITHIN $3
  DEFINE b AS PREV(price) + $3 > price AND tag = (SELECT $2::text)) $$, 2, 't1', 10, 9)
  AS r(f int, n bigint, msg text, s3 bigint, lp int);
RESET match_recognize.enable_custom_scan;
-- a null value and an untyped literal (text)
SELECT * FROM match_recognize($$ bq_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES count(*) AS n, $2 AS lit PATTERN (h+) DEFINE h AS price > $1 IS NOT FALSE) $$,
  NULL::int, 'abc') AS r(n bigint, lit text);
-- errors: a parameter that is not there, a type mismatch, VARIADIC
\set VERBOSITY default
SELECT * FROM match_recognize($$ bq_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES last(id) AS l PATTERN (h) DEFINE h AS price > $2) $$, 6) AS r(l int);
SELECT * FROM match_recognize($$ bq_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES last(id) AS l PATTERN (h) DEFINE h AS price > $1) $$) AS r(l int);
SELECT * FROM match_recognize($$ bq_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES last(id) AS l PATTERN (h) DEFINE h AS price > $1) $$, 'x'::text) AS r(l int);
SELECT * FROM match_recognize($$ bq_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES last(id) AS l PATTERN (h) DEFINE h AS price > $1) $$, VARIADIC ARRAY[1]) AS r(l int);

-- PREPARE / EXECUTE: custom and generic plans, the node and the function
PREPARE bq_p(int, text) AS SELECT * FROM match_recognize($$ bq_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES last(id) AS l, $2 AS t PATTERN (h) DEFINE h AS price > $1) $$, $1, $2)
  AS r(l int, t text);
SET plan_cache_mode = force_custom_plan;
EXECUTE bq_p(6, 'custom');
EXECUTE bq_p(8, 'custom');
EXPLAIN (COSTS OFF, VERBOSE) EXECUTE bq_p(8, 'custom');
SET plan_cache_mode = force_generic_plan;
EXECUTE bq_p(6, 'generic');
EXECUTE bq_p(8, 'generic');
EXPLAIN (COSTS OFF, VERBOSE) EXECUTE bq_p(8, 'generic');
SET match_recognize.enable_custom_scan = off;
EXECUTE bq_p(8, 'function');
RESET match_recognize.enable_custom_scan;
RESET plan_cache_mode;
DEALLOCATE bq_p;

-- match_recognize_sql passes the statement's parameters, typed as the
-- clause makes them (a bare $3 in MEASURES is text, as in a SELECT list), so
-- PREPARE needs no types
SELECT match_recognize_sql($$SELECT * FROM bq_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES last(id) AS l, $3 AS three PATTERN (h) DEFINE h AS price > $1 AND tag = $2) AS r$$);
SELECT match_recognize_sql($$SELECT * FROM bq_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES last(id) AS l PATTERN (h) DEFINE h AS price > $1 AND tag = $2) AS r$$) AS s \gset
PREPARE bq_s AS :s;
EXECUTE bq_s(6, 't1');
SELECT parameter_types FROM pg_prepared_statements WHERE name = 'bq_s';
DEALLOCATE bq_s;
-- the statement's own $2 elsewhere is the same parameter; a $1 the clause
-- does not use is passed as it is
SELECT match_recognize_sql($$SELECT r.*, $2 AS also FROM bq_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES last(id) AS l PATTERN (h) DEFINE h AS price > $2) AS r$$);
-- parameters in the input
SELECT match_recognize_sql($$SELECT * FROM (SELECT * FROM bq_t WHERE tag = $1) s MATCH_RECOGNIZE (
  ORDER BY id MEASURES count(*) AS n PATTERN (h+) DEFINE h AS true) AS r$$) AS s \gset
PREPARE bq_i AS :s;
EXECUTE bq_i('t0');
DEALLOCATE bq_i;

-- the dollar-quote tag: none that the text holds
SELECT match_recognize_sql($$SELECT * FROM bq_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES '$mr$ $mr1$' AS m PATTERN (h) DEFINE h AS tag <> '$mr2') AS r$$);
-- ... found in time linear in the text, and interruptibly (150 000 tags
-- took over a minute, ignoring statement_timeout)
SET statement_timeout = '10s';
SELECT substring(match_recognize_sql('SELECT * FROM bq_t MATCH_RECOGNIZE (ORDER BY id MEASURES '''
  || (SELECT string_agg('$mr' || CASE WHEN g = 0 THEN '' ELSE g::text END || '$', '') FROM generate_series(0, 150000) g)
  || ''' AS m PATTERN (h) DEFINE h AS true) AS r') FROM '\$mr[0-9]*\$\) AS r') AS closing_tag;
RESET statement_timeout;

DROP TABLE bq_t;
SELECT CASE WHEN NOT had THEN 'DROP EXTENSION match_recognize' END FROM bq_had_ext \gexec

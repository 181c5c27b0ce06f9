--
-- The MatchRecognize custom scan: plan shapes, EXPLAIN, and results equal
-- to the set-returning function's.
--
-- leave the database as found: drop the extension at the end if we create it
SET client_min_messages = warning;
CREATE TEMP TABLE cs_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE cs_ticker (symbol text, ts int, price numeric);
INSERT INTO cs_ticker
SELECT 's' || s, t, 100 + ((s * 7 + t * t * 13) % 11)
FROM generate_series(1, 3) s, generate_series(1, 40) t;
ANALYZE cs_ticker;

-- EXPLAIN ANALYZE with the matcher's work counters masked (they follow the
-- matcher's implementation; rows read, matches and rows retained do not)
CREATE FUNCTION cs_explain(query text, show_verbose bool DEFAULT false) RETURNS SETOF text
LANGUAGE plpgsql AS $f$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF'
      || CASE WHEN show_verbose THEN ', VERBOSE' ELSE '' END || ') ' || query LOOP
    RETURN NEXT regexp_replace(line,
      '^(\s*(Matcher Steps|Memo Hits|Define Evaluations|Merged Threads|Peak Threads): )\d+$', '\1N');
  END LOOP;
END $f$;

-- the V-shape query as a FROM item, used below
CREATE FUNCTION cs_vshape() RETURNS text LANGUAGE sql IMMUTABLE AS $f$
SELECT $$ cs_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts,
             count(*) AS n
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) $$ $f$;

-- without an index: a Sort feeds the node
EXPLAIN (COSTS OFF)
SELECT * FROM match_recognize($$ cs_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) $$) AS m(symbol text, start_ts int, bottom_ts int, end_ts int);

SELECT * FROM match_recognize($$ cs_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) $$) AS m(symbol text, start_ts int, bottom_ts int, end_ts int)
ORDER BY symbol, start_ts;

-- VERBOSE shows DEFINE and MEASURES; ANALYZE the runtime's counters
SELECT cs_explain($q$
SELECT * FROM match_recognize($$ cs_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts DESC NULLS LAST
    MEASURES FIRST(A.ts) AS a_ts, LAST(B.price) AS b_price, CLASSIFIER() AS cls
    ALL ROWS PER MATCH AFTER MATCH SKIP PAST LAST ROW
    PATTERN (A B+)
    SUBSET AB = (A, B)
    DEFINE B AS B.price > A.price
  ) $$) AS m(symbol text, ts int, a_ts int, b_price numeric, cls text, price numeric) $q$, true);

-- with an index on the keys there is no Sort
CREATE INDEX cs_ticker_symbol_ts ON cs_ticker (symbol, ts);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT * FROM match_recognize($$ cs_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) $$) AS m(symbol text, start_ts int, bottom_ts int, end_ts int);
RESET enable_seqscan;

-- LIMIT stops reading input early (Rows Read is far below 120)
SELECT cs_explain($q$
SELECT * FROM match_recognize($$ cs_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(UP.ts) AS end_ts
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) $$) AS m(symbol text, start_ts int, end_ts int)
LIMIT 1 $q$);

-- results through the node equal results through the function
CREATE TEMP TABLE cs_node AS
SELECT * FROM match_recognize($$ cs_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts,
             count(*) AS n, MATCH_NUMBER() AS mno
    ALL ROWS PER MATCH WITH UNMATCHED ROWS AFTER MATCH SKIP TO NEXT ROW
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) $$) AS m(symbol text, ts int, start_ts int, bottom_ts int, end_ts int, n int8, mno int8, price numeric);
SET match_recognize.enable_custom_scan = off;
EXPLAIN (COSTS OFF)
SELECT * FROM match_recognize(cs_vshape()) AS m(symbol text, start_ts int, bottom_ts int, end_ts int, n int8);
CREATE TEMP TABLE cs_srf AS
SELECT * FROM match_recognize($$ cs_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts,
             count(*) AS n, MATCH_NUMBER() AS mno
    ALL ROWS PER MATCH WITH UNMATCHED ROWS AFTER MATCH SKIP TO NEXT ROW
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) $$) AS m(symbol text, ts int, start_ts int, bottom_ts int, end_ts int, n int8, mno int8, price numeric);
RESET match_recognize.enable_custom_scan;
SELECT (SELECT count(*) FROM cs_node) AS node_rows,
       (SELECT count(*) FROM cs_srf) AS srf_rows,
       (SELECT count(*) FROM (SELECT * FROM cs_node EXCEPT ALL SELECT * FROM cs_srf) d) AS only_node,
       (SELECT count(*) FROM (SELECT * FROM cs_srf EXCEPT ALL SELECT * FROM cs_node) d) AS only_srf;

-- the automaton (match_recognize.enable_dfa): path-independent patterns
-- over int columns; it must return what the general matcher and the
-- function return, including exclusion and empty loop iterations
CREATE TABLE cs_auto AS
SELECT (ARRAY['X','Y',NULL])[1 + g % 3] AS symbol,
       CASE WHEN g % 11 = 0 THEN NULL ELSE g END AS ts,
       CASE WHEN g % 7 = 0 THEN NULL ELSE (g * 37) % 13 END AS price,
       g AS id
FROM generate_series(1, 300) g;
CREATE FUNCTION cs_auto_compare(pattern text, rpm text, skip text, defs text,
                                OUT automaton bigint, OUT general bigint, OUT func bigint,
                                OUT automaton_only bigint, OUT general_only bigint, OUT func_only bigint)
LANGUAGE plpgsql AS $f$
DECLARE
  q text := format($q$SELECT * FROM match_recognize(%L) AS m(%s)$q$,
    format('cs_auto MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts, id
            MEASURES count(*) AS m0, CLASSIFIER() AS m1, LAST(A.price) AS m2
            %s AFTER MATCH SKIP %s PATTERN (%s) DEFINE %s)', rpm, skip, pattern, defs),
    CASE WHEN rpm LIKE 'ONE%' THEN 'symbol text, m0 bigint, m1 text, m2 int'
         ELSE 'symbol text, ts int, id int, m0 bigint, m1 text, m2 int, price int' END);
BEGIN
  SET LOCAL client_min_messages = warning;
  DROP TABLE IF EXISTS cs_a, cs_g, cs_f;
  SET LOCAL match_recognize.enable_dfa = on;
  EXECUTE 'CREATE TEMP TABLE cs_a AS ' || q;
  SET LOCAL match_recognize.enable_dfa = off;
  EXECUTE 'CREATE TEMP TABLE cs_g AS ' || q;
  SET LOCAL match_recognize.enable_custom_scan = off;
  EXECUTE 'CREATE TEMP TABLE cs_f AS ' || q;
  SELECT count(*) INTO automaton FROM cs_a;
  SELECT count(*) INTO general FROM cs_g;
  SELECT count(*) INTO func FROM cs_f;
  SELECT count(*) INTO automaton_only FROM (SELECT * FROM cs_a EXCEPT ALL SELECT * FROM cs_f) d;
  SELECT count(*) INTO general_only FROM (SELECT * FROM cs_g EXCEPT ALL SELECT * FROM cs_f) d;
  SELECT count(*) INTO func_only FROM (SELECT * FROM cs_f EXCEPT ALL SELECT * FROM cs_a) d;
END $f$;
SELECT * FROM cs_auto_compare('{- A+ -}*', 'ALL ROWS PER MATCH', 'PAST LAST ROW',
                              'A AS A.price < PREV(A.price)');
SELECT * FROM cs_auto_compare('B A+ C+', 'ALL ROWS PER MATCH WITH UNMATCHED ROWS', 'TO LAST C',
                              'A AS A.price < PREV(A.price), C AS C.price > PREV(C.price)');
SELECT * FROM cs_auto_compare('(A | B)* C', 'ONE ROW PER MATCH', 'TO NEXT ROW',
                              'A AS A.price <= NEXT(A.price), B AS B.price <> PREV(B.price, 2), C AS C.price > PREV(C.price)');
SELECT * FROM cs_auto_compare('PERMUTE(A, B?) C*?', 'ALL ROWS PER MATCH OMIT EMPTY MATCHES', 'PAST LAST ROW',
                              'A AS A.ts < NEXT(A.ts), B AS B.price > PREV(B.price)');
-- EXPLAIN says which matcher runs
EXPLAIN (COSTS OFF)
SELECT * FROM match_recognize($$ cs_auto MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts, id
    MEASURES count(*) AS n PATTERN (A B+) DEFINE B AS B.price < PREV(B.price)) $$) AS m(symbol text, n bigint);
SET match_recognize.enable_dfa = off;
EXPLAIN (COSTS OFF)
SELECT * FROM match_recognize($$ cs_auto MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts, id
    MEASURES count(*) AS n PATTERN (A B+) DEFINE B AS B.price < PREV(B.price)) $$) AS m(symbol text, n bigint);
RESET match_recognize.enable_dfa;
-- a DEFINE the automaton cannot take (reads another variable): general
EXPLAIN (COSTS OFF)
SELECT * FROM match_recognize($$ cs_auto MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts, id
    MEASURES count(*) AS n PATTERN (A B+) DEFINE B AS B.price < A.price) $$) AS m(symbol text, n bigint);
-- EXPLAIN ANALYZE counts the automaton's states
SELECT line FROM cs_explain($$SELECT * FROM match_recognize($q$ cs_auto MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts, id
    MEASURES count(*) AS n PATTERN (A B+) DEFINE B AS B.price < PREV(B.price)) $q$) AS m(symbol text, n bigint)$$, true) AS line
WHERE line ~ 'Matcher|Automaton|Rows Read|Matches';
DROP FUNCTION cs_auto_compare(text, text, text, text);
DROP TABLE cs_auto;
-- numeric operands kept out of line (EXTERNAL) and compressed (pglz): the
-- automaton compares them in the window's detoasted copies
CREATE TABLE cs_bignum (k text, ts int, v numeric, w numeric);
ALTER TABLE cs_bignum ALTER COLUMN v SET STORAGE EXTERNAL;
INSERT INTO cs_bignum
SELECT 'k', g, (repeat('1', 5000) || (g * 7 % 10)::text)::numeric,
       (repeat('12', 2500) || (g * 3 % 10)::text)::numeric
FROM generate_series(1, 40) g;
SELECT pg_column_compression(w) AS w_compression, pg_column_size(v) > 2000 AS v_out_of_line
FROM cs_bignum WHERE ts = 1;
CREATE FUNCTION cs_bignum_q() RETURNS text LANGUAGE sql IMMUTABLE AS $f$
SELECT $$ cs_bignum MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
    MEASURES FIRST(A.ts) AS a, LAST(B.ts) AS b, LAST(C.ts) AS c
    ONE ROW PER MATCH PATTERN (A B+ C+)
    DEFINE B AS B.v < PREV(B.v), C AS C.w >= PREV(C.w)) $$ $f$;
SELECT line FROM cs_explain($$SELECT * FROM match_recognize(cs_bignum_q()) AS m(k text, a int, b int, c int)$$)
  AS line WHERE line ~ 'Matcher:';
CREATE TEMP TABLE cs_bn_node AS SELECT * FROM match_recognize(cs_bignum_q()) AS m(k text, a int, b int, c int);
SET match_recognize.enable_custom_scan = off;
CREATE TEMP TABLE cs_bn_func AS SELECT * FROM match_recognize(cs_bignum_q()) AS m(k text, a int, b int, c int);
RESET match_recognize.enable_custom_scan;
SELECT (SELECT count(*) FROM cs_bn_node) AS node_rows,
       (SELECT count(*) FROM (SELECT * FROM cs_bn_node EXCEPT ALL SELECT * FROM cs_bn_func) d) AS only_node,
       (SELECT count(*) FROM (SELECT * FROM cs_bn_func EXCEPT ALL SELECT * FROM cs_bn_node) d) AS only_func;
DROP FUNCTION cs_bignum_q();
DROP TABLE cs_bignum;

-- a non-constant argument: the set-returning function runs (fallback)
EXPLAIN (COSTS OFF)
SELECT * FROM match_recognize(cs_vshape()) AS m(symbol text, start_ts int, bottom_ts int, end_ts int, n int8);
SELECT count(*) FROM match_recognize(cs_vshape()) AS m(symbol text, start_ts int, bottom_ts int, end_ts int, n int8);

-- a wrong column definition list: the function reports it
SELECT * FROM match_recognize($$ cs_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts
    PATTERN (STRT)
    DEFINE STRT AS true
  ) $$) AS m(symbol text, start_ts text);

-- views made by match_recognize_create_view
SELECT match_recognize_create_view('cs_v', $$ SELECT *
  FROM cs_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) $$);
EXPLAIN (COSTS OFF) SELECT * FROM cs_v WHERE symbol = 's2';
SELECT * FROM cs_v WHERE symbol = 's2' ORDER BY start_ts;
-- a filter on a PARTITION BY column filters the input (and can use the
-- index); a filter on a measure cannot
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM cs_v WHERE symbol IN ('s1', 's3') AND end_ts > 30;
RESET enable_seqscan;
SELECT * FROM cs_v WHERE symbol IN ('s1', 's3') AND end_ts > 30 ORDER BY symbol, start_ts;

-- output order: partitions arrive in PARTITION BY order, so ORDER BY symbol
-- needs no sort and ORDER BY symbol, start_ts only an incremental one
EXPLAIN (COSTS OFF) SELECT * FROM cs_v ORDER BY symbol;
EXPLAIN (COSTS OFF) SELECT * FROM cs_v ORDER BY symbol, start_ts;
SELECT bool_and(prev IS NULL OR prev <= symbol) AS ordered, count(*)
FROM (SELECT symbol, lag(symbol) OVER () AS prev
      FROM (SELECT symbol FROM cs_v ORDER BY symbol) s) t;
-- ... but not when the result column compares differently from the input's
CREATE TABLE cs_c (symbol text COLLATE "C", ts int, price numeric);
INSERT INTO cs_c SELECT * FROM cs_ticker;
EXPLAIN (COSTS OFF)
SELECT * FROM match_recognize($$ cs_c MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts MEASURES A.ts AS a_ts PATTERN (A) DEFINE A AS A.price > 105
  ) $$) AS m(symbol text, a_ts int)
ORDER BY symbol;
DROP TABLE cs_c;

-- joins and CTEs
CREATE TABLE cs_symbols (symbol text PRIMARY KEY, name text);
INSERT INTO cs_symbols VALUES ('s1', 'one'), ('s2', 'two'), ('s3', 'three');
ANALYZE cs_symbols;
EXPLAIN (COSTS OFF)
SELECT s.name, v.start_ts, v.end_ts FROM cs_symbols s JOIN cs_v v USING (symbol)
WHERE s.name <> 'two';
SELECT s.name, count(*) FROM cs_symbols s JOIN cs_v v USING (symbol)
GROUP BY s.name ORDER BY s.name;
EXPLAIN (COSTS OFF)
WITH m AS MATERIALIZED (SELECT * FROM cs_v)
SELECT symbol, count(*) FROM m GROUP BY symbol ORDER BY symbol;
WITH m AS MATERIALIZED (SELECT * FROM cs_v)
SELECT symbol, count(*) FROM m GROUP BY symbol ORDER BY symbol;

-- rescans: the node under a correlated subquery runs once per outer row
SELECT cs_explain($q$
SELECT s.symbol, (SELECT count(*) FROM cs_v v WHERE v.symbol = s.symbol) AS n
FROM cs_symbols s $q$);
SELECT s.symbol, (SELECT count(*) FROM cs_v v WHERE v.symbol = s.symbol) AS n
FROM cs_symbols s ORDER BY s.symbol;

-- prepared statements: custom plans, then the generic plan from the cache
PREPARE cs_p(text) AS SELECT count(*) FROM cs_v WHERE symbol = $1;
EXECUTE cs_p('s1');
EXECUTE cs_p('s1');
EXECUTE cs_p('s2');
EXECUTE cs_p('s2');
EXECUTE cs_p('s3');
EXECUTE cs_p('s3');
EXECUTE cs_p('s1');
EXPLAIN (COSTS OFF) EXECUTE cs_p('s1');
SET plan_cache_mode = force_generic_plan;
EXECUTE cs_p('s2');
EXPLAIN (COSTS OFF) EXECUTE cs_p('s2');
RESET plan_cache_mode;
DEALLOCATE cs_p;

-- PL/pgSQL (its plans are cached too)
CREATE FUNCTION cs_count(sym text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  SELECT count(*) INTO n FROM cs_v WHERE symbol = sym;
  RETURN n;
END $$;
SELECT cs_count('s1'), cs_count('s2'), cs_count('s3'), cs_count('s1'), cs_count('s2'),
       cs_count('s3'), cs_count('s1');

-- the plan cache notices changes to the input table
PREPARE cs_all AS SELECT count(*) FROM cs_v;
EXECUTE cs_all;
INSERT INTO cs_ticker VALUES ('s4', 1, 10), ('s4', 2, 5), ('s4', 3, 7);
EXECUTE cs_all;
ALTER TABLE cs_ticker ADD COLUMN note text;
EXECUTE cs_all;
DEALLOCATE cs_all;

-- a subquery input with its own subplan
EXPLAIN (COSTS OFF)
SELECT * FROM match_recognize($$ (SELECT * FROM cs_ticker WHERE price > (SELECT min(price) FROM cs_ticker)) t
  MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES A.ts AS a_ts
    PATTERN (A)
    DEFINE A AS A.price = 110
  ) $$) AS m(symbol text, a_ts int);
SELECT * FROM match_recognize($$ (SELECT * FROM cs_ticker WHERE price > (SELECT min(price) FROM cs_ticker)) t
  MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES A.ts AS a_ts
    PATTERN (A)
    DEFINE A AS A.price = 110
  ) $$) AS m(symbol text, a_ts int)
ORDER BY 1, 2;

DROP FUNCTION cs_count(text);
DROP VIEW cs_v;
DROP TABLE cs_symbols;
DROP TABLE cs_ticker;
DROP FUNCTION cs_vshape();
DROP FUNCTION cs_explain(text, bool);
DO $$ BEGIN
  IF NOT (SELECT had FROM cs_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;

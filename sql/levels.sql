--
-- MATCH_LEVELS: standing "value crosses level" queries with hysteresis.
-- The seed's CrossIndex example, DOWN, per-query DIRECTION and BAND
-- columns, NULLs, equal values and levels, the first row, measures, errors,
-- toasted keys, the node against the function, views (dependencies and a
-- hostile search_path) and the rewriter.
--
-- lv_check(q) runs the statement q (rewritten by match_recognize_sql) in
-- the MatchRecognize node and as the set-returning function
-- (enable_custom_scan = off); it fails unless the two agree, and returns
-- the rows as text, sorted.
--
SET client_min_messages = warning;
CREATE TEMP TABLE lv_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
SET max_parallel_workers_per_gather = 0;
\set VERBOSITY default
\set st '\\echo SQLSTATE :LAST_ERROR_SQLSTATE'

CREATE FUNCTION lv_check(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  stmt text := format('SELECT array_agg(x::text ORDER BY x::text) FROM (%s) x',
                      rtrim(match_recognize_sql(q), E'; \n'));
  node text[];
  srf text[];
BEGIN
  PERFORM set_config('match_recognize.enable_custom_scan', 'on', true);
  EXECUTE stmt INTO node;
  PERFORM set_config('match_recognize.enable_custom_scan', 'off', true);
  EXECUTE stmt INTO srf;
  PERFORM set_config('match_recognize.enable_custom_scan', 'on', true);
  IF node IS DISTINCT FROM srf THEN
    RAISE EXCEPTION 'results differ: node %, function %', node, srf;
  END IF;
  RETURN QUERY SELECT unnest(node);
END $$;

-- the seed's assertion: level 10 100, band 5; fires 0,1,0,0,0,0,1
CREATE TABLE lv_ticks (key int, ts bigint, price bigint, vol int);
INSERT INTO lv_ticks VALUES
  (1, 1, 10000, 10), (1, 2, 10120, 20), (1, 3, 10130, 30), (1, 4, 10098, 40),
  (1, 5, 10110, 50), (1, 6, 10090, 60), (1, 7, 10105, 70);
CREATE TABLE lv_alerts (key int, qid int, level bigint);
INSERT INTO lv_alerts VALUES (1, 7, 10100);
SELECT t.ts, t.price, count(f.qid) AS fires
FROM lv_ticks t LEFT JOIN match_recognize($$lv_ticks MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE price
    QUERIES lv_alerts (ID qid, LEVEL level) CROSSING UP BAND 5)$$)
  AS f(key int, qid int, level bigint, ts bigint) ON f.key = t.key AND f.ts = t.ts
GROUP BY t.ts, t.price ORDER BY t.ts;
-- the same as a statement, and what the rewriter makes of it
SELECT * FROM lv_check($$ SELECT * FROM lv_ticks MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE price
    QUERIES lv_alerts (ID qid, LEVEL level) CROSSING UP BAND 5) AS f $$);
SELECT match_recognize_sql($$ SELECT f.ts FROM lv_ticks MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE price
    QUERIES lv_alerts (ID qid, LEVEL level) BAND 5) AS f WHERE f.qid = 7 $$);
-- without the band every return to 10 100 from below fires again
SELECT * FROM lv_check($$ SELECT ts FROM lv_ticks MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE price
    QUERIES lv_alerts (ID qid, LEVEL level)) AS f $$);
-- the plan: the queries and the rows merged in key order, one node
EXPLAIN (COSTS OFF) SELECT * FROM match_recognize($$lv_ticks MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE price
    QUERIES lv_alerts (ID qid, LEVEL level) BAND 5)$$)
  AS f(key int, qid int, level bigint, ts bigint);
-- (memory figures masked)
CREATE FUNCTION lv_explain(query text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
    IF line !~ '(Memory|Buckets|Sort Method)' THEN RETURN NEXT line; END IF;
  END LOOP;
END $f$;
SELECT * FROM lv_explain($q$SELECT * FROM match_recognize($$lv_ticks MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE price
    QUERIES lv_alerts (ID qid, LEVEL level) BAND 5)$$)
  AS f(key int, qid int, level bigint, ts bigint)$q$);
-- only the queries whose levels the key's values reach are read (a join
-- with each key's value range); a volatile input reads every query
EXPLAIN (COSTS OFF) SELECT * FROM match_recognize($$(SELECT * FROM lv_ticks
    WHERE random() >= 0) AS t MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price
    QUERIES lv_alerts (ID qid, LEVEL level) BAND 5)$$)
  AS f(key int, qid int, level bigint, ts bigint);

-- DOWN mirrors it: level 9 900, band 5 (re-armed at 9 905 or above)
CREATE TABLE lv_down (key int, ts bigint, price bigint);
INSERT INTO lv_down VALUES
  (1, 1, 10000), (1, 2, 9880), (1, 3, 9870), (1, 4, 9902), (1, 5, 9890), (1, 6, 9910), (1, 7, 9895);
CREATE TABLE lv_down_alerts (key int, id int, level int);
INSERT INTO lv_down_alerts VALUES (1, 1, 9900);
SELECT * FROM lv_check($$ SELECT * FROM lv_down MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE price
    QUERIES lv_down_alerts CROSSING DOWN BAND 5) AS f $$);

-- per-query DIRECTION and BAND columns; NULL takes the clause's CROSSING
-- and BAND; one rise through several levels fires them in crossing order
CREATE TABLE lv_q (key int, qid text, lvl smallint, dir varchar, band int, note text);
INSERT INTO lv_q VALUES
  (1, 'a', 10, 'up', 0, 'a up 10'), (1, 'b', 20, 'UP', 100, 'b up 20 wide'),
  (1, 'c', 20, 'Down', NULL, 'c down 20'), (1, 'd', 15, NULL, NULL, 'd default'),
  (2, 'e', 10, 'up', 0, 'e other key');
CREATE TABLE lv_v (key int, ts int, v bigint);
INSERT INTO lv_v VALUES
  (1, 1, 0), (1, 2, 30), (1, 3, 5), (1, 4, 25), (1, 5, 9), (1, 6, 30),
  (2, 1, 0), (2, 2, 10);
SELECT * FROM lv_check($$ SELECT * FROM lv_v MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE v
    QUERIES lv_q AS q (ID qid, LEVEL lvl, DIRECTION dir, BAND band)
    CROSSING DOWN BAND 2
    MEASURES q.note AS note, v AS v) AS f $$);
-- the BAND expression is over the query's row
SELECT * FROM lv_check($$ SELECT key, qid, ts FROM lv_v MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE v
    QUERIES lv_q q (ID qid, LEVEL lvl) BAND CASE WHEN q.qid = 'a' THEN 22 ELSE 0 END) AS f $$);

-- NULLs: a NULL value is skipped (it does not become the previous value),
-- a NULL level, a NULL query key never fire, NULL-key rows have no queries
CREATE TABLE lv_n (key int, ts int, v int);
INSERT INTO lv_n VALUES
  (1, 1, 5), (1, 2, NULL), (1, 3, 15), (1, 4, NULL), (1, 5, 4), (1, 6, 12),
  (NULL, 1, 0), (NULL, 2, 20);
CREATE TABLE lv_nq (key int, id int, level int);
INSERT INTO lv_nq VALUES (1, 1, 10), (1, 2, NULL), (NULL, 3, 10);
SELECT * FROM lv_check($$ SELECT * FROM lv_n MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE v QUERIES lv_nq) AS f $$);
-- a fire's identity: (key, ID, FIRE_ROW()), the firing row's number among
-- its key's rows, NULL values counted
SELECT * FROM lv_check($$ SELECT key, id, FIRE_ROW, ts FROM lv_n MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE v QUERIES lv_nq MEASURES FIRE_ROW() AS fire_row) AS f $$);
-- the first row of a key fires nothing, even at or above a level; equal
-- values do nothing; queries of equal levels fire together
CREATE TABLE lv_e (key int, ts int, v int);
INSERT INTO lv_e VALUES (1, 1, 50), (1, 2, 50), (1, 3, 0), (1, 4, 0), (1, 5, 50), (1, 6, 50);
CREATE TABLE lv_eq (key int, id int, level int);
INSERT INTO lv_eq VALUES (1, 1, 10), (1, 2, 10), (1, 3, 50);
SELECT * FROM lv_check($$ SELECT * FROM lv_e MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE v QUERIES lv_eq) AS f $$);
-- no PARTITION BY: one partition, every query (here in DESC order of ts)
SELECT * FROM lv_check($$ SELECT * FROM lv_e MATCH_LEVELS (
    ORDER BY ts DESC VALUE v QUERIES lv_eq AS all_q) AS f $$);
-- a subquery input with an alias, and a measure over the input row
SELECT * FROM lv_check($$ SELECT * FROM (SELECT key, ts, price * 2 AS p2, vol FROM lv_ticks) s
  MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE s.p2 / 2
    QUERIES lv_alerts a (ID qid, LEVEL level) BAND 5 MEASURES vol * 10 AS vol10) AS f $$);

-- a key of two columns; queries whose levels a key's values never reach
CREATE TABLE lv_k2 (a int, b text, ts int, v int);
INSERT INTO lv_k2 SELECT a, b, t, (a * 10 + t * 3) % 17 FROM generate_series(1, 2) a,
  unnest(ARRAY['x', 'y']) b, generate_series(1, 8) t;
CREATE TABLE lv_k2q (a int, b text, id int, level int);
INSERT INTO lv_k2q SELECT a, b, l, l FROM generate_series(1, 2) a, unnest(ARRAY['x', 'z']) b,
  unnest(ARRAY[-5, 4, 9, 15, 40]) l;
SELECT * FROM lv_check($$ SELECT * FROM lv_k2 MATCH_LEVELS (
    PARTITION BY a, b ORDER BY ts VALUE v QUERIES lv_k2q BAND 2) AS f $$);

-- invalid DIRECTION values and negative bands are errors at run time
UPDATE lv_q SET dir = 'sideways' WHERE qid = 'd';
SELECT match_recognize_sql($$ SELECT * FROM lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v
    QUERIES lv_q (ID qid, LEVEL lvl, DIRECTION dir)) AS f $$) \gexec
:st
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v
    QUERIES lv_q (ID qid, LEVEL lvl, DIRECTION dir))$$) AS f(key int, qid text, lvl smallint, ts int);
:st
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v
    QUERIES lv_q (ID qid, LEVEL lvl) BAND -1)$$) AS f(key int, qid text, lvl smallint, ts int);
:st

-- syntax errors (42601), with the caret in the statement
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts
    QUERIES lv_q)$$) AS f(key int);
:st
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v
    QUERIES lv_q (ID qid, LEVEL lvl) CROSSING SIDEWAYS)$$) AS f(key int);
:st
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v
    QUERIES lv_q (LEVEL lvl))$$) AS f(key int);
:st
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v +
    QUERIES lv_q (ID qid, LEVEL lvl))$$) AS f(key int);
:st
SELECT match_recognize_sql($$ SELECT * FROM MATCH_LEVELS (ORDER BY ts VALUE v QUERIES lv_q) $$);
:st
-- missing columns (42703)
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY nokey ORDER BY ts VALUE v
    QUERIES lv_q (ID qid, LEVEL lvl))$$) AS f(key int);
:st
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v
    QUERIES lv_q (ID qid, LEVEL nolevel))$$) AS f(key int);
:st
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v
    QUERIES lv_q)$$) AS f(key int);
:st
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE nov
    QUERIES lv_q (ID qid, LEVEL lvl))$$) AS f(key int);
:st
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (ORDER BY ts VALUE v
    QUERIES lv_q (ID qid, LEVEL lvl) MEASURES q.note AS n)$$) AS f(key int);
:st
-- a measure reads the query's row (when it names q.column) or the input's
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (ORDER BY ts VALUE v
    QUERIES lv_q q (ID qid, LEVEL lvl) MEASURES v - q.lvl AS over)$$) AS f(key int);
:st
-- wrong types (42804)
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v::numeric
    QUERIES lv_q (ID qid, LEVEL lvl))$$) AS f(key int);
:st
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v
    QUERIES lv_q (ID qid, LEVEL note))$$) AS f(key int);
:st
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v
    QUERIES lv_q (ID qid, LEVEL lvl, DIRECTION band))$$) AS f(key int);
:st
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v
    QUERIES lv_q (ID qid, LEVEL lvl) BAND 'wide')$$) AS f(key int);
:st
SELECT * FROM match_recognize($$(SELECT key::bigint AS key, ts, v FROM lv_v) s MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE v QUERIES lv_q (ID qid, LEVEL lvl))$$) AS f(key int);
:st
-- a column definition list that does not match the result
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v
    QUERIES lv_q (ID qid, LEVEL lvl))$$) AS f(key int, qid int, lvl smallint, ts int);
:st
-- no statement parameters
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v + $1
    QUERIES lv_q (ID qid, LEVEL lvl))$$, 1) AS f(key int, qid text, lvl smallint, ts int);
:st

-- a QUERIES table the caller may not read (42501), in the node and the
-- function; a view's owner may grant its rows without the table
CREATE ROLE regress_lv_reader;
GRANT SELECT ON lv_v TO regress_lv_reader;
SET ROLE regress_lv_reader;
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v
    QUERIES lv_q (ID qid, LEVEL lvl))$$) AS f(key int, qid text, lvl smallint, ts int);
:st
SET match_recognize.enable_custom_scan = off;
SELECT * FROM match_recognize($$lv_v MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE v
    QUERIES lv_q (ID qid, LEVEL lvl))$$) AS f(key int, qid text, lvl smallint, ts int);
:st
RESET match_recognize.enable_custom_scan;
RESET ROLE;

-- toasted keys: text keys stored out of line, in both tables
CREATE FUNCTION lv_big(seed text) RETURNS text LANGUAGE sql IMMUTABLE AS
$$SELECT string_agg(md5(seed || ':' || i), '') FROM generate_series(1, 300) i$$;
CREATE TABLE lv_tt (sym text, ts int, v int);
ALTER TABLE lv_tt ALTER COLUMN sym SET STORAGE EXTERNAL;
CREATE TABLE lv_tq (sym text, id int, level int);
ALTER TABLE lv_tq ALTER COLUMN sym SET STORAGE EXTERNAL;
INSERT INTO lv_tt SELECT lv_big(s::text), t, (t * 7 * s) % 10 FROM generate_series(1, 3) s, generate_series(1, 12) t;
INSERT INTO lv_tq SELECT lv_big(s::text), s * 10 + l, l FROM generate_series(1, 3) s, generate_series(3, 8, 5) l;
SELECT pg_relation_size(reltoastrelid) > 0 AS out_of_line FROM pg_class
WHERE relname IN ('lv_tt', 'lv_tq');
SELECT * FROM lv_check($$ SELECT md5(sym) AS h, id, level, ts FROM lv_tt MATCH_LEVELS (
    PARTITION BY sym ORDER BY ts VALUE v QUERIES lv_tq BAND 1) AS f $$);

-- views: dependencies, and a hostile search_path does not change them
SELECT match_recognize_create_view('lv_view', $$ SELECT key, qid, ts, n FROM lv_ticks MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE price
    QUERIES lv_alerts (ID qid, LEVEL level) CROSSING UP BAND 5
    MEASURES FIRE_ROW() AS n) AS f $$);
SELECT * FROM lv_view ORDER BY ts;
DROP TABLE lv_alerts;
ALTER TABLE lv_alerts ALTER COLUMN level TYPE int;
CREATE SCHEMA lv_evil;
CREATE TABLE lv_evil.lv_alerts (key int, qid int, level bigint);
INSERT INTO lv_evil.lv_alerts VALUES (1, 666, 10000);
CREATE TABLE lv_evil.lv_ticks (key int, ts bigint, price bigint, vol int);
SET search_path = lv_evil, public;
SELECT * FROM lv_view ORDER BY ts;
RESET search_path;
-- reading the view checks the QUERIES table's privilege as its owner
GRANT SELECT ON lv_view TO regress_lv_reader;
SET ROLE regress_lv_reader;
SELECT * FROM lv_view ORDER BY ts;
SELECT * FROM lv_alerts;
:st
RESET ROLE;

-- written directly, PostgreSQL's syntax error gets the hint
SELECT * FROM lv_ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price
    QUERIES lv_alerts (ID qid, LEVEL level)) AS f;
:st

DROP VIEW lv_view;
DROP SCHEMA lv_evil CASCADE;
DROP TABLE lv_k2, lv_k2q, lv_ticks, lv_alerts, lv_down, lv_down_alerts, lv_q, lv_v, lv_n, lv_nq, lv_e, lv_eq,
  lv_tt, lv_tq;
DROP FUNCTION lv_big(text);
DROP FUNCTION lv_check(text);
DROP FUNCTION lv_explain(text);
DROP ROLE regress_lv_reader;
DO $$ BEGIN
  IF NOT (SELECT had FROM lv_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;

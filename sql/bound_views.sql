--
-- Views made by match_recognize_create_view(): the view's rule holds the
-- analysed trees (a match_recognize_bound() call whose parts are EXISTS
-- subqueries), so PostgreSQL records their dependencies, checks the input's
-- privileges as the view's owner, and resolves no name when the view is
-- read.  Also: the extension in a schema of its own, and the upgrade from
-- 1.0.
--
SET client_min_messages = warning;
SELECT NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS bv_created \gset
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY default

CREATE ROLE regress_bv_owner;
CREATE ROLE regress_bv_reader;
CREATE ROLE regress_bv_evil;
GRANT CREATE ON SCHEMA public TO regress_bv_owner, regress_bv_evil;

SET ROLE regress_bv_owner;
CREATE TABLE bv_ticker (symbol text, ts int, price numeric);
INSERT INTO bv_ticker VALUES
  ('A', 1, 10), ('A', 2, 9), ('A', 3, 8), ('A', 4, 9), ('A', 5, 11), ('A', 6, 4),
  ('B', 1, 20), ('B', 2, 18), ('B', 3, 19), ('B', 4, 21);
CREATE FUNCTION bv_up(numeric, numeric) RETURNS bool LANGUAGE sql IMMUTABLE
  AS $$ SELECT $1 > $2 $$;
SELECT match_recognize_create_view('bv_v', $$ SELECT * FROM bv_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES FIRST(ts) AS s, LAST(ts) AS e, count(*) AS n, max(price) AS top
    PATTERN (strt down+ up+)
    DEFINE down AS price < PREV(price), up AS bv_up(price, PREV(price)) AND price > 0) $$);
-- a plain view made at the same time, for comparison
CREATE VIEW bv_plain AS SELECT symbol, ts FROM bv_ticker WHERE price > 0;
GRANT SELECT ON bv_v, bv_plain TO regress_bv_reader;
RESET ROLE;

-- what the view stores: the bound call with its analysed parts
SELECT pg_get_viewdef('bv_v');
SELECT * FROM bv_v ORDER BY symbol, s;
EXPLAIN (COSTS OFF) SELECT * FROM bv_v WHERE symbol = 'B';

-- GRANT SELECT on the view is enough to read it, as for plain views
SET ROLE regress_bv_reader;
SELECT * FROM bv_v ORDER BY symbol, s;
SELECT count(*) FROM bv_plain;
SELECT * FROM bv_ticker;
RESET ROLE;
DROP VIEW bv_plain;

-- a role with CREATE on public plants an operator that the clause's text
-- would now resolve to (numeric > integer matches exactly), and a superuser
-- reads the view with public in its search_path: nothing of it runs
SET ROLE regress_bv_evil;
CREATE FUNCTION public.bv_evil(numeric, integer) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE 'bv_evil runs as %', current_user;
  RETURN true;
END $$;
CREATE OPERATOR public.> (LEFTARG = numeric, RIGHTARG = integer, FUNCTION = public.bv_evil);
RESET ROLE;
SHOW search_path;
SELECT * FROM bv_v ORDER BY symbol, s;
-- (the operator would be used by a query written now)
SELECT count(*) FROM bv_ticker WHERE price > 0 AND symbol = 'B' AND ts = 1;
-- the reader's own temporary table of the same name does not shadow the input
CREATE TEMP TABLE bv_ticker (symbol text, ts int, price numeric);
INSERT INTO pg_temp.bv_ticker VALUES ('Z', 1, 3), ('Z', 2, 2), ('Z', 3, 4);
SELECT * FROM bv_v ORDER BY symbol, s;
DROP TABLE pg_temp.bv_ticker;
SET ROLE regress_bv_evil;
DROP OPERATOR public.> (numeric, integer);
DROP FUNCTION public.bv_evil(numeric, integer);
RESET ROLE;

-- the view depends on what it uses, as a plain view does
DROP TABLE bv_ticker;
ALTER TABLE bv_ticker ALTER COLUMN price TYPE float8;
DROP FUNCTION bv_up(numeric, numeric);
-- renaming keeps it working
ALTER TABLE bv_ticker RENAME COLUMN price TO cost;
ALTER TABLE bv_ticker RENAME TO bv_ticker2;
SELECT * FROM bv_v ORDER BY symbol, s;
-- a new column is not read (the view keeps its columns, as a plain view)
ALTER TABLE bv_ticker2 ADD COLUMN extra int;
SELECT * FROM bv_v ORDER BY symbol, s;
-- a cached plan of the view after the table changed
PREPARE bv_p AS SELECT * FROM bv_v WHERE symbol = 'A';
EXECUTE bv_p;
INSERT INTO bv_ticker2 VALUES ('A', 7, 5, NULL), ('A', 8, 6, NULL);
CREATE INDEX ON bv_ticker2 (symbol, ts);
EXECUTE bv_p;
DEALLOCATE bv_p;

-- a view cannot have parameters
SELECT match_recognize_create_view('bv_param', $$ SELECT * FROM bv_ticker2 MATCH_RECOGNIZE (
    ORDER BY ts MEASURES count(*) AS n PATTERN (a+) DEFINE a AS cost > $1) $$);

-- nested items, a CTE, an alias with a column list, a join
SELECT match_recognize_create_view('bv_nest', $$
  WITH c AS (SELECT * FROM bv_ticker2 WHERE symbol = 'A')
  SELECT o.*, length(o.sym) AS len
  FROM (SELECT * FROM c MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS s, symbol AS sym
          PATTERN (x y+) DEFINE y AS cost < PREV(cost)) AS i) AS src
  MATCH_RECOGNIZE (ORDER BY s MEASURES count(*) AS shapes, FIRST(sym) AS sym
                   PATTERN (z+) DEFINE z AS true) AS o(cnt, sym) $$);
SELECT * FROM bv_nest;
SELECT v.symbol, v.s, n.cnt FROM bv_v v JOIN bv_nest n ON v.symbol = n.sym ORDER BY v.s;
SELECT * FROM bv_nest UNION ALL SELECT * FROM bv_nest;

-- match_recognize_bound() runs only as the MatchRecognize node
SET match_recognize.enable_custom_scan = off;
SELECT * FROM bv_v;
RESET match_recognize.enable_custom_scan;
SELECT match_recognize_bound('x', true);
SELECT row_to_json(m) FROM match_recognize_bound('x', true) AS m(n bigint);
SELECT * FROM match_recognize_bound('x', true) WITH ORDINALITY AS m(n bigint, o bigint);
SELECT match_recognize_slot(1, 2);
SELECT * FROM match_recognize_bound_scan(NULL::internal) AS m(n bigint);

-- hand-written parts are validated: never taken for what they are not
\set q 'bv_ticker2 MATCH_RECOGNIZE (ORDER BY ts MEASURES count(*) AS n PATTERN (a b+) DEFINE b AS cost > PREV(cost))'
-- the right parts, written by hand
SELECT * FROM match_recognize_bound(:'q', EXISTS (SELECT * FROM bv_ticker2),
  EXISTS (SELECT match_recognize_slot(1, NULL::numeric) > match_recognize_slot(2, NULL::numeric)),
  EXISTS (SELECT count(*)), EXISTS (SELECT match_recognize_slot(1, NULL::bigint)),
  EXISTS (SELECT '{}'::boolean[])) AS m(n bigint);
-- a slot of another type
SELECT * FROM match_recognize_bound(:'q', EXISTS (SELECT * FROM bv_ticker2),
  EXISTS (SELECT match_recognize_slot(1, NULL::text) > match_recognize_slot(2, NULL::text)),
  EXISTS (SELECT count(*)), EXISTS (SELECT match_recognize_slot(1, NULL::bigint)),
  EXISTS (SELECT '{}'::boolean[])) AS m(n bigint);
-- a slot that is not there
SELECT * FROM match_recognize_bound(:'q', EXISTS (SELECT * FROM bv_ticker2),
  EXISTS (SELECT match_recognize_slot(1, NULL::numeric) > match_recognize_slot(3, NULL::numeric)),
  EXISTS (SELECT count(*)), EXISTS (SELECT match_recognize_slot(1, NULL::bigint)),
  EXISTS (SELECT '{}'::boolean[])) AS m(n bigint);
-- a condition that is not boolean, an expression with a FROM clause
SELECT * FROM match_recognize_bound(:'q', EXISTS (SELECT * FROM bv_ticker2),
  EXISTS (SELECT match_recognize_slot(1, NULL::numeric) + match_recognize_slot(2, NULL::numeric)),
  EXISTS (SELECT count(*)), EXISTS (SELECT match_recognize_slot(1, NULL::bigint)),
  EXISTS (SELECT '{}'::boolean[])) AS m(n bigint);
SELECT * FROM match_recognize_bound(:'q', EXISTS (SELECT * FROM bv_ticker2),
  EXISTS (SELECT ts > 0 FROM bv_ticker2),
  EXISTS (SELECT count(*)), EXISTS (SELECT match_recognize_slot(1, NULL::bigint)),
  EXISTS (SELECT '{}'::boolean[])) AS m(n bigint);
-- a part missing, one too many, no decisions, an input that is not a plain query
SELECT * FROM match_recognize_bound(:'q', EXISTS (SELECT * FROM bv_ticker2),
  EXISTS (SELECT match_recognize_slot(1, NULL::numeric) > match_recognize_slot(2, NULL::numeric)),
  EXISTS (SELECT '{}'::boolean[])) AS m(n bigint);
SELECT * FROM match_recognize_bound(:'q', EXISTS (SELECT * FROM bv_ticker2),
  EXISTS (SELECT match_recognize_slot(1, NULL::numeric) > match_recognize_slot(2, NULL::numeric)),
  EXISTS (SELECT count(*)), EXISTS (SELECT match_recognize_slot(1, NULL::bigint)),
  EXISTS (SELECT true), EXISTS (SELECT '{}'::boolean[])) AS m(n bigint);
SELECT * FROM match_recognize_bound(:'q', EXISTS (SELECT * FROM bv_ticker2)) AS m(n bigint);
SELECT * FROM match_recognize_bound(:'q', EXISTS (SELECT * FROM bv_ticker2 LIMIT 2),
  EXISTS (SELECT match_recognize_slot(1, NULL::numeric) > match_recognize_slot(2, NULL::numeric)),
  EXISTS (SELECT count(*)), EXISTS (SELECT match_recognize_slot(1, NULL::bigint)),
  EXISTS (SELECT '{}'::boolean[])) AS m(n bigint);
-- an aggregate that is not one, a slot numbered zero
SELECT * FROM match_recognize_bound(:'q', EXISTS (SELECT * FROM bv_ticker2),
  EXISTS (SELECT match_recognize_slot(1, NULL::numeric) > match_recognize_slot(2, NULL::numeric)),
  EXISTS (SELECT 1::bigint), EXISTS (SELECT match_recognize_slot(1, NULL::bigint)),
  EXISTS (SELECT '{}'::boolean[])) AS m(n bigint);
SELECT * FROM match_recognize_bound(:'q', EXISTS (SELECT * FROM bv_ticker2),
  EXISTS (SELECT match_recognize_slot(0, NULL::numeric) > 1),
  EXISTS (SELECT count(*)), EXISTS (SELECT match_recognize_slot(1, NULL::bigint)),
  EXISTS (SELECT '{}'::boolean[])) AS m(n bigint);
-- parts that are not EXISTS subqueries, parameters, outer references
SELECT * FROM match_recognize_bound(:'q', true) AS m(n bigint);
SELECT * FROM match_recognize_bound(:'q', VARIADIC NULL::boolean[]) AS m(n bigint);
SELECT * FROM match_recognize_bound(:'q', NOT EXISTS (SELECT * FROM bv_ticker2)) AS m(n bigint);
PREPARE bv_bad(int) AS SELECT * FROM match_recognize_bound(:'q',
  EXISTS (SELECT * FROM bv_ticker2 WHERE ts > $1)) AS m(n bigint);
EXECUTE bv_bad(1);
DEALLOCATE bv_bad;
SELECT * FROM bv_ticker2 t, match_recognize_bound(:'q',
  EXISTS (SELECT * FROM bv_ticker2 WHERE ts = t.ts)) AS m(n bigint);
-- a hand-written call reads tables with the caller's privileges
SET ROLE regress_bv_reader;
SELECT * FROM match_recognize_bound(:'q', EXISTS (SELECT * FROM bv_ticker2),
  EXISTS (SELECT match_recognize_slot(1, NULL::numeric) > match_recognize_slot(2, NULL::numeric)),
  EXISTS (SELECT count(*)), EXISTS (SELECT match_recognize_slot(1, NULL::bigint)),
  EXISTS (SELECT '{}'::boolean[])) AS m(n bigint);
RESET ROLE;

DROP VIEW bv_nest, bv_v;
DROP TABLE bv_ticker2;
DROP FUNCTION bv_up(numeric, numeric);
REVOKE CREATE ON SCHEMA public FROM regress_bv_owner, regress_bv_evil;
DROP ROLE regress_bv_owner, regress_bv_reader, regress_bv_evil;
SELECT CASE WHEN :'bv_created' THEN 'DROP EXTENSION match_recognize' END \gexec

-- the extension in a schema of its own, read with a search_path without it
-- (and a public.match_recognize(text) that must not be called)
\set bv_db :DBNAME
CREATE DATABASE regress_bv_db;
\c regress_bv_db
SET client_min_messages = warning;
CREATE SCHEMA mr;
CREATE EXTENSION match_recognize SCHEMA mr;
RESET client_min_messages;
SELECT attnum FROM pg_attribute WHERE attrelid = 'mr.match_recognize_stream'::regclass
  AND attname = 'bound';
CREATE TABLE t (k int, v int);
INSERT INTO t SELECT g, g % 4 FROM generate_series(1, 12) g;
CREATE FUNCTION public.match_recognize(text) RETURNS SETOF record LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE 'public.match_recognize called';
END $$;
SET search_path = public;
SELECT mr.match_recognize_sql($$ SELECT * FROM t MATCH_RECOGNIZE (ORDER BY k MEASURES count(*) AS n
  PATTERN (a b+) DEFINE b AS v > PREV(v)) AS m $$) \gexec
SELECT mr.match_recognize_sql($$ SELECT * FROM t MATCH_RECOGNIZE (ORDER BY k MEASURES count(*) AS n
  PATTERN (a b+) DEFINE b AS v > PREV(v) AND v > $1) AS m $$) AS s \gset
PREPARE s AS :s;
EXECUTE s(1);
SELECT mr.match_recognize_create_view('v', $$ SELECT * FROM t MATCH_RECOGNIZE (ORDER BY k
  MEASURES count(*) AS n PATTERN (a b+) DEFINE b AS v > PREV(v)) AS m $$);
SELECT * FROM v;
SET search_path = pg_catalog;
SELECT * FROM public.v;
RESET search_path;

-- the upgrade from 1.0
DROP VIEW v;
DROP EXTENSION match_recognize;
CREATE EXTENSION match_recognize VERSION '1.0' SCHEMA mr;
SELECT extversion FROM pg_extension WHERE extname = 'match_recognize';
SELECT proname, pg_get_function_identity_arguments(oid) FROM pg_proc
WHERE pronamespace = 'mr'::regnamespace AND proname LIKE 'match_recognize%' ORDER BY 1, 2;
SELECT * FROM mr.match_recognize($$ t MATCH_RECOGNIZE (ORDER BY k MEASURES count(*) AS n
  PATTERN (a b+) DEFINE b AS v > PREV(v)) $$) AS m(n bigint);
ALTER EXTENSION match_recognize UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'match_recognize';
SELECT proname, pg_get_function_identity_arguments(oid) FROM pg_proc
WHERE pronamespace = 'mr'::regnamespace AND proname LIKE 'match_recognize%' ORDER BY 1, 2;
-- the stream catalog's new column is where a fresh install has it
SELECT attnum FROM pg_attribute WHERE attrelid = 'mr.match_recognize_stream'::regclass
  AND attname = 'bound';
SELECT * FROM mr.match_recognize($$ t MATCH_RECOGNIZE (ORDER BY k MEASURES count(*) AS n
  PATTERN (a b+) DEFINE b AS v > $1) $$, 1) AS m(n bigint);
SELECT mr.match_recognize_create_view('v', $$ SELECT * FROM t MATCH_RECOGNIZE (ORDER BY k
  MEASURES count(*) AS n PATTERN (a b+) DEFINE b AS v > PREV(v)) AS m $$);
SELECT * FROM v;
\c :bv_db
DROP DATABASE regress_bv_db;

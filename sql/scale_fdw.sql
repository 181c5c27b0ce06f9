--
-- Scaling out with postgres_fdw (issue 14, item 2), looped back to two
-- other databases of this cluster: a table partitioned by LIST on k with
-- foreign partitions in mr_fdw_d1 and mr_fdw_d2 and one local partition.
-- When PARTITION BY contains k, each foreign partition's clause runs on its
-- server (Custom Scan MatchRecognizeAppend) and the result equals the same
-- query over a local copy of the rows; without k, today's plan.
--
SELECT current_database() AS regdb \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS mr_fdw_d1;
DROP DATABASE IF EXISTS mr_fdw_d2;
DROP DATABASE IF EXISTS mr_fdw_d3;
CREATE DATABASE mr_fdw_d1;
CREATE DATABASE mr_fdw_d2;
CREATE DATABASE mr_fdw_d3;
\c mr_fdw_d1
SET client_min_messages = warning;
CREATE EXTENSION match_recognize;
CREATE TABLE ev1 (k int, ts int, v int);
INSERT INTO ev1 SELECT k, ts, (ts * 7 + k * 3) % 10
  FROM generate_series(1, 12) k, generate_series(1, 60) ts WHERE k % 3 = 1;
CREATE TABLE evt (d date, ts int, v int);
INSERT INTO evt SELECT date '2026-01-01' + i % 3, i, i % 5 FROM generate_series(1, 30) i;
\c mr_fdw_d2
SET client_min_messages = warning;
CREATE EXTENSION match_recognize;
CREATE SCHEMA far;
CREATE TABLE far.ev2 (k int, ts int, v int);
INSERT INTO far.ev2 SELECT k, ts, (ts * 7 + k * 3) % 10
  FROM generate_series(1, 12) k, generate_series(1, 60) ts WHERE k % 3 = 2;
\c mr_fdw_d3
CREATE TABLE ev3 (k int, ts int, v int);
\c :regdb
SET client_min_messages = warning;
CREATE TEMP TABLE sf_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
CREATE EXTENSION postgres_fdw;
RESET client_min_messages;
\set VERBOSITY default
\set SHOW_CONTEXT never

DO $$
DECLARE
  host text := split_part(current_setting('unix_socket_directories'), ',', 1);
  port text := current_setting('port');
  i int;
BEGIN
  FOR i IN 1..3 LOOP
    EXECUTE format('CREATE SERVER sf_s%s FOREIGN DATA WRAPPER postgres_fdw
                    OPTIONS (host %L, port %L, dbname %L)', i, trim(host), port, 'mr_fdw_d' || i);
    EXECUTE format('CREATE USER MAPPING FOR CURRENT_USER SERVER sf_s%s', i);
  END LOOP;
END $$;

CREATE TABLE sf_ev (k int, ts int, v int) PARTITION BY LIST (k);
CREATE FOREIGN TABLE sf_ev_1 PARTITION OF sf_ev FOR VALUES IN (1, 4, 7, 10)
  SERVER sf_s1 OPTIONS (table_name 'ev1');
CREATE FOREIGN TABLE sf_ev_2 PARTITION OF sf_ev FOR VALUES IN (2, 5, 8, 11)
  SERVER sf_s2 OPTIONS (schema_name 'far', table_name 'ev2');
CREATE TABLE sf_ev_0 PARTITION OF sf_ev FOR VALUES IN (0, 3, 6, 9, 12);
INSERT INTO sf_ev_0 SELECT k, ts, (ts * 7 + k * 3) % 10
  FROM generate_series(1, 12) k, generate_series(1, 60) ts WHERE k % 3 = 0;
-- the same rows, all local
CREATE TABLE sf_all AS SELECT * FROM sf_ev;
SELECT count(*), count(DISTINCT k) FROM sf_all;

-- sf_plan(clause): the lines of EXPLAIN (COSTS OFF) of the clause
CREATE FUNCTION sf_plan(clause text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE format('EXPLAIN (COSTS OFF) SELECT * FROM match_recognize(%L) AS r(k int, x text)', clause)
  LOOP RETURN NEXT l; END LOOP;
END $$;

-- sf_plan_v(query): the lines of EXPLAIN (COSTS OFF, VERBOSE) of a query
CREATE FUNCTION sf_plan_v(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF, VERBOSE) ' || query LOOP RETURN NEXT l; END LOOP;
END $$;

-- sf_cmp(clause over %s): rows of the clause over sf_ev and over sf_all,
-- and each side EXCEPT ALL the other
CREATE FUNCTION sf_cmp(clause text, cols text, OUT got bigint, OUT want bigint,
                       OUT got_not_want bigint, OUT want_not_got bigint)
LANGUAGE plpgsql AS $$
DECLARE
  a text := format('SELECT * FROM match_recognize(%L) AS r(%s)', format(clause, 'sf_ev'), cols);
  b text := format('SELECT * FROM match_recognize(%L) AS r(%s)', format(clause, 'sf_all'), cols);
BEGIN
  EXECUTE format('SELECT count(*) FROM (%s) x', a) INTO got;
  EXECUTE format('SELECT count(*) FROM (%s) x', b) INTO want;
  EXECUTE format('SELECT count(*) FROM (%s EXCEPT ALL %s) x', a, b) INTO got_not_want;
  EXECUTE format('SELECT count(*) FROM (%s EXCEPT ALL %s) x', b, a) INTO want_not_got;
END $$;

-- each part runs where its rows are
EXPLAIN (COSTS OFF)
SELECT * FROM match_recognize('sf_ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(A.ts) AS s, LAST(B.ts) AS e, count(*) AS n ONE ROW PER MATCH
  PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)') AS r(k int, s int, e int, n bigint);
EXPLAIN (COSTS OFF, VERBOSE)
SELECT * FROM match_recognize('sf_ev AS t MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH
  PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)') AS r(k int, n bigint);

-- results equal the local query's
SELECT * FROM sf_cmp('%s MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(A.ts) AS s, LAST(B.ts) AS e, count(*) AS n ONE ROW PER MATCH
  PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)', 'k int, s int, e int, n bigint');
SELECT * FROM sf_cmp('%s AS t MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES MATCH_NUMBER() AS m, CLASSIFIER() AS c, sum(v) AS sv ALL ROWS PER MATCH
  AFTER MATCH SKIP TO NEXT ROW PATTERN (A B* C) DEFINE A AS v < 5, B AS v > PREV(v), C AS v < PREV(v))',
  'k int, ts int, m bigint, c text, sv bigint, v int');
-- match_recognize.enable_remote_append off: the rows are fetched and
-- matched here (a Foreign Scan per partition), with the same result
SET match_recognize.enable_remote_append = off;
EXPLAIN (COSTS OFF)
SELECT * FROM match_recognize('sf_ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)')
  AS r(k int, n bigint);
SELECT * FROM sf_cmp('%s MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(A.ts) AS s, LAST(B.ts) AS e, count(*) AS n ONE ROW PER MATCH
  PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)', 'k int, s int, e int, n bigint');
RESET match_recognize.enable_remote_append;
-- pruning by a filter on k: one remote part
EXPLAIN (COSTS OFF)
SELECT * FROM match_recognize('sf_ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)')
  AS r(k int, n bigint) WHERE k IN (4, 7);
-- the filter also reaches the remote input (built-in operators and types)
EXPLAIN (COSTS OFF, VERBOSE)
SELECT * FROM match_recognize('sf_ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)')
  AS r(k int, n bigint) WHERE k IN (4, 7, 8) AND k > 1;
SELECT k, count(*), sum(n) FROM match_recognize('sf_ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)')
  AS r(k int, n bigint) WHERE k IN (4, 7, 8) AND k > 1 GROUP BY k ORDER BY k;
SELECT k, count(*), sum(n) FROM match_recognize('sf_all MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)')
  AS r(k int, n bigint) WHERE k IN (4, 7, 8) AND k > 1 GROUP BY k ORDER BY k;
SELECT k, count(*), sum(n) FROM match_recognize('sf_ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)')
  AS r(k int, n bigint) WHERE k IN (4, 7) GROUP BY k ORDER BY k;
SELECT k, count(*), sum(n) FROM match_recognize('sf_all MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)')
  AS r(k int, n bigint) WHERE k IN (4, 7) GROUP BY k ORDER BY k;

-- statement parameters travel as typed literals
PREPARE sf_q(int) AS SELECT count(*), sum(n) FROM match_recognize('sf_ev MATCH_RECOGNIZE
  (PARTITION BY k ORDER BY ts MEASURES count(*) AS n ONE ROW PER MATCH
   PATTERN (A B+) DEFINE A AS v < $1, B AS v > $1)', $1) AS r(k int, n bigint);
PREPARE sf_l(int) AS SELECT count(*), sum(n) FROM match_recognize('sf_all MATCH_RECOGNIZE
  (PARTITION BY k ORDER BY ts MEASURES count(*) AS n ONE ROW PER MATCH
   PATTERN (A B+) DEFINE A AS v < $1, B AS v > $1)', $1) AS r(k int, n bigint);
EXECUTE sf_q(3);
EXECUTE sf_l(3);
EXECUTE sf_q(6);
EXECUTE sf_l(6);
EXPLAIN (COSTS OFF, VERBOSE, ANALYZE, TIMING OFF, SUMMARY OFF) EXECUTE sf_q(6);

-- an early end (LIMIT) closes the remote cursors: the connections stay usable
BEGIN;
SELECT count(*) FROM (SELECT * FROM match_recognize('sf_ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)')
  AS r(k int, n bigint) LIMIT 3) x;
SELECT * FROM sf_cmp('%s MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)', 'k int, n bigint');
COMMIT;
-- small batches (postgres_fdw's fetch_size)
ALTER SERVER sf_s1 OPTIONS (ADD fetch_size '3');
SELECT * FROM sf_cmp('%s MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)', 'k int, n bigint');

-- a remote error comes back with its SQLSTATE and message
\set VERBOSITY sqlstate
SELECT count(*) FROM match_recognize('sf_ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v / (k - 4) < 3, B AS v > 3)')
  AS r(k int, n bigint);
\set VERBOSITY terse
SELECT count(*) FROM match_recognize('sf_ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v / (k - 4) < 3, B AS v > 3)')
  AS r(k int, n bigint);
\set VERBOSITY default
-- and the connections work afterwards
SELECT * FROM sf_cmp('%s MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)', 'k int, n bigint');

-- other nodes of the plan on the same servers (an ordinary foreign scan
-- rescanned per row, the node itself on both sides of a nested loop): no
-- command of ours is left in flight on their connections between rows
CREATE VIEW sf_v AS SELECT * FROM match_recognize('sf_ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(A.ts) AS s, count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)')
  AS r(k int, s int, n bigint);
CREATE VIEW sf_va AS SELECT * FROM match_recognize('sf_all MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(A.ts) AS s, count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)')
  AS r(k int, s int, n bigint);
SELECT count(*) FROM sf_v WHERE EXISTS (SELECT 1 FROM sf_ev_1 f WHERE f.ts = sf_v.s AND f.k = sf_v.k OFFSET 0);
SELECT count(*) FROM sf_va WHERE EXISTS (SELECT 1 FROM sf_ev_1 f WHERE f.ts = sf_va.s AND f.k = sf_va.k OFFSET 0);
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM sf_v x JOIN sf_v y USING (k, s);
SELECT count(*) FROM sf_v x JOIN sf_v y USING (k, s);
SELECT count(*) FROM sf_va x JOIN sf_va y USING (k, s);
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
DROP VIEW sf_v, sf_va;

-- a view made by match_recognize_create_view: its parts are replayed
SELECT match_recognize_create_view('sf_view', $$SELECT * FROM sf_ev MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts MEASURES FIRST(A.ts) AS s, LAST(B.ts) AS e, count(*) AS n
  ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)$$);
EXPLAIN (COSTS OFF) SELECT * FROM sf_view WHERE k IN (5, 6);
CREATE TEMP TABLE sf_view_want AS SELECT * FROM match_recognize('sf_all MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts MEASURES FIRST(A.ts) AS s, LAST(B.ts) AS e, count(*) AS n
  ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)') AS r(k int, s int, e int, n bigint);
SELECT (SELECT count(*) FROM sf_view) AS got, (SELECT count(*) FROM sf_view_want) AS want,
  (SELECT count(*) FROM (SELECT * FROM sf_view EXCEPT ALL SELECT * FROM sf_view_want) x) AS got_not_want,
  (SELECT count(*) FROM (SELECT * FROM sf_view_want EXCEPT ALL SELECT * FROM sf_view) x) AS want_not_got;
DROP VIEW sf_view;
DROP TABLE sf_view_want;

-- a local partition laid out differently (a dropped column, another
-- order): its input is mapped by column name
CREATE TABLE sf_evd (k int, ts int, v int) PARTITION BY LIST (k);
CREATE TABLE sf_evd_0 (junk int, v int, ts int, k int);
ALTER TABLE sf_evd_0 DROP COLUMN junk;
INSERT INTO sf_evd_0 SELECT v, ts, k FROM sf_ev_0;
ALTER TABLE sf_evd ATTACH PARTITION sf_evd_0 FOR VALUES IN (0, 3, 6, 9, 12);
CREATE FOREIGN TABLE sf_evd_1 PARTITION OF sf_evd FOR VALUES IN (1, 4, 7, 10)
  SERVER sf_s1 OPTIONS (table_name 'ev1');
CREATE TABLE sf_evd_all AS SELECT * FROM sf_evd;
CREATE FUNCTION sf_cmp_d(clause text, cols text, OUT got bigint, OUT want bigint,
                         OUT got_not_want bigint, OUT want_not_got bigint)
LANGUAGE plpgsql AS $$
DECLARE
  a text := format('SELECT * FROM match_recognize(%L) AS r(%s)', format(clause, 'sf_evd'), cols);
  b text := format('SELECT * FROM match_recognize(%L) AS r(%s)', format(clause, 'sf_evd_all'), cols);
BEGIN
  EXECUTE format('SELECT count(*) FROM (%s) x', a) INTO got;
  EXECUTE format('SELECT count(*) FROM (%s) x', b) INTO want;
  EXECUTE format('SELECT count(*) FROM (%s EXCEPT ALL %s) x', a, b) INTO got_not_want;
  EXECUTE format('SELECT count(*) FROM (%s EXCEPT ALL %s) x', b, a) INTO want_not_got;
END $$;
EXPLAIN (COSTS OFF, VERBOSE)
SELECT * FROM match_recognize('sf_evd MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ALL ROWS PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)')
  AS r(k int, ts int, n bigint, v int);
SELECT * FROM sf_cmp_d('%s MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ALL ROWS PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)',
  'k int, ts int, n bigint, v int');
DROP FUNCTION sf_cmp_d(text, text);
DROP TABLE sf_evd, sf_evd_all;

-- PARTITION BY without the partition key: today's plan, rows fetched
EXPLAIN (COSTS OFF)
SELECT * FROM match_recognize('sf_ev MATCH_RECOGNIZE (ORDER BY k, ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)') AS r(n bigint);
SELECT * FROM sf_cmp('%s MATCH_RECOGNIZE (ORDER BY k, ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)', 'n bigint');

-- only what postgres_fdw itself would push down is sent (immutable, built
-- in or of an extension the server declares): anything else is evaluated
-- here over the fetched rows.  The remote session is not ours: its
-- application_name is postgres_fdw's, and its role the user mapping's.
SET application_name = 'sf_here';
EXPLAIN (COSTS OFF)
SELECT * FROM match_recognize('sf_ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES current_setting(''application_name'') AS app, count(*) AS n ONE ROW PER MATCH
  PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)') AS r(k int, app text, n bigint);
SELECT app, count(*) FROM match_recognize('sf_ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES current_setting(''application_name'') AS app, count(*) AS n ONE ROW PER MATCH
  PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)') AS r(k int, app text, n bigint) GROUP BY app;
RESET application_name;
-- volatile (in DEFINE), a server file, a SQL value function, a user's
-- immutable function, a literal read under DateStyle: never sent
CREATE FUNCTION sf_twice(int) RETURNS int IMMUTABLE LANGUAGE sql AS 'SELECT $1 * 2';
SELECT m, (SELECT count(*) FROM (
    SELECT * FROM match_recognize(format('sf_ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES %s AS x ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS %s, B AS v > 3)', m, d))
      AS r(k int, x text)) q) AS rows,
  (SELECT string_agg(trim(l), ' / ') FROM sf_plan(format('sf_ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES %s AS x ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS %s, B AS v > 3)', m, d)) l
    WHERE l ~ 'MatchRecognize|Foreign Scan') AS plan
FROM (VALUES ('count(*)::text', 'v < 3'),
             ('count(*)::text', 'v < 3 AND random() >= 0'),
             ('md5(pg_catalog.pg_read_file(''PG_VERSION''))', 'v < 3'),
             ('CURRENT_USER::text', 'v < 3'),
             ('public.sf_twice(count(*)::int)::text', 'v < 3'),
             ('(LAST(ts) - FIRST(ts))::text', 'v < 3'),
             ('count(*)::text', 'v < 3 AND date ''01/02/2026'' < date ''2026-03-01''')) AS c(m, d);
DROP FUNCTION sf_twice(int);

-- a filter on the partition key reaches the remote input only with
-- immutable operators (date >= timestamptz is stable: it reads TimeZone),
-- its constants written in ISO whatever our DateStyle
CREATE TABLE sf_evt (d date, ts int, v int) PARTITION BY RANGE (d);
CREATE FOREIGN TABLE sf_evt_1 PARTITION OF sf_evt FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')
  SERVER sf_s1 OPTIONS (table_name 'evt');
SELECT l AS remote_sql FROM (VALUES ('date ''2026-01-02'''), ('timestamptz ''2026-01-02 00:00+00''')) AS c(b),
  LATERAL (SELECT trim(x) AS l FROM sf_plan_v(format('SELECT * FROM match_recognize(%L) AS r(d date, n bigint) WHERE d >= %s',
    'sf_evt MATCH_RECOGNIZE (PARTITION BY d ORDER BY ts MEASURES count(*) AS n ONE ROW PER MATCH
     PATTERN (A B+) DEFINE A AS v < 2, B AS v > 2)', b)) x) q
WHERE l LIKE 'Remote SQL:%';
DROP TABLE sf_evt;

-- a server without the extension
CREATE TABLE sf_ev3 (k int, ts int, v int) PARTITION BY LIST (k);
CREATE FOREIGN TABLE sf_ev3_1 PARTITION OF sf_ev3 FOR VALUES IN (1) SERVER sf_s3 OPTIONS (table_name 'ev3');
SELECT count(*) FROM match_recognize('sf_ev3 MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)') AS r(k int, n bigint);

DROP TABLE sf_ev3, sf_ev, sf_all;
DROP FUNCTION sf_cmp(text, text);
DROP FUNCTION sf_plan(text);
DROP FUNCTION sf_plan_v(text);
DEALLOCATE sf_q;
DEALLOCATE sf_l;
SELECT postgres_fdw_disconnect_all();
SET client_min_messages = warning;
DROP EXTENSION postgres_fdw CASCADE;
DROP DATABASE mr_fdw_d1 WITH (FORCE);
DROP DATABASE mr_fdw_d2 WITH (FORCE);
DROP DATABASE mr_fdw_d3 WITH (FORCE);
RESET client_min_messages;
DO $$ BEGIN
  IF NOT (SELECT had FROM sf_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;

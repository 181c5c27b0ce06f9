--
-- Statement rewriting: match_recognize_sql() and match_recognize_create_view()
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY default

CREATE TABLE rw_ticker (symbol text, ts integer, price numeric);
-- A: 10 9 8 9 11 (a V from ts 1 to 5), B: 20 18 19 21 21 (a V from ts 1 to 4)
INSERT INTO rw_ticker VALUES
  ('A', 1, 10), ('A', 2, 9), ('A', 3, 8), ('A', 4, 9), ('A', 5, 11),
  ('B', 1, 20), ('B', 2, 18), ('B', 3, 19), ('B', 4, 21), ('B', 5, 21);
CREATE TABLE rw_symbols (symbol text, name text);
INSERT INTO rw_symbols VALUES ('A', 'Acme'), ('B', 'Bolt');

-- Each statement is rewritten and then run with \gexec: psql echoes the
-- rewritten text, then its result.
-- a simple query: the FROM item becomes a call with a column definition list
SELECT match_recognize_sql('SELECT * FROM rw_ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES FIRST(ts) AS start_ts, LAST(down.ts) AS bottom_ts, LAST(ts) AS end_ts PATTERN (strt down+ up+) DEFINE down AS price < PREV(price), up AS price > PREV(price)) AS m ORDER BY symbol') \gexec
-- no alias, a schema-qualified input
SELECT match_recognize_sql('SELECT * FROM public.rw_ticker MATCH_RECOGNIZE (ORDER BY symbol, ts MEASURES count(*) AS n PATTERN (a+) DEFINE a AS symbol = ''B'')') \gexec
-- a column list renaming the result columns
SELECT match_recognize_sql('SELECT * FROM rw_ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES count(*) AS n PATTERN (a+) DEFINE a AS true) AS m(sym, "Rows") ORDER BY sym') \gexec
-- two occurrences in one FROM list
SELECT match_recognize_sql('SELECT d.symbol, d.n AS downs, u.n AS ups FROM rw_ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES count(*) AS n PATTERN (dn+) DEFINE dn AS price < PREV(price)) d, rw_ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES count(*) AS n PATTERN (up+) DEFINE up AS price > PREV(price)) u WHERE d.symbol = u.symbol ORDER BY 1') \gexec
-- in a join
SELECT match_recognize_sql('SELECT s.name, m.start_ts, m.end_ts FROM rw_symbols s JOIN rw_ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES FIRST(ts) AS start_ts, LAST(ts) AS end_ts PATTERN (strt down+ up+) DEFINE down AS price < PREV(price), up AS price > PREV(price)) AS m ON m.symbol = s.symbol ORDER BY s.name') \gexec
-- an input naming a CTE: the CTE is inlined (the function cannot see the WITH)
SELECT match_recognize_sql('WITH a AS (SELECT ts, price FROM rw_ticker WHERE symbol = ''A'') SELECT * FROM a MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS start_ts, LAST(down.ts) AS bottom_ts, LAST(ts) AS end_ts PATTERN (strt down+ up+) DEFINE down AS price < PREV(price), up AS price > PREV(price)) AS m') \gexec
-- ... together with the CTEs it depends on
SELECT match_recognize_sql('WITH t AS (SELECT * FROM rw_ticker), b(s, t, p) AS (SELECT * FROM t WHERE symbol = ''B'') SELECT * FROM b MATCH_RECOGNIZE (ORDER BY t MEASURES FIRST(t) AS start_ts, LAST(t) AS end_ts PATTERN (strt down+ up+) DEFINE down AS p < PREV(p), up AS p > PREV(p)) AS m') \gexec
-- an input subquery that reads a CTE
SELECT match_recognize_sql('WITH a AS (SELECT * FROM rw_ticker WHERE symbol = ''A'') SELECT * FROM (SELECT ts, price FROM a) AS s MATCH_RECOGNIZE (ORDER BY ts MEASURES count(*) AS n, max(price) AS top PATTERN (x+) DEFINE x AS true) AS m') \gexec
-- a CTE whose body uses MATCH_RECOGNIZE, read by two other occurrences
SELECT match_recognize_sql('WITH v AS (SELECT * FROM rw_ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES LAST(ts) AS end_ts, LAST(price) AS end_price PATTERN (strt down+ up+) DEFINE down AS price < PREV(price), up AS price > PREV(price)) AS m) SELECT * FROM v MATCH_RECOGNIZE (ORDER BY end_ts MEASURES count(*) AS shapes PATTERN (x+) DEFINE x AS true) AS a, v MATCH_RECOGNIZE (ORDER BY end_ts MEASURES max(end_price) AS best PATTERN (x+) DEFINE x AS true) AS b') \gexec
-- nested: an occurrence inside the input subquery of another
SELECT match_recognize_sql('SELECT * FROM (SELECT * FROM rw_ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES FIRST(ts) AS start_ts, LAST(price) AS end_price PATTERN (strt down+ up+) DEFINE down AS price < PREV(price), up AS price > PREV(price)) AS v) AS s MATCH_RECOGNIZE (ORDER BY symbol MEASURES count(*) AS shapes, max(end_price) AS best PATTERN (x+) DEFINE x AS true) AS n') \gexec

-- comments, literals and quoted identifiers are left alone
\pset format unaligned
\pset tuples_only on
SELECT match_recognize_sql('SELECT ''x MATCH_RECOGNIZE (a)'' AS s, $$MATCH_RECOGNIZE ($$ AS d /* y MATCH_RECOGNIZE (b) */ FROM rw_symbols AS "match_recognize" -- z MATCH_RECOGNIZE (c)');
\pset format aligned
\pset tuples_only off
SELECT match_recognize_sql('SELECT 1') = 'SELECT 1' AS unchanged;
-- a rewritten statement is rewritten to itself
SELECT match_recognize_sql(match_recognize_sql('SELECT * FROM rw_ticker MATCH_RECOGNIZE (ORDER BY ts MEASURES count(*) AS n PATTERN (a+) DEFINE a AS true) m')) = match_recognize_sql('SELECT * FROM rw_ticker MATCH_RECOGNIZE (ORDER BY ts MEASURES count(*) AS n PATTERN (a+) DEFINE a AS true) m') AS idempotent;
SELECT match_recognize_sql(NULL) IS NULL AS strict;

-- views
SELECT match_recognize_create_view('rw_v_shapes', 'SELECT * FROM rw_ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES FIRST(ts) AS start_ts, LAST(down.ts) AS bottom_ts, LAST(ts) AS end_ts, LAST(price) - FIRST(price) AS gain PATTERN (strt down+ up+) DEFINE down AS price < PREV(price), up AS price > PREV(price)) AS m;');
SELECT * FROM rw_v_shapes WHERE bottom_ts > 2 ORDER BY symbol;
SELECT symbol, gain FROM rw_v_shapes ORDER BY symbol;
CREATE SCHEMA rw_schema;
SELECT match_recognize_create_view('rw_schema."Odd Name"', 'SELECT * FROM rw_ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES count(*) AS n PATTERN (up+) DEFINE up AS price > PREV(price)) AS m  ;  ');
SELECT match_recognize_create_view('public.rw_v_plain', 'SELECT symbol, count(*) FROM rw_ticker GROUP BY symbol');
SELECT * FROM rw_schema."Odd Name" ORDER BY symbol;
SELECT * FROM public.rw_v_plain ORDER BY symbol;
SELECT match_recognize_create_view('rw_v_bad', 'SELECT 1; SELECT 2');

-- errors point into the statement as the user wrote it
SELECT match_recognize_sql('SELECT * FROM rw_ticker MATCH_RECOGNIZE (ORDER BY ts PATTERN (a b+*) DEFINE b AS price > PREV(price)) AS m');
SELECT match_recognize_sql('SELECT * FROM rw_ticker MATCH_RECOGNIZE (ORDER BY ts PATTERN (a b+) DEFINE b AS prize > PREV(prize)) AS m');
SELECT match_recognize_sql('SELECT * FROM MATCH_RECOGNIZE (ORDER BY ts PATTERN (a) DEFINE a AS true)');
SELECT match_recognize_sql('SELECT * FROM rw_ticker MATCH_RECOGNIZE (ORDER BY ts PATTERN (a) DEFINE a AS (true) m');
SELECT match_recognize_sql('SELECT * FROM rw_ticker MATCH_RECOGNIZE (ORDER BY ts MEASURES count(*) AS n PATTERN (a) DEFINE a AS true) AS m(x, y)');
SELECT match_recognize_sql('SELECT * FROM rw_ticker MATCH_RECOGNIZE (ORDER BY ts PATTERN (a) DEFINE a AS true) AS m');
SELECT match_recognize_sql('SELECT * FROM rw_ticker MATCH_RECOGNIZE (ORDER BY ts MEASURES count(*) AS n PATTERN (a) DEFINE a AS true) AS m MATCH_RECOGNIZE (PATTERN (b) DEFINE b AS true) AS n');
SELECT match_recognize_create_view('rw_v_bad', 'SELECT * FROM rw_ticker MATCH_RECOGNIZE (ORDER BY ts ONE ROW PER MATCHES PATTERN (a b+) DEFINE b AS true) AS m');
-- a statement that is not a literal: the error shows the text itself
CREATE TABLE rw_queries (q text);
INSERT INTO rw_queries VALUES ('SELECT * FROM rw_ticker MATCH_RECOGNIZE (ORDER BY ts PATTERN (a b+*) DEFINE b AS true) AS m');
SELECT match_recognize_sql(q) FROM rw_queries;

DROP SCHEMA rw_schema CASCADE;
DROP VIEW rw_v_shapes, rw_v_plain;
DROP TABLE rw_ticker, rw_symbols, rw_queries;

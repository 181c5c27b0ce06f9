--
-- Lowering of DEFINE / MEASURES expressions and of the PARTITION BY /
-- ORDER BY keys: decorations on our functions, quoted names, qualified
-- keys, duplicate input columns, label consistency, messages and carets.
--
-- leave the database as found: drop the extension at the end if we create it
SET client_min_messages = warning;
CREATE TEMP TABLE bx_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY default
\set SHOW_CONTEXT never

CREATE TABLE bx (id int, v int, w text);
INSERT INTO bx VALUES (1, 5, 'a'), (2, 3, 'b'), (3, 4, 'c'), (4, 6, 'd'), (5, 2, 'e');

-- bx_run(query): run a statement written with MATCH_RECOGNIZE, rows as text
CREATE FUNCTION bx_run(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  FOR r IN EXECUTE match_recognize_sql(q) LOOP
    RETURN NEXT r::text;
  END LOOP;
END $$;
-- bx_err(measure): the SQLSTATE and message of a MEASURES expression's error
CREATE FUNCTION bx_err(m text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM bx_run('SELECT * FROM bx MATCH_RECOGNIZE (ORDER BY id MEASURES ' || m
                 || ' AS x PATTERN (A B+) DEFINE B AS true)');
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- 1. Decorations on navigation, CLASSIFIER and MATCH_NUMBER are refused,
-- naming the decoration, with the caret on it
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES PREV(v) FILTER (WHERE false) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES LAST(v ORDER BY v) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES LAST(DISTINCT v) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES LAST(v) OVER () AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES FIRST(v) WITHIN GROUP (ORDER BY v) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES PREV(VARIADIC ARRAY[v]) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int[]);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES CLASSIFIER() OVER () AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x text);
-- named arguments (an internal error before)
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES prev(x => v) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS x PATTERN (A B) DEFINE B AS last(x => v) > 0) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES NEXT(v, n => 1) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
-- in DEFINE too, and on FIRST/LAST inside PREV/NEXT
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS x PATTERN (A B) DEFINE B AS PREV(DISTINCT v) > 0) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES NEXT(FIRST(v) FILTER (WHERE v > 0), 1) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
-- every function we lower against every decoration
SELECT e, bx_err(e) AS error
FROM (SELECT kw || f || '(' || pre || arg || inside || ')' || post AS e, f, d
      FROM (VALUES ('', 'PREV', 'v'), ('', 'NEXT', 'v'), ('', 'FIRST', 'v'), ('', 'LAST', 'v'),
                   ('RUNNING ', 'LAST', 'v'), ('FINAL ', 'FIRST', 'v'), ('', 'LAG', 'v'),
                   ('', 'LEAD', 'v'), ('', 'CLASSIFIER', 'A'), ('', 'MATCH_NUMBER', '1'),
                   ('', 'MATCH_SEQUENCE_NUMBER', '1')) AS fs(kw, f, arg),
           (VALUES ('DISTINCT', 'DISTINCT ', '', ''), ('ORDER BY', '', ' ORDER BY 1', ''),
                   ('FILTER', '', '', ' FILTER (WHERE true)'),
                   ('WITHIN GROUP', '', '', ' WITHIN GROUP (ORDER BY 1)'),
                   ('OVER', '', '', ' OVER ()'), ('VARIADIC', 'VARIADIC ', '', ''),
                   ('named', 'a => ', '', '')) AS ds(d, pre, inside, post)) x
ORDER BY f, d, e;
-- (*) on our functions
SELECT bx_err('PREV(*)'), bx_err('CLASSIFIER(*)'), bx_err('MATCH_NUMBER(*)');
-- aggregates: OVER, DISTINCT, ORDER BY, WITHIN GROUP stay refused, at the word
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) OVER () AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES sum(DISTINCT v) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT bx_err('sum(v ORDER BY v)'), bx_err('percentile_disc(0.5) WITHIN GROUP (ORDER BY v)'),
       bx_err('sum(x => v)');
-- FILTER stays an aggregate's row condition
SELECT bx_run($$ SELECT * FROM bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) FILTER (WHERE v > 3) AS n, sum(v) FILTER (WHERE CLASSIFIER() = 'B') AS s
  PATTERN (A B+) DEFINE B AS true) AS m $$);
-- other raw expression forms are lowered too
SELECT bx_run($$ SELECT * FROM bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES xmlelement(name e, xmlattributes(FIRST(v) AS f), LAST(w))::text AS x
  PATTERN (A B+) DEFINE B AS true) AS m $$);

-- 2. A quoted or qualified name is an ordinary function call, not ours
CREATE FUNCTION "PREV"(int) RETURNS int LANGUAGE sql AS 'SELECT $1 * 100';
CREATE FUNCTION prev(int) RETURNS int LANGUAGE sql AS 'SELECT $1 * 1000';
CREATE FUNCTION "CLASSIFIER"() RETURNS text LANGUAGE sql AS $$SELECT 'mine'$$;
SELECT bx_run($$ SELECT * FROM bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES "PREV"(v) AS a, "prev"(v) AS b, public.prev(v) AS c, PREV(v) AS d,
           "CLASSIFIER"() AS e, CLASSIFIER() AS f
  PATTERN (A B) DEFINE B AS "PREV"(B.v) < 500) AS m $$);
DROP FUNCTION "PREV"(int);
DROP FUNCTION prev(int);
DROP FUNCTION "CLASSIFIER"();
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES "LAST"(v) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES U&"PREV"(v) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES pg_catalog.last(v) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT bx_err('"MATCH_NUMBER"()'), bx_err('"lag"(v)'), bx_err('"CLASSIFIER"'),
       bx_err('PREV("LAST"(v), 1)');
-- RUNNING / FINAL only before our functions and aggregates
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES FINAL "LAST"(v) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS x PATTERN (A B) DEFINE B AS FINAL LAST(v) > 0) $$) AS r(x int);

-- 3. PARTITION BY / ORDER BY columns may be qualified by the input's name
SELECT bx_run($$ SELECT * FROM bx AS tk MATCH_RECOGNIZE (PARTITION BY tk.w ORDER BY tk.id
  MEASURES FIRST(v) AS f PATTERN (A) DEFINE A AS true) AS m ORDER BY w $$);
SELECT bx_run($$ SELECT * FROM public.bx MATCH_RECOGNIZE (ORDER BY public.bx.id DESC
  MEASURES FIRST(v) AS f, LAST(v) AS l PATTERN (A+) DEFINE A AS true) AS m $$);
SELECT bx_run($$ SELECT * FROM (SELECT id % 2 AS k, * FROM bx) s MATCH_RECOGNIZE (PARTITION BY s.k
  ORDER BY s.id MEASURES count(*) AS n PATTERN (A+) DEFINE A AS true) AS m ORDER BY k $$);
-- a name that is not the input's, an alias we made up
SELECT * FROM match_recognize($$ bx AS tk MATCH_RECOGNIZE (PARTITION BY bx.w ORDER BY id
  MEASURES FIRST(v) AS f PATTERN (A) DEFINE A AS true) $$) AS r(w text, f int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY other.bx.id
  MEASURES FIRST(v) AS f PATTERN (A) DEFINE A AS true) $$) AS r(f int);
SELECT * FROM match_recognize($$ (SELECT * FROM bx) MATCH_RECOGNIZE (ORDER BY match_recognize_input.id
  MEASURES FIRST(v) AS f PATTERN (A) DEFINE A AS true) $$) AS r(f int);
-- in DEFINE and MEASURES a qualifier is a pattern variable, as in Trino
SELECT * FROM match_recognize($$ bx AS tk MATCH_RECOGNIZE (ORDER BY tk.id
  MEASURES count(*) AS n PATTERN (A) DEFINE A AS tk.v > 0) $$) AS r(n int);
SELECT * FROM match_recognize($$ bx AS tk MATCH_RECOGNIZE (ORDER BY tk.id
  MEASURES count(tk.*) AS n PATTERN (A) DEFINE A AS true) $$) AS r(n int);

-- 4. Duplicate input column names: ambiguous wherever used, fine unused
SELECT bx_run($$ SELECT * FROM bx AS tk(x, "X", y) MATCH_RECOGNIZE (ORDER BY x
  MEASURES max("X") AS mx PATTERN (A+) DEFINE A AS true) AS m $$);
SELECT * FROM match_recognize($$ bx AS tk(x, X, y) MATCH_RECOGNIZE (ORDER BY y
  MEASURES count(*) AS n PATTERN (A+) DEFINE A AS true) $$) AS r(n bigint);
SELECT * FROM match_recognize($$ bx AS tk(x, X, y) MATCH_RECOGNIZE (ORDER BY x
  MEASURES count(*) AS n PATTERN (A+) DEFINE A AS true) $$) AS r(n bigint);
SELECT * FROM match_recognize($$ bx AS tk(x, X, y) MATCH_RECOGNIZE (ORDER BY y
  MEASURES count(*) AS n PATTERN (A+) DEFINE A AS A.x > 0) $$) AS r(n int);
SELECT * FROM match_recognize($$ bx AS tk(x, X, y) MATCH_RECOGNIZE (ORDER BY y
  MEASURES LAST(x) AS n PATTERN (A+) DEFINE A AS true) $$) AS r(n int);
SELECT * FROM match_recognize($$ (SELECT id AS x, v AS x, w FROM bx) s MATCH_RECOGNIZE (PARTITION BY s.x
  MEASURES count(*) AS n PATTERN (A+) DEFINE A AS true) $$) AS r(x int, n int);

-- 5. Label consistency covers CLASSIFIER(), as in Trino: CLASSIFIER()
-- without an argument is of every row, like an unqualified column
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES LAST(A.w || CLASSIFIER()) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x text);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES LAST(w || CLASSIFIER(B)) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x text);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES max(CLASSIFIER(A) || CLASSIFIER()) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x text);
SELECT bx_err('FIRST(CLASSIFIER(B) || B.w)'), bx_err('count(A.*) FILTER (WHERE CLASSIFIER(B) = ''B'')');
SELECT bx_run($$ SELECT * FROM bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES LAST(w || CLASSIFIER()) AS a, LAST(B.w || CLASSIFIER(B)) AS b,
           FIRST(CLASSIFIER(U) || U.v) AS c, max(w || CLASSIFIER()) AS d
  PATTERN (A B+) SUBSET U = (A, B) DEFINE B AS true) AS m $$);

-- 6. Messages
-- agg(A.*) keeps A.* in its message; only count takes it
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES min(A.*) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT bx_err('LAST(A.*)'), bx_err('sum(A.*, 1)');
-- FIRST / LAST inside PREV / NEXT, but not as the whole argument
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES PREV(LAST(v, 2) + 5) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT bx_err('LAST(PREV(v))'), bx_err('PREV(NEXT(v))'), bx_err('PREV(LAST(FIRST(v)))');
-- the table-name hint only where a table name may have been meant
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES CLASSIFIER("$") AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x text);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(X.*) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES X.v AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES CLASSIFIER(bx) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x text);
-- errors of the lowering point at their token when the clause is a
-- constant of the statement (they pointed further right before)
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES 1 + Z.v AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS x PATTERN (A B) DEFINE B AS v) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES LAST(A.v + B.v) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id + 1
  MEASURES count(*) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);
SELECT * FROM match_recognize($$ bx MATCH_RECOGNIZE (ORDER BY id
  MEASURES RUNNING abs(v) AS x PATTERN (A B) DEFINE B AS true) $$) AS r(x int);

DROP FUNCTION bx_err(text);
DROP FUNCTION bx_run(text);
DROP TABLE bx;
DO $$ BEGIN
  IF NOT (SELECT had FROM bx_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;

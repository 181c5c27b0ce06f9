--
-- A statement written with MATCH_RECOGNIZE directly fails in PostgreSQL's
-- parser; once the library is loaded in the session (here by an earlier
-- call; preloaded, from the start) the syntax error has a hint.  Only a
-- syntax error within MATCH_RECOGNIZE ( ... ) written after a table gets
-- it: not our function match_recognize(...), not the word in comments,
-- literals or quoted identifiers, not another error.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
CREATE TABLE rh_t (id int, v int);
\c
SELECT match_recognize_sql('SELECT 1');
\set VERBOSITY default

-- the hint
SELECT * FROM rh_t MATCH_RECOGNIZE (PARTITION BY v ORDER BY id PATTERN (a) DEFINE a AS true) m;
SELECT * FROM rh_t match_recognize (ORDER BY id PATTERN (a));
SELECT * FROM rh_t AS t MATCH_RECOGNIZE (ORDER BY id PATTERN (a));
SELECT * FROM (SELECT * FROM rh_t) s MATCH_RECOGNIZE (MEASURES count(*) AS c PATTERN (a)) m;
SELECT * FROM "rh_t" MATCH_RECOGNIZE (MEASURES count(*) AS c PATTERN (a)) m;
SELECT * FROM public.rh_t MATCH_RECOGNIZE (ORDER BY id PATTERN (a));
SELECT 'é', 'ü' FROM rh_t MATCH_RECOGNIZE (ORDER BY id PATTERN (a));
SELECT * FROM rh_t MATCH_RECOGNIZE (PATTERN (a) DEFINE a AS v > 0 /* ) */ AND id IN (SELECT 1)) m, rh_t x;
WITH w AS (SELECT * FROM rh_t) SELECT * FROM w MATCH_RECOGNIZE (ORDER BY id PATTERN (a)) JOIN rh_t USING (id);
-- in a statement PL/pgSQL runs (the hint goes with the QUERY's text)
DO $$ BEGIN EXECUTE 'SELECT * FROM rh_t MATCH_RECOGNIZE (ORDER BY id PATTERN (a))'; END $$;

-- no hint
SELECT * FROM match_recognize('x') AS r(a int) WHERE;
SELECT * FROM match_recognize('x' 'y') AS r(a int);
SELECT * FROM rh_t, match_recognize('x' 'y') AS r(a int);
SELECT * FROM public.match_recognize('x' 'y') AS r(a int);
SELECT * FROM rh_t JOIN match_recognize('x' 'y') AS r(a int) ON true;
SELECT 'rh_t MATCH_RECOGNIZE (' FROM;
SELECT E'\' rh_t MATCH_RECOGNIZE (' FROM;
SELECT 1 /* rh_t MATCH_RECOGNIZE ( /* nested */ */ FROM WHERE;
SELECT 1 -- rh_t MATCH_RECOGNIZE (
  FROM WHERE;
SELECT $$ rh_t MATCH_RECOGNIZE ( $$ FROM WHERE;
SELECT $q$ rh_t MATCH_RECOGNIZE ( $q$ FROM WHERE;
SELECT * FROM rh_t "MATCH_RECOGNIZE" (ORDER BY id);
SELECT * FROM rh_t MATCH_RECOGNIZE_X (ORDER BY id);
SELECT * FROM WHERE rh_t MATCH_RECOGNIZE (ORDER BY id);
SELECT * FROM rh_t MATCH_RECOGNIZE (a) WHERE;
SELECT * FROM rh_t MATCH_RECOGNIZE (a) m WHERE m.a = (ORDER BY 1);
-- the clause's own syntax errors (ours, 42601 too) need no such hint
SELECT match_recognize_sql($$SELECT * FROM rh_t MATCH_RECOGNIZE (ORDER BY id PATTERN (a b+*))$$);
SELECT * FROM match_recognize('rh_t MATCH_RECOGNIZE (ORDER BY id PATTERN (a b+*))') AS m(x int);
-- errors that are not syntax errors
SELECT * FROM rh_t MATCH_RECOGNIZE (a, b, c);
SELECT * FROM rh_t MATCH_RECOGNIZE (a) WHERE MATCH_RECOGNIZE.a = 1 AND v = 'x';
-- the word as an alias is fine where PostgreSQL accepts it
SELECT count(*) FROM rh_t MATCH_RECOGNIZE (a, b);

DROP TABLE rh_t;

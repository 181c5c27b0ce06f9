--
-- Plans of match_recognize(): the clause is bound once, when planned; the
-- MatchRecognize node replays what the planner bound instead of resolving
-- names again, everything the clause uses is a plan dependency, and the
-- column definition list is checked by name and type, in one place.
--
SET client_min_messages = warning;
CREATE TEMP TABLE bp_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;

CREATE TABLE bp_t (id int, v int);
INSERT INTO bp_t SELECT g, g % 3 FROM generate_series(1, 9) g;

-- a cached plan whose MEASURES call g(): g is a dependency of the plan
CREATE FUNCTION bp_g() RETURNS text LANGUAGE sql AS $$ SELECT 'one' $$;
PREPARE bp_p AS SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES bp_g() AS m, last(id) AS l PATTERN (a) DEFINE a AS v = 2) $$)
  AS r(m text, l int);
EXECUTE bp_p;
-- the same function again under a new OID: replanned, the new one runs
DROP FUNCTION bp_g();
CREATE FUNCTION bp_g() RETURNS text LANGUAGE sql AS $$ SELECT 'two' $$;
EXECUTE bp_p;
-- another return type: replanned, and the column definition list no longer
-- fits (this crashed the server when the node compiled the text again)
DROP FUNCTION bp_g();
CREATE FUNCTION bp_g() RETURNS int LANGUAGE sql AS $$ SELECT 42 $$;
\set VERBOSITY default
EXECUTE bp_p;
SET match_recognize.enable_custom_scan = off;
EXECUTE bp_p;
RESET match_recognize.enable_custom_scan;
-- ... and the other way round (this returned pointers as integers)
PREPARE bp_q AS SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES bp_g() AS m PATTERN (a) DEFINE a AS v = 2) $$) AS r(m int);
EXECUTE bp_q;
DROP FUNCTION bp_g();
CREATE FUNCTION bp_g() RETURNS text LANGUAGE sql AS $$ SELECT 'three' $$;
EXECUTE bp_q;
-- a generic plan notices too
SET plan_cache_mode = force_generic_plan;
PREPARE bp_gen AS SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES bp_g() AS m PATTERN (a) DEFINE a AS v = 2) $$) AS r(m text);
EXECUTE bp_gen;
DROP FUNCTION bp_g();
CREATE FUNCTION bp_g() RETURNS int LANGUAGE sql AS $$ SELECT 7 $$;
EXECUTE bp_gen;
RESET plan_cache_mode;
DEALLOCATE ALL;
DROP FUNCTION bp_g();

-- a type used in the clause: dropped and made again, the plan follows
CREATE TYPE bp_mood AS ENUM ('sad', 'happy');
PREPARE bp_ty AS SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES 'happy'::bp_mood::text AS m PATTERN (a) DEFINE a AS v = 2) $$)
  AS r(m text);
EXECUTE bp_ty;
DROP TYPE bp_mood;
CREATE TYPE bp_mood AS ENUM ('happy');
EXECUTE bp_ty;
DEALLOCATE bp_ty;
DROP TYPE bp_mood;

-- a table read by a subquery in DEFINE, and an operator of the clause
CREATE TABLE bp_lim (x int);
INSERT INTO bp_lim VALUES (1);
CREATE FUNCTION bp_eq(int, int) RETURNS bool LANGUAGE sql AS $$ SELECT $1 = $2 $$;
CREATE OPERATOR === (LEFTARG = int, RIGHTARG = int, FUNCTION = bp_eq);
PREPARE bp_sub AS SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES last(id) AS l PATTERN (a) DEFINE a AS v === (SELECT max(x) FROM bp_lim)) $$)
  AS r(l int);
EXECUTE bp_sub;
DROP TABLE bp_lim;
CREATE TABLE bp_lim (x int);
INSERT INTO bp_lim VALUES (2);
EXECUTE bp_sub;
DROP OPERATOR === (int, int);
CREATE FUNCTION bp_ne(int, int) RETURNS bool LANGUAGE sql AS $$ SELECT $1 <> $2 $$;
CREATE OPERATOR === (LEFTARG = int, RIGHTARG = int, FUNCTION = bp_ne);
EXECUTE bp_sub;
DEALLOCATE bp_sub;
DROP OPERATOR === (int, int);
DROP FUNCTION bp_eq(int, int), bp_ne(int, int);
DROP TABLE bp_lim;

-- a subquery in DEFINE reads a view, and a table with row security, as the
-- statement would (it is rewritten before it is planned)
CREATE TABLE bp_rls (x int);
INSERT INTO bp_rls VALUES (1), (2);
ALTER TABLE bp_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY bp_one ON bp_rls USING (x = 1);
CREATE TABLE bp_plain (x int);
INSERT INTO bp_plain VALUES (0);
CREATE VIEW bp_plain_v AS SELECT x FROM bp_plain;
CREATE ROLE regress_bp_user;
GRANT SELECT ON bp_t, bp_rls, bp_plain_v TO regress_bp_user;
SET ROLE regress_bp_user;
SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES last(id) AS l PATTERN (a) DEFINE a AS v = (SELECT max(x) FROM bp_rls)) $$)
  AS r(l int);
SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES last(id) AS l PATTERN (a) DEFINE a AS v = (SELECT max(x) FROM bp_plain_v)) $$)
  AS r(l int);
SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES last(id) AS l PATTERN (a) DEFINE a AS v = (SELECT max(x) FROM bp_plain)) $$)
  AS r(l int);
RESET ROLE;
SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES last(id) AS l PATTERN (a) DEFINE a AS v = (SELECT max(x) FROM bp_rls)) $$)
  AS r(l int);
DROP VIEW bp_plain_v;
DROP TABLE bp_rls, bp_plain;
REVOKE ALL ON bp_t FROM regress_bp_user;
DROP ROLE regress_bp_user;

-- the column definition list is checked by name and type, in order, with
-- the same error for the node and for the function
SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES first(id) AS a, last(id) AS b PATTERN (x y) DEFINE y AS true) $$)
  AS r(a int, b int) LIMIT 1;
SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES first(id) AS a, last(id) AS b PATTERN (x y) DEFINE y AS true) $$)
  AS r(b int, a int);
SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES first(id) AS a, last(id) AS b PATTERN (x y) DEFINE y AS true) $$)
  AS r(a int, b bigint);
SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES first(id) AS a PATTERN (x y) DEFINE y AS true) $$)
  AS r(a int, b int);
SET match_recognize.enable_custom_scan = off;
SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES first(id) AS a, last(id) AS b PATTERN (x y) DEFINE y AS true) $$)
  AS r(b int, a int);
RESET match_recognize.enable_custom_scan;
-- a name the result repeats may be declared under any name (a column
-- definition list cannot repeat one); its type is still checked
SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id, id DESC MEASURES count(*) AS n ALL ROWS PER MATCH PATTERN (x) DEFINE x AS id < 3) $$)
  AS r(id int, id2 int, n bigint, v int);
SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id, id DESC MEASURES count(*) AS n ALL ROWS PER MATCH PATTERN (x) DEFINE x AS id < 3) $$)
  AS r(id int, id2 text, n bigint, v int);
-- match_recognize_sql writes the query's names, and renames in a subquery
SELECT match_recognize_sql($$ SELECT * FROM bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES first(id) AS a, last(id) AS b PATTERN (x y) DEFINE y AS true) AS r(b, a) $$);

-- EXPLAIN of a prepared statement runs the node's replay too
PREPARE bp_x AS SELECT * FROM match_recognize($$ bp_t MATCH_RECOGNIZE (
  ORDER BY id MEASURES last(id) AS l PATTERN (a b) DEFINE b AS v > PREV(v)) $$) AS r(l int);
EXPLAIN (COSTS OFF) EXECUTE bp_x;
EXECUTE bp_x;
DEALLOCATE bp_x;

DROP TABLE bp_t;
SELECT CASE WHEN NOT had THEN 'DROP EXTENSION match_recognize' END FROM bp_had_ext \gexec

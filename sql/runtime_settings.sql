--
-- Settings given before the library is loaded in a session hold once it
-- loads: ALTER ROLE ... SET, ALTER DATABASE ... SET, a SET before the
-- first use, and startup options (PGOPTIONS).  Each block starts a new
-- connection; on a server that does not preload the library, the first
-- query that plans or calls match_recognize loads it there
-- (t/003_settings.pl runs such checks on a server that preloads it and
-- on one that does not).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;

CREATE TABLE rs_t AS SELECT g AS id, (g * 37) % 13 AS v FROM generate_series(1, 40) g;
-- rs_plan(q): the plan lines that show the matcher
CREATE FUNCTION rs_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF l ~ '(Scan|Matcher)' THEN
      RETURN NEXT l;
    END IF;
  END LOOP;
END $$;

-- ALTER ROLE ... SET and ALTER DATABASE ... SET
ALTER ROLE CURRENT_USER IN DATABASE :"DBNAME" SET match_recognize.enable_dfa = off;
ALTER DATABASE :"DBNAME" SET match_recognize.max_threads = 77;
\c
SHOW match_recognize.enable_dfa;
SHOW match_recognize.max_threads;
SELECT rs_plan($$SELECT * FROM match_recognize('rs_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n PATTERN (a b+) DEFINE b AS v > PREV(v))') AS m(n bigint)$$);
SHOW match_recognize.enable_dfa;
SELECT * FROM match_recognize('rs_t MATCH_RECOGNIZE (ORDER BY id MEASURES count(*) AS n
  PATTERN ((a | b)* z) DEFINE z AS count(a.*) = 100)') AS m(n bigint);
SHOW match_recognize.max_threads;
ALTER ROLE CURRENT_USER IN DATABASE :"DBNAME" RESET match_recognize.enable_dfa;
ALTER DATABASE :"DBNAME" RESET match_recognize.max_threads;

-- SET before the first use
SET match_recognize.enable_custom_scan = off;
SET match_recognize.max_threads = 88;
SHOW match_recognize.enable_custom_scan;
SELECT rs_plan($$SELECT * FROM match_recognize('rs_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n PATTERN (a b+) DEFINE b AS v > PREV(v))') AS m(n bigint)$$);
SELECT * FROM match_recognize('rs_t MATCH_RECOGNIZE (ORDER BY id MEASURES count(*) AS n
  PATTERN ((a | b)* z) DEFINE z AS count(a.*) = 100)') AS m(n bigint);
SHOW match_recognize.enable_custom_scan;
\c
SET match_recognize.enable_dfa = off;
SELECT rs_plan($$SELECT * FROM match_recognize('rs_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n PATTERN (a b+) DEFINE b AS v > PREV(v))') AS m(n bigint)$$);

-- and the defaults, once loaded
\c
SELECT rs_plan($$SELECT * FROM match_recognize('rs_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n PATTERN (a b+) DEFINE b AS v > PREV(v))') AS m(n bigint)$$);
SELECT name, setting, context FROM pg_settings WHERE name LIKE 'match\_recognize.%' ORDER BY name;
-- the prefix is reserved: a misspelled setting is an error
SET match_recognize.enable_dfaa = off;

-- options in the startup packet, as PGOPTIONS sends them (last: the other
-- options pg_regress gives are lost here)
\c -reuse-previous=on "options='-c match_recognize.enable_custom_scan=off -c match_recognize.max_pattern_states=20'"
SHOW match_recognize.enable_custom_scan;
SELECT rs_plan($$SELECT * FROM match_recognize('rs_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n PATTERN (a b+) DEFINE b AS v > PREV(v))') AS m(n bigint)$$);
SELECT * FROM match_recognize('rs_t MATCH_RECOGNIZE (ORDER BY id MEASURES count(*) AS n
  PATTERN (a|b|c|d|e|f|g|h|i|j|k))') AS m(n bigint);
SHOW match_recognize.max_pattern_states;

DROP FUNCTION rs_plan(text);
DROP TABLE rs_t;

--
-- Overlapping matches through the memo of (state, row) results
-- (match_recognize.enable_memo): the same results as without it, for the
-- SRF and the custom scan, under every AFTER MATCH SKIP that resumes
-- inside a match, and EXPLAIN says which matcher runs.
--
-- leave the database as found: drop the extension at the end if we create it
SET client_min_messages = warning;
CREATE TEMP TABLE sm_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
SET max_parallel_workers_per_gather = 0;

-- issue 14's input: every row qualifies; 2000 rows in one partition
CREATE TABLE sm_all (id int);
INSERT INTO sm_all SELECT g FROM generate_series(1, 2000) g;
-- three partitions, values with NULLs
CREATE TABLE sm_t (p int, id int, v int);
INSERT INTO sm_t
SELECT p, g, CASE WHEN (g * 7 + p) % 13 = 0 THEN NULL ELSE (g * g + p) % 9 END
FROM generate_series(1, 3) p, generate_series(1, 400) g;
ANALYZE sm_all;
ANALYZE sm_t;

-- the query's rows with the memo and without (a temp table each), and
-- the rows of each missing from the other (EXCEPT ALL both ways)
CREATE FUNCTION sm_compare(query text, OUT rows_on bigint, OUT rows_off bigint,
                           OUT on_not_off bigint, OUT off_not_on bigint)
LANGUAGE plpgsql AS $f$
BEGIN
  PERFORM set_config('match_recognize.enable_memo', 'on', true);
  EXECUTE 'CREATE TEMP TABLE sm_on AS ' || query;
  PERFORM set_config('match_recognize.enable_memo', 'off', true);
  EXECUTE 'CREATE TEMP TABLE sm_off AS ' || query;
  PERFORM set_config('match_recognize.enable_memo', 'on', true);
  SELECT count(*) INTO rows_on FROM sm_on;
  SELECT count(*) INTO rows_off FROM sm_off;
  SELECT count(*) INTO on_not_off FROM (TABLE sm_on EXCEPT ALL TABLE sm_off) x;
  SELECT count(*) INTO off_not_on FROM (TABLE sm_off EXCEPT ALL TABLE sm_on) x;
  DROP TABLE sm_on;
  DROP TABLE sm_off;
END $f$;

-- the Matcher: line of a query's plan, with the memo and without
CREATE FUNCTION sm_matcher(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $f$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
    IF line ~ 'Matcher:' THEN RETURN NEXT 'on: ' || trim(line); END IF;
  END LOOP;
  PERFORM set_config('match_recognize.enable_memo', 'off', true);
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
    IF line ~ 'Matcher:' THEN RETURN NEXT 'off: ' || trim(line); END IF;
  END LOOP;
  PERFORM set_config('match_recognize.enable_memo', 'on', true);
END $f$;

-- issue 14's query: A+ B+ (all true) SKIP TO NEXT ROW, FIRST/LAST/count
EXPLAIN (COSTS OFF)
SELECT * FROM match_recognize($$ sm_all MATCH_RECOGNIZE (ORDER BY id
    MEASURES FIRST(A.id) AS fa, LAST(A.id) AS la, LAST(B.id) AS lb, count(A.*) AS na,
             count(*) AS n
    ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ B+) DEFINE A AS true, B AS true) $$)
  AS m(fa int, la int, lb int, na bigint, n bigint);

-- every start but the last matches to the end: A up to the row before it
SELECT count(*) AS matches, min(fa), max(fa), min(la), max(la), min(lb), max(lb),
       sum(na) AS sum_na, sum(n) AS sum_n,
       count(*) FILTER (WHERE la <> 1999 OR lb <> 2000 OR na <> 2000 - fa OR n <> 2001 - fa) AS wrong
FROM match_recognize($$ sm_all MATCH_RECOGNIZE (ORDER BY id
    MEASURES FIRST(A.id) AS fa, LAST(A.id) AS la, LAST(B.id) AS lb, count(A.*) AS na,
             count(*) AS n
    ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ B+) DEFINE A AS true, B AS true) $$)
  AS m(fa int, la int, lb int, na bigint, n bigint);

-- the node and the function, memo on and off
SELECT * FROM sm_compare($q$
SELECT * FROM match_recognize($$ sm_all MATCH_RECOGNIZE (ORDER BY id
    MEASURES FIRST(A.id) AS fa, LAST(A.id) AS la, LAST(B.id) AS lb, count(A.*) AS na,
             count(*) AS n, FIRST(B.id) AS fb
    ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ B+) DEFINE A AS true, B AS true) $$)
  AS m(fa int, la int, lb int, na bigint, n bigint, fb int) $q$);
SET match_recognize.enable_custom_scan = off;
SELECT * FROM sm_compare($q$
SELECT * FROM match_recognize($$ sm_all MATCH_RECOGNIZE (ORDER BY id
    MEASURES FIRST(A.id) AS fa, LAST(A.id) AS la, LAST(B.id) AS lb, count(A.*) AS na,
             count(*) AS n
    ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ B+) DEFINE A AS true, B AS true) $$)
  AS m(fa int, la int, lb int, na bigint, n bigint) $q$);
RESET match_recognize.enable_custom_scan;

-- DEFINEs over NULLs, several partitions, reluctant and alternation,
-- PREV/NEXT in DEFINE and MEASURES, SUBSET
SELECT * FROM sm_compare($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES FIRST(A.id) AS fa, LAST(B.id) AS lb, count(B.*) AS nb, LAST(U.v) AS lu,
             PREV(FIRST(A.v)) AS pv, NEXT(LAST(B.v)) AS nv, count(*) AS n
    ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+? (B | C)+ A?) SUBSET U = (A, C)
    DEFINE A AS v > 2, B AS v <= PREV(v) OR NEXT(v) IS NULL, C AS v % 2 = 0) $$)
  AS m(p int, fa int, lb int, nb bigint, lu int, pv int, nv int, n bigint) $q$);

-- SKIP TO FIRST / LAST v
SELECT * FROM sm_compare($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES FIRST(A.id) AS fa, LAST(A.id) AS la, FIRST(B.id) AS fb, count(*) AS n
    ONE ROW PER MATCH AFTER MATCH SKIP TO FIRST B
    PATTERN (A B+ C*) DEFINE A AS v % 3 <> 0, B AS v > 1, C AS v IS NULL OR v < 4) $$)
  AS m(p int, fa int, la int, fb int, n bigint) $q$);
SELECT * FROM sm_compare($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES FIRST(A.id) AS fa, LAST(B.id) AS lb, count(B.*) AS nb, count(*) AS n
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST B
    PATTERN (A+ B+ C?) DEFINE A AS v % 3 <> 0, B AS v > 1, C AS v IS NULL) $$)
  AS m(p int, fa int, lb int, nb bigint, n bigint) $q$);
-- a skip target missing from a match is still the error it was
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES FIRST(A.id) AS fa
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST B
    PATTERN (A+ B*) DEFINE A AS v % 3 <> 0, B AS v > 100) $$)
  AS m(p int, fa int);

-- measures the summaries do not give: labels walked from the memo
SELECT * FROM sm_compare($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES MATCH_NUMBER() AS mn, CLASSIFIER() AS cls, sum(A.v) AS sa, count(B.v) AS nbv,
             FIRST(A.id, 1) AS fa1
    ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ B*) DEFINE A AS v > 2, B AS v < 7) $$)
  AS m(p int, mn bigint, cls text, sa bigint, nbv bigint, fa1 int) $q$);

-- ALL ROWS PER MATCH, with exclusions and empty matches
SELECT * FROM sm_compare($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES MATCH_NUMBER() AS mn, CLASSIFIER() AS cls, count(*) AS running
    ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A* {- C -}? B*) DEFINE A AS v > 4, B AS v < 3, C AS v IS NULL) $$)
  AS m(p int, id int, mn bigint, cls text, running bigint, v int) $q$);
SELECT * FROM sm_compare($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES MATCH_NUMBER() AS mn, CLASSIFIER() AS cls
    ALL ROWS PER MATCH WITH UNMATCHED ROWS AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A B+) DEFINE A AS v > 6, B AS v < 6) $$)
  AS m(p int, id int, mn bigint, cls text, v int) $q$);

-- ^ and $ (the partition's end), and -> / ->>
SELECT * FROM sm_compare($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES FIRST(A.id) AS fa, count(*) AS n
    ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ B* $) DEFINE A AS v > 1 OR v IS NULL, B AS v > 0) $$)
  AS m(p int, fa int, n bigint) $q$);
SELECT * FROM sm_compare($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES LAST(A.id) AS la, count(*) AS n
    ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (^ A+ B) DEFINE A AS v IS NOT NULL, B AS v IS NULL) $$)
  AS m(p int, la int, n bigint) $q$);
SELECT * FROM sm_compare($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES FIRST(A.id) AS fa, FIRST(B.id) AS fb, count(*) AS n
    ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A -> B ->> C) DEFINE A AS v = 1, B AS v = 4, C AS v = 7) $$)
  AS m(p int, fa int, fb int, n bigint) $q$);

-- which matcher runs: the memo where it qualifies and the skip overlaps;
-- SKIP PAST LAST ROW keeps the other matchers, TO LAST v the automaton
-- where that qualifies (the V-shape); a counted loop or a DEFINE reading
-- the match runs the general matcher
SELECT * FROM sm_matcher($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES FIRST(A.id) AS fa ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ B+) DEFINE A AS v > 2, B AS v < 5) $$) AS m(p int, fa int) $q$);
SELECT * FROM sm_matcher($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES FIRST(A.id) AS fa ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
    PATTERN (A+ B+) DEFINE A AS v > 2, B AS v < 5) $$) AS m(p int, fa int) $q$);
SELECT * FROM sm_matcher($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES FIRST(A.id) AS fa ONE ROW PER MATCH AFTER MATCH SKIP TO LAST B
    PATTERN (A+ B+) DEFINE A AS v > 2, B AS v < 5) $$) AS m(p int, fa int) $q$);
SELECT * FROM sm_matcher($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES FIRST(DOWN.id) AS fd ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+) DEFINE DOWN AS v < PREV(v), UP AS v > PREV(v)) $$)
  AS m(p int, fd int) $q$);
-- ... where the function runs the memo, with the same results
SET match_recognize.enable_custom_scan = off;
SELECT * FROM sm_compare($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES FIRST(DOWN.id) AS fd, LAST(UP.id) AS lu, count(DOWN.*) AS nd
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+) DEFINE DOWN AS v < PREV(v), UP AS v > PREV(v)) $$)
  AS m(p int, fd int, lu int, nd bigint) $q$);
RESET match_recognize.enable_custom_scan;
SELECT * FROM sm_matcher($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES FIRST(A.id) AS fa ONE ROW PER MATCH AFTER MATCH SKIP TO FIRST B
    PATTERN (A+ B+) DEFINE A AS v % 3 <> 0, B AS v < 5) $$) AS m(p int, fa int) $q$);
SELECT * FROM sm_matcher($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES FIRST(A.id) AS fa ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A{1500} B) DEFINE A AS v > 2, B AS v < 5) $$) AS m(p int, fa int) $q$);
SELECT * FROM sm_matcher($q$
SELECT * FROM match_recognize($$ sm_t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id
    MEASURES FIRST(A.id) AS fa ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ B+) DEFINE A AS v > 2, B AS v < FIRST(A.v)) $$) AS m(p int, fa int) $q$);

-- a DEFINE reading MATCH_NUMBER() changes with every match: not shared
CREATE TABLE sm_q AS SELECT g AS id, g % 5 AS v FROM generate_series(1, 30) g;
SELECT * FROM sm_matcher($q$
SELECT * FROM match_recognize($$ sm_q MATCH_RECOGNIZE (ORDER BY id
    MEASURES FIRST(A.id) AS fa ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ B) DEFINE A AS MATCH_NUMBER() < 4 OR v > 1, B AS true) $$) AS m(fa int) $q$);
SELECT string_agg(fa::text, ',') FROM match_recognize($$ sm_q MATCH_RECOGNIZE (ORDER BY id
    MEASURES FIRST(A.id) AS fa ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ B) DEFINE A AS MATCH_NUMBER() < 4 OR v > 1, B AS true) $$) AS m(fa int);
SELECT * FROM sm_matcher($q$
SELECT * FROM match_recognize($$ sm_q MATCH_RECOGNIZE (ORDER BY id
    MEASURES FIRST(A.id) AS fa ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ B) DEFINE A AS PREV(v + MATCH_NUMBER()) > 3, B AS true) $$) AS m(fa int) $q$);
DROP TABLE sm_q;

-- EXPLAIN ANALYZE with the matcher's work counters masked (they follow the
-- matchers' implementation; rows read, matches, the memo's nodes do not)
CREATE FUNCTION sm_explain(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $f$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
    CONTINUE WHEN line ~ 'Sort Method';
    RETURN NEXT regexp_replace(line,
      '^(\s*(Matcher Steps|Memo Hits|Define Evaluations|Merged Threads|Peak Threads): )\d+$', '\1N');
  END LOOP;
END $f$;

-- EXPLAIN ANALYZE: the memo's live nodes at most
SELECT * FROM sm_explain($q$
SELECT * FROM match_recognize($$ sm_all MATCH_RECOGNIZE (ORDER BY id
    MEASURES FIRST(A.id) AS fa ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ B+) DEFINE A AS id <= 10, B AS true) $$) AS m(fa int) $q$);

-- the node budget (ten times max_threads nodes): past it the partition
-- goes on with the general matcher, with the same results and no error
SET match_recognize.max_threads = 100;
CREATE TABLE sm_small AS SELECT id FROM sm_all WHERE id <= 600;
SELECT * FROM sm_explain($q$
SELECT * FROM match_recognize($$ sm_small MATCH_RECOGNIZE (ORDER BY id
    MEASURES FIRST(A.id) AS fa ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ B+) DEFINE A AS true, B AS true) $$) AS m(fa int) $q$);
SELECT * FROM sm_compare($q$
SELECT * FROM match_recognize($$ sm_small MATCH_RECOGNIZE (ORDER BY id
    MEASURES FIRST(A.id) AS fa, LAST(B.id) AS lb, count(*) AS n
    ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ B+) DEFINE A AS true, B AS true) $$)
  AS m(fa int, lb int, n bigint) $q$);
DROP TABLE sm_small;
RESET match_recognize.max_threads;

DROP FUNCTION sm_compare(text);
DROP FUNCTION sm_matcher(text);
DROP FUNCTION sm_explain(text);
DROP TABLE sm_all;
DROP TABLE sm_t;
SET client_min_messages = warning;
DO $$ BEGIN
  IF NOT (SELECT had FROM sm_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;
RESET client_min_messages;
DROP TABLE sm_had_ext;

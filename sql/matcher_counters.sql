--
-- Large counted quantifiers: A{100000}, A{2,100000}, A{100000,} and bounds
-- up to 2147483647 run as counted loops (a counter per loop in each path,
-- not one state per iteration), in time linear in the rows where one start
-- row is alive at a time or the starts' paths merge.
--
-- leave the database as found: drop the extension at the end if we create it
SET client_min_messages = warning;
CREATE TEMP TABLE mc_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE mc_t (id int, v int);
INSERT INTO mc_t SELECT g, g % 1000 FROM generate_series(1, 250000) g;
ANALYZE mc_t;

-- the matches of a clause over mc_t, summarized: how many, the first and
-- last match's rows, and the rows matched in all; once through the custom
-- scan and once through the function, which must agree
CREATE FUNCTION mc_run(clause text, input text DEFAULT 'mc_t') RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
  q text := format($q$SELECT count(*) AS matches, min(f) AS first_from, min(l) AS first_to,
        max(f) AS last_from, max(l) AS last_to, sum(n) AS rows_matched
      FROM %s MATCH_RECOGNIZE (ORDER BY id
        MEASURES FIRST(id) AS f, LAST(id) AS l, count(*) AS n %s) AS m$q$, input, clause);
  scan text;
  fn text;
BEGIN
  SET LOCAL match_recognize.enable_custom_scan = on;
  EXECUTE 'SELECT x::text FROM (' || match_recognize_sql(q) || ') x' INTO scan;
  SET LOCAL match_recognize.enable_custom_scan = off;
  EXECUTE 'SELECT x::text FROM (' || match_recognize_sql(q) || ') x' INTO fn;
  IF scan IS DISTINCT FROM fn THEN
    RAISE EXCEPTION 'custom scan % <> function %', scan, fn;
  END IF;
  RETURN scan;
END $f$;

-- the issue's patterns (matches, first match from..to, last match from..to, rows)
SELECT mc_run('PATTERN (A{100000}) DEFINE A AS true');
SELECT mc_run('PATTERN (A{2,100000}) DEFINE A AS true');
SELECT mc_run('PATTERN (A{100000,}) DEFINE A AS true');
SELECT mc_run('PATTERN (A{2147483646}) DEFINE A AS true');
SELECT mc_run('PATTERN (A{2147483647,}) DEFINE A AS true');
-- a row that fails A breaks the run: every start after it is tried again
-- (each start row alive until a match is decided holds a path: fewer rows)
SELECT mc_run('PATTERN (A{999}) DEFINE A AS v <> 0', '(SELECT * FROM mc_t WHERE id <= 3000) s');
SELECT mc_run('PATTERN (A{1000}) DEFINE A AS v <> 0', '(SELECT * FROM mc_t WHERE id <= 3000) s');
SELECT mc_run('PATTERN (A{1500,}) DEFINE A AS v > 0');
-- greedy and reluctant
SELECT mc_run('PATTERN (A{2,100000}? B) DEFINE A AS true, B AS v = 0',
  '(SELECT * FROM mc_t WHERE id <= 3000) s');
SELECT mc_run('PATTERN (A{2,100000} B) DEFINE A AS true, B AS v = 0');
SELECT mc_run('PATTERN (A{3,2147483647}?) DEFINE A AS true');
SELECT mc_run('PATTERN (X A{99999,}? A) DEFINE X AS id = 1, A AS true');
SELECT mc_run('PATTERN (X A{100000,2147483647} B) DEFINE X AS id = 1, B AS v = 999');
-- nested counted groups (and an unrolled loop inside one); X fixes the
-- start (with every row a start, each of the 1500 rows before a B holds a
-- path of its own)
SELECT mc_run('PATTERN (X (A{1500} B){50}) DEFINE X AS id = 1, A AS v <> 0, B AS v = 0',
  '(SELECT id, CASE WHEN id % 1501 = 1 THEN 0 ELSE 1 END AS v FROM mc_t) s');
SELECT mc_run('PATTERN (X (A{1500} B){50}) DEFINE X AS id = 1, A AS v <> 0, B AS v = 0',
  '(SELECT id, CASE WHEN id % 1501 = 1 OR id = 60000 THEN 0 ELSE 1 END AS v FROM mc_t) s');
SELECT mc_run('PATTERN ((A{2,} B{1,3}){2000,} C) DEFINE A AS v % 3 <> 0, B AS v % 3 = 0, C AS id = 250000');
SELECT mc_run('PATTERN (X ((A | B){900,1100} Y){3}) DEFINE X AS id = 1, A AS v % 2 = 0, B AS v % 2 = 1, Y AS v = 0');
-- counted groups whose body can match no row: empty iterations fill the
-- lower bound, past it an empty iteration is the last
SELECT mc_run('PATTERN ((A? B?){100000}) DEFINE A AS v % 2 = 0, B AS v % 2 = 1');
SELECT mc_run('PATTERN ((A? B?){3,100000} C) DEFINE A AS v % 2 = 0, B AS v = 3, C AS v = 999');
-- (a bounded loop followed by more keeps a path per start row until a
-- match is decided: a smaller input)
SELECT mc_run('PATTERN ((A?){2147483646} X) DEFINE A AS v <> 0, X AS v = 0',
  '(SELECT * FROM mc_t WHERE id <= 3000) s');
SELECT mc_run('PATTERN ((A | ()){3000,}?) DEFINE A AS true');
SELECT mc_run('PATTERN ((() | A){3000,} B) DEFINE B AS v = 0');
-- the paths of one start, when DEFINE reads the running match (X.v costs
-- time growing with the match, as for X A+: fewer rows)
SELECT mc_run('PATTERN (X A{10000,}) DEFINE X AS id = 1, A AS A.v >= X.v - 1',
  '(SELECT * FROM mc_t WHERE id <= 20000) s');
SELECT mc_run('PATTERN (X A{2,100000}? Y) DEFINE X AS id = 1, Y AS Y.v < FIRST(A.v)');

-- AFTER MATCH SKIP TO NEXT ROW: every start row finds its own match
SELECT mc_run('AFTER MATCH SKIP TO NEXT ROW PATTERN (A{1500}) DEFINE A AS true',
  '(SELECT * FROM mc_t WHERE id <= 3000) s');
SELECT mc_run('AFTER MATCH SKIP TO NEXT ROW PATTERN (A{1000,1010}? B) DEFINE B AS v = 0',
  '(SELECT * FROM mc_t WHERE id <= 3000) s');

-- ALL ROWS PER MATCH: each row with its classifier and running count
SELECT match_number, classifier, count(*), min(id), max(id), max(n)
FROM match_recognize($$ (SELECT * FROM mc_t WHERE id <= 4100) s MATCH_RECOGNIZE (ORDER BY id
    MEASURES MATCH_NUMBER() AS match_number, CLASSIFIER() AS classifier, count(*) AS n
    ALL ROWS PER MATCH PATTERN (A{1500,1800} B? C{2,}) DEFINE A AS true, B AS v = 0, C AS v < 100) $$)
  AS m(id int, match_number bigint, classifier text, n bigint, v int)
GROUP BY 1, 2 ORDER BY 1, 4;

-- counted loops run on the general matcher, small quantifiers stay states
-- the automaton runs
CREATE FUNCTION mc_matcher(pattern text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) '
      || match_recognize_sql(format($q$SELECT * FROM mc_t MATCH_RECOGNIZE (ORDER BY id
           MEASURES count(*) AS n PATTERN (%s) DEFINE A AS v > PREV(v))$q$, pattern)) LOOP
    IF line ~ 'Matcher:' THEN RETURN NEXT trim(line); END IF;
  END LOOP;
END $f$;
SELECT mc_matcher('A{2,5}');
SELECT mc_matcher('A{2,100000}');

-- a walk that would fill a lower bound of 10^9 one empty iteration at a
-- time is stopped by the budget, not run for hours
\set VERBOSITY terse
SELECT mc_run('PATTERN ((() | A){1000000000,2000000000}) DEFINE A AS true',
  '(SELECT * FROM mc_t WHERE id <= 10) s');
\set VERBOSITY default

-- a long input is cancelled promptly: statement_timeout stops the node
-- within a fraction of a second of its deadline, through the matcher's
-- interrupt checks
CREATE TEMP TABLE mc_clock AS SELECT clock_timestamp() AS t0;
SET statement_timeout = '300ms';
SELECT count(*) FROM match_recognize($q$ (SELECT g AS id FROM generate_series(1, 1000000000) g) s
    MATCH_RECOGNIZE (ORDER BY id MEASURES count(*) AS n PATTERN (A{2147483646})
    DEFINE A AS id > 0) $q$) AS m(n bigint);
RESET statement_timeout;
SELECT clock_timestamp() - t0 < interval '5 s' AS cancelled_promptly FROM mc_clock;
DROP TABLE mc_clock;

DROP FUNCTION mc_matcher(text);
DROP FUNCTION mc_run(text, text);
DROP TABLE mc_t;
DO $$ BEGIN
  IF NOT (SELECT had FROM mc_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;

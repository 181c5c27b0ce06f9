--
-- Partition runs (src/runtime/mr_runtime.h): one run per partition key,
-- the partitions' rows interleaved, runs suspended between their rows or
-- rebuilt from checkpoints, must give exactly what match_recognize() gives;
-- and a suspended run costs a few hundred bytes.  The functions are
-- test-only (src/sql/mr_selftest.c): declared here, not by the extension.
--
SET client_min_messages = warning;
CREATE TEMP TABLE prt_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;

CREATE FUNCTION pg_temp.partrun_check(text, text, boolean) RETURNS SETOF record
  AS '$libdir/match_recognize', 'match_recognize_partrun_check' LANGUAGE C STRICT;
CREATE FUNCTION pg_temp.partrun_memory(text)
  RETURNS TABLE (phase text, runs bigint, suspended bigint, bytes bigint,
                 bytes_allocated bigint, bytes_per_run bigint, allocated_per_run bigint)
  AS '$libdir/match_recognize', 'match_recognize_partrun_memory' LANGUAGE C STRICT;

-- 200 partitions of 1 to 20 rows, values that make every kind of match
CREATE TABLE prt (k int, ts int, v int, g text);
INSERT INTO prt
SELECT k, t, (k * 7 + t * t * 3 + (t / 3) * 5) % 17, chr(97 + (k + t) % 3)
FROM generate_series(1, 200) k, generate_series(1, 1 + k % 20) t;
-- NULL keys are a partition of their own
INSERT INTO prt VALUES (NULL, 1, 3, 'a'), (NULL, 2, 9, 'b'), (NULL, 3, 1, 'c');

-- partrun_same(item, columns): for every mode, with and without the
-- automaton, the multiset of rows equals match_recognize()'s
CREATE FUNCTION pg_temp.partrun_same(item text, cols text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  mode text;
  dfa boolean;
  n bigint;
  ref bigint;
  bad text := '';
BEGIN
  EXECUTE format('SELECT count(*) FROM match_recognize(%L) AS m(%s)', item, cols) INTO ref;
  FOREACH mode IN ARRAY ARRAY['interleave', 'suspend', 'restore'] LOOP
    FOREACH dfa IN ARRAY ARRAY[false, true] LOOP
      EXECUTE format($q$
        SELECT count(*) FROM (
          (SELECT * FROM match_recognize(%1$L) AS m(%2$s)
           EXCEPT ALL
           SELECT * FROM pg_temp.partrun_check(%1$L, %3$L, %4$L) AS m(%2$s))
          UNION ALL
          (SELECT * FROM pg_temp.partrun_check(%1$L, %3$L, %4$L) AS m(%2$s)
           EXCEPT ALL
           SELECT * FROM match_recognize(%1$L) AS m(%2$s))) d $q$,
        item, cols, mode, dfa) INTO n;
      IF n <> 0 THEN
        bad := bad || format(' %s%s: %s rows differ;', mode, CASE WHEN dfa THEN '+dfa' END, n);
      END IF;
    END LOOP;
  END LOOP;
  RETURN ref || ' rows' || CASE WHEN bad = '' THEN ', same in every mode' ELSE ':' || bad END;
END $$;

-- the automaton's pattern (V shape), with PREV
SELECT pg_temp.partrun_same($$ prt MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(ts) AS s, LAST(DOWN.ts) AS b, LAST(UP.ts) AS e
  ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
  PATTERN (STRT DOWN+ UP+) DEFINE DOWN AS v < PREV(v), UP AS v > PREV(v)) $$,
  'k int, s int, b int, e int');
-- ALL ROWS PER MATCH, classifier, match number, running aggregates
SELECT pg_temp.partrun_same($$ prt MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES CLASSIFIER() AS c, MATCH_NUMBER() AS mn, RUNNING count(*) AS n, sum(v) AS s
  ALL ROWS PER MATCH PATTERN (A B* C) DEFINE A AS v > 8, B AS v <= 8, C AS v > 12) $$,
  'k int, ts int, c text, mn bigint, n bigint, s bigint, v int, g text');
-- WITH UNMATCHED ROWS, SKIP TO NEXT ROW
SELECT pg_temp.partrun_same($$ prt MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(ts) AS f, LAST(ts) AS l
  ALL ROWS PER MATCH WITH UNMATCHED ROWS AFTER MATCH SKIP TO NEXT ROW
  PATTERN (A B+) DEFINE A AS g = 'a', B AS v > PREV(v)) $$,
  'k int, ts int, f int, l int, v int, g text');
-- DEFINE reads NEXT, SKIP TO FIRST, an empty-match capable pattern
SELECT pg_temp.partrun_same($$ prt MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(ts) AS f, LAST(ts) AS l, count(B.*) AS nb
  AFTER MATCH SKIP TO FIRST B
  PATTERN (A B* C?) DEFINE A AS v < NEXT(v), B AS v >= PREV(v), C AS g = 'c') $$,
  'k int, f int, l int, nb bigint');
-- the path-dependent matcher (another variable's row), a subset, WITHIN
SELECT pg_temp.partrun_same($$ prt MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(U.ts) AS f, LAST(U.ts) AS l, max(U.v) AS m
  PATTERN (A (B | C)+) WITHIN 6 SUBSET U = (B, C)
  DEFINE B AS v > A.v, C AS v < A.v - 2) $$,
  'k int, f int, l int, m int');
-- no PARTITION BY: one partition
SELECT pg_temp.partrun_same($$ prt MATCH_RECOGNIZE (ORDER BY k NULLS FIRST, ts
  MEASURES count(*) AS n PATTERN (A{2,3}) DEFINE A AS v > 10) $$, 'n bigint');

-- a partition with nothing live suspends to its key and checkpoint: a
-- pattern no row starts (A is never true) leaves every run idle.  (Runs
-- suspended after they all were live leave free memory behind in the
-- runtime's contexts, and a few spare matchers: not counted per run here.)
SELECT phase, runs, suspended, bytes_per_run < 512 AS small, allocated_per_run < 2048 AS under_2kb
FROM pg_temp.partrun_memory($$ prt MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n PATTERN (A B) DEFINE A AS v > 100, B AS true) $$)
WHERE phase = 'one by one';
-- a query reading PREV keeps the last row; a live thread keeps its matcher;
-- either way a run costs less than a runtime of its own per partition did
SELECT a.phase, a.suspended, a.allocated_per_run < b.allocated_per_run / 2 AS smaller
FROM pg_temp.partrun_memory($$ prt MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n PATTERN (A B+) DEFINE B AS v > PREV(v)) $$) a,
  pg_temp.partrun_memory($$ prt MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n PATTERN (A B+) DEFINE B AS v > PREV(v)) $$) b
WHERE a.phase = 'all live' AND b.phase = 'runtime per partition';

-- a mode the check does not know
SELECT * FROM pg_temp.partrun_check($$ prt MATCH_RECOGNIZE (ORDER BY ts
  MEASURES count(*) AS n PATTERN (A) DEFINE A AS true) $$, 'sideways', false) AS m(n bigint);

DROP TABLE prt;
DO $$ BEGIN
  IF NOT (SELECT had FROM prt_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;

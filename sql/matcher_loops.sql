--
-- Empty loop iterations: ISO/IEC 19075-5 7.2.8 allows an iteration that
-- matches no row only to fill the quantifier's lower bound or as the loop's
-- last iteration.  One rule for every quantifier (bounded, unbounded, the
-- iterations after the lower bound of X{n,}), greedy and reluctant.
--
-- leave the database as found: drop the extension at the end if we create it
SET client_min_messages = warning;
CREATE TEMP TABLE ml_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;

CREATE TABLE ml_t (id int, v int, w int);

-- ml_rows('3,3,2'): the rows of ml_t, v from the list, w = 2
CREATE FUNCTION ml_rows(vs text, ws text DEFAULT NULL) RETURNS void LANGUAGE sql AS $$
  TRUNCATE ml_t;
  INSERT INTO ml_t
  SELECT i, v::int, coalesce((string_to_array(ws, ','))[i]::int, 2)
  FROM unnest(string_to_array(vs, ',')) WITH ORDINALITY AS x(v, i);
$$;

-- every match: number, first and last id, the classifiers in row order;
-- once through the custom scan and once through the function, which must agree
CREATE FUNCTION ml_matches(pattern text, defs text DEFAULT 'X AS true')
RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE
  q text := format($q$SELECT mno, min(id) AS first_id, max(id) AS last_id,
        string_agg(coalesce(cls, '()'), ' ' ORDER BY id) AS labels
      FROM ml_t MATCH_RECOGNIZE (ORDER BY id
        MEASURES MATCH_NUMBER() AS mno, CLASSIFIER() AS cls
        ALL ROWS PER MATCH AFTER MATCH SKIP PAST LAST ROW
        PATTERN (%s) DEFINE %s) AS m
      GROUP BY mno ORDER BY mno$q$, pattern, defs);
  scan text[];
  fn text[];
  r record;
BEGIN
  SET LOCAL match_recognize.enable_custom_scan = on;
  FOR r IN EXECUTE match_recognize_sql(q) LOOP
    scan := scan || format('%s: %s..%s %s', r.mno, r.first_id, r.last_id, r.labels);
  END LOOP;
  SET LOCAL match_recognize.enable_custom_scan = off;
  FOR r IN EXECUTE match_recognize_sql(q) LOOP
    fn := fn || format('%s: %s..%s %s', r.mno, r.first_id, r.last_id, r.labels);
  END LOOP;
  IF scan IS DISTINCT FROM fn THEN
    RAISE EXCEPTION 'custom scan % <> function %', scan, fn;
  END IF;
  RETURN QUERY SELECT unnest(scan);
END $f$;

-- the issue's cases (first..last id of the first match; an empty match
-- shows as ".." with the label "()")
-- (B? | A)+ over v = 3, 3, 2: the third iteration's empty B? ends the loop
-- (1..2), ahead of A taking row 3; Trino drops that path and gives 1..3
SELECT ml_rows('3,3,2');
SELECT ml_matches('(B? | A)+', 'B AS v = 3, A AS true');
-- (B? | A)* over v = 3, 2: 1..1 (Trino 1..2)
SELECT ml_rows('3,2');
SELECT ml_matches('(B? | A)*', 'B AS v = 3, A AS true');
-- (D | A*?)* over v = 2, 0: the second iteration's A*? prefers no row: 1..1
SELECT ml_rows('2,0');
SELECT ml_matches('(D | A*?)*', 'D AS v > 0, A AS true');
-- (B? (A?)??)* over (v, w) = (1, 2), (3, 2): 1..1
SELECT ml_rows('1,3', '2,2');
SELECT ml_matches('(B? (A?)??)*', 'B AS v <= w, A AS true');
-- ((C{2,4})? B*?)* over 5 rows, all true: C{2,4} cannot start at row 5 and
-- B*? prefers no row, so the second iteration is empty and the last: 1..4
SELECT ml_rows('1,1,1,1,1');
SELECT ml_matches('((C{2,4})? B*?)*', 'C AS true, B AS true');

-- empty iterations fill a lower bound: (A?){3} B and (A?){2,} B need no A
SELECT ml_rows('0,1');
SELECT ml_matches('(A?){3} B', 'A AS v = 1, B AS v = 0');
SELECT ml_matches('(A?){2,} B', 'A AS v = 1, B AS v = 0');
-- ... and the loop goes on after them: (A | B?){2,3} fills iteration 2 with
-- an empty B? at the end of the rows (row 4), while an empty iteration past
-- the bound ends the loop (rows 1..2 match B A, row 3 an empty match)
SELECT ml_rows('2,1,0,1');
SELECT ml_matches('(A | B?){2,3}', 'A AS v = 1, B AS v = 2');
-- B?? prefers no row: its empty iterations fill the bound, the third ends
-- the loop: empty matches
SELECT ml_matches('(B?? | A){2,3}', 'B AS v = 2, A AS true');
-- a bounded iteration past the lower bound that matched no row is the last:
-- (B? | A){0,2} C over v = 1, 2, 3 cannot skip iteration 1 with an empty B?
-- and then let A take row 1 as iteration 2 (that gave 1..2 A C before);
-- A takes row 1, B row 2, C row 3: 1..3
SELECT ml_rows('1,2,3');
SELECT ml_matches('(B? | A){0,2} C', 'B AS v = 2, A AS v = 1, C AS v >= 2');
-- the first iteration's empty option ends the loop in its place (C?? is
-- empty, D takes the row), as before
SELECT ml_rows('1,1');
SELECT ml_matches('(C??)* D', 'C AS true, D AS true');
-- reluctant loops over nullable bodies
SELECT ml_rows('1,1,2');
SELECT ml_matches('(A? B?)+? B', 'A AS v = 1, B AS true');
SELECT ml_matches('(A | ())*? B', 'A AS v = 1, B AS v = 2');
SELECT ml_matches('((A | ())*) B', 'A AS v = 1, B AS v = 2');
-- nested loops: the inner loop's empty iteration ends it, the outer
-- iteration is then empty too and ends the outer loop
SELECT ml_rows('1,2,1');
SELECT ml_matches('((A?)* B?)*', 'A AS v = 1, B AS v = 2');
SELECT ml_matches('((A?)+ | B)+', 'A AS v = 1, B AS v = 2');

-- the automaton runs the same rule: these run on it (EXPLAIN names it), and
-- the node and the function agree above
CREATE FUNCTION ml_matcher(pattern text, defs text) RETURNS SETOF text
LANGUAGE plpgsql AS $f$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) '
      || match_recognize_sql(format($q$SELECT * FROM ml_t MATCH_RECOGNIZE (ORDER BY id
           MEASURES FIRST(id) AS f, LAST(id) AS l PATTERN (%s) DEFINE %s)$q$, pattern, defs)) LOOP
    IF line ~ 'Matcher:' THEN RETURN NEXT trim(line); END IF;
  END LOOP;
END $f$;
SELECT ml_rows('3,3,2');
SELECT ml_matcher('(B? | A)+', 'B AS v > w');
SELECT ml_matches('(B? | A)+', 'B AS v > w');
SELECT ml_matcher('(B? | A){0,2} C', 'B AS v > w, C AS v = w');
SELECT ml_matches('(B? | A){0,2} C', 'B AS v > w, C AS v = w');
DROP FUNCTION ml_matcher(text, text);

DROP FUNCTION ml_matches(text, text);
DROP FUNCTION ml_rows(text, text);
DROP TABLE ml_t;
DO $$ BEGIN
  IF NOT (SELECT had FROM ml_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;

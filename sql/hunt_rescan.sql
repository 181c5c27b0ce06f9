--
-- The function and the node run again within one statement: rescans under
-- a nested loop and LATERAL (arguments that change between calls, and ones
-- that do not), scrollable cursors, and a call where no set is accepted.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE hr_t (id int, g int, v int);
INSERT INTO hr_t SELECT i, i % 3, (i * 7) % 11 FROM generate_series(1, 30) i;

-- LATERAL with an argument that changes per outer row: the function is
-- called once per row of o, each call with its own column definition list
-- descriptor (the second call used to write into the descriptor the
-- executor had freed after the first: a backend crash)
SELECT o.x, count(*), sum(r.n) AS rows_matched, max(r.mn) AS matches
  FROM generate_series(2, 6) o(x),
       LATERAL match_recognize($$hr_t MATCH_RECOGNIZE (ORDER BY id
         MEASURES count(*) AS n, match_number() AS mn
         PATTERN (a{2}) DEFINE a AS a.v > $1)$$, o.x) AS r(n bigint, mn bigint)
 GROUP BY o.x ORDER BY o.x;

-- the same per outer row computed one call at a time
SELECT x, (SELECT count(*) FROM match_recognize($$hr_t MATCH_RECOGNIZE (ORDER BY id
         MEASURES count(*) AS n PATTERN (a{2}) DEFINE a AS a.v > $1)$$, x) AS r(n bigint))
  FROM generate_series(2, 6) x ORDER BY x;

-- a LATERAL argument of another type (text), and a null one
SELECT o.p, count(r.*)
  FROM (VALUES ('1'), (NULL), ('9')) o(p),
       LATERAL match_recognize($$hr_t MATCH_RECOGNIZE (ORDER BY id
         MEASURES first(id) AS f PATTERN (a+) DEFINE a AS a.v::text > $1)$$, o.p) AS r(f int)
 GROUP BY o.p ORDER BY o.p;

-- the node inside a correlated subquery, rescanned for every outer row
-- (its filter reads the outer row), and the function the same way
EXPLAIN (COSTS OFF)
SELECT x, (SELECT count(*) FROM match_recognize($$hr_t MATCH_RECOGNIZE (PARTITION BY g
         ORDER BY id MEASURES first(id) AS fid PATTERN (a b) DEFINE b AS b.v < a.v)$$)
         AS r(g int, fid int) WHERE r.fid > x * 5)
  FROM generate_series(1, 3) x ORDER BY x;
SELECT x, (SELECT count(*) FROM match_recognize($$hr_t MATCH_RECOGNIZE (PARTITION BY g
         ORDER BY id MEASURES first(id) AS fid PATTERN (a b) DEFINE b AS b.v < a.v)$$)
         AS r(g int, fid int) WHERE r.fid > x * 5)
  FROM generate_series(1, 3) x ORDER BY x;
SET match_recognize.enable_custom_scan = off;
SELECT x, (SELECT count(*) FROM match_recognize($$hr_t MATCH_RECOGNIZE (PARTITION BY g
         ORDER BY id MEASURES first(id) AS fid PATTERN (a b) DEFINE b AS b.v < a.v)$$)
         AS r(g int, fid int) WHERE r.fid > x * 5)
  FROM generate_series(1, 3) x ORDER BY x;
RESET match_recognize.enable_custom_scan;

-- a scrollable cursor over the node and over the function: backward and
-- absolute fetches see the rows of the forward scan
CREATE FUNCTION hr_cursor_walk(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  c refcursor := 'hr_c';
  r record;
BEGIN
  EXECUTE format('DECLARE hr_c SCROLL CURSOR FOR %s', q);
  FOR r IN EXECUTE 'FETCH 3 FROM hr_c' LOOP RETURN NEXT 'fwd ' || r::text; END LOOP;
  FOR r IN EXECUTE 'FETCH BACKWARD 2 FROM hr_c' LOOP RETURN NEXT 'back ' || r::text; END LOOP;
  FOR r IN EXECUTE 'FETCH LAST FROM hr_c' LOOP RETURN NEXT 'last ' || r::text; END LOOP;
  FOR r IN EXECUTE 'FETCH ABSOLUTE 2 FROM hr_c' LOOP RETURN NEXT 'abs2 ' || r::text; END LOOP;
  FOR r IN EXECUTE 'FETCH BACKWARD ALL FROM hr_c' LOOP RETURN NEXT 'back ' || r::text; END LOOP;
  FOR r IN EXECUTE 'FETCH FORWARD ALL FROM hr_c' LOOP RETURN NEXT 'fwd ' || r::text; END LOOP;
  EXECUTE 'CLOSE hr_c';
END $$;
BEGIN;
SELECT * FROM hr_cursor_walk($q$SELECT * FROM match_recognize($$hr_t MATCH_RECOGNIZE (
  PARTITION BY g ORDER BY id MEASURES match_number() AS mn, count(*) AS n
  ALL ROWS PER MATCH PATTERN (a b+) DEFINE b AS b.v > prev(b.v))$$)
  AS r(g int, id int, mn bigint, n bigint, v int)$q$);
SET LOCAL match_recognize.enable_custom_scan = off;
SELECT * FROM hr_cursor_walk($q$SELECT * FROM match_recognize($$hr_t MATCH_RECOGNIZE (
  PARTITION BY g ORDER BY id MEASURES match_number() AS mn, count(*) AS n
  ALL ROWS PER MATCH PATTERN (a b+) DEFINE b AS b.v > prev(b.v))$$)
  AS r(g int, id int, mn bigint, n bigint, v int)$q$);
COMMIT;

-- called where no set of rows is accepted: a clean error, not an internal one
\set VERBOSITY sqlstate
SELECT match_recognize($$hr_t MATCH_RECOGNIZE (ORDER BY id MEASURES count(*) AS n
  PATTERN (a) DEFINE a AS true)$$);
\set VERBOSITY default

DROP FUNCTION hr_cursor_walk(text);
DROP TABLE hr_t;

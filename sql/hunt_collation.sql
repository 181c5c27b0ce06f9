--
-- DEFINE and MEASURES compare a column as the column's collation says, as
-- a query over the input does: navigated values, aggregates over them and
-- the automaton lane alike.  They used to compare in the database's
-- default collation whatever the column's was: "C" columns ordered as the
-- default, a case-insensitive column saw 'a' and 'A' as different.
--
-- hc_check(q) runs q in the node (automaton allowed), in the node with the
-- general matcher and as the function, fails unless the three agree, and
-- returns the rows as text, sorted.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;

CREATE FUNCTION hc_check(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  stmt text := format('SELECT array_agg(x::text ORDER BY x::text) FROM (%s) x',
                      rtrim(match_recognize_sql(q), E'; \n'));
  node text[];
  general text[];
  srf text[];
BEGIN
  PERFORM set_config('match_recognize.enable_custom_scan', 'on', true);
  PERFORM set_config('match_recognize.enable_dfa', 'on', true);
  EXECUTE stmt INTO node;
  PERFORM set_config('match_recognize.enable_dfa', 'off', true);
  EXECUTE stmt INTO general;
  PERFORM set_config('match_recognize.enable_custom_scan', 'off', true);
  EXECUTE stmt INTO srf;
  PERFORM set_config('match_recognize.enable_custom_scan', 'on', true);
  PERFORM set_config('match_recognize.enable_dfa', 'on', true);
  IF node IS DISTINCT FROM general OR node IS DISTINCT FROM srf THEN
    RAISE EXCEPTION 'results differ: node %, general matcher %, function %', node, general, srf;
  END IF;
  RETURN QUERY SELECT unnest(node);
END $$;

CREATE COLLATION hc_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
-- c: "C" (byte order: 'B' < 'a'), u: ICU root ('a' < 'B'), ci: case-insensitive
CREATE TABLE hc_t (id int, c text COLLATE "C", u text COLLATE "und-x-icu", ci text COLLATE hc_ci);
INSERT INTO hc_t VALUES (1, 'B', 'B', 'a'), (2, 'a', 'a', 'A'), (3, 'b', 'b', 'b'), (4, 'C', 'C', 'B');

-- what a query over the input says
SELECT id, c > lag(c) OVER w AS c_up, u > lag(u) OVER w AS u_up,
       ci = lag(ci) OVER w AS ci_same, ci = 'b' AS ci_b
  FROM hc_t WINDOW w AS (ORDER BY id) ORDER BY id;

-- navigation in DEFINE
SELECT * FROM hc_check($$SELECT * FROM hc_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n ALL ROWS PER MATCH PATTERN (x up*)
  DEFINE up AS up.c > PREV(up.c)) m$$);
SELECT * FROM hc_check($$SELECT * FROM hc_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n ALL ROWS PER MATCH PATTERN (x up*)
  DEFINE up AS up.u > PREV(up.u)) m$$);
SELECT * FROM hc_check($$SELECT id, n FROM hc_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n ALL ROWS PER MATCH PATTERN (x same*)
  DEFINE same AS same.ci = PREV(same.ci)) m$$);
-- a constant, an expression over the column, and the column's collation
-- overridden by an explicit one
SELECT * FROM hc_check($$SELECT id, n FROM hc_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n ALL ROWS PER MATCH PATTERN (x? b+)
  DEFINE b AS b.ci = 'b') m$$);
SELECT * FROM hc_check($$SELECT id, n FROM hc_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n ALL ROWS PER MATCH PATTERN (x? b+)
  DEFINE b AS b.ci || '' = 'b') m$$);
SELECT * FROM hc_check($$SELECT id, n FROM hc_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n ALL ROWS PER MATCH PATTERN (x? b+)
  DEFINE b AS b.ci = 'b' COLLATE "C") m$$);
SELECT * FROM hc_check($$SELECT id, n FROM hc_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n ALL ROWS PER MATCH PATTERN (x up*)
  DEFINE up AS up.c COLLATE "und-x-icu" > PREV(up.c)) m$$);

-- MEASURES: navigation, aggregates (min/max order by the collation) and
-- comparisons of their results
SELECT * FROM hc_check($$SELECT * FROM hc_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES min(c) AS min_c, max(c) AS max_c, min(u) AS min_u, max(u) AS max_u,
           LAST(c) > FIRST(c) AS c_rose, max(u) = 'C' AS u_top, LAST(ci) = 'b' AS ci_last_b
  PATTERN (x+) DEFINE x AS true) m$$);
-- an aggregate in DEFINE
SELECT * FROM hc_check($$SELECT id, n FROM hc_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n ALL ROWS PER MATCH PATTERN (x+)
  DEFINE x AS max(x.c) <= 'a') m$$);
SELECT * FROM hc_check($$SELECT id, n FROM hc_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n ALL ROWS PER MATCH PATTERN (x+)
  DEFINE x AS max(x.u) <= 'a') m$$);

-- a view keeps the collations it was made with
SELECT match_recognize_create_view('hc_v', $$SELECT * FROM hc_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n, max(c) AS max_c ALL ROWS PER MATCH PATTERN (x up*)
  DEFINE up AS up.c > PREV(up.c)) m$$);
SELECT id, n, max_c FROM hc_v ORDER BY id;

DROP VIEW hc_v;
DROP TABLE hc_t;
DROP COLLATION hc_ci;
DROP FUNCTION hc_check(text);

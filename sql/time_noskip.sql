--
-- Time in patterns: AFTER MATCH NO SKIP.  Every accepting path of every
-- start is a match (skip-till-any-match, Flink's followedByAny): no
-- preference pruning, no skip; matches come in order of start, then end,
-- then preference, MATCH_NUMBER() numbering them so; a mapping found by two
-- paths is one match (mr_match.c, "Every match").
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY default
\set SHOW_CONTEXT never
\set st '\\echo SQLSTATE :LAST_ERROR_SQLSTATE'

CREATE TABLE tn_ev (k int, ts int, c text);
INSERT INTO tn_ev VALUES
  (1, 1, 'a'), (1, 2, 'a'), (1, 3, 'x'), (1, 4, 'b'), (1, 5, 'b'),
  (2, 1, 'b'), (2, 2, 'a'), (2, 9, 'b'),
  (3, 1, 'a'), (3, 2, 'x');

-- one match per (A, B) pair: by start, then end
SELECT * FROM match_recognize($$tn_ev MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES MATCH_NUMBER() AS n, A.ts AS a, B.ts AS b, count(*) AS len
  AFTER MATCH NO SKIP
  PATTERN (A ->> B)
  DEFINE A AS c = 'a', B AS c = 'b'
) AS m$$) AS m(k int, n bigint, a int, b int, len bigint);

-- the same through the statement rewriter (the custom scan) and the function
CREATE TEMP TABLE tn_q AS SELECT $q$SELECT * FROM tn_ev MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES MATCH_NUMBER() AS n, A.ts AS a, B.ts AS b, count(*) AS len
  AFTER MATCH NO SKIP
  PATTERN (A ->> B)
  DEFINE A AS c = 'a', B AS c = 'b'
) AS m$q$ AS q;
SELECT match_recognize_sql(q) AS sql FROM tn_q \gset
EXPLAIN (COSTS OFF) :sql;
CREATE TEMP TABLE tn_scan AS :sql;
SET match_recognize.enable_custom_scan = off;
CREATE TEMP TABLE tn_fn AS :sql;
RESET match_recognize.enable_custom_scan;
SELECT (SELECT count(*) FROM tn_scan) AS scan_rows,
       (SELECT count(*) FROM (SELECT * FROM tn_scan EXCEPT ALL SELECT * FROM tn_fn) d) AS scan_not_fn,
       (SELECT count(*) FROM (SELECT * FROM tn_fn EXCEPT ALL SELECT * FROM tn_scan) d) AS fn_not_scan;

-- a view, and a generic prepared plan with the partition as a parameter
SELECT match_recognize_create_view('tn_view', q) FROM tn_q;
SELECT count(*) AS view_rows,
       (SELECT count(*) FROM (SELECT * FROM tn_view EXCEPT ALL SELECT * FROM tn_scan) d) AS view_not_scan
FROM tn_view;
SET plan_cache_mode = force_generic_plan;
SELECT replace(match_recognize_sql(q || ' WHERE k = $1'), '$1', '$1') AS psql FROM tn_q \gset
PREPARE tn_p(int) AS :psql;
EXECUTE tn_p(1);
EXECUTE tn_p(2);
RESET plan_cache_mode;
DEALLOCATE tn_p;

-- -> takes the first B only (one match per A); the default skip, one match
SELECT * FROM match_recognize($$tn_ev MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts MEASURES MATCH_NUMBER() AS n, A.ts AS a, B.ts AS b
  AFTER MATCH NO SKIP PATTERN (A -> B) DEFINE A AS c = 'a', B AS c = 'b'
) AS m$$) AS m(k int, n bigint, a int, b int);
SELECT * FROM match_recognize($$tn_ev MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts MEASURES MATCH_NUMBER() AS n, A.ts AS a, B.ts AS b
  PATTERN (A ->> B) DEFINE A AS c = 'a', B AS c = 'b'
) AS m$$) AS m(k int, n bigint, a int, b int);

-- every path of a quantifier, and in preference order at one (start, end)
CREATE TABLE tn_s (k int, t int, l text);
INSERT INTO tn_s VALUES (1, 1, 'ab'), (1, 2, 'ab'), (1, 3, 'x');
SELECT * FROM match_recognize($$tn_s MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY t
  MEASURES MATCH_NUMBER() AS n, FIRST(t) AS s, LAST(t) AS e, count(*) AS len,
           string_agg(CLASSIFIER(), ' ') AS labels
  AFTER MATCH NO SKIP
  PATTERN ((A | B) (B | A)?)
  DEFINE A AS strpos(l, 'a') > 0, B AS strpos(l, 'b') > 0
) AS m$$) AS m(k int, n bigint, s int, e int, len bigint, labels text);

-- two paths of one mapping are one match; empty matches are matches
SELECT * FROM match_recognize($$tn_s MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY t
  MEASURES MATCH_NUMBER() AS n, FIRST(t) AS s, count(*) AS len, string_agg(CLASSIFIER(), ' ') AS labels
  AFTER MATCH NO SKIP
  PATTERN ((A | A)*)
  DEFINE A AS strpos(l, 'a') > 0
) AS m$$) AS m(k int, n bigint, s int, len bigint, labels text);

-- ALL ROWS PER MATCH: each match's rows; WITH UNMATCHED ROWS: rows in none
SELECT * FROM match_recognize($$tn_ev MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES MATCH_NUMBER() AS n, CLASSIFIER() AS cls
  ALL ROWS PER MATCH
  AFTER MATCH NO SKIP
  PATTERN (A ->> B)
  DEFINE A AS c = 'a', B AS c = 'b'
) AS m$$) AS m(k int, ts int, n bigint, cls text, c text) WHERE k = 1;
SELECT * FROM match_recognize($$tn_ev MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES MATCH_NUMBER() AS n, CLASSIFIER() AS cls
  ALL ROWS PER MATCH WITH UNMATCHED ROWS
  AFTER MATCH NO SKIP
  PATTERN (A B*)
  DEFINE A AS c = 'a', B AS c = 'b'
) AS m$$) AS m(k int, ts int, n bigint, cls text, c text);

-- windows bound the pairs; timeout rows for the starts with no match
SELECT * FROM match_recognize($$tn_ev MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES MATCH_NUMBER() AS n, A.ts AS a, B.ts AS b, TIMED_OUT() AS tmo,
           MATCH_DEADLINE() AS deadline
  ONE ROW PER MATCH WITH TIMEOUT ROWS
  AFTER MATCH NO SKIP
  PATTERN (A ->> B)
  WITHIN 2 FROM A TO B
  DEFINE A AS c = 'a', B AS c = 'b'
) AS m$$) AS m(k int, n bigint, a int, b int, tmo bool, deadline int);

-- absence: every (A, B) pair with no x within 3 of B
SELECT * FROM match_recognize($$tn_ev MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES MATCH_NUMBER() AS n, A.ts AS a, B.ts AS b, MATCH_DEADLINE() AS deadline
  AFTER MATCH NO SKIP
  PATTERN (A ->> B -> NOT X)
  WITHIN 3 FROM B TO X
  CLOCK 100
  DEFINE A AS c = 'a', B AS c = 'b', X AS c = 'x'
) AS m$$) AS m(k int, n bigint, a int, b int, deadline int);

-- the live paths are bounded by match_recognize.max_threads
CREATE TABLE tn_big AS SELECT 1 AS k, g AS ts, 'a'::text AS c FROM generate_series(1, 200) g;
SET match_recognize.max_threads = 100;
SELECT count(*) FROM match_recognize($$tn_big MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts MEASURES A.ts AS a
  AFTER MATCH NO SKIP PATTERN (A ->> B) DEFINE A AS c = 'a', B AS c = 'a'
) AS m$$) AS m(k int, a int);
:st
-- ... and by a window
SELECT count(*) FROM match_recognize($$tn_big MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts MEASURES A.ts AS a
  AFTER MATCH NO SKIP PATTERN (A ->> B) WITHIN 5 DEFINE A AS c = 'a', B AS c = 'a'
) AS m$$) AS m(k int, a int);
RESET match_recognize.max_threads;

DROP VIEW tn_view;
DROP TABLE tn_ev, tn_s, tn_big;

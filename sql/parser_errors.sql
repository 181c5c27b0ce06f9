--
-- Syntax errors of the clause parser and the statement rewriter, as psql
-- shows them: message, caret under the offending token, hint, and the
-- SQLSTATE (echoed after each statement).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY default
\set SHOW_CONTEXT never
\set st '\\echo SQLSTATE :LAST_ERROR_SQLSTATE'

CREATE TABLE pe_t (id int, x int, y int, v int);
INSERT INTO pe_t VALUES (1, 1, 1, 3), (2, 1, 2, 3), (3, 2, 3, 2), (4, 2, 4, 5);

-- A word after a PARTITION BY / ORDER BY item is not an alias: a syntax
-- error at that word, not a silently different key.
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY y DESCENDING PATTERN (A))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (PARTITION BY x y ORDER BY id PATTERN (A))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY x SEEK PATTERN (A))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (PARTITION BY x AS k ORDER BY id PATTERN (A))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id DESC y PATTERN (A))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id NULLS LATS PATTERN (A))$$);
:st
-- the same class: DEFINE and WITHIN take no alias, a measure one at most
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (A B) DEFINE A AS v > 2 B AS v < 3)$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (A) WITHIN 2 ids DEFINE A AS true)$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id MEASURES MATCH_NUMBER() mn PATERN (A))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id MEASURES count(*) n m PATTERN (A))$$);
:st
-- a misspelled FROM item keyword, a reserved word after the item
SELECT * FROM match_recognize($$pe_t MATCH_RECOGNISE (ORDER BY id PATTERN (A))$$) AS m(id int);
:st
SELECT * FROM match_recognize($$pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (A)) ORDER BY id$$) AS m(id int);
:st

-- Clauses out of order, repeated or misspelled say so; "requires a PATTERN
-- clause" only when there is none.
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id DEFINE A AS true PATTERN (A))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (A) MEASURES count(*) AS c)$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (PATTERN (A) ORDER BY id)$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (A) PATTERN (B))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id ONE ROW PER MATCH ALL ROWS PER MATCH PATTERN (A))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (A B) DEFINE A AS v > 2 DEFINE B AS true)$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATERN (A))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (A) DEFIN A AS true)$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id MESURES count(*) AS c PATTERN (A))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id AFTER MATCH SKIP PAST LAST ROWS PATTERN (A))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH OMIT EMPTY MATCH PATTERN (A))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id AFTER MATCH SKIP TO PATTERN (A))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (A) SUBSET U = (A), DEFINE A AS true)$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id MEASURES count(*) AS c DEFINE A AS true)$$);
:st

-- Row pattern syntax the standard and Trino reject: an upper bound of 0,
-- empty alternatives, PERMUTE elements, exclusions and patterns.
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (A{0,0}))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (A{,0}))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (A{0}?))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (A{3,2}))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (A{}))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN ((B|)))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN ((|B)))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (A||B))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (PERMUTE()))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (PERMUTE(A,)))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (A {- -}))$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN ())$$);
:st

-- MATCH_RECOGNIZE cannot be nested inside an expression of another
-- (Oracle's ORA-62519), whether written as a FROM item or as the function
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id MEASURES count(*) AS c PATTERN (A+)
  DEFINE A AS v > (SELECT count(*) FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (B)) i)) m$$);
:st
SELECT match_recognize_sql($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES (SELECT max(c) FROM match_recognize('pe_t MATCH_RECOGNIZE (ORDER BY id MEASURES count(*) AS c PATTERN (B))') AS i(c bigint)) AS c
  PATTERN (A+)) m$$);
:st
SELECT * FROM match_recognize($$pe_t MATCH_RECOGNIZE (ORDER BY id MEASURES count(*) AS c PATTERN (A+)
  DEFINE A AS v > (SELECT count(*) FROM pe_t MATCH_RECOGNIZE (ORDER BY id PATTERN (B)) i))$$) AS m(c bigint);
:st
SELECT match_recognize_create_view('pe_nested', $$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id
  PATTERN (A) WITHIN (SELECT i FROM match_recognize('') AS m(i int)))$$);
:st

-- Neighbours that stay valid: {,} is *, quantified anchors and (), the
-- explicit empty alternative (), an input that uses MATCH_RECOGNIZE, an
-- Oracle alias without AS, expressions that go on after an operand.
SELECT * FROM mr_run($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES FIRST(id) AS f, LAST(id) AS l, count(*) n PATTERN (A{,} $+ ()*) DEFINE A AS v >= 3) m$$);
SELECT * FROM mr_run($$SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id
  MEASURES FIRST(id) AS f, LAST(id) AS l ONE ROW PER MATCH PATTERN ((B | ()) A) DEFINE B AS v = 2, A AS v = 5) m$$);
SELECT * FROM mr_run($$SELECT * FROM (SELECT * FROM pe_t MATCH_RECOGNIZE (ORDER BY id
    MEASURES count(*) AS c ALL ROWS PER MATCH PATTERN (A+) DEFINE A AS v = 3) i) s
  MATCH_RECOGNIZE (ORDER BY id MEASURES sum(c) AS total PATTERN (X+)) o$$);
SELECT * FROM mr_run($$SELECT * FROM pe_t MATCH_RECOGNIZE (PARTITION BY x ORDER BY id DESC NULLS LAST
  MEASURES count(*) n, LAST(id)::double precision AS l
  PATTERN (A+)
  DEFINE A AS v IS NOT DISTINCT FROM PREV(v) OR PREV(v) IS NULL
    OR CASE WHEN v BETWEEN 1 AND 2 THEN y::text NOT LIKE '9%' ELSE false END
    OR (now() AT TIME ZONE 'UTC') < timestamp with time zone '2000-01-01 00:00+00') m
  ORDER BY x$$);

DROP TABLE pe_t;

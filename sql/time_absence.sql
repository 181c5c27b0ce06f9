--
-- Time in patterns, run: "->" (skip to the first row that can start the
-- next pattern, consuming it), "->>", windows "WITHIN b FROM v TO w",
-- "NOT v" decided by its deadline (relaxed), by the next row (strict), or
-- by the clock at the end of the input (CLOCK MAX, the default, or CLOCK c),
-- MATCH_DEADLINE(); the seed's alert rule and its three asserted examples.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY default
\set SHOW_CONTEXT never
\set st '\\echo SQLSTATE :LAST_ERROR_SQLSTATE'

CREATE TABLE tk (key int, ts bigint, price bigint, vol bigint);
CREATE FUNCTION seed_alerts() RETURNS TABLE (key int, deadline bigint, r bigint, s bigint)
LANGUAGE sql AS $f$
SELECT * FROM match_recognize($$tk MATCH_RECOGNIZE (
  PARTITION BY key ORDER BY ts
  MEASURES MATCH_DEADLINE() AS deadline, R.ts AS r, S.ts AS s
  ONE ROW PER MATCH
  AFTER MATCH SKIP TO LAST S
  PATTERN (R -> S -> NOT REV)
  WITHIN 60000 FROM R TO S, 10000 FROM S TO REV
  DEFINE
    R   AS R.price * 100 >= PREV(R.price) * 102,
    S   AS S.vol >= 1000,
    REV AS REV.price * 100 <= S.price * 99
) AS m$$) AS m(key int, deadline bigint, r bigint, s bigint) ORDER BY 1, 2
$f$;

-- the seed's example 1: +2.5 %, spike 20 s later, quiet 10 s -> final at 31 s
INSERT INTO tk VALUES (1, 0, 10000, 10), (1, 1000, 10250, 10), (1, 21000, 10260, 5000), (1, 40000, 10270, 10);
SELECT * FROM seed_alerts();
-- example 2: a -1.5 % reversal 4 s after the spike
TRUNCATE tk;
INSERT INTO tk VALUES (1, 0, 10000, 10), (1, 1000, 10250, 10), (1, 21000, 10260, 5000), (1, 25000, 10100, 10),
  (1, 90000, 10100, 10);
SELECT * FROM seed_alerts();
-- example 3: the spike 69 s after the rise
TRUNCATE tk;
INSERT INTO tk VALUES (1, 0, 10000, 10), (1, 1000, 10250, 10), (1, 70000, 10250, 9000), (1, 200000, 10250, 10);
SELECT * FROM seed_alerts();

-- the windows' edges: a spike exactly 60 s after the rise counts, 1 ms later not;
-- a reversal exactly at the deadline kills, 1 ms later it does not
TRUNCATE tk;
INSERT INTO tk VALUES
  (1, 0, 10000, 10), (1, 1000, 10250, 10), (1, 61000, 10260, 5000), (1, 90000, 10270, 10),
  (2, 0, 10000, 10), (2, 1000, 10250, 10), (2, 61001, 10260, 5000), (2, 90000, 10270, 10),
  (3, 0, 10000, 10), (3, 1000, 10250, 10), (3, 2000, 10260, 5000), (3, 12000, 10100, 10), (3, 90000, 10100, 10),
  (4, 0, 10000, 10), (4, 1000, 10250, 10), (4, 2000, 10260, 5000), (4, 12001, 10100, 10), (4, 90000, 10100, 10);
SELECT * FROM seed_alerts();

-- one clock for all keys: key 2 gets no row after its spike, and key 1's
-- last row (ts 100000) passes key 2's deadline (22000); key 3's deadline
-- (100005) is not passed by any row: it is not decided, so not output;
-- and the result is not in partition order (ORDER BY sorts it)
TRUNCATE tk;
INSERT INTO tk VALUES
  (1, 0, 10000, 10), (1, 100000, 10000, 10),
  (2, 0, 10000, 10), (2, 1000, 10250, 10), (2, 12000, 10260, 5000),
  (3, 0, 10000, 10), (3, 31000, 10250, 10), (3, 90005, 10260, 5000);
SELECT * FROM seed_alerts();
-- ... until a row passes it; a filter on the key stays above the clock
INSERT INTO tk VALUES (1, 100006, 10000, 10);
SELECT * FROM seed_alerts();
SELECT match_recognize_sql($$SELECT key, deadline FROM tk MATCH_RECOGNIZE (
  PARTITION BY key ORDER BY ts MEASURES MATCH_DEADLINE() AS deadline
  AFTER MATCH SKIP TO LAST S PATTERN (R -> S -> NOT REV)
  WITHIN 60000 FROM R TO S, 10000 FROM S TO REV
  DEFINE R AS R.price * 100 >= PREV(R.price) * 102, S AS S.vol >= 1000,
    REV AS REV.price * 100 <= S.price * 99) AS m WHERE key IN (2, 3) ORDER BY key$$) AS q \gset
:q;
EXPLAIN (COSTS OFF) :q;
-- a rise and its spike consume the rises waiting before the spike: one alert
-- for the rises at 1000 and 2000, the first (its leftmost); a rise after the
-- spike starts its own
TRUNCATE tk;
INSERT INTO tk VALUES (5, 0, 10000, 10), (5, 1000, 10250, 10), (5, 2000, 10500, 10), (5, 3000, 10510, 5000),
  (5, 3500, 10800, 10), (5, 4000, 10810, 2000), (5, 50000, 10810, 10);
SELECT * FROM seed_alerts();

-- CLOCK c: the deadlines c passes (strictly), whatever the input's rows
CREATE TABLE ev (ref int, ts int, kind text);
INSERT INTO ev VALUES (1, 10, 'pay'), (1, 12, 'confirm'), (2, 20, 'pay'), (3, 30, 'pay'), (3, 36, 'confirm'),
  (4, 40, 'pay'), (4, 45, 'confirm');
CREATE FUNCTION unconfirmed(clock text) RETURNS TABLE (ref int, paid int, deadline int)
LANGUAGE plpgsql AS $f$
BEGIN
  RETURN QUERY EXECUTE format($q$SELECT * FROM match_recognize(%L) AS m(ref int, paid int, deadline int) ORDER BY 1$q$,
    'ev MATCH_RECOGNIZE (PARTITION BY ref ORDER BY ts MEASURES PAY.ts AS paid, MATCH_DEADLINE() AS deadline
     PATTERN (PAY -> NOT CONF) WITHIN 5 FROM PAY TO CONF ' || clock ||
    ' DEFINE PAY AS kind = ''pay'', CONF AS kind = ''confirm'')');
END
$f$;
-- ref 1 confirmed; ref 2 decided by the input's clock (45 > 25); ref 3 confirmed
-- 6 after paying (too late: a timeout); ref 4 confirmed exactly at the deadline
SELECT * FROM unconfirmed('');
SELECT * FROM unconfirmed('CLOCK MAX');
SELECT * FROM unconfirmed('CLOCK 25');
SELECT * FROM unconfirmed('CLOCK 26');
SELECT * FROM unconfirmed('CLOCK (SELECT max(ts) + 1000 FROM ev)');
SELECT * FROM unconfirmed('CLOCK NULL::int');
:st
SELECT * FROM unconfirmed('CLOCK ts');
:st

-- strict NOT: the next row decides (no window: the end of the partition
-- too); with a window, a later row past it, or the clock
SELECT * FROM match_recognize($$ev MATCH_RECOGNIZE (PARTITION BY ref ORDER BY ts MEASURES PAY.ts AS paid,
  MATCH_DEADLINE() AS d PATTERN (PAY NOT CONF) DEFINE PAY AS kind = 'pay', CONF AS kind = 'confirm')$$)
  AS m(ref int, paid int, d int) ORDER BY 1;
SELECT * FROM match_recognize($$ev MATCH_RECOGNIZE (PARTITION BY ref ORDER BY ts MEASURES PAY.ts AS paid,
  MATCH_DEADLINE() AS d PATTERN (PAY NOT CONF) WITHIN 5 FROM PAY TO CONF
  DEFINE PAY AS kind = 'pay', CONF AS kind = 'confirm')$$)
  AS m(ref int, paid int, d int) ORDER BY 1;

-- "->" consumes: the first row that can start what follows is taken; the
-- filler idiom backtracks, "->>" takes any later one
CREATE TABLE lt (id int, c text);
INSERT INTO lt VALUES (1, 'a'), (2, 'x'), (3, 'b'), (4, 'x'), (5, 'b'), (6, 'c');
SELECT * FROM match_recognize($$lt MATCH_RECOGNIZE (ORDER BY id MEASURES FIRST(id) AS f, LAST(id) AS l,
  count(*) AS n, count(B.*) AS nb PATTERN (A -> B C)
  DEFINE A AS c = 'a', B AS c = 'b', C AS c = 'c')$$) AS m(f int, l int, n bigint, nb bigint);
SELECT * FROM match_recognize($$lt MATCH_RECOGNIZE (ORDER BY id MEASURES FIRST(id) AS f, LAST(id) AS l,
  count(*) AS n, count(B.*) AS nb PATTERN (A X*? B C)
  DEFINE A AS c = 'a', B AS c = 'b', C AS c = 'c')$$) AS m(f int, l int, n bigint, nb bigint);
SELECT * FROM match_recognize($$lt MATCH_RECOGNIZE (ORDER BY id MEASURES FIRST(id) AS f, LAST(id) AS l,
  count(*) AS n, count(B.*) AS nb PATTERN (A ->> B C)
  DEFINE A AS c = 'a', B AS c = 'b', C AS c = 'c')$$) AS m(f int, l int, n bigint, nb bigint);
-- ALL ROWS PER MATCH: the skipped rows are not output (excluded rows)
SELECT * FROM match_recognize($$lt MATCH_RECOGNIZE (ORDER BY id MEASURES CLASSIFIER() AS cls
  ALL ROWS PER MATCH PATTERN (A -> B) DEFINE A AS c = 'a', B AS c = 'b')$$) AS m(id int, cls text, c text);
-- "-> NOT X ->": no x between a and b
SELECT * FROM match_recognize($$lt MATCH_RECOGNIZE (ORDER BY id MEASURES FIRST(id) AS f, LAST(id) AS l
  PATTERN (A -> NOT X -> B) DEFINE A AS c = 'a', B AS c = 'b', X AS c = 'x')$$) AS m(f int, l int);
SELECT * FROM match_recognize($$lt MATCH_RECOGNIZE (ORDER BY id MEASURES FIRST(id) AS f, LAST(id) AS l
  PATTERN (B -> NOT X -> C) DEFINE C AS c = 'c', B AS c = 'b', X AS c = 'x')$$) AS m(f int, l int);
-- a window without TO bounds every row after its anchor
SELECT * FROM match_recognize($$lt MATCH_RECOGNIZE (ORDER BY id MEASURES FIRST(id) AS f, LAST(id) AS l
  PATTERN (A -> B -> C) WITHIN 4 FROM A DEFINE A AS c = 'a', B AS c = 'b', C AS c = 'c')$$) AS m(f int, l int);
SELECT * FROM match_recognize($$lt MATCH_RECOGNIZE (ORDER BY id MEASURES FIRST(id) AS f, LAST(id) AS l
  PATTERN (A -> B -> C) WITHIN 5 FROM A DEFINE A AS c = 'a', B AS c = 'b', C AS c = 'c')$$) AS m(f int, l int);
-- FROM LAST: the deadline moves with each B
SELECT * FROM match_recognize($$lt MATCH_RECOGNIZE (ORDER BY id MEASURES FIRST(id) AS f, LAST(id) AS l
  PATTERN (A (B | X)+ C) WITHIN 1 FROM LAST B TO C DEFINE A AS c = 'a', B AS c = 'b', C AS c = 'c', X AS c = 'x')$$) AS m(f int, l int);
-- -> with WITH UNMATCHED ROWS is refused; the event time must be a number,
-- a date or a timestamp for windows
SELECT * FROM match_recognize($$lt MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH WITH UNMATCHED ROWS
  PATTERN (A -> B) DEFINE A AS c = 'a', B AS c = 'b')$$) AS m(id int, c text);
:st
SELECT * FROM match_recognize($$lt MATCH_RECOGNIZE (ORDER BY c MEASURES FIRST(id) AS f
  PATTERN (A -> B) WITHIN 'x' FROM A TO B DEFINE A AS c = 'a', B AS c = 'b')$$) AS m(f int);
:st
-- an absence variable has no rows
SELECT * FROM match_recognize($$lt MATCH_RECOGNIZE (ORDER BY id MEASURES X.id AS f
  PATTERN (A -> NOT X -> B) DEFINE A AS c = 'a', B AS c = 'b', X AS c = 'x')$$) AS m(f int);
:st
SELECT * FROM match_recognize($$lt MATCH_RECOGNIZE (ORDER BY id MEASURES A.id AS f
  PATTERN (A -> NOT X -> B) DEFINE A AS c = 'a', B AS B.id > X.id, X AS c = 'x')$$) AS m(f int);
:st

-- the automaton lane declines; EXPLAIN says the general matcher runs it
EXPLAIN (COSTS OFF) SELECT * FROM match_recognize($$lt MATCH_RECOGNIZE (ORDER BY id MEASURES FIRST(id) AS f
  PATTERN (A -> B) DEFINE A AS c = 'a', B AS c = 'b')$$) AS m(f int);
SELECT match_recognize_sql($$SELECT * FROM lt MATCH_RECOGNIZE (ORDER BY id MEASURES FIRST(id) AS f
  PATTERN (A -> B) DEFINE A AS c = 'a', B AS c = 'b') AS m$$) AS q \gset
EXPLAIN (COSTS OFF) :q;

DROP FUNCTION seed_alerts(), unconfirmed(text);
DROP TABLE tk, ev, lt;

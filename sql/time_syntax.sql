--
-- Time in patterns, the syntax: "->", "->>", "NOT v", windows
-- "WITHIN b FROM [FIRST | LAST] v TO w, ...", CLOCK, WITH TIMEOUT ROWS /
-- SHOW TIMEOUT MATCHES, AFTER MATCH NO SKIP.  Misuses are syntax errors
-- (42601) with the caret at the construct, naming errors 42704 / 42P20;
-- a construct the engine does not run is refused with 0A000 at the
-- construct (never run with another meaning).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY default
\set SHOW_CONTEXT never
\set st '\\echo SQLSTATE :LAST_ERROR_SQLSTATE'

CREATE TABLE ts_t (k int, ts bigint, price bigint, vol bigint);
INSERT INTO ts_t VALUES (1, 0, 10000, 10), (1, 1000, 10250, 10), (1, 21000, 10260, 5000),
  (1, 40000, 10270, 10);

-- misplaced absences
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (NOT R -> S))$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (R NOT S T))$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (R NOT S*))$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN ((R -> NOT S -> T) U))$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (R -> NOT S | T))$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (R -> NOT S))$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (S R -> NOT S) WITHIN 5)$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts AFTER MATCH SKIP TO S PATTERN (R NOT S))$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (R NOT S) SUBSET U = (R, S))$$) AS m(k int);
:st
-- "->" and "->>"
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (R - > S))$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (R -> S?))$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (R ->>))$$) AS m(k int);
:st
-- windows
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (R -> S) WITHIN 60000 FROM X TO S)$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (R -> NOT S) WITHIN 60000 FROM S TO S)$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (R S) WITHIN 60000 FROM R TO)$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (R S) WITHIN 5 words DEFINE R AS true)$$) AS m(k int);
:st
-- CLOCK, WITH TIMEOUT ROWS, NO SKIP
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (R) CLOCK DEFINE R AS true)$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts PATTERN (R) DEFINE R AS true CLOCK MAX)$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts ONE ROW PER MATCH WITH TIMEOUT MATCHES PATTERN (R))$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts ALL ROWS PER MATCH SHOW TIMEOUT MATCHES OMIT EMPTY MATCHES PATTERN (R))$$) AS m(k int);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (ORDER BY ts AFTER MATCH NO PATTERN (R))$$) AS m(k int);
:st

-- NO SKIP runs (every match of every start: time_noskip), as do timeout
-- rows (time_timeout)
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES R.ts AS r
  AFTER MATCH NO SKIP PATTERN (R S))$$) AS m(k int, r bigint);
-- a plain WITHIN, and an interval qualifier with TO, still run as before
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES R.ts AS r, S.ts AS s
  PATTERN (R S) WITHIN 20000 DEFINE S AS vol >= 1000)$$) AS m(k int, r bigint, s bigint);
CREATE TABLE ts_i (k int, t timestamp, v int);
INSERT INTO ts_i VALUES (1, '2026-01-01 00:00', 1), (1, '2026-01-01 01:20', 2), (1, '2026-01-01 03:00', 3);
SELECT * FROM match_recognize($$ts_i MATCH_RECOGNIZE (PARTITION BY k ORDER BY t MEASURES FIRST(t) AS a, LAST(t) AS b
  PATTERN (X Y+) WITHIN INTERVAL '1:30' HOUR TO MINUTE DEFINE Y AS true)$$) AS m(k int, a timestamp, b timestamp);
-- a variable called NOT, quoted or followed by nothing, is still a variable
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES "NOT".ts AS n
  PATTERN (R "NOT") DEFINE "NOT" AS vol >= 1000)$$) AS m(k int, n bigint);

-- MATCH_DEADLINE() and TIMED_OUT(): of the match, in MEASURES only; a
-- match that no deadline decided has none and is no timeout
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES MATCH_DEADLINE() AS d, TIMED_OUT() AS t, MATCH_NUMBER() AS n PATTERN (A B))$$)
  AS m(k int, d bigint, t bool, n bigint);
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES A.ts AS x
  PATTERN (A B) DEFINE B AS TIMED_OUT())$$) AS m(k int, x bigint);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES max(MATCH_DEADLINE()) AS x PATTERN (A B))$$) AS m(k int, x bigint);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (PARTITION BY k MEASURES MATCH_DEADLINE() AS x
  PATTERN (A B))$$) AS m(k int, x bigint);
:st
SELECT * FROM match_recognize($$ts_t MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES TIMED_OUT(1) AS x PATTERN (A B))$$) AS m(k int, x bool);
:st

DROP TABLE ts_t, ts_i;

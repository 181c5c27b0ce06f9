--
-- Time in patterns: timeout rows (WITH TIMEOUT ROWS, SHOW TIMEOUT MATCHES).
-- A partial match whose window deadline passes (by a later row's time or by
-- the clock) is output with its MEASURES, TIMED_OUT() true, MATCH_DEADLINE()
-- the deadline, no MATCH_NUMBER(); leftmost, and only once no earlier start
-- can still produce a match covering it (mr_match.c, "Timeout rows").
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY default
\set SHOW_CONTEXT never
\set st '\\echo SQLSTATE :LAST_ERROR_SQLSTATE'
SET TimeZone = 'UTC';

-- payments: 'pay' then, maybe, 'confirm' within 5 minutes
CREATE TABLE tt_events (ref int, ts timestamptz, kind text);
INSERT INTO tt_events VALUES
  (1, '2026-03-01 10:00:00', 'pay'), (1, '2026-03-01 10:01:30', 'confirm'),
  (2, '2026-03-01 10:02:00', 'pay'),                                          -- no event after it
  (3, '2026-03-01 10:03:00', 'pay'), (3, '2026-03-01 10:09:00', 'confirm'),   -- 6 min: too late
  (4, '2026-03-01 10:04:00', 'pay'), (4, '2026-03-01 10:09:00', 'confirm'),   -- exactly 5 min
  (5, '2026-03-01 10:20:00', 'pay'),                                          -- deadline after the clock
  (6, '2026-03-01 10:21:00', 'pay'), (6, '2026-03-01 10:21:10', 'confirm'),
  (7, '2026-03-01 10:05:00', 'pay'), (7, '2026-03-01 10:06:00', 'pay'),
  (7, '2026-03-01 10:10:30', 'confirm');

-- one row per payment decided so far: confirmed, or timed out at its deadline
-- (2 by the input's clock, 10:21:10; 3 and 7's first by a later row; 5 not yet)
SELECT * FROM match_recognize($$tt_events MATCH_RECOGNIZE (
  PARTITION BY ref ORDER BY ts
  MEASURES PAY.ts AS paid_at, CONF.ts AS confirmed_at, TIMED_OUT() AS timed_out,
           MATCH_DEADLINE() AS deadline, MATCH_NUMBER() AS n, count(*) AS rows_in
  ONE ROW PER MATCH WITH TIMEOUT ROWS
  PATTERN (PAY -> CONF)
  WITHIN INTERVAL '5 minutes' FROM PAY TO CONF
  DEFINE PAY AS kind = 'pay', CONF AS kind = 'confirm'
) AS m$$) AS m(ref int, paid_at timestamptz, confirmed_at timestamptz, timed_out bool,
              deadline timestamptz, n bigint, rows_in bigint)
ORDER BY ref, paid_at;
-- a given clock (10:30) decides payment 5 too; SHOW TIMEOUT MATCHES is the same
SELECT * FROM match_recognize($$tt_events MATCH_RECOGNIZE (
  PARTITION BY ref ORDER BY ts
  MEASURES PAY.ts AS paid_at, MATCH_DEADLINE() AS deadline
  ONE ROW PER MATCH SHOW TIMEOUT MATCHES
  PATTERN (PAY -> CONF)
  WITHIN INTERVAL '5 minutes' FROM PAY TO CONF
  CLOCK timestamptz '2026-03-01 10:30:00'
  DEFINE PAY AS kind = 'pay', CONF AS kind = 'confirm'
) AS m$$) AS m(ref int, paid_at timestamptz, deadline timestamptz)
WHERE deadline IS NOT NULL ORDER BY ref, paid_at;
-- a clock before payment 2's deadline: not decided, not output
SELECT * FROM match_recognize($$tt_events MATCH_RECOGNIZE (
  PARTITION BY ref ORDER BY ts
  MEASURES PAY.ts AS paid_at, MATCH_DEADLINE() AS deadline
  ONE ROW PER MATCH WITH TIMEOUT ROWS
  PATTERN (PAY -> CONF)
  WITHIN INTERVAL '5 minutes' FROM PAY TO CONF
  CLOCK timestamptz '2026-03-01 10:07:00'
  DEFINE PAY AS kind = 'pay', CONF AS kind = 'confirm'
) AS m$$) AS m(ref int, paid_at timestamptz, deadline timestamptz)
WHERE deadline IS NOT NULL ORDER BY ref, paid_at;
-- ALL ROWS PER MATCH: the partial's mapped rows (7's skipped second 'pay' is
-- no row of it, but counted by count(*))
SELECT * FROM match_recognize($$tt_events MATCH_RECOGNIZE (
  PARTITION BY ref ORDER BY ts
  MEASURES TIMED_OUT() AS timed_out, MATCH_DEADLINE() AS deadline, CLASSIFIER() AS cl,
           count(*) AS c, MATCH_NUMBER() AS n
  ALL ROWS PER MATCH WITH TIMEOUT ROWS
  PATTERN (PAY -> CONF)
  WITHIN INTERVAL '5 minutes' FROM PAY TO CONF
  DEFINE PAY AS kind = 'pay', CONF AS kind = 'confirm'
) AS m$$) AS m(ref int, ts timestamptz, timed_out bool, deadline timestamptz, cl text,
              c bigint, n bigint, kind text)
WHERE ref IN (3, 4, 7) ORDER BY ref, ts;

-- integer times, strict contiguity, today's WITHIN
CREATE TABLE tt_s (k int, t int, l text);
CREATE FUNCTION tt_abc(skip text) RETURNS TABLE (k int, a int, last_t int, cl text, tmo bool, dl int, n bigint)
LANGUAGE plpgsql AS $f$
BEGIN
  RETURN QUERY EXECUTE format($q$SELECT * FROM match_recognize($$tt_s MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY t
    MEASURES A.t AS a, LAST(t) AS last_t, CLASSIFIER() AS cl, TIMED_OUT() AS tmo,
             MATCH_DEADLINE() AS dl, MATCH_NUMBER() AS n
    ONE ROW PER MATCH WITH TIMEOUT ROWS
    AFTER MATCH %s
    PATTERN (A B+ C)
    WITHIN 10
    DEFINE A AS l = 'a', B AS l = 'b', C AS l = 'c'
  ) AS m$$) AS m(k int, a int, last_t int, cl text, tmo bool, dl int, n bigint) ORDER BY k, a$q$, skip);
END
$f$;
INSERT INTO tt_s VALUES
  (1, 0, 'a'), (1, 5, 'b'), (1, 11, 'c'),                 -- c past 0 + 10: timed out after B
  (2, 0, 'a'), (2, 5, 'b'), (2, 10, 'c'),                 -- c at the deadline: a match
  (3, 0, 'a'), (3, 5, 'b'), (3, 6, 'x'), (3, 30, 'y'),    -- x contradicts: no timeout
  (4, 0, 'a'), (4, 2, 'a'), (4, 3, 'b'), (4, 20, 'c'),    -- start 0 dies at a (no B), 2 times out
  (5, 0, 'a'), (5, 1, 'b'), (5, 2, 'b'), (5, 3, 'b'),     -- the end decides: 0 + 10 < clock 30
  (6, 0, 'a'), (6, 1, 'b'), (6, 2, 'c'), (6, 3, 'a'), (6, 4, 'b'), (6, 14, 'c');  -- a match, then a timeout
SELECT * FROM tt_abc('SKIP PAST LAST ROW');
-- the clock (the input's largest time, 30) has not passed 25 + 10 yet
INSERT INTO tt_s VALUES (7, 25, 'a'), (7, 26, 'b');
SELECT * FROM tt_abc('SKIP PAST LAST ROW') WHERE k = 7;
INSERT INTO tt_s VALUES (8, 40, 'x');
SELECT * FROM tt_abc('SKIP PAST LAST ROW') WHERE k = 7;

-- finality: start 1 (a D) times out at 5 while start 0 (an A) is still
-- live; start 0's match then covers it, so under SKIP PAST LAST ROW it never
-- was an attempt; under SKIP TO NEXT ROW it is searched again and times out
CREATE TABLE tt_ad (k int, t int, l text);
CREATE FUNCTION tt_ad(skip text) RETURNS TABLE (k int, first_t int, last_t int, cl text, tmo bool, dl int, n bigint)
LANGUAGE plpgsql AS $f$
BEGIN
  RETURN QUERY EXECUTE format($q$SELECT * FROM match_recognize($$tt_ad MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY t
    MEASURES FIRST(t) AS first_t, LAST(t) AS last_t, CLASSIFIER() AS cl, TIMED_OUT() AS tmo,
             MATCH_DEADLINE() AS dl, MATCH_NUMBER() AS n
    ONE ROW PER MATCH WITH TIMEOUT ROWS
    AFTER MATCH %s
    PATTERN ((A | D) X*? C)
    WITHIN 20 FROM A TO C, 2 FROM D TO C
    DEFINE A AS l = 'a', D AS l = 'd', C AS l = 'c'
  ) AS m$$) AS m(k int, first_t int, last_t int, cl text, tmo bool, dl int, n bigint)$q$, skip);
END
$f$;
INSERT INTO tt_ad VALUES (1, 0, 'a'), (1, 1, 'd'), (1, 2, 'y'), (1, 3, 'y'), (1, 5, 'c');
SELECT * FROM tt_ad('SKIP PAST LAST ROW');
SELECT * FROM tt_ad('SKIP TO NEXT ROW');
-- leftmost order: start 1 times out at 5 (deadline 3), start 0 at 25
-- (deadline 20); start 1 waits for start 0 and comes after it
TRUNCATE tt_ad;
INSERT INTO tt_ad VALUES (1, 0, 'a'), (1, 1, 'd'), (1, 2, 'y'), (1, 5, 'y'), (1, 25, 'y');
SELECT * FROM tt_ad('SKIP PAST LAST ROW');
-- WITH UNMATCHED ROWS: a timeout row's rows are still unmatched rows
SELECT * FROM match_recognize($$tt_ad MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY t
  MEASURES TIMED_OUT() AS tmo, MATCH_DEADLINE() AS dl, MATCH_NUMBER() AS n, CLASSIFIER() AS cl
  ALL ROWS PER MATCH WITH UNMATCHED ROWS WITH TIMEOUT ROWS
  PATTERN ((A | D) X*? C)
  WITHIN 20 FROM A TO C, 2 FROM D TO C
  DEFINE A AS l = 'a', D AS l = 'd', C AS l = 'c'
) AS m$$) AS m(k int, t int, tmo bool, dl int, n bigint, cl text, l text);

CREATE TABLE tt_w (k int, t int, l text);
INSERT INTO tt_w VALUES (1, 0, 'a'), (1, 2, 'a'), (1, 5, 'b'), (1, 9, 'c'), (1, 11, 'd'), (1, 40, 'x');
-- windows anchored at a variable: A's window (10) on D, B's (3) on C
SELECT * FROM match_recognize($$tt_w MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY t
  MEASURES FIRST(A.t) AS a, LAST(t) AS last_t, TIMED_OUT() AS tmo, MATCH_DEADLINE() AS dl
  ONE ROW PER MATCH WITH TIMEOUT ROWS
  PATTERN (A+ B C D)
  WITHIN 10 FROM A TO D, 3 FROM B TO C
  DEFINE A AS l = 'a', B AS l = 'b', C AS l = 'c', D AS l = 'd'
) AS m$$) AS m(k int, a int, last_t int, tmo bool, dl int) ORDER BY k, a;

-- FROM LAST A: a path that may still map an A (which moves the deadline)
-- does not expire; one past its last A does (at 6 in partitions 1 and 3:
-- a start's first expired path is its timeout row, unless it matches)
CREATE TABLE tt_l (k int, t int, l text);
INSERT INTO tt_l VALUES (1, 0, 'a'), (1, 6, 'a'), (1, 10, 'b'),   -- last A at 6: b by 11
                        (2, 0, 'a'), (2, 12, 'b'),
                        (3, 0, 'a'), (3, 6, 'a'), (3, 12, 'x');
SELECT * FROM match_recognize($$tt_l MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY t
  MEASURES FIRST(A.t) AS a, LAST(t) AS last_t, TIMED_OUT() AS tmo, MATCH_DEADLINE() AS dl
  ONE ROW PER MATCH WITH TIMEOUT ROWS
  PATTERN (A+ B)
  WITHIN 5 FROM LAST A TO B
  DEFINE A AS l = 'a', B AS l = 'b'
) AS m$$) AS m(k int, a int, last_t int, tmo bool, dl int) ORDER BY k, a;
SELECT * FROM match_recognize($$tt_l MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY t
  MEASURES FIRST(A.t) AS a, LAST(t) AS last_t, TIMED_OUT() AS tmo, MATCH_DEADLINE() AS dl
  ONE ROW PER MATCH WITH TIMEOUT ROWS
  PATTERN (A A? -> B)
  WITHIN 5 FROM LAST A TO B
  DEFINE A AS l = 'a', B AS l = 'b'
) AS m$$) AS m(k int, a int, last_t int, tmo bool, dl int) ORDER BY k, a;

-- the seed's rule with timeout rows: a rise with no spike within 60 s times
-- out (its window R TO S); the absence's own deadline decides a match, never
-- a timeout
CREATE TABLE tt_tk (key int, ts bigint, price bigint, vol bigint);
INSERT INTO tt_tk VALUES
  (1, 0, 10000, 10), (1, 1000, 10250, 10), (1, 70000, 10260, 5000), (1, 200000, 10270, 10),
  (2, 0, 10000, 10), (2, 1000, 10250, 10), (2, 21000, 10260, 5000), (2, 40000, 10270, 10);
SELECT * FROM match_recognize($$tt_tk MATCH_RECOGNIZE (
  PARTITION BY key ORDER BY ts
  MEASURES R.ts AS r, S.ts AS s, TIMED_OUT() AS tmo, MATCH_DEADLINE() AS deadline
  ONE ROW PER MATCH WITH TIMEOUT ROWS
  AFTER MATCH SKIP TO LAST S
  PATTERN (R -> S -> NOT REV)
  WITHIN 60000 FROM R TO S, 10000 FROM S TO REV
  DEFINE
    R   AS R.price * 100 >= PREV(R.price) * 102,
    S   AS S.vol >= 1000,
    REV AS REV.price * 100 <= S.price * 99
) AS m$$) AS m(key int, r bigint, s bigint, tmo bool, deadline bigint) ORDER BY 1, 2;

-- errors
SELECT * FROM match_recognize($$tt_s MATCH_RECOGNIZE (PARTITION BY k ORDER BY t MEASURES A.t AS a
  ONE ROW PER MATCH WITH TIMEOUT ROWS PATTERN (A B))$$) AS m(k int, a int);
:st
CREATE TABLE tt_n (k int, t numeric, l text);
SELECT * FROM match_recognize($$tt_n MATCH_RECOGNIZE (PARTITION BY k ORDER BY t MEASURES A.t AS a
  ONE ROW PER MATCH WITH TIMEOUT ROWS PATTERN (A B) WITHIN 1)$$) AS m(k int, a numeric);
:st

DROP FUNCTION tt_abc(text), tt_ad(text);
DROP TABLE tt_events, tt_s, tt_ad, tt_w, tt_l, tt_tk, tt_n;

--
-- Time in patterns driven by a clock, as a stream will drive it: the
-- partitions' rows pushed in event-time order into partition runs, and
-- before each row the clock of every run whose next deadline it passes
-- advanced (mr_partrun_next_deadline / mr_partrun_advance_clock, through
-- the test-only partrun_check in mode 'clock').  The result must be the
-- batch result (CLOCK MAX): decisions by the clock in partitions that get
-- no more rows, deadlines the clock has not passed left undecided.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY terse
CREATE FUNCTION pg_temp.partrun_check(text, text, boolean) RETURNS SETOF record
  AS '$libdir/match_recognize', 'match_recognize_partrun_check' LANGUAGE C STRICT;

CREATE TABLE ck (key int, ts bigint, price bigint, vol bigint);
INSERT INTO ck VALUES
  (1, 0, 10000, 10), (1, 1000, 10250, 10), (1, 21000, 10260, 5000), (1, 40000, 10270, 10),
  (2, 0, 10000, 10), (2, 1000, 10250, 10), (2, 21000, 10260, 5000), (2, 25000, 10100, 10),
  (3, 0, 10000, 10), (3, 1000, 10250, 10), (3, 12000, 10260, 5000),
  (4, 0, 10000, 10), (4, 31000, 10250, 10), (4, 90005, 10260, 5000),
  (5, 0, 10000, 10), (5, 1000, 10250, 10), (5, 2000, 10500, 10), (5, 3000, 10510, 5000),
  (5, 3500, 10800, 10), (5, 4000, 10810, 2000),
  (6, 100000, 10000, 10);
CREATE FUNCTION ck_item() RETURNS text LANGUAGE sql AS $f$SELECT $i$ck MATCH_RECOGNIZE (
  PARTITION BY key ORDER BY ts MEASURES MATCH_DEADLINE() AS deadline, S.ts AS s
  AFTER MATCH SKIP TO LAST S PATTERN (R -> S -> NOT REV)
  WITHIN 60000 FROM R TO S, 10000 FROM S TO REV
  DEFINE R AS R.price * 100 >= PREV(R.price) * 102, S AS S.vol >= 1000,
    REV AS REV.price * 100 <= S.price * 99)$i$$f$;
-- batch: key 1 by its row at 40000, 3 and 5 by the clock (100000), 4 not yet
SELECT * FROM match_recognize(ck_item()) AS m(key int, deadline bigint, s bigint) ORDER BY 1, 2;
-- the same, driven by the clock
SELECT * FROM pg_temp.partrun_check(ck_item(), 'clock', false) AS m(key int, deadline bigint, s bigint)
ORDER BY 1, 2;
-- without the clock, partition runs decide only by rows (the end of a
-- run's rows decides nothing that waits for a clock): key 1
SELECT * FROM pg_temp.partrun_check(ck_item(), 'interleave', false) AS m(key int, deadline bigint, s bigint);
SELECT * FROM pg_temp.partrun_check(ck_item(), 'restore', false) AS m(key int, deadline bigint, s bigint);
-- a clock the deadline of key 4 has passed
INSERT INTO ck VALUES (6, 100006, 10000, 10);
SELECT * FROM pg_temp.partrun_check(ck_item(), 'clock', false) AS m(key int, deadline bigint, s bigint)
ORDER BY 1, 2;
-- a query without time in patterns has no clock mode
SELECT * FROM pg_temp.partrun_check('ck MATCH_RECOGNIZE (ORDER BY ts MEASURES A.ts AS a PATTERN (A))',
  'clock', false) AS m(a bigint);

DROP FUNCTION ck_item();
DROP TABLE ck;

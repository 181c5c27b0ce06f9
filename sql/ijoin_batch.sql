--
-- The interval join engine run the way a stream will run it
-- (src/sql/mr_ijoin_selftest.c): both tables' rows in one commit order,
-- each row delayed by at most the lateness, commits of a few rows, the
-- watermark the max event time seen minus the lateness after each commit,
-- optionally a checkpoint and restore after each; then end of input.
-- Everything the engine output must be exactly the query's result run by
-- PostgreSQL (same), each row once, every padded row output only once its
-- horizon closed, nothing below the output watermark (violations = 0);
-- padded_at_finish counts the rows whose horizon was still open at the end.
--
SET client_min_messages = warning;
CREATE TEMP TABLE ijb_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;

CREATE FUNCTION pg_temp.ijoin_check(query text, lateness text, seed integer,
    commit_rows integer, restore boolean)
  RETURNS TABLE (left_rows bigint, right_rows bigint, result_rows bigint, pairs bigint,
                 padded_closed bigint, padded_at_finish bigint, late_rows bigint,
                 max_retained bigint, violations bigint, same boolean)
  AS '$libdir/match_recognize', 'match_recognize_ijoin_check' LANGUAGE C STRICT;
CREATE FUNCTION pg_temp.ijoin_trace(query text, lateness text, seed integer, commit_rows integer)
  RETURNS TABLE (step integer, event text, watermark text, output text)
  AS '$libdir/match_recognize', 'match_recognize_ijoin_trace' LANGUAGE C STRICT;

-- a small case, its result shown: payments and confirmations of accounts,
-- a NULL account, a NULL time, a duplicate confirmation, rows at exactly
-- the bounds (BETWEEN is inclusive)
CREATE TABLE ijb_pay (id int, acct int, ts timestamp, amount int);
CREATE TABLE ijb_conf (id int, acct int, ts timestamp, ok boolean);
INSERT INTO ijb_pay VALUES
  (1, 1, '2026-01-01 10:00', 10),
  (2, 1, '2026-01-01 10:20', 20),
  (3, 2, '2026-01-01 10:05', 30),
  (4, NULL, '2026-01-01 10:06', 40),
  (5, 3, NULL, 50),
  (6, 2, '2026-01-01 11:00', 60);
INSERT INTO ijb_conf VALUES
  (1, 1, '2026-01-01 09:58', true),     -- 10:00 - 2 min: in
  (2, 1, '2026-01-01 10:05', true),     -- 10:00 + 5 min: in
  (3, 1, '2026-01-01 10:05:00.000001', true),  -- just past it
  (4, 2, '2026-01-01 10:06', false),    -- fails the residual
  (5, 2, '2026-01-01 10:06', true),
  (6, 2, '2026-01-01 10:06', true),     -- a duplicate of 5
  (7, NULL, '2026-01-01 10:06', true),
  (8, 4, '2026-01-01 10:30', true);

SELECT p.id, c.id AS cid FROM ijb_pay p LEFT JOIN ijb_conf c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts - interval '2 minutes' AND p.ts + interval '5 minutes' AND c.ok
ORDER BY 1, 2;

-- the same as a FULL join, event by event: a pair is output when its
-- second row arrives, a padded row when the watermark passes its horizon
-- (left row: ts + 5 minutes, right row: ts + 2 minutes), ordered by
-- horizon, or at once for a NULL key or time; the rows whose horizon is
-- still open at the end (a stream would still hold them) at end of input
SELECT * FROM pg_temp.ijoin_trace($$SELECT p.id, c.id AS cid FROM ijb_pay p FULL JOIN ijb_conf c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts - interval '2 minutes' AND p.ts + interval '5 minutes' AND c.ok$$,
  '3 minutes', 1, 2);

-- all four join types, both orientations of the BETWEEN (the second is the
-- same condition with the left time inside it), several seeds and commit
-- sizes, with and without a checkpoint and restore after each commit
CREATE TABLE ijb_queries (name text, q text);
INSERT INTO ijb_queries VALUES
  ('inner', $$SELECT p.id, c.id AS cid, p.amount FROM ijb_pay p JOIN ijb_conf c
      ON p.acct = c.acct AND c.ts BETWEEN p.ts - interval '2 minutes' AND p.ts + interval '5 minutes' AND c.ok$$),
  ('left', $$SELECT p.id, c.id AS cid FROM ijb_pay p LEFT JOIN ijb_conf c
      ON p.acct = c.acct AND c.ts BETWEEN p.ts - interval '2 minutes' AND p.ts + interval '5 minutes' AND c.ok$$),
  ('right', $$SELECT p.id, c.id AS cid, c.ok FROM ijb_pay p RIGHT JOIN ijb_conf c
      ON p.acct = c.acct AND c.ts BETWEEN p.ts - interval '2 minutes' AND p.ts + interval '5 minutes' AND c.ok$$),
  ('full', $$SELECT p.id, c.id AS cid, coalesce(p.acct, c.acct) AS acct FROM ijb_pay p FULL JOIN ijb_conf c
      ON p.acct = c.acct AND c.ts BETWEEN p.ts - interval '2 minutes' AND p.ts + interval '5 minutes' AND c.ok$$),
  ('full, left time inside', $$SELECT p.id, c.id AS cid FROM ijb_pay p FULL JOIN ijb_conf c
      ON p.acct = c.acct AND p.ts BETWEEN c.ts - interval '5 minutes' AND c.ts + interval '2 minutes' AND c.ok$$);

SELECT name, (pg_temp.ijoin_check(q, '3 minutes', 1, 2, false)).* FROM ijb_queries ORDER BY name;
SELECT name, (pg_temp.ijoin_check(q, '0', 2, 1, true)).* FROM ijb_queries ORDER BY name;

-- the same over 2000 rows a side: keys with many rows, duplicates, NULL
-- keys and times, out-of-order arrival within a lateness of 10 minutes
TRUNCATE ijb_pay, ijb_conf;
INSERT INTO ijb_pay
SELECT i, CASE WHEN i % 97 = 0 THEN NULL ELSE i % 13 END,
       CASE WHEN i % 101 = 0 THEN NULL ELSE timestamp '2026-01-01' + (i * 37 % 2000) * interval '1 minute' END,
       i % 50
FROM generate_series(1, 2000) i;
INSERT INTO ijb_conf
SELECT i, CASE WHEN i % 89 = 0 THEN NULL ELSE i % 11 END,
       timestamp '2026-01-01' + ((i * 53 % 2000) + i % 7) * interval '1 minute', i % 4 <> 0
FROM generate_series(1, 2000) i;
INSERT INTO ijb_conf SELECT * FROM ijb_conf WHERE id % 10 = 0;   -- duplicates

SELECT name, s.*
FROM ijb_queries, LATERAL (
  SELECT bool_and(c.same) AS all_same, sum(c.violations) AS violations, sum(c.late_rows) AS late,
         min(c.result_rows) AS result_rows, max(c.max_retained) < 1000 AS bounded
  FROM (VALUES (1, 1, false), (2, 7, false), (3, 50, true), (4, 400, false)) AS r(seed, n, restore),
       LATERAL pg_temp.ijoin_check(q, '10 minutes', r.seed, r.n, r.restore) c) s
ORDER BY name;

-- several keys, one of them text and one without a hash function (varbit),
-- integer times with a bound on one side only of the left time
CREATE TABLE ijb_a (id int, k int, tag text, b varbit, t bigint);
CREATE TABLE ijb_b (id int, k int, tag text, b varbit, t bigint);
INSERT INTO ijb_a SELECT i, i % 5, 't' || i % 3, (i % 4)::bit(3)::varbit, i * 7 % 500 FROM generate_series(1, 800) i;
INSERT INTO ijb_b SELECT i, i % 5, 't' || i % 3, (i % 4)::bit(3)::varbit, i * 11 % 500 FROM generate_series(1, 800) i;
SELECT (pg_temp.ijoin_check($$SELECT a.id, b.id FROM ijb_a a FULL JOIN ijb_b b
    ON a.k = b.k AND a.tag = b.tag AND a.b = b.b AND b.t BETWEEN a.t + 2 AND a.t + 9 AND a.id < b.id$$,
  '20', 5, 9, false)).*;

-- keys stored out of line (TOAST): the engine keeps its rows whole
CREATE TABLE ijb_ta (id int, k text, t int);
CREATE TABLE ijb_tb (id int, k text, t int);
ALTER TABLE ijb_ta ALTER COLUMN k SET STORAGE EXTERNAL;
ALTER TABLE ijb_tb ALTER COLUMN k SET STORAGE EXTERNAL;
INSERT INTO ijb_ta SELECT i, repeat(md5((i % 4)::text), 200), i FROM generate_series(1, 60) i;
INSERT INTO ijb_tb SELECT i, repeat(md5((i % 4)::text), 200), i + 1 FROM generate_series(1, 60) i;
SELECT (pg_temp.ijoin_check($$SELECT a.id, b.id, length(a.k) FROM ijb_ta a LEFT JOIN ijb_tb b
    ON a.k = b.k AND b.t BETWEEN a.t - 4 AND a.t + 4$$, '5', 7, 3, true)).*;

-- date times
CREATE TABLE ijb_da (id int, k int, d date);
CREATE TABLE ijb_db (id int, k int, d date);
INSERT INTO ijb_da SELECT i, i % 3, date '2026-01-01' + i * 5 % 60 FROM generate_series(1, 100) i;
INSERT INTO ijb_db SELECT i, i % 3, date '2026-01-01' + i * 7 % 60 FROM generate_series(1, 100) i;
SELECT (pg_temp.ijoin_check($$SELECT a.id, b.id, b.d - a.d AS days FROM ijb_da a RIGHT JOIN ijb_db b
    ON a.k = b.k AND b.d BETWEEN a.d - 1 AND a.d + 2$$, '3', 6, 4, true)).*;

-- an infinite time is refused: it has no horizon a watermark could close
INSERT INTO ijb_db VALUES (101, 1, 'infinity');
SELECT (pg_temp.ijoin_check($$SELECT a.id, b.id FROM ijb_da a RIGHT JOIN ijb_db b
    ON a.k = b.k AND b.d BETWEEN a.d - 1 AND a.d + 2$$, '3', 6, 4, true)).*;
-- and a lateness that is not a fixed length, or negative
SELECT (pg_temp.ijoin_check((SELECT q FROM ijb_queries WHERE name = 'inner'), '1 month', 1, 1, false)).*;
SELECT (pg_temp.ijoin_check((SELECT q FROM ijb_queries WHERE name = 'inner'), '-1 minute', 1, 1, false)).*;

DROP TABLE ijb_pay, ijb_conf, ijb_queries, ijb_a, ijb_b, ijb_ta, ijb_tb, ijb_da, ijb_db;
DO $$ BEGIN
  IF NOT (SELECT had FROM ijb_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;

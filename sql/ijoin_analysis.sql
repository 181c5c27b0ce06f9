--
-- Interval joins written as ordinary SQL (src/bind/mr_ijoin_bind.c): what
-- the analysis makes of a query (keys and their operators, the time
-- columns, the bounds as offsets of the right time from the left one, each
-- row's horizon, the output watermark's delay, the residual, the output),
-- and what it refuses, with SQLSTATE, message, detail and hint.  The
-- function is test-only (src/sql/mr_ijoin_selftest.c): declared here.
--
SET client_min_messages = warning;
CREATE TEMP TABLE ija_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;

CREATE FUNCTION pg_temp.ijoin_analyze(text) RETURNS TABLE (item text, value text)
  AS '$libdir/match_recognize', 'match_recognize_ijoin_analyze' LANGUAGE C STRICT;

-- the refusal as one line: SQLSTATE, message, detail, hint
CREATE FUNCTION pg_temp.refusal(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text; hnt text;
BEGIN
  PERFORM pg_temp.ijoin_analyze(q);
  RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
    det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
  RETURN st || ' ' || msg || coalesce(E'\nDETAIL: ' || nullif(det, ''), '')
    || coalesce(E'\nHINT: ' || nullif(hnt, ''), '');
END $$;

CREATE TABLE ija_pay (id int, acct int, region text, ts timestamp, amount int);
CREATE TABLE ija_conf (id int, acct bigint, region text, ts timestamp, ok boolean);
CREATE TABLE ija_n (id int, k int, t bigint, f float8, d date, tz timestamptz, b varbit);
CREATE TABLE ija_m (id int, k int, t bigint, f float8, d date, tz timestamptz, b varbit);

-- the seed's shape: equi-key, BETWEEN on the right time, a residual
SELECT * FROM pg_temp.ijoin_analyze($$
  SELECT p.id, c.id AS cid, p.amount FROM ija_pay p LEFT JOIN ija_conf c
    ON p.acct = c.acct AND c.ts BETWEEN p.ts - interval '2 minutes' AND p.ts + interval '5 minutes'
   AND c.ok $$);

-- the left time inside the BETWEEN: the offsets are the other way round;
-- two keys, one of them text (its collation) and one across int and bigint
SELECT * FROM pg_temp.ijoin_analyze($$
  SELECT * FROM ija_pay p JOIN ija_conf c
    ON c.region = p.region AND p.acct = c.acct
   AND p.ts BETWEEN c.ts - interval '10 min' AND c.ts + interval '1 hour' $$);

-- explicit comparisons: an exclusive lower bound, the constant first, the
-- bounds repeated (the tighter one counts); a bound on another column is
-- residual
SELECT * FROM pg_temp.ijoin_analyze($$
  SELECT p.id, c.ok FROM ija_pay p RIGHT JOIN ija_conf c
    ON p.acct = c.acct AND c.ts > p.ts AND c.ts <= interval '1 hour' + p.ts
   AND c.ts <= p.ts + interval '2 hours' AND c.id >= p.id $$);

-- integer time with integer bounds, FULL; a bound folded from a constant
-- expression
SELECT * FROM pg_temp.ijoin_analyze($$
  SELECT a.id, b.id FROM ija_n a FULL JOIN ija_m b
    ON a.k = b.k AND b.t BETWEEN a.t - 3 * 4 AND a.t $$);

-- a key whose equality has no hash function (varbit)
SELECT value FROM pg_temp.ijoin_analyze($$
  SELECT a.id FROM ija_n a LEFT JOIN ija_m b ON a.b = b.b AND b.t BETWEEN a.t AND a.t + 1 $$)
WHERE item = 'key 1';

-- date time with days; timestamptz with hours
SELECT value FROM pg_temp.ijoin_analyze($$
  SELECT a.id FROM ija_n a JOIN ija_m b ON a.k = b.k AND b.d BETWEEN a.d - 1 AND a.d + 7 $$)
WHERE item IN ('bounds', 'horizon', 'output watermark');
SELECT value FROM pg_temp.ijoin_analyze($$
  SELECT a.id FROM ija_n a JOIN ija_m b
    ON a.k = b.k AND b.tz BETWEEN a.tz - interval '90 minutes' AND a.tz + interval '36 hours' $$)
WHERE item IN ('bounds', 'horizon', 'output watermark');

-- refusals
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN ija_conf c
  ON c.ts BETWEEN p.ts - interval '1 minute' AND p.ts + interval '1 minute' $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN ija_conf c ON p.acct = c.acct $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN ija_conf c
  ON p.acct = c.acct AND c.ts >= p.ts $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p LEFT JOIN ija_conf c
  ON p.acct IS NOT DISTINCT FROM c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 minute' $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN ija_conf c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 minute' AND random() < 0.5 $$);
SELECT pg_temp.refusal($$ SELECT p.id, random() FROM ija_pay p JOIN ija_conf c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 minute' $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN ija_conf c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + p.amount * interval '1 minute' $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN ija_conf c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + (now() - timestamptz '2026-01-01') $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN ija_conf c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 month' $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_n a JOIN ija_m b
  ON a.k = b.k AND b.tz BETWEEN a.tz AND a.tz + interval '1 day' $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_n a JOIN ija_m b
  ON a.k = b.k AND b.f BETWEEN a.f AND a.f $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_n a JOIN ija_m b
  ON a.k = b.k AND b.t BETWEEN a.t + 5 AND a.t + 1 $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN ija_conf c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 minute' WHERE p.amount > 0 $$);
SELECT pg_temp.refusal($$ SELECT count(*) FROM ija_pay p JOIN ija_conf c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 minute' $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN ija_conf c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 minute' ORDER BY 1 $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p, ija_conf c
  WHERE p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 minute' $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN (SELECT * FROM ija_conf) c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 minute' $$);
CREATE VIEW ija_v AS SELECT * FROM ija_conf;
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN ija_v c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 minute' $$);
CREATE TEMP TABLE ija_temp (acct int, ts timestamp);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN ija_temp c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 minute' $$);
CREATE UNLOGGED TABLE ija_unlogged (acct int, ts timestamp);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN ija_unlogged c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 minute' $$);
CREATE TABLE ija_parted (acct int, ts timestamp) PARTITION BY RANGE (ts);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN ija_parted c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 minute' $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN ija_conf c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 minute'; SELECT 1 $$);
SELECT pg_temp.refusal($$ INSERT INTO ija_pay VALUES (1) $$);
SELECT pg_temp.refusal($$ SELECT p.id FROM ija_pay p JOIN ija_conf c
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 minute' UNION SELECT 1 $$);
SELECT pg_temp.refusal($$ SELECT * FROM ija_pay p JOIN (ija_conf c JOIN ija_conf d ON true)
  ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + interval '1 minute' $$);
-- a self-join and row-constructor keys are fine
SELECT value FROM pg_temp.ijoin_analyze($$ SELECT a.id, b.id FROM ija_pay a JOIN ija_pay b
  ON (a.acct, a.region) = (b.acct, b.region) AND b.ts BETWEEN a.ts AND a.ts + interval '1 minute' $$)
WHERE item LIKE 'key%' OR item IN ('left', 'right');

-- errors point into the statement: a syntax error, a non-constant bound
\set VERBOSITY default
SELECT * FROM pg_temp.ijoin_analyze('SELECT * FROM ija_pay p JOIN ija_conf c ON p.acct = c.acct AND AND');
SELECT * FROM pg_temp.ijoin_analyze('SELECT * FROM ija_pay p JOIN ija_conf c ON p.acct = c.acct AND c.ts BETWEEN p.ts AND p.ts + (clock_timestamp() - now())');
SELECT * FROM pg_temp.ijoin_analyze('SELECT * FROM ija_pay p JOIN nosuch c ON true');

DROP TABLE ija_pay, ija_conf, ija_n, ija_m, ija_unlogged, ija_parted CASCADE;
DO $$ BEGIN
  IF NOT (SELECT had FROM ija_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;

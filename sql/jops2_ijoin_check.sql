--
-- ijoin_check() and ijoin_trace() (src/sql/mr_ijoin_selftest.c) replay
-- the tables' rows in a random commit order: a processing-time join has
-- its rows timed by commits that a replay does not have, so both refuse
-- it with a clear error (it used to fail with a cache lookup error).
--
SET client_min_messages = warning;
CREATE TEMP TABLE jops2_had_ext AS
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

CREATE TABLE jops2_l (id int, k int, ts int);
CREATE TABLE jops2_r (id int, k int, ts int);
INSERT INTO jops2_l VALUES (1, 1, 10), (2, 2, 20);
INSERT INTO jops2_r VALUES (1, 1, 11), (2, 2, 40);

\set VERBOSITY default
-- processing time: refused, by both
SELECT * FROM pg_temp.ijoin_check(
  $$SELECT l.id AS lid, r.id AS rid FROM jops2_l l LEFT JOIN jops2_r r ON r.k = l.k
    AND pg_xact_commit_timestamp(r.xmin) BETWEEN pg_xact_commit_timestamp(l.xmin) - interval '1 second'
                                             AND pg_xact_commit_timestamp(l.xmin) + interval '1 second'$$,
  '0 seconds', 1, 1, false);
SELECT * FROM pg_temp.ijoin_trace(
  $$SELECT l.id AS lid, r.id AS rid FROM jops2_l l JOIN jops2_r r ON r.k = l.k
    AND pg_xact_commit_timestamp(r.xmin) BETWEEN pg_xact_commit_timestamp(l.xmin)
                                             AND pg_xact_commit_timestamp(l.xmin) + interval '1 second'$$,
  '0 seconds', 1, 1);
\set VERBOSITY terse
-- event time: still checked
SELECT result_rows, pairs, padded_closed + padded_at_finish AS padded, violations, same
FROM pg_temp.ijoin_check(
  $$SELECT l.id AS lid, r.id AS rid FROM jops2_l l LEFT JOIN jops2_r r ON r.k = l.k
    AND r.ts BETWEEN l.ts - 2 AND l.ts + 2$$, '5', 1, 1, true);

DROP TABLE jops2_l, jops2_r;
DO $$ BEGIN
  IF NOT (SELECT had FROM jops2_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;
DROP TABLE jops2_had_ext;

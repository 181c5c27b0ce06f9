--
-- Time in patterns: EXPLAIN ANALYZE's timer counters (DESIGN 6.3), shown
-- for queries with windows, an absence or timeout rows:
--   Timers Fired: deadlines passed that expired an attempt (a start's
--     waiting threads, WITH TIMEOUT ROWS) or accepted a parked absence, by
--     a row's time or by the clock (at the end of a partition only those
--     the clock passes: CLOCK c at once, CLOCK MAX once the input ends);
--   Timeout Rows: timeout rows output;
--   Rows Held: output rows decided at the end of a partition and held until
--     the input's clock (CLOCK MAX) is known, output or not.
-- EXPLAIN without ANALYZE, and queries with no time, show none of them.
--
-- leave the database as found: drop the extension at the end if we create it
SET client_min_messages = warning;
CREATE TEMP TABLE tx_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
SET max_parallel_workers_per_gather = 0;
SET match_recognize.enable_custom_scan = on;

-- payments: 'pay', then 'confirm' within 5; the input's clock (CLOCK MAX)
-- is 50, partition 6's row
CREATE TABLE tx_pay (ref int, ts int, kind text);
INSERT INTO tx_pay VALUES
  (1, 1, 'pay'), (1, 2, 'confirm'),   -- confirmed
  (2, 5, 'pay'),                      -- deadline 10: the end of the partition, the clock passes it
  (3, 10, 'pay'), (3, 20, 'confirm'), -- deadline 15: the row at 20 passes it
  (4, 30, 'pay'),                     -- deadline 35: the end, the clock passes it
  (5, 40, 'pay'), (5, 41, 'pay'),     -- deadlines 45 and 46: the end, the clock passes them
  (6, 50, 'x'),
  (7, 48, 'pay');                     -- deadline 53: the clock does not pass it

-- the query, a clause's MATCH_RECOGNIZE over tx_pay
CREATE FUNCTION tx_query(clause text) RETURNS text LANGUAGE sql AS $f$
  SELECT match_recognize_sql(format($q$SELECT * FROM tx_pay MATCH_RECOGNIZE (
    PARTITION BY ref ORDER BY ts %s DEFINE PAY AS kind = 'pay', CONF AS kind = 'confirm') AS m$q$,
    clause))
$f$;
-- its EXPLAIN (ANALYZE) lines: the custom scan's rows and the counters
CREATE FUNCTION tx_explain(clause text, with_analyze bool DEFAULT true) RETURNS SETOF text
LANGUAGE plpgsql AS $f$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (' || CASE WHEN with_analyze THEN 'ANALYZE, TIMING OFF, SUMMARY OFF, ' ELSE '' END
      || 'COSTS OFF) '
      || tx_query(clause) LOOP
    IF line ~ 'MatchRecognize|Windows|Clock|Rows Read|Matches|Timers|Timeout|Held' THEN
      RETURN NEXT trim(line);
    END IF;
  END LOOP;
END $f$;

-- timeout rows, CLOCK MAX: 5 timers (2, 3, 4, 5 twice), 5 timeout rows;
-- 5 rows held (2, 4, 5 twice, 7), 7's not output
\set q 'MEASURES FIRST(PAY.ts) AS paid, TIMED_OUT() AS tmo, MATCH_DEADLINE() AS dl ONE ROW PER MATCH WITH TIMEOUT ROWS PATTERN (PAY -> CONF) WITHIN 5 FROM PAY TO CONF'
SELECT tx_query(:'q') AS sql \gset
SELECT * FROM (:sql) s ORDER BY ref, paid;
SELECT tx_explain(:'q');
-- CLOCK 44: 2, 3 and 4's deadlines pass, 5 and 7's do not (3 timers, 3
-- timeout rows); CLOCK c decides at once, nothing is held
\set q 'MEASURES FIRST(PAY.ts) AS paid, TIMED_OUT() AS tmo, MATCH_DEADLINE() AS dl ONE ROW PER MATCH WITH TIMEOUT ROWS PATTERN (PAY -> CONF) WITHIN 5 FROM PAY TO CONF CLOCK 44'
SELECT tx_query(:'q') AS sql \gset
SELECT * FROM (:sql) s ORDER BY ref, paid;
SELECT tx_explain(:'q');
-- CLOCK 8: only the row at 20 passes a deadline
SELECT tx_explain('MEASURES FIRST(PAY.ts) AS paid ONE ROW PER MATCH WITH TIMEOUT ROWS
  PATTERN (PAY -> CONF) WITHIN 5 FROM PAY TO CONF CLOCK 8');
-- ALL ROWS PER MATCH, PAY+: a timeout row per mapped row of a partial (5's
-- first start maps both its rows, its second start 41 alone): 6 timeout
-- rows of 5 attempts; held: all but 3's
\set q 'MEASURES TIMED_OUT() AS tmo, CLASSIFIER() AS cl ALL ROWS PER MATCH WITH TIMEOUT ROWS PATTERN (PAY+ -> CONF) WITHIN 5 FROM FIRST PAY TO CONF'
SELECT tx_query(:'q') AS sql \gset
SELECT * FROM (:sql) s ORDER BY ref, ts;
SELECT tx_explain(:'q');

-- an absence, no timeout rows: 3's by the row at 20 (output at once); 2,
-- 4, 5 and 7's by the end of their partitions (held), the clock passes all
-- but 7's: 5 timers, 0 timeout rows, 5 rows held
\set q 'MEASURES PAY.ts AS paid, MATCH_DEADLINE() AS dl PATTERN (PAY -> NOT CONF) WITHIN 5 FROM PAY TO CONF'
SELECT tx_query(:'q') AS sql \gset
SELECT * FROM (:sql) s ORDER BY ref, paid;
SELECT tx_explain(:'q');
-- CLOCK 44: 2, 3 and 4's (5's two starts and 7's are not decided)
SELECT tx_explain('MEASURES PAY.ts AS paid PATTERN (PAY -> NOT CONF) WITHIN 5 FROM PAY TO CONF CLOCK 44');
-- a window alone (no timeout rows, no absence): no deadline fires, it bounds the matches
SELECT tx_explain('MEASURES PAY.ts AS paid PATTERN (PAY -> CONF) WITHIN 5 FROM PAY TO CONF');

-- no time: no timer counters; no ANALYZE: no counters at all
SELECT tx_explain('MEASURES PAY.ts AS paid PATTERN (PAY CONF)');
SELECT tx_explain('MEASURES PAY.ts AS paid ONE ROW PER MATCH WITH TIMEOUT ROWS
  PATTERN (PAY -> CONF) WITHIN 5 FROM PAY TO CONF', false);

-- JSON and YAML: the same counters as properties of the custom scan
CREATE FUNCTION tx_explain_json(clause text) RETURNS TABLE (key text, value json)
LANGUAGE plpgsql AS $f$
DECLARE plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || tx_query(clause)
    INTO plan;
  RETURN QUERY SELECT e.key, e.value FROM json_each(plan->0->'Plan') e
    WHERE e.key IN ('Custom Plan Provider', 'Actual Rows', 'Matches', 'Timers Fired',
                    'Timeout Rows', 'Rows Held');
END $f$;
CREATE FUNCTION tx_explain_yaml(clause text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT YAML) '
      || tx_query(clause) LOOP
    RETURN QUERY SELECT trim(l) FROM regexp_split_to_table(line, E'\n') l
      WHERE l ~ 'Custom Plan Provider|Matches|Timers|Timeout|Held';
  END LOOP;
END $f$;
SELECT * FROM tx_explain_json('MEASURES FIRST(PAY.ts) AS paid ONE ROW PER MATCH WITH TIMEOUT ROWS
  PATTERN (PAY -> CONF) WITHIN 5 FROM PAY TO CONF');
SELECT tx_explain_yaml('MEASURES FIRST(PAY.ts) AS paid ONE ROW PER MATCH WITH TIMEOUT ROWS
  PATTERN (PAY -> CONF) WITHIN 5 FROM PAY TO CONF');
-- no time: none
SELECT * FROM tx_explain_json('MEASURES PAY.ts AS paid PATTERN (PAY CONF)');

-- a rescan (the inner side of a nested loop) adds up every run's counters
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
CREATE FUNCTION tx_explain_loops() RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM
      (VALUES (1), (2)) v(x), LATERAL (SELECT * FROM (' || tx_query('MEASURES FIRST(PAY.ts) AS paid
        ONE ROW PER MATCH WITH TIMEOUT ROWS PATTERN (PAY -> CONF) WITHIN 5 FROM PAY TO CONF') ||
      ') m WHERE m.ref >= v.x OFFSET 0) s' LOOP
    IF line ~ 'MatchRecognize|Timers|Timeout|Held' THEN
      RETURN NEXT trim(line);
    END IF;
  END LOOP;
END $f$;
SELECT tx_explain_loops();
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

DROP FUNCTION tx_explain_loops(), tx_explain_json(text), tx_explain_yaml(text),
  tx_explain(text, bool), tx_query(text);
DROP TABLE tx_pay;
RESET match_recognize.enable_custom_scan;
DO $$ BEGIN
  IF NOT (SELECT had FROM tx_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;

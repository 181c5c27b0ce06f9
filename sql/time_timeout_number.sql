--
-- Time in patterns: a timeout row has no match number.  MATCH_NUMBER() is
-- null on it, in a measure and inside an aggregate's argument or FILTER
-- alike (it read -1 there), ONE and ALL ROWS PER MATCH; the matches around
-- it keep their numbers.
--
-- leave the database as found: drop the extension at the end if we create it
SET client_min_messages = warning;
CREATE TEMP TABLE tq_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;

-- 'pay', then 'confirm' within 5: 1's first payment is confirmed (match
-- 1), its second times out by the row at 20, its third is confirmed (match
-- 2); 2's times out by the clock (the input's largest time, 21)
CREATE TABLE tq_pay (ref int, ts int, kind text);
INSERT INTO tq_pay VALUES
  (1, 1, 'pay'), (1, 2, 'confirm'), (1, 3, 'pay'), (1, 19, 'pay'), (1, 21, 'confirm'),
  (2, 5, 'pay');

-- ONE ROW PER MATCH, through the function and the custom scan
CREATE FUNCTION tq_one(scan bool) RETURNS TABLE (ref int, paid int, tmo bool, n bigint,
    mx bigint, cn bigint, s numeric, fnull bigint, fnum bigint)
LANGUAGE plpgsql AS $f$
BEGIN
  PERFORM set_config('match_recognize.enable_custom_scan', scan::text, true);
  RETURN QUERY EXECUTE match_recognize_sql($q$SELECT * FROM tq_pay MATCH_RECOGNIZE (
    PARTITION BY ref ORDER BY ts
    MEASURES FIRST(PAY.ts) AS paid, TIMED_OUT() AS tmo, MATCH_NUMBER() AS n,
             max(MATCH_NUMBER()) AS mx, count(MATCH_NUMBER()) AS cn,
             sum(MATCH_NUMBER() * 10) AS s,
             count(*) FILTER (WHERE MATCH_NUMBER() IS NULL) AS fnull,
             count(*) FILTER (WHERE MATCH_NUMBER() >= 1) AS fnum
    ONE ROW PER MATCH WITH TIMEOUT ROWS
    PATTERN (PAY -> CONF) WITHIN 5 FROM PAY TO CONF
    DEFINE PAY AS kind = 'pay', CONF AS kind = 'confirm') AS m$q$) || ' ORDER BY 1, 2';
END $f$;
SELECT * FROM tq_one(false);
SELECT (SELECT array_agg(f) FROM tq_one(false) f) = (SELECT array_agg(f) FROM tq_one(true) f)
  AS scan_agrees;

-- ALL ROWS PER MATCH: running and final aggregates over MATCH_NUMBER()
SELECT * FROM match_recognize($$tq_pay MATCH_RECOGNIZE (
  PARTITION BY ref ORDER BY ts
  MEASURES TIMED_OUT() AS tmo, MATCH_NUMBER() AS n, max(MATCH_NUMBER()) AS mx,
           FINAL min(MATCH_NUMBER()) AS fmn, count(MATCH_NUMBER()) AS cn,
           string_agg(MATCH_NUMBER()::text || CLASSIFIER(), ',') AS sa
  ALL ROWS PER MATCH WITH TIMEOUT ROWS
  PATTERN (PAY -> CONF) WITHIN 5 FROM PAY TO CONF
  DEFINE PAY AS kind = 'pay', CONF AS kind = 'confirm'
) AS m$$) AS m(ref int, ts int, tmo bool, n bigint, mx bigint, fmn bigint, cn bigint, sa text,
              kind text)
ORDER BY ref, ts;

DROP FUNCTION tq_one(bool);
DROP TABLE tq_pay;
DO $$ BEGIN
  IF NOT (SELECT had FROM tq_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;

-- The CEP seed's level index: every standing query of price_alerts(key, qid,
-- level) fires when its key's price crosses above its level (the previous
-- tick below the level, this tick at or above it), then stays disarmed until
-- the price falls back to level - 5 or lower (a band of 5 cents).
-- Returns (key, qid, level, ts), one row per fire.
--
-- MATCH_LEVELS runs as a FROM item of match_recognize() with a column
-- definition list, so this is plain SQL that psql runs as it is; the same
-- FROM item written directly in a statement goes through
-- match_recognize_sql() or match_recognize_create_view().
SELECT f.key, f.qid, f.level, f.ts
FROM match_recognize($mr$
  ticks MATCH_LEVELS (
    PARTITION BY key
    ORDER BY ts
    VALUE price
    QUERIES price_alerts (ID qid, LEVEL level)
    CROSSING UP
    BAND 5
  )
$mr$) AS f(key int, qid int, level bigint, ts bigint);

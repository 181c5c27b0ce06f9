-- The CEP seed's level index as a stream: creates the stream
-- seed_fires_out (key, qid, level, ts, _match_id) over ticks and
-- price_alerts(key, qid, level), band 5, crosses above, the same fires as
-- seed_level_fires.sql over the ticks it has released.
--
-- A levels stream reads the standing queries of price_alerts as they are
-- when it is created, then applies every INSERT and DELETE of them while
-- it runs (to the ticks released after the change's commit), so the table
-- must log deleted rows whole.  Ticks are released when the watermark (the
-- largest ts seen, lateness 0) has passed them: in ts order, each tick as
-- soon as a later one is committed.  _match_id is the fire's identity
-- "<key>:<qid>:<the tick's number among its key's ticks>".
ALTER TABLE price_alerts REPLICA IDENTITY FULL;
SELECT match_recognize_create_stream('seed_fires_out', $mr$
  ticks MATCH_LEVELS (
    PARTITION BY key
    ORDER BY ts
    VALUE price
    QUERIES price_alerts (ID qid, LEVEL level)
    CROSSING UP
    BAND 5
  )
$mr$, lateness => 0::bigint);

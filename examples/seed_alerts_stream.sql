-- The CEP seed's alert rule (issue 12, examples/seed_alerts.sql) as a
-- stream over ticks(ts bigint ms, key int, price bigint cents, vol bigint):
-- creates the output table seed_alerts_out(key int, deadline bigint,
-- _match_id text) and a worker that writes each alert as soon as the
-- stream's watermark (the largest ts committed to ticks, lateness 0: ticks
-- arrive in ts order) passes its deadline (spike ts + 10 000), in every
-- key, also one that gets no more ticks: the seed program's single clock.
-- What it writes equals seed_alerts.sql over the ticks below the watermark
-- (CLOCK MAX there is the watermark here).  batch_size 10000: the worker
-- processes each transaction of ticks as soon as it is decoded rather than
-- gathering 100 000 rows first, which keeps an alert's latency after the
-- commit that passes its deadline well under a second
-- (bench/cep/alerts_stream.sh).  Drop it with
-- SELECT match_recognize_drop_stream('seed_alerts_out');
SELECT match_recognize_create_stream('seed_alerts_out', $$
SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY key ORDER BY ts
  MEASURES MATCH_DEADLINE() AS deadline
  ONE ROW PER MATCH
  AFTER MATCH SKIP TO LAST S
  PATTERN (R -> S -> NOT REV)
  WITHIN 60000 FROM R TO S,
         10000 FROM S TO REV
  DEFINE
    R   AS R.price * 100 >= PREV(R.price) * 102,
    S   AS S.vol >= 1000,
    REV AS REV.price * 100 <= S.price * 99
)$$, lateness => 0::bigint, batch_size => 10000);

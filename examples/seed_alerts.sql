-- The CEP seed's alert rule (issue 12) over ticks(ts bigint ms, key int,
-- price bigint cents, vol bigint), returning (key int, deadline bigint):
--   a rise (price >= +2 % over the key's previous tick), then the first
--   spike (vol >= 1000) within 60 s of the rise, then no reversal
--   (price <= -1 % from the spike price) within 10 s of the spike.
-- The alert is final when the clock passes the deadline (spike ts + 10 000):
-- the input's own clock, its largest ts over all keys (CLOCK MAX, the
-- default), as in the seed program, where a tick of any key decides.
-- A spike completes every rise waiting for it at once (->: the first
-- spike is taken, and the search resumes at it: SKIP TO LAST S), and a
-- spike may itself be the next rise.
SELECT m.key, m.deadline
FROM match_recognize($$ticks MATCH_RECOGNIZE (
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
) AS m$$) AS m(key int, deadline bigint);

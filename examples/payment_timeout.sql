-- Payments with no confirmation within 5 minutes (issue 12), with its own
-- data: run with psql on any database with the match_recognize extension;
-- payment_timeout.expected is the output (psql -X -q -f payment_timeout.sql).
--
-- events(ref, ts, kind): 'pay' then, maybe, 'confirm', per payment ref.
-- "PAY -> CONF" with the window "5 minutes FROM PAY TO CONF" and timeout
-- rows: one row per payment, confirmed (timed_out false) or not (true, at
-- its deadline paid_at + 5 min; a confirmation exactly then counts).  A
-- payment times out when the clock passes its deadline: a later event of
-- the same payment, or the input's clock (CLOCK MAX: its latest event, of
-- any payment) -- so a payment that gets no event at all after paying is
-- decided too, and one whose deadline is still ahead is not output yet.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
SET TimeZone = 'UTC';
CREATE TEMP TABLE events (ref int, ts timestamptz, kind text);
INSERT INTO events VALUES
  (1, '2026-03-01 10:00:00', 'pay'), (1, '2026-03-01 10:01:30', 'confirm'),
  (2, '2026-03-01 10:02:00', 'pay'),                                          -- never confirmed
  (3, '2026-03-01 10:03:00', 'pay'), (3, '2026-03-01 10:09:00', 'confirm'),   -- 6 min: too late
  (4, '2026-03-01 10:04:00', 'pay'), (4, '2026-03-01 10:09:00', 'confirm'),   -- exactly 5 min
  (5, '2026-03-01 10:20:00', 'pay'),                                          -- too recent
  (6, '2026-03-01 10:21:00', 'pay'), (6, '2026-03-01 10:21:10', 'confirm'),
  (7, '2026-03-01 10:05:00', 'pay'), (7, '2026-03-01 10:06:00', 'pay'),       -- paid twice, then
  (7, '2026-03-01 10:10:30', 'confirm');                                      -- one late confirm

-- every payment decided by the input's clock (10:21:10): payment 5's
-- deadline (10:25) has not passed yet
SELECT * FROM match_recognize($$events MATCH_RECOGNIZE (
  PARTITION BY ref ORDER BY ts
  MEASURES PAY.ts AS paid_at, CONF.ts - PAY.ts AS delay,
           TIMED_OUT() AS timed_out, MATCH_DEADLINE() AS deadline
  ONE ROW PER MATCH WITH TIMEOUT ROWS
  PATTERN (PAY -> CONF)
  WITHIN INTERVAL '5 minutes' FROM PAY TO CONF
  DEFINE PAY AS kind = 'pay', CONF AS kind = 'confirm'
) AS m$$) AS m(ref int, paid_at timestamptz, delay interval, timed_out bool, deadline timestamptz)
ORDER BY ref, paid_at;

-- only the alerts, with the clock given (say now(), here 10:30): payment 5
-- has timed out too
SELECT ref, paid_at, deadline FROM match_recognize($$events MATCH_RECOGNIZE (
  PARTITION BY ref ORDER BY ts
  MEASURES PAY.ts AS paid_at, TIMED_OUT() AS timed_out, MATCH_DEADLINE() AS deadline
  ONE ROW PER MATCH WITH TIMEOUT ROWS
  PATTERN (PAY -> CONF)
  WITHIN INTERVAL '5 minutes' FROM PAY TO CONF
  CLOCK timestamptz '2026-03-01 10:30:00'
  DEFINE PAY AS kind = 'pay', CONF AS kind = 'confirm'
) AS m$$) AS m(ref int, paid_at timestamptz, timed_out bool, deadline timestamptz)
WHERE timed_out
ORDER BY ref, paid_at;

-- the same alerts as an absence ("PAY -> NOT CONF"): a match decided when
-- the deadline passes with no confirmation
SELECT * FROM match_recognize($$events MATCH_RECOGNIZE (
  PARTITION BY ref ORDER BY ts
  MEASURES PAY.ts AS paid_at, MATCH_DEADLINE() AS deadline
  PATTERN (PAY -> NOT CONF)
  WITHIN INTERVAL '5 minutes' FROM PAY TO CONF
  CLOCK timestamptz '2026-03-01 10:30:00'
  DEFINE PAY AS kind = 'pay', CONF AS kind = 'confirm'
) AS m$$) AS m(ref int, paid_at timestamptz, deadline timestamptz)
ORDER BY ref, paid_at;

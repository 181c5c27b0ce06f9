--
-- A chain over an interval join stream: payments joined with their
-- confirmations within 5 minutes (level 1, a join stream), then a
-- MATCH_RECOGNIZE stream over the joined rows with no lateness (level 2:
-- it follows the join's output watermark, the join's watermark minus 5
-- minutes).  Rows are committed in many small transactions, out of order
-- within the join's lateness; level 2 equals the batch query over level
-- 1's final output once a sentinel moves the join's watermark past it.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY terse

CREATE TABLE payments (pay_id int, account text, ts timestamptz, amount int);
CREATE TABLE confirmations (pay_id int, ts timestamptz);
SELECT match_recognize_create_stream('confirmed',
  $$SELECT p.pay_id, p.account, p.ts AS paid_at, c.ts AS confirmed_at, p.amount
    FROM payments p JOIN confirmations c
      ON c.pay_id = p.pay_id AND c.ts BETWEEN p.ts AND p.ts + interval '5 minutes'$$,
  lateness => interval '5 minutes');
SELECT match_recognize_create_stream('bursts',
  $$SELECT * FROM confirmed MATCH_RECOGNIZE (
      PARTITION BY account ORDER BY confirmed_at, pay_id
      MEASURES FIRST(confirmed_at) AS first_at, LAST(confirmed_at) AS last_at,
               COUNT(*) AS n, SUM(amount) AS total
      PATTERN (big{3,}) WITHIN INTERVAL '10 minutes'
      DEFINE big AS amount >= 100)$$);
SELECT name, kind, follows, watermark_columns FROM match_recognize_stream ORDER BY name;

-- 400 payments, one every 20 seconds over 5 accounts; each confirmed 0 to
-- 8 minutes later (after 5 minutes: no pair)
CREATE TABLE ev AS
SELECT i AS pay_id, 'a' || (i % 5) AS account,
       timestamptz '2024-05-01 00:00:00+00' + i * interval '20 seconds' AS ts,
       abs(hashint4(i)) % 300 AS amount,
       timestamptz '2024-05-01 00:00:00+00' + i * interval '20 seconds'
         + (abs(hashint4(i * 3 + 1)) % 481) * interval '1 second' AS confirmed
FROM generate_series(1, 400) i;
-- commit by 3-minute blocks of event time, each side in two transactions
-- in shuffled order
SELECT format($$INSERT INTO payments SELECT pay_id, account, ts, amount FROM ev
                WHERE floor(extract(epoch FROM ts - '2024-05-01 00:00:00+00') / 180) = %s AND pay_id %% 2 = %s
                ORDER BY md5(pay_id::text)$$, b, k)
  || format($$; INSERT INTO confirmations SELECT pay_id, confirmed FROM ev
                WHERE floor(extract(epoch FROM confirmed - '2024-05-01 00:00:00+00') / 180) = %s AND pay_id %% 2 = %s
                ORDER BY md5(pay_id::text || 'c')$$, b, 1 - k)
FROM generate_series(0, 47) b, generate_series(0, 1) k ORDER BY b, k \gexec
SELECT match_recognize_wait_stream('confirmed');
SELECT match_recognize_wait_stream('bursts');
SELECT (SELECT watermark FROM match_recognize_streams WHERE name = 'public.bursts') =
       (SELECT output_watermark FROM match_recognize_streams WHERE name = 'public.confirmed') AS follows_join;
-- a sentinel account far ahead moves the join's watermark past everything
INSERT INTO payments VALUES (0, 'zz', '2024-05-02 00:00:00+00', 0);
INSERT INTO confirmations VALUES (0, '2024-05-02 00:00:00+00');
SELECT match_recognize_wait_stream('confirmed');
SELECT match_recognize_wait_stream('bursts');
SELECT name, state, watermark, output_watermark, rows_in, late_rows
FROM match_recognize_streams ORDER BY name;

-- level 1 = the join run by PostgreSQL
SELECT count(*) AS pairs,
       (SELECT count(*) FROM ((SELECT p.pay_id, p.account, p.ts, c.ts, p.amount
           FROM payments p JOIN confirmations c
             ON c.pay_id = p.pay_id AND c.ts BETWEEN p.ts AND p.ts + interval '5 minutes'
           EXCEPT ALL SELECT pay_id, account, paid_at, confirmed_at, amount FROM confirmed)
          UNION ALL (SELECT pay_id, account, paid_at, confirmed_at, amount FROM confirmed
           EXCEPT ALL SELECT p.pay_id, p.account, p.ts, c.ts, p.amount
           FROM payments p JOIN confirmations c
             ON c.pay_id = p.pay_id AND c.ts BETWEEN p.ts AND p.ts + interval '5 minutes')) x) AS differ
FROM confirmed;
-- level 2 = the batch query over level 1's output
SELECT match_recognize_create_view('bursts_b',
  $$SELECT * FROM confirmed MATCH_RECOGNIZE (
      PARTITION BY account ORDER BY confirmed_at, pay_id
      MEASURES FIRST(confirmed_at) AS first_at, LAST(confirmed_at) AS last_at,
               COUNT(*) AS n, SUM(amount) AS total
      PATTERN (big{3,}) WITHIN INTERVAL '10 minutes'
      DEFINE big AS amount >= 100)$$);
SELECT (SELECT count(*) FROM bursts) AS stream, (SELECT count(*) FROM bursts_b) AS batch,
       (SELECT count(*) FROM ((SELECT account, first_at, last_at, n, total FROM bursts
          EXCEPT ALL SELECT account, first_at, last_at, n, total FROM bursts_b)
         UNION ALL (SELECT account, first_at, last_at, n, total FROM bursts_b
          EXCEPT ALL SELECT account, first_at, last_at, n, total FROM bursts)) x) AS differ;
SELECT account, first_at, last_at, n, total FROM bursts ORDER BY account, first_at;

SELECT match_recognize_drop_stream('bursts');
SELECT match_recognize_drop_stream('confirmed');
DROP VIEW bursts_b;
DROP TABLE payments, confirmations, ev, confirmed, bursts;

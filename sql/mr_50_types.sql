--
-- DEFINE and MEASURES are ordinary PostgreSQL expressions over any type:
-- timestamps and intervals, numeric, text, CASE, casts, subqueries, WITHIN
--
\set VERBOSITY default

CREATE TABLE payments (account text, ts timestamptz, kind text, amount numeric(10,2));
INSERT INTO payments VALUES
  ('acc1', '2024-05-01 10:00:00+00', 'login', NULL),
  ('acc1', '2024-05-01 10:00:10+00', 'fail', NULL),
  ('acc1', '2024-05-01 10:00:20+00', 'fail', NULL),
  ('acc1', '2024-05-01 10:00:30+00', 'fail', NULL),
  ('acc1', '2024-05-01 10:01:00+00', 'browse', NULL),
  ('acc1', '2024-05-01 10:02:00+00', 'withdraw', 900.50),
  ('acc2', '2024-05-01 11:00:00+00', 'login', NULL),
  ('acc2', '2024-05-01 11:00:05+00', 'fail', NULL),
  ('acc2', '2024-05-01 11:00:06+00', 'fail', NULL),
  ('acc2', '2024-05-01 11:00:07+00', 'fail', NULL),
  ('acc2', '2024-05-01 11:09:00+00', 'withdraw', 20.00),
  ('acc3', '2024-05-01 12:00:00+00', 'login', NULL),
  ('acc3', '2024-05-01 12:00:01+00', 'fail', NULL),
  ('acc3', '2024-05-01 12:00:02+00', 'withdraw', 5.00);

-- a fraud chain within five minutes: login, three failures, any filler, a withdrawal
SELECT mr_run($$
  SELECT * FROM payments MATCH_RECOGNIZE (
    PARTITION BY account ORDER BY ts
    MEASURES FIRST(login.ts) AS login_ts, LAST(w.amount) AS amount,
             LAST(w.ts) - FIRST(login.ts) AS took,
             CASE WHEN LAST(w.amount) > 100 THEN 'big' ELSE 'small' END AS size,
             count(x.*)::int AS fillers
    PATTERN (login f{3} x*? w) WITHIN interval '5 minutes'
    DEFINE login AS kind = 'login', f AS kind = 'fail', w AS kind = 'withdraw'
  ) AS m ORDER BY account $$);
-- without WITHIN, acc2 matches too
SELECT mr_run($$
  SELECT account, amount FROM payments MATCH_RECOGNIZE (
    PARTITION BY account ORDER BY ts
    MEASURES LAST(w.amount) AS amount
    PATTERN (login f{3} x*? w)
    DEFINE login AS kind = 'login', f AS kind = 'fail', w AS kind = 'withdraw'
  ) AS m ORDER BY account $$);
-- WITHIN is an inclusive bound on last - first
SELECT mr_run($$
  SELECT * FROM payments MATCH_RECOGNIZE (
    PARTITION BY account ORDER BY ts
    MEASURES FIRST(ts) AS from_ts, LAST(ts) AS to_ts
    PATTERN (f+) WITHIN interval '1 second'
    DEFINE f AS kind = 'fail'
  ) AS m ORDER BY account, from_ts $$);
-- intervals between rows in DEFINE; text functions; casts
SELECT mr_run($$
  SELECT * FROM payments MATCH_RECOGNIZE (
    PARTITION BY account ORDER BY ts
    MEASURES string_agg(upper(left(kind, 1)), '') AS kinds, FIRST(ts)::date AS day
    PATTERN (quick+)
    DEFINE quick AS ts - PREV(ts) <= interval '10 seconds'
  ) AS m ORDER BY account, kinds $$);
-- uncorrelated subqueries in DEFINE and MEASURES
CREATE TABLE limits (kind text, max_amount numeric);
INSERT INTO limits VALUES ('withdraw', 100);
SELECT mr_run($$
  SELECT * FROM payments MATCH_RECOGNIZE (
    PARTITION BY account ORDER BY ts
    MEASURES LAST(big.amount) AS amount,
             (SELECT max_amount FROM limits WHERE kind = 'withdraw') AS lim
    PATTERN (big)
    DEFINE big AS kind = 'withdraw' AND amount > (SELECT max_amount FROM limits)
  ) AS m ORDER BY account $$);
-- the input can be a subquery, a view, a CTE; the result can be joined
CREATE VIEW fails AS SELECT account, ts FROM payments WHERE kind = 'fail';
SELECT mr_run($$
  WITH f AS (SELECT * FROM fails)
  SELECT m.account, m.n, p.amount
  FROM f MATCH_RECOGNIZE (
    PARTITION BY account ORDER BY ts MEASURES count(*) AS n PATTERN (x+) DEFINE x AS true
  ) AS m JOIN payments p ON p.account = m.account AND p.kind = 'withdraw'
  ORDER BY m.account $$);
SELECT mr_run($$
  SELECT * FROM (SELECT account, ts, amount FROM payments WHERE amount IS NOT NULL) p
  MATCH_RECOGNIZE (ORDER BY ts MEASURES sum(amount) AS total, avg(amount) AS mean
                   PATTERN (x+) DEFINE x AS true) AS m $$);

-- match_recognize_create_view: column names and types are derived
SELECT match_recognize_create_view('fraud_view', $$
  SELECT * FROM payments MATCH_RECOGNIZE (
    PARTITION BY account ORDER BY ts
    MEASURES FIRST(login.ts) AS login_ts, LAST(w.amount) AS amount
    PATTERN (login f{3} x*? w)
    DEFINE login AS kind = 'login', f AS kind = 'fail', w AS kind = 'withdraw'
  ) AS m $$);
\d fraud_view
SELECT * FROM fraud_view WHERE amount > 100;

-- the engine called directly with a column definition list
SELECT * FROM match_recognize($$ payments MATCH_RECOGNIZE (
    PARTITION BY account ORDER BY ts MEASURES count(*) AS n PATTERN (f+) DEFINE f AS kind = 'fail') $$)
  AS m(account text, n bigint) ORDER BY account;

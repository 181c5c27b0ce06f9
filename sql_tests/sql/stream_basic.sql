--
-- Streaming mode: backfill, tail, out-of-order commits, late rows, NULL
-- event times, the status view, drop hygiene.
--
-- Needs a server with shared_preload_libraries = match_recognize and
-- wal_level = logical.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
-- servers that restrict output plugins must allow ours (in this database)
DO $$
BEGIN
	IF current_setting('output_plugin_libraries', true) IS NOT NULL
	   AND current_setting('output_plugin_libraries') !~ 'match_recognize' THEN
		EXECUTE format('ALTER DATABASE %I SET output_plugin_libraries = %s, %L', current_database(),
					   (SELECT string_agg(quote_literal(trim(p)), ', ')
						FROM unnest(string_to_array(current_setting('output_plugin_libraries'), ',')) p),
					   'match_recognize');
	END IF;
END $$;
\c
\set VERBOSITY terse

CREATE TABLE pay (acct int, ts timestamptz, kind text, amount numeric);
-- rows present before the stream exists: the backfill
INSERT INTO pay VALUES
  (1, '2024-01-01 10:00', 'login', 0), (1, '2024-01-01 10:01', 'fail', 0),
  (1, '2024-01-01 10:02', 'fail', 0), (1, '2024-01-01 10:03', 'withdraw', 100),
  (2, '2024-01-01 10:00', 'login', 0);

SELECT match_recognize_create_stream('alerts',
  $$SELECT * FROM pay MATCH_RECOGNIZE (
      PARTITION BY acct ORDER BY ts
      MEASURES FIRST(l.ts) AS login_ts, LAST(w.amount) AS amount, COUNT(f.*) AS fails
      PATTERN (l f+ w)
      DEFINE l AS kind = 'login', f AS kind = 'fail', w AS kind = 'withdraw')$$,
  lateness => interval '10 seconds', late_table => 'pay_late');
SELECT match_recognize_wait_stream('alerts');
-- the withdrawal at 10:03 is not below the watermark (10:02:50) yet
SELECT acct, login_ts, amount, fails, _match_id FROM alerts ORDER BY _match_id;
SELECT state, last_error, rows_in, late_rows, null_rows, matches_out, rows_pending,
       rows_retained, watermark::timestamptz, max_event_time::timestamptz, lag_bytes >= 0 AS lag_ok
  FROM match_recognize_streams;

-- tail: commits in another order than event time
INSERT INTO pay VALUES (2, '2024-01-01 10:05', 'fail', 0);
INSERT INTO pay VALUES (2, '2024-01-01 10:04:55', 'fail', 0);
INSERT INTO pay VALUES (2, '2024-01-01 10:06', 'withdraw', 5);
INSERT INTO pay VALUES (3, '2024-01-01 10:20', 'login', 0);
SELECT match_recognize_wait_stream('alerts');
SELECT acct, login_ts, amount, fails, _match_id FROM alerts ORDER BY _match_id;

-- late rows: 10:07 is below the watermark (10:19:50) when it arrives, even
-- though its partition has seen nothing later (the watermark is global);
-- 10:19:59 is not late
INSERT INTO pay VALUES (2, '2024-01-01 10:07', 'login', 0), (4, '2024-01-01 10:19:59', 'login', 0);
-- NULL event times are dropped and counted, and copied to the late table
INSERT INTO pay VALUES (5, NULL, 'login', 0);
SELECT match_recognize_wait_stream('alerts');
SELECT acct, ts, kind, _watermark::timestamptz FROM pay_late ORDER BY acct;
SELECT rows_in, late_rows, null_rows, matches_out, rows_out, watermark::timestamptz FROM match_recognize_streams;

-- rows in one transaction, and a row exactly at the watermark (not late)
BEGIN;
INSERT INTO pay VALUES (3, '2024-01-01 10:21', 'fail', 0);
INSERT INTO pay VALUES (3, '2024-01-01 10:22', 'fail', 0);
INSERT INTO pay VALUES (3, '2024-01-01 10:23', 'withdraw', 42);
COMMIT;
INSERT INTO pay VALUES (6, '2024-01-01 10:30', 'login', 0);
INSERT INTO pay VALUES (6, '2024-01-01 10:29:50', 'login', 0);
SELECT match_recognize_wait_stream('alerts');
SELECT acct, login_ts, amount, fails, _match_id FROM alerts ORDER BY _match_id;
SELECT late_rows FROM match_recognize_streams;

-- the source and the output cannot be dropped under a stream
DROP TABLE pay;
DROP TABLE alerts;

-- errors
SELECT match_recognize_create_stream('alerts', 'SELECT 1', interval '1 s');
-- the output table exists already
SELECT match_recognize_create_stream('alerts',
  $$SELECT * FROM pay MATCH_RECOGNIZE (PARTITION BY acct ORDER BY ts MEASURES count(*) AS n PATTERN (a+) DEFINE a AS true)$$,
  interval '1 s');
SELECT match_recognize_create_stream('s2',
  $$SELECT acct FROM pay MATCH_RECOGNIZE (PARTITION BY acct ORDER BY ts MEASURES count(*) AS n PATTERN (a+) DEFINE a AS true)$$,
  interval '1 s');
SELECT match_recognize_create_stream('s2',
  $$SELECT * FROM (SELECT * FROM pay) p MATCH_RECOGNIZE (PARTITION BY acct ORDER BY ts MEASURES count(*) AS n PATTERN (a+) DEFINE a AS true)$$,
  interval '1 s');
SELECT match_recognize_create_stream('s2',
  $$SELECT * FROM pay MATCH_RECOGNIZE (PARTITION BY acct ORDER BY ts MEASURES count(*) AS n PATTERN (a+) DEFINE a AS ts > (SELECT now()))$$,
  interval '1 s');
SELECT match_recognize_create_stream('s2',
  $$SELECT * FROM pay MATCH_RECOGNIZE (PARTITION BY acct ORDER BY ts DESC MEASURES count(*) AS n PATTERN (a+) DEFINE a AS true)$$,
  interval '1 s');
SELECT match_recognize_create_stream('s2',
  $$SELECT * FROM pay MATCH_RECOGNIZE (PARTITION BY acct ORDER BY ts MEASURES count(*) AS n PATTERN (a+) DEFINE a AS true)$$,
  5);
SELECT match_recognize_create_stream('s2',
  $$SELECT * FROM pay MATCH_RECOGNIZE (PARTITION BY acct ORDER BY ts MEASURES count(*) AS n PATTERN (a+) DEFINE a AS true)$$,
  'ten seconds');
SELECT match_recognize_create_stream('s2',
  $$SELECT * FROM pay MATCH_RECOGNIZE (PARTITION BY ts ORDER BY acct MEASURES count(*) AS n PATTERN (a+) DEFINE a AS true)$$,
  5, idle_advance => true);
BEGIN;
CREATE TABLE t_in_xact (x int);
SELECT match_recognize_create_stream('s2',
  $$SELECT * FROM pay MATCH_RECOGNIZE (PARTITION BY acct ORDER BY ts MEASURES count(*) AS n PATTERN (a+) DEFINE a AS true)$$,
  interval '1 s');
ROLLBACK;
SELECT count(*) FROM match_recognize_streams;
-- a create_stream that rolls back leaves its slot behind (slots are not
-- transactional); its worker finds no stream and drops it
BEGIN;
SELECT match_recognize_create_stream('s3',
  $$SELECT * FROM pay MATCH_RECOGNIZE (PARTITION BY acct ORDER BY ts MEASURES count(*) AS n PATTERN (a+) WITHIN interval '1 minute' DEFINE a AS true)$$,
  interval '1 s');
SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'mr\_%';
ROLLBACK;
DO $$
BEGIN
  FOR i IN 1 .. 200 LOOP
    EXIT WHEN (SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'mr\_%') = 1;
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'mr\_%';

-- drop: worker, slot and internal tables go; the output table stays
SELECT slot_name AS alerts_slot FROM match_recognize_streams WHERE name = 'public.alerts' \gset
SELECT match_recognize_drop_stream('alerts');
SELECT count(*) FROM match_recognize_streams;
SELECT count(*) FROM pg_replication_slots WHERE slot_name = :'alerts_slot';
SELECT count(*) FROM pg_replication_origin WHERE roname = :'alerts_slot';
SELECT count(*) FROM pg_class WHERE relname LIKE '\_mr\_%';
SELECT count(*) FROM alerts;
SELECT match_recognize_drop_stream('alerts');
BEGIN;
SELECT match_recognize_drop_stream('nope');
ROLLBACK;
-- the worker exits
SELECT pg_sleep(0.5);
SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'match_recognize stream';
DROP TABLE pay, alerts, pay_late;

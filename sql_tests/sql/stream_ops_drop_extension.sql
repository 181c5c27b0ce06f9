--
-- DROP EXTENSION removes every stream's slot, also the slot of a stream
-- whose worker cannot run (its owner may no longer log in), which no
-- worker would ever drop: just before the DROP commits (not when it is
-- rolled back), the slots no process holds are dropped; a running worker
-- drops its own.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse
CREATE ROLE regress_mr_dx_owner LOGIN REPLICATION;
GRANT CREATE ON SCHEMA public TO regress_mr_dx_owner;
CREATE TABLE odx (k int, ts int, v int);
GRANT SELECT ON odx TO regress_mr_dx_owner;
SET ROLE regress_mr_dx_owner;
SELECT match_recognize_create_stream('odx_out1',
  $$SELECT * FROM odx MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN 5 DEFINE a AS v = 1)$$, 0);
RESET ROLE;
SELECT match_recognize_create_stream('odx_out2',
  $$SELECT * FROM odx MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN 5 DEFINE a AS v = 1)$$, 0);
SELECT match_recognize_wait_stream('odx_out1') AND match_recognize_wait_stream('odx_out2') AS caught_up;
SELECT slot_name AS slot1 FROM match_recognize_streams WHERE name = 'public.odx_out1' \gset
SELECT slot_name AS slot2 FROM match_recognize_streams WHERE name = 'public.odx_out2' \gset
SELECT set_config('regress_mr.slot1', :'slot1', false) IS NOT NULL AND
       set_config('regress_mr.slot2', :'slot2', false) IS NOT NULL AS noted;

-- the first stream's worker can no longer start
ALTER ROLE regress_mr_dx_owner NOLOGIN;
SELECT pg_terminate_backend(worker_pid) FROM match_recognize_streams WHERE name = 'public.odx_out1';
DO $$
BEGIN
  FOR i IN 1 .. 200 LOOP
    EXIT WHEN (SELECT active_pid IS NULL FROM pg_replication_slots
               WHERE slot_name = current_setting('regress_mr.slot1'));
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT slot_name = :'slot1' AS first, active_pid IS NOT NULL AS held
  FROM pg_replication_slots WHERE slot_name IN (:'slot1', :'slot2') ORDER BY 1 DESC;

-- a DROP EXTENSION that is rolled back drops nothing
BEGIN;
DROP EXTENSION match_recognize;
ROLLBACK;
SELECT count(*) AS slots FROM pg_replication_slots WHERE slot_name IN (:'slot1', :'slot2');
SELECT count(*) AS streams FROM match_recognize_stream WHERE name LIKE 'public.odx\_%';

-- one that commits drops the idle slot at once, the worker the other
DROP EXTENSION match_recognize;
SELECT count(*) AS idle_slot FROM pg_replication_slots WHERE slot_name = :'slot1';
DO $$
BEGIN
  FOR i IN 1 .. 200 LOOP
    EXIT WHEN NOT EXISTS (SELECT FROM pg_replication_slots
                          WHERE slot_name = current_setting('regress_mr.slot2'));
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT count(*) AS slots FROM pg_replication_slots WHERE slot_name IN (:'slot1', :'slot2');
DROP TABLE odx, odx_out1, odx_out2;
REVOKE CREATE ON SCHEMA public FROM regress_mr_dx_owner;
DROP ROLE regress_mr_dx_owner;
-- the extension again, for the tests that follow
CREATE EXTENSION match_recognize;

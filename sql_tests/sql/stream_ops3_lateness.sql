--
-- Changing the lateness of a running stream (match_recognize_alter_stream
-- (name, lateness => ...)): the new lateness applies from the first source
-- transaction committed after the last one the stream had processed; the
-- watermark never goes back (a raised lateness holds it until the maximum
-- event time minus the new lateness passes it, a lowered one moves it on
-- at once); the same across a worker kill before and after the change is
-- used.  Two streams read the same rows, one of them with its worker
-- killed at every step: same output, same late rows.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

-- kill the stream's worker (once it has one) and wait for the next one
CREATE FUNCTION lt_kill(s text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  old int;
BEGIN
  FOR i IN 1 .. 400 LOOP
    PERFORM pg_stat_clear_snapshot();
    old := (SELECT worker_pid FROM match_recognize_streams WHERE name = 'public.' || s);
    EXIT WHEN old IS NOT NULL;
    PERFORM pg_sleep(0.025);
  END LOOP;
  PERFORM pg_terminate_backend(old);
  FOR i IN 1 .. 400 LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN EXISTS (SELECT FROM match_recognize_streams WHERE name = 'public.' || s
                      AND worker_pid IS NOT NULL AND worker_pid <> old);
    PERFORM pg_sleep(0.025);
  END LOOP;
  RETURN (SELECT worker_pid IS NOT NULL AND worker_pid <> old FROM match_recognize_streams
          WHERE name = 'public.' || s);
END $$;

CREATE TABLE lt_src (ts int, v int);
INSERT INTO lt_src VALUES (1, 1), (2, 2), (3, 0);
\set q '$$SELECT * FROM lt_src MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0, LAST(ts) AS t1 PATTERN (a b) DEFINE a AS v = 1, b AS v = 2)$$'
SELECT match_recognize_create_stream('lt_a', :q, 2, late_table => 'lt_a_late');
SELECT match_recognize_create_stream('lt_b', :q, 2, late_table => 'lt_b_late');
INSERT INTO lt_src VALUES (10, 1), (11, 2), (12, 0);
SELECT match_recognize_wait_stream('lt_a'), match_recognize_wait_stream('lt_b');
SELECT name, lateness, max_event_time, watermark, late_rows FROM match_recognize_streams
  WHERE name LIKE 'public.lt_%' ORDER BY name;

-- raise 2 -> 5: the watermark stays at 10 until the maximum passes 15
SELECT match_recognize_alter_stream('lt_a', lateness => '5');
SELECT match_recognize_alter_stream('lt_b', lateness => '5');
SELECT name, lateness, checkpoint_lateness, lateness_since = COALESCE(last_lsn, '0/0') AS since_last
  FROM match_recognize_stream WHERE name LIKE 'public.lt_%' ORDER BY name;
-- b: killed before any transaction used the new lateness
SELECT lt_kill('lt_b');
INSERT INTO lt_src VALUES (14, 0);
-- late with lateness 2 (below 14 - 2), not with 5 (the watermark is 10)
INSERT INTO lt_src VALUES (11, 1), (13, 2);
-- late either way: below the watermark, which did not go back
INSERT INTO lt_src VALUES (9, 7);
SELECT match_recognize_wait_stream('lt_a'), match_recognize_wait_stream('lt_b');
SELECT name, lateness, max_event_time, watermark, late_rows FROM match_recognize_streams
  WHERE name LIKE 'public.lt_%' ORDER BY name;
SELECT name, checkpoint_lateness FROM match_recognize_stream WHERE name LIKE 'public.lt_%' ORDER BY name;
-- b: killed after the change was used (its checkpoint has it)
SELECT lt_kill('lt_b');
INSERT INTO lt_src VALUES (16, 1), (17, 2);
INSERT INTO lt_src VALUES (20, 0);
SELECT match_recognize_wait_stream('lt_a'), match_recognize_wait_stream('lt_b');
SELECT name, max_event_time, watermark, late_rows FROM match_recognize_streams
  WHERE name LIKE 'public.lt_%' ORDER BY name;

-- lower 5 -> 1: the watermark moves to 20 - 1 with the next transaction
SELECT match_recognize_alter_stream('lt_a', lateness => '1');
SELECT match_recognize_alter_stream('lt_b', lateness => '3');
-- a change no transaction used yet is replaced
SELECT match_recognize_alter_stream('lt_b', lateness => '1');
SELECT name, lateness, checkpoint_lateness, lateness_since = COALESCE(last_lsn, '0/0') AS since_last
  FROM match_recognize_stream WHERE name LIKE 'public.lt_%' ORDER BY name;
-- until then, nothing changes
SELECT name, watermark FROM match_recognize_streams WHERE name LIKE 'public.lt_%' ORDER BY name;
SELECT lt_kill('lt_b');
-- 18 is late with lateness 1 (the watermark becomes 19), not with 5
INSERT INTO lt_src VALUES (18, 1), (21, 1), (22, 2);
SELECT lt_kill('lt_b');
INSERT INTO lt_src VALUES (23, 1), (24, 2), (26, 0);
SELECT match_recognize_wait_stream('lt_a'), match_recognize_wait_stream('lt_b');
SELECT name, lateness, max_event_time, watermark, late_rows, rows_in FROM match_recognize_streams
  WHERE name LIKE 'public.lt_%' ORDER BY name;

-- the output and the late rows, the same for both
SELECT t0, t1, _match_id FROM lt_a ORDER BY t0;
SELECT ts, v, _watermark FROM lt_a_late ORDER BY ts, v;
SELECT count(*) AS differ FROM ((TABLE lt_a EXCEPT ALL TABLE lt_b) UNION ALL (TABLE lt_b EXCEPT ALL TABLE lt_a)) d;
SELECT count(*) AS differ FROM ((SELECT ts, v, _watermark FROM lt_a_late EXCEPT ALL SELECT ts, v, _watermark FROM lt_b_late)
  UNION ALL (SELECT ts, v, _watermark FROM lt_b_late EXCEPT ALL SELECT ts, v, _watermark FROM lt_a_late)) d;

-- refused: a negative lateness, one its type does not take
SELECT match_recognize_alter_stream('lt_a', lateness => '-1');
SELECT match_recognize_alter_stream('lt_a', lateness => '1 hour');
SELECT name, lateness, state FROM match_recognize_streams WHERE name LIKE 'public.lt_%' ORDER BY name;

SELECT match_recognize_drop_stream('lt_a');
SELECT match_recognize_drop_stream('lt_b');
DROP TABLE lt_a, lt_b, lt_a_late, lt_b_late, lt_src;
DROP FUNCTION lt_kill(text);

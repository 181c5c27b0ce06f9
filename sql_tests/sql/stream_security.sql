--
-- Who may create a stream, as whom its worker runs, and what others see.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE ROLE regress_mr_norepl LOGIN;
CREATE ROLE regress_mr_repl LOGIN REPLICATION;
CREATE ROLE regress_mr_nologin REPLICATION;
GRANT CREATE ON SCHEMA public TO regress_mr_norepl, regress_mr_repl, regress_mr_nologin;
CREATE TABLE secret (k int, ts int, v int);
INSERT INTO secret VALUES (1, 1, 1), (1, 2, 2), (1, 3, 0);

\set q '$$SELECT * FROM secret MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a b) DEFINE a AS v = 1, b AS v = 2)$$'

-- a stream reads through a replication slot: REPLICATION is required
SET ROLE regress_mr_norepl;
SELECT match_recognize_create_stream('sec_out', :q, 0);
RESET ROLE;
-- the worker logs in as the owner
SET ROLE regress_mr_nologin;
SELECT match_recognize_create_stream('sec_out', :q, 0);
RESET ROLE;
-- SELECT on the whole source
SET ROLE regress_mr_repl;
SELECT match_recognize_create_stream('sec_out', :q, 0);
RESET ROLE;
-- and no row-level security on it: decoding would bypass the policies
GRANT SELECT ON secret TO regress_mr_repl;
ALTER TABLE secret ENABLE ROW LEVEL SECURITY;
CREATE POLICY only_two ON secret USING (k = 2);
SET ROLE regress_mr_repl;
SELECT match_recognize_create_stream('sec_out', :q, 0);
RESET ROLE;
ALTER TABLE secret DISABLE ROW LEVEL SECURITY;

SET ROLE regress_mr_repl;
SELECT match_recognize_create_stream('sec_out', :q, 0);
SELECT match_recognize_wait_stream('sec_out');
SELECT k, t0 FROM sec_out;
RESET ROLE;
-- the worker runs as the owner; the owner owns the output table
SELECT a.usename FROM pg_stat_activity a JOIN match_recognize_streams s ON a.pid = s.worker_pid;
SELECT tableowner FROM pg_tables WHERE tablename = 'sec_out';
SELECT owner FROM match_recognize_streams;

-- others can neither read the output nor drop the stream, nor forge one
SET ROLE regress_mr_norepl;
SELECT * FROM sec_out;
SELECT match_recognize_drop_stream('sec_out');
INSERT INTO match_recognize_stream (id) VALUES (99);
UPDATE match_recognize_stream SET owner = 'postgres';
RESET ROLE;
SET ROLE regress_mr_repl;
UPDATE match_recognize_stream SET owner = 'postgres';
RESET ROLE;

-- the owner loses SELECT: the worker stops reading and says why
REVOKE SELECT ON secret FROM regress_mr_repl;
INSERT INTO secret VALUES (1, 4, 1), (1, 5, 2), (1, 6, 0);
DO $$
BEGIN
  FOR i IN 1 .. 200 LOOP
    EXIT WHEN (SELECT state FROM match_recognize_streams WHERE name = 'public.sec_out') = 'error';
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT state, last_error FROM match_recognize_streams;
SELECT count(*) FROM sec_out;
-- ... and goes on when it is granted again
GRANT SELECT ON secret TO regress_mr_repl;
DO $$
BEGIN
  FOR i IN 1 .. 400 LOOP
    EXIT WHEN (SELECT state FROM match_recognize_streams WHERE name = 'public.sec_out') = 'running';
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT match_recognize_wait_stream('sec_out');
SELECT state FROM match_recognize_streams;
SELECT k, t0 FROM sec_out ORDER BY t0;

SET ROLE regress_mr_repl;
SELECT match_recognize_drop_stream('sec_out');
DROP TABLE sec_out;
RESET ROLE;
DROP TABLE secret;
REVOKE CREATE ON SCHEMA public FROM regress_mr_norepl, regress_mr_repl, regress_mr_nologin;
DROP ROLE regress_mr_norepl, regress_mr_repl, regress_mr_nologin;

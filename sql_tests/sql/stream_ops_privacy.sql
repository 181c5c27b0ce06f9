--
-- What the status view shows to whom: the last error, the query text and
-- the event times (max_event_time, watermark) carry values of the source
-- and the query's constants; like pg_stat_activity's query, they are shown
-- only to the owner (and roles that have its privileges), superusers and
-- members of pg_read_all_stats.  Text columns read '<insufficient
-- privilege>' for the others, as pg_stat_activity's query does; the event
-- times are NULL, as pg_stat_activity's other columns are.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE ROLE regress_mr_priv_owner LOGIN REPLICATION;
CREATE ROLE regress_mr_priv_other LOGIN;
CREATE ROLE regress_mr_priv_stats LOGIN IN ROLE pg_read_all_stats;
GRANT CREATE ON SCHEMA public TO regress_mr_priv_owner;
CREATE TABLE priv_src (k int, ts int, ssn text);
GRANT SELECT ON priv_src TO regress_mr_priv_owner;
INSERT INTO priv_src VALUES (1, 1, '1'), (1, 2, '2');

SET ROLE regress_mr_priv_owner;
SELECT match_recognize_create_stream('priv_out',
  $$SELECT * FROM priv_src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
    MEASURES FIRST(ts) AS t0 PATTERN (a b) WITHIN 10
    DEFINE a AS ssn::int > 0 AND 'secret-constant' <> '', b AS ssn::int > 0)$$, 0);
SELECT match_recognize_wait_stream('priv_out');
RESET ROLE;

-- a row whose value the DEFINE cannot cast: the error quotes it
INSERT INTO priv_src VALUES (1, 3, '078-05-1120'), (1, 4, '4');
DO $$
BEGIN
  FOR i IN 1 .. 400 LOOP
    EXIT WHEN (SELECT last_error FROM match_recognize_stream s
               JOIN pg_roles r ON r.oid = s.owner
               WHERE r.rolname = 'regress_mr_priv_owner') IS NOT NULL;
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;

-- the owner sees everything
SET ROLE regress_mr_priv_owner;
SELECT name, last_error LIKE '%078-05-1120%' AS error_has_value, max_event_time, watermark,
       query LIKE '%secret-constant%' AS query_shown
  FROM match_recognize_streams;
RESET ROLE;
-- so does a superuser
SELECT name, last_error LIKE '%078-05-1120%' AS error_has_value, max_event_time, watermark,
       query LIKE '%secret-constant%' AS query_shown
  FROM match_recognize_streams;
-- and a member of pg_read_all_stats
SET ROLE regress_mr_priv_stats;
SELECT name, last_error LIKE '%078-05-1120%' AS error_has_value, max_event_time, watermark,
       query LIKE '%secret-constant%' AS query_shown
  FROM match_recognize_streams;
RESET ROLE;
-- anyone else sees the state and the counters, not the values
SET ROLE regress_mr_priv_other;
SELECT name, owner, state IS NOT NULL AS has_state, rows_in IS NOT NULL AS has_counters,
       last_error, max_event_time, watermark, query
  FROM match_recognize_streams;
-- ... nor in the catalog under the view
SELECT last_error FROM match_recognize_stream;
SELECT query FROM match_recognize_stream;
SELECT max_seen, watermark FROM match_recognize_stream;
SELECT bound FROM match_recognize_stream;
SELECT checkpoint_state FROM match_recognize_stream;
SELECT name, state IS NOT NULL AS has_state FROM match_recognize_stream;
-- match_recognize_wait_stream still works for them
SELECT match_recognize_wait_stream('priv_out', '0.1 s') IS NOT NULL AS waited;
RESET ROLE;
-- a role that has the owner's privileges sees what the owner sees
GRANT regress_mr_priv_owner TO regress_mr_priv_other;
SET ROLE regress_mr_priv_other;
SELECT last_error LIKE '%078-05-1120%' AS error_has_value, max_event_time, watermark
  FROM match_recognize_streams;
RESET ROLE;
REVOKE regress_mr_priv_owner FROM regress_mr_priv_other;

SELECT match_recognize_drop_stream('priv_out');
DROP TABLE priv_out, priv_src;
REVOKE CREATE ON SCHEMA public FROM regress_mr_priv_owner;
DROP ROLE regress_mr_priv_owner, regress_mr_priv_other, regress_mr_priv_stats;

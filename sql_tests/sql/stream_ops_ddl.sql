--
-- DDL on a stream's tables.  A DROP that would take the source, the output
-- or the late table of a stream is refused unless CASCADE, like for any
-- dependent object; with CASCADE (and with DROP OWNED BY its owner) the
-- stream goes with them: its catalog row and internal tables at once, its
-- slot by its worker right after the commit.  ALTER TABLE of a source that
-- changes its columns or makes it unlogged is refused at once (the worker
-- would fail only at its next start).
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY default

CREATE ROLE regress_mr_ddl_owner LOGIN REPLICATION;
GRANT CREATE ON SCHEMA public TO regress_mr_ddl_owner;
CREATE TABLE ddl_src (k int, ts int, v int);
GRANT SELECT ON ddl_src TO regress_mr_ddl_owner;
INSERT INTO ddl_src VALUES (1, 1, 1);

SET ROLE regress_mr_ddl_owner;
SELECT match_recognize_create_stream('ddl_out1',
  $$SELECT * FROM ddl_src MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN 5 DEFINE a AS v = 1)$$,
  0, late_table => 'ddl_late1');
RESET ROLE;
SELECT match_recognize_create_stream('ddl_out2',
  $$SELECT * FROM ddl_src MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN 5 DEFINE a AS v = 1)$$, 0);
SELECT match_recognize_wait_stream('ddl_out1') AND match_recognize_wait_stream('ddl_out2') AS caught_up;

-- the source's columns stay as the streams decode them
ALTER TABLE ddl_src ADD COLUMN w int;
ALTER TABLE ddl_src RENAME COLUMN v TO vv;
ALTER TABLE ddl_src ALTER COLUMN v TYPE bigint;
ALTER TABLE ddl_src DROP COLUMN v;
ALTER TABLE ddl_src SET UNLOGGED;
-- what leaves them alone is allowed
ALTER TABLE ddl_src ADD CONSTRAINT ddl_k CHECK (k > 0);
ALTER TABLE ddl_src RENAME TO ddl_src_renamed;
ALTER TABLE ddl_src_renamed RENAME TO ddl_src;
ALTER TABLE ddl_src ALTER COLUMN v SET STATISTICS 200;
INSERT INTO ddl_src VALUES (1, 2, 1);
SELECT match_recognize_wait_stream('ddl_out1') AND match_recognize_wait_stream('ddl_out2') AS caught_up;
SELECT name, state, rows_in FROM match_recognize_streams ORDER BY name;

-- without CASCADE a DROP is refused
\set VERBOSITY terse
DROP TABLE ddl_late1;
DROP TABLE ddl_out2;
DROP TABLE ddl_src;
\set VERBOSITY default

-- DROP OWNED BY the owner takes its stream (its output, late and internal tables)
DROP OWNED BY regress_mr_ddl_owner;
SELECT name FROM match_recognize_stream ORDER BY name;
-- its worker drops the slot
DO $$
BEGIN
  FOR i IN 1 .. 200 LOOP
    EXIT WHEN (SELECT count(*) FROM pg_replication_slots WHERE database = current_database()) = 1;
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT count(*) AS slots FROM pg_replication_slots WHERE database = current_database();

-- DROP TABLE source CASCADE takes the other
DROP TABLE ddl_src CASCADE;
SELECT name FROM match_recognize_stream ORDER BY name;
DO $$
BEGIN
  FOR i IN 1 .. 200 LOOP
    EXIT WHEN NOT EXISTS (SELECT FROM pg_replication_slots WHERE database = current_database());
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT count(*) AS slots FROM pg_replication_slots WHERE database = current_database();
SELECT relname FROM pg_class WHERE relname LIKE 'ddl\_%' OR relname LIKE '\_mr\_%' ORDER BY relname;
-- the output table of the stream that was dropped with its source stays
SELECT t0 FROM ddl_out2 ORDER BY t0;
DROP TABLE ddl_out2;

-- a partitioned source: a partition made unlogged, or attached unlogged
CREATE TABLE ddl_parted (k int, ts int, v int) PARTITION BY RANGE (ts);
CREATE TABLE ddl_parted_1 PARTITION OF ddl_parted FOR VALUES FROM (0) TO (100);
SELECT match_recognize_create_stream('ddl_pout',
  $$SELECT * FROM ddl_parted MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (a) WITHIN 5 DEFINE a AS v = 1)$$, 0);
\set VERBOSITY terse
ALTER TABLE ddl_parted_1 SET UNLOGGED;
CREATE UNLOGGED TABLE ddl_parted_2 (k int, ts int, v int);
ALTER TABLE ddl_parted ATTACH PARTITION ddl_parted_2 FOR VALUES FROM (100) TO (200);
\set VERBOSITY default
SELECT match_recognize_drop_stream('ddl_pout');
-- without a stream, the table is the user's to change
ALTER TABLE ddl_parted ATTACH PARTITION ddl_parted_2 FOR VALUES FROM (100) TO (200);
ALTER TABLE ddl_parted ADD COLUMN w int;
DROP TABLE ddl_parted, ddl_pout;

REVOKE CREATE ON SCHEMA public FROM regress_mr_ddl_owner;
DROP ROLE regress_mr_ddl_owner;

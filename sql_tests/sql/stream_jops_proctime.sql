--
-- Processing-time interval join streams: a row's time is its transaction's
-- commit time, written pg_xact_commit_timestamp(x.xmin); the clock is the
-- last decoded commit's time.  The batch query is the same join over the
-- commit times, taken here from a test_decoding slot's log of the commits
-- (track_commit_timestamp may be off).
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE TABLE jp_l (id int, k int);
CREATE TABLE jp_r (id int, k int);
CREATE TABLE jp_tick (n int);
SELECT 'log' FROM pg_create_logical_replication_slot('jp_log', 'test_decoding');

CREATE FUNCTION jp_query(jtype text, lhs text DEFAULT 'jp_l', rhs text DEFAULT 'jp_r',
                         lt text DEFAULT 'pg_xact_commit_timestamp(l.xmin)',
                         rt text DEFAULT 'pg_xact_commit_timestamp(r.xmin)') RETURNS text LANGUAGE sql AS $$
  SELECT format('SELECT l.id AS lid, r.id AS rid, %4$s AS lat, %5$s AS rat FROM %2$s l %1$s JOIN %3$s r '
                'ON r.k = l.k AND %5$s BETWEEN %4$s - interval ''20 milliseconds'' AND %4$s + interval ''40 milliseconds''',
                jtype, lhs, rhs, lt, rt)
$$;

SELECT match_recognize_create_stream('jp_inner', jp_query('INNER'), lateness => interval '0 seconds');
SELECT match_recognize_create_stream('jp_left', jp_query('LEFT'), lateness => interval '0 seconds');
SELECT match_recognize_create_stream('jp_right', jp_query('RIGHT'), lateness => interval '0 seconds');
SELECT match_recognize_create_stream('jp_full', jp_query('FULL'), lateness => interval '0 seconds');
-- the first cycles done (nothing to backfill): every row below is decoded
SELECT match_recognize_wait_stream(s) FROM unnest(ARRAY['jp_inner', 'jp_left', 'jp_right', 'jp_full']) s;
SELECT name, kind, lateness FROM match_recognize_streams WHERE name LIKE 'public.jp\_%' ORDER BY name;

-- rows in many small transactions a few milliseconds apart: a left and a
-- right row of one transaction (key j % 7) pair for certain, rows of keys
-- 100 + j only on the left or the right are padded for certain, the rest
-- pair or not by their commit times
CREATE PROCEDURE jp_feed(first int, last int) LANGUAGE plpgsql AS $$
BEGIN
  FOR j IN first .. last LOOP
    INSERT INTO jp_l VALUES (j, j % 7);
    IF j % 3 = 0 THEN INSERT INTO jp_r VALUES (j, j % 7); END IF;
    IF j % 5 = 0 THEN INSERT INTO jp_l VALUES (-j, 100 + j); END IF;
    IF j % 5 = 1 THEN INSERT INTO jp_r VALUES (-j, 100 + j); END IF;
    COMMIT;
    PERFORM pg_sleep(0.003 * (j % 4));
    IF j % 2 = 0 THEN INSERT INTO jp_r VALUES (j + 1000, (j + 1) % 7); COMMIT; END IF;
  END LOOP;
END $$;
-- a new worker for the stream: it restores the checkpoint (the retained
-- rows with their commit times) and goes on
CREATE FUNCTION jp_restart(s text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  old int := (SELECT worker_pid FROM match_recognize_streams WHERE name = 'public.' || s);
BEGIN
  PERFORM pg_terminate_backend(old);
  FOR i IN 1 .. 400 LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN EXISTS (SELECT FROM match_recognize_streams WHERE name = 'public.' || s
                      AND worker_pid IS NOT NULL AND worker_pid <> old AND state = 'running');
    PERFORM pg_sleep(0.025);
  END LOOP;
  RETURN (SELECT worker_pid IS NOT NULL AND worker_pid <> old FROM match_recognize_streams
          WHERE name = 'public.' || s);
END $$;
CALL jp_feed(1, 60);
SELECT match_recognize_wait_stream(s) FROM unnest(ARRAY['jp_inner', 'jp_left', 'jp_right', 'jp_full']) s;
SELECT jp_restart(s) FROM unnest(ARRAY['jp_inner', 'jp_left', 'jp_right', 'jp_full']) s;
CALL jp_feed(61, 120);
-- a commit of another table a second later moves the clock past every horizon
SELECT pg_sleep(0.2);
INSERT INTO jp_tick VALUES (1);
SELECT match_recognize_wait_stream(s) FROM unnest(ARRAY['jp_inner', 'jp_left', 'jp_right', 'jp_full']) s;

-- the commit times, from the log
CREATE TABLE jp_ct AS
SELECT (regexp_match(data, '^COMMIT (\d+)'))[1] AS xid,
       (regexp_match(data, '\(at (.*)\)$'))[1]::timestamptz AS at
FROM pg_logical_slot_get_changes('jp_log', NULL, NULL, 'include-xids', '1', 'include-timestamp', '1')
WHERE data LIKE 'COMMIT%';
CREATE VIEW jp_lt AS SELECT t.id, t.k, c.at FROM jp_l t JOIN jp_ct c ON c.xid = t.xmin::text;
CREATE VIEW jp_rt AS SELECT t.id, t.k, c.at FROM jp_r t JOIN jp_ct c ON c.xid = t.xmin::text;
SELECT (SELECT count(*) FROM jp_lt) = (SELECT count(*) FROM jp_l) AS left_timed,
       (SELECT count(*) FROM jp_rt) = (SELECT count(*) FROM jp_r) AS right_timed;

CREATE FUNCTION jp_diff(stream text, jtype text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  batch text := jp_query(jtype, 'jp_lt', 'jp_rt', 'l.at', 'r.at');
  n_stream bigint;
  d bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %I', stream) INTO n_stream;
  EXECUTE format('SELECT count(*) FROM ((SELECT lid, rid, lat, rat FROM (%1$s) b EXCEPT ALL SELECT lid, rid, lat, rat FROM %2$I)
                  UNION ALL (SELECT lid, rid, lat, rat FROM %2$I EXCEPT ALL SELECT lid, rid, lat, rat FROM (%1$s) b)) x',
                 batch, stream) INTO d;
  RETURN format('%s differ%s', d, CASE WHEN n_stream = 0 THEN ', empty' ELSE '' END);
END $$;
SELECT jp_diff('jp_inner', 'INNER'), jp_diff('jp_left', 'LEFT'), jp_diff('jp_right', 'RIGHT'), jp_diff('jp_full', 'FULL');
-- the certain pairs and padded rows are there
SELECT count(*) FILTER (WHERE lid = rid) AS same_txn_pairs,
       count(*) FILTER (WHERE lid < 0 AND rid IS NULL) AS left_padded,
       count(*) FILTER (WHERE rid < 0 AND lid IS NULL) AS right_padded FROM jp_full;
SELECT name, state, last_error, late_rows, null_rows, rows_retained,
       watermark::timestamptz >= (SELECT max(at) FROM (SELECT at FROM jp_lt UNION ALL SELECT at FROM jp_rt) t) AS clock_moved,
       output_watermark::timestamptz = watermark::timestamptz - interval '40 milliseconds' AS delayed
FROM match_recognize_streams WHERE name LIKE 'public.jp\_%' ORDER BY name;

-- a bound of an event time by a processing time is refused
CREATE TABLE jp_e (id int, k int, ts timestamptz);
SELECT match_recognize_create_stream('jp_bad', 'SELECT l.id AS lid FROM jp_e l JOIN jp_r r ON r.k = l.k '
  'AND pg_xact_commit_timestamp(r.xmin) BETWEEN l.ts AND l.ts + interval ''1 second''', lateness => interval '0 seconds');
SELECT match_recognize_create_stream('jp_bad', 'SELECT l.id AS lid, pg_xact_commit_timestamp(l.xmin) AS at FROM jp_l l JOIN jp_r r ON r.k = l.k '
  'AND r.id BETWEEN l.id AND l.id + 1', lateness => 0);

SELECT pg_drop_replication_slot('jp_log');
SELECT match_recognize_drop_stream(s) FROM unnest(ARRAY['jp_inner', 'jp_left', 'jp_right', 'jp_full']) s;
DROP VIEW jp_lt, jp_rt;
DROP TABLE jp_inner, jp_left, jp_right, jp_full, jp_ct, jp_tick, jp_e, jp_l, jp_r;
DROP FUNCTION jp_query(text, text, text, text, text), jp_diff(text, text), jp_restart(text);
DROP PROCEDURE jp_feed(int, int);

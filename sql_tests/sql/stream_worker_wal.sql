--
-- The WAL a stream's slot holds: shown in the view (held_wal_bytes), and
-- bounded for a failed stream, which gives its slot up once the slot holds
-- more than the stream's max_held_wal (and says so in last_error).
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
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
SET client_min_messages = warning;

CREATE TABLE wal_src (k int, ts int, v int);
INSERT INTO wal_src VALUES (1, 1, 0), (1, 2, 1);
SELECT match_recognize_create_stream('wal_out',
  $$SELECT * FROM wal_src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES COUNT(*) AS n PATTERN (a b+) DEFINE a AS v = 0, b AS v > 0)$$,
  lateness => 0, max_held_wal => '1MB');
SELECT match_recognize_wait_stream('wal_out');
SELECT state, held_wal_bytes >= 0 AS shown, max_held_wal FROM match_recognize_streams WHERE name = 'public.wal_out';
-- the stream fails (append-only input); its slot stays for now
UPDATE wal_src SET v = 2 WHERE ts = 2;
SELECT match_recognize_wait_stream('wal_out');
SELECT state, slot_wal_status IS NOT NULL AS has_slot FROM match_recognize_streams WHERE name = 'public.wal_out';
-- WAL grows past max_held_wal: the failed stream drops its slot
CREATE TABLE wal_filler AS SELECT g, repeat('x', 500) AS pad FROM generate_series(1, 10000) g;
DO $$
BEGIN
  FOR i IN 1 .. 200 LOOP
    EXIT WHEN NOT EXISTS (SELECT FROM match_recognize_stream s JOIN pg_replication_slots r USING (slot_name)
                          WHERE s.name = 'public.wal_out')
          AND NOT EXISTS (SELECT FROM pg_stat_activity a JOIN match_recognize_stream s ON a.pid = s.worker_pid
                          WHERE s.name = 'public.wal_out');
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT state, slot_wal_status IS NOT NULL AS has_slot, held_wal_bytes,
       regexp_replace(regexp_replace(last_error, 'held [0-9]+ [kM]B of WAL', 'held N of WAL'),
                      'transaction [0-9]+, commit at [0-9A-F]+/[0-9A-F]+', 'transaction X, commit at Y') AS last_error
  FROM match_recognize_streams WHERE name = 'public.wal_out';
-- the worker is gone; the stream can be dropped
SELECT count(*) FROM pg_stat_activity a JOIN match_recognize_stream s ON a.pid = s.worker_pid
  WHERE s.name = 'public.wal_out';
SELECT match_recognize_drop_stream('wal_out');
DROP TABLE wal_src, wal_out, wal_filler;

--
-- The output table's own constraints: a NOT NULL column the stream cannot
-- fill makes its worker fail with PostgreSQL's message (the direct write
-- builds it without a range table), and it recovers once the table can
-- take the rows.  The worker used to crash here, taking the server with it.
--
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

CREATE TABLE oc_src (k int, ts int, v int);
SELECT match_recognize_create_stream('oc_out',
  $$SELECT * FROM oc_src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, COUNT(*) AS n PATTERN (a b+) DEFINE a AS v = 0, b AS v > 0)$$,
  lateness => 0);
SELECT match_recognize_wait_stream('oc_out');
ALTER TABLE oc_out ADD COLUMN extra int NOT NULL DEFAULT 0;
ALTER TABLE oc_out ALTER COLUMN extra DROP DEFAULT;
INSERT INTO oc_src VALUES (1, 1, 0), (1, 2, 1), (1, 3, 0), (1, 4, 5);
DO $$
BEGIN
  FOR i IN 1 .. 600 LOOP
    EXIT WHEN (SELECT last_error FROM match_recognize_streams WHERE name = 'public.oc_out') IS NOT NULL;
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT last_error FROM match_recognize_streams WHERE name = 'public.oc_out';
SELECT count(*) AS written FROM oc_out;
-- the table can take the rows again: the next start writes them
ALTER TABLE oc_out ALTER COLUMN extra SET DEFAULT 7;
SELECT match_recognize_wait_stream('oc_out', '120 seconds');
SELECT state FROM match_recognize_streams WHERE name = 'public.oc_out';
SELECT k, t0, n, extra FROM oc_out ORDER BY t0;
SELECT match_recognize_drop_stream('oc_out');
DROP TABLE oc_src, oc_out;

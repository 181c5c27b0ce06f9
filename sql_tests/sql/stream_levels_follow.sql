--
-- A levels stream publishes its output watermark (the watermark below
-- which its rows are released: every later fire's row is at or above it),
-- so a stream over its fires can follow it without a lateness.
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

CREATE TABLE lf_ticks (key int, ts bigint, price bigint);
CREATE TABLE lf_alerts (key int, qid int, level bigint);
ALTER TABLE lf_alerts REPLICA IDENTITY FULL;
INSERT INTO lf_alerts SELECT k, q, 10 * q FROM generate_series(1, 3) k, generate_series(1, 4) q;
SELECT match_recognize_create_stream('lf_fires', $$ SELECT * FROM lf_ticks MATCH_LEVELS (
    PARTITION BY key ORDER BY ts VALUE price QUERIES lf_alerts (ID qid, LEVEL level) BAND 5) AS f $$,
    lateness => 0::bigint);
SELECT match_recognize_wait_stream('lf_fires');
-- the fires of a key within 20 time units, over the fires: no lateness
-- (several queries fire on one row: a pattern whose result does not
-- depend on the order of rows with equal times, which is arbitrary)
SELECT match_recognize_create_stream('lf_pairs',
  $$SELECT * FROM lf_fires MATCH_RECOGNIZE (PARTITION BY key ORDER BY ts
      MEASURES FIRST(ts) AS t0, LAST(ts) AS t1, COUNT(*) AS n, SUM(level) AS levels
      PATTERN (a+) WITHIN 20 DEFINE a AS true)$$);
SELECT name, kind, follows, watermark_columns FROM match_recognize_stream
WHERE name IN ('public.lf_fires', 'public.lf_pairs') ORDER BY name;
-- prices going up and down through the levels, in many transactions
CREATE PROCEDURE lf_feed() LANGUAGE plpgsql AS $$
BEGIN
  FOR t IN 1 .. 300 LOOP
    INSERT INTO lf_ticks SELECT k, t, abs(hashint4(t * 7 + k)) % 50 FROM generate_series(1, 3) k;
    COMMIT;
  END LOOP;
END $$;
CALL lf_feed();
SELECT match_recognize_wait_stream('lf_fires');
SELECT match_recognize_wait_stream('lf_pairs');
-- the follower's watermark is the levels stream's output watermark
SELECT (SELECT watermark FROM match_recognize_streams WHERE name = 'public.lf_pairs') =
       (SELECT output_watermark FROM match_recognize_streams WHERE name = 'public.lf_fires') AS follows_fires,
       (SELECT output_watermark FROM match_recognize_streams WHERE name = 'public.lf_fires') AS fires_wm;
-- level 2 equals the batch query over level 1's fires, for every window
-- the followed watermark has closed
SELECT count(*) > 0 AS some_pairs FROM lf_pairs;
SELECT match_recognize_create_view('lf_batch',
  $$SELECT * FROM lf_fires MATCH_RECOGNIZE (PARTITION BY key ORDER BY ts
      MEASURES FIRST(ts) AS t0, LAST(ts) AS t1, COUNT(*) AS n, SUM(level) AS levels
      PATTERN (a+) WITHIN 20 DEFINE a AS true)$$);
SELECT count(*) AS differ FROM (
  (SELECT key, t0, t1, n, levels FROM lf_pairs EXCEPT ALL SELECT key, t0, t1, n, levels FROM lf_batch)
  UNION ALL
  (SELECT key, t0, t1, n, levels FROM lf_batch
   WHERE t1 < (SELECT watermark::bigint - 20 FROM match_recognize_streams WHERE name = 'public.lf_pairs')
   EXCEPT ALL SELECT key, t0, t1, n, levels FROM lf_pairs)) x;
SELECT late_rows FROM match_recognize_streams WHERE name = 'public.lf_pairs';
SELECT match_recognize_drop_stream('lf_pairs');
SELECT match_recognize_drop_stream('lf_fires');
DROP PROCEDURE lf_feed();
DROP VIEW lf_batch;
DROP TABLE lf_ticks, lf_alerts, lf_fires, lf_pairs;

--
-- Non-finite event times (NaN, infinity, -infinity) are treated like NULL:
-- counted in null_rows, copied to the late table, dropped.  One such row
-- must not move the watermark to the end of time (which would make every
-- later row late), neither in the backfill nor in the tail.
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
-- the counters in the catalog may lag the output by up to a second
CREATE FUNCTION nf_wait(stream text, n bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE got bigint;
BEGIN
  FOR i IN 1 .. 200 LOOP
    SELECT rows_in INTO got FROM match_recognize_streams WHERE name = 'public.' || stream;
    EXIT WHEN got >= n;
    PERFORM pg_sleep(0.05);
  END LOOP;
  RETURN got;
END $$;

-- timestamptz: infinity and -infinity in the backfill and in the tail
CREATE TABLE nf_ts (k int, ts timestamptz, v int);
INSERT INTO nf_ts VALUES
  (1, '2024-01-01 10:00', 0), (1, '2024-01-01 10:01', 1), (1, 'infinity', 0),
  (1, '-infinity', 1), (1, NULL, 0), (1, '2024-01-01 10:02', 2);
SELECT match_recognize_create_stream('nf_ts_out',
  $$SELECT * FROM nf_ts MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, COUNT(*) AS n PATTERN (a b+) DEFINE a AS v = 0, b AS v > 0)$$,
  lateness => interval '1 minute', late_table => 'nf_ts_late');
SELECT match_recognize_wait_stream('nf_ts_out');
SELECT rows_in, late_rows, null_rows, watermark::timestamptz, max_event_time::timestamptz
  FROM match_recognize_streams WHERE name = 'public.nf_ts_out';
INSERT INTO nf_ts VALUES (1, 'infinity', 0);
INSERT INTO nf_ts VALUES (1, '2024-01-01 10:05', 0), (1, '-infinity', 2), (1, '2024-01-01 10:06', 1);
INSERT INTO nf_ts VALUES (1, '2024-01-01 10:20', 0);
SELECT match_recognize_wait_stream('nf_ts_out'), nf_wait('nf_ts_out', 11);
-- the rows after the infinite ones are not late, and match
SELECT state, rows_in, late_rows, null_rows, watermark::timestamptz, max_event_time::timestamptz
  FROM match_recognize_streams WHERE name = 'public.nf_ts_out';
SELECT k, t0, n FROM nf_ts_out ORDER BY t0;
SELECT k, ts, v, _watermark::timestamptz FROM nf_ts_late ORDER BY ts NULLS FIRST, v;

-- float8: NaN (which sorts above infinity), infinity, -infinity
CREATE TABLE nf_f (k int, ts float8, v int);
INSERT INTO nf_f VALUES (1, 1, 0), (1, 'NaN', 1), (1, 2, 1);
SELECT match_recognize_create_stream('nf_f_out',
  $$SELECT * FROM nf_f MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, COUNT(*) AS n PATTERN (a b+) DEFINE a AS v = 0, b AS v > 0)$$,
  lateness => 1::float8);
SELECT match_recognize_wait_stream('nf_f_out');
INSERT INTO nf_f VALUES (1, 'NaN', 0), (1, 'Infinity', 0), (1, '-Infinity', 0);
INSERT INTO nf_f VALUES (1, 3, 1), (1, 10, 0), (1, 11, 2), (1, 20, 0);
SELECT match_recognize_wait_stream('nf_f_out'), nf_wait('nf_f_out', 10);
SELECT state, rows_in, late_rows, null_rows, watermark, max_event_time
  FROM match_recognize_streams WHERE name = 'public.nf_f_out';
SELECT k, t0, n FROM nf_f_out ORDER BY t0;

-- numeric and date
CREATE TABLE nf_n (k int, ts numeric, v int);
INSERT INTO nf_n VALUES (1, 'NaN', 0), (1, 1, 0), (1, 2, 1);
SELECT match_recognize_create_stream('nf_n_out',
  $$SELECT * FROM nf_n MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, COUNT(*) AS n PATTERN (a b+) DEFINE a AS v = 0, b AS v > 0)$$,
  lateness => 1::numeric);
SELECT match_recognize_wait_stream('nf_n_out');
INSERT INTO nf_n VALUES (1, 'Infinity', 0), (1, '-Infinity', 0), (1, 'NaN', 1), (1, 3, 1), (1, 10, 0), (1, 20, 0);
SELECT match_recognize_wait_stream('nf_n_out'), nf_wait('nf_n_out', 9);
SELECT state, rows_in, late_rows, null_rows, watermark, max_event_time
  FROM match_recognize_streams WHERE name = 'public.nf_n_out';
SELECT k, t0, n FROM nf_n_out ORDER BY t0;

CREATE TABLE nf_d (k int, ts date, v int);
INSERT INTO nf_d VALUES (1, '2024-01-01', 0), (1, '2024-01-02', 1), (1, 'infinity', 0);
SELECT match_recognize_create_stream('nf_d_out',
  $$SELECT * FROM nf_d MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, COUNT(*) AS n PATTERN (a b+) DEFINE a AS v = 0, b AS v > 0)$$,
  lateness => 1);
SELECT match_recognize_wait_stream('nf_d_out');
INSERT INTO nf_d VALUES (1, '-infinity', 0), (1, '2024-01-05', 0), (1, '2024-01-06', 1), (1, '2024-01-10', 0);
SELECT match_recognize_wait_stream('nf_d_out'), nf_wait('nf_d_out', 7);
SELECT state, rows_in, late_rows, null_rows, watermark, max_event_time
  FROM match_recognize_streams WHERE name = 'public.nf_d_out';
SELECT k, t0, n FROM nf_d_out ORDER BY t0;

SELECT match_recognize_drop_stream('nf_ts_out');
SELECT match_recognize_drop_stream('nf_f_out');
SELECT match_recognize_drop_stream('nf_n_out');
SELECT match_recognize_drop_stream('nf_d_out');
DROP FUNCTION nf_wait;
DROP TABLE nf_ts, nf_ts_out, nf_ts_late, nf_f, nf_f_out, nf_n, nf_n_out, nf_d, nf_d_out;

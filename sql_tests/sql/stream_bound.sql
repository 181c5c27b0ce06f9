--
-- A stream's query is bound once, when the stream is created, with the
-- creator's search_path: the worker replays the stored analyses and
-- resolves no name, so names that mean something else by the time it runs
-- change nothing.
--
CREATE EXTENSION IF NOT EXISTS match_recognize;
\set VERBOSITY terse

CREATE SCHEMA sb;
CREATE TABLE sb.src (k int, ts int, v int);
CREATE FUNCTION sb.hit(int) RETURNS bool LANGUAGE sql IMMUTABLE AS $$ SELECT $1 > 0 $$;
SET search_path = sb, public;
BEGIN;
SELECT match_recognize_create_stream('public.sb_out',
  $$SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, count(*) AS n PATTERN (a b) WITHIN 10
      DEFINE a AS hit(v), b AS NOT hit(v))$$, 0);
-- before the worker has read the definition, the names change meaning
ALTER FUNCTION sb.hit(int) RENAME TO hit_old;
CREATE FUNCTION sb.hit(int) RETURNS bool LANGUAGE sql IMMUTABLE AS $$ SELECT false $$;
ALTER TABLE sb.src RENAME TO src_old;
CREATE TABLE sb.src (k int, ts int, v int);
COMMIT;
RESET search_path;
SELECT bound IS NOT NULL AS bound FROM match_recognize_stream WHERE name = 'public.sb_out';
INSERT INTO sb.src VALUES (1, 1, 1), (1, 2, 0);
INSERT INTO sb.src_old VALUES (1, 1, 1), (1, 2, 0), (1, 3, 5), (1, 4, -1), (1, 30, 0);
SELECT match_recognize_wait_stream('sb_out');
SELECT state, last_error, rows_in FROM match_recognize_streams WHERE name = 'public.sb_out';
SELECT k, t0, n FROM sb_out ORDER BY t0;
SELECT match_recognize_drop_stream('sb_out');

-- a stream's query cannot have parameters, nor a subquery in WITHIN
SELECT match_recognize_create_stream('sb_p',
  $$SELECT * FROM sb.src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES count(*) AS n PATTERN (a) WITHIN 10 DEFINE a AS v > $1)$$, 0);
SELECT match_recognize_create_stream('sb_p',
  $$SELECT * FROM sb.src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES count(*) AS n PATTERN (a) WITHIN (SELECT 10) DEFINE a AS v > 0)$$, 0);
-- the lateness and WITHIN operators are bound too, with the same checks
SELECT match_recognize_create_stream('sb_p',
  $$SELECT * FROM sb.src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES count(*) AS n PATTERN (a) WITHIN 10 DEFINE a AS v > 0)$$, interval '1 s');
SELECT match_recognize_create_stream('sb_p',
  $$SELECT * FROM sb.src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES count(*) AS n PATTERN (a) WITHIN 10::bigint DEFINE a AS v > 0)$$, 0);

DROP TABLE sb_out;
DROP SCHEMA sb CASCADE;

-- under version 1.0 the catalog cannot keep a bound query: update first
\set sb_db :DBNAME
CREATE DATABASE regress_sb_db;
\c regress_sb_db
-- this database must allow our output plugin too (see stream_basic)
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
\c regress_sb_db
CREATE EXTENSION match_recognize VERSION '1.0';
CREATE TABLE s (k int, ts int, v int);
SELECT match_recognize_create_stream('o', $$SELECT * FROM s MATCH_RECOGNIZE (PARTITION BY k
  ORDER BY ts MEASURES count(*) AS n PATTERN (a) WITHIN 10 DEFINE a AS v > 0)$$, 0);
SELECT count(*) FROM pg_replication_slots WHERE database = current_database();
\c :sb_db
DROP DATABASE regress_sb_db;

--
-- How a join stream writes its output table: a plain table as COPY writes
-- (table_multi_insert, then its indexes; defaults of columns the stream
-- does not fill, NOT NULL and CHECK constraints applied), a table with a
-- trigger through an INSERT (the trigger fires); the same rows either way.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY terse

CREATE TABLE jo_l (id int, k int, ts int, note text);
CREATE TABLE jo_r (id int, k int, ts int);
SELECT match_recognize_create_stream('jo_out',
  'SELECT l.id AS lid, r.id AS rid, l.note FROM jo_l l LEFT JOIN jo_r r ON r.k = l.k AND r.ts BETWEEN l.ts AND l.ts + 2',
  lateness => 0, batch_size => 1000);
SELECT match_recognize_wait_stream('jo_out');
-- the user's own columns: a default, a NOT NULL one with a default, a CHECK
ALTER TABLE jo_out ADD COLUMN tag text DEFAULT 'direct',
  ADD COLUMN n int NOT NULL DEFAULT 7, ADD CONSTRAINT jo_lid CHECK (lid > 0);

-- 5000 rows a side (more output rows than a batch of 4096),
-- with long out-of-line notes on some
INSERT INTO jo_l SELECT i, i % 50, i, CASE WHEN i % 1000 = 0 THEN repeat(md5(i::text), 300) END
FROM generate_series(1, 5000) i;
INSERT INTO jo_r SELECT i, i % 50, i + 1 FROM generate_series(1, 5000) i WHERE i % 10 <> 0;
-- a row far ahead closes every horizon
INSERT INTO jo_l VALUES (100000, -1, 100000);
INSERT INTO jo_r VALUES (100000, -2, 100000);
SELECT match_recognize_wait_stream('jo_out');
SELECT count(*) AS rows, count(DISTINCT _match_id) AS ids, count(*) FILTER (WHERE rid IS NULL) AS padded,
       count(*) FILTER (WHERE tag = 'direct' AND n = 7) AS with_defaults,
       sum(length(note)) AS note_chars
FROM jo_out;
-- what the query returns for the rows whose horizon closed
SELECT count(*) AS differ FROM (
  (SELECT lid, rid, note FROM jo_out
   EXCEPT ALL
   SELECT l.id, r.id, l.note FROM jo_l l LEFT JOIN jo_r r ON r.k = l.k AND r.ts BETWEEN l.ts AND l.ts + 2 WHERE l.id <= 5000)
  UNION ALL
  (SELECT l.id, r.id, l.note FROM jo_l l LEFT JOIN jo_r r ON r.k = l.k AND r.ts BETWEEN l.ts AND l.ts + 2 WHERE l.id <= 5000
   EXCEPT ALL
   SELECT lid, rid, note FROM jo_out)) d;

-- a trigger on the output: the rows go through an INSERT, and it fires
CREATE FUNCTION jo_tag() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.tag := 'trigger'; RETURN NEW; END $$;
CREATE TRIGGER jo_tag BEFORE INSERT ON jo_out FOR EACH ROW EXECUTE FUNCTION jo_tag();
INSERT INTO jo_l SELECT i, i % 50, i FROM generate_series(100001, 100100) i;
INSERT INTO jo_r SELECT i, i % 50, i FROM generate_series(100001, 100100) i;
INSERT INTO jo_l VALUES (200000, -1, 200000);
INSERT INTO jo_r VALUES (200000, -2, 200000);
SELECT match_recognize_wait_stream('jo_out');
SELECT tag, n, count(*) FROM jo_out WHERE lid > 5000 GROUP BY tag, n ORDER BY tag;
SELECT count(*) = count(DISTINCT _match_id) AS unique_ids FROM jo_out;
SELECT name, state, last_error FROM match_recognize_streams WHERE name = 'public.jo_out';

-- a NOT NULL column the stream cannot fill, written directly: the
-- constraint's error (the stream in state error), not a crash
DROP TRIGGER jo_tag ON jo_out;
ALTER TABLE jo_out ADD COLUMN must int NOT NULL DEFAULT 1;
ALTER TABLE jo_out ALTER COLUMN must DROP DEFAULT;
INSERT INTO jo_l VALUES (300000, -1, 300000);
INSERT INTO jo_r VALUES (300000, -2, 300000);
DO $$ BEGIN
  FOR i IN 1 .. 600 LOOP
    EXIT WHEN (SELECT state FROM match_recognize_streams WHERE name = 'public.jo_out') = 'error';
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT name, state, regexp_replace(last_error, '\(Failing row contains .*\)', '(Failing row contains ...)') AS last_error
FROM match_recognize_streams WHERE name = 'public.jo_out';

SELECT match_recognize_drop_stream('jo_out');
DROP TABLE jo_l, jo_r, jo_out;
DROP FUNCTION jo_tag();

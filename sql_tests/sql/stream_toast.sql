--
-- Streams over values stored out of line (TOAST): 128 kB texts, a
-- partition key and an event time too wide to stay inline.  The rows the
-- worker reads come from the pending table (backfill, release), from the
-- decoded WAL (where TOASTed values are pointers into the decoder's
-- memory), and from the retained table after a restart; the pending and
-- retained rows are deleted while the runtime still holds their values.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY terse

-- an incompressible text of kb kilobytes
CREATE FUNCTION st_big(seed text, kb int) RETURNS text LANGUAGE sql IMMUTABLE AS
$$SELECT string_agg(md5(seed || ':' || i), '') FROM generate_series(1, kb * 32) i$$;

-- k: a 3 kB key; body: 128 kB, out of line; cb: compressible, out of line
-- compressed.  Bodies: ts 1 'a', 2 'b', 3 'c', 4 'c', 5 'd', 6 'e', 7 'f',
-- 8 'f'.  The output's md5s are checked against the source's rows.
CREATE TABLE st_docs (k text, ts int, body text, cb text);
-- rows present before the stream: the backfill copies them to the pending
-- table, and the runtime reads them from there
INSERT INTO st_docs VALUES (st_big('k1', 3), 1, st_big('a', 128), repeat('a', 300000)),
                           (st_big('k1', 3), 2, st_big('b', 128), repeat('b', 300000));
SELECT ts, length(k), pg_column_size(body) >= 131072 AS body_plain,
       pg_column_compression(cb) AS cb_compression, pg_column_size(cb) > 2000 AS cb_external
  FROM st_docs ORDER BY ts;
SELECT match_recognize_create_stream('st_docs_out',
  $$SELECT * FROM st_docs MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS first_ts, LAST(ts) AS last_ts, md5(FIRST(body)) AS first_body,
               md5(LAST(body)) AS last_body, length(string_agg(body, '')) AS total_len,
               length(LAST(cb)) AS cb_len, count(*) AS n
      PATTERN (a b+)
      DEFINE b AS b.body <> PREV(b.body) AND b.cb <> PREV(b.cb))$$,
  lateness => 0);
SELECT match_recognize_wait_stream('st_docs_out');
-- decoded rows: ts 3 ends b+ (its body differs), ts 4 repeats it, which
-- decides the match 1 .. 3; ts 6 stays pending (the watermark is 6)
INSERT INTO st_docs VALUES (st_big('k1', 3), 3, st_big('c', 128), repeat('c', 300000));
INSERT INTO st_docs VALUES (st_big('k1', 3), 4, st_big('c', 128), repeat('d', 300000));
INSERT INTO st_docs VALUES (st_big('k1', 3), 5, st_big('d', 128), repeat('e', 300000)),
                           (st_big('k1', 3), 6, st_big('e', 128), repeat('f', 300000));
SELECT match_recognize_wait_stream('st_docs_out');
SELECT state, last_error, rows_in, matches_out, rows_pending, rows_retained FROM match_recognize_streams
 WHERE name = 'public.st_docs_out';
SELECT md5(k) = md5(st_big('k1', 3)) AS key_ok, first_ts, last_ts,
       first_body = (SELECT md5(body) FROM st_docs WHERE ts = first_ts) AS first_ok,
       last_body = (SELECT md5(body) FROM st_docs WHERE ts = last_ts) AS last_ok,
       total_len, cb_len, n, _match_id
  FROM st_docs_out ORDER BY _match_id;

-- a worker that starts again rebuilds the partition from the retained
-- table (the rows the match in progress, 4 .., may still need), then reads
-- on: ts 8 repeats ts 7's body and decides the match 4 .. 7, released by
-- the watermark 9 of another partition's row
SELECT pg_terminate_backend(worker_pid) FROM match_recognize_streams WHERE name = 'public.st_docs_out';
INSERT INTO st_docs VALUES (st_big('k1', 3), 7, st_big('f', 128), repeat('g', 300000)),
                           (st_big('k1', 3), 8, st_big('f', 128), repeat('h', 300000)),
                           (st_big('k2', 3), 9, st_big('g', 128), repeat('i', 300000));
SELECT match_recognize_wait_stream('st_docs_out');
SELECT state, last_error, rows_in, matches_out FROM match_recognize_streams WHERE name = 'public.st_docs_out';
SELECT md5(k) = md5(st_big('k1', 3)) AS key_ok, first_ts, last_ts,
       first_body = (SELECT md5(body) FROM st_docs WHERE ts = first_ts) AS first_ok,
       last_body = (SELECT md5(body) FROM st_docs WHERE ts = last_ts) AS last_ok,
       total_len, cb_len, n, _match_id
  FROM st_docs_out ORDER BY _match_id;

-- ALL ROWS PER MATCH writes the wide values to the output table; the event
-- time is a numeric of 6000 digits stored out of line
CREATE TABLE st_nums (k int, n numeric, body text);
ALTER TABLE st_nums ALTER n SET STORAGE EXTERNAL;
INSERT INTO st_nums VALUES (1, 10::numeric ^ 6000 + 1, st_big('n1', 128));
SELECT pg_column_size(n) > 2000 AS n_plain FROM st_nums;
SELECT match_recognize_create_stream('st_nums_out',
  $$SELECT * FROM st_nums MATCH_RECOGNIZE (PARTITION BY k ORDER BY n
      MEASURES CLASSIFIER() AS cls, md5(FIRST(body)) AS first_body
      ALL ROWS PER MATCH
      PATTERN (a b)
      DEFINE b AS b.body <> a.body AND b.n > a.n)$$,
  lateness => 0::numeric);
INSERT INTO st_nums VALUES (1, 10::numeric ^ 6000 + 2, st_big('n2', 128));
INSERT INTO st_nums VALUES (1, 10::numeric ^ 6000 + 3, st_big('n3', 128));
SELECT match_recognize_wait_stream('st_nums_out');
SELECT state, last_error, rows_in, matches_out, rows_out FROM match_recognize_streams WHERE name = 'public.st_nums_out';
SELECT k, (n - 10::numeric ^ 6000)::int AS n_minus_big, cls, first_body = md5(st_big('n1', 128)) AS first_ok,
       md5(body) = md5(st_big('n' || (n - 10::numeric ^ 6000)::int, 128)) AS body_ok, _match_id
  FROM st_nums_out ORDER BY _match_id;
SELECT length(watermark) FROM match_recognize_streams WHERE name = 'public.st_nums_out';

-- the server is still up, and the workers did not crash
SELECT 1 AS alive;

SELECT match_recognize_drop_stream('st_docs_out');
SELECT match_recognize_drop_stream('st_nums_out');
DROP TABLE st_docs, st_docs_out, st_nums, st_nums_out;
DROP FUNCTION st_big(text, int);

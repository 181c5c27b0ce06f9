--
-- Values the runtime keeps: stored out of line (TOAST), compressed inline,
-- expanded objects, short varlenas, cstrings and fixed-length
-- by-reference types, in every role a column can have (PARTITION BY,
-- ORDER BY, DEFINE, MEASURES, aggregates, ALL ROWS output, WITH UNMATCHED
-- ROWS, the automaton lane); then NULL, NaN and infinities.
--
-- rt_check(q) runs the statement q three times: in the MatchRecognize node
-- (automaton allowed), in the node with the general matcher
-- (enable_dfa = off), and as the set-returning function
-- (enable_custom_scan = off).  It fails unless the three agree, and returns
-- the rows (as text, sorted).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY default

CREATE FUNCTION rt_check(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  stmt text := format('SELECT array_agg(x::text ORDER BY x::text) FROM (%s) x',
                      rtrim(match_recognize_sql(q), E'; \n'));
  node text[];
  general text[];
  srf text[];
BEGIN
  PERFORM set_config('match_recognize.enable_custom_scan', 'on', true);
  PERFORM set_config('match_recognize.enable_dfa', 'on', true);
  EXECUTE stmt INTO node;
  PERFORM set_config('match_recognize.enable_dfa', 'off', true);
  EXECUTE stmt INTO general;
  PERFORM set_config('match_recognize.enable_custom_scan', 'off', true);
  EXECUTE stmt INTO srf;
  PERFORM set_config('match_recognize.enable_custom_scan', 'on', true);
  PERFORM set_config('match_recognize.enable_dfa', 'on', true);
  IF node IS DISTINCT FROM general OR node IS DISTINCT FROM srf THEN
    RAISE EXCEPTION 'results differ: node %, general matcher %, function %', node, general, srf;
  END IF;
  RETURN QUERY SELECT unnest(node);
END $$;

-- an incompressible text of kb kilobytes
CREATE FUNCTION rt_big(seed text, kb int) RETURNS text LANGUAGE sql IMMUTABLE AS
$$SELECT string_agg(md5(seed || ':' || i), '') FROM generate_series(1, kb * 32) i$$;

-- the issue's reproducer, as a role without privileges
CREATE ROLE regress_rt_toast;
SET ROLE regress_rt_toast;
CREATE TEMP TABLE docs (ts int, body text);
INSERT INTO docs SELECT g, (SELECT string_agg(md5(g::text || i::text), '') FROM generate_series(1, 200) i)
  FROM generate_series(1, 3) g;
SELECT count(*) FROM match_recognize($$docs MATCH_RECOGNIZE (ORDER BY ts
  MEASURES max(length(body)) AS m PATTERN (a b) DEFINE b AS b.body <> a.body)$$) AS r(m int);
SET match_recognize.enable_custom_scan = off;
SELECT count(*) FROM match_recognize($$docs MATCH_RECOGNIZE (ORDER BY ts
  MEASURES max(length(body)) AS m PATTERN (a b) DEFINE b AS b.body <> a.body)$$) AS r(m int);
RESET match_recognize.enable_custom_scan;
DROP TABLE docs;
RESET ROLE;
DROP ROLE regress_rt_toast;

-- Every wide column stored out of line and uncompressed (EXTERNAL), but
-- cb: compressed inline (MAIN), and tag: short.  Bodies repeat in pairs:
-- b of rows 2 and 3 are equal, so are those of rows 4 and 5.
CREATE TABLE rt_docs (id int, grp text, ord text, body text, cb text, js jsonb, bin bytea, tag text);
ALTER TABLE rt_docs ALTER grp SET STORAGE EXTERNAL, ALTER ord SET STORAGE EXTERNAL,
  ALTER body SET STORAGE EXTERNAL, ALTER js SET STORAGE EXTERNAL,
  ALTER bin SET STORAGE EXTERNAL, ALTER cb SET STORAGE MAIN;
INSERT INTO rt_docs
SELECT id, rt_big('g' || (id + 2) / 3, 3), lpad((10 - id)::text, 3, '0') || rt_big('o', 3),
       rt_big('b' || id / 2, 4), repeat(chr(64 + id), 60000),
       jsonb_build_object('id', id, 'pad', rt_big('j' || id, 3)),
       convert_to(rt_big('x' || id % 2, 3), 'UTF8'), 't' || id
  FROM generate_series(1, 6) id;
SELECT id, length(grp), length(ord), length(body), pg_column_size(body) > 4000 AS body_stored_plain,
       pg_column_compression(cb) AS cb_compression, pg_column_size(cb) < 2000 AS cb_inline,
       octet_length(bin), pg_column_size(tag) AS tag_size
  FROM rt_docs ORDER BY id;
SELECT pg_relation_size(reltoastrelid) > 0 AS has_toast FROM pg_class WHERE relname = 'rt_docs';

-- DEFINE over every kind of value (b.body <> PREV(body) fails for 3 and 5)
SELECT rt_check($$
  SELECT * FROM rt_docs MATCH_RECOGNIZE (ORDER BY id
    MEASURES FIRST(id) AS first_id, LAST(id) AS last_id
    PATTERN (a b*)
    DEFINE b AS b.body <> PREV(b.body) AND b.cb <> PREV(b.cb) AND (b.js->>'id')::int > (a.js->>'id')::int
           AND length(b.bin) = length(a.bin) AND b.grp IS NOT NULL AND b.ord <> a.ord) m $$);

-- MEASURES and aggregates over them: navigation, string_agg, array_agg, max
SELECT rt_check($$
  SELECT first_id, md5(fb) AS first_body, md5(lb) AS last_body, md5(lbin) AS last_bin,
         md5(ljs::text) AS last_js, lcb, md5(sa) AS all_bodies, md5(aa::text) AS all_bins,
         mx, md5(mxb) AS max_body, n
  FROM rt_docs MATCH_RECOGNIZE (ORDER BY id
    MEASURES FIRST(id) AS first_id, FIRST(body) AS fb, LAST(b.body) AS lb, LAST(bin) AS lbin,
             LAST(js) AS ljs, length(LAST(cb)) AS lcb, string_agg(body, ',') AS sa,
             array_agg(bin) AS aa, max(length(cb)) AS mx, max(body) AS mxb, count(*) AS n
    PATTERN (a b+)
    DEFINE b AS b.body <> PREV(b.body)) m $$);
SELECT md5(string_agg(body, ',' ORDER BY id)) AS bodies_1_2, md5(array_agg(bin ORDER BY id)::text) AS bins_1_2,
       md5(max(body)) AS max_body_1_2
  FROM rt_docs WHERE id IN (1, 2);

-- PARTITION BY a stored-out-of-line key (two partitions), which ONE ROW
-- PER MATCH outputs, ORDER BY a compressed one (descending ids)
SELECT rt_check($$
  SELECT md5(grp) AS grp, first_id, last_id, n
  FROM rt_docs MATCH_RECOGNIZE (PARTITION BY grp ORDER BY cb DESC
    MEASURES FIRST(id) AS first_id, LAST(id) AS last_id, count(*) AS n
    PATTERN (a+)) m $$);
SELECT md5(grp), min(id), max(id) FROM rt_docs GROUP BY grp ORDER BY 2;

-- ORDER BY a stored-out-of-line key (descending ids), ALL ROWS PER MATCH
-- outputs every column
SELECT rt_check($$
  SELECT id, md5(ord) AS ord, md5(body) AS body, md5(cb) AS cb, md5(js::text) AS js,
         md5(bin) AS bin, tag, cls, md5(lb) AS running_last_body, n
  FROM rt_docs MATCH_RECOGNIZE (ORDER BY ord
    MEASURES CLASSIFIER() AS cls, LAST(body) AS lb, count(*) AS n
    ALL ROWS PER MATCH
    PATTERN (a b)
    DEFINE b AS b.body <> a.body) m $$);
SELECT id, md5(ord), md5(body), md5(cb), md5(js::text), md5(bin) FROM rt_docs ORDER BY ord;

-- WITH UNMATCHED ROWS: rows 1 and 6 are in no match
SELECT rt_check($$
  SELECT id, md5(body) AS body, length(cb) AS cb, tag, mn
  FROM rt_docs MATCH_RECOGNIZE (ORDER BY id
    MEASURES MATCH_NUMBER() AS mn
    ALL ROWS PER MATCH WITH UNMATCHED ROWS
    PATTERN (a b)
    DEFINE a AS a.body = NEXT(a.body), b AS b.body = a.body) m $$);

-- the automaton lane over numerics of 6000 digits stored out of line (nx:
-- EXTERNAL) and compressed inline (nc: MAIN); v: 5 3 2 4 6 1 2 2, nx
-- follows v, nc follows 7 - v
CREATE TABLE rt_nums (id int, nx numeric, nc numeric);
ALTER TABLE rt_nums ALTER nx SET STORAGE EXTERNAL, ALTER nc SET STORAGE MAIN;
INSERT INTO rt_nums
SELECT id, 10::numeric ^ 6000 * v + 1, 10::numeric ^ 6000 * (7 - v) + 1
  FROM unnest(ARRAY[5, 3, 2, 4, 6, 1, 2, 2]) WITH ORDINALITY AS x(v, id);
SELECT id, pg_column_size(nx) > 2000 AS nx_plain, pg_column_compression(nc) AS nc_compression,
       pg_column_size(nc) < 2000 AS nc_inline, length(nx::text)
  FROM rt_nums ORDER BY id;
EXPLAIN (COSTS OFF) SELECT * FROM match_recognize($mr$rt_nums MATCH_RECOGNIZE (ORDER BY id
    MEASURES FIRST(id) AS first_id, LAST(id) AS last_id
    PATTERN (s d+ u+) DEFINE d AS nx < PREV(nx), u AS nc < PREV(nc))$mr$) AS m(first_id int, last_id int);
-- nx falls at rows 2, 3 and 6, nc at rows 4, 5 and 7: one match, 1 .. 5
SELECT rt_check($$
  SELECT * FROM rt_nums MATCH_RECOGNIZE (ORDER BY id
    MEASURES FIRST(id) AS first_id, LAST(id) AS last_id, md5(LAST(u.nx)::text) AS top
    PATTERN (s d+ u+) DEFINE d AS nx < PREV(nx), u AS nc < PREV(nc)) m $$);
SELECT md5(nx::text) FROM rt_nums WHERE id = 5;
-- equality and ordering of wide numerics in the lane, ALL ROWS: G G L L G L E
SELECT rt_check($$
  SELECT id, cls FROM rt_nums MATCH_RECOGNIZE (ORDER BY id
    MEASURES CLASSIFIER() AS cls
    ALL ROWS PER MATCH
    PATTERN ((e | g | l)+) DEFINE e AS nc = PREV(nc), g AS nc >= PREV(nc), l AS nx <> PREV(nx)) m $$);

-- WITHIN over the wide numerics (the bound is 2 * 10^6000): v 1 .. 3, then
-- 4 .. 6
SELECT rt_check($$
  SELECT * FROM rt_nums MATCH_RECOGNIZE (ORDER BY nx, id
    MEASURES string_agg(id::text, ',') AS ids
    PATTERN (a+) WITHIN 10::numeric ^ 6000 * 2) m $$);

-- expanded objects: array_append() in the input returns an expanded array,
-- which the node reads from its child as it is (no Sort flattens it)
CREATE TABLE rt_ids AS SELECT generate_series(1, 5) AS id;
EXPLAIN (COSTS OFF) SELECT * FROM match_recognize($mr$(SELECT id, array_append(ARRAY[id], id * 10) AS arr FROM rt_ids) s
  MATCH_RECOGNIZE (MEASURES LAST(arr) AS la ALL ROWS PER MATCH PATTERN (a b) DEFINE b AS b.arr[2] > a.arr[2])$mr$)
  AS m(la int[], id int, arr int[]);
SELECT rt_check($$
  SELECT * FROM (SELECT id, array_append(ARRAY[id], id * 10) AS arr FROM rt_ids) s MATCH_RECOGNIZE (
    MEASURES LAST(arr) AS la, array_agg(arr) AS aa, FIRST(arr) AS fa
    ALL ROWS PER MATCH PATTERN (a b) DEFINE b AS b.arr[2] > a.arr[2]) m $$);
-- cstrings and fixed-length by-reference types (uuid, interval, name)
SELECT rt_check($$
  SELECT * FROM (SELECT id, ('x' || id)::cstring AS c, md5(id::text)::uuid AS u,
                        make_interval(days => id) AS iv, ('n' || id)::name AS nm FROM rt_ids) s
  MATCH_RECOGNIZE (
    MEASURES LAST(c)::text AS lc, FIRST(c)::text AS fc, FIRST(u) AS fu, LAST(iv) AS liv, LAST(nm) AS lnm
    PATTERN (a b)
    DEFINE b AS b.iv > a.iv AND b.nm > a.nm AND b.u <> a.u AND b.c::text > a.c::text) m $$);

--
-- NULL, NaN and infinities in every role.  PostgreSQL orders NaN above
-- every number and equal to NaN (numeric and float8); the automaton's and
-- the fast conditions' comparisons must agree with its operators.
--
CREATE TABLE rt_special (id int, n numeric, f float8, t timestamptz);
INSERT INTO rt_special VALUES
  (1, 1, 1, '2024-01-01'), (2, 'NaN', 'NaN', 'infinity'), (3, 'NaN', 'NaN', 'infinity'),
  (4, 'Infinity', 'Infinity', '-infinity'), (5, NULL, NULL, NULL), (6, '-Infinity', '-Infinity', '2024-01-02'),
  (7, 2, 2, '-infinity'), (8, 'NaN', 'NaN', NULL), (9, -1, '-0', 'infinity'), (10, 0, 0, '2024-01-01');
-- what PostgreSQL's operators say, row against the previous row
SELECT id, n > lag(n) OVER w AS n_gt, n = lag(n) OVER w AS n_eq, n < lag(n) OVER w AS n_lt,
       f > lag(f) OVER w AS f_gt, f = lag(f) OVER w AS f_eq, f < lag(f) OVER w AS f_lt,
       t > lag(t) OVER w AS t_gt, t = lag(t) OVER w AS t_eq, t < lag(t) OVER w AS t_lt
  FROM rt_special WINDOW w AS (ORDER BY id) ORDER BY id;
-- the same, as each row's label: G (greater), E (equal), L (less), X (none:
-- a NULL or the first row); each ALL ROWS query is one match of (G|E|L|X)*
EXPLAIN (COSTS OFF) SELECT * FROM match_recognize($mr$rt_special MATCH_RECOGNIZE (ORDER BY id
    MEASURES CLASSIFIER() AS cls ALL ROWS PER MATCH PATTERN ((G | E | L | X)*)
    DEFINE G AS n > PREV(n), E AS n = PREV(n), L AS n < PREV(n))$mr$)
  AS m(id int, cls text, n numeric, f float8, t timestamptz);
SELECT rt_check($$
  SELECT id, cls FROM rt_special MATCH_RECOGNIZE (ORDER BY id
    MEASURES CLASSIFIER() AS cls ALL ROWS PER MATCH PATTERN ((G | E | L | X)*)
    DEFINE G AS n > PREV(n), E AS n = PREV(n), L AS n < PREV(n)) m $$);
SELECT rt_check($$
  SELECT id, cls FROM rt_special MATCH_RECOGNIZE (ORDER BY id
    MEASURES CLASSIFIER() AS cls ALL ROWS PER MATCH PATTERN ((G | E | L | X)*)
    DEFINE G AS f > PREV(f), E AS f = PREV(f), L AS f < PREV(f)) m $$);
-- >=, <= and <> (G: >=, L: <=, N: <>)
SELECT rt_check($$
  SELECT id, cls FROM rt_special MATCH_RECOGNIZE (ORDER BY id
    MEASURES CLASSIFIER() AS cls ALL ROWS PER MATCH PATTERN ((N | G | L | X)*)
    DEFINE G AS f >= PREV(f), L AS f <= PREV(f), N AS n <> PREV(n)) m $$);
SELECT rt_check($$
  SELECT id, cls FROM rt_special MATCH_RECOGNIZE (ORDER BY id
    MEASURES CLASSIFIER() AS cls ALL ROWS PER MATCH PATTERN ((G | E | L | X)*)
    DEFINE G AS t > PREV(t), E AS t = PREV(t), L AS t < PREV(t)) m $$);
-- against a column of the row's own (NaN against numbers)
SELECT rt_check($$
  SELECT id, cls FROM rt_special MATCH_RECOGNIZE (ORDER BY id
    MEASURES CLASSIFIER() AS cls ALL ROWS PER MATCH PATTERN ((G | E | L | X)*)
    DEFINE G AS f > PREV(f, 2), E AS n = NEXT(n), L AS f < NEXT(f, 2)) m $$);
-- PARTITION BY and ORDER BY special values, MEASURES of them
SELECT rt_check($$
  SELECT * FROM rt_special MATCH_RECOGNIZE (PARTITION BY n ORDER BY f DESC NULLS LAST, id
    MEASURES count(*) AS c, FIRST(f) AS ff, LAST(t) AS lt, max(f) AS mf, min(n) AS mn
    PATTERN (a+)) m $$);
SELECT rt_check($$
  SELECT * FROM rt_special MATCH_RECOGNIZE (PARTITION BY f ORDER BY t NULLS FIRST, id
    MEASURES count(*) AS c, FIRST(id) AS fi, LAST(n) AS ln, sum(n) AS sn
    PATTERN (a+)) m $$);
SELECT rt_check($$
  SELECT * FROM rt_special MATCH_RECOGNIZE (PARTITION BY t ORDER BY n, id
    MEASURES count(*) AS c, string_agg(id::text, ',') AS ids, avg(f) AS af
    PATTERN (a+)) m $$);
-- ALL ROWS PER MATCH outputs them as they are
SELECT rt_check($$
  SELECT * FROM rt_special MATCH_RECOGNIZE (ORDER BY n NULLS FIRST, id
    MEASURES CLASSIFIER() AS cls, RUNNING max(f) AS mf
    ALL ROWS PER MATCH WITH UNMATCHED ROWS
    PATTERN (a b) DEFINE a AS f >= 0 OR f < 0, b AS b.n >= a.n) m $$);

DROP TABLE rt_docs, rt_nums, rt_ids, rt_special;
DROP FUNCTION rt_big(text, int);
DROP FUNCTION rt_check(text);

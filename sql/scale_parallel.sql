--
-- Parallel query: the MatchRecognize node under Gather, each participant
-- matching whole partitions: buckets of the PARTITION BY keys' hash, built
-- from a partial input (Parallel Seq Scan), or where the input has none a
-- hash share of the keys per participant.  The results must be those of
-- the serial plan (max_parallel_workers_per_gather = 0), compared with
-- EXCEPT ALL both ways and counts, whatever number of workers launches.
--
-- leave the database as found: drop the extension at the end if we create it
SET client_min_messages = warning;
CREATE TEMP TABLE sp_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;

-- the SQL functions are parallel restricted: a statement calling them may
-- use parallel query, and the set-returning function runs in the leader
SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args, p.proparallel
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
WHERE e.extname = 'match_recognize' AND p.proparallel <> 'u' ORDER BY 1, 2;

CREATE TABLE sp_ticker (symbol text, ts int, price int);
INSERT INTO sp_ticker
SELECT 's' || s, t, 100 + ((s * 7 + t * t * 13) % 11)
FROM generate_series(1, 40) s, generate_series(1, 150) t;
-- NULL keys: one partition of their own
INSERT INTO sp_ticker SELECT NULL, t, 100 + (t * t * 5) % 7 FROM generate_series(1, 60) t;
ANALYZE sp_ticker;

-- cheap parallelism, so that small tables get parallel plans
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET min_parallel_index_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET enable_gathermerge = off;

-- the rows of a query under the current settings against its serial plan's:
-- counts, and the rows only one of them has
CREATE FUNCTION sp_compare(q text, OUT par bigint, OUT ser bigint,
                           OUT only_par bigint, OUT only_ser bigint)
LANGUAGE plpgsql AS $f$
DECLARE workers text := current_setting('max_parallel_workers_per_gather');
BEGIN
  EXECUTE 'CREATE TEMP TABLE sp_p AS ' || q;
  PERFORM set_config('max_parallel_workers_per_gather', '0', true);
  EXECUTE 'CREATE TEMP TABLE sp_s AS ' || q;
  PERFORM set_config('max_parallel_workers_per_gather', workers, true);
  SELECT count(*) INTO par FROM sp_p;
  SELECT count(*) INTO ser FROM sp_s;
  EXECUTE 'SELECT count(*) FROM (TABLE sp_p EXCEPT ALL TABLE sp_s) x' INTO only_par;
  EXECUTE 'SELECT count(*) FROM (TABLE sp_s EXCEPT ALL TABLE sp_p) x' INTO only_ser;
  DROP TABLE sp_p;
  DROP TABLE sp_s;
END $f$;

-- does the plan of a query have the parallel node?
CREATE FUNCTION sp_is_parallel(q text) RETURNS bool
LANGUAGE plpgsql AS $f$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line LIKE '%Parallel Custom Scan (MatchRecognize)%' THEN
      RETURN true;
    END IF;
  END LOOP;
  RETURN false;
END $f$;

-- EXPLAIN ANALYZE, with what varies masked: how many workers could start,
-- who matched how many shares, buckets and rows
CREATE FUNCTION sp_explain(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $f$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    line := regexp_replace(regexp_replace(line, '(Launched|Here): \d+', '\1: N'),
                           'actual rows=\d+ loops=\d+', 'actual rows=N loops=N');
    RETURN NEXT regexp_replace(line, 'Participants: .*', 'Participants: ...');
  END LOOP;
END $f$;

-- EXPLAIN ANALYZE of the bucket executor: what the participants did, summed
-- (rows written, buckets and rows matched, buckets that outgrew work_mem),
-- and how many ran the node
CREATE FUNCTION sp_participants(q text, OUT ran int, OUT written bigint,
                                OUT buckets bigint, OUT matched bigint, OUT spilled bigint)
LANGUAGE plpgsql AS $f$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF line ~ 'Participants: ' THEN
      SELECT count(*), sum(m[1]::bigint), sum(m[2]::bigint), sum(m[3]::bigint),
             sum(m[4]::bigint)
      INTO ran, written, buckets, matched, spilled
      FROM regexp_matches(line,
        'wrote (\d+) rows, matched (\d+) buckets of (\d+) rows \((\d+) over work_mem\)', 'g') m;
    END IF;
  END LOOP;
END $f$;

-- V shape, ONE ROW PER MATCH, with MATCH_NUMBER (per partition)
CREATE FUNCTION sp_vshape(src text DEFAULT 'sp_ticker') RETURNS text
LANGUAGE sql IMMUTABLE AS $f$
SELECT format($q$SELECT * FROM match_recognize($$ %s MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts,
             count(*) AS n, MATCH_NUMBER() AS mno
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) $$) AS m(symbol text, start_ts int, bottom_ts int, end_ts int, n bigint, mno bigint)$q$, src)
$f$;

EXPLAIN (COSTS OFF) SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, n bigint);
SELECT sp_is_parallel(sp_vshape()), * FROM sp_compare(sp_vshape());

-- an order the query asks for: sorted above Gather
EXPLAIN (COSTS OFF) SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n, FIRST(ts) AS f
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, n bigint, f int) ORDER BY symbol, f;
SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n, FIRST(ts) AS f, MATCH_NUMBER() AS mno
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, n bigint, f int, mno bigint)
ORDER BY symbol NULLS FIRST, f LIMIT 6;

-- an aggregate over it: partial aggregates in the workers
EXPLAIN (COSTS OFF) SELECT count(*), sum(n) FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, n bigint);
SELECT count(*), sum(n) FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, n bigint);

-- SKIP TO NEXT ROW (overlapping matches)
SELECT sp_is_parallel(q), c.* FROM (SELECT $q$SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES FIRST(ts) AS f, LAST(ts) AS l, count(b.*) AS nb, MATCH_NUMBER() AS mno
    AFTER MATCH SKIP TO NEXT ROW
    PATTERN (a+ b+)
    DEFINE a AS price >= PREV(price), b AS price < PREV(price)
  ) $$) AS m(symbol text, f int, l int, nb bigint, mno bigint)$q$) s(q), sp_compare(q) c;

-- ALL ROWS PER MATCH, WITH UNMATCHED ROWS
SELECT sp_is_parallel(q), c.* FROM (SELECT $q$SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES CLASSIFIER() AS cls, MATCH_NUMBER() AS mno, RUNNING count(*) AS rn
    ALL ROWS PER MATCH WITH UNMATCHED ROWS
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, ts int, cls text, mno bigint, rn bigint, price int)$q$) s(q), sp_compare(q) c;

-- two PARTITION BY keys, one of them NULL in some rows
SELECT sp_is_parallel(q), c.* FROM (SELECT $q$SELECT * FROM match_recognize($$
    (SELECT symbol, ts % 3 AS k, ts, price FROM sp_ticker
     UNION ALL SELECT symbol, NULL, ts, price FROM sp_ticker WHERE ts % 5 = 0) AS s
    MATCH_RECOGNIZE (
    PARTITION BY k, symbol ORDER BY ts
    MEASURES FIRST(ts) AS f, count(*) AS n, MATCH_NUMBER() AS mno
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(k int, symbol text, f int, n bigint, mno bigint)$q$) s(q), sp_compare(q) c;

-- keys hashed as bits (integers, bool, timestamps: equal values are
-- identical), negative and NULL ones too
SELECT sp_is_parallel(q), c.* FROM (SELECT $q$SELECT * FROM match_recognize($$
    (SELECT (length(symbol) * 1000000000000 - ts % 7 * 3000000000)::int8 AS k,
            ts % 2 = 0 AS b, timestamp '2020-01-01' + (ts % 3) * interval '1 day' AS d,
            ts, price FROM sp_ticker
     UNION ALL SELECT NULL, NULL, NULL, ts, price FROM sp_ticker WHERE ts % 5 = 0) AS s
    MATCH_RECOGNIZE (
    PARTITION BY k, b, d ORDER BY ts, price
    MEASURES FIRST(ts) AS f, count(*) AS n, MATCH_NUMBER() AS mno
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(k int8, b bool, d timestamp, f int, n bigint, mno bigint)$q$) s(q), sp_compare(q) c;

-- text keys stored out of line (TOAST)
CREATE TABLE sp_toast (symbol text, ts int, price int);
ALTER TABLE sp_toast ALTER COLUMN symbol SET STORAGE EXTERNAL;
INSERT INTO sp_toast
SELECT repeat(md5(s::text), 100), t, 100 + ((s * 3 + t * t * 7) % 11)
FROM generate_series(1, 12) s, generate_series(1, 100) t;
ANALYZE sp_toast;
SELECT pg_relation_size(reltoastrelid) > 0 AS toasted
FROM pg_class WHERE relname = 'sp_toast';
SELECT sp_is_parallel(sp_vshape('sp_toast')), * FROM sp_compare(sp_vshape('sp_toast'));

-- keys equal under a nondeterministic collation ('k1' and 'K1') hash alike:
-- each partition is still matched by one participant
CREATE COLLATION sp_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE sp_ci_t (symbol text COLLATE sp_ci, ts int, price int);
INSERT INTO sp_ci_t
SELECT CASE WHEN t % 2 = 0 THEN 'K' || s ELSE 'k' || s END, t, 100 + ((s * 7 + t * t * 13) % 11)
FROM generate_series(1, 30) s, generate_series(1, 100) t;
ANALYZE sp_ci_t;
SELECT sp_is_parallel(q), c.* FROM (SELECT $q$SELECT lower(symbol) AS s, n, f FROM match_recognize($$
    sp_ci_t MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n, FIRST(ts) AS f
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, n bigint, f int)$q$) s(q), sp_compare(q) c;

-- one partition only (one share has no rows), and no rows at all
CREATE TABLE sp_one AS
SELECT 'only' AS symbol, (row_number() OVER (ORDER BY symbol COLLATE "C", ts))::int AS ts, price
FROM sp_ticker WHERE symbol IS NOT NULL;
CREATE TABLE sp_none (LIKE sp_one);
ANALYZE sp_one;
SELECT sp_is_parallel(sp_vshape('sp_one')), * FROM sp_compare(sp_vshape('sp_one'));
SELECT sp_is_parallel(sp_vshape('sp_none')), * FROM sp_compare(sp_vshape('sp_none'));

-- no worker launches: the leader matches every share
SET max_parallel_workers = 0;
SELECT sp_is_parallel(sp_vshape()), * FROM sp_compare(sp_vshape());
RESET max_parallel_workers;

-- a plan run a row at a time (a set-returning SQL function called in the
-- target list) runs Gather without parallel mode: no DSM, so the node makes
-- one pass over all rows
CREATE FUNCTION sp_lazy() RETURNS SETOF text LANGUAGE sql AS $f$
SELECT concat_ws(',', symbol, f, n, mno) FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES FIRST(ts) AS f, count(*) AS n, MATCH_NUMBER() AS mno
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, f int, n bigint, mno bigint) $f$;
SELECT sp_is_parallel($q$SELECT concat_ws(',', symbol, f, n, mno) FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES FIRST(ts) AS f, count(*) AS n, MATCH_NUMBER() AS mno
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, f int, n bigint, mno bigint)$q$);
SELECT * FROM sp_compare('SELECT sp_lazy() AS r');
DROP FUNCTION sp_lazy();

-- workers only (the leader gathers), and one worker with the leader
SET parallel_leader_participation = off;
SELECT sp_is_parallel(sp_vshape()), * FROM sp_compare(sp_vshape());
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 1;
SELECT sp_is_parallel(sp_vshape()), * FROM sp_compare(sp_vshape());
SET max_parallel_workers_per_gather = 2;

-- force_parallel_mode does not change the plans or the rows
SET force_parallel_mode = on;
SELECT sp_is_parallel(sp_vshape()), * FROM sp_compare(sp_vshape());
SET force_parallel_mode = regress;
SELECT sp_is_parallel(sp_vshape()), * FROM sp_compare(sp_vshape());
RESET force_parallel_mode;

-- max_parallel_workers_per_gather = 0: the serial plan
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, n bigint);
SET max_parallel_workers_per_gather = 2;

-- no PARTITION BY: serial
EXPLAIN (COSTS OFF) SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    ORDER BY symbol, ts
    MEASURES count(*) AS n
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(n bigint);

-- a parallel-unsafe (or restricted) function in DEFINE or MEASURES: serial
CREATE FUNCTION sp_unsafe(int) RETURNS int LANGUAGE sql PARALLEL UNSAFE AS 'SELECT $1';
CREATE FUNCTION sp_restricted(int) RETURNS int LANGUAGE sql PARALLEL RESTRICTED AS 'SELECT $1';
CREATE FUNCTION sp_safe(int) RETURNS int LANGUAGE sql PARALLEL SAFE AS 'SELECT $1';
EXPLAIN (COSTS OFF) SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS sp_unsafe(price) < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, n bigint);
EXPLAIN (COSTS OFF) SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES sp_restricted(count(*)::int) AS n
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, n int);
SELECT sp_is_parallel(q), c.* FROM (SELECT $q$SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES sp_safe(count(*)::int) AS n
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS sp_safe(price) < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, n int)$q$) s(q), sp_compare(q) c;
-- ... and in the input
SELECT sp_is_parallel(sp_vshape('(SELECT symbol, ts, sp_unsafe(price) AS price FROM sp_ticker) AS s'));
-- an input whose rows may differ from one run to the next (every
-- participant runs it): LIMIT, an aggregate whose value depends on the
-- order rows are read in, a sample, a volatile function
SELECT sp_is_parallel(sp_vshape('(SELECT * FROM sp_ticker LIMIT 5000) AS s'));
SELECT sp_is_parallel(sp_vshape($s$(SELECT string_agg(symbol, ',') AS symbol, ts, min(price) AS price
  FROM sp_ticker GROUP BY ts, price % 2) AS s$s$));
SELECT sp_is_parallel(sp_vshape('(SELECT * FROM sp_ticker TABLESAMPLE BERNOULLI (50)) AS s'));
SELECT sp_is_parallel(sp_vshape($s$(SELECT * FROM sp_ticker
  WHERE ts < extract(epoch FROM clock_timestamp())) AS s$s$));
-- a parallel-unsafe
-- function in a filter above the node keeps the statement serial
SELECT sp_is_parallel(sp_vshape() || ' WHERE sp_unsafe(n::int) > 0');

-- statement parameters, prepared statements and cached (generic) plans
PREPARE sp_p(int) AS SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n, FIRST(ts) AS f
    PATTERN (a+)
    DEFINE a AS price > $1
  ) $$, $1) AS m(symbol text, n bigint, f int);
SET plan_cache_mode = force_generic_plan;
SELECT sp_is_parallel('EXECUTE sp_p(105)');
CREATE TEMP TABLE sp_gen AS EXECUTE sp_p(105);
CREATE TEMP TABLE sp_gen2 AS EXECUTE sp_p(103);
SET max_parallel_workers_per_gather = 0;
SET plan_cache_mode = force_custom_plan;
CREATE TEMP TABLE sp_cus AS EXECUTE sp_p(105);
CREATE TEMP TABLE sp_cus2 AS EXECUTE sp_p(103);
SET max_parallel_workers_per_gather = 2;
RESET plan_cache_mode;
SELECT (SELECT count(*) FROM sp_gen) AS gen, (SELECT count(*) FROM sp_cus) AS cus,
       (SELECT count(*) FROM (TABLE sp_gen EXCEPT ALL TABLE sp_cus) x) AS only_gen,
       (SELECT count(*) FROM (TABLE sp_cus EXCEPT ALL TABLE sp_gen) x) AS only_cus,
       (SELECT count(*) FROM (TABLE sp_gen2 EXCEPT ALL TABLE sp_cus2) x) +
       (SELECT count(*) FROM (TABLE sp_cus2 EXCEPT ALL TABLE sp_gen2) x) AS diff2;
DEALLOCATE sp_p;

-- rescanned: a subquery run once per outer row restarts Gather, which
-- restarts the shares every time
CREATE FUNCTION sp_rescan() RETURNS text LANGUAGE sql IMMUTABLE AS $f$
SELECT $q$SELECT g, (SELECT count(*) FROM (SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, n bigint) OFFSET 0) x WHERE n > g) AS c
FROM generate_series(1, 3) g$q$
$f$;
SELECT line FROM sp_explain(sp_rescan()) line
WHERE line ~ '(SubPlan|Subquery Scan|Gather|Parallel|Seq Scan|loops)';
SELECT sp_is_parallel(sp_rescan()), * FROM sp_compare(sp_rescan());
DROP FUNCTION sp_rescan();

-- LIMIT over the parallel node (the ORDER BY ... LIMIT above too)
EXPLAIN (COSTS OFF) SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES FIRST(ts) AS f, count(*) AS n
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, f int, n bigint) LIMIT 5;
SELECT count(*) FROM (SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES FIRST(ts) AS f, count(*) AS n
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, f int, n bigint) LIMIT 5) x;

-- a view made by match_recognize_create_view
SELECT match_recognize_create_view('sp_view', $$ SELECT * FROM sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES FIRST(ts) AS f, count(*) AS n, MATCH_NUMBER() AS mno
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$);
SELECT sp_is_parallel('TABLE sp_view'), * FROM sp_compare('TABLE sp_view');

-- the function path (match_recognize.enable_custom_scan off): no Gather
SET match_recognize.enable_custom_scan = off;
EXPLAIN (COSTS OFF) SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, n bigint);
CREATE TEMP TABLE sp_fn AS SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES FIRST(ts) AS f, count(*) AS n, MATCH_NUMBER() AS mno
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, f int, n bigint, mno bigint);
RESET match_recognize.enable_custom_scan;
CREATE TEMP TABLE sp_par AS TABLE sp_view;
SELECT (SELECT count(*) FROM sp_fn) AS fn, (SELECT count(*) FROM sp_par) AS par,
       (SELECT count(*) FROM (TABLE sp_fn EXCEPT ALL TABLE sp_par) x) AS only_fn,
       (SELECT count(*) FROM (TABLE sp_par EXCEPT ALL TABLE sp_fn) x) AS only_par;

-- a role without superuser
CREATE ROLE sp_user;
GRANT SELECT ON sp_ticker TO sp_user;
SET ROLE sp_user;
SELECT sp_is_parallel(sp_vshape()), * FROM sp_compare(sp_vshape());
RESET ROLE;
DROP OWNED BY sp_user;
DROP ROLE sp_user;

-- the hash share executor, where the input has no partial plan (a table
-- with parallel_workers = 0): rows that arrive in order, in a few ascending
-- runs or in many: stored and read back as they came, stored and merged, or
-- sorted (the runs found so far moved into the sort); a small work_mem, so
-- that the runs spill
SET work_mem = '64kB';
CREATE TABLE sp_runs_in AS
SELECT 'r' || lpad(s::text, 3, '0') AS symbol, t AS ts, 100 + ((s * 7 + t * t * 13) % 11) AS price
FROM generate_series(1, 40) s, generate_series(1, 150) t ORDER BY 1, 2;
INSERT INTO sp_runs_in SELECT NULL, t, 100 + (t * t * 5) % 7 FROM generate_series(1, 60) t;
CREATE TABLE sp_runs_few (LIKE sp_runs_in);
INSERT INTO sp_runs_few SELECT * FROM sp_runs_in WHERE symbol > 'r020' ORDER BY 1, 2;
INSERT INTO sp_runs_few SELECT * FROM sp_runs_in WHERE symbol <= 'r010' ORDER BY 1, 2;
INSERT INTO sp_runs_few SELECT * FROM sp_runs_in WHERE symbol IS NULL ORDER BY 2;
INSERT INTO sp_runs_few SELECT * FROM sp_runs_in WHERE symbol > 'r010' AND symbol <= 'r020' ORDER BY 1, 2;
CREATE TABLE sp_runs_many (LIKE sp_runs_in);
INSERT INTO sp_runs_many SELECT * FROM sp_runs_in ORDER BY 1 DESC, 2;
ALTER TABLE sp_runs_in SET (parallel_workers = 0);
ALTER TABLE sp_runs_few SET (parallel_workers = 0);
ALTER TABLE sp_runs_many SET (parallel_workers = 0);
ANALYZE sp_runs_in;
ANALYZE sp_runs_few;
ANALYZE sp_runs_many;
EXPLAIN (COSTS OFF) SELECT * FROM match_recognize($$ sp_runs_in MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, n bigint);
SELECT line FROM sp_explain(sp_vshape('sp_runs_in')) line
WHERE line ~ '(Gather|Workers|Parallel|Shares|Buckets)';
SELECT sp_is_parallel(sp_vshape('sp_runs_in')), * FROM sp_compare(sp_vshape('sp_runs_in'));
SELECT sp_is_parallel(sp_vshape('sp_runs_few')), * FROM sp_compare(sp_vshape('sp_runs_few'));
SELECT sp_is_parallel(sp_vshape('sp_runs_many')), * FROM sp_compare(sp_vshape('sp_runs_many'));
-- a descending ORDER BY over rows in that order
CREATE TABLE sp_runs_desc AS SELECT * FROM sp_runs_in ORDER BY symbol, ts DESC;
ALTER TABLE sp_runs_desc SET (parallel_workers = 0);
ANALYZE sp_runs_desc;
SELECT sp_is_parallel(q), c.* FROM (SELECT $q$SELECT * FROM match_recognize($$
    sp_runs_desc MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts DESC
    MEASURES FIRST(ts) AS f, count(*) AS n, MATCH_NUMBER() AS mno
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, f int, n bigint, mno bigint)$q$) s(q), sp_compare(q) c;
RESET work_mem;
DROP TABLE sp_runs_in;
DROP TABLE sp_runs_few;
DROP TABLE sp_runs_many;
DROP TABLE sp_runs_desc;

-- the bucket executor: many partitions and one huge one, whose bucket
-- outgrows work_mem (its tuplesort spills) while the others are sorted in
-- memory; partitions of one row; text keys under a collation, with NULLs
CREATE TABLE sp_big (symbol text COLLATE "C", ts int, price int, pad text);
INSERT INTO sp_big
SELECT 'p' || s, t, 100 + ((s * 7 + t * t * 13) % 11), NULL
FROM generate_series(1, 2000) s, generate_series(1, 1 + s % 5) t;
INSERT INTO sp_big
SELECT 'huge', t, 100 + ((t % 1000) * (t % 1000) * 13) % 17, repeat('x', 200)
FROM generate_series(1, 30000) t;
INSERT INTO sp_big SELECT NULL, t, 100 + (t * t * 5) % 7, NULL FROM generate_series(1, 500) t;
ANALYZE sp_big;
SET work_mem = '1MB';
SELECT line FROM sp_explain(sp_vshape('sp_big')) line
WHERE line ~ '(Gather|Workers|Parallel|Buckets|Participants)';
SELECT ran BETWEEN 1 AND 3 AS ran, written, buckets, matched, spilled
FROM sp_participants(sp_vshape('sp_big'));
SELECT sp_is_parallel(sp_vshape('sp_big')), * FROM sp_compare(sp_vshape('sp_big'));
SELECT sp_is_parallel(q), c.* FROM (SELECT $q$SELECT * FROM match_recognize($$
    sp_big MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts DESC
    MEASURES FIRST(ts) AS f, count(*) AS n, MATCH_NUMBER() AS mno, LAST(pad) AS pad
    PATTERN (STRT DOWN+ UP*)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, f int, n bigint, mno bigint, pad text)$q$) s(q), sp_compare(q) c;
RESET work_mem;
-- TOAST values (not keys) carried through the buckets
CREATE TABLE sp_toast2 (symbol int, ts int, price int, doc text);
ALTER TABLE sp_toast2 ALTER COLUMN doc SET STORAGE EXTERNAL;
INSERT INTO sp_toast2
SELECT s, t, 100 + ((s * 3 + t * t * 7) % 11), repeat(md5((s * t)::text), 80)
FROM generate_series(1, 20) s, generate_series(1, 60) t;
ANALYZE sp_toast2;
SELECT sp_is_parallel(q), c.* FROM (SELECT $q$SELECT symbol, f, md5(d) FROM match_recognize($$
    sp_toast2 MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES FIRST(ts) AS f, LAST(doc) AS d
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol int, f int, d text)$q$) s(q), sp_compare(q) c;

-- a partial input with barriers of its own: a Parallel Hash Join
CREATE TABLE sp_grp AS SELECT 's' || s AS symbol, s % 3 AS grp FROM generate_series(1, 40) s;
ANALYZE sp_grp;
SET enable_nestloop = off;
SET enable_mergejoin = off;
CREATE FUNCTION sp_join() RETURNS text LANGUAGE sql IMMUTABLE AS $f$
SELECT $q$SELECT * FROM match_recognize($$
    (SELECT t.symbol, g.grp, t.ts, t.price FROM sp_ticker t JOIN sp_grp g USING (symbol)) AS s
    MATCH_RECOGNIZE (
    PARTITION BY grp, symbol ORDER BY ts
    MEASURES count(*) AS n, FIRST(ts) AS f, MATCH_NUMBER() AS mno
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(grp int, symbol text, n bigint, f int, mno bigint)$q$
$f$;
SELECT line FROM sp_explain(sp_join()) line
WHERE line ~ '(Gather|Parallel|Buckets|Hash)' AND line !~ 'Memory Usage';
SELECT sp_is_parallel(sp_join()), * FROM sp_compare(sp_join());
DROP FUNCTION sp_join();
RESET enable_nestloop;
RESET enable_mergejoin;

-- rescanned by a nested loop: a LATERAL subquery (run once per outer row)
-- over the node, whose Gather restarts the buckets for every outer row
CREATE FUNCTION sp_lateral() RETURNS text LANGUAGE sql IMMUTABLE AS $f$
SELECT $q$SELECT g, x.n, x.f FROM generate_series(1, 3) g, LATERAL (
  SELECT * FROM (SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n, FIRST(ts) AS f
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, n bigint, f int) OFFSET 0) y WHERE y.f % 3 = g - 1 OFFSET 0) x$q$
$f$;
SELECT line FROM sp_explain(sp_lateral()) line
WHERE line ~ '(Nested|Gather|Parallel|Buckets|Scan)';
SELECT sp_is_parallel(sp_lateral()), * FROM sp_compare(sp_lateral());
DROP FUNCTION sp_lateral();

-- rescanned while the leader is still matching: EXISTS stops at its first
-- row, and Gather resets the shared state before the node's own rescan
CREATE FUNCTION sp_exists() RETURNS text LANGUAGE sql IMMUTABLE AS $f$
SELECT $q$SELECT g, EXISTS (SELECT 1 FROM (SELECT * FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
  ) $$) AS m(symbol text, n bigint) OFFSET 0) y WHERE y.n > g) AS e
FROM generate_series(1, 8) g$q$
$f$;
SELECT line FROM sp_explain(sp_exists()) line
WHERE line ~ '(SubPlan|Gather|Parallel|Buckets)';
SELECT sp_is_parallel(sp_exists()), * FROM sp_compare(sp_exists());
DROP FUNCTION sp_exists();

-- workers 0, 1, 2 for one query: the leader alone still builds the buckets
SET max_parallel_workers = 0;
SELECT ran, written, buckets, matched, spilled FROM sp_participants(sp_vshape());
RESET max_parallel_workers;
SET max_parallel_workers_per_gather = 1;
SELECT sp_is_parallel(sp_vshape()), * FROM sp_compare(sp_vshape());
SELECT ran BETWEEN 1 AND 2 AS ran, written, buckets, matched, spilled FROM sp_participants(sp_vshape());
SET max_parallel_workers_per_gather = 2;
SELECT ran BETWEEN 1 AND 3 AS ran, written, buckets, matched, spilled FROM sp_participants(sp_vshape());

-- an error in a participant (which one depends on who claims the bucket)
-- ends the query; so does a cancel, while the rows are matched
\set VERBOSITY terse
SELECT count(*) FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n
    PATTERN (a+)
    DEFINE a AS 1 / (price - 105) < 1000
  ) $$) AS m(symbol text, n bigint);
-- ... also while the buckets are written (the input's own expression fails)
SELECT count(*) FROM match_recognize($$
    (SELECT symbol, ts, price / (ts - 150) AS price FROM sp_ticker) AS s MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n
    PATTERN (a+)
    DEFINE a AS price > 0
  ) $$) AS m(symbol text, n bigint);
SET statement_timeout = '300ms';
SELECT count(*) FROM match_recognize($$ sp_ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n
    PATTERN (a+)
    DEFINE a AS pg_sleep(0.01) IS NOT NULL
  ) $$) AS m(symbol text, n bigint);
RESET statement_timeout;
\set VERBOSITY default
-- the query still runs afterwards (the shared files and barrier are gone)
SELECT sp_is_parallel(sp_vshape()), * FROM sp_compare(sp_vshape());
SELECT sp_is_parallel($q$SELECT count(*) FROM match_recognize($$
    (SELECT symbol, ts, price / (ts - 150) AS price FROM sp_ticker) AS s MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES count(*) AS n
    PATTERN (a+)
    DEFINE a AS price > 0
  ) $$) AS m(symbol text, n bigint)$q$);

-- EXPLAIN ANALYZE: Workers Launched is PostgreSQL's, the buckets and what
-- each participant did ours
SELECT line FROM sp_explain(sp_vshape()) line
WHERE line ~ '(Gather|Workers|Parallel|Shares|Buckets|Participants)';

RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET min_parallel_index_scan_size;
RESET max_parallel_workers_per_gather;
RESET enable_gathermerge;
DROP VIEW sp_view;
DROP FUNCTION sp_compare(text);
DROP FUNCTION sp_is_parallel(text);
DROP FUNCTION sp_explain(text);
DROP FUNCTION sp_participants(text);
DROP FUNCTION sp_vshape(text);
DROP FUNCTION sp_unsafe(int);
DROP FUNCTION sp_restricted(int);
DROP FUNCTION sp_safe(int);
DROP TABLE sp_ticker;
DROP TABLE sp_toast;
DROP TABLE sp_toast2;
DROP TABLE sp_big;
DROP TABLE sp_grp;
DROP TABLE sp_one;
DROP TABLE sp_none;
DROP TABLE sp_ci_t;
DROP COLLATION sp_ci;
SELECT CASE WHEN had THEN 'kept' ELSE 'dropped' END AS extension FROM sp_had_ext;
DO $$ BEGIN
  IF NOT (SELECT had FROM sp_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;

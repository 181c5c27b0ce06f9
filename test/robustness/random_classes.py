#!/usr/bin/env python3
"""Random MATCH_RECOGNIZE queries of the classes that broke the engine
before, each run three ways: in the MatchRecognize node with the automaton
allowed, in the node with the general matcher (enable_dfa = off), and as
the set-returning function (enable_custom_scan = off).

Usage: random_classes.py [SEED] [COUNT] [--class NAME ...] [--log FILE] [-v]
(PG* variables name the server; it uses its own database, mr_classes,
dropped at the end.)

Classes (queries are dealt round-robin, COUNT in all):
  toast        values stored out of line, compressed inline, expanded
               arrays, NaN/infinity/NULL, in every column role (PARTITION
               BY, ORDER BY, DEFINE, MEASURES, aggregates, ALL ROWS output,
               WITH UNMATCHED ROWS, the automaton's comparisons)
  decorations  FILTER, ORDER BY, DISTINCT, WITHIN GROUP, VARIADIC, OVER and
               named arguments on navigation, CLASSIFIER, MATCH_NUMBER and
               aggregates
  names        quoted and schema-qualified special names ("PREV"(v),
               public.prev(v), "CLASSIFIER"() ...), which are ordinary
               function calls (such functions exist in the database)
  loops        loop bodies that can match no row ((A?)*, (A? | B)+,
               ((A|())*), (A?){2,} ...), with DEFINEs the automaton runs,
               and the cases of ISO/IEC 19075-5 7.2.8 with known answers
  offsets      navigation offsets 0, 1, large, around 2^31 and 2^63,
               negative, nested
  collations   DEFINE and MEASURES over columns of "C", ICU and
               case-insensitive (nondeterministic) collations: navigation,
               comparisons with constants, aggregates, FILTER
  rescans      the function called again within one statement: LATERAL
               with an argument that changes per outer row, a correlated
               subquery, repeated outer values and NULL

A run fails on:
  CRASH      a backend crash: the query's session or a monitoring session
             lost, or "terminated by signal" in the server log (--log FILE,
             MR_SERVER_LOG, pg_current_logfile() or pg_lsclusters' entry for
             PGPORT; without one, the sessions alone tell)
  INTERNAL   an internal error (SQLSTATE XX000, "unexpected", "cache lookup
             failed", "unrecognized node" ...)
  DIFFERENT  the three runs disagree (different rows, rows against an error,
             or different errors)
  WRONG      the class's oracle disagrees: toast, the same query over the
             same values computed in memory (nothing TOASTed); names, the
             query with the called function's body written out; offsets
             past the partition, the query with NULL for the navigation;
             loops, the first match the standard gives; collations, the
             same query over default-collation copies of the columns with
             an explicit COLLATE at each use; rescans, one call per outer
             value with the value as a constant
  ACCEPTED   a construct the class says must be refused (a decoration on
             navigation, CLASSIFIER or MATCH_NUMBER, an invalid offset, a
             function that does not exist) ran without an error
Budget errors (54000) and timeouts (57014) make a query inconclusive, not a
failure.  The summary counts the queries and failures per class.
"""
import os
import random
import re
import select
import subprocess
import sys

DB = 'mr_classes'
CLASSES = ['toast', 'decorations', 'names', 'loops', 'offsets', 'collations', 'rescans']

args = [a for a in sys.argv[1:]]
verbose = '-v' in args
if verbose:
    args.remove('-v')
only = []
while '--class' in args:
    i = args.index('--class')
    only.append(args[i + 1])
    del args[i:i + 2]
logfile = os.environ.get('MR_SERVER_LOG')
if '--log' in args:
    i = args.index('--log')
    logfile = args[i + 1]
    del args[i:i + 2]
seed = int(args[0]) if len(args) > 0 else 1
count = int(args[1]) if len(args) > 1 else 200
classes = only or CLASSES
for c in classes:
    if c not in CLASSES:
        print('random_classes: unknown class %s (classes: %s)' % (c, ', '.join(CLASSES)))
        sys.exit(2)


def psql(db, sql):
    return subprocess.run(['psql', '-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-d', db, '-c', sql],
                          capture_output=True, text=True)


psql('postgres', 'DROP DATABASE IF EXISTS ' + DB)
r = psql('postgres', 'CREATE DATABASE ' + DB)
if r.returncode != 0:
    print(r.stderr)
    sys.exit(2)

SETUP = r"""
CREATE EXTENSION match_recognize;
-- rb_eval(q, scan, dfa): q rewritten and run with those settings; its rows
-- as text, sorted, or its error as "ERR <sqlstate> <message>"
CREATE FUNCTION rb_eval(q text, scan bool, dfa bool) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  res text;
  st text;
  msg text;
BEGIN
  PERFORM set_config('match_recognize.enable_custom_scan', scan::text, true);
  PERFORM set_config('match_recognize.enable_dfa', dfa::text, true);
  EXECUTE format('SELECT string_agg(x::text, chr(10) ORDER BY x::text) FROM (%s) x',
                 rtrim(match_recognize_sql(q), E'; \n')) INTO res;
  RETURN 'OK ' || coalesce(res, '');
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
  RETURN 'ERR ' || st || ' ' || msg;
END $$;

-- rb_matcher(q): which matcher the node runs q with (automaton, general),
-- or NULL when the node does not run it
CREATE FUNCTION rb_matcher(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  l text;
BEGIN
  PERFORM set_config('match_recognize.enable_custom_scan', 'on', true);
  PERFORM set_config('match_recognize.enable_dfa', 'on', true);
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || rtrim(match_recognize_sql(q), E'; \n') LOOP
    IF l ~ 'Matcher:' THEN
      RETURN substring(l FROM 'Matcher: (\w+)');
    END IF;
  END LOOP;
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  RETURN NULL;
END $$;

CREATE FUNCTION rb_big(seed text, kb int) RETURNS text LANGUAGE sql IMMUTABLE AS
$$SELECT string_agg(md5(seed || ':' || i), '') FROM generate_series(1, kb * 32) i$$;

-- k, body, js and n are stored out of line (EXTERNAL), cb compressed inline
-- (MAIN); f, t and n hold NaN, infinities and NULLs; values repeat, so that
-- equalities hold sometimes
CREATE TABLE rb (id int, k text, body text, cb text, js jsonb, n numeric, f float8,
                 t timestamptz, v int, tag text);
ALTER TABLE rb ALTER k SET STORAGE EXTERNAL, ALTER body SET STORAGE EXTERNAL,
  ALTER js SET STORAGE EXTERNAL, ALTER n SET STORAGE EXTERNAL, ALTER cb SET STORAGE MAIN;
INSERT INTO rb
SELECT id,
       CASE WHEN id % 7 = 0 THEN NULL ELSE rb_big('k' || id % 3, 3) END,
       CASE WHEN id % 11 = 0 THEN NULL ELSE rb_big('b' || (id * 7) % 5, 3) END,
       repeat(chr(65 + (id * 3) % 4), 40000),
       jsonb_build_object('id', id, 'pad', rb_big('j' || id % 4, 3)),
       CASE id % 9 WHEN 0 THEN NULL WHEN 4 THEN 'NaN' WHEN 8 THEN 'Infinity'
            ELSE 10::numeric ^ 6000 * ((id * 5) % 7) + (id % 2) END,
       (ARRAY[1, 'NaN', '-Infinity', 'Infinity', NULL, '-0', 2.5, 0, 'NaN', 1]::float8[])[1 + id % 10],
       (ARRAY['2024-01-01', 'infinity', '-infinity', NULL, '2024-01-02', 'infinity']::timestamptz[])[1 + id % 6],
       CASE WHEN id % 13 = 0 THEN NULL ELSE (id * 37) % 11 END,
       't' || id % 5
  FROM generate_series(1, 26) id;

-- functions named like the special names: a quoted or qualified call is an
-- ordinary call of one of these
CREATE SCHEMA s;
CREATE FUNCTION public.prev(x int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x + 1000';
CREATE FUNCTION public.prev(x int, y int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x + y + 1000';
CREATE FUNCTION public.next(x int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x + 2000';
CREATE FUNCTION public.first(x int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x + 3000';
CREATE FUNCTION public.last(x int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x + 4000';
CREATE FUNCTION "PREV"(x int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x + 5000';
CREATE FUNCTION "LAST"(x int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x + 6000';
CREATE FUNCTION public.classifier() RETURNS text LANGUAGE sql IMMUTABLE AS $f$SELECT 'fn'$f$;
CREATE FUNCTION public.match_number() RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT 42::bigint';
CREATE FUNCTION "CLASSIFIER"() RETURNS text LANGUAGE sql IMMUTABLE AS $f$SELECT 'FN'$f$;
CREATE FUNCTION s.prev(x int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x + 7000';
CREATE FUNCTION s.last(x int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x + 8000';
CREATE FUNCTION s.classifier() RETURNS text LANGUAGE sql IMMUTABLE AS $f$SELECT 's.fn'$f$;
ANALYZE rb;

-- columns of three collations (rbc) and their default-collation copies (rbd)
CREATE COLLATION rb_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE rbc (id int, grp int, c text COLLATE "C", u text COLLATE "und-x-icu", ci text COLLATE rb_ci);
INSERT INTO rbc
SELECT id, id % 2,
       (ARRAY['a', 'B', 'b', 'A', NULL, 'c', 'C', 'ä', 'Ä', 'b'])[1 + (id * 3) % 10],
       (ARRAY['B', 'a', 'b', 'C', 'A', NULL, 'c', 'Ä', 'ä', 'a'])[1 + (id * 7) % 10],
       (ARRAY['a', 'A', 'b', 'B', 'ä', NULL, 'Ä', 'c', 'C', 'a'])[1 + (id * 9) % 10]
  FROM generate_series(1, 24) id;
CREATE TABLE rbd AS SELECT id, grp, c COLLATE "default" AS c, u COLLATE "default" AS u,
                           ci COLLATE "default" AS ci FROM rbc;
"""
r = psql(DB, SETUP)
if r.returncode != 0:
    print(r.stderr)
    sys.exit(2)

rnd = random.Random(seed)
VARS = ['A', 'B', 'C']


def pick(*xs):
    return rnd.choice(xs)


# ---------- pieces shared by the classes ----------

def skip_clause(used):
    return pick('PAST LAST ROW', 'PAST LAST ROW', 'TO NEXT ROW', 'TO FIRST %s' % used[0],
                'TO LAST %s' % used[-1])


def rows_per_match():
    return pick('ONE ROW PER MATCH', 'ONE ROW PER MATCH', 'ALL ROWS PER MATCH',
                'ALL ROWS PER MATCH OMIT EMPTY MATCHES', 'ALL ROWS PER MATCH WITH UNMATCHED ROWS')


def simple_pattern(d=0):
    k = rnd.randint(0, 4 if d < 2 else 0)
    if k <= 1:
        s = rnd.choice(VARS)
    elif k == 2:
        s = '(%s %s)' % (simple_pattern(d + 1), simple_pattern(d + 1))
    elif k == 3:
        s = '(%s | %s)' % (simple_pattern(d + 1), simple_pattern(d + 1))
    else:
        s = '(%s)' % simple_pattern(d + 1)
    return s + pick('', '', '*', '+', '?', '*?', '{1,3}', '{2,}')


def statement(select, source, partition, order, measures, rpm, skip, pattern, defines,
              subset=''):
    return ('SELECT %s FROM %s MATCH_RECOGNIZE (%s ORDER BY %s MEASURES %s %s AFTER MATCH SKIP %s '
            'PATTERN (%s) %s %s) AS m'
            % (select, source, ('PARTITION BY ' + partition) if partition else '', order,
               measures, rpm, skip, pattern, subset,
               ('DEFINE ' + ', '.join(defines)) if defines else ''))


def used_vars(pattern):
    return [v for v in VARS if re.search(r'\b%s\b' % v, pattern)] or ['A']


# ---------- toast ----------

def toast_query():
    pattern = simple_pattern()
    used = used_vars(pattern)
    conds = ['%s.body <> PREV(%s.body)', '%s.body = PREV(%s.body)', '%s.body > FIRST(body)',
             '%s.cb <> PREV(%s.cb)', '%s.cb = NEXT(%s.cb)', "(%s.js->>'id')::int % 2 = 0",
             '%s.n > PREV(%s.n)', '%s.n <= PREV(%s.n)', '%s.n = NEXT(%s.n)', '%s.n <> PREV(%s.n, 2)',
             '%s.f > PREV(%s.f)', '%s.f = PREV(%s.f)', '%s.f < NEXT(%s.f)', '%s.f >= PREV(%s.f)',
             '%s.t > PREV(%s.t)', 'length(%s.k) > 0', '%s.k IS NULL', '%s.tag <> PREV(%s.tag)',
             'md5(%s.body) < md5(PREV(%s.body))', 'count(*) < 4', 'max(%s.n) > 0']
    defines = []
    for v in used:
        if rnd.random() < 0.85:
            c = rnd.choice(conds).replace('%s', v)
            if rnd.random() < 0.3:
                c += ' ' + pick('AND', 'OR') + ' ' + rnd.choice(conds).replace('%s', v)
            defines.append('%s AS %s' % (v, c))
    q = pick('', used[0] + '.', 'U.' if len(used) > 1 else '')
    meas = ['md5(FIRST(%sbody)) AS fb' % q, 'md5(LAST(%sbody)) AS lb' % q,
            'length(LAST(%scb)) AS lcb' % q, 'md5(LAST(%sn)::text) AS ln' % q,
            'LAST(%sf) AS lf' % q, 'FIRST(%st) AS ft' % q, 'md5(string_agg(%sbody, \',\')) AS sa' % q,
            'md5(array_agg(%scb)::text) AS aa' % q, 'max(%sn) = min(%sn) AS same_n' % (q, q),
            'count(%sbody) AS cb' % q, 'max(%sf) AS mf' % q, 'md5(LAST(%sjs)::text) AS lj' % q,
            'md5(PREV(body)) AS pb', 'md5(NEXT(%scb, 2)) AS nc' % q, 'CLASSIFIER() AS cls',
            'MATCH_NUMBER() AS mn', "md5(string_agg(%sk, '')) AS sk" % q]
    rnd.shuffle(meas)
    measures = ', '.join(meas[:rnd.randint(1, 5)])
    subset = 'SUBSET U = (%s)' % ', '.join(used) if q == 'U.' else ''
    partition = pick('', 'k', 'tag', 'f', 'n', 'k, tag')
    order = pick('id', 'body, id', 'n DESC, id', 'f NULLS FIRST, id', 't, id', 'cb, id',
                 'k DESC NULLS LAST, id')
    rpm = rows_per_match()
    if rpm.startswith('ALL'):
        select = pick('*', 'md5(m::text)', 'id, cls' if 'cls' in measures else 'id')
    else:
        select = '*'
    sub = pick(False, False, True)
    source = '(SELECT * FROM rb) r' if sub else 'rb'
    flat = FLAT + (' r' if sub else ' rb')
    skip = skip_clause(used)
    query = statement(select, source, partition, order, measures, rpm, skip, pattern, defines, subset)
    # the same query over the same values, none of them TOASTed
    return query, ('same', statement(select, flat, partition, order, measures, rpm, skip, pattern,
                                     defines, subset))


# rb's rows as values computed in memory: nothing stored out of line or
# compressed
FLAT = ("(SELECT id, k || '' AS k, body || '' AS body, cb || '' AS cb, js::text::jsonb AS js, "
        "n + 0 AS n, f, t, v, tag FROM rb)")


def expanded_query():
    # array_append() returns an expanded array; with no Sort below it the
    # node reads it as it is
    pattern = simple_pattern()
    used = used_vars(pattern)
    defines = ['%s AS %s' % (v, pick('%s.arr[1] > PREV(%s.arr[1])', 'cardinality(%s.arr) = 2',
                                     '%s.arr <> PREV(%s.arr)', "%s.arr[2] % 2 = 0").replace('%s', v))
               for v in used if rnd.random() < 0.8]
    measures = ', '.join(rnd.sample(['LAST(arr) AS la', 'FIRST(arr) AS fa', 'array_agg(arr) AS aa',
                                     'PREV(arr) AS pa', 'count(*) AS c'], rnd.randint(1, 3)))
    src = '(SELECT id, v, array_append(ARRAY[v], id) AS arr FROM rb) r'
    # no ORDER BY: input order (the same seq scan for the node and the function)
    return ('SELECT * FROM %s MATCH_RECOGNIZE (MEASURES %s %s PATTERN (%s) %s) AS m'
            % (src, measures, rows_per_match(), pattern,
               ('DEFINE ' + ', '.join(defines)) if defines else '')), None


# ---------- decorations ----------

# (form, whether it must be refused): a decoration on navigation,
# CLASSIFIER or MATCH_NUMBER, or a named argument, is an error, never
# silently dropped; on aggregates, FILTER is allowed and the rest refused
DECORATED = [
    ('PREV(%sv) FILTER (WHERE false)', True), ('NEXT(%sv) FILTER (WHERE %sv > 0)', True),
    ('LAST(%sv ORDER BY %sv)', True), ('FIRST(%sv ORDER BY %sv DESC)', True),
    ('PREV(DISTINCT %sv)', True), ('LAST(DISTINCT %sv)', True), ('NEXT(ALL %sv)', None),
    ('PREV(VARIADIC ARRAY[%sv])', True), ('LAST(%sv) WITHIN GROUP (ORDER BY %sv)', True),
    ('FIRST(%sv) OVER ()', True), ('LAST(%sv) OVER (ORDER BY %sv)', True),
    ('CLASSIFIER() OVER ()', True), ('CLASSIFIER() FILTER (WHERE true)', True),
    ('MATCH_NUMBER() OVER ()', True), ('MATCH_NUMBER() FILTER (WHERE false)', True),
    ('CLASSIFIER(DISTINCT A)', True), ('MATCH_NUMBER() WITHIN GROUP (ORDER BY 1)', True),
    ('prev(x => %sv)', True), ('last(x => %sv)', True), ('next(x => %sv, y => 1)', True),
    ('first(%sv, n => 1)', True), ('PREV(%sv, 1 ORDER BY %sv)', True),
    ('count(*) OVER ()', True), ('sum(%sv) OVER ()', True),
    ('sum(%sv) FILTER (WHERE %sv > 3)', False), ("count(%sv) FILTER (WHERE CLASSIFIER() = 'A')", False),
    ("string_agg(%sv::text, ',' ORDER BY %sv)", True), ('sum(DISTINCT %sv)', True),
    ('percentile_cont(0.5) WITHIN GROUP (ORDER BY %sv)', True),
    ('PREV(LAST(%sv) FILTER (WHERE true))', True), ('LAST(PREV(%sv) ORDER BY 1)', True),
    ('RUNNING PREV(%sv) FILTER (WHERE true)', True), ('FINAL LAST(%sv ORDER BY %sv)', True),
]


def decorations_query():
    v = pick('A', 'B', '')
    q = (v + '.') if v else ''
    form, refused = rnd.choice(DECORATED)
    e = form.replace('%s', q)
    pattern = pick('A B+', '(A | B)+', 'A B* C?', 'A+ B')
    used = used_vars(pattern)
    defines = [d for d in ['A AS v > PREV(v)', 'B AS v <= PREV(v)', 'C AS true'] if d[0] in used]
    if e.startswith('FINAL') or rnd.random() < 0.6:
        measures = '%s AS x, count(*) AS c' % e
    else:
        var = rnd.choice(used)
        defines = [d for d in defines if not d.startswith(var)]
        defines.append('%s AS (%s) IS NOT NULL' % (var, e))
        measures = 'count(*) AS c'
    query = statement('*', 'rb', pick('', 'tag'), 'id', measures, rows_per_match(), 'PAST LAST ROW',
                      pattern, defines)
    return query, ('error',) if refused else None


# ---------- names ----------

# (form, equivalent): a quoted or schema-qualified name is an ordinary call
# (of the functions made in SETUP: public.prev(x) = x + 1000, ...), so the
# query must give what it gives with the function's body written out; an
# equivalent None means no such function exists (an error)
NAMES = [
    ('"PREV"(%sv)', '(%sv + 5000)'), ('"prev"(%sv)', '(%sv + 1000)'), ('"LAST"(%sv)', '(%sv + 6000)'),
    ('"last"(%sv)', '(%sv + 4000)'), ('"NEXT"(%sv)', None), ('"next"(%sv)', '(%sv + 2000)'),
    ('"FIRST"(%sv)', None), ('"first"(%sv)', '(%sv + 3000)'), ('public.prev(%sv)', '(%sv + 1000)'),
    ('public.last(%sv)', '(%sv + 4000)'), ('public.first(%sv)', '(%sv + 3000)'),
    ('public.next(%sv)', '(%sv + 2000)'), ('s.prev(%sv)', '(%sv + 7000)'), ('s.last(%sv)', '(%sv + 8000)'),
    ('public.prev(%sv, 1)', '(%sv + 1001)'), ('"prev"(%sv, 1)', '(%sv + 1001)'),
    ('"CLASSIFIER"()', "'FN'::text"), ('"classifier"()', "'fn'::text"),
    ('public.classifier()', "'fn'::text"), ('s.classifier()', "'s.fn'::text"),
    ('"MATCH_NUMBER"()', None), ('"match_number"()', '42::bigint'), ('public.match_number()', '42::bigint'),
    ('pg_catalog.count(*)', 'count(*)'), ('pg_catalog.max(%sv)', 'max(%sv)'),
    ('public."PREV"(%sv)', '(%sv + 5000)'), ('"PREV"(PREV(%sv))', '(PREV(%sv) + 5000)'),
    ('PREV("prev"(%sv))', 'PREV(%sv + 1000)'), ('LAST(public.prev(%sv))', 'LAST(%sv + 1000)'),
    ('FIRST(s.prev(%sv), 1)', 'FIRST(%sv + 7000, 1)'), ('PREV(s.last(%sv), 2)', 'PREV(%sv + 8000, 2)'),
    ('"A".v', 'A.v'), ('a.v', 'A.v'), ('"U".v', 'U.v'), ('prev(%sv)', 'PREV(%sv)'),
    ('Prev(%sv)', 'PREV(%sv)'), ('classifier()', 'CLASSIFIER()'), ('Match_Number()', 'MATCH_NUMBER()'),
]


def names_query():
    v = pick('A', 'B', '')
    q = (v + '.') if v else ''
    form, equiv = rnd.choice(NAMES)
    e = form.replace('%s', q)
    pattern = pick('A B+', '(A | B)+', 'A B* C?', 'A+ B')
    used = used_vars(pattern)
    defines = [d for d in ['A AS v > PREV(v)', 'B AS v <= PREV(v)', 'C AS true'] if d[0] in used]
    subset = 'SUBSET U = (A, B)' if 'B' in used else ''
    partition = pick('', 'tag')
    rpm = rows_per_match()

    def build(x):
        if in_define:
            d = [dd for dd in defines if not dd.startswith(var)]
            d.append('%s AS (%s)::text > \'1\'' % (var, x))
            return statement('*', 'rb', partition, 'id', 'count(*) AS c, LAST(id) AS li', rpm,
                             'PAST LAST ROW', pattern, d, subset)
        return statement('*', 'rb', partition, 'id', '%s AS x, count(*) AS c' % x, rpm,
                         'PAST LAST ROW', pattern, defines, subset)

    in_define = rnd.random() < 0.3 and 'count' not in form and 'max' not in form
    var = rnd.choice(used)
    if equiv is None:
        return build(e), ('error',)
    return build(e), ('same', build(equiv.replace('%s', q)))


# ---------- loops ----------

def nullable(d=0):
    """a pattern that can match no row"""
    k = rnd.randint(0, 7 if d < 2 else 2)
    a = rnd.choice(VARS)
    if k == 0:
        return a + pick('?', '*', '??', '*?', '{0,2}', '{,3}')
    if k == 1:
        return '()'
    if k == 2:
        return '(%s)%s' % (any_pattern(d + 1), pick('?', '*', '??', '*?', '{0,3}'))
    if k == 3:
        return '(%s | %s)' % (nullable(d + 1), any_pattern(d + 1))
    if k == 4:
        return '(%s %s)' % (nullable(d + 1), nullable(d + 1))
    if k == 5:
        return '(%s | ())' % any_pattern(d + 1)
    if k == 6:
        return '(%s)%s' % (nullable(d + 1), pick('*', '+', '{2,}', '{1,3}', '{0,}', '+?', '*?'))
    return '((%s)%s)' % (nullable(d + 1), pick('?', '??'))


def any_pattern(d=0):
    if rnd.random() < 0.5:
        return nullable(d + 1)
    a = rnd.choice(VARS)
    return a + pick('', '', '+', '{2}', '{1,2}', '+?')


# ISO/IEC 19075-5 7.2.8: an iteration of a loop that matches no row is
# allowed only to fill the lower bound or as the loop's last iteration.
# (pattern, DEFINE, rows (id, v, w), the first match's first .. last id)
LOOP_CASES = [
    ('(B? | A)+', 'B AS v = 3', [(3, 0), (3, 0), (2, 0)], (1, 2)),
    ('(B? | A)*', 'B AS v = 3', [(3, 0), (2, 0)], (1, 1)),
    ('(D | A*?)*', 'D AS v > 0', [(2, 0), (0, 0)], (1, 1)),
    ('(B? (A?)??)*', 'B AS v <= w', [(1, 2), (3, 2)], (1, 1)),
    ('((C{2,4})? B*?)*', '', [(0, 0)] * 5, (1, 4)),
]


def loop_case():
    pattern, define, rows, (first, last) = rnd.choice(LOOP_CASES)
    values = ', '.join('(%d, %d, %d)' % (i + 1, v, w) for i, (v, w) in enumerate(rows))
    query = ('SELECT fi, li FROM (SELECT * FROM (VALUES %s) AS x(id, v, w)) t MATCH_RECOGNIZE ('
             'ORDER BY id MEASURES FIRST(id) AS fi, LAST(id) AS li, MATCH_NUMBER() AS mn '
             'ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (%s) %s) AS m WHERE mn = 1'
             % (values, pattern, ('DEFINE ' + define) if define else ''))
    return query, ('value', 'OK (%d,%d)' % (first, last))


def loop_query():
    if rnd.random() < 0.15:
        return loop_case()
    fixed = ['(A?)*', '(A? | B)+', '((A | ())*)', '(A?){2,}', '(B? | A)+', '(B? | A)*',
             '(D | A*?)*', '(B? (A??)?)*', '((C{2,4})? B*?)*', '(A* | B?)*', '(() | A)+',
             '(A?){2,} B', '((A | B?)+)*', '(A?)+?', '((A?)*)*', '(A | B??)*? C']
    if rnd.random() < 0.35:
        body = rnd.choice(fixed)
    else:
        body = '(%s)%s' % (nullable(), pick('*', '+', '{2,}', '{1,4}', '*?', '+?', '{3}', '{0,2}'))
    if rnd.random() < 0.3:
        body = '%s %s' % (body, pick('A', 'B', 'C', 'B+', 'C?'))
    vars_used = [x for x in ['A', 'B', 'C', 'D'] if re.search(r'\b%s\b' % x, body)]
    # comparisons the automaton runs (including numerics stored out of line,
    # and float8 NaN)
    conds = ['v > PREV(v)', 'v < PREV(v)', 'v = PREV(v)', 'v >= 5', 'v <> NEXT(v)', 'v <= PREV(v, 2)',
             'f > PREV(f)', 'f = PREV(f)', 'n < PREV(n)', 'n >= NEXT(n)', 'id > 0', 'v > 3', 'v <= 6']
    defines = []
    for x in vars_used:
        if x == 'D' or rnd.random() < 0.85:
            defines.append('%s AS %s' % (x, rnd.choice(conds)))
    if rnd.random() < 0.15:
        # a path-dependent one: the general matcher only
        defines = defines[:-1] + ['%s AS count(*) < 5' % vars_used[-1]] if vars_used else defines
    meas = ['FIRST(id) AS fi', 'LAST(id) AS li', 'count(*) AS c', 'CLASSIFIER() AS cls',
            'MATCH_NUMBER() AS mn']
    meas += ['LAST(%s.id) AS l%s' % (x, x.lower()) for x in vars_used]
    meas += ['count(%s.*) AS c%s' % (x, x.lower()) for x in vars_used]
    measures = ', '.join(rnd.sample(meas, rnd.randint(1, 3)))
    rpm = rows_per_match()
    skip = pick('PAST LAST ROW', 'PAST LAST ROW', 'TO NEXT ROW')
    return statement('*', 'rb', pick('', '', 'tag'), 'id', measures, rpm, skip, body, defines), None


# ---------- offsets ----------

# offsets past every partition (26 rows): the value is NULL; invalid ones
# (negative, fractional, NULL, beyond bigint) must be refused; small ones
# are only compared across the three runs
BEYOND = ['1000', '2147483646', '2147483647', '2147483648', '4294967296', '9223372036854775806',
          '9223372036854775807']
INVALID = ['-1', '-2147483648', '-9223372036854775808', '9223372036854775808', '1.5', 'NULL']
SMALL = ['0', '1', '2', '25', '(1)', '1::bigint', '2::smallint']

# (form, its type): {o} the offset under test, {p} a second one
OFFSET_FORMS = [
    ('PREV(%sv, {o})', 'int'), ('NEXT(%sv, {o})', 'int'), ('FIRST(%sv, {o})', 'int'),
    ('LAST(%sv, {o})', 'int'), ('PREV(FIRST(%sv, {o}), {p})', 'int'), ('NEXT(LAST(%sv, {p}), {o})', 'int'),
    ('PREV(LAST(%sv), {o})', 'int'), ('NEXT(FIRST(%sv, {o}))', 'int'), ('PREV(%sn, {o})', 'numeric'),
    ('LAST(%sbody, {o})', 'text'), ('PREV(CLASSIFIER(), {o})', 'text'), ('NEXT(%sf, {o})', 'float8'),
]


def offsets_query():
    v = pick('A', 'B', '')
    q = (v + '.') if v else ''
    kind = pick('beyond', 'beyond', 'invalid', 'small')
    off = rnd.choice({'beyond': BEYOND, 'invalid': INVALID, 'small': SMALL}[kind])
    form, typ = rnd.choice(OFFSET_FORMS)
    e = form.replace('%s', q).replace('{o}', off).replace('{p}', rnd.choice(SMALL))
    pattern = pick('A B+', '(A | B)+', 'A B* C?', 'A+ B', 'A{2,} B?')
    used = used_vars(pattern)
    defines = [d for d in ['A AS v > PREV(v)', 'B AS v <= PREV(v)', 'C AS true'] if d[0] in used]
    in_define = rnd.random() < 0.4
    var = rnd.choice(used)
    neg = pick('', 'NOT ')
    partition = pick('', 'tag')
    rpm = rows_per_match()

    def build(x):
        if in_define:
            d = [dd for dd in defines if not dd.startswith(var)]
            d.append('%s AS (%s) IS %sNULL' % (var, x, neg))
            return statement('*', 'rb', partition, 'id', 'count(*) AS c, LAST(id) AS li', rpm,
                             'PAST LAST ROW', pattern, d)
        return statement('*', 'rb', partition, 'id', 'md5((%s)::text) AS x, count(*) AS c' % x, rpm,
                         'PAST LAST ROW', pattern, defines)

    if kind == 'beyond':
        return build(e), ('same', build('NULL::' + typ))
    if kind == 'invalid':
        return build(e), ('error',)
    return build(e), None


# ---------- collations ----------

COLLS = {'c': '"C"', 'u': '"und-x-icu"', 'ci': 'rb_ci'}
# {v} a variable, {c} the column, {k} where the default-collation copy gets
# its explicit COLLATE (empty over rbc)
COLL_CONDS = ['{v}.{c} > PREV({v}.{c}){k}', '{v}.{c} = PREV({v}.{c}){k}',
              '{v}.{c}{k} <= FIRST({c})', "{v}.{c}{k} = 'b'", "{v}.{c}{k} < 'b'",
              "lower({v}.{c}){k} < 'c'", '{v}.{c}{k} >= LAST({c}, 1)',
              'max({v}.{c}{k}) <= LAST({v}.{c})', "min({c}{k}) = 'a'",
              '{v}.{c}{k} IN (PREV({v}.{c}), NEXT({v}.{c}))', "{v}.{c}{k} LIKE 'a%'"]
COLL_MEAS = ['max({c}{k}) AS mx', 'min({c}{k}) AS mn', 'LAST({c}) > FIRST({c}){k} AS up',
             "count(*) FILTER (WHERE {c}{k} = 'a') AS na", "LAST({c}){k} = 'B' AS lb",
             "string_agg({c}, ',') AS sa", 'CLASSIFIER() AS cls']


def collations_query():
    pattern = simple_pattern()
    used = used_vars(pattern)
    col = rnd.choice(list(COLLS))
    conds = [(v, rnd.choice(COLL_CONDS)) for v in used if rnd.random() < 0.85]
    meas = rnd.sample(COLL_MEAS, rnd.randint(1, 3))
    partition = pick('', 'grp')
    rpm = rows_per_match()
    skip = skip_clause(used)

    def build(table, k):
        defines = ['%s AS %s' % (v, c.format(v=v, c=col, k=k)) for v, c in conds]
        measures = ', '.join(m.format(c=col, k=k) for m in meas) + ', count(*) AS n'
        return statement('*' if rpm.startswith('ONE') else 'id, n', table, partition, 'id',
                         measures, rpm, skip, pattern, defines)

    return build('rbc', ''), ('same', build('rbd', ' COLLATE ' + COLLS[col]))


# ---------- rescans ----------

# measures of known types, for the column definition list
RESCAN_MEAS = [('count(*) AS c', 'c bigint'), ('LAST(v) AS lv', 'lv integer'),
               ('MATCH_NUMBER() AS mn', 'mn bigint'), ('CLASSIFIER() AS cls', 'cls text'),
               ('sum(v) AS sv', 'sv bigint'), ('FIRST(id) AS fi', 'fi integer'),
               ('md5(LAST(body)) AS lb', 'lb text')]
RESCAN_CONDS = ['%s.v > $1', '%s.v <= $1', '%s.v > PREV(%s.v) + $1 - 3', 'count(*) <= $1',
                '%s.v + $1 > 8', '$1 IS NULL OR %s.v <> $1']


def rescans_query():
    pattern = simple_pattern()
    used = used_vars(pattern)
    defines = ['%s AS %s' % (v, rnd.choice(RESCAN_CONDS).replace('%s', v))
               for v in used if rnd.random() < 0.9]
    meas = rnd.sample(RESCAN_MEAS, rnd.randint(1, 3))
    partition = pick('', 'tag')
    item = ('rb MATCH_RECOGNIZE (%s ORDER BY id MEASURES %s ONE ROW PER MATCH AFTER MATCH SKIP %s '
            'PATTERN (%s) %s)' % (('PARTITION BY ' + partition) if partition else '',
                                  ', '.join(m for m, _ in meas), skip_clause(used), pattern,
                                  ('DEFINE ' + ', '.join(defines)) if defines else ''))
    cols = ', '.join((['tag text'] if partition else []) + [c for _, c in meas])
    xs = [rnd.choice(['1', '3', '5', '7', 'NULL']) for _ in range(rnd.randint(2, 5))]
    call = 'match_recognize($mr$%s$mr$, %%s::int) AS r(%s)' % (item, cols)
    values = ', '.join('(%d, %s)' % (i, x) for i, x in enumerate(xs))
    if rnd.random() < 0.6:
        query = 'SELECT o.i, o.p, r.* FROM (VALUES %s) o(i, p), LATERAL %s' % (values, call % 'o.p')
        other = ' UNION ALL '.join('SELECT %d, %s::int, r.* FROM %s' % (i, x, call % x)
                                   for i, x in enumerate(xs))
    else:
        agg = "(SELECT string_agg(r::text, ';' ORDER BY r::text) FROM %s)"
        query = 'SELECT o.i, o.p, %s FROM (VALUES %s) o(i, p)' % (agg % (call % 'o.p'), values)
        other = ' UNION ALL '.join('SELECT %d, %s::int, %s' % (i, x, agg % (call % x))
                                   for i, x in enumerate(xs))
    return query, ('same', other)


GENERATORS = {
    'toast': lambda: expanded_query() if rnd.random() < 0.15 else toast_query(),
    'decorations': decorations_query,
    'names': names_query,
    'loops': loop_query,
    'offsets': offsets_query,
    'collations': collations_query,
    'rescans': rescans_query,
}

# ---------- running ----------

INTERNAL = re.compile(r'^ERR XX000|unexpected|cache lookup failed|unrecognized node|'
                      r'unrecognized .*type|could not find|not yet implemented|variable not found')


class Monitor:
    """A session kept open: a backend crash makes the postmaster end it."""

    def __init__(self):
        self.p = subprocess.Popen(['psql', '-X', '-q', '-At', '-d', DB], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def alive(self):
        try:
            self.p.stdin.write("SELECT 'alive';\n")
            self.p.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        ready, _, _ = select.select([self.p.stdout], [], [], 30)
        return bool(ready) and self.p.stdout.readline().strip() == 'alive'

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        self.p.wait()


def find_logfile():
    """the server's log: pg_current_logfile() (logging collector), else the
    cluster of PGPORT in pg_lsclusters (Debian, pg_virtualenv), else None"""
    r = psql(DB, 'SELECT pg_current_logfile()')
    if r.returncode == 0 and r.stdout.strip():
        d = psql(DB, "SELECT current_setting('data_directory')").stdout.strip()
        return os.path.join(d, r.stdout.strip())
    try:
        out = subprocess.run(['pg_lsclusters', '-h'], capture_output=True, text=True).stdout
    except OSError:
        return None
    port = os.environ.get('PGPORT', '5432')
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 7 and f[2] == port and os.path.exists(f[6]):
            return f[6]
    return None


def log_size():
    try:
        return os.path.getsize(logfile) if logfile else None
    except OSError:
        return None


def log_crashes(start):
    """"terminated by signal" lines logged since offset start, or None"""
    if start is None:
        return None
    try:
        with open(logfile, 'rb') as f:
            f.seek(start)
            return f.read().count(b'terminated by signal')
    except OSError:
        return None


def run(query, other=None):
    """[node, node with enable_dfa = off, function, matcher, other], where
    other is the node's result for the query `other` (or ''); None when the
    session was lost"""
    sql = ("SET statement_timeout = '10s'; SET match_recognize.max_threads = 20000; "
           "SELECT rb_eval($rbq$%s$rbq$, true, true), rb_eval($rbq$%s$rbq$, true, false), "
           "rb_eval($rbq$%s$rbq$, false, true), rb_matcher($rbq$%s$rbq$), %s;"
           % (query, query, query, query,
              "rb_eval($rbq$%s$rbq$, true, true)" % other if other else "''"))
    r = subprocess.run(['psql', '-X', '-q', '-At', '-F', '\x1f', '-R', '\x1e', '-d', DB, '-c', sql],
                       capture_output=True, text=True)
    if ('server closed the connection' in r.stderr or 'connection to server' in r.stderr
            or 'terminating connection' in r.stderr):
        return None, r.stderr
    if r.returncode != 0:
        # the whole statement failed (a timeout across the runs)
        return ['ERR ' + r.stderr.strip()] * 3 + ['', ''], r.stderr
    return r.stdout.rstrip('\x1e\n').split('\x1f'), r.stderr


def normalize(res):
    if res.startswith('ERR '):
        # the error's SQLSTATE and text, with numbers (match numbers, rows) out
        return re.sub(r'\d+', 'N', res)
    return res


if not logfile:
    logfile = find_logfile()
log_start = log_size()
monitor = Monitor()
if not monitor.alive():
    print('random_classes: cannot open the monitoring session')
    sys.exit(2)

stats = {c: {'run': 0, 'ok': 0, 'error': 0, 'inconclusive': 0, 'fail': 0, 'automaton': 0}
         for c in classes}
failures = []

def fail(cls, kind, query, detail):
    failures.append((cls, kind, query, detail))
    stats[cls]['fail'] += 1
    print('%s [%s]: %s\n%s' % (kind, cls, query, detail))


RUNS = ('node', 'node, enable_dfa = off', 'function')
for i in range(count):
    cls = classes[i % len(classes)]
    query, oracle = GENERATORS[cls]()
    st = stats[cls]
    st['run'] += 1
    res, err = run(query, oracle[1] if oracle and oracle[0] == 'same' else None)
    if res is None or not monitor.alive():
        fail(cls, 'CRASH', query, '  ' + err.strip())
        monitor.close()
        # wait for the server to come back before going on
        for _ in range(60):
            if psql(DB, 'SELECT 1').returncode == 0:
                break
            subprocess.run(['sleep', '1'])
        monitor = Monitor()
        if not monitor.alive():
            print('random_classes: the server did not come back')
            break
        continue
    if len(res) != 5:
        fail(cls, 'BAD OUTPUT', query, '  ' + repr(res)[:300])
        continue
    if res[3] == 'automaton':
        st['automaton'] += 1
    other = res[4]
    res = res[:3]
    internal = [x for x in res + [other] if x.startswith('ERR') and INTERNAL.search(x)]
    if internal:
        fail(cls, 'INTERNAL', query, '  ' + internal[0][:300])
        continue
    if any(x.startswith(('ERR 54000', 'ERR 57014')) or 'canceling statement' in x
           for x in res + [other]):
        st['inconclusive'] += 1
        continue
    n = [normalize(x) for x in res]
    if not (n[0] == n[1] == n[2]):
        fail(cls, 'DIFFERENT', query, '\n'.join('  %-24s %s' % (RUNS[k] + ':', res[k][:300].replace('\n', ' | '))
                                                 for k in range(3)))
        continue
    if oracle and oracle[0] == 'error' and not res[0].startswith('ERR'):
        # a construct that must be refused was accepted
        fail(cls, 'ACCEPTED', query, '  ' + res[0][:300].replace('\n', ' | '))
        continue
    if oracle and oracle[0] == 'value' and res[0] != oracle[1]:
        fail(cls, 'WRONG', query, '  result:    %s\n  expected:  %s'
             % (res[0][:300].replace('\n', ' | '), oracle[1]))
        continue
    if oracle and oracle[0] == 'same' and normalize(other) != n[0]:
        fail(cls, 'WRONG', query, '  result:    %s\n  expected:  %s\n  (from %s)'
             % (res[0][:300].replace('\n', ' | '), other[:300].replace('\n', ' | '), oracle[1]))
        continue
    if res[0].startswith('ERR'):
        st['error'] += 1
        if verbose:
            print('error [%s]: %s\n  %s' % (cls, query, res[0][:200]))
    else:
        st['ok'] += 1

monitor.close()
crashes = log_crashes(log_start)
if crashes:
    failures.append(('log', 'CRASH', '', '%d "terminated by signal" in the server log' % crashes))
    print('CRASH: %d "terminated by signal" in the server log' % crashes)

psql('postgres', 'DROP DATABASE IF EXISTS ' + DB)
print('random_classes: seed %d, %d queries%s' % (seed, count, '' if crashes is not None else
                                                 ' (no server log: crashes seen by the sessions only)'))
for c in classes:
    st = stats[c]
    print('  %-12s %4d run (%d on the automaton): %4d rows, %4d same error, %3d inconclusive, %3d failed'
          % (c, st['run'], st['automaton'], st['ok'], st['error'], st['inconclusive'], st['fail']))
print('random_classes: %d passed, %d failed' % (count - len(failures), len(failures)))
sys.exit(1 if failures else 0)

#!/usr/bin/env python3
"""Random MATCH_RECOGNIZE queries against a live server: none may crash the
backend or raise an internal error (XX000, "unexpected", "cache lookup").

Usage: random_queries.py [SEED] [COUNT]   (PG* variables name the server)
It creates and uses its own database, mr_robustness.  User errors (bad
skip targets, budgets, timeouts, type errors of the random expressions) are
expected and ignored; only crashes and internal errors fail the run.
"""
import random
import subprocess
import sys

def psql(db, sql):
    return subprocess.run(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', db, '-c', sql],
                          capture_output=True, text=True)

psql('postgres', 'DROP DATABASE IF EXISTS mr_robustness')
r = psql('postgres', 'CREATE DATABASE mr_robustness')
if r.returncode != 0:
    print(r.stderr); sys.exit(2)
setup = """
CREATE EXTENSION match_recognize;
CREATE FUNCTION mr_run(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  FOR r IN EXECUTE match_recognize_sql(q) LOOP RETURN NEXT r::text; END LOOP;
END $$;
CREATE TABLE fzt AS SELECT (ARRAY['X','Y',NULL])[1 + g % 3] AS symbol,
  CASE WHEN g % 11 = 0 THEN NULL ELSE g END AS ts,
  CASE WHEN g % 7 = 0 THEN NULL ELSE (g * 37) % 13 END AS price
  FROM generate_series(1, 40) g;
"""
r = psql('mr_robustness', setup)
if r.returncode != 0:
    print(r.stderr); sys.exit(2)
random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
vars_ = ['A','B','C']
def pat(d=0):
    k = random.randint(0, 6 if d < 3 else 0)
    if k <= 1: s = random.choice(vars_)
    elif k == 2: s = '(' + pat(d+1) + ' ' + pat(d+1) + ')'
    elif k == 3: s = '(' + pat(d+1) + ' | ' + pat(d+1) + ')'
    elif k == 4: s = 'PERMUTE(' + pat(d+1) + ', ' + pat(d+1) + ')'
    elif k == 5: s = random.choice(['^', '$', '()'])
    else: s = '{- ' + pat(d+1) + ' -}'
    q = random.choice(['', '', '*', '+', '?', '*?', '+?', '??', '{2}', '{1,3}', '{0,2}?', '{2,}'])
    if k == 5 and q == '': pass
    return s + q
cols = ['price', 'ts', 'symbol']
def rowexpr(v):
    c = random.choice(cols)
    q = (v + '.') if v else ''
    return random.choice([q + c, q + 'price * 2', 'CLASSIFIER()', q + 'price::text', 'MATCH_NUMBER()'])
def nav(v):
    f = random.choice(['PREV', 'NEXT', 'FIRST', 'LAST'])
    inner = rowexpr(v)
    if f in ('PREV', 'NEXT') and random.random() < 0.3:
        inner = random.choice(['FIRST', 'LAST']) + '(' + inner + (', %d' % random.randint(0, 3) if random.random() < .5 else '') + ')'
    return f + '(' + inner + (', %d' % random.randint(0, 4) if random.random() < .5 else '') + ')'
def agg(v):
    a = random.choice(['count(*)', 'count(%s.*)' % (v or 'A'), 'sum(%s)', 'max(%s)', 'array_agg(%s)', 'string_agg(%s::text, \',\')', 'avg(%s)'])
    if '%s' in a: a = a % ((v + '.price') if v else 'price')
    return a
def expr(v=None, define=False):
    k = random.randint(0, 5)
    vv = random.choice([None] + vars_ + ['U'])
    if k == 0: e = nav(vv)
    elif k == 1: e = agg(vv)
    elif k == 2: e = rowexpr(vv)
    elif k == 3: e = 'CLASSIFIER(%s)' % random.choice(['', 'A', 'U'])
    elif k == 4: e = 'MATCH_NUMBER()'
    else: e = '(SELECT 1)'
    if not define and random.random() < 0.3: e = random.choice(['RUNNING ', 'FINAL ']) + e if k in (0, 1) else e
    return e
def cond(v):
    e = expr(v, True)
    return random.choice(['(%s)::text > \'1\'' % e, '(%s) IS NOT NULL' % e, 'price > PREV(price)', 'true', '(%s)::text < \'5\'' % e])
n_run = int(sys.argv[2]) if len(sys.argv) > 2 else 200
for it in range(n_run):
    p = pat()
    used = [v for v in vars_ if v in p]
    defs = ', '.join('%s AS %s' % (v, cond(v)) for v in used if random.random() < 0.8)
    meas = ', '.join('%s AS m%d' % (expr(), i) for i in range(random.randint(1, 3)))
    rpm = random.choice(['ONE ROW PER MATCH', 'ALL ROWS PER MATCH', 'ALL ROWS PER MATCH OMIT EMPTY MATCHES', 'ALL ROWS PER MATCH WITH UNMATCHED ROWS'])
    skip = random.choice(['PAST LAST ROW', 'TO NEXT ROW', 'TO FIRST A', 'TO LAST B', 'TO U'])
    sub = 'SUBSET U = (A, B)' if 'A' in used and 'B' in used else ''
    if 'U' in meas + defs + skip and not sub: sub = ''
    within = random.choice(['', '', 'WITHIN 3'])
    q = "SELECT * FROM fzt MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES %s %s AFTER MATCH SKIP %s PATTERN (%s) %s %s %s) AS m" % (meas, rpm, skip, p, within, sub, ('DEFINE ' + defs) if defs else '')
    sql = "SET statement_timeout='2s'; SET match_recognize.max_threads=20000; SELECT count(*) FROM (SELECT mr_run($q$%s$q$)) x;" % q
    r = subprocess.run(['psql', '-X', '-q', '-d', 'mr_robustness', '-c', sql], capture_output=True, text=True)
    if 'server closed' in r.stderr or 'terminated' in r.stderr or 'connection to server' in r.stderr:
        print('CRASH:', q); print(r.stderr); print('robustness: %d passed, 1 failed' % it); sys.exit(1)
    if 'ERROR' in r.stderr and ('unexpected' in r.stderr or 'cache lookup' in r.stderr or 'unrecognized' in r.stderr or 'XX000' in r.stderr):
        print('INTERNAL:', q); print(r.stderr); print('robustness: %d passed, 1 failed' % it); sys.exit(1)
psql('postgres', 'DROP DATABASE IF EXISTS mr_robustness')
print('robustness: %d passed, 0 failed' % n_run)

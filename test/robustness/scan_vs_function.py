#!/usr/bin/env python3
"""Random MATCH_RECOGNIZE queries run twice: planned as the MatchRecognize
custom scan and as the set-returning function
(match_recognize.enable_custom_scan = off).  The two must return the same
rows (as multisets) or fail with the same error.

Usage: scan_vs_function.py [SEED] [COUNT] [dfa|memo]   (PG* variables name the server)

The ORDER BY is total (ts, then a unique id): rows tying on the ORDER BY
keys come in an order that is only stable for a given plan, and the node
and the function may plan their input differently (a WHERE on a partition
column is pushed into the node's input).
Uses its own database, mr_scan_diff, dropped at the end.

With "dfa", the queries are the kind the node runs as a cached DFA (no ^, $
or WITHIN; every DEFINE compares a column of the row with itself or a
physical PREV/NEXT of it) over more rows, so that mode meets the function's
general matcher.

With "memo", both runs are the node's, with match_recognize.enable_memo on
and off: the memo lane (overlapping matches) against the other matchers.
"""
import random
import re
import subprocess
import sys

DB = 'mr_scan_diff'
DFA = len(sys.argv) > 3 and sys.argv[3] == 'dfa'
GUC = 'enable_memo' if len(sys.argv) > 3 and sys.argv[3] == 'memo' else 'enable_custom_scan'
ROWS = 300 if DFA else 60


def psql(db, sql):
    return subprocess.run(['psql', '-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-d', db, '-c', sql],
                          capture_output=True, text=True)


psql('postgres', 'DROP DATABASE IF EXISTS ' + DB)
r = psql('postgres', 'CREATE DATABASE ' + DB)
if r.returncode != 0:
    print(r.stderr)
    sys.exit(2)
r = psql(DB, """
CREATE EXTENSION match_recognize;
CREATE TABLE t AS SELECT (ARRAY['X','Y',NULL])[1 + g % 3] AS symbol,
  CASE WHEN g % 11 = 0 THEN NULL ELSE g END AS ts,
  CASE WHEN g % 7 = 0 THEN NULL ELSE (g * 37) % 13 END AS price,
  g AS id,
  CASE WHEN g % 5 = 0 THEN NULL ELSE round(((g * 53) % 17) / 3.0, 2) END AS pn
  FROM generate_series(1, ROWS) g;
CREATE INDEX ON t (symbol, ts);
ANALYZE t;
""".replace('ROWS', str(ROWS)))
if r.returncode != 0:
    print(r.stderr)
    sys.exit(2)

random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
count = int(sys.argv[2]) if len(sys.argv) > 2 else 200
VARS = ['A', 'B', 'C']


def pat(d=0):
    k = random.randint(0, 6 if d < 3 else 0)
    if k <= 1:
        s = random.choice(VARS)
    elif k == 2:
        s = '(' + pat(d + 1) + ' ' + pat(d + 1) + ')'
    elif k == 3:
        s = '(' + pat(d + 1) + ' | ' + pat(d + 1) + ')'
    elif k == 4:
        s = 'PERMUTE(' + pat(d + 1) + ', ' + pat(d + 1) + ')'
    elif k == 5:
        s = random.choice(['()', 'A', 'B'] if DFA else ['^', '$', '()'])
    else:
        s = '{- ' + pat(d + 1) + ' -}'
    return s + random.choice(['', '', '*', '+', '?', '*?', '+?', '??', '{2}', '{1,3}', '{0,2}?', '{2,}'])


def nav(v):
    q = (v + '.') if v else ''
    inner = q + random.choice(['price', 'ts', 'price * 2'])
    f = random.choice(['PREV', 'NEXT', 'FIRST', 'LAST'])
    return '%s(%s%s)' % (f, inner, (', %d' % random.randint(0, 3)) if random.random() < .5 else '')


def measure():
    v = random.choice(['', 'A', 'B', 'U'])
    return random.choice([nav(v), 'count(*)', 'sum(%sprice)' % ((v + '.') if v else ''),
                          'CLASSIFIER()', 'MATCH_NUMBER()', (v + '.' if v else '') + 'ts',
                          'FINAL LAST(%sts)' % ((v + '.') if v else '')])


def cond(v):
    if DFA:
        return random.choice(['%s.price > PREV(%s.price)' % (v, v), '%s.price < PREV(%s.price)' % (v, v),
                              '%s.price >= NEXT(%s.price)' % (v, v), 'true',
                              '%s.price <> PREV(%s.price, 2)' % (v, v), '%s.ts < NEXT(%s.ts)' % (v, v),
                              '%s.price = PREV(%s.price)' % (v, v),
                              '%s.price <= NEXT(%s.price, 3)' % (v, v),
                              '%s.pn > PREV(%s.pn)' % (v, v), '%s.pn <= PREV(%s.pn)' % (v, v),
                              '%s.pn <> NEXT(%s.pn)' % (v, v)])
    return random.choice(['%s.price > PREV(%s.price)' % (v, v), '%s.price < PREV(%s.price)' % (v, v),
                          '%s.price >= NEXT(%s.price)' % (v, v), 'true', '%s.price %% 2 = 0' % v,
                          '%s.price > FIRST(A.price)' % v, 'count(*) < 4', '%s.ts IS NOT NULL' % v,
                          '%s.pn < PREV(%s.pn)' % (v, v), '%s.pn >= FIRST(%s.pn)' % (v, v)])


failed = 0
compared = 0
for it in range(count):
    p = pat()
    used = [v for v in VARS if v in p]
    defs = ', '.join('%s AS %s' % (v, cond(v)) for v in used if random.random() < 0.8)
    meas = ', '.join('%s AS m%d' % (measure(), i) for i in range(random.randint(1, 3)))
    rpm = random.choice(['ONE ROW PER MATCH', 'ALL ROWS PER MATCH',
                         'ALL ROWS PER MATCH OMIT EMPTY MATCHES', 'ALL ROWS PER MATCH WITH UNMATCHED ROWS'])
    skip = random.choice(['PAST LAST ROW', 'TO NEXT ROW', 'TO FIRST A', 'TO LAST B', 'TO U'])
    sub = 'SUBSET U = (A, B)' if 'A' in used and 'B' in used else ''
    within = '' if DFA else random.choice(['', '', 'WITHIN 3'])
    where = random.choice(['', '', " WHERE m.symbol = 'X'", ' WHERE m.symbol IS NULL'])
    q = ("SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts, id MEASURES %s %s "
         "AFTER MATCH SKIP %s PATTERN (%s) %s %s %s) AS m%s"
         % (meas, rpm, skip, p, within, sub, ('DEFINE ' + defs) if defs else '', where))
    r = psql(DB, "SELECT match_recognize_sql($q$%s$q$)" % q)
    if r.returncode != 0:
        continue				# not a valid query; the rewriter said why
    stmt = r.stdout.strip()
    out = []
    for setting in ('on', 'off'):
        sql = ("SET statement_timeout = '5s'; SET match_recognize.max_threads = 20000; "
               "SET match_recognize.%s = %s; %s"
               "SELECT x::text FROM (%s) x ORDER BY 1"
               % (GUC, setting, 'SET match_recognize.enable_dfa = on; ' if DFA else '',
                  stmt.rstrip().rstrip(';')))
        r = psql(DB, sql)
        err = r.stderr.strip().splitlines()[0] if r.returncode != 0 else None
        if err:
            # a filter pushed into the input may reach the same error in
            # another partition first: compare the error, not its match number
            err = re.sub(r'\d+', 'N', err)
        out.append((err, r.stdout if r.returncode == 0 else None))
    if 'timeout' in str(out[0][0]) or 'timeout' in str(out[1][0]):
        continue
    compared += 1
    # both failing is agreement: with a WHERE pushed into the node's input
    # the node may meet a different error in a different partition first
    if out[0][0] and out[1][0]:
        continue
    if out[0] != out[1] and where and (out[0][0] or out[1][0]):
        # the node pushes a WHERE on a partition column into its input, so
        # it never meets an error in a partition the WHERE removes (as
        # PostgreSQL's own qual pushdown may avoid errors): compare the
        # node with the function over the input filtered the same way
        fq = q.replace('FROM t MATCH_RECOGNIZE', 'FROM (SELECT * FROM t%s) t MATCH_RECOGNIZE'
                       % where.replace('m.symbol', 'symbol'))
        r = psql(DB, "SELECT match_recognize_sql($q$%s$q$)" % fq)
        r = psql(DB, "SET match_recognize.enable_custom_scan = off; "
                 "SELECT x::text FROM (%s) x ORDER BY 1" % r.stdout.strip().rstrip(';'))
        err = re.sub(r'\d+', 'N', r.stderr.strip().splitlines()[0]) if r.returncode != 0 else None
        out[1] = (err, r.stdout if r.returncode == 0 else None)
    if out[0] != out[1]:
        failed += 1
        print('DIFFERENT:', q)
        print('  node:     ', out[0][0] or out[0][1][:300])
        print('  function: ', out[1][0] or out[1][1][:300])

psql('postgres', 'DROP DATABASE IF EXISTS ' + DB)
print('scan_vs_function: %d compared, %d differ' % (compared, failed))
sys.exit(1 if failed else 0)

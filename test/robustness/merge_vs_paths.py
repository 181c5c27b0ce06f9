#!/usr/bin/env python3
"""Random MATCH_RECOGNIZE queries whose DEFINEs read the match start (FIRST
and LAST with offsets over every row, PREV/NEXT of them, aggregates over
every row, WITHIN), which the matcher runs merging the candidate paths of
one start, compared with the same query made to keep every path apart: one
DEFINE gets an always-true conjunct that reads a variable's rows
(FIRST(A.price) IS NOT DISTINCT FROM FIRST(A.price)), so the query is
classified path-dependent.  Both must return the same rows, or fail with the
same error; the unmerged run may instead exhaust its thread budget, which
is not compared.

Also runs navigation offsets from the whole bigint range (beyond the
partition, near INT64_MAX), which must read null and never fail.

Usage: merge_vs_paths.py [SEED] [COUNT]   (PG* variables name the server)
Uses its own database, mr_merge_diff, dropped at the end.
"""
import os
import random
import re
import subprocess
import sys

DB = 'mr_merge_diff'


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
CREATE TABLE t AS SELECT (ARRAY['X','Y'])[1 + g % 2] AS symbol, g AS ts,
  CASE WHEN g % 7 = 0 THEN NULL ELSE (g * 37) % 13 - 6 END AS price
  FROM generate_series(1, 24) g;
""")
if r.returncode != 0:
    print(r.stderr)
    sys.exit(2)

random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
count = int(sys.argv[2]) if len(sys.argv) > 2 else 200
VARS = ['A', 'B', 'C']
BIG = ['2147483648', '4611686018427387904', '9223372036854775806', '9223372036854775807']


TEMPLATES = ['(B | C)* A', '(B | C)+ A+', 'B* A', 'B+? A', '(B C?)* A', 'A (B | C)* A',
             '(B | C)* A (B | C)*', '(B | C){2,} A', '(B | A)* C', '^ (B | C)* A', '(B | C)* A $']


def pat(d=0):
    k = random.randint(0, 5 if d < 3 else 0)
    if k <= 1:
        s = random.choice(VARS)
    elif k == 2:
        s = '(' + pat(d + 1) + ' ' + pat(d + 1) + ')'
    elif k == 3:
        s = '(' + pat(d + 1) + ' | ' + pat(d + 1) + ')'
    elif k == 4:
        s = random.choice(['^', '$', '()'])
    else:
        s = '{- ' + pat(d + 1) + ' -}'
    return s + random.choice(['', '', '*', '+', '?', '*?', '+?', '??', '{2}', '{1,3}', '{0,2}?', '{2,}'])


def offset():
    return random.choice(['0', '1', '2', '3', random.choice(BIG)])


def start_term(v, every):
    """a condition of v's DEFINE that reads the match start (or only the row)"""
    col = random.choice(['price', 'ts', every + 'price', every + 'ts'])
    return random.choice([
        'LAST(%s, %s) %s 0' % (col, offset(), random.choice(['<', '>', '<>'])),
        'FIRST(%s, %s) = %d' % (col, offset(), random.randint(-6, 6)),
        'FIRST(%s, %s) > %d' % (col, offset(), random.randint(-6, 6)),
        'LAST(%s, %s) = %d' % (col, random.choice(['1', '2', '3']), random.randint(-6, 6)),
        'PREV(FIRST(%s, %s), %s) < %d' % (col, offset(), offset(), random.randint(-6, 6)),
        'count(*) = %d' % random.randint(2, 5),
        'sum(%s) = %d' % (col, random.randint(-3, 6)),
        'FIRST(%s, %s) %s %s.price' % (col, offset(), random.choice(['<', '>', '<=']), v),
        'PREV(LAST(%s, %s), %s) IS %sNULL' % (col, offset(), offset(), random.choice(['', 'NOT '])),
        'NEXT(FIRST(%s, %s), %s) > price' % (col, offset(), offset()),
        'count(*) %s %d' % (random.choice(['<', '>=']), random.randint(1, 4)),
        'sum(%s) > %d' % (col, random.randint(-3, 3)),
        'max(%s) - min(%s) < %d' % (col, col, random.randint(2, 9)),
        'CLASSIFIER() = \'%s\'' % v,
        'MATCH_NUMBER() < 3',
        '%s.price > PREV(%s.price, %s)' % (v, v, offset()),
        'PREV(price, %s) IS NULL' % random.choice(BIG),
        'NEXT(price, %s) IS NULL' % random.choice(BIG),
    ])


def cond(v, every):
    c = start_term(v, every)
    if random.random() < .4:
        c += random.choice([' AND ', ' OR ']) + start_term(v, every)
    return c


def measure():
    return random.choice(['FIRST(ts)', 'LAST(ts)', 'count(*)', 'CLASSIFIER()', 'MATCH_NUMBER()',
                          'LAST(price, %s)' % offset(), 'FIRST(price, %s)' % offset(),
                          'PREV(ts, %s)' % offset(), 'NEXT(LAST(ts, %s), %s)' % (offset(), offset())])


failed = 0
compared = 0
with_rows = 0
budget = 0
for it in range(count):
    # a single variable has no paths to tell apart; the shapes where paths
    # of one start meet (a loop over always-true variables before the
    # condition) come often
    p, used = '', []
    while len(used) < 2:
        if random.random() < .5:
            p = random.choice(TEMPLATES)
        else:
            p = pat()
        used = [v for v in VARS if v in p]
    # a subset of every variable of the pattern reads every row, as no qualifier
    every = random.choice(['', '', 'ALLV.'])
    sub = 'SUBSET ALLV = (%s)' % ', '.join(used)
    if p in TEMPLATES:
        # the last variable of the template carries the condition
        defined = ['A' if 'A' in p.split('*')[-1] or p.endswith('A') or 'A $' in p else 'C']
        if random.random() < .3:
            defined.append([v for v in used if v not in defined][0])
    else:
        defined = [v for v in used if random.random() < 0.6] or used[:1]
    defs = ['%s AS %s' % (v, cond(v, every)) for v in defined]
    meas = ', '.join('%s AS m%d' % (measure(), i) for i in range(random.randint(1, 3)))
    rpm = random.choice(['ONE ROW PER MATCH', 'ALL ROWS PER MATCH', 'ALL ROWS PER MATCH WITH UNMATCHED ROWS'])
    if '{-' in p and 'UNMATCHED' in rpm:
        rpm = 'ALL ROWS PER MATCH'
    skip = random.choice(['PAST LAST ROW', 'TO NEXT ROW'])
    within = random.choice(['', '', '', 'WITHIN 4'])
    other = [v for v in used if v != defined[0]][0]
    forced = list(defs)
    forced[0] += (' AND FIRST(%s.price) IS NOT DISTINCT FROM FIRST(%s.price)' % (other, other))
    out = []
    for d in (defs, forced):
        q = ("SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES %s %s "
             "AFTER MATCH SKIP %s PATTERN (%s) %s %s DEFINE %s) AS m"
             % (meas, rpm, skip, p, within, sub, ', '.join(d)))
        r = psql(DB, "SELECT match_recognize_sql($q$%s$q$)" % q)
        if r.returncode != 0:
            out.append((re.sub(r'\d+', 'N', r.stderr.strip().splitlines()[0]), None))
            continue
        stmt = r.stdout.strip().rstrip(';')
        r = psql(DB, "SET statement_timeout = '10s'; SET match_recognize.max_threads = 20000; "
                 "SELECT x::text FROM (%s) x ORDER BY 1" % stmt)
        err = r.stderr.strip().splitlines()[0] if r.returncode != 0 else None
        out.append((err, r.stdout if r.returncode == 0 else None))
        if 'server closed' in r.stderr or 'unrecognized node' in r.stderr:
            print('CRASH OR INTERNAL ERROR:', q, '\n  ', err)
            failed += 1
    if out[0][0] and 'max_threads' in out[0][0]:
        print('MERGED RUN HIT THE THREAD BUDGET:', q)
        failed += 1
        continue
    if out[1][0] and ('max_threads' in out[1][0] or 'timeout' in out[1][0]):
        budget += 1
        continue
    compared += 1
    if os.environ.get('MR_VERBOSE'):
        print(q, '\n   ->', (out[0][0] or out[0][1]).replace('\n', ' ')[:200])
    if out[0][1]:
        with_rows += 1
    if out[0] != out[1]:
        failed += 1
        print('DIFFERENT:', q)
        print('  merged:   ', out[0][0] or out[0][1][:300])
        print('  unmerged: ', out[1][0] or out[1][1][:300])

psql('postgres', 'DROP DATABASE IF EXISTS ' + DB)
print('merge_vs_paths: %d compared (%d with rows), %d differ, %d unmerged over budget'
      % (compared, with_rows, failed, budget))
sys.exit(1 if failed else 0)

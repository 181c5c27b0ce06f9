#!/usr/bin/env python3
"""MATCH_RECOGNIZE benchmarks (bench/README.md), side by side in one run.

Runs against the server the PG* environment variables name (psql must be on
PATH; the match_recognize extension must be installable there).  Everything
happens in a scratch database (default mr_bench) that is dropped at the end.

  1. V-shape PATTERN (STRT DOWN+ UP+) over N rows (N/1000 symbols, random
     walk) vs reading the same columns in the same order, without and with
     an index on (symbol, ts).
  2. The same detection written with window functions (LAG and running
     counts) vs ours.
  3. Pathological patterns at n and 10n rows: A+ B+, (A | B)* C, (E?){2,} Y,
     A{1,100} B; t(10n)/t(n) and the 5000-row A+ B+ time.
  4. Peak anonymous memory (RssAnon) of the backend for benchmark 1 (with
     the index, so no Sort buffers) at the two sizes.
  5. LIMIT 1 on benchmark 1.

Modes: full (1M and 10M rows), --small (10k and 100k rows), --smoke (tiny,
checks results, not times; exit status 1 on a wrong result).  Prints a table
of ratios; full and small modes also write a PNG chart (time vs rows).
"""
import argparse
import os
import re
import subprocess
import sys
import threading
import time

SESSION_SETTINGS = """
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET work_mem = '64MB';
SET client_min_messages = warning;
"""

VSHAPE = """match_recognize($$ {t} MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) $$) AS m(symbol int, start_ts int, bottom_ts int, end_ts int)"""

QUERIES = {
    "floor": "SELECT sum(price) FROM (SELECT symbol, ts, price FROM {t} ORDER BY symbol, ts) s",
    "ours": "SELECT count(*) FROM " + VSHAPE,
    # runs of falling / rising prices, then a falling run followed by a rising one
    "window": """
WITH d AS (
  SELECT symbol, ts, sign(price - lag(price) OVER w) AS dir
  FROM {t} WINDOW w AS (PARTITION BY symbol ORDER BY ts)),
r AS (
  SELECT symbol, ts, dir,
         count(*) FILTER (WHERE dir IS DISTINCT FROM prev_dir)
           OVER (PARTITION BY symbol ORDER BY ts) AS run
  FROM (SELECT d.*, lag(dir) OVER (PARTITION BY symbol ORDER BY ts) AS prev_dir FROM d) x),
runs AS (
  SELECT symbol, run, min(dir) AS dir FROM r GROUP BY symbol, run)
SELECT count(*) FROM runs a JOIN runs b ON b.symbol = a.symbol AND b.run = a.run + 1
WHERE a.dir = -1 AND b.dir = 1""",
    "limit1": "SELECT * FROM " + VSHAPE + " LIMIT 1",
}

PATHOLOGICAL = {
    "A+ B+": ("A+ B+", "A AS true, B AS true"),
    "(A | B)* C": ("(A | B)* C", "A AS true, B AS true, C AS false"),
    "(E?){2,} Y": ("(E?){2,} Y", "E AS true, Y AS false"),
    "A{1,100} B": ("A{1,100} B", "A AS true, B AS false"),
}


def patho_query(table, pattern, define):
    return ("SELECT count(*) FROM match_recognize($$ %s MATCH_RECOGNIZE ("
            " ORDER BY id MEASURES FIRST(id) AS first_id ONE ROW PER MATCH"
            " PATTERN (%s) DEFINE %s ) $$) AS m(first_id int)" % (table, pattern, define))


def psql_base(db):
    return ["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", db]


def run_sql(db, sql):
    r = subprocess.run(psql_base(db), input=sql, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("bench: psql failed: %s\n%s" % (r.stderr.strip(), sql[:400]))
    return r.stdout.strip()


class Session:
    """One psql session: statements in, results and \\timing out."""

    def __init__(self, db):
        self.p = subprocess.Popen(psql_base(db), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, bufsize=1)
        self.run(SESSION_SETTINGS)
        self.pid = int(self.run("SELECT pg_backend_pid();")[0])
        self.run("\\timing on")

    def run(self, sql):
        self.p.stdin.write(sql.rstrip() + "\n\\echo __done__\n")
        self.p.stdin.flush()
        out = []
        for line in self.p.stdout:
            line = line.rstrip("\n")
            if line == "__done__":
                break
            if line.startswith("psql:") and "ERROR" in line:
                sys.exit("bench: %s\n%s" % (line, sql[:400]))
            out.append(line)
        return out

    def timed(self, sql):
        """(milliseconds, result lines)"""
        out = self.run(sql.rstrip().rstrip(";") + ";")
        ms = None
        rows = []
        for line in out:
            m = re.match(r"Time: ([0-9.]+) ms", line)
            if m:
                ms = float(m.group(1))
            else:
                rows.append(line)
        return ms, rows

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def rss_anon_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def peak_memory(sess, sql):
    """peak RssAnon (kB) of the backend while sql runs, sampled every 5 ms"""
    peak = [rss_anon_kb(sess.pid) or 0]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            v = rss_anon_kb(sess.pid)
            if v is not None and v > peak[0]:
                peak[0] = v
            time.sleep(0.005)

    t = threading.Thread(target=sample)
    t.start()
    sess.timed(sql)
    stop.set()
    t.join()
    return peak[0]


def backend_cpu_ms(pid):
    """user + system CPU time of a local backend, or None"""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def run_once(sess, sql):
    """(wall ms, backend CPU ms or None, result lines)"""
    c0 = backend_cpu_ms(sess.pid)
    ms, rows = sess.timed(sql)
    c1 = backend_cpu_ms(sess.pid)
    return ms, (c1 - c0) if c0 is not None and c1 is not None else None, rows


def best_interleaved(sess, queries, repeat):
    """run the queries round-robin repeat times, so that a busy moment of the
    machine hits all of them alike; best wall and CPU time of each"""
    wall = {q: [] for q in queries}
    cpu = {q: [] for q in queries}
    rows = {}
    for _ in range(repeat):
        for q, sql in queries.items():
            ms, c, r = run_once(sess, sql)
            wall[q].append(ms)
            if c is not None:
                cpu[q].append(c)
            rows[q] = r
    return ({q: min(v) for q, v in wall.items()},
            {q: (min(v) if v else None) for q, v in cpu.items()}, rows)


def best(sess, sql, repeat):
    w, _, rows = best_interleaved(sess, {"q": sql}, repeat)
    return w["q"], rows["q"]


def make_ticker(db, table, rows):
    nsym = max(rows // 1000, 1)
    per = rows // nsym
    run_sql(db, SESSION_SETTINGS + """
DROP TABLE IF EXISTS {t};
CREATE UNLOGGED TABLE {t} AS
SELECT s AS symbol, t AS ts,
       100 + sum(random() - 0.5) OVER (PARTITION BY s ORDER BY t) AS price
FROM generate_series(1, {nsym}) s, generate_series(1, {per}) t;
VACUUM ANALYZE {t};
""".format(t=table, nsym=nsym, per=per))


def make_patho(db, table, rows):
    run_sql(db, """
DROP TABLE IF EXISTS {t};
CREATE UNLOGGED TABLE {t} AS SELECT i AS id FROM generate_series(1, {n}) i;
VACUUM ANALYZE {t};
""".format(t=table, n=rows))


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", action="store_true", help="10k and 100k rows")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, check results only")
    ap.add_argument("--db", default="mr_bench", help="scratch database (dropped at the end)")
    ap.add_argument("--png", default="bench/results.png", help="chart file")
    ap.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = ap.parse_args()

    if args.smoke:
        sizes, psizes, repeat = [2000, 20000], [500, 5000], 1
    elif args.small:
        sizes, psizes, repeat = [10000, 100000], [1000, 10000], 3
    else:
        sizes, psizes, repeat = [1000000, 10000000], [10000, 100000], 5

    admin = os.environ.get("PGDATABASE", "postgres")
    run_sql(admin, "DROP DATABASE IF EXISTS %s;" % args.db)
    run_sql(admin, "CREATE DATABASE %s;" % args.db)
    run_sql(args.db, "CREATE EXTENSION match_recognize;")

    failures = []
    res = {}        # (query, variant, rows) -> ms
    cpures = {}     # (query, variant, rows) -> backend CPU ms (local server only)
    counts = {}     # (query, variant, rows) -> result
    mem = {}
    plans = {}
    sess = Session(args.db)

    for n in sizes:
        t = "ticker_%d" % n
        log("V-shape: generating %d rows" % n)
        make_ticker(args.db, t, n)
        for variant in ("noindex", "index"):
            if variant == "index":
                log("V-shape: index on %s (symbol, ts)" % t)
                run_sql(args.db, "CREATE INDEX ON %s (symbol, ts); VACUUM ANALYZE %s;" % (t, t))
            batch = {}
            for qn in ("floor", "ours", "limit1"):
                sql = QUERIES[qn].format(t=t)
                plan = sess.run("EXPLAIN (COSTS OFF) " + sql + ";")
                plans[(qn, variant, n)] = [l.strip() for l in plan]
                batch[qn] = sql
            log("  floor, ours, limit1 %-7s %9d rows, %d rounds" % (variant, n, repeat))
            wall, cpu, rows = best_interleaved(sess, batch, repeat)
            for qn in batch:
                res[(qn, variant, n)] = wall[qn]
                cpures[(qn, variant, n)] = cpu[qn]
                counts[(qn, variant, n)] = rows[qn]
            if variant == "noindex":
                log("  window  %-7s %9d rows" % (variant, n))
                ms, rows = best(sess, QUERIES["window"].format(t=t), 1)
                res[("window", variant, n)] = ms
                counts[("window", variant, n)] = rows
            if variant == "index":
                # a fresh backend, so memory kept from earlier queries does not count
                msess = Session(args.db)
                mem[n] = peak_memory(msess, QUERIES["ours"].format(t=t))
                msess.close()
            if not any("MatchRecognize" in l for l in plans[("ours", variant, n)]):
                failures.append("V-shape at %d rows (%s) is not planned as the custom scan" % (n, variant))

        # correctness: node = function, window version = ours
        ours = counts[("ours", "noindex", n)]
        if counts[("ours", "index", n)] != ours:
            failures.append("V-shape count differs with the index at %d rows" % n)
        if counts[("window", "noindex", n)] != ours:
            failures.append("window-function count %s != ours %s at %d rows"
                            % (counts[("window", "noindex", n)], ours, n))
        if args.smoke:
            sess.run("SET match_recognize.enable_custom_scan = off;")
            _, srf = sess.timed(QUERIES["ours"].format(t=t))
            sess.run("RESET match_recognize.enable_custom_scan;")
            if srf != ours:
                failures.append("function %s != node %s at %d rows" % (srf, ours, n))
            v = VSHAPE.format(t=t)
            sess.run("CREATE TEMP TABLE smoke_node AS SELECT * FROM %s;" % v)
            sess.run("SET match_recognize.enable_custom_scan = off;"
                     "CREATE TEMP TABLE smoke_srf AS SELECT * FROM %s;"
                     "RESET match_recognize.enable_custom_scan;" % v)
            _, diff = sess.timed("SELECT (SELECT count(*) FROM (TABLE smoke_node EXCEPT ALL TABLE smoke_srf) a)"
                            " + (SELECT count(*) FROM (TABLE smoke_srf EXCEPT ALL TABLE smoke_node) b)")
            sess.run("DROP TABLE smoke_node, smoke_srf;")
            if diff != ["0"]:
                failures.append("node and function rows differ at %d rows (%s)" % (n, diff))
        if len(counts[("limit1", "index", n)]) != 1:
            failures.append("LIMIT 1 returned %d rows" % len(counts[("limit1", "index", n)]))

    # 3. pathological patterns
    pres = {}
    for n in sorted(set(psizes + [5000])):
        make_patho(args.db, "patho_%d" % n, n)
    for name, (pat, define) in PATHOLOGICAL.items():
        batch = {}
        for n in sorted(set(psizes + ([5000] if name == "A+ B+" else []))):
            batch[n] = patho_query("patho_%d" % n, pat, define)
        log("pathological %-12s %s rows, %d rounds" % (name, sorted(batch), 5 * repeat))
        # short queries: more rounds, sizes interleaved
        wall, _, rows = best_interleaved(sess, batch, 5 * repeat)
        expect = "1" if name == "A+ B+" else "0"
        for n in batch:
            pres[(name, n)] = wall[n]
            if rows[n] != [expect]:
                failures.append("%s over %d rows returned %s, expected %s" % (name, n, rows[n], expect))
    sess.close()

    if not args.keep:
        run_sql(admin, "DROP DATABASE IF EXISTS %s;" % args.db)

    # report
    small, big = sizes
    print()
    print("MATCH_RECOGNIZE benchmarks (%s mode), times are the best of %d runs"
          % ("smoke" if args.smoke else "small" if args.small else "full", repeat))
    print()
    print("%-58s %12s %12s" % ("measure", "value", "target"))
    print("-" * 84)

    def line(label, value, target, fmt="%.2f"):
        print("%-58s %12s %12s" % (label, fmt % value if value is not None else "-", target))

    for n in sizes:
        for variant in ("noindex", "index"):
            f = res[("floor", variant, n)]
            o = res[("ours", variant, n)]
            line("1. V-shape / floor, %s rows, %s" % (fmt_rows(n), variant), o / f, "<= 1.5")
            fc = cpures[("floor", variant, n)]
            oc = cpures[("ours", variant, n)]
            if fc and oc and fc >= 200:    # the clock ticks in 10 ms
                line("   same, backend CPU time (%.0f / %.0f ms)" % (oc, fc), oc / fc, "")
    for n in sizes:
        line("2. window functions / ours, %s rows" % fmt_rows(n),
             res[("window", "noindex", n)] / res[("ours", "noindex", n)], "> 1")
    for name in PATHOLOGICAL:
        line("3. %s t(%s)/t(%s)" % (name, fmt_rows(psizes[1]), fmt_rows(psizes[0])),
             pres[(name, psizes[1])] / pres[(name, psizes[0])], "<= 12")
    line("3. A+ B+ over 5000 rows (ms)", pres[("A+ B+", 5000)], "< 50", "%.1f")
    line("4. peak RssAnon %s / %s rows (%d kB / %d kB)" % (fmt_rows(big), fmt_rows(small),
                                                         mem[big], mem[small]),
         mem[big] / mem[small] if mem[small] else None, "~ 1")
    for n in sizes:
        line("5. LIMIT 1, %s rows, index (ms)" % fmt_rows(n), res[("limit1", "index", n)],
             "ms", "%.1f")
        line("5. LIMIT 1, %s rows, no index (ms)" % fmt_rows(n), res[("limit1", "noindex", n)],
             "-", "%.1f")
    print()
    print("times (ms):")
    for (qn, variant, n), ms in sorted(res.items(), key=lambda kv: (kv[0][2], kv[0][1], kv[0][0])):
        print("  %-7s %-8s %10s rows %10.1f" % (qn, variant, fmt_rows(n), ms))
    for (name, n), ms in sorted(pres.items()):
        print("  %-16s %10s rows %10.1f" % (name, fmt_rows(n), ms))
    print()
    print("input plans (%s rows): no index: %s; index: %s" % (
        fmt_rows(big), input_plan(plans[("ours", "noindex", big)]),
        input_plan(plans[("ours", "index", big)])))

    if not args.smoke:
        chart(args.png, sizes, psizes, res, pres)

    if failures:
        print()
        for f in failures:
            print("FAILED: " + f)
        sys.exit(1)
    print("bench: all results correct")


def input_plan(plan):
    for l in plan:
        l = l.lstrip("-> ").strip()
        if l.startswith(("Sort", "Index Scan", "Seq Scan", "Incremental Sort")):
            return l
    return "?"


def fmt_rows(n):
    if n >= 1000000 and n % 1000000 == 0:
        return "%dM" % (n // 1000000)
    if n >= 1000 and n % 1000 == 0:
        return "%dk" % (n // 1000)
    return str(n)


def chart(path, sizes, psizes, res, pres):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench: matplotlib missing, no chart (bench/run.sh installs python3-matplotlib)")
        return
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 5))
    for qn, variant in (("floor", "noindex"), ("ours", "noindex"), ("window", "noindex"),
                        ("floor", "index"), ("ours", "index"), ("limit1", "index")):
        a1.plot(sizes, [res[(qn, variant, n)] / 1000 for n in sizes], marker="o",
                label="%s (%s)" % (qn, variant))
    a1.set_xscale("log")
    a1.set_yscale("log")
    a1.set_xlabel("input rows")
    a1.set_ylabel("seconds")
    a1.set_title("V-shape STRT DOWN+ UP+")
    a1.legend(fontsize=8)
    for name in PATHOLOGICAL:
        a2.plot(psizes, [pres[(name, n)] / 1000 for n in psizes], marker="o", label=name)
    a2.set_xscale("log")
    a2.set_yscale("log")
    a2.set_xlabel("rows")
    a2.set_ylabel("seconds")
    a2.set_title("pathological patterns")
    a2.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, dpi=100)
    print("bench: chart written to %s" % path)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Benchmark MATCH_LEVELS (examples/seed_level_fires.sql) against the ordered
scan of ticks, in one run, best of several interleaved rounds.

Usage: bench/cep/levels.py DB [--rounds N] [--grow 30] [--no-grow]
(PG* variables select the server; DB holds the seed's ticks and
price_alerts, from bench/cep/gen_ticks.py --psql.)

Queries, each wrapped in SELECT count(*) / sum(...):
  scan      the ordered scan, SELECT sum(price) FROM (SELECT key, ts, price,
            vol FROM ticks ORDER BY key, ts) s  (bench/bench.py's floor)
  fires     examples/seed_level_fires.sql over price_alerts
  fires_30x the same over price_alerts_30x: every key's queries grown 30x,
            levels drawn from the same range (so fires grow about 30x too)
  far_30x   the same over price_alerts_far: the seed's queries plus 29x as
            many whose levels the prices never reach (fires as the seed's)
Both grown tables are made once (if missing) from price_alerts, with an
index on (key, level) like gen_ticks.py's.

Settings as bench/bench.py: max_parallel_workers_per_gather = 0, jit = off,
work_mem = 64MB.  Two plans: "sort" drops the ticks (key, ts) index inside
the timing transaction (Seq Scan + Sort), "index" keeps it.  Each figure is
the best of the rounds, wall time and the backend's CPU time (utime +
stime of /proc/self/stat, read by the backend before and after), which is
the steadier one on a shared machine; the ratios are to the scan of the
same plan and round kind.  The machine is noisy: read the CPU ratios.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "seed_level_fires.sql")


def sql_of(path):
    text = "\n".join(l for l in open(path).read().splitlines() if not l.lstrip().startswith("--"))
    return text.strip().rstrip(";")


def psql(db, sql):
    return subprocess.run(["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-d", db, "-c", sql],
                          check=True, capture_output=True, text=True).stdout


def ensure_grown(db, grow):
    have = psql(db, "SELECT string_agg(relname, ',') FROM pg_class WHERE relname IN "
                    "('price_alerts_30x', 'price_alerts_far')").strip().split(",")
    if "price_alerts_30x" not in have:
        print("making price_alerts_30x (%dx the queries) ..." % grow, flush=True)
        psql(db, """
            CREATE TABLE price_alerts_30x AS
            SELECT a.key, a.qid + 100000 * g AS qid,
                   CASE WHEN g = 0 THEN a.level
                        ELSE 9000 + ((a.key * 7919 + a.qid * 104729 + g * 15485863) %% 2000)::bigint
                   END AS level
            FROM price_alerts a, generate_series(0, %d) g;
            CREATE INDEX ON price_alerts_30x (key, level);
            ANALYZE price_alerts_30x;""" % (grow - 1))
    if "price_alerts_far" not in have:
        print("making price_alerts_far (%dx the queries, the new ones out of reach) ..." % grow,
              flush=True)
        psql(db, """
            CREATE TABLE price_alerts_far AS
            SELECT a.key, a.qid + 100000 * g AS qid,
                   CASE WHEN g = 0 THEN a.level ELSE 1000000000 + a.level + g END AS level
            FROM price_alerts a, generate_series(0, %d) g;
            CREATE INDEX ON price_alerts_far (key, level);
            ANALYZE price_alerts_far;""" % (grow - 1))


SET = "SET max_parallel_workers_per_gather = 0; SET jit = off; SET work_mem = '64MB';"
CPU = ("SELECT 'cpu=' || (split_part(pg_read_file('/proc/self/stat'), ' ', 14)::bigint"
       " + split_part(pg_read_file('/proc/self/stat'), ' ', 15)::bigint);")


def timed(db, sql, variant):
    pre = "BEGIN; DROP INDEX ticks_key_ts_idx;" if variant == "sort" else "BEGIN;"
    script = "%s %s %s\n\\timing on\n%s;\n\\timing off\n%s\nROLLBACK;" % (SET, pre, CPU, sql, CPU)
    out = subprocess.run(["psql", "-X", "-v", "ON_ERROR_STOP=1", "-d", db], input=script,
                         check=True, capture_output=True, text=True).stdout
    ms = [float(x) for x in re.findall(r"Time: ([0-9.]+) ms", out)]
    c = [int(x) for x in re.findall(r"cpu=([0-9]+)", out)]
    rows = [l.strip() for l in out.splitlines() if re.fullmatch(r"\s*[0-9]+\s*", l)]
    tick = os.sysconf("SC_CLK_TCK")
    return ms[-1], (c[1] - c[0]) * 1000.0 / tick, rows[-1] if rows else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("db")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--grow", type=int, default=30)
    ap.add_argument("--no-grow", action="store_true", help="only scan and fires")
    ap.add_argument("--plans", default="sort,index")
    a = ap.parse_args()

    fires = sql_of(EXAMPLE)
    Q = {
        "scan": "SELECT sum(price) FROM (SELECT key, ts, price, vol FROM ticks ORDER BY key, ts) s",
        "fires": "SELECT count(*) FROM (%s) s" % fires,
    }
    if not a.no_grow:
        ensure_grown(a.db, a.grow)
        Q["fires_30x"] = "SELECT count(*) FROM (%s) s" % fires.replace(
            "QUERIES price_alerts ", "QUERIES price_alerts_30x ")
        Q["far_30x"] = "SELECT count(*) FROM (%s) s" % fires.replace(
            "QUERIES price_alerts ", "QUERIES price_alerts_far ")

    plans = a.plans.split(",")
    best = {}
    cbest = {}
    val = {}
    for variant in plans:
        for r in range(a.rounds):
            for name, sql in Q.items():
                ms, cms, v = timed(a.db, sql, variant)
                k = (name, variant)
                best[k] = min(best.get(k, 1e18), ms)
                cbest[k] = min(cbest.get(k, 1e18), cms)
                val[name] = v
                print("%-9s %-5s round %d: %9.1f ms  cpu %8.0f ms  (%s)" % (name, variant, r + 1, ms,
                                                                           cms, v), flush=True)
    print()
    for variant in plans:
        s, cs = best[("scan", variant)], cbest[("scan", variant)]
        for name in Q:
            print("%-9s %-5s best %9.1f ms (%.2fx scan)  cpu %8.0f ms (%.2fx scan)" % (
                name, variant, best[(name, variant)], best[(name, variant)] / s,
                cbest[(name, variant)], cbest[(name, variant)] / cs))
        if "fires_30x" in Q:
            f1, f30, ff = (int(val[n]) for n in ("fires", "fires_30x", "far_30x"))
            c1 = cbest[("fires", variant)]
            print("%-5s grown %dx: fires x%.1f, cpu x%.2f (fires_30x);  fires x%.1f, cpu x%.2f (far_30x)"
                  % (variant, a.grow, f30 / f1, cbest[("fires_30x", variant)] / c1,
                     ff / f1, cbest[("far_30x", variant)] / c1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

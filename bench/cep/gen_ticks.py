#!/usr/bin/env python3
"""Generate the complex-event-processing benchmark data (issue #12).

Writes two tables, as CSV that COPY reads, or straight into a database
through psql:

    ticks(ts bigint, key int, price bigint, vol bigint)    -- ms, cents
    price_alerts(key int, qid int, level bigint)            -- standing queries

The data is the CEP seed's synthetic workload, drawn from one xorshift64
generator (shifts 13, 7, 17), in this order:

 1. standing queries: for each key 0..keys-1, for each qid 0..qpk-1,
    level = level_base + rnd() % level_span;
 2. ticks i = 0..n-1, at ts = i * ts_step:
      key   = rnd() % keys
      price = max(1, price[key] + rnd() % (2*step+1) - step
                     + (price[key] / jump_div if rnd() % jump_every == 0 else 0))
      vol   = spike_vol if rnd() % spike_every == 0 else base_vol
    with every key's price starting at start_price.  Within one tick the
    draws come in exactly that order (key, step, jump, volume).

With the defaults this is the seed's data: 3 000 000 ticks over 10 000 keys
and 100 standing queries per key, on which the seed program finds 450 alerts
and 757 219 level fires (bench/cep/README.md).

Usage:
    gen_ticks.py --out-dir DIR             # DIR/ticks.csv, DIR/price_alerts.csv
    gen_ticks.py --psql "dbname=x"         # CREATE TABLE + COPY through psql
    gen_ticks.py --ticks 300000 --keys 1000 --seed 12345 --out-dir DIR
"""

import argparse
import os
import subprocess
import sys

MASK = (1 << 64) - 1
SEED_STATE = 0x9E3779B97F4A7C15


def parse_seed(text):
    value = int(text, 0)
    if not 0 < value <= MASK:
        raise argparse.ArgumentTypeError(
            "seed must be a non-zero 64-bit unsigned integer (xorshift stays at 0)")
    return value


def positive(text):
    value = int(text, 0)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def non_negative(text):
    value = int(text, 0)
    if value < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value


def generate(opts, write_queries, write_ticks):
    """Draw the queries, then the ticks; hand them to the writers in chunks."""
    s = opts.seed

    # 1. standing queries
    base, span = opts.level_base, opts.level_span
    rows = []
    for key in range(opts.keys):
        for qid in range(opts.qpk):
            s ^= (s << 13) & MASK
            s ^= s >> 7
            s ^= (s << 17) & MASK
            rows.append("%d,%d,%d\n" % (key, qid, base + s % span))
        if len(rows) >= 65536:
            write_queries("".join(rows))
            rows = []
    write_queries("".join(rows))

    # 2. ticks
    keys = opts.keys
    price = [opts.start_price] * keys
    width, step = 2 * opts.step + 1, opts.step
    jump_every, jump_div = opts.jump_every, opts.jump_div
    spike_every, spike_vol, base_vol = opts.spike_every, opts.spike_vol, opts.base_vol
    ts_step = opts.ts_step
    rows = []
    append = rows.append
    for i in range(opts.ticks):
        s ^= (s << 13) & MASK
        s ^= s >> 7
        s ^= (s << 17) & MASK
        k = s % keys
        s ^= (s << 13) & MASK
        s ^= s >> 7
        s ^= (s << 17) & MASK
        p = price[k]
        delta = s % width - step
        s ^= (s << 13) & MASK
        s ^= s >> 7
        s ^= (s << 17) & MASK
        if s % jump_every == 0:
            delta += p // jump_div   # prices stay >= 1, so // truncates as in the seed
        p += delta
        if p < 1:
            p = 1
        price[k] = p
        s ^= (s << 13) & MASK
        s ^= s >> 7
        s ^= (s << 17) & MASK
        append("%d,%d,%d,%d\n" % (i * ts_step, k, p,
                                   spike_vol if s % spike_every == 0 else base_vol))
        if len(rows) >= 65536:
            write_ticks("".join(rows))
            rows = []
            append = rows.append
    write_ticks("".join(rows))


DDL = """
SET client_min_messages = warning;
DROP TABLE IF EXISTS {ticks}, {alerts};
CREATE TABLE {ticks} (ts bigint, key int, price bigint, vol bigint);
CREATE TABLE {alerts} (key int, qid int, level bigint);
"""

POST = """
CREATE INDEX ON {ticks} (key, ts);
CREATE INDEX ON {alerts} (key, level);
ANALYZE {ticks};
ANALYZE {alerts};
"""


def to_csv(opts):
    os.makedirs(opts.out_dir, exist_ok=True)
    qpath = os.path.join(opts.out_dir, opts.alerts_table + ".csv")
    tpath = os.path.join(opts.out_dir, opts.ticks_table + ".csv")
    with open(qpath, "w") as qf, open(tpath, "w") as tf:
        generate(opts, qf.write, tf.write)
    print("wrote %s and %s" % (qpath, tpath), file=sys.stderr)


def to_psql(opts):
    """Create the tables and COPY both of them in one psql session."""
    names = {"ticks": opts.ticks_table, "alerts": opts.alerts_table}
    cmd = [opts.psql_bin, "-X", "-q", "-v", "ON_ERROR_STOP=1", opts.psql]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, text=True)
    out = proc.stdin
    out.write(DDL.format(**names))
    # the queries are drawn first, so they go into the first COPY; the ticks
    # are buffered in a temporary file until that COPY is closed
    import tempfile
    with tempfile.TemporaryFile("w+") as tmp:
        out.write("COPY %s FROM STDIN WITH (FORMAT csv);\n" % names["alerts"])
        generate(opts, out.write, tmp.write)
        out.write("\\.\n")
        out.write("COPY %s FROM STDIN WITH (FORMAT csv);\n" % names["ticks"])
        tmp.seek(0)
        while True:
            chunk = tmp.read(1 << 20)
            if not chunk:
                break
            out.write(chunk)
        out.write("\\.\n")
    if not opts.no_index:
        out.write(POST.format(**names))
    out.close()
    if proc.wait() != 0:
        sys.exit("gen_ticks.py: psql failed (exit %d)" % proc.returncode)
    print("loaded %s (%d rows) and %s (%d rows)" % (
        names["ticks"], opts.ticks, names["alerts"], opts.keys * opts.qpk),
        file=sys.stderr)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Generate the CEP seed's ticks and standing queries.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--out-dir", help="write <ticks-table>.csv and <alerts-table>.csv here")
    where.add_argument("--psql", metavar="CONNINFO",
                       help="create the tables and load them through psql (\"\" = PG* variables)")
    ap.add_argument("--ticks", type=non_negative, default=3_000_000, help="number of ticks")
    ap.add_argument("--keys", type=positive, default=10_000, help="number of keys")
    ap.add_argument("--qpk", type=non_negative, default=100, help="standing queries per key")
    ap.add_argument("--seed", type=parse_seed, default=SEED_STATE,
                    help="xorshift64 state (non-zero)")
    ap.add_argument("--ts-step", type=positive, default=2, help="ms between ticks")
    ap.add_argument("--start-price", type=positive, default=10_000, help="every key's first price (cents)")
    ap.add_argument("--step", type=non_negative, default=20, help="random walk step: -step..+step cents")
    ap.add_argument("--jump-every", type=positive, default=400, help="a jump on 1 tick in this many")
    ap.add_argument("--jump-div", type=positive, default=30, help="a jump adds price / this")
    ap.add_argument("--spike-every", type=positive, default=50, help="a volume spike on 1 tick in this many")
    ap.add_argument("--spike-vol", type=non_negative, default=2_000, help="volume of a spike tick")
    ap.add_argument("--base-vol", type=non_negative, default=10, help="volume of other ticks")
    ap.add_argument("--level-base", type=int, default=9_000, help="lowest query level (cents)")
    ap.add_argument("--level-span", type=positive, default=2_000, help="levels are base + 0..span-1")
    ap.add_argument("--ticks-table", default="ticks", help="name of the ticks table / file")
    ap.add_argument("--alerts-table", default="price_alerts", help="name of the query table / file")
    ap.add_argument("--no-index", action="store_true",
                    help="with --psql: no indexes on (key, ts) and (key, level), no ANALYZE")
    ap.add_argument("--psql-bin", default="psql", help="psql executable")
    opts = ap.parse_args(argv)
    if opts.out_dir is not None:
        to_csv(opts)
    else:
        to_psql(opts)


if __name__ == "__main__":
    main()

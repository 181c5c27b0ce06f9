#!/usr/bin/env bash
# bench/parallel.sh -- the MatchRecognize node under Gather (parallel query)
#
# V-shape PATTERN (STRT DOWN+ UP+) over ROWS rows (default 10M) in PARTS
# partitions (10 000; random walks, as benchmark 1 of bench.py), counted:
# once with max_parallel_workers_per_gather = 0 (the serial plan) and once
# with WORKERS (2) workers, in the same run, each REPEAT (1) times (the
# serial and parallel runs alternating), the best of each taken.  Prints
# both plans, both times and parallel / serial (target <= 0.65 on a 2-core
# machine), and checks that both give the same rows
# (count and a checksum over the result).  Runs against the server the PG*
# variables name, in a scratch database (mr_bench_par) created and dropped;
# the extension must be installed there.  jit off, work_mem 64MB, as in
# bench.py; the parallel run leaves the planner's parallel costs at their
# defaults, so the plan is the one a user would get.
set -euo pipefail

ROWS=${ROWS:-10000000}
PARTS=${PARTS:-10000}
WORKERS=${WORKERS:-2}
REPEAT=${REPEAT:-1}
DB=mr_bench_par
PER=$((ROWS / PARTS))

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
trap 'psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true' EXIT
run() { psql -X -q -v ON_ERROR_STOP=1 -At -d $DB "$@"; }

run <<SQL
SET client_min_messages = warning;
CREATE EXTENSION match_recognize;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64MB';
CREATE UNLOGGED TABLE ticker AS
SELECT s AS symbol, t AS ts,
       100 + sum(random() - 0.5) OVER (PARTITION BY s ORDER BY t) AS price
FROM generate_series(1, $PARTS) s, generate_series(1, $PER) t;
VACUUM ANALYZE ticker;
SQL

VSHAPE='match_recognize($$ ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) $$) AS m(symbol int, start_ts int, bottom_ts int, end_ts int)'
Q="SELECT count(*), sum(hashint8((symbol::int8 << 32) + start_ts) # end_ts) FROM $VSHAPE"
SETTINGS="SET jit = off; SET work_mem = '64MB';"

# seconds of one run of the query under the settings in $1; the result in $R
timed() {
	local t0 t1
	t0=$(date +%s.%N)
	R=$(run -c "$SETTINGS $1" -c "$Q")
	t1=$(date +%s.%N)
	T=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
}
# the smaller of two times
min() { awk -v t="$1" -v b="$2" 'BEGIN { print (b == "" || t < b) ? t : b }'; }

SER="SET max_parallel_workers_per_gather = 0;"
PAR="SET max_parallel_workers_per_gather = $WORKERS;"
echo "== serial plan"; run -c "$SETTINGS $SER" -c "EXPLAIN (COSTS OFF) $Q"
echo "== parallel plan"; run -c "$SETTINGS $PAR" -c "EXPLAIN (COSTS OFF) $Q"
# serial and parallel runs alternate, so that both see the same moments
# of a shared machine; the best of each is taken
TS=; TP=
for i in $(seq 1 "$REPEAT"); do
	timed "$SER"; TS=$(min "$T" "$TS"); RS=$R
	timed "$PAR"; TP=$(min "$T" "$TP"); RP=$R
done
echo "== load (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
printf 'rows %d, partitions %d\n' "$ROWS" "$PARTS"
printf 'serial   (max_parallel_workers_per_gather = 0): %8.3f s  count|checksum %s\n' "$TS" "$RS"
printf 'parallel (max_parallel_workers_per_gather = %d): %8.3f s  count|checksum %s\n' "$WORKERS" "$TP" "$RP"
printf 'parallel / serial: %.2f (target <= 0.65)\n' "$(awk -v p="$TP" -v s="$TS" 'BEGIN { print p / s }')"
if [ "$RS" != "$RP" ]; then
	echo "parallel.sh: the results differ" >&2
	exit 1
fi

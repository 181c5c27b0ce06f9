#!/usr/bin/env bash
# bench/scale_out.sh -- MATCH_RECOGNIZE over a table partitioned across
# postgres_fdw servers: the remote append (each server runs the clause on
# its rows, the coordinator appends) against fetching the rows and matching
# them on the coordinator, and against one local table holding every row,
# in the same run.
#
#   ROWS rows (default 2M) in PARTS partition keys (2 000; random walks), a
#   V-shape PATTERN (STRT DOWN+ UP+) counted.  The table mrb_t of database
#   mrb_coord is partitioned BY HASH (symbol) into two foreign partitions,
#   in databases mrb_d1 and mrb_d2 of the same cluster (loopback through its
#   unix socket: two backends, so on a 2-core machine the two "servers" run
#   at once, as two machines would).  Timed, each the best of REPEAT (3):
#     remote   the plan of this extension (Custom Scan MatchRecognizeAppend)
#     fetched  match_recognize.enable_remote_append = off: the node reads
#              the rows through postgres_fdw and matches them here
#     local    the same query over one local table with all the rows
#   Prints the plans, the times, remote/fetched and remote/local, and checks
#   that all three give the same rows (count and checksum).  Runs against
#   the server the PG* variables name as a superuser (the user mappings
#   have no password); the extension and postgres_fdw must be installed.
set -euo pipefail

ROWS=${ROWS:-2000000}
PARTS=${PARTS:-2000}
REPEAT=${REPEAT:-3}
PER=$((ROWS / PARTS))
DBS="mrb_coord mrb_d1 mrb_d2"

sql() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
cleanup() { for d in $DBS; do sql -d postgres -c "DROP DATABASE IF EXISTS $d" >/dev/null 2>&1 || true; done; }
trap cleanup EXIT
cleanup
for d in $DBS; do sql -d postgres -c "CREATE DATABASE $d"; done

# the rows: symbol s goes to the database hash partitioning sends it to
GEN="SELECT s AS symbol, t AS ts, 100 + sum(random() - 0.5) OVER (PARTITION BY s ORDER BY t) AS price
     FROM generate_series(1, $PARTS) s, generate_series(1, $PER) t"
sql -d mrb_coord <<SQL
SET client_min_messages = warning;
CREATE EXTENSION match_recognize;
CREATE EXTENSION postgres_fdw;
CREATE TABLE mrb_local AS $GEN;
VACUUM ANALYZE mrb_local;
CREATE TABLE mrb_t (symbol int, ts int, price float8) PARTITION BY HASH (symbol);
DO \$\$
DECLARE
  host text := trim(split_part(current_setting('unix_socket_directories'), ',', 1));
  port text := current_setting('port');
BEGIN
  FOR i IN 0..1 LOOP
    EXECUTE format('CREATE SERVER mrb_s%s FOREIGN DATA WRAPPER postgres_fdw
                    OPTIONS (host %L, port %L, dbname %L, fetch_size %L)',
                   i + 1, host, port, 'mrb_d' || (i + 1), '10000');
    EXECUTE format('CREATE USER MAPPING FOR CURRENT_USER SERVER mrb_s%s', i + 1);
    EXECUTE format('CREATE FOREIGN TABLE mrb_t_%s PARTITION OF mrb_t
                    FOR VALUES WITH (MODULUS 2, REMAINDER %s)
                    SERVER mrb_s%s OPTIONS (table_name %L)', i, i, i + 1, 'mrb_t');
  END LOOP;
END \$\$;
SQL
for i in 0 1; do
	sql -d "mrb_d$((i + 1))" -c "SET client_min_messages = warning" -c "CREATE EXTENSION match_recognize" \
		-c "CREATE TABLE mrb_t (symbol int, ts int, price float8)"
	# the rows of remainder i, copied from the coordinator's local table
	sql -d mrb_coord -c "COPY (SELECT l.* FROM mrb_local l
		WHERE satisfies_hash_partition('mrb_t'::regclass, 2, $i, l.symbol)) TO STDOUT" |
		sql -d "mrb_d$((i + 1))" -c "COPY mrb_t FROM STDIN"
	sql -d "mrb_d$((i + 1))" -c "VACUUM ANALYZE mrb_t"
done

clause() {
	echo "match_recognize(\$\$ $1 MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) \$\$) AS m(symbol int, start_ts int, bottom_ts int, end_ts int)"
}
q() { echo "SELECT count(*), sum(hashint8((symbol::int8 << 32) + start_ts) # end_ts) FROM $(clause "$1")"; }
SET="SET jit = off; SET work_mem = '64MB'; SET max_parallel_workers_per_gather = 0;"

echo "== remote plan"
sql -d mrb_coord -c "$SET" -c "EXPLAIN (COSTS OFF) $(q mrb_t)"
echo "== fetched plan"
sql -d mrb_coord -c "$SET SET match_recognize.enable_remote_append = off;" -c "EXPLAIN (COSTS OFF) $(q mrb_t)"

declare -A BEST RES
run_one() {	# name, settings, query
	local t0 t1 t r
	t0=$(date +%s.%N)
	r=$(sql -d mrb_coord -c "$SET $2" -c "$3")
	t1=$(date +%s.%N)
	t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	RES[$1]=$r
	if [ -z "${BEST[$1]:-}" ] || awk -v a="$t" -v b="${BEST[$1]}" 'BEGIN { exit !(a < b) }'; then BEST[$1]=$t; fi
}
for i in $(seq 1 "$REPEAT"); do	# interleaved, so a busy moment hits all three
	run_one remote "" "$(q mrb_t)"
	run_one fetched "SET match_recognize.enable_remote_append = off;" "$(q mrb_t)"
	run_one local "" "$(q mrb_local)"
done

echo "== load (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
echo "rows $ROWS, partitions $PARTS, two foreign partitions (loopback), best of $REPEAT"
printf 'remote append (each server matches its rows): %8s s  %s\n' "${BEST[remote]}" "${RES[remote]}"
printf 'rows fetched, matched on the coordinator:     %8s s  %s\n' "${BEST[fetched]}" "${RES[fetched]}"
printf 'one local table with every row:               %8s s  %s\n' "${BEST[local]}" "${RES[local]}"
awk -v r="${BEST[remote]}" -v f="${BEST[fetched]}" -v l="${BEST[local]}" \
	'BEGIN { printf "remote / fetched: %.2f   remote / local: %.2f\n", r / f, r / l }'
if [ "${RES[remote]}" != "${RES[local]}" ] || [ "${RES[fetched]}" != "${RES[local]}" ]; then
	echo "results differ" >&2
	exit 1
fi

#!/usr/bin/env bash
# bench/stream_bench.sh -- streaming mode figures:
#
#   raw       rate of reading the changes of N inserted rows from a plain
#             logical slot (our plugin, pg_logical_slot_get_binary_changes),
#             i.e. the ceiling any consumer of the slot has
#   ingest    N rows committed as fast as SESSIONS sessions can (ROWS_PER_TXN
#             per transaction) while a stream runs; the stream's rate is N
#             over the time from the first commit until it has caught up
#   latency   commit -> output latency, p50/p99, at a paced RATE rows/s of
#             one-row transactions, each row completing a match
#
# Runs against the server the PG* variables name (wal_level = logical,
# shared_preload_libraries = match_recognize), in a database of its own:
#   pg_virtualenv -o wal_level=logical -o shared_preload_libraries=match_recognize \
#     -o max_replication_slots=10 -o max_worker_processes=16 bash bench/stream_bench.sh
set -euo pipefail

N=${N:-200000}
SESSIONS=${SESSIONS:-4}
ROWS_PER_TXN=${ROWS_PER_TXN:-1000}
RATE=${RATE:-200}
SECONDS_LAT=${SECONDS_LAT:-10}
PARTS=${PARTS:-100}
BATCH=${BATCH:-100000}
DB=${BENCH_DB:-mr_stream_bench}

psql_db() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
psql_db <<'SQL'
CREATE EXTENSION match_recognize;
DO $$
BEGIN
	IF current_setting('output_plugin_libraries', true) IS NOT NULL
	   AND current_setting('output_plugin_libraries') !~ 'match_recognize' THEN
		EXECUTE format('ALTER DATABASE %I SET output_plugin_libraries = %s, %L', current_database(),
					   (SELECT string_agg(quote_literal(trim(p)), ', ')
						FROM unnest(string_to_array(current_setting('output_plugin_libraries'), ',')) p),
					   'match_recognize');
	END IF;
END $$;
SQL

now_s() { date +%s.%N; }

insert_load()
{
	# $1 = table; N rows from SESSIONS sessions; event time = a global sequence
	local per_session=$((N / SESSIONS)) txns pids=()
	txns=$((per_session / ROWS_PER_TXN))
	for _ in $(seq 1 "$SESSIONS"); do
		(
			for _ in $(seq 1 "$txns"); do
				echo "INSERT INTO $1 SELECT (random() * $((PARTS - 1)))::int, nextval('ev_seq'), (random() * 9)::int FROM generate_series(1, $ROWS_PER_TXN);"
			done | psql_db
		) &
		pids+=($!)
	done
	wait "${pids[@]}"
}

# ---- raw slot reading
psql_db -c "CREATE SEQUENCE ev_seq; CREATE TABLE raw_src (k int, ts bigint, v int)"
psql_db -c "SELECT pg_create_logical_replication_slot('mr_bench_raw', 'match_recognize')" >/dev/null
insert_load raw_src
t0=$(now_s)
raw_rows=$(psql_db -At -c "SELECT count(*) FROM pg_logical_slot_get_binary_changes('mr_bench_raw', NULL, NULL, 'relid', 'raw_src'::regclass::oid::text) WHERE substr(data, 1, 1) = 'I'")
t1=$(now_s)
psql_db -c "SELECT pg_drop_replication_slot('mr_bench_raw')" >/dev/null
raw_rate=$(awk "BEGIN { printf \"%d\", $raw_rows / ($t1 - $t0) }")

# ---- ingest
psql_db -c "CREATE TABLE src (k int, ts bigint, v int)"
psql_db -v batch="$BATCH" >/dev/null <<'SQL'
SELECT match_recognize_create_stream('bench_out',
  $$SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, LAST(ts) AS t1, COUNT(*) AS n
      PATTERN (a b+ c) WITHIN 5000
      DEFINE a AS v = 0, b AS v BETWEEN 1 AND 8, c AS v = 9)$$,
  lateness => 10000::bigint, batch_size => :batch);
SELECT match_recognize_wait_stream('bench_out');
SQL
t0=$(now_s)
insert_load src
t1=$(now_s)
psql_db -At -c "SELECT match_recognize_wait_stream('bench_out', '1 hour')" >/dev/null
t2=$(now_s)
commit_rate=$(awk "BEGIN { printf \"%d\", $N / ($t1 - $t0) }")
stream_rate=$(awk "BEGIN { printf \"%d\", $N / ($t2 - $t0) }")
ingest_info=$(psql_db -At -F ' ' -c "SELECT rows_in, late_rows, matches_out, rows_buffered FROM match_recognize_streams")
psql_db -c "SELECT match_recognize_drop_stream('bench_out')" >/dev/null

# ---- latency
psql_db >/dev/null <<'SQL'
CREATE TABLE lat_src (k int, ts timestamptz, v int);
SELECT match_recognize_create_stream('lat_out',
  $$SELECT * FROM lat_src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0 PATTERN (a) DEFINE a AS v >= 0)$$,
  lateness => interval '0 seconds');
SELECT match_recognize_wait_stream('lat_out');
ALTER TABLE lat_out ADD COLUMN written_at timestamptz DEFAULT clock_timestamp();
SQL
total=$((RATE * SECONDS_LAT))
psql_db >/dev/null <<SQL
DO \$\$
DECLARE
	t0 timestamptz := clock_timestamp();
BEGIN
	FOR i IN 1 .. $total LOOP
		INSERT INTO lat_src VALUES (i % $PARTS, clock_timestamp(), 1);
		COMMIT;
		PERFORM pg_sleep(GREATEST(0, extract(epoch FROM t0 + i * interval '1 second' / $RATE - clock_timestamp())));
	END LOOP;
END \$\$;
SQL
psql_db -At -c "SELECT match_recognize_wait_stream('lat_out')" >/dev/null
lat=$(psql_db -At -F ' ' -c "SELECT round(1000 * extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY written_at - t0)))::int,
	round(1000 * extract(epoch FROM percentile_cont(0.99) WITHIN GROUP (ORDER BY written_at - t0)))::int, count(*) FROM lat_out")
psql_db -c "SELECT match_recognize_drop_stream('lat_out')" >/dev/null
psql -X -q -d postgres -c "DROP DATABASE $DB"

echo "stream_bench: N=$N rows, $SESSIONS sessions x $ROWS_PER_TXN rows/txn, $PARTS partitions, batch_size $BATCH"
echo "  raw slot read:   $raw_rate rows/s ($raw_rows rows decoded)"
echo "  commit rate:     $commit_rate rows/s"
echo "  stream rate:     $stream_rate rows/s (first commit to caught up; rows_in late matches buffered: $ingest_info)"
read -r p50 p99 nlat <<<"$lat"
echo "  latency:         p50 ${p50} ms, p99 ${p99} ms (commit -> output row, $nlat rows at $RATE rows/s)"

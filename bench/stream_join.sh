#!/usr/bin/env bash
# bench/stream_join.sh -- interval join stream figures:
#
#   catchup   N rows per side committed (ROWS_PER_TXN a transaction) while
#             the join stream is paused; then the raw decoding of that WAL
#             (pg_logical_slot_get_changes of a test_decoding slot made at
#             the same point) against the stream's catch-up once resumed;
#             the ratio of the two rates, in one run
#   memory    MEM_N rows per side committed while the stream runs; the
#             worker's RssAnon sampled every SAMPLE_S seconds through the
#             run, with rows_retained and the checkpoint's size
#
# The join: INNER, key i % KEYS, time i on both sides, r.ts BETWEEN l.ts - 2
# AND l.ts + 2 (one pair a row), lateness 10.  Runs against the server the
# PG* variables name, in a database of its own.  SECTIONS="catchup memory".
set -euo pipefail

N=${N:-1000000}
MEM_N=${MEM_N:-10000000}
ROWS_PER_TXN=${ROWS_PER_TXN:-10000}
KEYS=${KEYS:-1000}
SAMPLE_S=${SAMPLE_S:-10}
SECTIONS=${SECTIONS:-"catchup memory"}
DB=${BENCH_DB:-mr_join_bench}

psql_db() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
now_s() { date +%s.%N; }

setup()
{
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
	psql_db <<'SQL'
CREATE EXTENSION match_recognize;
CREATE TABLE jl (i bigint, k int, ts bigint, v int);
CREATE TABLE jr (i bigint, k int, ts bigint, v int);
SQL
	psql_db -c "SELECT match_recognize_create_stream('jout', 'SELECT l.i AS li, r.i AS ri, l.v AS lv, r.v AS rv FROM jl l JOIN jr r ON r.k = l.k AND r.ts BETWEEN l.ts - 2 AND l.ts + 2', lateness => 10)" >/dev/null
	psql_db -c "SELECT match_recognize_wait_stream('jout')" >/dev/null
}

# rows first .. last on both sides, ROWS_PER_TXN a transaction
load()
{
	local first=$1 last=$2 a b
	for ((a = first; a <= last; a += ROWS_PER_TXN)); do
		b=$((a + ROWS_PER_TXN - 1)); ((b > last)) && b=$last
		echo "BEGIN; INSERT INTO jl SELECT i, i % $KEYS, i, 1 FROM generate_series($a, $b) i;"
		echo "INSERT INTO jr SELECT i, i % $KEYS, i, 2 FROM generate_series($a, $b) i; COMMIT;"
	done | psql_db >/dev/null
}

wait_caught_up()
{
	[ "$(psql_db -c "SELECT match_recognize_wait_stream('jout', interval '2 hours')")" = t ]
}

catchup()
{
	local t0 t1 raw_s stream_s changes
	setup
	psql_db -c "SELECT match_recognize_pause_stream('jout')" >/dev/null
	psql_db -c "SELECT 'raw' FROM pg_create_logical_replication_slot('jraw', 'test_decoding')" >/dev/null
	load 1 "$N"
	t0=$(now_s)
	changes=$(psql_db -c "SELECT count(*) FROM pg_logical_slot_get_changes('jraw', NULL, NULL)")
	t1=$(now_s)
	raw_s=$(echo "$t1 - $t0" | bc)
	psql_db -c "SELECT pg_drop_replication_slot('jraw')" >/dev/null
	t0=$(now_s)
	psql_db -c "SELECT match_recognize_resume_stream('jout')" >/dev/null
	wait_caught_up
	t1=$(now_s)
	stream_s=$(echo "$t1 - $t0" | bc)
	echo "catchup: $N rows per side, $changes decoded changes"
	echo "  raw decoding (test_decoding): ${raw_s}s, $(echo "2 * $N / $raw_s" | bc) rows/s"
	echo "  join stream catch-up:         ${stream_s}s, $(echo "2 * $N / $stream_s" | bc) rows/s"
	echo "  ratio stream/raw: $(echo "scale=3; $raw_s / $stream_s" | bc)"
	psql_db -c "SELECT 'stream: rows_in ' || rows_in || ', rows_out ' || rows_out || ', rows_retained ' || rows_retained FROM match_recognize_streams WHERE name = 'public.jout'"
	psql_db -c "SELECT 'output rows ' || count(*) FROM jout"
}

memory()
{
	local pid loader step=$((MEM_N / 20))
	setup
	pid=$(psql_db -c "SELECT worker_pid FROM match_recognize_streams WHERE name = 'public.jout'")
	echo "memory: $MEM_N rows per side, worker $pid; samples: elapsed s, RssAnon, rows_in, rows_retained, checkpoint bytes, held_wal"
	( for ((a = 1; a <= MEM_N; a += step)); do load "$a" $((a + step - 1)); done ) &
	loader=$!
	local t0; t0=$(now_s)
	while kill -0 "$loader" 2>/dev/null; do
		echo "  $(echo "$(now_s) - $t0" | bc | cut -d. -f1)s $(grep RssAnon /proc/"$pid"/status | awk '{print $2 $3}') $(psql_db -c "SELECT s.rows_in || ' ' || s.rows_retained || ' ' || coalesce(octet_length(c.checkpoint_state), 0) || ' ' || s.held_wal_bytes FROM match_recognize_streams s JOIN match_recognize_stream c ON c.name = s.name WHERE s.name = 'public.jout'")"
		sleep "$SAMPLE_S"
	done
	wait "$loader"
	wait_caught_up
	echo "  end $(grep RssAnon /proc/"$pid"/status | awk '{print $2 $3}') $(psql_db -c "SELECT rows_in || ' ' || rows_retained FROM match_recognize_streams WHERE name = 'public.jout'")"
}

drop_all()
{
	psql_db -c "SELECT match_recognize_drop_stream('jout')" >/dev/null 2>&1 || true
	for _ in $(seq 1 100); do
		[ "$(psql_db -c "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()")" = 0 ] && break
		sleep 0.1
	done
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB"
}

for s in $SECTIONS; do "$s"; drop_all; done

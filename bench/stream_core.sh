#!/usr/bin/env bash
# bench/stream_core.sh -- the figures of the stream core, side by side
#
#   catchup   N rows (default 1M) over PARTS partitions (100), V shape, default
#             batch size, committed while the stream's worker is stopped
#             (SIGSTOP), then: test_decoding reads the same WAL
#             (pg_logical_slot_get_changes), and the worker catches up
#             (SIGCONT until match_recognize_wait_stream returns).  Rates,
#             their ratio, CPU per row of each, the WAL the worker wrote per
#             input row (pg_walinspect: every record of the catch-up except
#             those of the output table and its index), the worker's RssAnon.
#   parts     the same with BIG_PARTS partitions (100 000): RssAnon, and the
#             worker's CPU per row against the catchup run's
#   backfill  BACKFILL_ROWS rows (10M) in the source before the stream
#             exists: the backfill's rate and the worker's peak RssAnon
#   steady    RATE rows/s (100 000) for STEADY_SECONDS (300) from two paced
#             sessions (1000-row transactions) while the stream runs:
#             rate achieved, p50/p99/max of output written_at - the
#             insert time of the match's last row, the worker's CPU share
#   idle      IDLE_SECONDS (600) without new rows: the worker's lines in the
#             server log (LOGFILE), its CPU, writes to the catalog and
#             internal tables, their sizes
#   bounded   BOUNDED_ROWS rows (3M) through a running stream: sizes and
#             autovacuum counts of the catalog and internal tables
#
# SECTIONS chooses (default: all, in the order above).  Runs against the
# server the PG* variables name, in a database of its own, and reads
# /proc/<pid> of the server's processes: run it on the server's host as
# root or as the server's user.  The machine's other load moves single
# figures; the ratios are taken within one run.
set -euo pipefail

N=${N:-1000000}
PARTS=${PARTS:-100}
BIG_PARTS=${BIG_PARTS:-100000}
BACKFILL_ROWS=${BACKFILL_ROWS:-10000000}
RATE=${RATE:-100000}
STEADY_SECONDS=${STEADY_SECONDS:-300}
IDLE_SECONDS=${IDLE_SECONDS:-600}
BOUNDED_ROWS=${BOUNDED_ROWS:-3000000}
TXN=${TXN:-1000}
SECTIONS=${SECTIONS:-"catchup parts backfill steady idle bounded"}
LOGFILE=${LOGFILE:-}
DB=${BENCH_DB:-mr_stream_core}

psql_db() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
val() { psql -X -At -v ON_ERROR_STOP=1 -d "$DB" -c "$1"; }
now_s() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%s\", $1 }"; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
rss_kb() { awk '/^RssAnon:/ { print $2 }' "/proc/$1/status"; }
hz=$(getconf CLK_TCK)

declare -A R			# results, printed at the end

fresh_db()
{
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
	psql_db <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION match_recognize;
CREATE EXTENSION pg_walinspect;
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
}

drop_db()
{
	local s
	for s in $(val "SELECT name FROM match_recognize_streams"); do
		val "SELECT match_recognize_drop_stream('$s')" >/dev/null
	done
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB"
}

# the V shape over tick (sym, ts, price), extra MEASURES in $2
create_stream()
{
	psql_db <<SQL
SET client_min_messages = warning;
SELECT match_recognize_create_stream('$1',
  \$q\$SELECT * FROM tick MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts
      MEASURES FIRST(ts) AS start_ts, LAST(down.ts) AS bottom_ts, LAST(ts) AS end_ts $2
      ONE ROW PER MATCH AFTER MATCH SKIP TO LAST up
      PATTERN (strt down+ up+)
      DEFINE down AS price < PREV(price), up AS price > PREV(price))\$q\$,
  lateness => ${3:-1000}::bigint);
SELECT match_recognize_wait_stream('$1');
SQL
}

# rows lo .. hi - 1: partition i % parts, event time i, a pseudo-random price
insert_rows()
{
	psql_db <<SQL
DO \$\$
BEGIN
  FOR b IN $1 / $TXN .. ($2 - 1) / $TXN LOOP
    INSERT INTO tick SELECT i % $3, i, (abs(hashint8(i)) % 1000)::int
      FROM generate_series(GREATEST(b * $TXN, $1), LEAST(b * $TXN + $TXN, $2) - 1) i;
    COMMIT;
  END LOOP;
END \$\$;
SQL
}

# wait until autovacuum and the checkpointer leave the machine alone
settle()
{
	local i
	for i in $(seq 1 120); do
		[ "$(val "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'")" = 0 ] && break
		sleep 1
	done
	sleep "${1:-3}"
}

# catchup <label> <parts>: sets R[<label>_*]
catchup()
{
	local label=$1 parts=$2 pid raw_pid c0 c1 t0 t1 t2 t3 lsn0 lsn1 out_wal tot_wal peak sampler
	fresh_db
	psql_db -c "CREATE TABLE tick (sym int, ts bigint, price int)"
	create_stream vout "" >/dev/null
	pid=$(val "SELECT worker_pid FROM match_recognize_streams")
	kill -STOP "$pid"
	val "SELECT pg_create_logical_replication_slot('bench_raw', 'test_decoding')" >/dev/null
	insert_rows 0 "$N" "$parts"
	settle 3

	# test_decoding over the same WAL, in one backend whose CPU we read
	read -r raw_pid c0 t0 c1 t1 <<<"$(psql -X -At -d "$DB" <<'SQL'
SELECT pg_backend_pid() AS p \gset
\setenv MRP :p
\! printf '%s %s %s ' $MRP "$(awk '{print $14+$15}' /proc/$MRP/stat)" "$(date +%s.%N)"
SELECT count(*) FROM pg_logical_slot_get_changes('bench_raw', NULL, NULL) \g /dev/null
\! printf '%s %s\n' "$(awk '{print $14+$15}' /proc/$MRP/stat)" "$(date +%s.%N)"
SQL
)"
	val "SELECT pg_drop_replication_slot('bench_raw')" >/dev/null
	R[${label}_raw_rate]=$(calc "$N / ($t1 - $t0)")
	R[${label}_raw_us]=$(calc "($c1 - $c0) * 1e6 / $hz / $N")
	settle 2

	lsn0=$(val "SELECT pg_current_wal_insert_lsn()")
	c0=$(ticks "$pid")
	peak=0
	( while kill -0 "$pid" 2>/dev/null; do rss_kb "$pid"; sleep 0.2; done ) > "/tmp/mr_bench_rss.$$" &
	sampler=$!
	t2=$(now_s)
	kill -CONT "$pid"
	val "SELECT match_recognize_wait_stream('vout', '1 hour')" >/dev/null
	t3=$(now_s)
	c1=$(ticks "$pid")
	lsn1=$(val "SELECT pg_current_wal_insert_lsn()")
	kill "$sampler" 2>/dev/null || true
	peak=$(sort -n "/tmp/mr_bench_rss.$$" | tail -1)
	rm -f "/tmp/mr_bench_rss.$$"
	R[${label}_rate]=$(calc "$N / ($t3 - $t2)")
	R[${label}_us]=$(calc "($c1 - $c0) * 1e6 / $hz / $N")
	R[${label}_ratio]=$(calc "${R[${label}_rate]} / ${R[${label}_raw_rate]}")
	R[${label}_cpu_ratio]=$(calc "${R[${label}_raw_us]} / ${R[${label}_us]}")
	R[${label}_rss]=$peak
	tot_wal=$(val "SELECT pg_wal_lsn_diff('$lsn1', '$lsn0')")
	out_wal=$(val "SELECT COALESCE(sum(record_length), 0) FROM pg_get_wal_records_info('$lsn0', '$lsn1')
		WHERE block_ref ~ ('/' || pg_relation_filenode('vout') || ' ')
		   OR block_ref ~ ('/' || pg_relation_filenode('vout__match_id_key') || ' ')")
	R[${label}_wal_total]=$(calc "$tot_wal / $N")
	R[${label}_wal_worker]=$(calc "($tot_wal - $out_wal) / $N")
	R[${label}_state]=$(val "SELECT format('rows_in %s, matches %s, pending %s, retained %s, stored %s, %s',
		rows_in, matches_out, rows_pending, rows_retained, rows_stored, state) FROM match_recognize_streams")
	drop_db
}

backfill()
{
	local pid=0 t0 t1 i peak=0 r prog=""
	fresh_db
	psql_db -c "CREATE TABLE tick (sym int, ts bigint, price int)"
	insert_rows 0 "$BACKFILL_ROWS" "$PARTS"
	settle 3
	t0=$(now_s)
	psql_db >/dev/null <<'SQL'
SET client_min_messages = warning;
SELECT match_recognize_create_stream('bout',
  $q$SELECT * FROM tick MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts
      MEASURES FIRST(ts) AS start_ts, LAST(down.ts) AS bottom_ts, LAST(ts) AS end_ts
      ONE ROW PER MATCH AFTER MATCH SKIP TO LAST up
      PATTERN (strt down+ up+)
      DEFINE down AS price < PREV(price), up AS price > PREV(price))$q$,
  lateness => 1000::bigint);
SQL
	for i in $(seq 1 36000); do
		[ "$(val "SELECT backfilled FROM match_recognize_stream")" = t ] && break
		pid=$(val "SELECT COALESCE(pid, 0) FROM pg_stat_activity WHERE backend_type = 'match_recognize stream'")
		if [ "$pid" != 0 ] && [ -r "/proc/$pid/status" ]; then
			r=$(rss_kb "$pid" || echo 0)
			[ "${r:-0}" -gt "$peak" ] && peak=$r
			[ $((i % 25)) = 0 ] && prog="$prog $(val "SELECT backfill_rows || '/' || backfill_total FROM match_recognize_streams")"
		fi
		sleep 0.2
	done
	t1=$(now_s)
	R[backfill_rate]=$(calc "$BACKFILL_ROWS / ($t1 - $t0)")
	R[backfill_secs]=$(calc "$t1 - $t0")
	R[backfill_rss]=$peak
	R[backfill_progress]=$prog
	R[backfill_state]=$(val "SELECT format('rows_in %s, matches %s, stored %s', rows_in, matches_out, rows_stored) FROM match_recognize_streams")
	drop_db
}

steady()
{
	local pid c0 c1 t0 t1 g1 g2 per
	fresh_db
	psql_db -c "CREATE TABLE tick (sym int, ts bigint, price int, ins_at timestamptz DEFAULT clock_timestamp())" \
		-c "CREATE SEQUENCE tick_ts CACHE 1000"
	create_stream sout ", LAST(ins_at) AS last_ins" 20000 >/dev/null
	psql_db -c "ALTER TABLE sout ADD COLUMN written_at timestamptz DEFAULT clock_timestamp()"
	pid=$(val "SELECT worker_pid FROM match_recognize_streams")
	per=$((RATE / 2))
	gen()
	{
		psql_db <<SQL
DO \$\$
DECLARE
	t0 timestamptz := clock_timestamp();
	n bigint := 0;
BEGIN
	WHILE clock_timestamp() < t0 + interval '$STEADY_SECONDS seconds' LOOP
		INSERT INTO tick (sym, ts, price)
			SELECT s % $PARTS, s, (abs(hashint8(s)) % 1000)::int
			FROM (SELECT nextval('tick_ts') AS s FROM generate_series(1, $TXN)) x;
		COMMIT;
		n := n + $TXN;
		PERFORM pg_sleep(GREATEST(0, extract(epoch FROM t0 + n * interval '1 second' / $per - clock_timestamp())));
	END LOOP;
END \$\$;
SQL
	}
	c0=$(ticks "$pid")
	t0=$(now_s)
	gen & g1=$!
	gen & g2=$!
	wait "$g1" "$g2"
	t1=$(now_s)
	val "SELECT match_recognize_wait_stream('sout', '1 hour')" >/dev/null
	c1=$(ticks "$pid")
	R[steady_rows]=$(val "SELECT count(*) FROM tick")
	R[steady_rate]=$(calc "${R[steady_rows]} / ($t1 - $t0)")
	R[steady_cpu]=$(calc "100 * ($c1 - $c0) / $hz / ($t1 - $t0)")
	R[steady_latency]=$(val "SELECT format('p50 %s ms, p99 %s ms, max %s ms over %s matches',
		round(1000 * extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY written_at - last_ins)))::int,
		round(1000 * extract(epoch FROM percentile_cont(0.99) WITHIN GROUP (ORDER BY written_at - last_ins)))::int,
		round(1000 * extract(epoch FROM max(written_at - last_ins)))::int, count(*)) FROM sout")
	R[steady_state]=$(val "SELECT format('rows_in %s, late %s, matches %s, held WAL %s', rows_in, late_rows, matches_out,
		pg_size_pretty(held_wal_bytes)) FROM match_recognize_streams")
	drop_db
}

rel_stats()
{
	val "SELECT string_agg(format('%s %s (ins %s upd %s del %s, dead %s, autovacuum %s, autoanalyze %s)',
			c.relname, pg_size_pretty(pg_total_relation_size(c.oid)), s.n_tup_ins, s.n_tup_upd, s.n_tup_del,
			s.n_dead_tup, s.autovacuum_count, s.autoanalyze_count), '; ' ORDER BY c.relname)
		FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid
		WHERE c.relname LIKE '\_mr\_%' OR c.relname = 'match_recognize_stream'"
}

idle()
{
	local pid c0 c1 l0=0 l1=0 s0 s1 w0 w1
	fresh_db
	psql_db -c "CREATE TABLE tick (sym int, ts bigint, price int)"
	create_stream iout "" >/dev/null
	insert_rows 0 100000 "$PARTS"
	val "SELECT match_recognize_wait_stream('iout')" >/dev/null
	sleep 15			# past the stream's next checkpoint
	pid=$(val "SELECT worker_pid FROM match_recognize_streams")
	val "SELECT pg_stat_force_next_flush()" >/dev/null
	s0=$(val "SELECT sum(n_tup_ins + n_tup_upd + n_tup_del) FROM pg_stat_user_tables WHERE relname LIKE '\_mr\_%' OR relname = 'match_recognize_stream'")
	w0=$(val "SELECT xmin::text || ctid::text FROM match_recognize_stream")
	[ -n "$LOGFILE" ] && l0=$(wc -l < "$LOGFILE")
	c0=$(ticks "$pid")
	sleep "$IDLE_SECONDS"
	c1=$(ticks "$pid")
	# the worker's lines (the checkpointer logs its own, log_checkpoints)
	[ -n "$LOGFILE" ] && l1=$(tail -n +$((l0 + 1)) "$LOGFILE" | grep -c "\[$pid\]" || true)
	val "SELECT pg_stat_force_next_flush()" >/dev/null
	sleep 1
	s1=$(val "SELECT sum(n_tup_ins + n_tup_upd + n_tup_del) FROM pg_stat_user_tables WHERE relname LIKE '\_mr\_%' OR relname = 'match_recognize_stream'")
	w1=$(val "SELECT xmin::text || ctid::text FROM match_recognize_stream")
	R[idle_log]=$([ -n "$LOGFILE" ] && echo "$l1" || echo "not measured (set LOGFILE)")
	R[idle_cpu]=$(calc "($c1 - $c0) * 1000 / $hz")
	R[idle_writes]=$((s1 - s0))
	R[idle_row]=$([ "$w0" = "$w1" ] && echo "unchanged" || echo "rewritten")
	R[idle_tables]=$(rel_stats)
	drop_db
}

bounded()
{
	fresh_db
	psql_db -c "CREATE TABLE tick (sym int, ts bigint, price int)"
	create_stream bnd "" >/dev/null
	insert_rows 0 "$BOUNDED_ROWS" "$PARTS"
	val "SELECT match_recognize_wait_stream('bnd', '1 hour')" >/dev/null
	sleep 70			# a few autovacuum rounds
	R[bounded_tables]=$(rel_stats)
	R[bounded_state]=$(val "SELECT format('rows_in %s, pending %s, retained %s, stored %s', rows_in, rows_pending, rows_retained, rows_stored) FROM match_recognize_streams")
	drop_db
}

for s in $SECTIONS; do
	case $s in
		catchup) catchup catchup "$PARTS" ;;
		parts) catchup parts "$BIG_PARTS" ;;
		backfill) backfill ;;
		steady) steady ;;
		idle) idle ;;
		bounded) bounded ;;
		*) echo "unknown section $s" >&2; exit 1 ;;
	esac
done

echo "stream_core: $(nproc) CPUs; $(psql -X -At -d postgres -c 'SHOW server_version')"
for s in $SECTIONS; do
	case $s in
		catchup|parts)
			p=$([ "$s" = catchup ] && echo "$PARTS" || echo "$BIG_PARTS")
			printf '%s: %d rows, %d partitions\n' "$s" "$N" "$p"
			printf '  test_decoding over the same WAL  %8.0f rows/s, %5.2f us CPU/row\n' "${R[${s}_raw_rate]}" "${R[${s}_raw_us]}"
			printf '  stream catch-up                  %8.0f rows/s, %5.2f us CPU/row\n' "${R[${s}_rate]}" "${R[${s}_us]}"
			printf '  ratio (target >= 0.50)           %8.2f (CPU %.2f)\n' "${R[${s}_ratio]}" "${R[${s}_cpu_ratio]}"
			printf '  WAL per input row                %8.1f B by the worker (target <= 20), %.1f B with the output\n' "${R[${s}_wal_worker]}" "${R[${s}_wal_total]}"
			printf '  worker RssAnon peak              %8d kB\n' "${R[${s}_rss]}"
			printf '  %s\n' "${R[${s}_state]}"
			if [ "$s" = parts ] && [ -n "${R[catchup_us]:-}" ]; then
				printf '  CPU per row vs %d partitions    %8.2f (target <= 2)\n' "$PARTS" "$(calc "${R[parts_us]} / ${R[catchup_us]}")"
			fi ;;
		backfill)
			printf 'backfill: %d rows, %d partitions\n' "$BACKFILL_ROWS" "$PARTS"
			printf '  %.0f rows/s (%.1f s), worker RssAnon peak %d kB (target < 300 MB)\n' "${R[backfill_rate]}" "${R[backfill_secs]}" "${R[backfill_rss]}"
			printf '  progress seen:%s\n  %s\n' "${R[backfill_progress]}" "${R[backfill_state]}" ;;
		steady)
			printf 'steady: %d rows/s asked for %d s, %d partitions\n' "$RATE" "$STEADY_SECONDS" "$PARTS"
			printf '  achieved %.0f rows/s (%d rows), worker CPU %.0f%% of a core\n' "${R[steady_rate]}" "${R[steady_rows]}" "${R[steady_cpu]}"
			printf '  commit -> output latency: %s (target p99 <= 1000 ms)\n  %s\n' "${R[steady_latency]}" "${R[steady_state]}" ;;
		idle)
			printf 'idle: %d s\n  log lines %s, worker CPU %s ms, writes to the catalog and internal tables %s (catalog row %s)\n  %s\n' \
				"$IDLE_SECONDS" "${R[idle_log]}" "${R[idle_cpu]}" "${R[idle_writes]}" "${R[idle_row]}" "${R[idle_tables]}" ;;
		bounded)
			printf 'bounded: %d rows\n  %s\n  %s\n' "$BOUNDED_ROWS" "${R[bounded_state]}" "${R[bounded_tables]}" ;;
	esac
done

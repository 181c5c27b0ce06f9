#!/usr/bin/env bash
# bench/stream_cores.sh -- catch-up of one stream with workers => 1 and
# workers => 2, in the same run
#
#   N rows (default 1M) over PARTS partitions (100), the V shape of
#   bench/stream_core.sh, committed in TXN-row transactions while both
#   streams are paused: s1 (workers => 1: its worker decodes and matches)
#   and s2 (workers => 2: its worker decodes and writes, its lane matches,
#   src/stream/mr_stream_lanes.c).  Then each catches up alone (from
#   match_recognize_resume_stream until match_recognize_wait_stream
#   returns; then it is paused again, so that it does not decode the
#   other's output WAL on a core the other needs): rows/s of each,
#   their ratio, the CPU seconds of each process and the seconds it was
#   runnable but waited for a CPU (/proc/<pid>/schedstat: the machine's
#   other load), and whether the two output
#   tables are equal (_match_id included).  The load average is printed
#   before and after: the machine's other load moves the figures (the ratio
#   is taken within one run).
#
#   CASES chooses (default "v heavy"): v is that V shape, whose worker is
#   bound by logical decoding (bench/stream_core.sh: the worker catches up
#   at 0.84 of the rate of test_decoding over the same WAL), so only its
#   matching, a small part, can be shared; heavy is the same query with a
#   DEFINE that costs more per row than decoding it (an md5 of a 150-char
#   string in each DEFINE), the case workers > 1 is for.
#
#   PERF=<dir> records each process of each stream during its catch-up with
#   perf record -g (<dir>/w<workers>.<pid>.data; the overhead lowers the
#   rates).
#
# Runs against the server the PG* variables name (max_worker_processes of
# at least 5), in a database of its own, and reads /proc/<pid> of the
# server's processes: run it on the server's host as root or as the
# server's user.
set -euo pipefail

N=${N:-1000000}
PARTS=${PARTS:-100}
TXN=${TXN:-1000}
DB=${BENCH_DB:-mr_stream_cores}
CASES=${CASES:-"v heavy"}
REPEAT=${REPEAT:-3}

psql_db() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
val() { psql -X -At -v ON_ERROR_STOP=1 -d "$DB" -c "$1"; }
now_s() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%s\", $1 }"; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# nanoseconds the process was runnable but waited for a CPU
rqwait() { awk '{ print $2 }' "/proc/$1/schedstat"; }
hz=$(getconf CLK_TCK)

# one case: $1 its name, HEAVY what its DEFINEs add
run_case()
{
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
	psql_db <<-'SQL'
	SET client_min_messages = warning;
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
	CREATE TABLE tick (sym int, ts bigint, price int);
	SQL

	for w in 1 2; do
		psql_db >/dev/null <<-SQL
	SET client_min_messages = warning;
	SELECT match_recognize_create_stream('s$w',
	  \$q\$SELECT * FROM tick MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts
	      MEASURES FIRST(ts) AS start_ts, LAST(down.ts) AS bottom_ts, LAST(ts) AS end_ts
	      ONE ROW PER MATCH AFTER MATCH SKIP TO LAST up
	      PATTERN (strt down+ up+)
	      DEFINE down AS price < PREV(price)$HEAVY, up AS price > PREV(price)$HEAVY)\$q\$,
	  lateness => 1000::bigint, workers => $w);
	SELECT match_recognize_wait_stream('s$w');
	-- no autovacuum of the output during the catch-ups: the first one's
	-- 300 000 rows would be vacuumed while the second catches up
	ALTER TABLE s$w SET (autovacuum_enabled = off);
	SQL
	done

	# the processes of stream s<w>: its worker, then its lanes
	procs()
	{
		local id
		id=$(val "SELECT id FROM match_recognize_stream WHERE name = 'public.s$1'")
		val "SELECT pid FROM pg_stat_activity WHERE application_name = 'match_recognize stream $id'
			 UNION ALL (SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'match_recognize stream $id lane %' ORDER BY application_name)"
	}
	# paused while the backlog is committed: their processes end (not
	# SIGSTOP, which could stop one holding a lock every commit needs)
	for w in 1 2; do val "SELECT match_recognize_pause_stream('s$w')" >/dev/null; done

	printf '%s: catch-up of %s rows over %s partitions (V shape, %s-row transactions), %s rounds\n' "$1" "$N" "$PARTS" "$TXN" "$REPEAT"
	declare -A RATE CPU RQ WALL SUM
	SUM[1]=0
	SUM[2]=0
	for r in $(seq 0 $((REPEAT - 1))); do
	psql_db <<-SQL
	DO \$\$
	BEGIN
	  FOR b IN 0 .. ($N - 1) / $TXN LOOP
	    INSERT INTO tick SELECT i % $PARTS, $r::bigint * $N + i, (abs(hashint8(i)) % 1000)::int
	      FROM generate_series(b * $TXN, LEAST(b * $TXN + $TXN, $N) - 1) i;
	    COMMIT;
	  END LOOP;
	END \$\$;
	SQL
	for _ in $(seq 1 120); do
		[ "$(val "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'")" = 0 ] && break
		sleep 1
	done
	sleep 3

	echo "  round $((r + 1)): load before $(cut -d' ' -f1-3 /proc/loadavg)"
	for w in 1 2; do
		t0=$(now_s)
		val "SELECT match_recognize_resume_stream('s$w')" >/dev/null
		# the processes the resume started: the worker, then its lanes
		pids=""
		for _ in $(seq 1 200); do
			pids=$(procs "$w" | tr '\n' ' ')
			[ "$(echo "$pids" | wc -w)" = "$w" ] && break
			sleep 0.02
		done
		perfpids=""
		if [ -n "${PERF:-}" ]; then
			for p in $pids; do
				perf record -F 999 -g -o "$PERF/w$w.$p.data" -p "$p" >/dev/null 2>&1 &
				perfpids="$perfpids $!"
			done
		fi
		val "SELECT match_recognize_wait_stream('s$w', '1 hour')" >/dev/null
		t1=$(now_s)
		for pp in $perfpids; do kill -INT "$pp"; wait "$pp" || true; done
		# their whole lives: they started with the catch-up
		cpu=""
		rq=""
		for p in $pids; do
			cpu="$cpu $(calc "$(ticks "$p") / $hz")"
			rq="$rq $(awk -v a="$(rqwait "$p")" 'BEGIN { printf "%.2f", a / 1e9 }')"
		done
		# a running stream decodes all the WAL the other one's catch-up
		# writes (its output): it would take a core from the other's
		# processes, so it is paused again
		val "SELECT match_recognize_pause_stream('s$w')" >/dev/null
		RATE[$w]=$(calc "$N / ($t1 - $t0)")
		WALL[$w]=$(calc "$t1 - $t0")
		CPU[$w]=$cpu
		RQ[$w]=$rq
		SUM[$w]=$(calc "${SUM[$w]} + ${WALL[$w]}")
	done
	printf '    workers => 1: %.0f rows/s in %.2f s (CPU s, worker:%s; waiting for a CPU:%s)\n' "${RATE[1]}" "${WALL[1]}" "${CPU[1]}" "${RQ[1]}"
	printf '    workers => 2: %.0f rows/s in %.2f s (CPU s, worker and lanes:%s; waiting for a CPU:%s)\n' "${RATE[2]}" "${WALL[2]}" "${CPU[2]}" "${RQ[2]}"
	printf '    ratio workers 2 / 1: %.2f\n' "$(calc "${RATE[2]} / ${RATE[1]}")"
	done
	echo "  load after: $(cut -d' ' -f1-3 /proc/loadavg)"
	printf '  all rounds: workers => 1 %.2f s, workers => 2 %.2f s, ratio workers 2 / 1: %.2f\n' \
		"${SUM[1]}" "${SUM[2]}" "$(calc "${SUM[1]} / ${SUM[2]}")"
	val "SELECT format('  %s: rows_in %s, matches %s, state %s', name, rows_in, matches_out, state)
		 FROM match_recognize_streams ORDER BY name"
	echo "  outputs differ in $(val "SELECT count(*) FROM ((TABLE s1 EXCEPT ALL TABLE s2) UNION ALL (TABLE s2 EXCEPT ALL TABLE s1)) x") rows"

	for w in 1 2; do val "SELECT match_recognize_drop_stream('s$w')" >/dev/null; done
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB"
}

for c in $CASES; do
	case $c in
		v) HEAVY="" ;;
		heavy) HEAVY=" AND length(md5(repeat(price::text, 50))) = 32" ;;
		*) echo "unknown case $c" >&2; exit 2 ;;
	esac
	run_case "$c"
done

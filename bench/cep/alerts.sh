#!/usr/bin/env bash
# The seed's alert rule (examples/seed_alerts.sql) against the ordered scan
# of ticks, in one run (issue 12's target: alert rule <= 1.3x the scan):
#
#   bench/cep/alerts.sh [ROUNDS]        (default 5; PG* name the server and
#                                        the database holding ticks)
#
# Each round runs, interleaved, the floor (the ordered scan of bench/ and
# cep/NOTES: SELECT sum(price) over ticks ORDER BY key, ts), the alert rule,
# and the exact devices query of today's syntax (cep baseline) when
# --baseline FILE is given, each wrapped in SELECT count(*), under the
# bench settings (no parallel workers, no JIT, work_mem 64MB) and with the
# (key, ts) index hidden inside the timing transaction so that both read
# ticks through the same Sort (the index plan visits the heap in random
# order; ticks are in ts order, as a stream writes them).  Reported: the
# best wall time and the best backend CPU time (utime + stime from
# /proc/<backend pid>/stat, so the server must be local) of each, and the
# ratios to the scan.  Needs psql on PATH.
set -euo pipefail
rounds=5
baseline=""
while [ $# -gt 0 ]; do
	case $1 in
		--baseline) baseline=$2; shift 2 ;;
		*) rounds=$1; shift ;;
	esac
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tck=$(getconf CLK_TCK)

# the query bodies, each one SELECT over ticks
echo "SELECT sum(price) FROM (SELECT key, ts, price, vol FROM ticks ORDER BY key, ts) s" > "$tmp/scan.q"
sed -e '/^--/d' -e 's/;[[:space:]]*$//' "$here/examples/seed_alerts.sql" |
	sed 's/^SELECT m.key, m.deadline$/SELECT count(*)/' > "$tmp/alerts.q"
names="scan alerts"
if [ -n "$baseline" ]; then
	# the devices query is a match_recognize_sql() call for \gexec: take its statement
	sed -n '/\$q\$$/,/^\$q\$)/p' "$baseline" | sed -e '1d' -e '$d' > "$tmp/base.sql.in"
	psql -X -At -c "SELECT match_recognize_sql(\$q\$$(cat "$tmp/base.sql.in")\$q\$)" > "$tmp/baseline.q"
	sed -i 's/^SELECT key, deadline FROM (/SELECT count(*) FROM (/' "$tmp/baseline.q"
	names="$names baseline"
fi

run_one() {		# name -> "wall_ms cpu_ms rows"
	local q=$1
	cat > "$tmp/run.sql" <<SQL
\\set QUIET on
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET work_mem = '64MB';
BEGIN;
SELECT indexrelid::regclass::text AS idx FROM pg_index WHERE indrelid = 'ticks'::regclass LIMIT 1 \\gset
DROP INDEX IF EXISTS :idx;
SELECT pg_backend_pid() AS pid \\gset
\\setenv MR_PID :pid
\\! cat /proc/\$MR_PID/stat > $tmp/stat0
SELECT clock_timestamp() AS t0 \\gset
\\o $tmp/out
$(cat "$tmp/$q.q");
\\o
SELECT round(extract(epoch FROM clock_timestamp() - :'t0') * 1000) AS wall \\gset
\\! cat /proc/\$MR_PID/stat > $tmp/stat1
\\echo :wall
ROLLBACK;
SQL
	local wall
	wall=$(psql -X -At -v ON_ERROR_STOP=1 -f "$tmp/run.sql" | tail -1)
	local c0 c1
	c0=$(awk '{print $14 + $15}' "$tmp/stat0")
	c1=$(awk '{print $14 + $15}' "$tmp/stat1")
	echo "$wall $(( (c1 - c0) * 1000 / tck )) $(tr -d ' ' < "$tmp/out" | tail -1)"
}

declare -A best_wall best_cpu result
for r in $(seq 1 "$rounds"); do
	for n in $names; do
		read -r w c res < <(run_one "$n")
		result[$n]=$res
		if [ -z "${best_wall[$n]:-}" ] || [ "$w" -lt "${best_wall[$n]}" ]; then best_wall[$n]=$w; fi
		if [ -z "${best_cpu[$n]:-}" ] || [ "$c" -lt "${best_cpu[$n]}" ]; then best_cpu[$n]=$c; fi
		echo "round $r: $n wall ${w} ms, cpu ${c} ms, result $res" >&2
	done
done
printf '%-9s %12s %9s %12s %9s %10s\n' query "best wall" "/ scan" "best CPU" "/ scan" result
for n in $names; do
	printf '%-9s %9d ms %9.2f %9d ms %9.2f %10s\n' "$n" "${best_wall[$n]}" \
		"$(echo "${best_wall[$n]} / ${best_wall[scan]}" | bc -l)" "${best_cpu[$n]}" \
		"$(echo "${best_cpu[$n]} / ${best_cpu[scan]}" | bc -l)" "${result[$n]}"
done

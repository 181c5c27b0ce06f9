#!/usr/bin/env bash
# The seed's alert rule as a stream (examples/seed_alerts_stream.sql), fed
# the seed's ticks while it runs; checks issue 12's "done when" for it:
#
#   bench/cep/alerts_stream.sh TICKS_CSV ALERTS_CSV
#
#   TICKS_CSV   ts,key,price,vol (gen_ticks.py --out-dir, or the seed's dump)
#   ALERTS_CSV  key,deadline: the seed program's alerts
#
# In a database of its own (BENCH_DB, default mr_alerts_stream; PG* name
# the server): creates ticks and the stream, adds written_at (the wall time
# each output row is inserted, clock_timestamp()) to its output table, then
# loads the ticks in ts order in transactions of TXN rows (30 000), one psql
# session, logging after each commit its wall time and the chunk's largest
# ts, at RATE rows/s (default 100 000: a transaction every 0.3 s; 0 = as
# fast as psql goes, which outruns the worker: the latency is then the
# stream's lag).  Then waits for the stream and reports:
#   - the output against the reference: rows, extra, missing (multisets);
#   - the latency of each alert: written_at minus the commit time of the
#     first chunk with a ts past its deadline (the watermark, lateness 0,
#     passes the deadline when that chunk is decoded): min, p50, p90, p99,
#     max, and how many exceed 1 s;
#   - the load's rate and how long the stream took after the last commit.
# Exit status 1 when the output differs or an alert is later than 1 s.
set -euo pipefail
ticks=${1:?ticks.csv}
alerts=${2:?alerts.csv}
TXN=${TXN:-30000}
RATE=${RATE:-100000}
DB=${BENCH_DB:-mr_alerts_stream}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ticks=$(realpath "$ticks")
alerts=$(realpath "$alerts")

q() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
val() { psql -X -At -v ON_ERROR_STOP=1 -d "$DB" -c "$1"; }

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
q <<SQL
SET client_min_messages = warning;
CREATE EXTENSION match_recognize;
CREATE TABLE ticks (ts bigint, key int, price bigint, vol bigint);
CREATE TABLE load_log (chunk int, max_ts bigint, committed_at timestamptz);
CREATE TABLE ref_alerts (key int, deadline bigint);
\\copy ref_alerts FROM '$alerts' CSV
SQL
q -c "SET client_min_messages = warning" -f "$here/examples/seed_alerts_stream.sql" >/dev/null
q -c "ALTER TABLE seed_alerts_out ADD COLUMN written_at timestamptz DEFAULT clock_timestamp()"
val "SELECT match_recognize_wait_stream('seed_alerts_out')" >/dev/null

# the chunks, in ts order (a stable sort keeps the file's order within a ts)
sort -t, -k1,1n -s "$ticks" | split -l "$TXN" -d -a 5 - "$tmp/chunk."
n=0
for f in "$tmp"/chunk.*; do
	echo "\\copy ticks FROM '$f' CSV"
	echo "INSERT INTO load_log VALUES ($n, $(tail -1 "$f" | cut -d, -f1), clock_timestamp());"
	n=$((n + 1))
	if [ "$RATE" != 0 ]; then
		# the next transaction starts n * TXN / RATE s after the first commit
		echo "SELECT pg_sleep(GREATEST(0, extract(epoch FROM (SELECT committed_at FROM load_log WHERE chunk = 0)
		  + interval '1 ms' * ($n * $TXN * 1000.0 / $RATE - $TXN * 1000.0 / $RATE) - clock_timestamp())));"
	fi
done > "$tmp/load.sql"
rows=$(wc -l < "$ticks")
echo "alerts_stream: $rows ticks in $n transactions of $TXN rows, at $RATE rows/s (0: unpaced)"
t0=$(date +%s.%N)
q -f "$tmp/load.sql" >/dev/null
t1=$(date +%s.%N)
val "SELECT match_recognize_wait_stream('seed_alerts_out', interval '30 minutes')" >/dev/null
t2=$(date +%s.%N)
awk -v r="$rows" -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {
	printf "  load: %.1f s, %.0f rows/s; the stream done %.2f s after the last commit\n", b - a, r / (b - a), c - b }'

val "SELECT format('  stream: state %s, rows_in %s, matches_out %s, watermark %s, timers_pending %s, rows_retained %s',
                   state, rows_in, matches_out, watermark, timers_pending, rows_retained)
     FROM match_recognize_streams WHERE name = 'public.seed_alerts_out'"
read -r out ref extra missing < <(val "SELECT (SELECT count(*) FROM seed_alerts_out), (SELECT count(*) FROM ref_alerts),
	(SELECT count(*) FROM (SELECT key, deadline FROM seed_alerts_out EXCEPT ALL SELECT key, deadline FROM ref_alerts) x),
	(SELECT count(*) FROM (SELECT key, deadline FROM ref_alerts EXCEPT ALL SELECT key, deadline FROM seed_alerts_out) x)" | tr '|' ' ')
echo "  output: $out alerts, reference $ref: $extra extra, $missing missing"
read -r cnt mn p50 p90 p99 mx late undecided < <(val "
WITH lat AS (
  SELECT o.written_at - (SELECT l.committed_at FROM load_log l WHERE l.max_ts > o.deadline
                         ORDER BY l.chunk LIMIT 1) AS d
  FROM seed_alerts_out o)
SELECT count(d),
       round(1000 * extract(epoch FROM min(d)))::int,
       round(1000 * extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY d)))::int,
       round(1000 * extract(epoch FROM percentile_cont(0.9) WITHIN GROUP (ORDER BY d)))::int,
       round(1000 * extract(epoch FROM percentile_cont(0.99) WITHIN GROUP (ORDER BY d)))::int,
       round(1000 * extract(epoch FROM max(d)))::int,
       count(*) FILTER (WHERE d > interval '1 second'),
       count(*) FILTER (WHERE d IS NULL)
FROM lat" | tr '|' ' ')
echo "  latency after the deadline's chunk committed (ms): min $mn, p50 $p50, p90 $p90, p99 $p99, max $mx over $cnt alerts; $late over 1 s; $undecided before their deadline passed"
status=0
if [ "$extra" != 0 ] || [ "$missing" != 0 ] || [ "$late" != 0 ] || [ "$undecided" != 0 ]; then
	status=1
fi
val "SELECT match_recognize_drop_stream('seed_alerts_out')" >/dev/null
exit $status

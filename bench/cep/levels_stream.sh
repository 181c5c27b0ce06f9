#!/bin/sh
# The levels stream on the CEP seed's data (issue 12, item 6): loads the
# standing queries, creates the stream of examples/seed_level_stream.sql,
# feeds the ticks in ts order in transactions of CHUNK (30 000) rows while
# the stream runs, and checks that its output equals, row for row, the
# reference fires (DIR/fires.csv when there is one: the seed program's) and
# the batch query examples/seed_level_fires.sql over the same ticks.  Then
# the same feed into a plain MATCH_RECOGNIZE stream, for its rate.
#
#   bench/cep/levels_stream.sh DB DIR      DIR: ticks.csv, price_alerts.csv [, fires.csv]
#
# DB is dropped and created again (PG* variables, psql on PATH).  One
# transaction of the feed is one \copy; after the last one a tick of a key
# without queries (key -1), later than every other, moves the watermark
# past the last ticks, so that all are released.  The rate is ticks per
# second of wall time from the first \copy until the stream has processed
# the last transaction (match_recognize_wait_stream).
set -eu
DB=$1
DIR=$2
CHUNK=${CHUNK:-30000}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

q() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
now() { date +%s.%N; }

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" -c "CREATE DATABASE \"$DB\""
q -c "CREATE EXTENSION match_recognize" \
  -c "CREATE TABLE ticks (ts bigint, key int, price bigint, vol bigint)" \
  -c "CREATE TABLE ticks_mr (ts bigint, key int, price bigint, vol bigint)" \
  -c "CREATE TABLE price_alerts (key int, qid int, level bigint)" \
  -c "\\copy price_alerts FROM '$DIR/price_alerts.csv' WITH (FORMAT csv)"
split -l "$CHUNK" -d -a 5 "$DIR/ticks.csv" "$TMP/chunk."
NT=$(cat "$DIR/ticks.csv" | wc -l)
LAST=$(tail -1 "$DIR/ticks.csv" | cut -d, -f1)

feed() {  # table
	for f in "$TMP"/chunk.*; do
		printf '%s\n' "\\copy $1 FROM '$f' WITH (FORMAT csv)"
	done > "$TMP/feed.sql"
	echo "INSERT INTO $1 VALUES ($LAST + 1, -1, 0, 0);" >> "$TMP/feed.sql"
	q -f "$TMP/feed.sql"
}

# the levels stream
q -f "$HERE/examples/seed_level_stream.sql" > /dev/null
T0=$(now)
feed ticks
T1=$(now)
q -At -c "SELECT match_recognize_wait_stream('seed_fires_out', interval '2 hours')" > /dev/null
T2=$(now)
q -At -c "SELECT 'levels stream: ' || state || coalesce(' (' || last_error || ')', '') || ', ' || rows_in || ' ticks, '
               || matches_out || ' fires, ' || late_rows || ' late' FROM match_recognize_streams WHERE name = 'public.seed_fires_out'"
LV=$(echo "$NT $T0 $T1 $T2" | awk '{printf "%.0f ticks/s (feed %.1f s, caught up %.1f s after the first commit)", $1 / ($4 - $2), $3 - $2, $4 - $2}')
echo "levels stream rate: $LV"

# the output against the batch query and the reference
q -c "CREATE TABLE batch_fires AS $(sed -e '/^--/d' -e 's/;[[:space:]]*$//' "$HERE/examples/seed_level_fires.sql")"
q -At -c "SELECT 'batch: ' || count(*) || ' fires; stream - batch: '
               || (SELECT count(*) FROM (SELECT key, qid, level, ts FROM seed_fires_out EXCEPT ALL SELECT key, qid, level, ts FROM batch_fires) x)
               || ', batch - stream: '
               || (SELECT count(*) FROM (SELECT key, qid, level, ts FROM batch_fires EXCEPT ALL SELECT key, qid, level, ts FROM seed_fires_out) x)
               || ', duplicate ids: ' || (SELECT count(*) - count(DISTINCT _match_id) FROM seed_fires_out) FROM batch_fires"
if [ -f "$DIR/fires.csv" ]; then
	q -c "CREATE TABLE ref_fires (key int, qid int, level bigint, ts bigint)" \
	  -c "\\copy ref_fires FROM '$DIR/fires.csv' WITH (FORMAT csv)"
	q -At -c "SELECT 'reference: ' || count(*) || ' fires; stream - reference: '
	               || (SELECT count(*) FROM (SELECT key, qid, level, ts FROM seed_fires_out EXCEPT ALL SELECT * FROM ref_fires) x)
	               || ', reference - stream: '
	               || (SELECT count(*) FROM (SELECT * FROM ref_fires EXCEPT ALL SELECT key, qid, level, ts FROM seed_fires_out) x)
	               FROM ref_fires"
fi
q -At -c "SELECT match_recognize_drop_stream('seed_fires_out')" > /dev/null

# a plain MATCH_RECOGNIZE stream over the same ticks: a rise of 15 cents
q -At -c "SELECT match_recognize_create_stream('mr_rises_out', \$\$ ticks_mr MATCH_RECOGNIZE (
    PARTITION BY key ORDER BY ts MEASURES A.ts AS a_ts, B.ts AS b_ts ONE ROW PER MATCH
    PATTERN (A B) DEFINE B AS B.price >= A.price + 15) \$\$, lateness => 0::bigint)" > /dev/null
q -At -c "SELECT match_recognize_wait_stream('mr_rises_out', interval '10 minutes')" > /dev/null
T0=$(now)
feed ticks_mr
T1=$(now)
q -At -c "SELECT match_recognize_wait_stream('mr_rises_out', interval '2 hours')" > /dev/null
T3=$(now)
q -At -c "SELECT 'MATCH_RECOGNIZE stream: ' || state || coalesce(' (' || last_error || ')', '') || ', ' || rows_in || ' ticks, '
               || matches_out || ' matches' FROM match_recognize_streams WHERE name = 'public.mr_rises_out'"
MR=$(echo "$NT $T0 $T1 $T3" | awk '{printf "%.0f ticks/s (feed %.1f s, caught up %.1f s after the first commit)", $1 / ($4 - $2), $3 - $2, $4 - $2}')
echo "MATCH_RECOGNIZE stream rate: $MR"
echo "$T0 $T3 $(echo "$LV" | cut -d' ' -f1)" | awk -v nt="$NT" '{printf "levels / MATCH_RECOGNIZE rate: %.2f\n", $3 / (nt / ($2 - $1))}'
q -At -c "SELECT match_recognize_drop_stream('mr_rises_out')" > /dev/null

#!/usr/bin/env bash
# tools/demo.sh -- install, build, and show MATCH_RECOGNIZE on a throwaway
# cluster: 20 000 one-minute prices for 20 symbols, then V-shaped dips found
# the three ways the extension offers (statement rewrite, view, function),
# the plan node, and a fraud-alert stream over rows as they are committed.
#
# Run as root on Debian 12 (or as a user with sudo).  Leaves nothing
# running: the cluster lives in a temporary directory and is dropped at exit.
set -euo pipefail

# shellcheck source=tools/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$MR_ROOT"

if [ "${1:-}" != --in-cluster ]; then
	mr_install_deps
	mr_build_install 0
	mr_log "demo on a throwaway cluster"
	exec pg_virtualenv "${MR_VIRTUALENV_OPTS[@]}" bash "$MR_ROOT/tools/demo.sh" --in-cluster
fi

# --- inside pg_virtualenv: PG* variables point at the throwaway cluster ----
psql -X -e -v ON_ERROR_STOP=1 --pset=pager=off -f - <<'SQL'
\echo
\echo '=== the data: ticker(symbol, ts, price), a random walk per symbol'

-- setseed makes random() repeat the same walk on every run
SELECT setseed(0.2016) \gset

CREATE TABLE ticker (
	symbol	text NOT NULL,
	ts		timestamptz NOT NULL,
	price	numeric(10, 2) NOT NULL
);

-- 20 symbols x 1000 one-minute bars: a geometric random walk from each
-- symbol's opening price, steps of at most +/-0.25 %
INSERT INTO ticker (symbol, ts, price)
SELECT symbol,
	   timestamptz '2024-03-04 14:30:00+00' + (n - 1) * interval '1 minute',
	   round((open * exp(sum(step) OVER (PARTITION BY symbol ORDER BY n)))::numeric, 2)
FROM (
	SELECT s.symbol, s.open, g.n, (random() - 0.5) * 0.005 AS step
	FROM (VALUES ('AAPL', 179.66), ('MSFT', 415.50), ('AMZN', 177.58),
				 ('GOOGL', 135.40), ('META', 497.55), ('NVDA', 852.37),
				 ('TSLA', 188.14), ('JPM', 185.12), ('V', 281.80),
				 ('JNJ', 158.66), ('WMT', 60.67), ('PG', 160.02),
				 ('XOM', 106.65), ('MA', 475.95), ('HD', 376.60),
				 ('KO', 59.93), ('PEP', 166.73), ('CVX', 152.96),
				 ('ORCL', 113.76), ('NFLX', 602.82)) AS s(symbol, open)
	CROSS JOIN generate_series(1, 1000) AS g(n)
	ORDER BY s.symbol, g.n
) AS steps;

CREATE INDEX ON ticker (symbol, ts);
ANALYZE ticker;

SELECT symbol, count(*) AS bars, min(price) AS low, max(price) AS high,
	   (array_agg(price ORDER BY ts))[1] AS open,
	   (array_agg(price ORDER BY ts DESC))[1] AS close
FROM ticker GROUP BY symbol ORDER BY symbol LIMIT 5;

CREATE EXTENSION match_recognize;

\echo
\echo '=== 1. match_recognize_sql: rewrite a statement into plain SQL, run the result (gexec)'
\echo '    (a V: a starting row, one or more falling prices, then one or more rising ones)'

SELECT match_recognize_sql($$ SELECT m.symbol, m.start_ts, m.bottom_ts, m.end_ts
  FROM ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) AS m ORDER BY m.symbol, m.start_ts LIMIT 8 $$) \gexec

\echo
\echo '=== 2. match_recognize_create_view: the same search as a view'

SELECT match_recognize_create_view('v_shapes', $$ SELECT *
  FROM ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts,
             STRT.price AS start_price, LAST(DOWN.price) AS bottom_price,
             LAST(UP.price) AS end_price
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) $$);

-- the deepest dips
SELECT symbol, start_ts, bottom_ts, end_ts, start_price, bottom_price, end_price,
	   round(100 * (start_price - bottom_price) / start_price, 2) AS drop_pct
FROM v_shapes
ORDER BY drop_pct DESC, symbol, start_ts
LIMIT 5;

\echo
\echo '=== 3. match_recognize(): the FROM item as a set-returning function'
\echo '    V shapes per symbol, and the same count through the view'

SELECT m.symbol, count(*) AS v_shapes,
	   max(m.end_ts - m.start_ts) AS longest
FROM match_recognize($$ ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
  ) $$) AS m(symbol text, start_ts timestamptz, bottom_ts timestamptz, end_ts timestamptz)
GROUP BY m.symbol
ORDER BY m.symbol;

SELECT count(*) AS v_shapes_in_view FROM v_shapes;

\echo
\echo '=== 4. the plan: a MatchRecognize node over its ordered input (the WHERE on the partition column is pushed into the input)'

EXPLAIN (COSTS OFF)
SELECT * FROM v_shapes WHERE symbol = 'AAPL';

\echo
\echo '=== 5. streaming: the same engine over rows as they are committed'
\echo '    (a login, three failures, anything, a withdrawal, within five minutes)'

-- servers that restrict output plugins must allow ours (in this database)
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
\c

CREATE TABLE payments (account text, ts timestamptz, kind text, amount numeric);
INSERT INTO payments VALUES
  ('acct-1', '2024-05-01 10:00:00+00', 'login', NULL),
  ('acct-1', '2024-05-01 10:00:20+00', 'fail', NULL);

SELECT match_recognize_create_stream(
  name     => 'fraud_alerts',
  query    => $$ SELECT * FROM payments MATCH_RECOGNIZE (
                   PARTITION BY account ORDER BY ts
                   MEASURES FIRST(login.ts) AS login_ts, LAST(w.amount) AS amount
                   PATTERN (login f{3} x*? w) WITHIN INTERVAL '5 minutes'
                   DEFINE login AS kind = 'login', f AS kind = 'fail', w AS kind = 'withdraw') $$,
  lateness => interval '10 seconds');

-- commits arrive out of event-time order; the worker orders them under the watermark
INSERT INTO payments VALUES ('acct-1', '2024-05-01 10:01:00+00', 'fail', NULL);
INSERT INTO payments VALUES ('acct-1', '2024-05-01 10:00:40+00', 'fail', NULL),
                            ('acct-2', '2024-05-01 10:00:00+00', 'login', NULL);
INSERT INTO payments VALUES ('acct-1', '2024-05-01 10:02:00+00', 'withdraw', 950.00),
                            ('acct-2', '2024-05-01 10:05:00+00', 'browse', NULL);

SELECT match_recognize_wait_stream('fraud_alerts');
SELECT account, login_ts, amount FROM fraud_alerts;
SELECT name, state, rows_in, late_rows, matches_out, rows_retained, watermark
FROM match_recognize_streams;
SELECT match_recognize_drop_stream('fraud_alerts');
SQL

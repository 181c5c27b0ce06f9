#!/usr/bin/env bash
# Run the MATCH_RECOGNIZE benchmarks (bench/README.md) side by side against the
# server the PG* variables name (the extension must be installed there):
#
#   bench/run.sh            full size: 1M and 10M rows (about 2 minutes on 2 cores)
#   bench/run.sh --small    10k and 100k rows
#
# Prints a table of ratios and writes bench/results.png (time vs rows).
# Installs python3-matplotlib with apt-get when it is missing and we are root.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# the Debian python3 has Debian's matplotlib; another python3 first on PATH may not
py=python3
if ! "$py" -c 'import matplotlib' 2>/dev/null; then
	if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null && [ "$(id -u)" = 0 ]; then
		apt-get install -y -q python3-matplotlib >/dev/null
	fi
	if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
		py=/usr/bin/python3
	else
		echo "bench: python3-matplotlib missing (apt-get install python3-matplotlib); no chart" >&2
	fi
fi
exec "$py" bench/bench.py "$@"

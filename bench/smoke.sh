#!/usr/bin/env bash
# Benchmark smoke test (tools/test_all.sh runs it inside its throwaway
# cluster): every benchmark query at a tiny size, checking results (custom
# scan = set-returning function, window-function version = ours, expected
# match counts of the pathological patterns), not times.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec python3 bench/bench.py --smoke --db mr_bench_smoke

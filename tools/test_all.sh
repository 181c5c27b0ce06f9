#!/usr/bin/env bash
# tools/test_all.sh -- install what is needed, build, run every test suite.
#
# Run as root on Debian 12 (or as a user with sudo).  Idempotent: it installs
# PostgreSQL 15 and the build tools only when missing, rebuilds from clean
# with warnings as errors, installs the extension, then runs
#
#   unit         make unitcheck (src/core standalone, ASan/UBSan)
#   layers       make check-layers: the layering rule of src/README, and
#                make check-functions: no function over 120 lines unexplained
#   fuzz         make fuzzcheck, FUZZ_SECONDS (default 15) per target
#   regress      make installcheck (sql/ + expected/)
#   stream       make check-stream (sql_tests/ on a server of its own, as the
#                non-root user mrtest)
#   conformance  test/conformance/run_conformance.py on ../shared/conformance
#   robustness   test/robustness/: random queries never crash, and the custom
#                scan returns what the function returns
#   protocol     test/protocol/extended_params.py: statement parameters through
#                the extended query protocol
#   classes      test/robustness/random_classes.py: random queries of the
#                kinds that broke before (TOAST, decorations, quoted names,
#                nullable loops, offsets), node vs automaton vs function
#   bench        bench/smoke.sh, when it exists
#   tap          make tapcheck (t/*.pl) as the non-root user mrtest
#
# regress, conformance, robustness, classes and bench share one throwaway
# cluster (pg_virtualenv) with the library preloaded and wal_level=logical;
# stream and tap start servers of their own.  A failing suite does not stop the others; the last
# line is the summary "N passed, N failed[, N skipped]" over the suites,
# and the exit status is non-zero when any suite failed.
set -euo pipefail

# shellcheck source=tools/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$MR_ROOT"

# one line per suite: "<name> <passed|failed|skipped> [note]"
record()
{
	local name=$1 status=$2 note=${3:-}
	echo "$name $status $note" >>"$MR_RESULTS"
	printf -- '--- %s: %s%s\n' "$name" "$status" "${note:+ ($note)}"
}

# a suite that hangs fails at its time limit instead of eating the whole
# CI budget (a clean run takes about 18 min in all); MR_SUITE_TIME_LIMIT
# overrides every limit
bounded()
{
	local seconds=${MR_SUITE_TIME_LIMIT:-$1}
	shift
	timeout --kill-after=60 "$seconds" "$@"
}

have_files()
{
	compgen -G "$1" >/dev/null
}

# ---------------------------------------------------------------------------
# The part that runs inside pg_virtualenv (PG* variables point at the cluster)
in_cluster()
{
	local failed=0

	mr_log "regress: make installcheck"
	if ! have_files 'sql/*.sql'; then
		record regress skipped "no sql/*.sql"
	elif make installcheck PG_CONFIG="$MR_PG_CONFIG"; then
		record regress passed
	else
		[ -f regression.diffs ] && cat regression.diffs
		record regress failed
		failed=1
	fi

	mr_log "conformance"
	local cases="$MR_ROOT/../shared/conformance/cases.jsonl"
	if [ ! -f "$cases" ]; then
		echo "conformance: skipped, $cases not found"
		record conformance skipped "no ../shared/conformance/cases.jsonl"
	elif python3 test/conformance/run_conformance.py --cases "$cases"; then
		record conformance passed
	else
		record conformance failed
		failed=1
	fi

	mr_log "robustness: test/robustness/random_queries.py"
	if python3 test/robustness/random_queries.py "${MR_ROBUSTNESS_SEED:-1}" "${MR_ROBUSTNESS_COUNT:-150}" &&
		python3 test/robustness/scan_vs_function.py "${MR_ROBUSTNESS_SEED:-1}" "${MR_ROBUSTNESS_COUNT:-150}" &&
		python3 test/robustness/scan_vs_function.py "${MR_ROBUSTNESS_SEED:-1}" "${MR_ROBUSTNESS_COUNT:-150}" dfa &&
		python3 test/robustness/scan_vs_function.py "${MR_ROBUSTNESS_SEED:-1}" "${MR_ROBUSTNESS_COUNT:-150}" memo; then
		record robustness passed
	else
		record robustness failed
		failed=1
	fi

	mr_log "protocol: test/protocol/extended_params.py"
	if python3 test/protocol/extended_params.py; then
		record protocol passed
	else
		record protocol failed
		failed=1
	fi

	mr_log "classes: test/robustness/random_classes.py"
	if python3 test/robustness/random_classes.py "${MR_ROBUSTNESS_SEED:-1}" "${MR_CLASSES_COUNT:-200}"; then
		record classes passed
	else
		record classes failed
		failed=1
	fi

	mr_log "bench: bench/smoke.sh"
	if [ ! -f bench/smoke.sh ]; then
		record bench skipped "no bench/smoke.sh"
	elif bash bench/smoke.sh; then
		record bench passed
	else
		record bench failed
		failed=1
	fi

	return $failed
}

if [ "${1:-}" = --in-cluster ]; then
	: "${MR_RESULTS:?--in-cluster is internal to tools/test_all.sh}"
	in_cluster
	exit $?
fi

# ---------------------------------------------------------------------------
# The suites that start servers of their own (initdb refuses root): as the
# user mrtest, on a copy of the tree that user owns, when we are root.
# nonroot_make SECONDS TARGET...
nonroot_dir=
nonroot_make()
{
	local seconds=$1
	shift
	if [ "$(id -u)" = 0 ]; then
		if [ -z "$nonroot_dir" ]; then
			id -u mrtest >/dev/null 2>&1 || useradd --create-home --shell /bin/bash mrtest
			nonroot_dir=$(mktemp -d /tmp/mr-nonroot.XXXXXX)
			tar -C "$MR_ROOT" --exclude=.git -cf - . | tar -C "$nonroot_dir" -xf -
			chown -R mrtest: "$nonroot_dir"
		fi
		bounded "$seconds" runuser -u mrtest -- env PATH="$MR_PG_BINDIR:$PATH" \
			make -C "$nonroot_dir" "$@" PG_CONFIG="$MR_PG_CONFIG"
	else
		nonroot_dir=$MR_ROOT
		bounded "$seconds" env PATH="$MR_PG_BINDIR:$PATH" make "$@" PG_CONFIG="$MR_PG_CONFIG"
	fi
}

run_stream()
{
	mr_log "stream: make check-stream"
	if ! have_files 'sql_tests/sql/*.sql'; then
		record stream skipped "no sql_tests/sql/*.sql"
	elif nonroot_make 1500 check-stream; then
		record stream passed
	else
		[ -f "$nonroot_dir/sql_tests/regression.diffs" ] && cat "$nonroot_dir/sql_tests/regression.diffs"
		record stream failed "output in $nonroot_dir/sql_tests"
	fi
}

run_tap()
{
	mr_log "tap: make tapcheck"
	if ! have_files 't/*.pl'; then
		record tap skipped "no t/*.pl"
		return 0
	fi
	if nonroot_make 2400 tapcheck; then
		record tap passed
	else
		local log
		for log in "$nonroot_dir"/tmp_check/log/regress_log_*; do
			[ -f "$log" ] || continue
			echo "*** $log (last 80 lines) ***"
			tail -n 80 "$log"
		done
		record tap failed "logs in $nonroot_dir/tmp_check/log"
	fi
}

summary()
{
	local passed=0 failed=0 skipped=0 name status note
	mr_log "summary"
	while read -r name status note; do
		printf '  %-12s %s%s\n' "$name" "$status" "${note:+ ($note)}"
		case $status in
			passed) passed=$((passed + 1)) ;;
			failed) failed=$((failed + 1)) ;;
			*) skipped=$((skipped + 1)) ;;
		esac
	done <"$MR_RESULTS"
	rm -f "$MR_RESULTS"
	if [ $skipped -gt 0 ]; then
		echo "$passed passed, $failed failed, $skipped skipped"
	else
		echo "$passed passed, $failed failed"
	fi
	[ $failed = 0 ]
}

MR_RESULTS=$(mktemp /tmp/mr-results.XXXXXX)
export MR_RESULTS

if ! mr_install_deps; then
	record deps failed "could not install the packages"
	summary
	exit 1
fi

built=no
if mr_build_install 1; then
	record build passed
	built=yes
else
	record build failed
fi

mr_log "unit: make unitcheck"
if ! have_files 'test/unit/test_*.c'; then
	record unit skipped "no test/unit/test_*.c"
elif make unitcheck PG_CONFIG="$MR_PG_CONFIG"; then
	record unit passed
else
	record unit failed
fi

mr_log "layers: make check-layers"
if [ $built = no ]; then
	record layers skipped "build failed"
elif make check-layers PG_CONFIG="$MR_PG_CONFIG" &&
	make check-functions PG_CONFIG="$MR_PG_CONFIG"; then
	record layers passed
else
	record layers failed
fi

mr_log "fuzz: make fuzzcheck FUZZ_SECONDS=${FUZZ_SECONDS:-15}"
if ! have_files 'test/fuzz/fuzz_*.c'; then
	record fuzz skipped "no test/fuzz/fuzz_*.c"
elif make fuzzcheck PG_CONFIG="$MR_PG_CONFIG" FUZZ_SECONDS="${FUZZ_SECONDS:-15}"; then
	record fuzz passed
else
	record fuzz failed
fi

if [ $built = yes ]; then
	mr_log "throwaway cluster: pg_virtualenv ${MR_VIRTUALENV_OPTS[*]}"
	before=$(wc -l <"$MR_RESULTS")
	rc=0
	bounded 2400 pg_virtualenv "${MR_VIRTUALENV_OPTS[@]}" bash "$MR_ROOT/tools/test_all.sh" --in-cluster || rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		record cluster failed "the suites in the throwaway cluster reached their time limit"
	elif [ "$(wc -l <"$MR_RESULTS")" = "$before" ]; then
		record cluster failed "pg_virtualenv exited $rc before running the suites"
	fi
	run_stream
	run_tap
	if [ -n "$nonroot_dir" ] && [ "$nonroot_dir" != "$MR_ROOT" ] &&
		! grep -q ' failed' "$MR_RESULTS"; then
		rm -rf "$nonroot_dir"
	fi
else
	for s in regress stream conformance robustness bench tap; do
		record $s skipped "build failed"
	done
fi

summary

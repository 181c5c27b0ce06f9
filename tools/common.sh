# shellcheck shell=bash
# tools/common.sh -- steps shared by tools/test_all.sh and tools/demo.sh.
#
# Sourced, not run.  Expects bash with `set -euo pipefail` in the caller.
# The functions return non-zero on failure explicitly, since callers test
# them in `if`, where errexit does not apply.
# Works on Debian 12 as root (CI: a fresh machine without PostgreSQL) and as
# an ordinary user with sudo, on a machine that already has everything.

MR_PG_MAJOR=15
MR_PG_BINDIR=/usr/lib/postgresql/$MR_PG_MAJOR/bin
MR_PG_CONFIG=$MR_PG_BINDIR/pg_config
MR_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Server options every throwaway cluster gets: the streaming side needs the
# library preloaded and logical decoding.
MR_VIRTUALENV_OPTS=(
	-t -v "$MR_PG_MAJOR"
	-o wal_level=logical
	-o shared_preload_libraries=match_recognize
	-o max_replication_slots=10
	-o max_worker_processes=16
)

MR_APT_PACKAGES=(
	"postgresql-$MR_PG_MAJOR"
	"postgresql-server-dev-$MR_PG_MAJOR"
	postgresql-common
	build-essential
	clang
	libclang-rt-14-dev
	python3
	libipc-run-perl
)

mr_log()
{
	printf '\n==> %s  (%s)\n' "$*" "$(date -u +%H:%M:%S)"
}

# run a command as root: directly when we are root, else through sudo
mr_as_root()
{
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		echo "error: '$*' needs root; run this script as root or install sudo" >&2
		return 1
	fi
}

# Install PostgreSQL 15 and the build/test tools unless all are present.
mr_install_deps()
{
	local missing=() p
	for p in "${MR_APT_PACKAGES[@]}"; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
			missing+=("$p")
		fi
	done
	if [ ${#missing[@]} -eq 0 ]; then
		mr_log "dependencies present (${MR_APT_PACKAGES[*]})"
		return 0
	fi

	local had_server=no
	[ -x "$MR_PG_BINDIR/postgres" ] && had_server=yes

	mr_log "installing: ${missing[*]}"
	mr_as_root apt-get update || return 1
	mr_as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y --no-install-recommends "${MR_APT_PACKAGES[@]}" || return 1

	# Debian starts a default cluster 15/main on install; the scripts use
	# throwaway clusters only, so stop the one we caused to exist.
	if [ "$had_server" = no ]; then
		mr_as_root pg_ctlcluster "$MR_PG_MAJOR" main stop 2>/dev/null || true
	fi
}

# make clean; make [WERROR=1]; make install
mr_build_install()
{
	local werror=${1:-0}
	cd "$MR_ROOT" || return 1
	mr_log "build (WERROR=$werror)"
	make -s clean PG_CONFIG="$MR_PG_CONFIG" || return 1
	make PG_CONFIG="$MR_PG_CONFIG" WERROR="$werror" || return 1
	# Remove what an earlier install left (an install script since renamed,
	# say), so the tests see exactly this tree, as on a fresh machine.
	mr_log "install"
	local sharedir pkglibdir
	sharedir=$("$MR_PG_CONFIG" --sharedir) || return 1
	pkglibdir=$("$MR_PG_CONFIG" --pkglibdir) || return 1
	mr_as_root rm -rf "$sharedir"/extension/match_recognize.control \
		"$sharedir"/extension/match_recognize--*.sql \
		"$pkglibdir"/match_recognize.so \
		"$pkglibdir"/bitcode/match_recognize \
		"$pkglibdir"/bitcode/match_recognize.index.bc || return 1
	mr_as_root make install PG_CONFIG="$MR_PG_CONFIG" || return 1
}

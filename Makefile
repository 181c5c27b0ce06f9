# Makefile for match_recognize (PGXS)
#
#   make / make install / make installcheck   the usual PGXS targets
#   make check-stream           sql_tests/ on a server of its own (as a non-root user)
#   make installcheck-stream    sql_tests/ against a preloaded wal_level=logical server
#   make tapcheck               t/*.pl TAP tests (as a non-root user)
#   make unitcheck              C unit tests of src/core, standalone, with ASan/UBSan
#   make fuzz / fuzzcheck       libFuzzer targets of src/core (FUZZ_SECONDS each)
#   make conformance            test/conformance runner against the PG* server
#   make check-layers           the layering rule of src/README, over the objects
#   make check-functions        no function over 120 lines without a stated reason
#
# WERROR=1 turns compiler warnings into errors and adds -Wextra (CI sets it).

PG_CONFIG ?= pg_config

MODULE_big = match_recognize
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c src/*/*.c)))
PGFILEDESC = "match_recognize - SQL:2016 row pattern recognition"

EXTENSION = match_recognize
DATA = $(wildcard match_recognize--*.sql)

# plain pg_regress suite: sql/*.sql with expected/*.out, in the order of
# sql/schedule (which lists every test: check-schedules)
schedule_tests = $(shell sed -n 's/^test:[[:space:]]*//p' $(1))
REGRESS := $(call schedule_tests,sql/schedule)
REGRESS_PREP = check-schedules

# one folder per layer (src/README); every header is included by its name
SRC_DIRS = core bind runtime scan sql stream
PG_CPPFLAGS = -DMR_IN_SERVER -I$(srcdir)/src $(addprefix -I$(srcdir)/src/,$(SRC_DIRS)) \
	-I$(libpq_srcdir)
# libpq: src/scan/mr_scan_remote.c sends and reads the remote parts' SQL on
# postgres_fdw's connections (as contrib modules link it)
SHLIB_LINK_INTERNAL = $(libpq)
ifeq ($(WERROR),1)
# -Wextra, less -Wunused-parameter: PostgreSQL's own headers define inline
# functions that ignore parameters (lib/ilist.h, storage/bufpage.h, ...),
# and every callback we implement (hooks, planner and executor methods,
# DestReceivers, output plugin callbacks) has parameters it does not need.
PG_CFLAGS += -Werror -Wextra -Wno-unused-parameter
endif

# pg_regress only cleans up after itself when REGRESS is non-empty
EXTRA_CLEAN = test/unit/build test/fuzz/build results/ regression.diffs \
	regression.out sql_tests/results/ sql_tests/regression.diffs \
	sql_tests/regression.out tmp_check/ tmp_check_stream/ tmp_check_stream.conf log/

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# the code uses APIs of PostgreSQL 15 that other major versions lack or
# changed (src/match_recognize.h says which)
ifneq ($(MAJORVERSION),15)
$(error match_recognize builds for PostgreSQL 15 only, and $(PG_CONFIG) is PostgreSQL $(VERSION))
endif


# PGXS tracks no header dependencies: rebuild every object when any header
# changes (a stale object with an old struct layout crashes the backend)
$(OBJS): $(wildcard src/*.h src/*/*.h)

# ---------------------------------------------------------------------------
# Schedules: a test that is in no schedule would never run, a scheduled one
# without its file fails late; both stop here.
define check_schedule
	@set -e; bad=""; \
	for f in $(basename $(notdir $(wildcard $(1)/*.sql))); do \
		grep -Eq "^test:(.*[[:space:]])?$$f([[:space:]]|$$)" $(2) || \
			bad="$$bad $(1)/$$f.sql (add 'test: $$f' to $(2))"; \
	done; \
	for t in $(call schedule_tests,$(2)); do \
		[ -f $(1)/$$t.sql ] || bad="$$bad $$t (in $(2), no $(1)/$$t.sql)"; \
	done; \
	if [ -n "$$bad" ]; then echo "check-schedules:$$bad" >&2; exit 1; fi
endef

.PHONY: check-schedules
check-schedules:
	$(call check_schedule,sql,sql/schedule)
	$(call check_schedule,sql_tests/sql,sql_tests/schedule)

# ---------------------------------------------------------------------------
# Streaming suite: sql_tests/sql/*.sql with sql_tests/expected/*.out, in the
# order of sql_tests/schedule, in a database of its own, on a server started
# with shared_preload_libraries=match_recognize and wal_level=logical.
#
#   make check-stream         starts that server itself (pg_regress
#                             --temp-instance, sql_tests/stream.conf) with the
#                             PostgreSQL of PG_CONFIG, where the extension is
#                             installed: it needs nothing else, but initdb
#                             refuses to run as root
#   make installcheck-stream  uses the server the PG* variables name, which
#                             must be configured so
STREAM_REGRESS = $(call schedule_tests,sql_tests/schedule)
STREAM_TESTDB = contrib_regression_stream
STREAM_REGRESS_OPTS = --inputdir=$(srcdir)/sql_tests --outputdir=sql_tests \
	--dbname=$(STREAM_TESTDB)

.PHONY: installcheck-stream check-stream
installcheck-stream: check-schedules
	$(pg_regress_installcheck) $(STREAM_REGRESS_OPTS) $(STREAM_REGRESS)

# A server that restricts output plugins (output_plugin_libraries, where
# PostgreSQL has it) must allow ours; a stock one has no such setting.  The
# temporary server's superuser is the user running the tests; the tests also
# name a role postgres (as a default installation has), which is then
# created.
check-stream: check-schedules
	@if [ "$$(id -u)" = 0 ]; then \
		echo "check-stream: initdb cannot run as root; run as an ordinary user (or use installcheck-stream)" >&2; \
		exit 1; \
	fi
	cp $(srcdir)/sql_tests/stream.conf tmp_check_stream.conf
	if '$(bindir)/postgres' --describe-config 2>/dev/null | grep -q '^output_plugin_libraries'; then \
		echo "output_plugin_libraries = 'pgoutput, test_decoding, match_recognize'" >> tmp_check_stream.conf; \
	fi
	$(pg_regress_installcheck) --temp-instance=./tmp_check_stream \
		--temp-config=tmp_check_stream.conf \
		$(if $(filter postgres,$(shell id -un)),,--create-role=postgres) \
		$(STREAM_REGRESS_OPTS) $(STREAM_REGRESS)

# ---------------------------------------------------------------------------
# TAP tests (t/*.pl) with PostgreSQL::Test::Cluster from the installed PGXS.
# initdb refuses to run as root, so this target must run as an ordinary user;
# tools/test_all.sh runs it as user mrtest on a copy of the tree.
.PHONY: tapcheck
tapcheck:
	@if [ "$$(id -u)" = 0 ]; then \
		echo "tapcheck: TAP tests cannot run as root (initdb refuses); run as an ordinary user" >&2; \
		exit 1; \
	fi
ifneq ($(wildcard t/*.pl),)
	$(prove_installcheck)
else
	@echo "tapcheck: no t/*.pl"
endif

# ---------------------------------------------------------------------------
# The layering rule (src/README): no layer calls or includes a higher one,
# no files of one layer call each other in a cycle; read from the objects'
# symbol tables and the sources' includes.
.PHONY: check-layers check-functions
check-layers: $(OBJS)
	python3 $(srcdir)/tools/check_layers.py $(OBJS)

# A function longer than 120 lines says why in its comment ("Long: ...").
check-functions:
	python3 $(srcdir)/tools/check_functions.py

# ---------------------------------------------------------------------------
# Unit tests: src/core/ is plain C99 (see src/core/mr_port.h), so each
# test/unit/test_*.c links against it without PostgreSQL, built without
# MR_IN_SERVER and run under AddressSanitizer and UBSan.
CORE_SRCS = $(sort $(wildcard src/core/*.c))
CORE_HDRS = $(wildcard src/core/*.h)

UNIT_SRCS = $(sort $(wildcard test/unit/test_*.c))
UNIT_BINS = $(patsubst test/unit/%.c,test/unit/build/%,$(UNIT_SRCS))
UNIT_CFLAGS = -std=c99 -Wall -Wextra -Werror -g -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer

test/unit/build/%: test/unit/%.c $(CORE_SRCS) $(CORE_HDRS) $(wildcard test/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) -Isrc/core -Itest/unit $(CORE_SRCS) $< -o $@

.PHONY: unitcheck
unitcheck: $(UNIT_BINS)
ifeq ($(UNIT_BINS),)
	@echo "unitcheck: no test/unit/test_*.c yet"
else
	@failed=""; \
	for t in $(UNIT_BINS); do \
		echo "== $$t"; \
		./$$t || failed="$$failed $$t"; \
	done; \
	if [ -n "$$failed" ]; then echo "unitcheck: FAILED:$$failed"; exit 1; fi; \
	echo "unitcheck: all $(words $(UNIT_BINS)) test programs passed"
endif

# ---------------------------------------------------------------------------
# Fuzzing: each test/fuzz/fuzz_*.c defines LLVMFuzzerTestOneInput over the
# pure code.  fuzzcheck runs each for FUZZ_SECONDS with a corpus kept in
# test/fuzz/build/corpus-<name>/, seeded from test/fuzz/corpus/<name>/ when
# that exists; crash files land in test/fuzz/build/.  The mutation seed is
# fixed (FUZZ_SEED) so that a CI failure replays with the same command;
# explore further with e.g. make fuzzcheck FUZZ_SEED=0 FUZZ_SECONDS=900
# (0: libFuzzer picks a random seed).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 20
FUZZ_SEED ?= 1
FUZZ_SRCS = $(sort $(wildcard test/fuzz/fuzz_*.c))
FUZZ_BINS = $(patsubst test/fuzz/%.c,test/fuzz/build/%,$(FUZZ_SRCS))

test/fuzz/build/%: test/fuzz/%.c $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address -Isrc/core $(CORE_SRCS) $< -o $@

.PHONY: fuzz fuzzcheck
fuzz: $(FUZZ_BINS)
ifeq ($(FUZZ_BINS),)
	@echo "fuzz: no test/fuzz/fuzz_*.c yet"
endif

fuzzcheck: fuzz
ifneq ($(FUZZ_BINS),)
	@failed=""; \
	for f in $(FUZZ_BINS); do \
		name=$$(basename $$f); \
		corpus=test/fuzz/build/corpus-$$name; \
		mkdir -p $$corpus; \
		seeds=""; [ -d test/fuzz/corpus/$$name ] && seeds=test/fuzz/corpus/$$name; \
		echo "== $$f ($(FUZZ_SECONDS)s)"; \
		if ./$$f -max_total_time=$(FUZZ_SECONDS) -seed=$(FUZZ_SEED) -print_final_stats=1 \
			-artifact_prefix=test/fuzz/build/ $$corpus $$seeds \
			> test/fuzz/build/$$name.log 2>&1; then \
			tail -n 12 test/fuzz/build/$$name.log; \
		else \
			tail -n 60 test/fuzz/build/$$name.log; failed="$$failed $$name"; \
		fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzzcheck: FAILED:$$failed"; exit 1; fi; \
	echo "fuzzcheck: all $(words $(FUZZ_BINS)) fuzz targets ran clean"
endif

# ---------------------------------------------------------------------------
# Conformance cases (../shared/conformance/cases.jsonl by default) against the
# server the PG* environment variables point to.
.PHONY: conformance
conformance:
	python3 test/conformance/run_conformance.py $(CONFORMANCE_OPTS)

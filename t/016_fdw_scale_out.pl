# Scaling out with postgres_fdw (issue 14, item 2): three clusters on
# loopback, a coordinator and two data servers, each with the extension and
# postgres_fdw.  The coordinator's table ev is partitioned by LIST on k, and
# evh by HASH on k, with a foreign partition on each data server and one
# local partition.  When PARTITION BY contains k, each foreign partition's
# clause runs on its own server (EXPLAIN: "Remote MatchRecognize on server
# ..."), and the result equals the same query over a local copy of the rows
# (exact rows, EXCEPT ALL both ways); the servers work at the same time; a
# non-superuser goes through a user mapping with a password (PostgreSQL's
# rules: no password, no connection; no mapping, no query); a remote error
# comes back with its SQLSTATE; statement parameters travel; a PARTITION BY
# without the key keeps today's plan (the rows are fetched).
# MR_TAP_EXTRA_CONF is appended to postgresql.conf (for a private install).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use TimeLimit;
use Time::HiRes qw(time);

sub new_node
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', $ENV{MR_TAP_EXTRA_CONF})
	  if $ENV{MR_TAP_EXTRA_CONF};
	return $node;
}

my $coord = new_node('coord');

# postgres_fdw comes with PostgreSQL (Debian's postgresql-15 ships it)
my $sharedir = $coord->config_data('--sharedir');
die "postgres_fdw is not installed in $sharedir/extension (this test needs it)"
  unless -f "$sharedir/extension/postgres_fdw.control";
my @data = (new_node('data1'), new_node('data2'));

# on the data servers alice must log in with her password
for my $node (@data)
{
	my $hba = $node->data_dir . '/pg_hba.conf';
	my $old = slurp_file($hba);
	open(my $fh, '>', $hba) or die "cannot write $hba: $!";
	print $fh "local all alice scram-sha-256\nlocal all carol scram-sha-256\n$old";
	close $fh;
	$node->start;
}
$coord->start;

# the rows of partition k, the same on every server
my $rows = q{SELECT k, ts, (ts * 7 + k * 3) % 10 AS v
  FROM generate_series(1, 12) k, generate_series(1, 80) ts};
my $i = 0;
for my $node (@data)
{
	$i++;
	my $m = $i;
	# on data2 the hash partition's table orders its columns differently
	# and has one more: the result row must not change
	my $evh = $i == 1 ? '(k int, ts int, v int)' : '(extra text, v int, ts int, k int)';
	$node->safe_psql('postgres', qq{
SET password_encryption = 'scram-sha-256';
CREATE EXTENSION match_recognize;
CREATE EXTENSION postgres_fdw;
CREATE ROLE alice LOGIN PASSWORD 'alice-pw';
CREATE ROLE carol LOGIN PASSWORD 'carol-pw';
CREATE SCHEMA far;
CREATE TABLE far.ev (k int, ts int, v int);
INSERT INTO far.ev SELECT * FROM ($rows) r WHERE k % 3 = $m;
CREATE TABLE far.evh $evh;
GRANT USAGE ON SCHEMA far TO alice, carol;
GRANT SELECT ON far.ev, far.evh TO alice, carol;
});
}

$coord->safe_psql('postgres', q{
CREATE EXTENSION match_recognize;
CREATE EXTENSION postgres_fdw;
CREATE ROLE alice LOGIN;
CREATE ROLE bob LOGIN;
CREATE ROLE carol LOGIN;
CREATE TABLE ev (k int, ts int, v int) PARTITION BY LIST (k);
CREATE TABLE ev_0 PARTITION OF ev FOR VALUES IN (3, 6, 9, 12);
CREATE TABLE evh (k int, ts int, v int) PARTITION BY HASH (k);
CREATE TABLE evh_0 PARTITION OF evh FOR VALUES WITH (MODULUS 3, REMAINDER 0);
});
$i = 0;
for my $node (@data)
{
	$i++;
	my ($host, $port) = ($node->host, $node->port);
	my $keys = $i == 1 ? '1, 4, 7, 10' : '2, 5, 8, 11';
	$coord->safe_psql('postgres', qq{
CREATE SERVER s$i FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '$host', port '$port', dbname 'postgres');
CREATE USER MAPPING FOR CURRENT_USER SERVER s$i;
CREATE USER MAPPING FOR alice SERVER s$i OPTIONS (user 'alice', password 'alice-pw');
CREATE USER MAPPING FOR carol SERVER s$i OPTIONS (user 'carol');
GRANT USAGE ON FOREIGN SERVER s$i TO alice, bob, carol;
CREATE FOREIGN TABLE ev_$i PARTITION OF ev FOR VALUES IN ($keys)
  SERVER s$i OPTIONS (schema_name 'far', table_name 'ev');
CREATE FOREIGN TABLE evh_$i PARTITION OF evh FOR VALUES WITH (MODULUS 3, REMAINDER $i)
  SERVER s$i OPTIONS (schema_name 'far', table_name 'evh');
});
}
# the local partition's rows, the hash partitions' rows (through the
# coordinator: tuple routing to the foreign partitions), and a local copy
$coord->safe_psql('postgres', qq{
INSERT INTO ev_0 SELECT * FROM ($rows) r WHERE k % 3 = 0;
INSERT INTO evh SELECT * FROM ($rows) r;
CREATE TABLE ev_all AS SELECT * FROM ev;
CREATE TABLE evh_all AS SELECT * FROM evh;
GRANT SELECT ON ev, evh, ev_all TO alice, carol;
});
is($coord->safe_psql('postgres', q{SELECT count(*), count(DISTINCT k) FROM ev_all}), '960|12',
	'the LIST table has every row');
is($coord->safe_psql('postgres', q{SELECT (SELECT count(*) FROM evh_1) > 0, (SELECT count(*) FROM evh_2) > 0,
  (SELECT count(*) FROM evh_0) > 0, (SELECT count(*) FROM evh_all)}), 't|t|t|960',
	'the HASH table has rows in every partition');

my $one_row = q{%s MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(A.ts) AS s, LAST(B.ts) AS e, count(*) AS n ONE ROW PER MATCH
  PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)};
my $one_cols = 'k int, s int, e int, n bigint';
my $all_rows = q{%s MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES MATCH_NUMBER() AS m, CLASSIFIER() AS c, sum(v) AS sv ALL ROWS PER MATCH
  AFTER MATCH SKIP TO NEXT ROW PATTERN (A B* C) DEFINE A AS v < 5, B AS v > PREV(v), C AS v < PREV(v))};
my $all_cols = 'k int, ts int, m bigint, c text, sv bigint, v int';

sub mr_sql
{
	my ($clause, $table, $cols) = @_;
	my $text = sprintf($clause, $table);
	return "SELECT * FROM match_recognize('$text') AS r($cols)";
}

# "rows|got-not-want|want-not-got" of the clause over $table vs its local copy
sub compare
{
	my ($node, $clause, $table, $cols, %opts) = @_;
	my $a = mr_sql($clause, $table, $cols);
	my $b = mr_sql($clause, "${table}_all", $cols);
	my ($out, $err) = ('', '');
	$node->psql('postgres', qq{SELECT (SELECT count(*) FROM ($a) x), (SELECT count(*) FROM ($b) x),
  (SELECT count(*) FROM ($a EXCEPT ALL $b) x), (SELECT count(*) FROM ($b EXCEPT ALL $a) x)},
		stdout => \$out, stderr => \$err,
		extra_params => $opts{user} ? [ '-U', $opts{user} ] : []);
	return $err ne '' ? $err : $out;
}

sub mr_explain
{
	my ($sql, %opts) = @_;
	return $coord->safe_psql('postgres', "EXPLAIN (COSTS OFF$opts{extra}) $sql");
}

# EXPLAIN: where each part runs
for my $t ('ev', 'evh')
{
	my $plan = mr_explain(mr_sql($one_row, $t, $one_cols));
	like($plan, qr/^Custom Scan \(MatchRecognizeAppend\)$/m, "$t: the append node");
	like($plan, qr/^  Remote MatchRecognize on server s1: far\.$t$/m, "$t: part on s1");
	like($plan, qr/^  Remote MatchRecognize on server s2: far\.$t$/m, "$t: part on s2");
	like($plan, qr/^  Local MatchRecognize: public\.${t}_0$/m, "$t: local part");
	like($plan, qr/^  ->  Custom Scan \(MatchRecognize\)$/m, "$t: local part is the ordinary node");
	unlike($plan, qr/Foreign Scan/, "$t: no row is fetched from the data servers");

	my $one = compare($coord, $one_row, $t, $one_cols);
	like($one, qr/^([1-9]\d*)\|\1\|0\|0$/, "$t: ONE ROW PER MATCH equals the local query ($one)");
	my $all = compare($coord, $all_rows, $t, $all_cols);
	like($all, qr/^([1-9]\d*)\|\1\|0\|0$/, "$t: ALL ROWS PER MATCH equals the local query ($all)");
}
like(mr_explain(mr_sql($one_row, 'ev', $one_cols), extra => ', VERBOSE'),
	qr/^  Remote SQL: SELECT \* FROM \@extschema\@\.match_recognize\('\(SELECT k, ts, v FROM far\.ev\) AS ev MATCH_RECOGNIZE/m,
	'VERBOSE shows the remote SQL');
my $analyzed = $coord->safe_psql('postgres',
	'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' . mr_sql($one_row, 'ev', $one_cols));
like($analyzed, qr/Remote SQL: SELECT \* FROM public\.match_recognize\('\(SELECT k, ts, v FROM far\.ev\) AS ev/,
	'ANALYZE shows the remote schema');
like($analyzed, qr/Remote Rows: \d+/, 'ANALYZE counts the remote rows');

# the servers work at the same time: each part sleeps 2 s in all (in a
# view of the data server's: pg_sleep in the clause would not be sent,
# being volatile)
for my $node (@data)
{
	$node->safe_psql('postgres', q{
CREATE VIEW far.ev_slow AS SELECT * FROM far.ev WHERE ts > 5 OR pg_sleep(0.1) IS NOT NULL;
});
}
$coord->safe_psql('postgres', q{
CREATE TABLE evr (k int, ts int, v int) PARTITION BY LIST (k);
CREATE FOREIGN TABLE evr_1 PARTITION OF evr FOR VALUES IN (1, 4, 7, 10) SERVER s1 OPTIONS (schema_name 'far', table_name 'ev_slow');
CREATE FOREIGN TABLE evr_2 PARTITION OF evr FOR VALUES IN (2, 5, 8, 11) SERVER s2 OPTIONS (schema_name 'far', table_name 'ev_slow');
});
my $sleepy = q{SELECT count(*) FROM match_recognize('evr MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A)
  DEFINE A AS ts <= 5)') AS r(k int, n bigint)};
my $t0 = time;
is($coord->safe_psql('postgres', $sleepy), '40', 'both servers answer');
my $elapsed = time - $t0;
cmp_ok($elapsed, '<', 3.4, sprintf('the servers worked concurrently (%.2f s for 2 x 2 s)', $elapsed));
like(mr_explain($sleepy), qr/Remote MatchRecognize on server s1.*Remote MatchRecognize on server s2/s,
	'the sleeping parts are remote');

# statement parameters
my $param_q = q{PREPARE q(int) AS SELECT count(*), sum(n) FROM match_recognize('%s MATCH_RECOGNIZE
  (PARTITION BY k ORDER BY ts MEASURES count(*) AS n ONE ROW PER MATCH
   PATTERN (A B+) DEFINE A AS v < $1, B AS v > $1)', $1) AS r(k int, n bigint);};
for my $p (3, 6)
{
	my $got = $coord->safe_psql('postgres', sprintf($param_q, 'ev') . " EXECUTE q($p);");
	my $want = $coord->safe_psql('postgres', sprintf($param_q, 'ev_all') . " EXECUTE q($p);");
	is($got, $want, "parameter $p: same counts as the local query ($got)");
}
like($coord->safe_psql('postgres', sprintf($param_q, 'ev')
		. ' EXPLAIN (VERBOSE, ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE q(6);'),
	qr/'6'::integer\) AS mr\(k integer, n bigint\)/, 'the parameter travels as a typed literal');

# a non-superuser with a user mapping (and a password, as postgres_fdw wants)
like(compare($coord, $one_row, 'ev', $one_cols, user => 'alice'), qr/^([1-9]\d*)\|\1\|0\|0$/,
	'alice (no right on the partitions themselves) gets the same rows');
my ($out, $err) = ('', '');
# alice's remote role may read server files, alice here may not: a clause
# must not be a way to use the remote role's rights (only what postgres_fdw
# would push down is sent; pg_read_file is volatile, so it runs here)
for my $node (@data)
{
	$node->safe_psql('postgres', q{
GRANT pg_read_server_files TO alice;
GRANT EXECUTE ON FUNCTION pg_read_file(text) TO alice;
});
}
$coord->psql('postgres', mr_sql(q{%s MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES md5(pg_catalog.pg_read_file(''PG_VERSION'')) AS f ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)},
		'ev', 'k int, f text'), stdout => \$out, stderr => \$err, extra_params => [ '-U', 'alice' ]);
like($err, qr/permission denied for function pg_read_file/,
	'a function alice may not run here is not run by her remote role');
unlike(mr_explain(mr_sql(q{%s MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES md5(pg_catalog.pg_read_file(''PG_VERSION'')) AS f ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v < 3, B AS v > 3)},
		'ev', 'k int, f text')), qr/Remote MatchRecognize/, 'a volatile function keeps the clause here');
$coord->psql('postgres', mr_sql($one_row, 'ev', $one_cols), stdout => \$out, stderr => \$err,
	extra_params => [ '-U', 'carol' ]);
like($err, qr/password is required/, 'a mapping without a password is refused for a non-superuser');
$coord->psql('postgres', mr_sql($one_row, 'ev', $one_cols), stdout => \$out, stderr => \$err,
	extra_params => [ '-U', 'bob' ]);
like($err, qr/permission denied for table ev/, 'no right on the parent: permission denied');
$coord->safe_psql('postgres', 'GRANT SELECT ON ev TO bob');
$coord->psql('postgres', mr_sql($one_row, 'ev', $one_cols), stdout => \$out, stderr => \$err,
	extra_params => [ '-U', 'bob' ]);
like($err, qr/user mapping not found for "bob"/, 'no user mapping: PostgreSQL\'s error');

# a remote error (division by zero in DEFINE on server s1) comes back
$coord->psql('postgres', q{\set VERBOSITY verbose
} . mr_sql(q{%s MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS v / (k - 4) < 3, B AS v > 3)},
		'ev', 'k int, n bigint'), stdout => \$out, stderr => \$err);
like($err, qr/ERROR:  22012: division by zero/, 'the remote error, with its SQLSTATE');
like($err, qr/remote SQL command: DECLARE mr_c\d+ NO SCROLL CURSOR FOR SELECT \* FROM public\.match_recognize/,
	'the remote SQL is the context');
like(compare($coord, $one_row, 'ev', $one_cols), qr/^([1-9]\d*)\|\1\|0\|0$/, 'the next query works');

# PARTITION BY without the partition key: today's plan
my $nokey = q{%s MATCH_RECOGNIZE (PARTITION BY v ORDER BY k, ts
  MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS ts % 2 = 0, B AS ts % 2 = 1)};
my $plan = mr_explain(mr_sql($nokey, 'ev', 'v int, n bigint'));
unlike($plan, qr/MatchRecognizeAppend|Remote MatchRecognize/, 'without the key: no remote part');
like($plan, qr/Foreign Scan on ev_1/, 'without the key: the rows are fetched');
like(compare($coord, $nokey, 'ev', 'v int, n bigint'), qr/^([1-9]\d*)\|\1\|0\|0$/,
	'without the key: the same rows');

$coord->stop;
$_->stop for @data;
done_testing();

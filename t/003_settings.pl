# Settings given before the library is loaded hold once it loads, on a
# server that does not preload the library (ALTER ROLE/DATABASE ... SET,
# PGOPTIONS, SET before the first use) and on one that does
# (postgresql.conf, ALTER SYSTEM, and the same per-session ways); and the
# hint on PostgreSQL's syntax error for a statement written with
# MATCH_RECOGNIZE, which needs the library loaded in the session.
# MR_TAP_EXTRA_CONF is appended to postgresql.conf (for a private install).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use TimeLimit;

my $node = PostgreSQL::Test::Cluster->new('settings');
$node->init;
# MR_TAP_EXTRA_CONF may preload the library: only take its search paths
if ($ENV{MR_TAP_EXTRA_CONF})
{
	my @lines = grep { !/shared_preload_libraries/ } split /\n/, $ENV{MR_TAP_EXTRA_CONF};
	$node->append_conf('postgresql.conf', join("\n", @lines));
}
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION match_recognize;
CREATE TABLE t AS SELECT g AS id, (g * 37) % 13 AS v FROM generate_series(1, 40) g;
CREATE ROLE alice LOGIN;
GRANT SELECT ON t TO alice;
});

my $plan_q = q{EXPLAIN (COSTS OFF) SELECT * FROM match_recognize('t MATCH_RECOGNIZE (ORDER BY id
  MEASURES count(*) AS n PATTERN (a b+) DEFINE b AS v > PREV(v))') AS m(n bigint)};
my $threads_q = q{SELECT * FROM match_recognize('t MATCH_RECOGNIZE (ORDER BY id MEASURES count(*) AS n
  PATTERN ((a | b)* z) DEFINE z AS count(a.*) = 100)') AS m(n bigint)};
my $states_q = q{SELECT * FROM match_recognize('t MATCH_RECOGNIZE (ORDER BY id MEASURES count(*) AS n
  PATTERN (a|b|c|d|e|f|g|h|i|j|k))') AS m(n bigint)};

# a new session runs $sql; returns (stdout, stderr)
sub session
{
	my ($sql, %opts) = @_;
	my ($out, $err) = ('', '');
	local $ENV{PGOPTIONS} = $opts{pgoptions} if defined $opts{pgoptions};
	$node->psql('postgres', $sql,
		stdout => \$out, stderr => \$err,
		extra_params => $opts{user} ? [ '-U', $opts{user} ] : []);
	return ($out, $err);
}

# every way of setting them, checked in a new session each, for the
# current server configuration ($mode names it)
sub check_settings
{
	my ($mode) = @_;
	my ($out, $err);

	$node->safe_psql('postgres', q{
ALTER ROLE alice SET match_recognize.enable_dfa = off;
ALTER DATABASE postgres SET match_recognize.max_threads = 77;
});
	($out, $err) = session("SHOW match_recognize.enable_dfa; $plan_q; SHOW match_recognize.enable_dfa;",
		user => 'alice');
	like($out, qr/Matcher: general/, "$mode: ALTER ROLE SET enable_dfa holds");
	unlike($out, qr/on$/m, "$mode: and SHOW says off");
	is($err, '', "$mode: no warning");
	($out, $err) = session("$threads_q;", user => 'alice');
	like($err, qr/exceeded match_recognize\.max_threads \(77\)/, "$mode: ALTER DATABASE SET max_threads holds");
	unlike($err, qr/WARNING/, "$mode: no warning");
	$node->safe_psql('postgres', q{
ALTER ROLE alice RESET match_recognize.enable_dfa;
ALTER DATABASE postgres RESET match_recognize.max_threads;
});

	($out, $err) = session("$plan_q; $states_q;",
		pgoptions => '-c match_recognize.enable_custom_scan=off -c match_recognize.max_pattern_states=20');
	like($out, qr/Function Scan on match_recognize/, "$mode: PGOPTIONS enable_custom_scan holds");
	like($err, qr/would exceed 20 states/, "$mode: PGOPTIONS max_pattern_states holds");
	unlike($err, qr/WARNING/, "$mode: no warning");

	($out, $err) = session("SET match_recognize.enable_custom_scan = off; SET match_recognize.max_threads = 88; $plan_q; $threads_q;");
	like($out, qr/Function Scan on match_recognize/, "$mode: SET before the first use holds");
	like($err, qr/max_threads \(88\)/, "$mode: SET max_threads before the first use holds");
	unlike($err, qr/WARNING/, "$mode: no warning");

	($out, $err) = session("SET match_recognize.enable_dfa = off; $plan_q;");
	like($out, qr/Matcher: general/, "$mode: SET enable_dfa before the first use holds");

	($out, $err) = session("$plan_q; SET match_recognize.enable_dfaa = off;");
	like($out, qr/Matcher: automaton/, "$mode: the default is on");
	like($err, qr/invalid configuration parameter name "match_recognize\.enable_dfaa"/,
		"$mode: the prefix is reserved");
}

my $direct = q{SELECT * FROM t MATCH_RECOGNIZE (ORDER BY id PATTERN (a b+) DEFINE b AS v > PREV(v)) m};
my $hint = qr/HINT:  PostgreSQL's parser does not know MATCH_RECOGNIZE\. Rewrite the statement with match_recognize_sql\(\)/;

# not preloaded
check_settings('not preloaded');
my ($out, $err) = session("$direct;");
like($err, qr/syntax error at or near "ORDER"/, 'not loaded yet: the syntax error');
unlike($err, qr/HINT/, 'not loaded yet: no hint');
($out, $err) = session("SELECT match_recognize_sql('SELECT 1'); $direct;");
like($err, $hint, 'loaded by an earlier call: the hint');
($out, $err) = session("LOAD 'match_recognize'; SELECT * FROM t WHERE;");
unlike($err, qr/HINT/, 'loaded: no hint on another syntax error');

# preloaded, with settings in postgresql.conf and ALTER SYSTEM
$node->append_conf('postgresql.conf', $ENV{MR_TAP_EXTRA_CONF}) if $ENV{MR_TAP_EXTRA_CONF};
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'match_recognize'
match_recognize.enable_dfa = off
match_recognize.max_threads = 99
});
$node->safe_psql('postgres', "LOAD 'match_recognize'; ALTER SYSTEM SET match_recognize.enable_custom_scan = off");
my $log_from = -s $node->logfile;
$node->restart;
($out, $err) = session("$plan_q; $threads_q;");
like($out, qr/Function Scan on match_recognize/, 'preloaded: ALTER SYSTEM enable_custom_scan holds');
like($err, qr/max_threads \(99\)/, 'preloaded: postgresql.conf max_threads holds');
($out, $err) = session("SET match_recognize.enable_custom_scan = on; $plan_q;");
like($out, qr/Matcher: general/, 'preloaded: postgresql.conf enable_dfa holds');
is($node->safe_psql('postgres',
	"SELECT string_agg(name || '=' || setting || '/' || source, ' ' ORDER BY name) FROM pg_settings WHERE name LIKE 'match_recognize.%'"),
	'match_recognize.enable_custom_scan=off/configuration file match_recognize.enable_dfa=off/configuration file '
	  . 'match_recognize.enable_memo=on/default match_recognize.enable_remote_append=on/default '
	  . 'match_recognize.max_pattern_states=100000/default match_recognize.max_threads=99/configuration file '
	  . 'match_recognize.stream_retry_max_delay=60/default match_recognize.stream_start_retries=5/default',
	'preloaded: pg_settings');
my $log = slurp_file($node->logfile, $log_from);
unlike($log, qr/invalid configuration parameter name "match_recognize/, 'preloaded: no setting was removed');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET match_recognize.enable_custom_scan');
$node->append_conf('postgresql.conf', qq{
match_recognize.enable_dfa = on
match_recognize.max_threads = 100000
});
$node->restart;
check_settings('preloaded');
($out, $err) = session("$direct;");
like($err, $hint, 'preloaded: the hint on the first statement');

$node->stop;
ok(slurp_file($node->logfile) !~ /terminated by signal/, 'no backend crashed');
done_testing();

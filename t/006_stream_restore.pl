# Streams survive pg_dump and pg_restore, into a fresh cluster and into
# another database of the same cluster.  The dump holds the streams'
# definitions; a restored stream comes back in state 'restored' (nothing
# runs, and the view says why); match_recognize_restore_streams() gives it
# a new slot and new internal tables and recomputes its output from the
# restored source, which equals the dumped output (no row was late).  After
# the restore, creating a stream never trips over the restored copies of
# the internal tables ("relation _mr_1_rows already exists").
#
# MR_TAP_EXTRA_CONF is appended to postgresql.conf (for a private install).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use TimeLimit;

sub new_node
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(allows_streaming => 'logical');
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'match_recognize'
max_worker_processes = 16
});
	$node->append_conf('postgresql.conf', $ENV{MR_TAP_EXTRA_CONF}) if $ENV{MR_TAP_EXTRA_CONF};
	$node->start;
	my $plugins = $node->safe_psql('postgres',
		"SELECT current_setting('output_plugin_libraries', true)");
	if ($plugins ne '' && $plugins !~ /match_recognize/)
	{
		my $list = join(', ', map { "'$_'" } (split(/\s*,\s*/, $plugins), 'match_recognize'));
		$node->safe_psql('postgres', "ALTER SYSTEM SET output_plugin_libraries = $list");
		$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
	}
	return $node;
}

my $a = new_node('restore_from');
$a->safe_psql('postgres', 'CREATE ROLE regress_rs_owner LOGIN REPLICATION');
$a->safe_psql('postgres', 'CREATE DATABASE app');
$a->safe_psql('app', q{
CREATE EXTENSION match_recognize;
GRANT CREATE ON SCHEMA public TO regress_rs_owner;
CREATE TABLE ticks (k int, ts int, v int);
GRANT SELECT ON ticks TO regress_rs_owner;
INSERT INTO ticks SELECT g % 7, g, (g * 13) % 5 FROM generate_series(1, 3000) g;
SET ROLE regress_rs_owner;
SELECT match_recognize_create_stream('ups', $$SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts MEASURES FIRST(ts) AS t0, LAST(ts) AS t1, count(*) AS n
    PATTERN (a b+ c) WITHIN 100 DEFINE a AS v = 0, b AS v > PREV(v), c AS v < PREV(v))$$,
  0, late_table => 'ups_late');
RESET ROLE;
SELECT match_recognize_create_stream('pairs', $$SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts MEASURES FIRST(ts) AS t0 ALL ROWS PER MATCH
    PATTERN (x y) WITHIN 50 DEFINE x AS v = 1, y AS v = 2)$$, 0);
});
# rows the streams decode (after the backfill), in several transactions
for my $i (0 .. 4)
{
	my $from = 3001 + $i * 400;
	my $to = $from + 399;
	$a->safe_psql('app',
		"INSERT INTO ticks SELECT g % 7, g, (g * 13) % 5 FROM generate_series($from, $to) g");
}
# a paused stream is dumped too
$a->safe_psql('app', q{
SELECT match_recognize_wait_stream('ups') AND match_recognize_wait_stream('pairs');
SELECT match_recognize_pause_stream('pairs');
});
is($a->safe_psql('app', q{SELECT string_agg(state, ',' ORDER BY name) FROM match_recognize_streams}),
	'paused,running', 'streams running and paused before the dump');
my $late = $a->safe_psql('app', 'SELECT sum(late_rows) FROM match_recognize_streams');
is($late, '0', 'no row was late');

my $q_ups = 'SELECT _match_id, t0, t1, n FROM ups ORDER BY _match_id';
my $q_pairs = 'SELECT _match_id, t0, ts, v FROM pairs ORDER BY _match_id';
my $ups = $a->safe_psql('app', $q_ups);
my $pairs = $a->safe_psql('app', $q_pairs);
ok($ups ne '' && $pairs ne '', 'the streams wrote matches');

my $dump = $a->basedir . '/app.dump';
$a->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $a->connstr('app') ], 'pg_dump');

# restore into a fresh cluster
my $b = new_node('restore_to');
$b->safe_psql('postgres', 'CREATE ROLE regress_rs_owner LOGIN REPLICATION');
$b->safe_psql('postgres', 'CREATE DATABASE app');
$b->command_ok([ 'pg_restore', '-d', $b->connstr('app'), $dump ], 'pg_restore');

is($b->safe_psql('app', q{SELECT string_agg(name || ':' || state, ',' ORDER BY name),
	bool_and(last_error LIKE '%match_recognize_restore_streams()%'), count(worker_pid)
	FROM match_recognize_streams}),
	'public.pairs:restored,public.ups:restored|t|0', 'restored streams say so, and do not run');
is($b->safe_psql('app', "SELECT count(*) FROM pg_replication_slots"), '0', 'no slot yet');

# a stream created now takes a free id, whatever the restored tables are called
$b->safe_psql('app', q{
SELECT match_recognize_create_stream('fresh', $$SELECT * FROM ticks MATCH_RECOGNIZE (
    ORDER BY ts MEASURES FIRST(ts) AS t0 PATTERN (x) WITHIN 5 DEFINE x AS v = 4 AND k = 0)$$, 0);
});
ok($b->safe_psql('app', q{SELECT match_recognize_wait_stream('fresh')}) eq 't',
	'create_stream after a restore');

is($b->safe_psql('app', 'SELECT match_recognize_restore_streams()'), '2', 'two streams restored');
$b->safe_psql('app', q{SELECT match_recognize_wait_stream('ups') AND match_recognize_wait_stream('pairs')});
is($b->safe_psql('app', q{SELECT string_agg(name || ':' || state, ',' ORDER BY name) FROM match_recognize_streams}),
	'public.fresh:running,public.pairs:running,public.ups:running', 'all running');
is($b->safe_psql('app', $q_ups), $ups, 'ups: the same output, the same match ids');
is($b->safe_psql('app', $q_pairs), $pairs, 'pairs: the same output, the same match ids');
is($b->safe_psql('app', 'SELECT match_recognize_restore_streams()'), '0', 'nothing left to restore');

# and they go on
$a->safe_psql('app', "INSERT INTO ticks SELECT g % 7, g, (g * 13) % 5 FROM generate_series(5001, 5600) g");
$b->safe_psql('app', "INSERT INTO ticks SELECT g % 7, g, (g * 13) % 5 FROM generate_series(5001, 5600) g");
$a->safe_psql('app', q{SELECT match_recognize_resume_stream('pairs')});
$a->safe_psql('app', q{SELECT match_recognize_wait_stream('ups') AND match_recognize_wait_stream('pairs')});
$b->safe_psql('app', q{SELECT match_recognize_wait_stream('ups') AND match_recognize_wait_stream('pairs')});
is($b->safe_psql('app', $q_ups), $a->safe_psql('app', $q_ups), 'ups goes on as the original');
is($b->safe_psql('app', $q_pairs), $a->safe_psql('app', $q_pairs), 'pairs goes on as the original');

# the same dump into another database of the dumped cluster
$a->safe_psql('postgres', 'CREATE DATABASE app2');
$a->command_ok([ 'pg_restore', '-d', $a->connstr('app2'), $dump ], 'pg_restore into a second database');
is($a->safe_psql('app2', 'SELECT match_recognize_restore_streams()'), '2', 'restored beside the original');
$a->safe_psql('app2', q{SELECT match_recognize_wait_stream('ups') AND match_recognize_wait_stream('pairs')});
is($a->safe_psql('app2', $q_ups), $ups, 'second database: the same output');
is($a->safe_psql('app', "SELECT count(*) FROM pg_replication_slots WHERE database = 'app'"), '2',
	'the original streams keep their slots');

my $log = slurp_file($b->logfile);
unlike($log, qr/already exists/, 'no "already exists" in the restored cluster');
unlike($log, qr/TRAP|terminated by signal/, 'no crash');

done_testing();

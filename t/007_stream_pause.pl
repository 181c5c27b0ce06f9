# A paused stream stays paused across a server restart and a crash (the
# stop mark in shared memory is gone then; the worker that the launcher
# starts finds the state 'paused', sets the mark again and exits), keeps
# its slot and so every change, and when resumed writes exactly what a
# stream that never paused writes.
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

my $node = PostgreSQL::Test::Cluster->new('stream_pause');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'match_recognize'
max_worker_processes = 16
restart_after_crash = on
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

my $q = q{SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
    MEASURES FIRST(ts) AS t0, LAST(ts) AS t1, count(*) AS n
    PATTERN (a b+ c) WITHIN 40 DEFINE a AS v = 0, b AS v > PREV(v), c AS v < PREV(v))};
$node->safe_psql('postgres', qq{
CREATE EXTENSION match_recognize;
CREATE TABLE src (k int, ts int, v int);
INSERT INTO src SELECT g % 5, g, (g * 7) % 4 FROM generate_series(1, 1000) g;
SELECT match_recognize_create_stream('paused_out', \$\$$q\$\$, 0);
SELECT match_recognize_create_stream('steady_out', \$\$$q\$\$, 0);
});
$node->safe_psql('postgres',
	q{SELECT match_recognize_wait_stream('paused_out') AND match_recognize_wait_stream('steady_out')});
$node->safe_psql('postgres', q{SELECT match_recognize_pause_stream('paused_out')});

my $state = q{SELECT state || ':' || (worker_pid IS NULL) FROM match_recognize_streams
	WHERE name = 'public.paused_out'};
my $slot_free = q{SELECT active_pid IS NULL FROM pg_replication_slots WHERE slot_name =
	(SELECT slot_name FROM match_recognize_streams WHERE name = 'public.paused_out')};
is($node->safe_psql('postgres', $state), 'paused:true', 'paused, no worker');

sub add_rows
{
	my ($from, $to) = @_;
	$node->safe_psql('postgres',
		"INSERT INTO src SELECT g % 5, g, (g * 7) % 4 FROM generate_series($from, $to) g");
}

add_rows(1001, 1500);
$node->restart;
add_rows(1501, 2000);
# the launcher starts a worker for the slot; it must leave at once
sleep(3);
is($node->safe_psql('postgres', $state), 'paused:true', 'still paused after a restart');
is($node->safe_psql('postgres', $slot_free), 't', 'its slot is not held');

# a crash (kill -9 of the postmaster's child: the server restarts) likewise
my $pid = $node->safe_psql('postgres',
	q{SELECT worker_pid FROM match_recognize_streams WHERE name = 'public.steady_out'});
kill 'KILL', $pid;
$node->poll_query_until('postgres',
	q{SELECT state = 'running' FROM match_recognize_streams WHERE name = 'public.steady_out'
	  AND worker_pid IS NOT NULL AND worker_pid <> } . $pid)
  or die 'the steady stream did not come back';
add_rows(2001, 2500);
sleep(3);
is($node->safe_psql('postgres', $state), 'paused:true', 'still paused after a crash');
is($node->safe_psql('postgres',
	q{SELECT rows_in FROM match_recognize_streams WHERE name = 'public.paused_out'}),
	'1000', 'nothing read while paused');

$node->safe_psql('postgres', q{SELECT match_recognize_resume_stream('paused_out')});
$node->safe_psql('postgres',
	q{SELECT match_recognize_wait_stream('paused_out') AND match_recognize_wait_stream('steady_out')});
is($node->safe_psql('postgres', $state), 'running:false', 'running again');
is($node->safe_psql('postgres',
	q{SELECT rows_in FROM match_recognize_streams WHERE name = 'public.paused_out'}),
	'2500', 'every row kept by the slot was read');
my $cmp = q{SELECT t0, t1, n, _match_id FROM %s ORDER BY _match_id};
is($node->safe_psql('postgres', sprintf($cmp, 'paused_out')),
	$node->safe_psql('postgres', sprintf($cmp, 'steady_out')),
	'the paused stream wrote what the steady one did');
ok($node->safe_psql('postgres', 'SELECT count(*) FROM paused_out') > 0, 'and that is not nothing');

done_testing();

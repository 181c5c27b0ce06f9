# A stream whose replication slot is missing when the server starts
# (pg_upgrade, a file-level copy restored without pg_replslot, a promoted
# standby) says so: the launcher's check marks it failed with the reason
# and the way back, in one log line, and wait_stream returns at once with
# an error instead of timing out; match_recognize_restore_streams() brings
# it back with the output of an untouched stream over the same rows.  The
# same in a second database; a stream that kept its slot runs on.
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
use Time::HiRes qw(time);
use File::Path qw(rmtree);

my $node = PostgreSQL::Test::Cluster->new('ops3_missing_slot');
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

my $query = q{SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(ts) AS t0, LAST(ts) AS t1, COUNT(*) AS n PATTERN (a b+) DEFINE a AS v = 0, b AS v > 0)};
$node->safe_psql('postgres', 'CREATE DATABASE other');
for my $db ('postgres', 'other')
{
	$node->safe_psql($db, q{
CREATE EXTENSION match_recognize;
CREATE TABLE src (k int, ts bigint, v int);
INSERT INTO src SELECT g % 3, g, g % 4 FROM generate_series(1, 60) g;
});
	for my $s ('lost', 'kept')
	{
		$node->safe_psql($db, qq{
SET client_min_messages = warning;
SELECT match_recognize_create_stream('$s', \$q\$$query\$q\$, 10::bigint);
SELECT match_recognize_wait_stream('$s');
});
	}
}
my %slot;
for my $db ('postgres', 'other')
{
	$slot{$db} = $node->safe_psql($db,
		"SELECT slot_name FROM match_recognize_streams WHERE name = 'public.lost'");
}
is($node->safe_psql('postgres', 'SELECT count(*) FROM lost'), '9', 'lost has its output before the stop');

# the server stops; the copy it comes back from has no slot for 'lost'
$node->stop;
for my $db ('postgres', 'other')
{
	rmtree($node->data_dir . "/pg_replslot/$slot{$db}");
}
my $logstart = -s $node->logfile;
$node->start;

for my $db ('postgres', 'other')
{
	ok($node->poll_query_until($db,
			"SELECT state FROM match_recognize_streams WHERE name = 'public.lost'", 'failed'),
		"$db: a stream whose slot is missing at start is failed");
	like($node->safe_psql($db, "SELECT last_error FROM match_recognize_streams WHERE name = 'public.lost'"),
		qr/^the replication slot "\Q$slot{$db}\E" of the stream did not exist when the server started .*match_recognize_restore_streams\(\) copies its source again and recomputes its output$/,
		"$db: last_error says why and what to do");
	is($node->safe_psql($db, "SELECT state, worker_pid IS NULL FROM match_recognize_streams WHERE name = 'public.lost'"),
		'failed|t', "$db: and no worker");
	$node->safe_psql($db, 'INSERT INTO src SELECT g % 3, g, g % 4 FROM generate_series(61, 90) g');
	is($node->safe_psql($db, "SELECT match_recognize_wait_stream('kept')"), 't', "$db: the stream with its slot runs on");

	my $t0 = time();
	my ($rc, $out, $err) = $node->psql($db, "SELECT match_recognize_wait_stream('lost', '30 seconds')");
	my $took = time() - $t0;
	isnt($rc, 0, "$db: wait_stream on it fails");
	like($err, qr/ERROR:  stream "lost" has no replication slot/, "$db: ... saying there is no slot");
	like($err, qr/HINT:  match_recognize_restore_streams\(\) copies its source again and recomputes its output\./,
		"$db: ... and what to do");
	ok($took < 5, "$db: ... at once (${took}s)");
}
my $log = slurp_file($node->logfile, $logstart);
my @lines = ($log =~ /WARNING:  match_recognize stream \d+ of database "(\w+)" failed: the replication slot/g);
is(join(',', sort @lines), 'other,postgres', 'one log line per stream');

# the recovery: the output comes back as an untouched stream has it
for my $db ('postgres', 'other')
{
	is($node->safe_psql($db, 'SELECT match_recognize_restore_streams()'), '1', "$db: restore_streams takes the failed stream");
	is($node->safe_psql($db, "SELECT match_recognize_wait_stream('lost')"), 't', "$db: it runs again");
	$node->safe_psql($db, 'INSERT INTO src SELECT g % 3, g, g % 4 FROM generate_series(91, 120) g');
	$node->safe_psql($db, "SELECT match_recognize_wait_stream('lost') AND match_recognize_wait_stream('kept')");
	is($node->safe_psql($db, q{SELECT state, last_error IS NULL, rows_in FROM match_recognize_streams WHERE name = 'public.lost'}),
		'running|t|120', "$db: running, every row read once");
	is($node->safe_psql($db, q{SELECT count(*) FROM lost}), '24', "$db: its output");
	is($node->safe_psql($db, q{SELECT count(*) FROM ((TABLE lost EXCEPT ALL TABLE kept) UNION ALL (TABLE kept EXCEPT ALL TABLE lost)) d}),
		'0', "$db: the same as the untouched stream's, match ids included");
}

# a restart checks again, and finds nothing to mark
$logstart = -s $node->logfile;
$node->restart;
$node->safe_psql('postgres', 'INSERT INTO src VALUES (0, 121, 0), (0, 122, 1), (0, 123, 0)');
is($node->safe_psql('postgres', "SELECT match_recognize_wait_stream('lost') AND match_recognize_wait_stream('kept')"), 't',
	'after a restart both run');
is($node->safe_psql('postgres', q{SELECT string_agg(state, ',' ORDER BY name) FROM match_recognize_streams}),
	'running,running', 'both running');
unlike(slurp_file($node->logfile, $logstart), qr/did not exist when the server started/, 'no stream marked');

$node->stop;
done_testing();

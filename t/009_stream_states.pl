# Every state of a stream says what is true, and why:
#  - a stream whose owner can no longer log in (NOLOGIN) is failed, with
#    that reason, instead of running (its worker cannot even start), and
#    starts again once the owner can log in;
#  - a stream whose slot was dropped while no worker held it is failed;
#  - the launcher comes back after it was terminated (SIGTERM), and does
#    not start a second worker for a stream whose worker still runs;
#  - an idle stream that keeps up shows no lag while another database
#    writes;
#  - with no background worker slot free, a stream says waiting (not
#    starting forever), and runs once one is free.
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

my $node = PostgreSQL::Test::Cluster->new('stream_states');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'match_recognize'
max_worker_processes = 16
match_recognize.stream_retry_max_delay = 1
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

$node->safe_psql('postgres', q{
CREATE EXTENSION match_recognize;
CREATE ROLE owner1 LOGIN REPLICATION;
GRANT CREATE ON SCHEMA public TO owner1;
CREATE TABLE src (k int, ts bigint, v int);
GRANT SELECT ON src TO owner1;
INSERT INTO src SELECT g % 3, g, g % 4 FROM generate_series(1, 30) g;
});
my $query = q{SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(ts) AS t0, COUNT(*) AS n PATTERN (a b+) DEFINE a AS v = 0, b AS v > 0)};
for my $s ('nologin', 'noslot', 'plain')
{
	$node->safe_psql('postgres', qq{
SET ROLE owner1;
SET client_min_messages = warning;
SELECT match_recognize_create_stream('$s', \$q\$$query\$q\$, 10::bigint);
SELECT match_recognize_wait_stream('$s');
});
}
sub state
{
	my ($s) = @_;
	return $node->safe_psql('postgres',
		"SELECT state || ': ' || coalesce(last_error, '') FROM match_recognize_streams WHERE name = 'public.$s'");
}
sub worker_pid
{
	my ($s) = @_;
	return $node->safe_psql('postgres', qq{
SELECT r.active_pid FROM match_recognize_stream s JOIN pg_replication_slots r USING (slot_name)
  WHERE s.name = 'public.$s'});
}

# the launcher: terminated, it comes back; the workers it started go on
# (the launcher connects to no database: find it by its title)
sub launcher_pid
{
	my ($l) = grep { /postgres: stream_states: match_recognize launcher/ } `ps -eo pid,args`;
	return $l && $l =~ /^\s*(\d+)/ ? $1 : 0;
}
my $launcher = launcher_pid();
ok($launcher, 'the launcher runs');
my $plain_pid = worker_pid('plain');
kill 'TERM', $launcher;
my $back = 0;
for (1 .. 100)
{
	my $p = launcher_pid();
	if ($p && $p != $launcher) { $back = 1; last; }
	select(undef, undef, undef, 0.1);
}
ok($back, 'the launcher comes back after SIGTERM');
sleep 3;
is(worker_pid('plain'), $plain_pid, 'the running worker stays the one that runs the stream');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'match_recognize stream'}), '3',
	'no second worker for a running stream');
$node->safe_psql('postgres', 'INSERT INTO src SELECT g % 3, g, g % 4 FROM generate_series(31, 60) g');
ok($node->poll_query_until('postgres', "SELECT match_recognize_wait_stream('plain', '5 seconds')", 't'),
	'the stream runs on');

# the slot of a stream goes while its worker is away: failed
my $noslot_slot = $node->safe_psql('postgres',
	"SELECT slot_name FROM match_recognize_stream WHERE name = 'public.noslot'");
# (paused meanwhile: a worker the launcher restarts after a kill may take
# the slot back before the drop gets it)
$node->safe_psql('postgres', qq{
SELECT match_recognize_pause_stream('noslot');
DO \$\$
BEGIN
	FOR i IN 1 .. 500 LOOP
		BEGIN
			PERFORM pg_drop_replication_slot('$noslot_slot');
			RETURN;
		EXCEPTION WHEN object_in_use THEN
			PERFORM pg_sleep(0.01);
		END;
	END LOOP;
	RAISE 'the slot stayed busy';
END \$\$;
SELECT match_recognize_resume_stream('noslot');
});
ok($node->poll_query_until('postgres',
	"SELECT state = 'failed' FROM match_recognize_streams WHERE name = 'public.noslot'"),
	'a stream whose slot went is failed');
like(state('noslot'), qr/the replication slot "\Q$noslot_slot\E" of the stream was dropped, so changes may have been missed/,
	'and says why');

# the owner cannot log in: the workers cannot start; the stream says why
$node->safe_psql('postgres', "ALTER ROLE owner1 NOLOGIN");
$node->safe_psql('postgres', q{
SELECT pg_terminate_backend(r.active_pid) FROM match_recognize_stream s
  JOIN pg_replication_slots r USING (slot_name) WHERE s.name = 'public.nologin'});
ok($node->poll_query_until('postgres',
	"SELECT state = 'failed' FROM match_recognize_streams WHERE name = 'public.nologin'"),
	'a stream whose owner cannot log in is failed');
like(state('nologin'), qr/the stream's owner "owner1" cannot log in \(NOLOGIN\), so its worker cannot run/,
	'and says why');
my $log = slurp_file($node->logfile);
like($log, qr/role "owner1" is not permitted to log in/, 'the server log has the login failures');
# ... and once it can, the stream starts again and catches up
$node->safe_psql('postgres', "ALTER ROLE owner1 LOGIN");
$node->safe_psql('postgres', 'INSERT INTO src SELECT g % 3, g, g % 4 FROM generate_series(61, 90) g');
ok($node->poll_query_until('postgres',
	"SELECT state = 'running' FROM match_recognize_streams WHERE name = 'public.nologin'"),
	'the stream runs again once its owner can log in');
ok($node->poll_query_until('postgres', "SELECT match_recognize_wait_stream('nologin', '5 seconds')", 't'),
	'and catches up');
is($node->safe_psql('postgres', q{
SELECT (SELECT count(*) FROM nologin) = (SELECT count(*) FROM plain)}), 't',
	'with the same output as a stream that never stopped');

# honest lag: another database writes all the time; the idle stream,
# which keeps up, has no lag (it was measured from its last source commit)
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', 'CREATE TABLE w (x int)');
my $writer = $node->background_psql('other');
$writer->query_until(qr/started/, q{
\echo started
DO $$ BEGIN FOR i IN 1 .. 400 LOOP INSERT INTO w SELECT generate_series(1, 2000); COMMIT; PERFORM pg_sleep(0.02); END LOOP; END $$;
});
sleep 3;
my @lags;
for (1 .. 5)
{
	push @lags, $node->safe_psql('postgres',
		"SELECT lag_bytes || '/' || lag_seconds FROM match_recognize_streams WHERE name = 'public.plain'");
	select(undef, undef, undef, 0.3);
}
is(join(' ', @lags), '0/0 0/0 0/0 0/0 0/0', 'an idle stream that keeps up has no lag while another database writes');
$writer->quit;

unlike(slurp_file($node->logfile), qr/terminated by signal/, 'no backend crashed');
$node->safe_psql('postgres', "SET ROLE owner1; SELECT match_recognize_drop_stream('$_')")
	for ('nologin', 'noslot', 'plain');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_replication_slots'), '0', 'every slot dropped');
$node->stop;

# no background worker slot free: the stream says so (waiting), and runs
# once one is free.  max_worker_processes = 2: the launcher and one worker
# (no logical replication launcher).
my $small = PostgreSQL::Test::Cluster->new('stream_small');
$small->init(allows_streaming => 'logical');
$small->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'match_recognize'
max_worker_processes = 2
max_parallel_workers = 0
max_logical_replication_workers = 0
});
$small->append_conf('postgresql.conf', $ENV{MR_TAP_EXTRA_CONF}) if $ENV{MR_TAP_EXTRA_CONF};
$small->start;
$plugins = $small->safe_psql('postgres', "SELECT current_setting('output_plugin_libraries', true)");
if ($plugins ne '' && $plugins !~ /match_recognize/)
{
	my $list = join(', ', map { "'$_'" } (split(/\s*,\s*/, $plugins), 'match_recognize'));
	$small->safe_psql('postgres', "ALTER SYSTEM SET output_plugin_libraries = $list");
	$small->safe_psql('postgres', 'SELECT pg_reload_conf()');
}
$small->safe_psql('postgres', q{
CREATE EXTENSION match_recognize;
CREATE TABLE src (k int, ts bigint, v int);
INSERT INTO src SELECT g % 3, g, g % 4 FROM generate_series(1, 30) g;
});
for my $s ('first', 'second')
{
	$small->safe_psql('postgres', qq{
SET client_min_messages = warning;
SELECT match_recognize_create_stream('$s', \$q\$$query\$q\$, 10::bigint);
});
}
ok($small->poll_query_until('postgres',
	"SELECT string_agg(state, ',' ORDER BY state) = 'running,waiting' FROM match_recognize_streams"),
	'with no worker slot free, one stream runs and the other says waiting');
like(slurp_file($small->logfile), qr/could not start the worker of match_recognize stream slot .*\n.*HINT:  Raise max_worker_processes/,
	'the log says why, with a hint');
my $first = $small->safe_psql('postgres', "SELECT name FROM match_recognize_streams WHERE state = 'running'");
$first =~ s/^public\.//;
$small->safe_psql('postgres', "SELECT match_recognize_drop_stream('$first')");
ok($small->poll_query_until('postgres',
	"SELECT state = 'running' FROM match_recognize_streams"),
	'once a worker slot is free, the waiting stream runs');
$small->stop;
done_testing();

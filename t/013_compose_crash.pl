# A two-level chain of streams across crashes: level 1 (V-shapes per key
# over src, lateness 50) and level 2 (two or more V-shapes within 400 over
# level 1's output, ordered by their end, no lateness: it follows level 1's
# output watermark).  While rows are committed in many small transactions,
# the worker of each level is killed with SIGKILL, then the postmaster.  At
# the end level 1's output must equal the batch query over src and level
# 2's the batch query over level 1's output table: nothing lost, nothing
# written twice, no row of level 1's output late at level 2.
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
use IPC::Run;
use Time::HiRes qw(usleep);

$SIG{PIPE} = 'IGNORE';

my $node = PostgreSQL::Test::Cluster->new('compose_crash');
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

my $level1 = q{SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS start_ts, LAST(ts) AS end_ts, MIN(v) AS low
      ONE ROW PER MATCH AFTER MATCH SKIP TO LAST up
      PATTERN (strt down+ up+)
      DEFINE down AS v < PREV(v), up AS v > PREV(v))};
my $level2 = q{SELECT * FROM l1 MATCH_RECOGNIZE (PARTITION BY k ORDER BY end_ts
      MEASURES FIRST(v.start_ts) AS first_start, LAST(w.end_ts) AS last_end, COUNT(*) AS n, MIN(low) AS low
      PATTERN (v w+) WITHIN 400
      DEFINE v AS true, w AS true)};

$node->safe_psql('postgres', qq{
CREATE EXTENSION match_recognize;
CREATE SEQUENCE ts_seq;
CREATE TABLE src (k int, ts bigint, v int);
INSERT INTO src SELECT (random() * 9)::int, nextval('ts_seq'), (random() * 20)::int
  FROM generate_series(1, 2000);
SET client_min_messages = warning;
SELECT match_recognize_create_stream('l1', \$q\$$level1\$q\$, lateness => 50::bigint);
});
$node->safe_psql('postgres', qq{
SET client_min_messages = warning;
SELECT match_recognize_create_stream('l2', \$q\$$level2\$q\$);
});
is($node->safe_psql('postgres', "SELECT follows FROM match_recognize_stream WHERE name = 'public.l2'"),
	't', 'level 2 follows level 1');

sub up
{
	for (1 .. 600)
	{
		return 1 if eval { $node->safe_psql('postgres', 'SELECT 1') eq '1' };
		usleep(100_000);
	}
	return 0;
}

# the pid of the worker of stream name, waiting for it to run
sub worker_pid
{
	my ($name) = @_;
	for (1 .. 600)
	{
		my $pid = eval { $node->safe_psql('postgres', qq{
SELECT a.pid FROM pg_stat_activity a JOIN match_recognize_stream s
  ON a.application_name = 'match_recognize stream ' || s.id
WHERE s.name = 'public.$name' AND a.backend_type = 'match_recognize stream'}) } // '';
		return $pid if $pid =~ /^\d+$/;
		usleep(50_000);
	}
	return undef;
}

sub kill_postmaster
{
	$node->kill9;
	for (1 .. 100)
	{
		last unless grep { /postgres: compose_crash: / } `ps -eo args`;
		usleep(100_000);
	}
	for (1 .. 60)
	{
		return 1 if $node->start(fail_ok => 1);
		$node->{_pid} = undef;
		sleep 1;
	}
	return 0;
}

sub insert_rows
{
	my ($n, $per_txn) = @_;
	$node->safe_psql('postgres', qq{
DO \$\$
BEGIN
  FOR b IN 1 .. $n / $per_txn LOOP
    INSERT INTO src SELECT (random() * 9)::int, nextval('ts_seq'), (random() * 20)::int
      FROM generate_series(1, $per_txn);
    COMMIT;
  END LOOP;
END \$\$;
});
}

# rows committed by another session while the kill happens (it may be
# cut off by it: what it committed counts, the batch query reads src)
sub start_inserter
{
	my ($out, $err) = ('', '');
	return IPC::Run::start(
		[ 'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-c', q{
DO $$
BEGIN
  FOR b IN 1 .. 100 LOOP
    INSERT INTO src SELECT (random() * 9)::int, nextval('ts_seq'), (random() * 20)::int
      FROM generate_series(1, 5);
    COMMIT;
    PERFORM pg_sleep(0.005);
  END LOOP;
END $$;} ],
		'>', \$out, '2>', \$err);
}

# kill each level's worker twice, then the postmaster twice, rows between
# and during
my @victims = ('l1', 'l2', 'l1', 'l2', 'postmaster', 'postmaster');
for my $v (@victims)
{
	insert_rows(400, 5);
	my $bg = start_inserter();
	usleep(150_000);
	if ($v eq 'postmaster')
	{
		ok(kill_postmaster(), 'postmaster killed and started again');
	}
	else
	{
		my $pid = worker_pid($v);
		ok(defined $pid, "worker of $v found");
		kill 'KILL', $pid if defined $pid;
	}
	eval { $bg->finish; };
	ok(up(), "server up after killing $v");
	insert_rows(200, 10);
}

# terminators (NULL v: no DEFINE holds) past level 2's WITHIN: a match
# can still start at them, so level 1's output watermark stops there,
# above the last window of level 2; and a sentinel key far ahead
$node->safe_psql('postgres', q{
INSERT INTO src SELECT k, (SELECT max(ts) + 1000 FROM src), NULL FROM generate_series(0, 9) k;
INSERT INTO src VALUES (-1, (SELECT max(ts) + 100000 FROM src), 0);
});
for my $s ('l1', 'l2')
{
	my $ok = 0;
	for (1 .. 10)
	{
		$ok = eval { $node->safe_psql('postgres', "SELECT match_recognize_wait_stream('$s', '60 seconds')") } // 'f';
		last if $ok eq 't';
		up();
	}
	is($ok, 't', "$s caught up");
}
is($node->safe_psql('postgres', "SELECT string_agg(state, ',' ORDER BY name) FROM match_recognize_streams"),
	'running,running', 'both streams running');

$node->safe_psql('postgres', qq{
SELECT match_recognize_create_view('b1', \$q\$$level1\$q\$);
SELECT match_recognize_create_view('b2', \$q\$$level2\$q\$);
});
for my $pair (['l1', 'b1', 'k, start_ts, end_ts, low'], ['l2', 'b2', 'k, first_start, last_end, n, low'])
{
	my ($s, $b, $cols) = @$pair;
	my $r = $node->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM $s WHERE k >= 0) || '|' ||
       (SELECT count(*) FROM $b WHERE k >= 0) || '|' ||
       (SELECT count(*) FROM (SELECT $cols FROM $b WHERE k >= 0 EXCEPT ALL SELECT $cols FROM $s) x) || '|' ||
       (SELECT count(*) FROM (SELECT $cols FROM $s WHERE k >= 0 EXCEPT ALL SELECT $cols FROM $b) x) || '|' ||
       (SELECT count(*) - count(DISTINCT _match_id) FROM $s)});
	my ($n_stream, $n_batch, $lost, $extra, $dups) = split /\|/, $r;
	note "$s: stream $n_stream, batch $n_batch";
	ok($n_batch > 0, "$s: the batch query has rows");
	is($lost, 0, "$s: no row lost");
	is($extra, 0, "$s: no row extra");
	is($dups, 0, "$s: no match written twice");
}
is($node->safe_psql('postgres', "SELECT late_rows FROM match_recognize_streams WHERE name = 'public.l2'"),
	'0', 'no row of level 1 late at level 2');

$node->stop;
done_testing();

# Levels streams, exactly once across crashes: ticks committed out of
# event-time order in many small transactions, with standing queries
# inserted and deleted between them, while the stream's worker is killed
# (SIGKILL: the server restarts every backend) and the postmaster is killed
# (kill -9), with transactions in flight.  At the end a tick far ahead
# releases every tick, and the output must equal a simulation of the
# stream's rule over what the tables hold: the feed is one session, so its
# transactions commit in the order of their numbers (a sequence); each one
# applies its query changes (logged in qlog in the same transaction), then
# its ticks wait for the watermark (largest ts - 20) and are released in
# (ts, arrival) order, each one step of its key's standing queries (UP,
# band 5).  Nothing lost, nothing written twice.
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

my $node = PostgreSQL::Test::Cluster->new('lstream_crash');
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

$node->safe_psql('postgres', q{
CREATE EXTENSION match_recognize;
CREATE SEQUENCE arrival;
CREATE SEQUENCE txn;
CREATE SEQUENCE qids;
CREATE TABLE ticks (txn bigint, arrival bigint, key int, ts bigint, price int);
CREATE TABLE q (key int, qid bigint, level int);
ALTER TABLE q REPLICA IDENTITY FULL;
CREATE TABLE qlog (id bigserial, txn bigint, op text, key int, qid bigint, level int);
WITH n AS (INSERT INTO q SELECT k, nextval('qids'), (random() * 100)::int
           FROM generate_series(0, 4) k, generate_series(1, 8) RETURNING *)
INSERT INTO qlog (txn, op, key, qid, level) SELECT 0, 'I', key, qid, level FROM n;
SELECT match_recognize_create_stream('lout', $q$ ticks MATCH_LEVELS (PARTITION BY key ORDER BY ts VALUE price
  QUERIES q (ID qid, LEVEL level) CROSSING UP BAND 5) $q$, lateness => 20::bigint);
});

sub up
{
	for (1 .. 600)
	{
		return 1 if eval { $node->safe_psql('postgres', 'SELECT 1') eq '1' };
		usleep(100_000);
	}
	return 0;
}

sub worker_pids
{
	my $out = eval { $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'match_recognize stream'") } // '';
	return grep { /\d/ } split /\n/, $out;
}

sub wait_workers
{
	for (1 .. 600)
	{
		my @p = worker_pids();
		return @p if @p >= 1;
		usleep(50_000);
	}
	return ();
}

sub kill_postmaster
{
	$node->kill9;
	for (1 .. 100)
	{
		last unless grep { /postgres: lstream_crash: / } `ps -eo args`;
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

# a psql in the background: n ticks, a tick's time 20 * its arrival number
# minus up to 15 (out of order, never late), transactions of 1 to 4 ticks,
# and now and then a standing query inserted or deleted (logged in qlog)
sub start_feed
{
	my ($n) = @_;
	my ($in, $out, $err) = ('', '', '');
	$in = qq{
DO \$\$
DECLARE
  j bigint;
  t bigint := nextval('txn');
  k int;
BEGIN
  FOR i IN 1 .. $n LOOP
    j := nextval('arrival');
    INSERT INTO ticks VALUES (t, j, (random() * 4)::int, 20 * j - (random() * 15)::int, (random() * 100)::int);
    IF random() < 0.08 THEN
      k := (random() * 4)::int;
      IF random() < 0.5 THEN
        WITH n AS (INSERT INTO q VALUES (k, nextval('qids'), (random() * 100)::int) RETURNING *)
        INSERT INTO qlog (txn, op, key, qid, level) SELECT t, 'I', key, qid, level FROM n;
      ELSE
        WITH d AS (DELETE FROM q WHERE qid = (SELECT min(qid) + (random() * (max(qid) - min(qid)))::bigint FROM q WHERE key = k)
                   RETURNING *)
        INSERT INTO qlog (txn, op, key, qid, level) SELECT t, 'D', key, qid, level FROM d;
      END IF;
    END IF;
    IF random() < 0.4 THEN
      COMMIT;
      t := nextval('txn');
    END IF;
  END LOOP;
  COMMIT;
END \$\$;
\\q
};
	my $h = IPC::Run::start([ 'psql', '-X', '-q', '-d', $node->connstr('postgres') ],
		\$in, \$out, \$err);
	$h->pump while length $in;
	return $h;
}

# the backfill (of an empty input) first: a transaction committed before
# its snapshot would be part of the copy, not applied one at a time as the
# simulation below does
ok($node->poll_query_until('postgres', "SELECT match_recognize_wait_stream('lout', '5 seconds')", 't'),
	'the stream backfilled');

my $kills = 0;
for my $round (1 .. 6)
{
	my @p = wait_workers();
	my $h = start_feed(2000);
	usleep(200_000 + int(rand(800_000)));
	if ($round % 3 == 0)
	{
		ok(kill_postmaster(), "round $round: the server starts again after kill -9 of the postmaster");
		$h->kill_kill;
	}
	else
	{
		kill 'KILL', $p[0] if @p;
		$h->finish;
		up();
		start_feed(500)->finish;
	}
	$kills++;
}

# kills while the worker applies a large query change: one transaction
# replaces half the standing queries (logged) between ticks, and the
# worker, or the postmaster, is killed right after its commit
for my $how ('worker', 'postmaster')
{
	my @p = wait_workers();
	$node->safe_psql('postgres', q{
DO $$
DECLARE
  t bigint := nextval('txn');
BEGIN
  INSERT INTO ticks SELECT t, nextval('arrival'), j % 5, 20 * currval('arrival'), (random() * 100)::int
    FROM generate_series(1, 200) j;
  WITH d AS (DELETE FROM q WHERE qid % 2 = 0 RETURNING *)
  INSERT INTO qlog (txn, op, key, qid, level) SELECT t, 'D', key, qid, level FROM d;
  WITH n AS (INSERT INTO q SELECT k, nextval('qids'), (random() * 100)::int
             FROM generate_series(0, 4) k, generate_series(1, 6) RETURNING *)
  INSERT INTO qlog (txn, op, key, qid, level) SELECT t, 'I', key, qid, level FROM n;
  INSERT INTO ticks SELECT t, nextval('arrival'), j % 5, 20 * currval('arrival'), (random() * 100)::int
    FROM generate_series(1, 200) j;
END $$;
});
	if ($how eq 'worker')
	{
		kill 'KILL', $p[0] if @p;
		up();
	}
	else
	{
		ok(kill_postmaster(), 'the server starts again after kill -9 of the postmaster during a query change');
	}
	start_feed(300)->finish;
	$kills++;
}
note "$kills kills";

# a tick far ahead, of a key without queries, releases every tick
wait_workers();
$node->safe_psql('postgres', "INSERT INTO ticks VALUES (nextval('txn'), nextval('arrival'), 99, 1000000000, 0)");
ok($node->poll_query_until('postgres', "SELECT match_recognize_wait_stream('lout', '5 seconds')", 't'),
	'the stream caught up');

# the simulation: transactions in order, query changes first, then the
# ticks through the watermark
my %changes;
for my $l (split /\n/, $node->safe_psql('postgres', 'SELECT txn, op, key, qid, level FROM qlog ORDER BY txn, id'))
{
	my ($t, @c) = split /\|/, $l;
	push @{ $changes{$t} }, \@c;
}
my %rows;
for my $l (split /\n/, $node->safe_psql('postgres', 'SELECT txn, arrival, key, ts, price FROM ticks ORDER BY txn, arrival'))
{
	my ($t, @r) = split /\|/, $l;
	push @{ $rows{$t} }, \@r;
}
my (%queries, %prev, %nrows, %expected, @pending);
my ($max, $wm);
my %txns = map { $_ => 1 } (keys %changes, keys %rows);
for my $t (sort { $a <=> $b } keys %txns)
{
	for my $c (@{ $changes{$t} // [] })
	{
		my ($op, $key, $qid, $level) = @$c;
		if ($op eq 'I')
		{
			push @{ $queries{$key} }, { qid => $qid, level => $level, armed => 1 };
		}
		else
		{
			my $list = $queries{$key} // [];
			my ($i) = grep { $list->[$_]{qid} == $qid && $list->[$_]{level} == $level } 0 .. $#$list;
			splice(@$list, $i, 1) if defined $i;
		}
	}
	for my $r (@{ $rows{$t} // [] })
	{
		push @pending, $r;
		$max = $r->[2] if !defined $max || $r->[2] > $max;
	}
	next unless defined $max;
	$wm = $max - 20 if !defined $wm || $max - 20 > $wm;
	@pending = sort { $a->[2] <=> $b->[2] || $a->[0] <=> $b->[0] } @pending;
	while (@pending && $pending[0][2] < $wm)
	{
		my ($arrival, $key, $ts, $v) = @{ shift @pending };
		my $n = ++$nrows{$key};
		my $p = $prev{$key};
		$prev{$key} = $v;
		next unless defined $p;
		for my $q (@{ $queries{$key} // [] })
		{
			if ($v > $p && $q->{armed} && $p < $q->{level} && $q->{level} <= $v)
			{
				$expected{"$key:$q->{qid}:$n"} = 1;
				$q->{armed} = 0;
			}
			elsif ($v < $p && !$q->{armed} && $v <= $q->{level} - 5)
			{
				$q->{armed} = 1;
			}
		}
	}
}

my ($state, $late) = split /\|/, $node->safe_psql('postgres',
	"SELECT state || ' ' || coalesce(last_error, ''), late_rows FROM match_recognize_streams WHERE name = 'public.lout'");
like($state, qr/^running/, 'the stream is running');
is($late, '0', 'no tick was late');
my @got = split /\n/, $node->safe_psql('postgres', 'SELECT _match_id FROM lout');
my %got = map { $_ => 1 } @got;
note 'ticks: ' . $node->safe_psql('postgres', 'SELECT count(*) FROM ticks')
  . ', query changes: ' . $node->safe_psql('postgres', 'SELECT count(*) FROM qlog')
  . ', fires: ' . scalar(@got) . ', expected: ' . scalar(keys %expected);
ok(@got > 100, 'the stream fired');
is(scalar(@got), scalar(keys %got), 'no fire written twice');
is(scalar(grep { !$got{$_} } keys %expected), 0, 'no fire lost');
is(scalar(grep { !$expected{$_} } keys %got), 0, 'no fire invented');
ok($node->safe_psql('postgres', "SELECT count(*) FROM qlog WHERE op = 'D' AND txn > 0") > 0,
	'queries were deleted while the stream ran');

$node->safe_psql('postgres', "SELECT match_recognize_drop_stream('lout')");
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_replication_slots"), '0',
	'no replication slot left');

$node->stop;
done_testing();

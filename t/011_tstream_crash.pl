# Exactly once and batch = stream for time in patterns across crashes:
# streams with an absence decided by the watermark (`a -> NOT b`) and with
# timeout rows (ONE and ALL ROWS PER MATCH) run while several sessions
# commit rows out of event-time order in small transactions (their ts come
# from one sequence, the commits interleave; lateness absorbs it), and the
# workers are killed with SIGKILL (the postmaster then restarts every
# backend) and the postmaster itself is killed and started again.  At the
# end each output table must equal the batch query over the same rows
# (minus those the stream found late), whose clock (CLOCK MAX, the
# sentinel's ts) has passed every deadline, as the stream's watermark has:
# nothing lost, nothing written twice, the same _match_ids never twice.
#
# Size: MR_TAP_ROWS rows (default 60000).  MR_TAP_EXTRA_CONF is appended to
# postgresql.conf (for a private install).
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

# a psql that loses its server mid-write must not end the test
$SIG{PIPE} = 'IGNORE';

my $rows = $ENV{MR_TAP_ROWS} || 60000;
my $sessions = 4;
my $per_txn = 50;
my $txns = int($rows / ($sessions * $per_txn));

my $node = PostgreSQL::Test::Cluster->new('tstream_crash');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'match_recognize'
max_worker_processes = 16
restart_after_crash = on
});
$node->append_conf('postgresql.conf', $ENV{MR_TAP_EXTRA_CONF}) if $ENV{MR_TAP_EXTRA_CONF};
$node->start;

# servers that restrict logical decoding output plugins must allow ours
my $plugins = $node->safe_psql('postgres',
	"SELECT current_setting('output_plugin_libraries', true)");
if ($plugins ne '' && $plugins !~ /match_recognize/)
{
	my $list = join(', ', map { "'$_'" } (split(/\s*,\s*/, $plugins), 'match_recognize'));
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET output_plugin_libraries = $list");
	$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
}

$node->safe_psql('postgres', q{
CREATE EXTENSION match_recognize;
CREATE SEQUENCE ts_seq;
CREATE TABLE src (k int, ts bigint, v int);
INSERT INTO src SELECT (random() * 49)::int, nextval('ts_seq'), (random() * 9)::int
  FROM generate_series(1, 2000);
});
# an absence at the end: a 0 with no 9 of its key within 300
$node->safe_psql('postgres', q{
SELECT match_recognize_create_stream('out_abs',
  $$SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES a.ts AS t0, MATCH_DEADLINE() AS dl
      PATTERN (a -> NOT b) WITHIN 300 FROM a TO b
      DEFINE a AS v = 0, b AS v = 9)$$,
  lateness => 5000::bigint, late_table => 'src_late_abs');
});
# timeout rows, ONE ROW: a 0, then the first 9 within 200, or a timeout row
$node->safe_psql('postgres', q{
SELECT match_recognize_create_stream('out_one',
  $$SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES a.ts AS t0, c.ts AS t1, TIMED_OUT() AS t_o, MATCH_DEADLINE() AS dl
      ONE ROW PER MATCH WITH TIMEOUT ROWS
      PATTERN (a -> c) WITHIN 200 FROM a TO c
      DEFINE a AS v = 0, c AS v = 9)$$,
  lateness => 5000::bigint, late_table => 'src_late_one');
});
# timeout rows, ALL ROWS: a 0, rising values, then a 9 within 100
$node->safe_psql('postgres', q{
SELECT match_recognize_create_stream('out_all',
  $$SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES CLASSIFIER() AS cls, TIMED_OUT() AS t_o, MATCH_DEADLINE() AS dl
      ALL ROWS PER MATCH WITH TIMEOUT ROWS
      PATTERN (a b* c) WITHIN 100 FROM a TO c
      DEFINE a AS v = 0, b AS v BETWEEN 1 AND 8 AND v >= PREV(v), c AS v = 9)$$,
  lateness => 5000::bigint, late_table => 'src_late_all');
});
my @streams = ('abs', 'one', 'all');

# the inserting sessions: one psql per transaction, so that a crash only
# loses the transaction in flight (it was never committed)
my $connstr = $node->connstr('postgres');
my @inserters;
for my $s (1 .. $sessions)
{
	# a transaction whose psql failed is tried again (it may have committed
	# before the connection was lost: then it is in twice, which is fine,
	# the comparison is against whatever the source holds)
	my $script = qq{
done=0
while [ \$done -lt $txns ]; do
  if psql -X -q -d "$connstr" -c "INSERT INTO src SELECT (random() * 49)::int, nextval('ts_seq'), (random() * 9)::int FROM generate_series(1, $per_txn)" >/dev/null 2>&1
  then done=\$((done + 1)); else sleep 0.2; fi
done
};
	push @inserters, IPC::Run::start([ 'bash', '-c', $script ]);
}

sub worker_pids
{
	my $out = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'match_recognize stream'");
	return grep { /\d/ } split /\n/, $out;
}

sub wait_for_workers
{
	for (1 .. 300)
	{
		my @p = eval { worker_pids() };
		return @p if @p >= 3;
		usleep(100_000);
	}
	return ();
}

# kill something every 0.5-2 s while the sessions insert (at least six
# times); every third kill is the postmaster
sub wait_for_server
{
	for (1 .. 600)
	{
		my $up = eval { $node->safe_psql('postgres', 'SELECT 1') eq '1' };
		return 1 if $up;
		usleep(100_000);
	}
	return 0;
}

my $kills = 0;
my $restarts = 0;
my $round = 0;
while ($round < 6 || grep { $_->pumpable } @inserters)
{
	$round++;
	usleep(500_000 + int(rand(1_500_000)));
	if ($round % 3 == 0)
	{
		# the postmaster
		$node->kill9;
		# the old backends leave when they notice; until then the shared
		# memory is in use and a new postmaster refuses to start
		for (1 .. 100)
		{
			last unless grep { /postgres: tstream_crash: / } `ps -eo args`;
			usleep(100_000);
		}
		my $started = 0;
		for (1 .. 60)
		{
			if ($node->start(fail_ok => 1)) { $started = 1; last; }
			$node->{_pid} = undef;
			sleep 1;
		}
		ok($started, "server started again after kill -9 of the postmaster ($round)");
		$restarts++;
	}
	else
	{
		my @p = wait_for_workers();
		if (@p)
		{
			my $victim = $p[ int(rand(@p)) ];
			kill 'KILL', $victim;
			$kills++;
			# the postmaster restarts every backend; wait until it accepts again
			wait_for_server();
		}
	}
}
note "killed $kills workers, restarted the postmaster $restarts times";

$_->finish for @inserters;
wait_for_workers();

# a sentinel moves the watermark past every deadline
$node->safe_psql('postgres', q{INSERT INTO src VALUES (-1, 1000000000, 5)});
for my $s (@streams)
{
	my $ok = $node->poll_query_until('postgres',
		"SELECT match_recognize_wait_stream('out_$s', '5 seconds')", 't');
	ok($ok, "out_$s caught up");
}

my $total = $node->safe_psql('postgres', 'SELECT count(*) FROM src');
note "source rows: $total";
ok($total >= $rows, "all rows were inserted ($total)");

for my $s (@streams)
{
	my $state = $node->safe_psql('postgres',
		"SELECT state || ' ' || coalesce(last_error, '') || ' matches ' || matches_out || ' timeouts ' || coalesce(timeouts_out, 0) FROM match_recognize_streams WHERE name = 'public.out_$s'");
	note "out_$s: $state";
	my $query = $node->safe_psql('postgres',
		"SELECT query FROM match_recognize_stream WHERE name = 'public.out_$s'");
	# the batch side reads the same rows minus those the stream found late
	$query =~ s/FROM src MATCH_RECOGNIZE/FROM (SELECT * FROM src EXCEPT ALL SELECT k, ts, v FROM src_late_$s) src MATCH_RECOGNIZE/;
	$node->safe_psql('postgres', "SELECT match_recognize_create_view('batch_$s', \$q\$$query\$q\$)");
	my $cols = $node->safe_psql('postgres',
		"SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'batch_$s'::regclass AND attnum > 0");
	my ($n_stream, $n_batch, $lost, $extra, $late, $timeouts, $ids) = split /\|/, $node->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM out_$s WHERE k >= 0),
       (SELECT count(*) FROM batch_$s WHERE k >= 0),
       (SELECT count(*) FROM (SELECT $cols FROM batch_$s WHERE k >= 0 EXCEPT ALL SELECT $cols FROM out_$s) x),
       (SELECT count(*) FROM (SELECT $cols FROM out_$s WHERE k >= 0 EXCEPT ALL SELECT $cols FROM batch_$s) x),
       (SELECT count(*) FROM src_late_$s),
       (SELECT count(*) FROM out_$s WHERE _match_id LIKE '%:t%'),
       (SELECT count(DISTINCT _match_id) FROM out_$s)});
	note "out_$s: stream $n_stream rows ($timeouts timeout rows), batch $n_batch rows, late $late";
	ok($n_stream > 0, "out_$s has output");
	ok($s eq 'abs' || $timeouts > 0, "out_$s has timeout rows");
	is($lost, '0', "out_$s: no row lost");
	is($extra, '0', "out_$s: no row duplicated or invented");
	is($n_stream, $n_batch, "out_$s: same number of rows as batch");
	is($ids, $n_stream, "out_$s: every _match_id once");
}

# dropping the streams removes their slots (a leaked slot retains WAL)
$node->safe_psql('postgres', "SELECT match_recognize_drop_stream('out_$_')") for @streams;
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_replication_slots"), '0',
	'no replication slot left');

$node->stop;
done_testing();

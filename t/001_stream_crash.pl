# Exactly once across crashes: several sessions insert rows while the stream
# workers are killed with SIGKILL (which makes the postmaster restart every
# backend) and the postmaster itself is killed and started again.  At the
# end each stream's output table must equal the batch query over the same
# rows: nothing lost, nothing written twice.
#
# Size: MR_TAP_ROWS rows (default 100000; the issue asks for 1M, which takes
# several minutes here -- set MR_TAP_ROWS=1000000 to run that).
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

# a psql that loses its server mid-write must not end the test
$SIG{PIPE} = 'IGNORE';

my $rows = $ENV{MR_TAP_ROWS} || 100000;
my $sessions = 4;
my $per_txn = 100;
my $txns = int($rows / ($sessions * $per_txn));

my $node = PostgreSQL::Test::Cluster->new('stream_crash');
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
$node->safe_psql('postgres', q{
SELECT match_recognize_create_stream('out_one',
  $$SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, LAST(ts) AS t1, COUNT(*) AS n, SUM(v) AS s
      PATTERN (a b+ c) WITHIN 400
      DEFINE a AS v = 0, b AS v BETWEEN 1 AND 8, c AS v = 9)$$,
  lateness => 5000::bigint, late_table => 'src_late_one');
});
$node->safe_psql('postgres', q{
SELECT match_recognize_create_stream('out_all',
  $$SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES CLASSIFIER() AS cls, MATCH_NUMBER() AS mn, RUNNING COUNT(*) AS n
      ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW
      PATTERN (x y+) DEFINE x AS v < 3, y AS v > PREV(v))$$,
  lateness => 5000::bigint, late_table => 'src_late_all');
});

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
		return @p if @p >= 2;
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
			last unless grep { /postgres: stream_crash: / } `ps -eo args`;
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

# terminators: a NULL v satisfies no DEFINE and decides what the end of a
# partition decides in batch; then a sentinel moves the watermark past all
$node->safe_psql('postgres', q{
INSERT INTO src SELECT k, nextval('ts_seq'), NULL FROM generate_series(0, 49) k;
INSERT INTO src VALUES (-1, 1000000000, 0);
});
for my $s ('out_one', 'out_all')
{
	my $ok = $node->poll_query_until('postgres',
		"SELECT match_recognize_wait_stream('$s', '5 seconds')", 't');
	ok($ok, "$s caught up");
}

my $total = $node->safe_psql('postgres', 'SELECT count(*) FROM src');
note "source rows: $total";
ok($total >= $rows, "all rows were inserted ($total)");

for my $s ('one', 'all')
{
	my $state = $node->safe_psql('postgres',
		"SELECT state || ' ' || coalesce(last_error, '') FROM match_recognize_streams WHERE name = 'public.out_$s'");
	note "out_$s: $state";
	my $query = $node->safe_psql('postgres',
		"SELECT query FROM match_recognize_stream WHERE name = 'public.out_$s'");
	# the batch side reads the same rows minus those the stream found late
	$query =~ s/FROM src MATCH_RECOGNIZE/FROM (SELECT * FROM src EXCEPT ALL SELECT k, ts, v FROM src_late_$s) src MATCH_RECOGNIZE/;
	$node->safe_psql('postgres', "SELECT match_recognize_create_view('batch_$s', \$q\$$query\$q\$)");
	my $cols = $node->safe_psql('postgres',
		"SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'batch_$s'::regclass AND attnum > 0");
	my ($n_stream, $n_batch, $lost, $extra, $late) = split /\|/, $node->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM out_$s WHERE k >= 0),
       (SELECT count(*) FROM batch_$s WHERE k >= 0),
       (SELECT count(*) FROM (SELECT $cols FROM batch_$s WHERE k >= 0 EXCEPT ALL SELECT $cols FROM out_$s) x),
       (SELECT count(*) FROM (SELECT $cols FROM out_$s WHERE k >= 0 EXCEPT ALL SELECT $cols FROM batch_$s) x),
       (SELECT count(*) FROM src_late_$s)});
	note "out_$s: stream $n_stream rows, batch $n_batch rows, late $late";
	ok($n_stream > 0, "out_$s has matches");
	is($lost, '0', "out_$s: no match lost");
	is($extra, '0', "out_$s: no match duplicated or invented");
	is($n_stream, $n_batch, "out_$s: same number of rows as batch");
}

# dropping the streams removes their slots (a leaked slot retains WAL)
$node->safe_psql('postgres', "SELECT match_recognize_drop_stream('out_one')");
$node->safe_psql('postgres', "SELECT match_recognize_drop_stream('out_all')");
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_replication_slots"), '0',
	'no replication slot left');

$node->stop;
done_testing();

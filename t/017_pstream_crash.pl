# Streams with workers => 3 (their partitions matched by two lanes the
# stream's worker feeds, several rounds of ops in flight at each,
# src/stream/mr_stream_lanes.c) across kills during a catch-up: kill -9 of
# a lane, of the worker (the decoder), of the
# postmaster, and SIGTERM of a lane (the worker stops with it and starts
# again, the server stays up).  At the end each output table must equal
# the batch query over the source (no match lost, none written twice) and,
# _match_id included, the output of the same stream with workers => 1.
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
use Time::HiRes qw(usleep);

$SIG{PIPE} = 'IGNORE';

my $node = PostgreSQL::Test::Cluster->new('pstream_crash');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'match_recognize'
max_worker_processes = 16
restart_after_crash = on
# every kill -9 restarts all streams, and on a busy machine they may come
# faster than a stream makes progress between them: started again at once
# and as often as it takes (the retry policy is t/009's)
match_recognize.stream_start_retries = 1000
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
CREATE SEQUENCE ts_seq;
CREATE TABLE src (k int, ts bigint, v int);
INSERT INTO src SELECT (random() * 49)::int, nextval('ts_seq'), (random() * 9)::int
  FROM generate_series(1, 50000);
});

my %queries = (
	w => q{SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, LAST(ts) AS t1, COUNT(*) AS n, SUM(v) AS s
      PATTERN (a b+ c) WITHIN 400
      DEFINE a AS v = 0, b AS v BETWEEN 1 AND 8, c AS v = 9)},
	n => q{SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, LAST(ts) AS t1, COUNT(*) AS n
      PATTERN (x y+ z) DEFINE x AS v < 2, y AS v >= 2, z AS v = 0)},
);
# out_<q>: workers => 3; ref_<q>: workers => 1 (never killed on purpose,
# but restarted with the server)
for my $q (sort keys %queries)
{
	for my $s ("out_$q", "ref_$q")
	{
		my $workers = $s =~ /^out/ ? 3 : 1;
		$node->safe_psql('postgres', qq{
SET client_min_messages = warning;
SELECT match_recognize_create_stream('$s', \$q\$$queries{$q}\$q\$,
  lateness => 5000::bigint, late_table => '${s}_late', workers => $workers);
});
	}
}
my @streams = map { ("out_$_", "ref_$_") } sort keys %queries;

sub up
{
	for (1 .. 600)
	{
		return 1 if eval { $node->safe_psql('postgres', 'SELECT 1') eq '1' };
		usleep(100_000);
	}
	return 0;
}

sub pids
{
	my ($type, $like) = @_;
	my $out = eval { $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = '$type' AND application_name LIKE '$like' ORDER BY pid") } // '';
	return grep { /\d/ } split /\n/, $out;
}

# the worker and the two lanes of each out_ stream, once all run
sub wait_all
{
	for (1 .. 1200)
	{
		my @w = pids('match_recognize stream', 'match_recognize stream %');
		my @l = pids('match_recognize stream lane', 'match_recognize stream % lane %');
		return (\@w, \@l) if @w >= 4 && @l >= 4;
		usleep(50_000);
	}
	return ([], []);
}

# the worker of stream s
sub worker_of
{
	my ($s) = @_;
	my $id = $node->safe_psql('postgres', "SELECT id FROM match_recognize_stream WHERE name = 'public.$s'");
	my @p = pids('match_recognize stream', "match_recognize stream $id");
	return $p[0];
}

sub lanes_of
{
	my ($s) = @_;
	my $id = $node->safe_psql('postgres', "SELECT id FROM match_recognize_stream WHERE name = 'public.$s'");
	return pids('match_recognize stream lane', "match_recognize stream $id lane %");
}

sub kill_postmaster
{
	$node->kill9;
	for (1 .. 100)
	{
		last unless grep { /postgres: pstream_crash: / } `ps -eo args`;
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
    INSERT INTO src SELECT (random() * 49)::int, nextval('ts_seq'), (random() * 9)::int
      FROM generate_series(1, $per_txn);
    COMMIT;
  END LOOP;
END \$\$;
});
}

for my $s (@streams)
{
	ok($node->poll_query_until('postgres', "SELECT match_recognize_wait_stream('$s', '5 seconds')", 't'),
		"$s backfilled");
}

# catch-ups: an out_ stream paused (its worker and lanes end) while a
# backlog is committed, then resumed, and after a moment one of its new
# processes is killed.  (Not SIGSTOP: a process stopped while it holds a
# WAL insertion lock would block every commit for good.)
my @what = ('lane', 'worker', 'lane', 'term', 'postmaster', 'worker', 'lane');
my $kills = 0;
my $mid_catchup = 0;
for my $round (0 .. $#what)
{
	my ($w, $l) = wait_all();
	ok(@$l >= 4, "round $round: both streams have their lanes");
	my $s = $round % 2 ? 'out_n' : 'out_w';
	$node->safe_psql('postgres', "SELECT match_recognize_pause_stream('$s')");
	insert_rows(100000, 500);
	$node->safe_psql('postgres', "SELECT match_recognize_resume_stream('$s')");
	wait_all();
	usleep(50_000 + int(rand(250_000)));
	my $catching = $node->safe_psql('postgres',
		"SELECT lag_bytes > 0 FROM match_recognize_streams WHERE name = 'public.$s'");
	note "round $round: $what[$round] of $s, catching up: $catching";
	$mid_catchup++ if $catching eq 't';
	if ($what[$round] eq 'postmaster')
	{
		ok(kill_postmaster(), "round $round: the server starts again after kill -9 of the postmaster");
	}
	elsif ($what[$round] eq 'term')
	{
		my @lanes = lanes_of($s);
		kill 'TERM', $lanes[0];
		# the worker stops with its lane and is started again: new lanes
		my $ok = 0;
		for (1 .. 600)
		{
			my @now = lanes_of($s);
			if (@now == 2 && !grep { $_ == $lanes[0] } @now) { $ok = 1; last; }
			usleep(50_000);
		}
		ok($ok, "round $round: SIGTERM of a lane restarts the stream with new lanes");
	}
	else
	{
		my $pid = $what[$round] eq 'worker' ? worker_of($s) : (lanes_of($s))[$round % 2];
		kill 'KILL', $pid;
		up();
	}
	$kills++;
}
note "$kills kills, $mid_catchup of them during a catch-up";
ok($mid_catchup > 0, 'kills during a catch-up');

wait_all();
$node->safe_psql('postgres', q{
INSERT INTO src SELECT k, nextval('ts_seq'), NULL FROM generate_series(0, 49) k;
INSERT INTO src VALUES (-1, 1000000000, 0);
});
for my $s (@streams)
{
	ok($node->poll_query_until('postgres', "SELECT match_recognize_wait_stream('$s', '5 seconds')", 't'),
		"$s caught up");
}
note 'source rows: ' . $node->safe_psql('postgres', 'SELECT count(*) FROM src');

for my $q (sort keys %queries)
{
	for my $s ("out_$q", "ref_$q")
	{
		my ($state, $workers) = split /\|/, $node->safe_psql('postgres',
			"SELECT state || ' ' || coalesce(last_error, ''), workers FROM match_recognize_streams WHERE name = 'public.$s'");
		note "$s: $state, workers $workers";
		like($state, qr/^running/, "$s is running");
		my $query = $queries{$q};
		$query =~ s/FROM src MATCH_RECOGNIZE/FROM (SELECT * FROM src EXCEPT ALL SELECT k, ts, v FROM ${s}_late) src MATCH_RECOGNIZE/;
		$node->safe_psql('postgres', "SELECT match_recognize_create_view('batch_$s', \$q\$$query\$q\$)");
		my $cols = $node->safe_psql('postgres',
			"SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'batch_$s'::regclass AND attnum > 0");
		my ($n_stream, $n_batch, $lost, $extra) = split /\|/, $node->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM $s WHERE k >= 0),
       (SELECT count(*) FROM batch_$s WHERE k >= 0),
       (SELECT count(*) FROM (SELECT $cols FROM batch_$s WHERE k >= 0 EXCEPT ALL SELECT $cols FROM $s) x),
       (SELECT count(*) FROM (SELECT $cols FROM $s WHERE k >= 0 EXCEPT ALL SELECT $cols FROM batch_$s) x)});
		note "$s: stream $n_stream rows, batch $n_batch rows";
		ok($n_stream > 0, "$s has matches");
		is($lost, '0', "$s: no match lost");
		is($extra, '0', "$s: no match duplicated or invented");
		is($n_stream, $n_batch, "$s: same number of rows as batch");
	}
	my $late = $node->safe_psql('postgres',
		"SELECT (SELECT count(*) FROM out_${q}_late) || ' ' || (SELECT count(*) FROM ref_${q}_late)");
	is($late, '0 0', "$q: no late rows");
	is($node->safe_psql('postgres', qq{
SELECT count(*) FROM ((TABLE out_$q EXCEPT ALL TABLE ref_$q) UNION ALL (TABLE ref_$q EXCEPT ALL TABLE out_$q)) x}),
		'0', "out_$q equals ref_$q, _match_id included");
}

for my $s (@streams)
{
	$node->safe_psql('postgres', "SELECT match_recognize_drop_stream('$s')");
}
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_replication_slots"), '0',
	'no replication slot left');
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type LIKE 'match_recognize stream%'"),
	'no worker or lane left');

$node->stop;
done_testing();

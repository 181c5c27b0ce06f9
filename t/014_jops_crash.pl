# Interval join streams on processing time, and backfill, exactly once
# across crashes.  Rows are in both tables before the streams exist (the
# streams backfill them), an event-time stream is created while rows are
# being committed (rows arriving during its backfill), and rows go on being
# committed in many small transactions while the workers are killed
# (SIGKILL: the server restarts every backend) and the postmaster is killed
# (kill -9), with transactions in flight.  At the end every horizon is
# closed and each output table must equal its batch query: for the event
# time the same SQL; for processing time the same SQL with
# track_commit_timestamp on, a row's time being its commit time, or the
# stream's creation time for the rows its backfill read (the transactions
# its recorded snapshot saw).
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

my $node = PostgreSQL::Test::Cluster->new('jops_crash');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'match_recognize'
max_worker_processes = 16
restart_after_crash = on
track_commit_timestamp = on
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
CREATE TABLE l (id bigint, k int, ts bigint, v int);
CREATE TABLE r (id bigint, k int, ts bigint, v int);
CREATE TABLE tick (n int);
});

# processing time: r's commit time within [l's - 20 ms, l's + 30 ms]
my %ptypes = (p_inner => 'INNER', p_left => 'LEFT', p_right => 'RIGHT', p_full => 'FULL');
sub pquery
{
	my ($type, $lt, $rt) = @_;
	$lt //= 'pg_xact_commit_timestamp(l.xmin)';
	$rt //= 'pg_xact_commit_timestamp(r.xmin)';
	return "SELECT l.id AS lid, l.k AS lk, $lt AS lat, r.id AS rid, r.k AS rk, $rt AS rat "
	  . "FROM l $type JOIN r ON l.k = r.k AND $rt BETWEEN $lt - interval '20 milliseconds' "
	  . "AND $lt + interval '30 milliseconds'";
}
sub equery
{
	return "SELECT l.id AS lid, l.k AS lk, l.ts AS lts, r.id AS rid, r.k AS rk, r.ts AS rts "
	  . "FROM l FULL JOIN r ON l.k = r.k AND r.ts BETWEEN l.ts - 20 AND l.ts + 30";
}

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
		return @p if @p >= 5;
		usleep(50_000);
	}
	return ();
}

sub kill_postmaster
{
	$node->kill9;
	for (1 .. 100)
	{
		last unless grep { /postgres: jops_crash: / } `ps -eo args`;
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

# a psql in the background committing n rows in transactions of 1 to 4,
# a few milliseconds apart; times out of order by less than the event-time
# lateness (50)
sub start_feed
{
	my ($n) = @_;
	my ($in, $out, $err) = ('', '', '');
	$in = qq{
DO \$\$
DECLARE
  j bigint;
BEGIN
  FOR i IN 1 .. $n LOOP
    j := nextval('arrival');
    IF random() < 0.5 THEN
      INSERT INTO l VALUES (j, (random() * 9)::int, j - (random() * 39)::int, 0);
    ELSE
      INSERT INTO r VALUES (j, (random() * 9)::int, j - (random() * 39)::int, 0);
    END IF;
    IF random() < 0.4 THEN
      COMMIT;
      PERFORM pg_sleep(random() * 0.004);
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

# rows before the streams: backfilled
start_feed(1500)->finish;
for my $s (sort keys %ptypes)
{
	$node->safe_psql('postgres', qq{
SELECT match_recognize_create_stream('$s', \$q\$@{[pquery($ptypes{$s})]}\$q\$,
  lateness => interval '1 second');
});
}
# and one created while rows are being committed
my $h = start_feed(1500);
usleep(100_000);
$node->safe_psql('postgres', qq{
SELECT match_recognize_create_stream('e_full', \$q\$@{[equery()]}\$q\$, lateness => 50::bigint);
});
$h->finish;

my $kills = 0;
for my $round (1 .. 5)
{
	my @p = wait_workers();
	$h = start_feed(2000);
	usleep(200_000 + int(rand(800_000)));
	if ($round % 3 == 0)
	{
		ok(kill_postmaster(), "round $round: the server starts again after kill -9 of the postmaster");
		$h->kill_kill;
	}
	else
	{
		kill 'KILL', $p[ int(rand(@p)) ] if @p;
		$h->finish;
		up();
		start_feed(500)->finish;
	}
	$kills++;
}
note "$kills kills";

# every horizon closed: event-time rows far ahead, and a commit more than
# the lateness and the bounds later for the processing clock
wait_workers();
$node->safe_psql('postgres', q{
INSERT INTO l VALUES (0, NULL, 1000000000, 0);
INSERT INTO r VALUES (0, NULL, 1000000000, 0);
});
sleep 2;
$node->safe_psql('postgres', 'INSERT INTO tick VALUES (1)');
for my $s ((sort keys %ptypes), 'e_full')
{
	ok($node->poll_query_until('postgres', "SELECT match_recognize_wait_stream('$s', '5 seconds')", 't'),
		"$s caught up");
}
note 'rows: ' . $node->safe_psql('postgres', 'SELECT (SELECT count(*) FROM l) || \' left, \' || (SELECT count(*) FROM r) || \' right\'');

sub compare
{
	my ($s, $batch, $cols) = @_;
	my ($state, $late) = split /\|/, $node->safe_psql('postgres',
		"SELECT state || ' ' || coalesce(last_error, ''), late_rows FROM match_recognize_streams WHERE name = 'public.$s'");
	like($state, qr/^running/, "$s is running");
	is($late, '0', "$s: no row was late");
	my ($n_stream, $n_batch, $lost, $extra, $dups) = split /\|/, $node->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM $s),
       (SELECT count(*) FROM ($batch) b),
       (SELECT count(*) FROM (SELECT $cols FROM ($batch) b EXCEPT ALL SELECT $cols FROM $s) x),
       (SELECT count(*) FROM (SELECT $cols FROM $s EXCEPT ALL SELECT $cols FROM ($batch) b) x),
       (SELECT count(*) - count(DISTINCT _match_id) FROM $s)});
	note "$s: stream $n_stream rows, batch $n_batch rows";
	ok($n_stream > 0, "$s has output");
	is($lost, '0', "$s: no row lost");
	is($extra, '0', "$s: no row duplicated or invented");
	is($dups, '0', "$s: _match_id unique");
	is($n_stream, $n_batch, "$s: same number of rows as batch");
}

for my $s (sort keys %ptypes)
{
	# the rows the backfill read are at the creation time
	my ($created, $snap) = split /\|/, $node->safe_psql('postgres',
		"SELECT created_at, snapshot FROM match_recognize_stream WHERE name = 'public.$s'");
	my $t = sub {
		my ($x) = @_;
		return "CASE WHEN pg_visible_in_snapshot($x.xmin::text::xid8, '$snap'::pg_snapshot) "
		  . "THEN '$created'::timestamptz ELSE pg_xact_commit_timestamp($x.xmin) END";
	};
	my $backfilled = $node->safe_psql('postgres',
		"SELECT count(*) FROM l WHERE pg_visible_in_snapshot(l.xmin::text::xid8, '$snap'::pg_snapshot)");
	ok($backfilled >= 700, "$s backfilled rows ($backfilled left)");
	compare($s, pquery($ptypes{$s}, $t->('l'), $t->('r')), 'lid, lk, lat, rid, rk, rat');
}
compare('e_full', equery(), 'lid, lk, lts, rid, rk, rts');

for my $s ((sort keys %ptypes), 'e_full')
{
	$node->safe_psql('postgres', "SELECT match_recognize_drop_stream('$s')");
}
ok($node->poll_query_until('postgres', "SELECT count(*) FROM pg_replication_slots", '0'),
	'no replication slot left');

$node->stop;
done_testing();

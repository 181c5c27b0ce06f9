# Interval join streams, exactly once across crashes: rows committed out of
# event-time order in many small transactions to both tables while the
# streams' workers are killed (SIGKILL: the server restarts every backend)
# and the postmaster is killed (kill -9), with transactions in flight.  At
# the end, rows far ahead on both sides close every horizon, and each
# output table must equal the batch query (the same SQL) over the rows the
# tables hold: nothing lost, nothing written twice, no row late.
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

my $node = PostgreSQL::Test::Cluster->new('stream_ijoin_crash');
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
CREATE TABLE l (id bigint, k int, ts bigint, v int);
CREATE TABLE r (id bigint, k int, ts bigint, v int);
});

my %types = (ij_inner => 'INNER', ij_left => 'LEFT', ij_right => 'RIGHT', ij_full => 'FULL');
sub query
{
	my ($type) = @_;
	return "SELECT l.id AS lid, l.k AS lk, l.ts AS lts, l.v AS lv, r.id AS rid, r.k AS rk, r.ts AS rts, r.v AS rv "
	  . "FROM l $type JOIN r ON l.k = r.k AND r.ts BETWEEN l.ts - 20 AND l.ts + 30";
}
for my $s (sort keys %types)
{
	$node->safe_psql('postgres', qq{
SELECT match_recognize_create_stream('$s', \$q\$@{[query($types{$s})]}\$q\$,
  lateness => 50::bigint, late_table => '${s}_late');
});
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
		return @p if @p >= 4;
		usleep(50_000);
	}
	return ();
}

sub kill_postmaster
{
	$node->kill9;
	for (1 .. 100)
	{
		last unless grep { /postgres: stream_ijoin_crash: / } `ps -eo args`;
		usleep(100_000);
	}
	note "still running after kill -9: $_" for grep { /stream_ijoin_crash/ } `ps -eo pid,stat,wchan:20,args`;
	for (1 .. 60)
	{
		return 1 if $node->start(fail_ok => 1);
		$node->{_pid} = undef;
		sleep 1;
	}
	return 0;
}

# a psql in the background committing n rows in transactions of 1 to 4:
# each row's time is its arrival number minus up to 39 (out of order by
# less than the lateness, 50, so no row is late)
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
      INSERT INTO l VALUES (j, (random() * 9)::int, j - (random() * 39)::int, (random() * 3)::int);
    ELSE
      INSERT INTO r VALUES (j, (random() * 9)::int, j - (random() * 39)::int, (random() * 3)::int);
    END IF;
    IF random() < 0.4 THEN
      COMMIT;
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

my $kills = 0;
for my $round (1 .. 6)
{
	my @p = wait_workers();
	my $h = start_feed(3000);
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
		# and a feed that commits all its rows, the workers catching up
		start_feed(1000)->finish;
	}
	$kills++;
}
note "$kills kills";

# everything committed, then rows far ahead (NULL keys: they match nothing)
# close every horizon
wait_workers();
$node->safe_psql('postgres', q{
INSERT INTO l VALUES (0, NULL, 1000000000, 0);
INSERT INTO r VALUES (0, NULL, 1000000000, 0);
});
for my $s (sort keys %types)
{
	ok($node->poll_query_until('postgres', "SELECT match_recognize_wait_stream('$s', '5 seconds')", 't'),
		"$s caught up");
}
note 'rows: ' . $node->safe_psql('postgres', 'SELECT (SELECT count(*) FROM l) || \' left, \' || (SELECT count(*) FROM r) || \' right\'');

my $cols = 'lid, lk, lts, lv, rid, rk, rts, rv';
for my $s (sort keys %types)
{
	my ($state, $late) = split /\|/, $node->safe_psql('postgres',
		"SELECT state || ' ' || coalesce(last_error, ''), late_rows FROM match_recognize_streams WHERE name = 'public.$s'");
	like($state, qr/^running/, "$s is running");
	is($late, '0', "$s: no row was late");
	my $batch = query($types{$s});
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

for my $s (sort keys %types)
{
	$node->safe_psql('postgres', "SELECT match_recognize_drop_stream('$s')");
}
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_replication_slots"), '0',
	'no replication slot left');

$node->stop;
done_testing();

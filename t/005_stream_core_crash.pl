# Exactly once across crashes at the moments the stream core is most
# exposed: while the backfill copies the source, while a worker catches up
# on a backlog (decoding, not yet checkpointed), while a source transaction
# is open (the worker stopped by SIGTERM, the transaction committed later;
# or the whole server killed, the transaction lost), and with a stream
# whose max_held_wal is so small that every checkpoint stores rows.  At the
# end each output table must equal the batch query over the rows the
# source holds, minus the late ones: nothing lost, nothing written twice.
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

my $backfill_rows = $ENV{MR_TAP_BACKFILL_ROWS} || 300000;

my $node = PostgreSQL::Test::Cluster->new('stream_core_crash');
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

$node->safe_psql('postgres', qq{
CREATE EXTENSION match_recognize;
CREATE SEQUENCE ts_seq;
CREATE TABLE src (k int, ts bigint, v int);
INSERT INTO src SELECT (random() * 49)::int, nextval('ts_seq'), (random() * 9)::int
  FROM generate_series(1, $backfill_rows);
});

my %streams = (
	out_w => q{SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, LAST(ts) AS t1, COUNT(*) AS n, SUM(v) AS s
      PATTERN (a b+ c) WITHIN 400
      DEFINE a AS v = 0, b AS v BETWEEN 1 AND 8, c AS v = 9)},
	out_n => q{SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
      MEASURES FIRST(ts) AS t0, LAST(ts) AS t1, COUNT(*) AS n
      PATTERN (x y+ z) DEFINE x AS v < 2, y AS v >= 2, z AS v = 0)},
);
for my $s (sort keys %streams)
{
	my $extra = $s eq 'out_n' ? ", max_held_wal => '64kB'" : '';
	$node->safe_psql('postgres', qq{
SET client_min_messages = warning;
SELECT match_recognize_create_stream('$s', \$q\$$streams{$s}\$q\$,
  lateness => 5000::bigint, late_table => '${s}_late'$extra);
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
		return @p if @p >= 2;
		usleep(50_000);
	}
	return ();
}

sub kill_postmaster
{
	$node->kill9;
	for (1 .. 100)
	{
		last unless grep { /postgres: stream_core_crash: / } `ps -eo args`;
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

my $kills = 0;
my $stored_seen = 0;

sub note_stored
{
	my $n = eval { $node->safe_psql('postgres',
		"SELECT rows_stored FROM match_recognize_streams WHERE name = 'public.out_n'") } // 0;
	$stored_seen = $n if $n =~ /^\d+$/ && $n > $stored_seen;
}

# 1. during the backfill: SIGKILL of a worker (the server restarts every
# backend, the backfill starts over), three times, then the postmaster
for my $round (1 .. 4)
{
	my $copying = $node->poll_query_until('postgres',
		"SELECT bool_or(backfill_rows IS NOT NULL) OR bool_and(state <> 'starting') FROM match_recognize_streams", 't');
	my $during = $node->safe_psql('postgres',
		"SELECT bool_or(backfill_rows IS NOT NULL) FROM match_recognize_streams");
	note "backfill round $round: copying now: $during";
	last if $during ne 't';
	if ($round < 4)
	{
		my @p = worker_pids();
		kill 'KILL', $p[0] if @p;
		up();
	}
	else
	{
		ok(kill_postmaster(), 'the server starts again after kill -9 of the postmaster during the backfill');
	}
	$kills++;
}
for my $s (sort keys %streams)
{
	ok($node->poll_query_until('postgres', "SELECT match_recognize_wait_stream('$s', '5 seconds')", 't'),
		"$s backfilled");
}

# 2. during a catch-up: a backlog committed while the streams were paused,
# decoded by the workers resume starts.  (Not SIGSTOP: a worker stopped
# while it holds a WAL insertion lock would block every commit for good.)
for my $round (1 .. 3)
{
	wait_workers();
	$node->safe_psql('postgres', "SELECT match_recognize_pause_stream('$_')") for sort keys %streams;
	insert_rows(60000, 500);
	$node->safe_psql('postgres', "SELECT match_recognize_resume_stream('$_')") for sort keys %streams;
	my @p = wait_workers();
	usleep(100_000 + int(rand(400_000)));
	note_stored();
	if ($round < 3)
	{
		kill 'KILL', $p[ int(rand(@p)) ];
		up();
	}
	else
	{
		ok(kill_postmaster(), 'the server starts again after kill -9 of the postmaster during a catch-up');
	}
	$kills++;
}

# 3. a source transaction open while its stream's worker stops (SIGTERM:
# the server stays up, the transaction commits afterwards) ...
{
	wait_workers();
	my ($in, $out, $err) = ('', '', '');
	my $h = IPC::Run::start([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres') ],
		\$in, \$out, \$err);
	$in .= "BEGIN;\nINSERT INTO src SELECT (random() * 49)::int, nextval('ts_seq'), (random() * 9)::int FROM generate_series(1, 5000);\n";
	$h->pump while length $in;
	usleep(300_000);
	kill 'TERM', worker_pids();
	usleep(300_000);
	$in .= "INSERT INTO src SELECT (random() * 49)::int, nextval('ts_seq'), (random() * 9)::int FROM generate_series(1, 5000);\nCOMMIT;\n\\q\n";
	$h->finish;
	is($h->result(0), 0, 'the open source transaction committed after its stream\'s worker stopped');
	$kills++;
}
# ... and open while the whole server is killed (the transaction is lost)
{
	wait_workers();
	my ($in, $out, $err) = ('', '', '');
	my $h = IPC::Run::start([ 'psql', '-X', '-q', '-d', $node->connstr('postgres') ],
		\$in, \$out, \$err);
	$in .= "BEGIN;\nINSERT INTO src SELECT (random() * 49)::int, nextval('ts_seq'), (random() * 9)::int FROM generate_series(1, 5000);\n";
	$h->pump while length $in;
	usleep(300_000);
	ok(kill_postmaster(), 'the server starts again after kill -9 with a source transaction open');
	$h->kill_kill;
	$kills++;
}
# ... and a large transaction whose commit a worker is decoding when killed
{
	wait_workers();
	my ($in, $out, $err) = ('', '', '');
	my $h = IPC::Run::start([ 'psql', '-X', '-q', '-d', $node->connstr('postgres') ],
		\$in, \$out, \$err);
	$in .= "INSERT INTO src SELECT (random() * 49)::int, nextval('ts_seq'), (random() * 9)::int FROM generate_series(1, 100000);\n\\q\n";
	$h->finish;
	my @p = worker_pids();
	kill 'KILL', @p if @p;
	up();
	$kills++;
}
note "$kills kills";

wait_workers();
$node->safe_psql('postgres', q{
INSERT INTO src SELECT k, nextval('ts_seq'), NULL FROM generate_series(0, 49) k;
INSERT INTO src VALUES (-1, 1000000000, 0);
});
for my $s (sort keys %streams)
{
	ok($node->poll_query_until('postgres', "SELECT match_recognize_wait_stream('$s', '5 seconds')", 't'),
		"$s caught up");
}

my $total = $node->safe_psql('postgres', 'SELECT count(*) FROM src');
note "source rows: $total";

for my $s (sort keys %streams)
{
	my ($state, $stored) = split /\|/, $node->safe_psql('postgres',
		"SELECT state || ' ' || coalesce(last_error, ''), rows_stored FROM match_recognize_streams WHERE name = 'public.$s'");
	note "$s: $state, rows stored $stored";
	like($state, qr/^running/, "$s is running");
	my $query = $streams{$s};
	$query =~ s/FROM src MATCH_RECOGNIZE/FROM (SELECT * FROM src EXCEPT ALL SELECT k, ts, v FROM ${s}_late) src MATCH_RECOGNIZE/;
	$node->safe_psql('postgres', "SELECT match_recognize_create_view('batch_$s', \$q\$$query\$q\$)");
	my $cols = $node->safe_psql('postgres',
		"SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'batch_$s'::regclass AND attnum > 0");
	my ($n_stream, $n_batch, $lost, $extra, $late) = split /\|/, $node->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM $s WHERE k >= 0),
       (SELECT count(*) FROM batch_$s WHERE k >= 0),
       (SELECT count(*) FROM (SELECT $cols FROM batch_$s WHERE k >= 0 EXCEPT ALL SELECT $cols FROM $s) x),
       (SELECT count(*) FROM (SELECT $cols FROM $s WHERE k >= 0 EXCEPT ALL SELECT $cols FROM batch_$s) x),
       (SELECT count(*) FROM ${s}_late)});
	note "$s: stream $n_stream rows, batch $n_batch rows, late $late";
	ok($n_stream > 0, "$s has matches");
	is($lost, '0', "$s: no match lost");
	is($extra, '0', "$s: no match duplicated or invented");
	is($n_stream, $n_batch, "$s: same number of rows as batch");
}
note "out_n stored at most $stored_seen rows at a time";
ok($stored_seen > 0, 'the small max_held_wal made out_n store rows');

for my $s (sort keys %streams)
{
	$node->safe_psql('postgres', "SELECT match_recognize_drop_stream('$s')");
}
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_replication_slots"), '0',
	'no replication slot left');

$node->stop;
done_testing();

# A hostile stream owner: a role with only LOGIN and REPLICATION (and SELECT
# on a source it does not own) owns its streams' internal tables, and can
# write and alter them, and terminate its own workers.  Whatever it does to
# that state, the server stays up (no backend crash, no crash loop), every
# stream it damaged ends in state failed with a message that says what is
# wrong, and another stream in the same database runs on.
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

my $node = PostgreSQL::Test::Cluster->new('stream_hostile');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'match_recognize'
max_worker_processes = 24
max_replication_slots = 20
restart_after_crash = on
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
CREATE ROLE evil LOGIN REPLICATION;
GRANT CREATE ON SCHEMA public TO evil;
CREATE TABLE src (k int, ts bigint, v int);
GRANT SELECT ON src TO evil;
INSERT INTO src SELECT g % 3, g, g % 4 FROM generate_series(1, 60) g;
});

# one stream per kind of damage, and one left alone
my @damage = (
	[ 'null_time', q{UPDATE _mr_ID_rows SET ts = NULL WHERE _seq = (SELECT max(_seq) FROM _mr_ID_rows)},
	  qr/internal table "_mr_\d+_rows" of stream \d+ was altered: stored row \d+ has a NULL event time/ ],
	[ 'retyped', q{ALTER TABLE _mr_ID_parts ALTER COLUMN retained TYPE bigint USING 5},
	  qr/internal table "_mr_\d+_parts" of stream \d+ was altered: its column 9 is not of type bytea/ ],
	[ 'dropped_col', q{ALTER TABLE _mr_ID_rows DROP COLUMN ts},
	  qr/internal table "_mr_\d+_rows" of stream \d+ was altered: its column "ts" is missing/ ],
	[ 'seq_text', q{ALTER TABLE _mr_ID_rows ALTER COLUMN _seq TYPE text},
	  qr/its column "_seq" is not one bigint/ ],
	[ 'bad_numbers', q{UPDATE _mr_ID_parts SET keep_from = -5, nrows = 1000000000000},
	  qr/the checkpoint of partition \d+ of stream \d+ is damaged: row numbers .* do not fit together/ ],
	[ 'bad_id', q{INSERT INTO _mr_ID_parts SELECT -7, key, nrows, keep_from, matcher_from, match_number,
	    unmatched_from, covered_upto, retained FROM _mr_ID_parts LIMIT 1},
	  qr/the checkpoint of stream \d+ is damaged: partition number -7 is not between 1 and \d+/ ],
	[ 'bad_key', q{UPDATE _mr_ID_parts SET key = '{{1,2},{3,4}}'},
	  qr/is damaged: its key is not a one-dimensional text array/ ],
	[ 'dup_part', q{INSERT INTO _mr_ID_parts SELECT part_id, key, nrows, keep_from, matcher_from, match_number,
	    unmatched_from, covered_upto, retained FROM _mr_ID_parts LIMIT 1},
	  qr/is damaged: the partition is listed twice/ ],
	[ 'bad_seqs', q{UPDATE _mr_ID_parts SET retained = '\x0102'},
	  qr/is damaged: it lists 0 retained rows for rows/ ],
	[ 'truncated', q{TRUNCATE _mr_ID_rows},
	  qr/retained rows of its checkpoint were not found again|is gone from its table|pending and \d+ retained rows/ ],
);
my $query = q{SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(ts) AS t0, COUNT(*) AS n PATTERN (a b+) DEFINE a AS v = 0, b AS v > 0)};
for my $s ((map { $_->[0] } @damage), 'healthy')
{
	$node->safe_psql('postgres', qq{
SET ROLE evil;
SET client_min_messages = warning;
SELECT match_recognize_create_stream('$s', \$q\$$query\$q\$, 10::bigint);
SELECT match_recognize_wait_stream('$s');
});
}
is($node->safe_psql('postgres', "SELECT count(*) FROM match_recognize_streams WHERE state = 'running'"),
	scalar(@damage) + 1, 'every stream runs');

# the damage, as the owner; then the owner makes its workers restart
for my $d (@damage)
{
	my ($s, $sql) = @$d;
	my $id = $node->safe_psql('postgres', "SELECT id FROM match_recognize_stream WHERE name = 'public.$s'");
	$sql =~ s/_ID_/_${id}_/g;
	$node->safe_psql('postgres', "SET ROLE evil; $sql");
}
$node->safe_psql('postgres', q{
SET ROLE evil;
SELECT count(pg_terminate_backend(a.pid)) FROM pg_stat_activity a
  WHERE a.backend_type = 'match_recognize stream' AND a.usename = 'evil';
});
$node->safe_psql('postgres', 'INSERT INTO src SELECT g % 3, g, g % 4 FROM generate_series(61, 120) g');

my $damaged = join(',', map { "'public.$_->[0]'" } @damage);
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM match_recognize_streams WHERE name IN ($damaged) AND state <> 'failed'"),
	'every damaged stream ends in state failed');

for my $d (@damage)
{
	my ($s, undef, $re) = @$d;
	my $err = $node->safe_psql('postgres',
		"SELECT last_error FROM match_recognize_streams WHERE name = 'public.$s'");
	like($err, qr/the worker stopped 5 times in a row before it made progress/, "$s: says it gave up");
	like($err, $re, "$s: says what is wrong");
}

# the undamaged stream ran on, with the right output
ok($node->poll_query_until('postgres', "SELECT match_recognize_wait_stream('healthy', '5 seconds')", 't'),
	'the other stream runs on');
is($node->safe_psql('postgres', "SELECT state FROM match_recognize_streams WHERE name = 'public.healthy'"),
	'running', 'and is running');
$node->safe_psql('postgres', "SELECT match_recognize_create_view('batch', \$q\$$query\$q\$)");
is($node->safe_psql('postgres', q{
SELECT count(*) > 20, count(*) FILTER (WHERE NOT EXISTS (SELECT FROM batch b
    WHERE (b.k, b.t0, b.n) = (h.k, h.t0, h.n))) FROM healthy h}),
	't|0', 'its output is the batch query\'s');

# no backend crashed, and the server never restarted
my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal/, 'no backend crashed');
unlike($log, qr/all server processes terminated/, 'the server never restarted');

# Slot tampering: another REPLICATION role moves a stream's slot while no
# worker holds it (here: between a worker's end and the next start), or
# drops it and makes another under the same name.  The changes skipped
# would be lost silently: the stream must fail and say what happened.
$node->safe_psql('postgres', q{
CREATE ROLE other LOGIN REPLICATION;
});
my %tamper = (
	advanced => q{PERFORM pg_replication_slot_advance(slot, pg_current_wal_lsn())},
	recreated => q{PERFORM pg_drop_replication_slot(slot);
		PERFORM pg_create_logical_replication_slot(slot, 'match_recognize')},
	replaced => q{PERFORM pg_drop_replication_slot(slot);
		PERFORM pg_create_logical_replication_slot(slot, 'pgoutput')},
);
for my $s (sort keys %tamper)
{
	$node->safe_psql('postgres', qq{
SET ROLE evil;
SET client_min_messages = warning;
SELECT match_recognize_create_stream('$s', \$q\$$query\$q\$, 10::bigint);
SELECT match_recognize_wait_stream('$s');
});
}
$node->safe_psql('postgres', 'INSERT INTO src SELECT g % 3, g, g % 4 FROM generate_series(121, 130) g');
for my $s (sort keys %tamper)
{
	ok($node->poll_query_until('postgres', "SELECT match_recognize_wait_stream('$s', '5 seconds')", 't'),
		"$s: caught up");
	my $slot = $node->safe_psql('postgres', "SELECT slot_name FROM match_recognize_stream WHERE name = 'public.$s'");
	# the worker goes (the stream paused: a worker the launcher restarts
	# after a kill may take the slot back before the other role gets it),
	# rows arrive, the slot is moved, and the stream is resumed
	$node->safe_psql('postgres', qq{
SET ROLE evil;
SELECT match_recognize_pause_stream('$s');
RESET ROLE;
INSERT INTO src SELECT g % 3, g, g % 4 FROM generate_series(131, 140) g;
SET ROLE other;
DO \$\$
DECLARE slot name := '$slot';
BEGIN
	FOR i IN 1 .. 500 LOOP
		BEGIN
			$tamper{$s};
			RETURN;
		EXCEPTION WHEN object_in_use THEN
			PERFORM pg_sleep(0.01);
		END;
	END LOOP;
	RAISE 'the slot stayed busy';
END \$\$;
RESET ROLE;
SET ROLE evil;
SELECT match_recognize_resume_stream('$s');
});
	ok($node->poll_query_until('postgres',
		"SELECT state = 'failed' FROM match_recognize_streams WHERE name = 'public.$s'"),
		"$s: the stream fails");
	my $err = $node->safe_psql('postgres',
		"SELECT last_error FROM match_recognize_streams WHERE name = 'public.$s'");
	# a slot dropped and created again may be looked at in between (the
	# launcher starts a worker when a slot disappears): then the stream
	# fails because its slot was dropped, which is as true
	my $dropped = qr/the replication slot "\Q$slot\E" of the stream was dropped, so changes may have been missed/;
	if ($s eq 'replaced')
	{
		like($err, qr/the replication slot "\Q$slot\E" is not the one the stream created: it is a logical slot of plugin "pgoutput"|$dropped/,
			"$s: says the slot is another one (or was dropped)");
	}
	elsif ($s eq 'recreated')
	{
		like($err, qr{the replication slot "\Q$slot\E" was moved to [0-9A-F]+/[0-9A-F]+ while no worker held it .* but the stream had let it go only up to [0-9A-F]+/[0-9A-F]+, so the changes committed in between were skipped|$dropped},
			"$s: says where the slot was moved and how far the stream had let it go (or that it was dropped)");
	}
	else
	{
		like($err, qr{the replication slot "\Q$slot\E" was moved to [0-9A-F]+/[0-9A-F]+ while no worker held it .* but the stream had let it go only up to [0-9A-F]+/[0-9A-F]+, so the changes committed in between were skipped},
			"$s: says where the slot was moved and how far the stream had let it go");
	}
}
is($node->safe_psql('postgres', "SELECT state FROM match_recognize_streams WHERE name = 'public.healthy'"),
	'running', 'the stream whose worker was only restarted runs on');

# a failed stream's worker waits for the drop; the drop works
for my $d (@damage)
{
	$node->safe_psql('postgres', "SET ROLE evil; SELECT match_recognize_drop_stream('$d->[0]')");
}
$node->safe_psql('postgres', "SET ROLE evil; SELECT match_recognize_drop_stream('$_')")
	for ('healthy', sort keys %tamper);
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_replication_slots"), '0', 'every slot dropped');

$node->stop;
done_testing();

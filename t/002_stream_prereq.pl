# create_stream on a server that cannot run streams fails at once, with a
# hint, instead of creating a stream that never runs.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use TimeLimit;

my $node = PostgreSQL::Test::Cluster->new('stream_prereq');
$node->init;
# MR_TAP_EXTRA_CONF (a private install) may preload the library: only take
# its search paths here
if ($ENV{MR_TAP_EXTRA_CONF})
{
	my @lines = grep { !/shared_preload_libraries/ } split /\n/, $ENV{MR_TAP_EXTRA_CONF};
	$node->append_conf('postgresql.conf', join("\n", @lines));
}
$node->append_conf('postgresql.conf', "wal_level = replica\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION match_recognize;
CREATE TABLE src (k int, ts int, v int);
});
my $create = q{SELECT match_recognize_create_stream('out',
  $$SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES count(*) AS n
      PATTERN (a+) WITHIN 10 DEFINE a AS v > 0)$$, 0)};

# not preloaded
my ($ret, $out, $err) = $node->psql('postgres', $create);
isnt($ret, 0, 'create_stream fails without the preloaded library');
like($err, qr/need the library to be preloaded/, 'it says so');
like($err, qr/HINT:  Add match_recognize to shared_preload_libraries/, 'with a hint');

# preloaded, but wal_level = replica
$node->append_conf('postgresql.conf', $ENV{MR_TAP_EXTRA_CONF}) if $ENV{MR_TAP_EXTRA_CONF};
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'match_recognize'\n")
  unless $ENV{MR_TAP_EXTRA_CONF};
$node->restart;
($ret, $out, $err) = $node->psql('postgres', $create);
isnt($ret, 0, 'create_stream fails with wal_level = replica');
like($err, qr/need wal_level = logical/, 'it says so');
like($err, qr/HINT:  Set wal_level = logical and restart the server/, 'with a hint');
is($node->safe_psql('postgres', 'SELECT count(*) FROM match_recognize_streams'), '0', 'no stream');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_replication_slots'), '0', 'no slot');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_tables WHERE tablename = \'out\''), '0', 'no table');

$node->stop;
done_testing();

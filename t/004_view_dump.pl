# Views made by match_recognize_create_view() survive pg_dump and restore:
# the dump holds the view as PostgreSQL deparses it (the bound call with its
# analysed parts, every name qualified), the restore analyses it again in a
# fresh database, and the restored view returns the same rows, keeps its
# dependencies and reads its input as its owner.  Also with the extension in
# a schema of its own, and after the input table was renamed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use TimeLimit;

my $node = PostgreSQL::Test::Cluster->new('view_dump');
$node->init;
# MR_TAP_EXTRA_CONF (a private install) may set paths; views need no preload
if ($ENV{MR_TAP_EXTRA_CONF})
{
	my @lines = grep { !/shared_preload_libraries/ } split /\n/, $ENV{MR_TAP_EXTRA_CONF};
	$node->append_conf('postgresql.conf', join("\n", @lines));
}
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
CREATE ROLE regress_dump_owner;
CREATE ROLE regress_dump_reader;
CREATE SCHEMA mr;
CREATE EXTENSION match_recognize SCHEMA mr;
GRANT USAGE ON SCHEMA mr TO PUBLIC;
CREATE SCHEMA app AUTHORIZATION regress_dump_owner;
SET ROLE regress_dump_owner;
CREATE TABLE app.ticker (symbol text, ts int, price numeric);
INSERT INTO app.ticker
SELECT 's' || s, t, 100 + ((s * 7 + t * t * 13) % 11)
FROM generate_series(1, 3) s, generate_series(1, 30) t;
CREATE FUNCTION app.rising(numeric, numeric) RETURNS bool LANGUAGE sql IMMUTABLE
  AS $$ SELECT $1 > $2 $$;
SET search_path = app, mr;
SELECT match_recognize_create_view('app.shapes', $$ SELECT * FROM ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES FIRST(ts) AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(ts) AS end_ts,
             count(*) AS n, max(price) AS top
    ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
    PATTERN (STRT DOWN+ UP+)
    DEFINE DOWN AS price < PREV(price), UP AS rising(price, PREV(price)) AND price > 0) $$);
-- nested items and a renaming alias
SELECT match_recognize_create_view('app.nested', $$ SELECT * FROM
    (SELECT * FROM ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts
       MEASURES FIRST(ts) AS s, LAST(price) AS p PATTERN (a b+) DEFINE b AS price > PREV(price)) AS i) AS src
    MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY s MEASURES count(*) AS runs, max(p) AS best
                     PATTERN (x+) DEFINE x AS true) AS o(sym, runs, best) $$);
GRANT USAGE ON SCHEMA app TO regress_dump_reader;
GRANT SELECT ON app.shapes, app.nested TO regress_dump_reader;
RESET ROLE;
ALTER TABLE app.ticker RENAME COLUMN price TO cost;
ALTER TABLE app.ticker RENAME TO quotes;
});

my $q_shapes = 'SELECT * FROM app.shapes ORDER BY symbol, start_ts';
my $q_nested = 'SELECT * FROM app.nested ORDER BY sym';
my $before_shapes = $node->safe_psql('src', $q_shapes);
my $before_nested = $node->safe_psql('src', $q_nested);
isnt($before_shapes, '', 'the view returns rows');

# dump (plain and custom format) and restore into fresh databases
my $dumpdir = PostgreSQL::Test::Utils::tempdir;
my $plain = "$dumpdir/src.sql";
my $custom = "$dumpdir/src.dump";
$node->command_ok([ 'pg_dump', '-d', $node->connstr('src'), '-f', $plain ], 'pg_dump plain');
$node->command_ok([ 'pg_dump', '-Fc', '-d', $node->connstr('src'), '-f', $custom ],
	'pg_dump custom');

my $dump = slurp_file($plain);
like($dump, qr/mr\.match_recognize_bound\(/, 'the dump holds the bound call, qualified');
like($dump, qr/mr\.match_recognize_slot\(/, 'with the engine parameters as slot markers');
like($dump, qr/app\.rising\(/, 'and the clause\'s function, qualified');

$node->safe_psql('postgres', 'CREATE DATABASE dst_plain');
$node->command_ok([ 'psql', '-X', '-v', 'ON_ERROR_STOP=1', '-q', '-d', $node->connstr('dst_plain'),
	'-f', $plain ], 'restore of the plain dump');
$node->safe_psql('postgres', 'CREATE DATABASE dst_custom');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr('dst_custom'), $custom ],
	'pg_restore of the custom dump');

foreach my $db ('dst_plain', 'dst_custom')
{
	is($node->safe_psql($db, $q_shapes), $before_shapes, "$db: the view returns the same rows");
	is($node->safe_psql($db, $q_nested), $before_nested, "$db: the nested view too");
	like($node->safe_psql($db, "EXPLAIN (COSTS OFF) $q_shapes"),
		qr/Custom Scan \(MatchRecognize\)/, "$db: it runs as the MatchRecognize node");

	# its dependencies were recorded again
	my ($ret, $out, $err) = $node->psql($db, 'DROP TABLE app.quotes');
	isnt($ret, 0, "$db: DROP TABLE of the input is refused");
	like($err, qr/view app\.shapes depends on table app\.quotes/, "$db: by the dependency");
	($ret, $out, $err) = $node->psql($db, 'ALTER TABLE app.quotes ALTER COLUMN cost TYPE float8');
	isnt($ret, 0, "$db: ALTER COLUMN TYPE of the input is refused");
	($ret, $out, $err) = $node->psql($db, 'DROP FUNCTION app.rising(numeric, numeric)');
	isnt($ret, 0, "$db: DROP FUNCTION of the clause's function is refused");

	# the reader needs only SELECT on the view
	is($node->safe_psql($db, "SET ROLE regress_dump_reader; SELECT count(*) FROM app.shapes"),
		$node->safe_psql($db, "SELECT count(*) FROM app.shapes"),
		"$db: GRANT SELECT on the view is enough");
	($ret, $out, $err) = $node->psql($db, 'SET ROLE regress_dump_reader; SELECT * FROM app.quotes');
	like($err, qr/permission denied for table quotes/, "$db: the table itself stays closed");

	# read with a search_path that names neither schema
	is($node->safe_psql($db, "SET search_path = pg_catalog; $q_shapes"), $before_shapes,
		"$db: the view needs no search_path");
}

$node->stop;
done_testing();

# t/TimeLimit.pm -- a time limit for one TAP script.
#
# A script that hangs (a psql waiting on a lock, a server that never comes
# back) must fail on its own instead of holding the whole run until CI's
# budget ends.  After MR_TAP_TIME_LIMIT seconds (default 600; the slowest
# script takes about a minute) this records a failing test, says where the
# script was, and exits: the END blocks of PostgreSQL::Test::Cluster stop
# the script's servers, and prove goes on with the next script.
#
# An ALRM handler that died would be caught by the scripts' eval { } retry
# loops, so it exits instead.
package TimeLimit;

use strict;
use warnings;
use Carp ();
use Test::More ();

my $limit = $ENV{MR_TAP_TIME_LIMIT} || 600;

$SIG{ALRM} = sub {
	Test::More::fail("$0 finished within $limit s");
	Test::More::diag(Carp::longmess("time limit of $limit s reached"));
	exit 1;
};
alarm $limit;

1;

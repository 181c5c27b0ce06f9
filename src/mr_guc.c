/*-------------------------------------------------------------------------
 * mr_guc.c
 *	  Every setting of the extension (match_recognize.*), defined in one
 *	  place.
 *
 * MarkGUCPrefixReserved() removes, with a warning, every placeholder of
 * the prefix that is not defined yet; a placeholder is what a value set
 * before the library was loaded becomes (postgresql.conf or ALTER SYSTEM
 * when preloaded; ALTER DATABASE/ROLE ... SET, PGOPTIONS or a session's
 * SET when it is loaded on first use).  So every setting is defined here,
 * which takes over the placeholder's value, and the prefix is reserved
 * last.  A new setting goes into mr_guc_init() above the reservation.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "utils/guc.h"

#include "match_recognize.h"
#include "mr_program.h"

int			mr_max_pattern_states = MR_DEFAULT_MAX_INSTS;
int			mr_max_threads = 100000;
bool		mr_enable_custom_scan = true;
bool		mr_enable_dfa = true;
bool		mr_enable_memo = true;
bool		mr_enable_remote_append = true;
int			mr_stream_start_retries = 5;
int			mr_stream_retry_max_delay = 60;

void
mr_guc_init(void)
{
	DefineCustomBoolVariable("match_recognize.enable_custom_scan",
							 "Plans match_recognize('<constant text>') in FROM as a MatchRecognize custom scan.",
							 "When off, or when the call cannot use the node, the set-returning function runs instead.",
							 &mr_enable_custom_scan,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("match_recognize.enable_dfa",
							 "Runs path-independent patterns in the MatchRecognize node as a cached automaton.",
							 "Each row's DEFINE results become one bit mask and the live candidate paths advance by one cached transition; off runs the general matcher.",
							 &mr_enable_dfa,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("match_recognize.enable_memo",
							 "Runs overlapping matches of path-independent patterns through a memo of (state, row) results.",
							 "Under AFTER MATCH SKIP TO NEXT ROW or TO FIRST/LAST v each (state, row) is worked out once per partition and shared by every start; off re-runs the search from each start.",
							 &mr_enable_memo,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("match_recognize.enable_remote_append",
							 "Runs the clause on the servers of a partitioned table's postgres_fdw partitions.",
							 "When PARTITION BY contains the partition key, each foreign partition's clause runs on its server and the results are appended (Custom Scan MatchRecognizeAppend); off fetches the rows and matches them here.",
							 &mr_enable_remote_append,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("match_recognize.max_pattern_states",
							"Largest compiled row pattern, in automaton states.",
							"Bounded quantifiers are unrolled and PERMUTE expands to every ordering; "
							"a pattern that would compile to more states is rejected.",
							&mr_max_pattern_states,
							MR_DEFAULT_MAX_INSTS, 16, 10000000,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("match_recognize.max_threads",
							"Most candidate paths the matcher keeps alive at once.",
							"Patterns whose DEFINE conditions read the running match cannot merge "
							"candidate paths; this bounds their work and memory.",
							&mr_max_threads,
							100000, 1, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);

	/* a stream's worker that keeps stopping (src/stream/mr_stream_worker.c) */
	DefineCustomIntVariable("match_recognize.stream_start_retries",
							"How many times in a row a stream's worker may stop before it made progress.",
							"At this count the stream is marked failed instead of being started again.",
							&mr_stream_start_retries,
							5, 1, 1000,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("match_recognize.stream_retry_max_delay",
							"Longest wait before a stream's worker is started again after it stopped.",
							"The wait doubles from one second with each stop in a row, up to this.",
							&mr_stream_retry_max_delay,
							60, 0, 3600,
							PGC_SIGHUP, GUC_UNIT_S,
							NULL, NULL, NULL);

	/* last: it drops the placeholders of settings not defined above */
	MarkGUCPrefixReserved("match_recognize");
}

/*-------------------------------------------------------------------------
 * match_recognize.c
 *	  Module entry point: settings, and one initialiser per subsystem.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include <limits.h>

#include "match_recognize.h"
#include "mr_program.h"
#include "mr_scan.h"
#include "stream/mr_stream.h"

PG_MODULE_MAGIC;

int			mr_max_pattern_states = MR_DEFAULT_MAX_INSTS;
int			mr_max_threads = 100000;

void		_PG_init(void);

static void
mr_guc_init(void)
{
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
	MarkGUCPrefixReserved("match_recognize");
}

void
_PG_init(void)
{
	mr_guc_init();
	mr_scan_init();
	mr_stream_init();
}

/*-------------------------------------------------------------------------
 * mr_agg.h
 *	  Running and final aggregates over the rows of a match, executed by
 *	  PostgreSQL's aggregate machinery (pg_aggregate transition and final
 *	  functions), never re-implemented.
 *
 * A match's aggregate is evaluated the way a window aggregate over a growing
 * frame is: the transition function is called once per row as rows are
 * appended, and the final function may be called after any row to read the
 * running value (so a RUNNING array_agg over a 100 000-row match is linear).
 * Functions are called with a WindowAggState as fcinfo->context, which is
 * what AggCheckCallContext() accepts as AGG_CONTEXT_WINDOW.  What to call
 * comes from the bind (MrAggDesc, mr_agg_desc.h).
 *-------------------------------------------------------------------------
 */
#ifndef MR_AGG_H
#define MR_AGG_H

#include "fmgr.h"

#include "mr_agg_desc.h"

typedef struct MrAggState MrAggState;	/* per evaluation: a transition value */

/*
 * Start a new transition value.  All memory of the state (including
 * pass-by-reference transition values and its function call state) lives
 * in `cxt`, which the caller resets or deletes to discard it.
 */
extern MrAggState *mr_agg_start(const MrAggDesc *desc, MemoryContext cxt);

/* reset the state to the initial value (reusing its memory context) */
extern void mr_agg_restart(const MrAggDesc *desc, MrAggState *state);

/* feed one row's argument values (desc->numArguments of them) */
extern void mr_agg_advance(const MrAggDesc *desc, MrAggState *state,
						   Datum *args, bool *nulls);

/*
 * The aggregate's value over the rows fed so far; may be called any number
 * of times between advances.  The result is valid until the next call on
 * this state (copy it with datumCopy if it must live longer).
 */
extern Datum mr_agg_result(const MrAggDesc *desc, MrAggState *state, bool *isnull);

#endif							/* MR_AGG_H */

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
 * what AggCheckCallContext() accepts as AGG_CONTEXT_WINDOW: aggregates whose
 * final function must not be called repeatedly (aggfinalmodify = 'w') are
 * rejected, exactly as PostgreSQL rejects them as window functions.
 *-------------------------------------------------------------------------
 */
#ifndef MR_AGG_H
#define MR_AGG_H

#include "postgres.h"

#include "fmgr.h"
#include "nodes/primnodes.h"

typedef struct MrAggDesc MrAggDesc;		/* per-query: functions and types */
typedef struct MrAggState MrAggState;	/* per-evaluation: a transition value */

/*
 * Prepare an aggregate call found in an analyzed expression.  The Aggref
 * must be a plain aggregate (aggkind 'n'); ordered-set/hypothetical ones,
 * DISTINCT and ORDER BY inside the call are rejected with 0A000.  FILTER is
 * allowed: aggfilter is evaluated by the caller, who then skips the row.
 * nargs is the number of direct arguments (0 for count(*)).  Everything is
 * allocated in the current memory context, which must live as long as the
 * query.
 */
extern MrAggDesc *mr_agg_prepare(Aggref *aggref);

/* number of argument values mr_agg_advance expects */
extern int	mr_agg_nargs(MrAggDesc *desc);

/*
 * Start a new transition value.  All memory of the state (including
 * pass-by-reference transition values) lives in `cxt`, which the caller
 * resets or deletes to discard it.
 */
extern MrAggState *mr_agg_start(MrAggDesc *desc, MemoryContext cxt);

/* reset the state to the initial value (reusing its memory context) */
extern void mr_agg_restart(MrAggDesc *desc, MrAggState *state);

/* feed one row's argument values (nargs of them) */
extern void mr_agg_advance(MrAggDesc *desc, MrAggState *state,
						   Datum *args, bool *nulls);

/*
 * The aggregate's value over the rows fed so far; may be called any number
 * of times between advances.  The result is valid until the next call on
 * this state (copy it with datumCopy if it must live longer).
 */
extern Datum mr_agg_result(MrAggDesc *desc, MrAggState *state, bool *isnull);

#endif							/* MR_AGG_H */

/*-------------------------------------------------------------------------
 * mr_agg_desc.h
 *	  What the bind knows of an aggregate over the rows of a match: the
 *	  functions pg_aggregate names for one call, its types and initial
 *	  value.  Plan-time data only: the runtime (mr_agg.h) keeps the
 *	  function call state and the transition values.
 *
 * A match's aggregate is evaluated the way a window aggregate over a growing
 * frame is, by PostgreSQL's own transition and final functions, never
 * re-implemented (see src/runtime/mr_agg.c).
 *-------------------------------------------------------------------------
 */
#ifndef MR_AGG_DESC_H
#define MR_AGG_DESC_H

#include "fmgr.h"
#include "nodes/primnodes.h"

typedef struct MrAggDesc
{
	Oid			aggfnoid;
	int			numArguments;	/* inputs passed to the transition function */
	int			numFinalArgs;	/* 1, or 1 + numArguments with FINALFUNC_EXTRA */
	Oid			collation;		/* input collation of the call */

	Oid			transfn_oid;
	Expr	   *transfn_expr;	/* its call over the actual argument types */
	bool		transfn_strict;
	Oid			finalfn_oid;	/* when hasFinalfn */
	Expr	   *finalfn_expr;
	bool		finalfn_strict;
	bool		hasFinalfn;

	Oid			transtype;
	int16		transtypeLen;
	bool		transtypeByVal;

	Datum		initValue;		/* in the bind's memory context */
	bool		initValueIsNull;
} MrAggDesc;

/*
 * Prepare an aggregate call found in an analyzed expression.  The Aggref
 * must be a plain aggregate (aggkind 'n'); ordered-set/hypothetical ones,
 * DISTINCT and ORDER BY inside the call are rejected with 0A000.  FILTER is
 * allowed: aggfilter is evaluated by the caller, who then skips the row.
 * Checks the permissions to execute the aggregate and its functions.
 * Allocates in the current memory context, which must live as long as the
 * bound query.
 */
extern MrAggDesc *mr_agg_prepare(Aggref *aggref);

#endif							/* MR_AGG_DESC_H */

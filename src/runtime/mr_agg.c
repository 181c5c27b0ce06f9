/*-------------------------------------------------------------------------
 * mr_agg.c
 *	  Running and final aggregates over the rows of a match (see mr_agg.h).
 *
 * Design: this is the per-aggregate part of nodeWindowAgg.c's handling of
 * plain aggregates over a growing frame, without the frame logic.  The
 * bind (mr_agg_desc.c) has read pg_aggregate; a state calls the functions
 * it names through FmgrInfos of its own, whose fn_expr describes the
 * actual argument types (so polymorphic transition and final functions
 * work).  A state owns two child contexts of the caller's context:
 *
 *	- aggcontext holds the transition value (and anything a transition
 *	  function with an `internal` state allocates there); it is what
 *	  AggCheckCallContext() hands out, through a private WindowAggState whose
 *	  curaggcontext points at it, so functions see AGG_CONTEXT_WINDOW;
 *	- tmpcontext is the per-call scratch context the transition and final
 *	  functions run in (like WindowAgg's per-tuple memory); it is reset at
 *	  the start of every advance and every result, which is why a result is
 *	  only valid until the next call on the state.
 *
 * A new pass-by-reference transition value is copied into aggcontext and the
 * old one freed, exactly as advance_windowaggregate() does, so each row costs
 * one transition call and the memory of a state does not grow with garbage.
 * Final functions may be called after any row, and transition calls may
 * follow (the bind admits only aggregates whose final function allows it).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/execnodes.h"
#include "utils/datum.h"
#include "utils/expandeddatum.h"
#include "utils/memutils.h"

#include "mr_agg.h"

struct MrAggState
{
	MemoryContext aggcontext;	/* transition value lives here */
	MemoryContext tmpcontext;	/* scratch for function calls */
	WindowAggState *winstate;	/* fcinfo->context for AggCheckCallContext */
	FmgrInfo	transfn;
	FmgrInfo	finalfn;
	FunctionCallInfo transfcinfo;
	FunctionCallInfo finalfcinfo;

	Datum		transValue;
	bool		transValueIsNull;
	bool		noTransValue;	/* no input seen yet with null initval */
};

/* set the transition value to the initial value; aggcontext is empty */
static void
init_trans_value(const MrAggDesc *desc, MrAggState *state)
{
	if (desc->initValueIsNull)
		state->transValue = (Datum) 0;
	else
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(state->aggcontext);

		state->transValue = datumCopy(desc->initValue,
									  desc->transtypeByVal,
									  desc->transtypeLen);
		MemoryContextSwitchTo(oldcxt);
	}
	state->transValueIsNull = desc->initValueIsNull;
	state->noTransValue = desc->initValueIsNull;
}

MrAggState *
mr_agg_start(const MrAggDesc *desc, MemoryContext cxt)
{
	MrAggState *state;
	MemoryContext oldcxt;

	oldcxt = MemoryContextSwitchTo(cxt);

	state = (MrAggState *) palloc0(sizeof(MrAggState));
	state->aggcontext = AllocSetContextCreate(cxt, "MATCH_RECOGNIZE aggregate",
											  ALLOCSET_SMALL_MINSIZE,
											  ALLOCSET_SMALL_INITSIZE,
											  ALLOCSET_DEFAULT_MAXSIZE);
	state->tmpcontext = AllocSetContextCreate(cxt, "MATCH_RECOGNIZE aggregate call",
											  ALLOCSET_SMALL_SIZES);

	state->winstate = makeNode(WindowAggState);
	state->winstate->aggcontext = state->aggcontext;

	fmgr_info(desc->transfn_oid, &state->transfn);
	fmgr_info_set_expr((Node *) desc->transfn_expr, &state->transfn);
	state->transfcinfo = (FunctionCallInfo)
		palloc0(SizeForFunctionCallInfo(desc->numArguments + 1));
	InitFunctionCallInfoData(*state->transfcinfo, &state->transfn,
							 desc->numArguments + 1, desc->collation,
							 (Node *) state->winstate, NULL);
	if (desc->hasFinalfn)
	{
		fmgr_info(desc->finalfn_oid, &state->finalfn);
		fmgr_info_set_expr((Node *) desc->finalfn_expr, &state->finalfn);
		state->finalfcinfo = (FunctionCallInfo)
			palloc0(SizeForFunctionCallInfo(desc->numFinalArgs));
		InitFunctionCallInfoData(*state->finalfcinfo, &state->finalfn,
								 desc->numFinalArgs, desc->collation,
								 (Node *) state->winstate, NULL);
	}

	MemoryContextSwitchTo(oldcxt);

	init_trans_value(desc, state);
	return state;
}

void
mr_agg_restart(const MrAggDesc *desc, MrAggState *state)
{
	MemoryContextReset(state->aggcontext);
	MemoryContextReset(state->tmpcontext);
	init_trans_value(desc, state);
}

void
mr_agg_advance(const MrAggDesc *desc, MrAggState *state,
			   Datum *args, bool *nulls)
{
	FunctionCallInfo fcinfo = state->transfcinfo;
	int			numArguments = desc->numArguments;
	MemoryContext oldcxt;
	Datum		newVal;
	int			i;

	if (desc->transfn_strict)
	{
		/* a strict transition function ignores rows with a null input */
		for (i = 0; i < numArguments; i++)
		{
			if (nulls[i])
				return;
		}

		if (state->noTransValue)
		{
			/*
			 * First non-null input with a null initial value: it becomes the
			 * transition value (binary-compatible, checked in prepare).
			 */
			oldcxt = MemoryContextSwitchTo(state->aggcontext);
			state->transValue = datumCopy(args[0],
										  desc->transtypeByVal,
										  desc->transtypeLen);
			state->transValueIsNull = false;
			state->noTransValue = false;
			MemoryContextSwitchTo(oldcxt);
			return;
		}

		/* the strict function returned null: stays null for good */
		if (state->transValueIsNull)
			return;
	}

	MemoryContextReset(state->tmpcontext);
	oldcxt = MemoryContextSwitchTo(state->tmpcontext);

	fcinfo->args[0].value = state->transValue;
	fcinfo->args[0].isnull = state->transValueIsNull;
	for (i = 0; i < numArguments; i++)
	{
		fcinfo->args[i + 1].value = args[i];
		fcinfo->args[i + 1].isnull = nulls[i];
	}
	fcinfo->isnull = false;

	state->winstate->curaggcontext = state->aggcontext;
	newVal = FunctionCallInvoke(fcinfo);
	state->winstate->curaggcontext = NULL;

	/*
	 * A new pass-by-reference value is copied into aggcontext (unless it is a
	 * read-write expanded object already living there) and the old one freed,
	 * as in advance_windowaggregate().
	 */
	if (!desc->transtypeByVal &&
		DatumGetPointer(newVal) != DatumGetPointer(state->transValue))
	{
		if (!fcinfo->isnull)
		{
			MemoryContextSwitchTo(state->aggcontext);
			if (DatumIsReadWriteExpandedObject(newVal, false,
											   desc->transtypeLen) &&
				MemoryContextGetParent(DatumGetEOHP(newVal)->eoh_context) == CurrentMemoryContext)
				 /* do nothing */ ;
			else
				newVal = datumCopy(newVal,
								   desc->transtypeByVal,
								   desc->transtypeLen);
		}
		if (!state->transValueIsNull)
		{
			if (DatumIsReadWriteExpandedObject(state->transValue, false,
											   desc->transtypeLen))
				DeleteExpandedObject(state->transValue);
			else
				pfree(DatumGetPointer(state->transValue));
		}
	}

	MemoryContextSwitchTo(oldcxt);

	state->transValue = newVal;
	state->transValueIsNull = fcinfo->isnull;
}

Datum
mr_agg_result(const MrAggDesc *desc, MrAggState *state, bool *isnull)
{
	FunctionCallInfo fcinfo;
	MemoryContext oldcxt;
	Datum		result;
	bool		anynull;
	int			i;

	MemoryContextReset(state->tmpcontext);

	if (!desc->hasFinalfn)
	{
		/* never let the caller get a read-write pointer to our state */
		*isnull = state->transValueIsNull;
		if (state->transValueIsNull)
			return (Datum) 0;
		return MakeExpandedObjectReadOnly(state->transValue, false,
										  desc->transtypeLen);
	}

	fcinfo = state->finalfcinfo;
	fcinfo->args[0].value = MakeExpandedObjectReadOnly(state->transValue,
													   state->transValueIsNull,
													   desc->transtypeLen);
	fcinfo->args[0].isnull = state->transValueIsNull;
	anynull = state->transValueIsNull;

	/* FINALFUNC_EXTRA: the extra arguments are nulls of the input types */
	for (i = 1; i < desc->numFinalArgs; i++)
	{
		fcinfo->args[i].value = (Datum) 0;
		fcinfo->args[i].isnull = true;
		anynull = true;
	}

	if (desc->finalfn_strict && anynull)
	{
		*isnull = true;
		return (Datum) 0;
	}

	oldcxt = MemoryContextSwitchTo(state->tmpcontext);
	fcinfo->isnull = false;
	state->winstate->curaggcontext = state->aggcontext;
	result = FunctionCallInvoke(fcinfo);
	state->winstate->curaggcontext = NULL;
	*isnull = fcinfo->isnull;
	MemoryContextSwitchTo(oldcxt);

	return result;
}

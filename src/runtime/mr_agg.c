/*-------------------------------------------------------------------------
 * mr_agg.c
 *	  Running and final aggregates over the rows of a match (see mr_agg.h).
 *
 * Design: this is the per-aggregate part of nodeWindowAgg.c's handling of
 * plain aggregates over a growing frame, without the frame logic.
 * mr_agg_prepare() reads pg_aggregate once per query, resolves a polymorphic
 * transition type and builds FmgrInfos whose fn_expr describes the actual
 * argument types (so polymorphic transition and final functions work).  A
 * state owns two child contexts of the caller's context:
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
 * follow; aggregates whose final function is not read-only (aggfinalmodify
 * 'w', or 's' which only permits repeated final calls on an ending state)
 * are rejected, as PostgreSQL rejects them as window functions.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_proc.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "parser/parse_agg.h"
#include "parser/parse_coerce.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/expandeddatum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "mr_agg.h"

struct MrAggDesc
{
	Oid			aggfnoid;
	int			numArguments;	/* inputs passed to the transition function */
	int			numFinalArgs;	/* 1, or 1 + numArguments with FINALFUNC_EXTRA */
	Oid			collation;		/* input collation of the call */

	FmgrInfo	transfn;
	FmgrInfo	finalfn;
	bool		hasFinalfn;

	Oid			transtype;
	int16		transtypeLen;
	bool		transtypeByVal;

	Datum		initValue;		/* in the query's context */
	bool		initValueIsNull;
};

struct MrAggState
{
	MemoryContext aggcontext;	/* transition value lives here */
	MemoryContext tmpcontext;	/* scratch for function calls */
	WindowAggState *winstate;	/* fcinfo->context for AggCheckCallContext */
	FunctionCallInfo transfcinfo;
	FunctionCallInfo finalfcinfo;

	Datum		transValue;
	bool		transValueIsNull;
	bool		noTransValue;	/* no input seen yet with null initval */
};

/* like nodeAgg.c's GetAggInitVal: text literal -> value of the transtype */
static Datum
mr_agg_init_value(Datum textInitVal, Oid transtype)
{
	Oid			typinput;
	Oid			typioparam;
	char	   *strInitVal;
	Datum		initVal;

	getTypeInputInfo(transtype, &typinput, &typioparam);
	strInitVal = TextDatumGetCString(textInitVal);
	initVal = OidInputFunctionCall(typinput, strInitVal, typioparam, -1);
	pfree(strInitVal);
	return initVal;
}

/* ExecInitAgg's permission check of a component function */
static void
check_component_fn(Oid fnoid, Oid aggOwner)
{
	AclResult	aclresult;

	aclresult = pg_proc_aclcheck(fnoid, aggOwner, ACL_EXECUTE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_FUNCTION, get_func_name(fnoid));
	InvokeFunctionExecuteHook(fnoid);
}

MrAggDesc *
mr_agg_prepare(Aggref *aggref)
{
	MrAggDesc  *desc;
	HeapTuple	aggTuple;
	HeapTuple	procTuple;
	Form_pg_aggregate aggform;
	Oid			aggOwner;
	Oid			transfn_oid;
	Oid			finalfn_oid;
	bool		finalfnExtraArgs;
	char		finalmodify;
	Oid			aggtranstype;
	Oid			inputTypes[FUNC_MAX_ARGS];
	int			numArguments;
	Expr	   *transfnexpr;
	Expr	   *finalfnexpr;
	Datum		textInitVal;
	bool		initIsNull;
	AclResult	aclresult;

	if (aggref->aggkind != AGGKIND_NORMAL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("ordered-set aggregate %s is not supported in MATCH_RECOGNIZE",
						format_procedure(aggref->aggfnoid))));
	if (aggref->aggdistinct != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("DISTINCT is not supported in aggregates in MATCH_RECOGNIZE")));
	if (aggref->aggorder != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("ORDER BY inside an aggregate call is not supported in MATCH_RECOGNIZE")));

	/* permission to call the aggregate, as in ExecInitAgg */
	aclresult = pg_proc_aclcheck(aggref->aggfnoid, GetUserId(), ACL_EXECUTE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_AGGREGATE,
					   get_func_name(aggref->aggfnoid));
	InvokeFunctionExecuteHook(aggref->aggfnoid);

	aggTuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggref->aggfnoid));
	if (!HeapTupleIsValid(aggTuple))
		elog(ERROR, "cache lookup failed for aggregate %u", aggref->aggfnoid);
	aggform = (Form_pg_aggregate) GETSTRUCT(aggTuple);

	transfn_oid = aggform->aggtransfn;
	finalfn_oid = aggform->aggfinalfn;
	finalfnExtraArgs = aggform->aggfinalextra;
	finalmodify = aggform->aggfinalmodify;

	/*
	 * The final function may run after every row and the transition function
	 * again after it, so it must leave the transition value alone: like
	 * initialize_peragg() for window aggregates, accept only READ_ONLY
	 * (SHAREABLE only allows repeated final calls on an ending state).
	 */
	if (finalmodify != AGGMODIFY_READ_ONLY)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("aggregate function %s does not support running evaluation in MATCH_RECOGNIZE",
						format_procedure(aggref->aggfnoid))));

	/* the aggregate owner must be allowed to call the component functions */
	procTuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(aggref->aggfnoid));
	if (!HeapTupleIsValid(procTuple))
		elog(ERROR, "cache lookup failed for function %u", aggref->aggfnoid);
	aggOwner = ((Form_pg_proc) GETSTRUCT(procTuple))->proowner;
	ReleaseSysCache(procTuple);

	check_component_fn(transfn_oid, aggOwner);
	if (OidIsValid(finalfn_oid))
		check_component_fn(finalfn_oid, aggOwner);

	/* actual input types, and the transition type they imply */
	numArguments = get_aggregate_argtypes(aggref, inputTypes);
	aggtranstype = resolve_aggregate_transtype(aggref->aggfnoid,
											   aggform->aggtranstype,
											   inputTypes,
											   numArguments);

	desc = (MrAggDesc *) palloc0(sizeof(MrAggDesc));
	desc->aggfnoid = aggref->aggfnoid;
	desc->numArguments = numArguments;
	desc->numFinalArgs = 1 + (finalfnExtraArgs ? numArguments : 0);
	desc->collation = aggref->inputcollid;
	desc->transtype = aggtranstype;
	get_typlenbyval(aggtranstype, &desc->transtypeLen, &desc->transtypeByVal);

	/* FmgrInfos with expression trees, for get_fn_expr_argtype() */
	build_aggregate_transfn_expr(inputTypes,
								 numArguments,
								 0,
								 aggref->aggvariadic,
								 aggtranstype,
								 aggref->inputcollid,
								 transfn_oid,
								 InvalidOid,
								 &transfnexpr,
								 NULL);
	fmgr_info(transfn_oid, &desc->transfn);
	fmgr_info_set_expr((Node *) transfnexpr, &desc->transfn);

	if (OidIsValid(finalfn_oid))
	{
		build_aggregate_finalfn_expr(inputTypes,
									 desc->numFinalArgs,
									 aggtranstype,
									 aggref->aggtype,
									 aggref->inputcollid,
									 finalfn_oid,
									 &finalfnexpr);
		fmgr_info(finalfn_oid, &desc->finalfn);
		fmgr_info_set_expr((Node *) finalfnexpr, &desc->finalfn);
		desc->hasFinalfn = true;
	}

	textInitVal = SysCacheGetAttr(AGGFNOID, aggTuple,
								  Anum_pg_aggregate_agginitval, &initIsNull);
	desc->initValueIsNull = initIsNull;
	desc->initValue = initIsNull ? (Datum) 0 :
		mr_agg_init_value(textInitVal, aggtranstype);

	ReleaseSysCache(aggTuple);

	/*
	 * A strict transition function with a null initial value takes the first
	 * non-null input as the transition value, so the input type must be
	 * binary-compatible with the transition type (CREATE AGGREGATE checks
	 * this too, but polymorphism can defeat that check, as in ExecInitAgg).
	 */
	if (desc->transfn.fn_strict && desc->initValueIsNull)
	{
		if (numArguments < 1 ||
			!IsBinaryCoercible(inputTypes[0], aggtranstype))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_FUNCTION_DEFINITION),
					 errmsg("aggregate %u needs to have compatible input type and transition type",
							aggref->aggfnoid)));
	}

	return desc;
}

int
mr_agg_nargs(MrAggDesc *desc)
{
	return desc->numArguments;
}

/* set the transition value to the initial value; aggcontext is empty */
static void
init_trans_value(MrAggDesc *desc, MrAggState *state)
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
mr_agg_start(MrAggDesc *desc, MemoryContext cxt)
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

	state->transfcinfo = (FunctionCallInfo)
		palloc0(SizeForFunctionCallInfo(desc->numArguments + 1));
	InitFunctionCallInfoData(*state->transfcinfo, &desc->transfn,
							 desc->numArguments + 1, desc->collation,
							 (Node *) state->winstate, NULL);
	if (desc->hasFinalfn)
	{
		state->finalfcinfo = (FunctionCallInfo)
			palloc0(SizeForFunctionCallInfo(desc->numFinalArgs));
		InitFunctionCallInfoData(*state->finalfcinfo, &desc->finalfn,
								 desc->numFinalArgs, desc->collation,
								 (Node *) state->winstate, NULL);
	}

	MemoryContextSwitchTo(oldcxt);

	init_trans_value(desc, state);
	return state;
}

void
mr_agg_restart(MrAggDesc *desc, MrAggState *state)
{
	MemoryContextReset(state->aggcontext);
	MemoryContextReset(state->tmpcontext);
	init_trans_value(desc, state);
}

void
mr_agg_advance(MrAggDesc *desc, MrAggState *state,
			   Datum *args, bool *nulls)
{
	FunctionCallInfo fcinfo = state->transfcinfo;
	int			numArguments = desc->numArguments;
	MemoryContext oldcxt;
	Datum		newVal;
	int			i;

	if (desc->transfn.fn_strict)
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
mr_agg_result(MrAggDesc *desc, MrAggState *state, bool *isnull)
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

	if (desc->finalfn.fn_strict && anynull)
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

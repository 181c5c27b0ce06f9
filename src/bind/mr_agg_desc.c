/*-------------------------------------------------------------------------
 * mr_agg_desc.c
 *	  The plan-time part of an aggregate over the rows of a match: what
 *	  pg_aggregate says about one aggregate call (see mr_agg_desc.h).
 *
 * mr_agg_prepare() reads pg_aggregate once per bind, checks the
 * permissions ExecInitAgg checks, resolves a polymorphic transition type
 * and builds the expression trees that tell polymorphic transition and
 * final functions their actual argument types.  Aggregates whose final
 * function is not read-only (aggfinalmodify 'w', or 's' which only permits
 * repeated final calls on an ending state) are rejected, as PostgreSQL
 * rejects them as window functions: the runtime (src/runtime/mr_agg.c)
 * calls the final function after any row and may call the transition
 * function again afterwards.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_proc.h"
#include "miscadmin.h"
#include "parser/parse_agg.h"
#include "parser/parse_coerce.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "mr_agg_desc.h"

/* like nodeAgg.c's GetAggInitVal: text literal -> value of the transtype */
static Datum
mr_agg_init_value(char *strInitVal, Oid transtype)
{
	Oid			typinput;
	Oid			typioparam;

	getTypeInputInfo(transtype, &typinput, &typioparam);
	return OidInputFunctionCall(typinput, strInitVal, typioparam, -1);
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

/*
 * The calls MATCH_RECOGNIZE cannot run (the lowering refuses them with a
 * position already; an analysis replayed from a view's parts comes here
 * unchecked), and the permission to call the aggregate, as in ExecInitAgg.
 */
static void
check_aggregate_call(Aggref *aggref)
{
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
	aclresult = pg_proc_aclcheck(aggref->aggfnoid, GetUserId(), ACL_EXECUTE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_AGGREGATE,
					   get_func_name(aggref->aggfnoid));
	InvokeFunctionExecuteHook(aggref->aggfnoid);
}

/*
 * What pg_aggregate says that the runtime needs, checked: the final
 * function may run after every row and the transition function again after
 * it, so it must leave the transition value alone (like initialize_peragg()
 * for window aggregates, accept only READ_ONLY: SHAREABLE only allows
 * repeated final calls on an ending state); the aggregate's owner must be
 * allowed to call its component functions.
 */
static void
read_aggregate(Aggref *aggref, MrAggDesc *desc, Oid *transtype, bool *finalextra,
			   char **init_text)
{
	HeapTuple	aggTuple;
	HeapTuple	procTuple;
	Form_pg_aggregate aggform;
	Oid			aggOwner;
	Datum		textInitVal;

	aggTuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggref->aggfnoid));
	if (!HeapTupleIsValid(aggTuple))
		elog(ERROR, "cache lookup failed for aggregate %u", aggref->aggfnoid);
	aggform = (Form_pg_aggregate) GETSTRUCT(aggTuple);
	if (aggform->aggfinalmodify != AGGMODIFY_READ_ONLY)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("aggregate function %s does not support running evaluation in MATCH_RECOGNIZE",
						format_procedure(aggref->aggfnoid))));

	procTuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(aggref->aggfnoid));
	if (!HeapTupleIsValid(procTuple))
		elog(ERROR, "cache lookup failed for function %u", aggref->aggfnoid);
	aggOwner = ((Form_pg_proc) GETSTRUCT(procTuple))->proowner;
	ReleaseSysCache(procTuple);
	check_component_fn(aggform->aggtransfn, aggOwner);
	if (OidIsValid(aggform->aggfinalfn))
		check_component_fn(aggform->aggfinalfn, aggOwner);

	desc->aggfnoid = aggref->aggfnoid;
	desc->transfn_oid = aggform->aggtransfn;
	desc->transfn_strict = func_strict(aggform->aggtransfn);
	desc->finalfn_oid = aggform->aggfinalfn;
	desc->hasFinalfn = OidIsValid(aggform->aggfinalfn);
	*transtype = aggform->aggtranstype;
	*finalextra = aggform->aggfinalextra;
	textInitVal = SysCacheGetAttr(AGGFNOID, aggTuple,
								  Anum_pg_aggregate_agginitval, &desc->initValueIsNull);
	/* its type is known once the transition type is resolved */
	*init_text = desc->initValueIsNull ? NULL : TextDatumGetCString(textInitVal);
	ReleaseSysCache(aggTuple);
}

MrAggDesc *
mr_agg_prepare(Aggref *aggref)
{
	MrAggDesc  *desc = (MrAggDesc *) palloc0(sizeof(MrAggDesc));
	Oid			declared_transtype;
	bool		finalfnExtraArgs;
	Oid			inputTypes[FUNC_MAX_ARGS];
	int			numArguments;
	Expr	   *transfnexpr;
	Expr	   *finalfnexpr;
	char	   *init_text;

	check_aggregate_call(aggref);
	read_aggregate(aggref, desc, &declared_transtype, &finalfnExtraArgs, &init_text);

	/* actual input types, and the transition type they imply */
	numArguments = get_aggregate_argtypes(aggref, inputTypes);
	desc->transtype = resolve_aggregate_transtype(aggref->aggfnoid, declared_transtype,
												  inputTypes, numArguments);
	desc->numArguments = numArguments;
	desc->numFinalArgs = 1 + (finalfnExtraArgs ? numArguments : 0);
	desc->collation = aggref->inputcollid;
	get_typlenbyval(desc->transtype, &desc->transtypeLen, &desc->transtypeByVal);
	if (!desc->initValueIsNull)
		desc->initValue = mr_agg_init_value(init_text, desc->transtype);

	/*
	 * The expression trees the runtime's FmgrInfos carry, for
	 * get_fn_expr_argtype() (polymorphic functions).
	 */
	build_aggregate_transfn_expr(inputTypes, numArguments, 0, aggref->aggvariadic,
								 desc->transtype, aggref->inputcollid,
								 desc->transfn_oid, InvalidOid, &transfnexpr, NULL);
	desc->transfn_expr = transfnexpr;
	if (desc->hasFinalfn)
	{
		build_aggregate_finalfn_expr(inputTypes, desc->numFinalArgs, desc->transtype,
									 aggref->aggtype, aggref->inputcollid,
									 desc->finalfn_oid, &finalfnexpr);
		desc->finalfn_expr = finalfnexpr;
		desc->finalfn_strict = func_strict(desc->finalfn_oid);
	}

	/*
	 * A strict transition function with a null initial value takes the first
	 * non-null input as the transition value, so the input type must be
	 * binary-compatible with the transition type (CREATE AGGREGATE checks
	 * this too, but polymorphism can defeat that check, as in ExecInitAgg).
	 */
	if (desc->transfn_strict && desc->initValueIsNull)
	{
		if (numArguments < 1 ||
			!IsBinaryCoercible(inputTypes[0], desc->transtype))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_FUNCTION_DEFINITION),
					 errmsg("aggregate %u needs to have compatible input type and transition type",
							aggref->aggfnoid)));
	}
	return desc;
}

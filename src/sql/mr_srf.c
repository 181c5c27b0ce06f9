/*-------------------------------------------------------------------------
 * mr_srf.c
 *	  match_recognize(query text [, VARIADIC params "any"]) RETURNS SETOF
 *	  record: the engine as a set-returning function.  $k in the query text
 *	  is the k-th argument after it.  The clause is bound once per call (its
 *	  names resolved as the call runs), the bound input query is planned and
 *	  run by the executor, its rows pushed into the runtime one at a time, and
 *	  result rows go to a tuplestore (materialize mode).  The custom scan node
 *	  replaces this path when the planner can use it.
 *
 *	  match_recognize_bound() (views) never runs here: its support function
 *	  turns it into the node's internal form; called any other way it fails.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupdesc.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "rewrite/rewriteHandler.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "mr_runtime.h"

PG_FUNCTION_INFO_V1(match_recognize);
PG_FUNCTION_INFO_V1(match_recognize_bound);
PG_FUNCTION_INFO_V1(match_recognize_bound_scan);
PG_FUNCTION_INFO_V1(match_recognize_slot);

typedef struct SrfSink
{
	Tuplestorestate *store;
	TupleDesc	desc;
} SrfSink;

static void
srf_emit(void *arg, Datum *values, bool *nulls, const MrEmitInfo *info)
{
	SrfSink    *sink = (SrfSink *) arg;

	tuplestore_putvalues(sink->store, sink->desc, values, nulls);
}

/* the input's rows go straight into the runtime */
typedef struct SrfInput
{
	DestReceiver pub;
	MrRuntime  *rt;
	MemoryContext cxt;
} SrfInput;

static bool
srf_input_receive(TupleTableSlot *slot, DestReceiver *self)
{
	SrfInput   *in = (SrfInput *) self;
	MemoryContext old = MemoryContextSwitchTo(in->cxt);

	mr_runtime_push(in->rt, slot);
	MemoryContextSwitchTo(old);
	return true;
}

static void
srf_input_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
srf_input_noop(DestReceiver *self)
{
}

/*
 * The statement parameters: the arguments after the query text, with the
 * types the call gives them (an unknown literal is text).
 */
static int
srf_params(FunctionCallInfo fcinfo, Oid **types, Datum **values, bool **nulls)
{
	int			n = PG_NARGS() - 1;
	int			i;

	if (n > 0 && get_fn_expr_variadic(fcinfo->flinfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("match_recognize() does not take its parameters as a VARIADIC array"),
				 errhint("Pass each parameter as an argument of its own after the query text.")));
	*types = palloc(sizeof(Oid) * Max(n, 1));
	*values = palloc(sizeof(Datum) * Max(n, 1));
	*nulls = palloc(sizeof(bool) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		Oid			t = get_fn_expr_argtype(fcinfo->flinfo, i + 1);

		if (!OidIsValid(t))
			ereport(ERROR,
					(errcode(ERRCODE_INDETERMINATE_DATATYPE),
					 errmsg("could not determine data type of parameter $%d of match_recognize()", i + 1)));
		(*nulls)[i] = PG_ARGISNULL(i + 1);
		(*values)[i] = (*nulls)[i] ? (Datum) 0 : PG_GETARG_DATUM(i + 1);
		if (t == UNKNOWNOID)
		{
			t = TEXTOID;
			if (!(*nulls)[i])
				(*values)[i] = CStringGetTextDatum(DatumGetCString((*values)[i]));
		}
		(*types)[i] = t;
	}
	return n;
}

Datum
match_recognize(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	text	   *arg;
	MrTextOrigin origin;
	MrBindOptions opts;
	Oid		   *types;
	Datum	   *values;
	bool	   *nulls;
	MrBoundQuery *q;
	MrRuntime  *rt;
	SrfSink		sink;
	SrfInput	input;
	List	   *rewritten;
	PlannedStmt *plan;
	QueryDesc  *qd;
	MemoryContext percall = CurrentMemoryContext;
	MemoryContext qcxt;
	MemoryContext old;

	/*
	 * A copy of the column definition list's descriptor: without the flag
	 * the descriptor is expectedDesc itself, which the executor frees after
	 * the call (FreeTupleDesc of a refcount -1 setDesc), so that the next
	 * call of the same scan (a rescan under a nested loop or LATERAL with
	 * arguments that change) would write into freed memory.
	 */
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	if (PG_ARGISNULL(0))
		return (Datum) 0;		/* no query, no rows (as a strict function) */
	arg = PG_GETARG_TEXT_PP(0);
	mr_text_origin_for_arg(fcinfo, 0, &origin);

	qcxt = AllocSetContextCreate(percall, "match_recognize query", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(qcxt);
	memset(&opts, 0, sizeof(opts));
	opts.nparams = srf_params(fcinfo, &types, &values, &nulls);
	opts.paramtypes = types;
	opts.paramvalues = values;
	opts.paramnulls = nulls;
	q = mr_query_bind(VARDATA_ANY(arg), VARSIZE_ANY_EXHDR(arg), &origin, &opts);
	mr_check_result_desc(rsinfo->setDesc, mr_query_result_desc(q));

	sink.store = rsinfo->setResult;
	sink.desc = rsinfo->setDesc;
	rt = mr_runtime_create(q, srf_emit, &sink);
	if (mr_enable_memo)
		mr_runtime_use_memo(rt, false);

	/* the bound input, ordered, rewritten and planned now */
	rewritten = QueryRewrite(mr_query_input(q, NULL));
	if (list_length(rewritten) != 1 ||
		linitial_node(Query, rewritten)->commandType != CMD_SELECT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a rule rewrote the input of MATCH_RECOGNIZE into something else")));
	plan = pg_plan_query(linitial_node(Query, rewritten), mr_query_text(q), 0, NULL);
	MemoryContextSwitchTo(old);

	memset(&input, 0, sizeof(input));
	input.pub.receiveSlot = srf_input_receive;
	input.pub.rStartup = srf_input_startup;
	input.pub.rShutdown = srf_input_noop;
	input.pub.rDestroy = srf_input_noop;
	input.pub.mydest = DestNone;
	input.rt = rt;
	input.cxt = qcxt;

	qd = CreateQueryDesc(plan, mr_query_text(q), GetActiveSnapshot(), InvalidSnapshot,
						 &input.pub, NULL, NULL, 0);
	ExecutorStart(qd, 0);
	ExecutorRun(qd, ForwardScanDirection, 0, true);
	ExecutorFinish(qd);
	ExecutorEnd(qd);
	FreeQueryDesc(qd);

	old = MemoryContextSwitchTo(qcxt);
	mr_runtime_finish(rt);
	mr_runtime_destroy(rt);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(qcxt);
	return (Datum) 0;
}

/*
 * match_recognize_bound(query text, VARIADIC parts boolean[]): a view's
 * bound query (match_recognize_create_view).  Its planner support function
 * (mr_scan_path.c) replaces the call by match_recognize_bound_scan(internal),
 * which only the MatchRecognize node runs; so reaching either function
 * means the call was not planned as a FROM item the node could take.
 */
static void
mr_bound_not_node(void) pg_attribute_noreturn();

static void
mr_bound_not_node(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("match_recognize_bound() can only run as a MatchRecognize plan node"),
			 errdetail("It is the form in which match_recognize_create_view() stores a query; call it only as a FROM item, as such views do.")));
}

Datum
match_recognize_bound(PG_FUNCTION_ARGS)
{
	mr_bound_not_node();
}

Datum
match_recognize_bound_scan(PG_FUNCTION_ARGS)
{
	mr_bound_not_node();
}

/* match_recognize_slot(k, type): stands for an engine parameter in a view */
Datum
match_recognize_slot(PG_FUNCTION_ARGS)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("match_recognize_slot() can only be used in the parts of match_recognize_bound()"),
			 errdetail("It stands for a value the MATCH_RECOGNIZE engine computes.")));
	PG_RETURN_NULL();
}

/*-------------------------------------------------------------------------
 * mr_scan_path.c
 *	  Recognise our calls in FROM and offer the MatchRecognize custom path.
 *
 * Text calls.  The set_rel_pathlist hook looks at function relations whose
 * only function is match_recognize(text [, params]) with a constant,
 * non-null text and no WITH ORDINALITY, whose parameter arguments can be
 * evaluated when the node starts (no column, subquery or executor
 * parameter, nothing volatile).  It binds the clause (raising the same
 * errors the function would, and recording the analyses), checks the column
 * definition list against the result row (the shared check), rewrites the
 * bound, ordered input query and plans it with subquery_planner in the same
 * PlannerGlobal; the statement parameters in the input become the call's
 * argument expressions.  Anything else leaves the function scan.
 *
 * Bound calls (views).  match_recognize_bound(text, VARIADIC parts
 * boolean[]) has its parts as EXISTS sublinks: the analysed input query and
 * fragments, engine parameters written as match_recognize_slot(k, NULL::t).
 * Its support function answers SupportRequestSimplify, which
 * preprocess_function_rtes sends before the planner turns sublinks into
 * subplans: it validates the parts (hand-written SQL can reach it),
 * decodes the slot markers back into parameters, keeps them in a
 * MrBoundCall registered for this planner run, and replaces the call by
 * match_recognize_bound_scan(<internal pointer to it>), which SQL cannot
 * write (a value of type internal) and which fails if ever executed.  The
 * hook accepts such a pointer only if it is registered for this
 * PlannerGlobal, replays the parts (no name is resolved), and must make the
 * node: anything that prevents it is an error.
 *
 * Both: one custom path is offered per distinct ordered input path worth
 * keeping (cheapest total, and cheapest startup, which LIMIT favours), and
 * the function scan paths are removed; when the clause and its input are
 * parallel safe and have a PARTITION BY, also a partial path whose
 * participants match a hash share of the partitions each
 * (mr_scan_parallel.c).  Every relation, function, operator
 * and type the analyses use becomes a plan dependency.
 *
 * The OIDs of our functions come from mr_functions() (mr_extension.c).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/planner.h"
#include "optimizer/prep.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteHandler.h"
#include "tcop/tcopprot.h"
#include "access/genam.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"
#include "fmgr.h"

#include "mr_api.h"
#include "match_recognize.h"
#include "mr_scan.h"
#include "mr_scan_remote.h"

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

/* ---------- bound calls: from the support function to the hook ---------- */

#define MR_BOUND_CALL_MAGIC 0x4d52424eU	/* "MRBN" */

typedef struct MrBoundCall
{
	uint32		magic;
	PlannerGlobal *glob;		/* the planner run it belongs to */
	char	   *text;
	List	   *parts;			/* Query nodes, slot markers decoded */
	MemoryContextCallback cb;
} MrBoundCall;

/* bound calls of the planner runs under way (cells in TopMemoryContext) */
static List *mr_bound_calls = NIL;

static void
mr_bound_call_forget(void *arg)
{
	mr_bound_calls = list_delete_ptr(mr_bound_calls, arg);
}

static void
mr_bound_bad_parts(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid parts of match_recognize_bound()"),
			 errdetail("%s", detail),
			 errhint("Create views with match_recognize_create_view(); do not write the parts of match_recognize_bound() by hand.")));
}

/* reject parameters and references to queries outside a part */
typedef struct PartCheckCtx
{
	int			depth;
} PartCheckCtx;

static bool
mr_part_check_walker(Node *node, PartCheckCtx *cx)
{
	if (node == NULL)
		return false;
	check_stack_depth();
	if (IsA(node, Query))
	{
		bool		r;

		cx->depth++;
		r = query_tree_walker((Query *) node, mr_part_check_walker, (void *) cx,
							  QTW_EXAMINE_RTES_BEFORE);
		cx->depth--;
		return r;
	}
	if (IsA(node, RangeTblEntry))
	{
		if (((RangeTblEntry *) node)->rtekind == RTE_CTE &&
			(int) ((RangeTblEntry *) node)->ctelevelsup > cx->depth)
			mr_bound_bad_parts("A part refers to a WITH query of the statement.");
		return false;
	}
	if (IsA(node, Param) && ((Param *) node)->paramkind != PARAM_SUBLINK)
		mr_bound_bad_parts("A part has a parameter: a view cannot have parameters.");
	if ((IsA(node, Var) && (int) ((Var *) node)->varlevelsup > cx->depth) ||
		(IsA(node, Aggref) && (int) ((Aggref *) node)->agglevelsup > cx->depth) ||
		(IsA(node, GroupingFunc) && (int) ((GroupingFunc *) node)->agglevelsup > cx->depth))
		mr_bound_bad_parts("A part refers to a column outside it.");
	return expression_tree_walker(node, mr_part_check_walker, (void *) cx);
}

/* match_recognize_slot(k, NULL::type) -> the engine parameter $k of that type */
static Node *
mr_decode_slots_mutator(Node *node, void *context)
{
	if (node == NULL)
		return NULL;
	check_stack_depth();
	/* a bound call nested in a part decodes its own parts when planned */
	if (IsA(node, FuncExpr) && ((FuncExpr *) node)->funcid == mr_functions()->bound)
		return copyObject(node);
	if (IsA(node, FuncExpr) && ((FuncExpr *) node)->funcid == mr_functions()->slot)
	{
		FuncExpr   *f = (FuncExpr *) node;
		Node	   *k = list_length(f->args) == 2 ? linitial(f->args) : NULL;
		Param	   *p;

		if (k == NULL || !IsA(k, Const) || ((Const *) k)->consttype != INT4OID ||
			((Const *) k)->constisnull || DatumGetInt32(((Const *) k)->constvalue) < 1)
			mr_bound_bad_parts("The first argument of match_recognize_slot() must be a positive integer constant.");
		p = makeNode(Param);
		p->paramkind = PARAM_EXTERN;
		p->paramid = DatumGetInt32(((Const *) k)->constvalue);
		p->paramtype = exprType(lsecond(f->args));
		p->paramtypmod = exprTypmod(lsecond(f->args));
		p->paramcollid = get_typcollation(p->paramtype);
		p->location = -1;
		return (Node *) p;
	}
	if (IsA(node, Query))
		return (Node *) query_tree_mutator((Query *) node, mr_decode_slots_mutator, context, 0);
	return expression_tree_mutator(node, mr_decode_slots_mutator, context);
}

/*
 * SupportRequestSimplify for match_recognize_bound(): take the parts out of
 * the call (see the file comment).
 */
static Node *
mr_bound_simplify(SupportRequestSimplify *req)
{
	FuncExpr   *f = req->fcall;
	Node	   *textarg;
	Node	   *parts;
	MrBoundCall *call;
	ListCell   *lc;
	FuncExpr   *scan;
	MemoryContext old;

	if (req->root == NULL)
		return NULL;			/* not planning: fails if it runs */
	if (list_length(f->args) != 2)
		mr_bound_bad_parts("match_recognize_bound() takes the query text and its parts.");
	textarg = linitial(f->args);
	parts = lsecond(f->args);
	if (!IsA(textarg, Const) || ((Const *) textarg)->consttype != TEXTOID ||
		((Const *) textarg)->constisnull)
		mr_bound_bad_parts("The query text must be a constant.");
	if (!IsA(parts, ArrayExpr) || ((ArrayExpr *) parts)->multidims)
		mr_bound_bad_parts("The parts must be written as EXISTS subqueries.");

	call = palloc0(sizeof(MrBoundCall));
	call->magic = MR_BOUND_CALL_MAGIC;
	call->glob = req->root->glob;
	call->text = TextDatumGetCString(((Const *) textarg)->constvalue);
	foreach(lc, ((ArrayExpr *) parts)->elements)
	{
		SubLink    *sl = (SubLink *) lfirst(lc);
		PartCheckCtx cx;

		if (!IsA(sl, SubLink) || sl->subLinkType != EXISTS_SUBLINK ||
			sl->testexpr != NULL || !IsA(sl->subselect, Query))
			mr_bound_bad_parts("The parts must be written as EXISTS subqueries.");
		cx.depth = -1;
		(void) mr_part_check_walker(sl->subselect, &cx);
		call->parts = lappend(call->parts,
							  mr_decode_slots_mutator(copyObject(sl->subselect), NULL));
	}
	if (call->parts == NIL)
		mr_bound_bad_parts("The parts must be written as EXISTS subqueries.");

	call->cb.func = mr_bound_call_forget;
	call->cb.arg = call;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &call->cb);
	old = MemoryContextSwitchTo(TopMemoryContext);
	mr_bound_calls = lappend(mr_bound_calls, call);
	MemoryContextSwitchTo(old);

	scan = makeFuncExpr(mr_functions()->bound_scan, RECORDOID,
						list_make1(makeConst(INTERNALOID, -1, InvalidOid, SIZEOF_DATUM,
											 PointerGetDatum(call), false, true)),
						InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	scan->funcretset = true;
	scan->location = f->location;
	return (Node *) scan;
}

/* the registered bound call an internal argument points to, or NULL */
static MrBoundCall *
mr_bound_call_of(PlannerInfo *root, Node *arg)
{
	ListCell   *lc;
	void	   *p;

	if (arg == NULL || !IsA(arg, Const) || ((Const *) arg)->consttype != INTERNALOID ||
		((Const *) arg)->constisnull)
		return NULL;
	p = DatumGetPointer(((Const *) arg)->constvalue);
	foreach(lc, mr_bound_calls)
		if (lfirst(lc) == p)
		{
			MrBoundCall *call = (MrBoundCall *) p;

			if (call->magic == MR_BOUND_CALL_MAGIC && call->glob == root->glob)
				return call;
		}
	return NULL;
}

/* ---------- recognising a call ---------- */

typedef struct MrCall
{
	RangeTblFunction *rtfunc;
	char	   *text;
	MrTextOrigin origin;
	List	   *params;			/* text call: the parameters' expressions */
	MrBoundCall *bound;			/* bound call */
} MrCall;

/*
 * Can a parameter argument be evaluated when the node starts, for every
 * execution, with the value the function would see?  Constants, statement
 * parameters and immutable or stable expressions of them.
 */
static bool
mr_param_arg_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	check_stack_depth();
	if (IsA(node, Var) || IsA(node, PlaceHolderVar) || IsA(node, SubPlan) ||
		IsA(node, AlternativeSubPlan) || IsA(node, SubLink) || IsA(node, Aggref) ||
		IsA(node, WindowFunc) || IsA(node, GroupingFunc) ||
		(IsA(node, Param) && ((Param *) node)->paramkind != PARAM_EXTERN))
		return true;
	return expression_tree_walker(node, mr_param_arg_walker, context);
}

/*
 * Is this RTE one of our calls?  A text call the node cannot take is left to
 * the function (false); a bound call is always ours (errors otherwise).
 */
static bool
mr_recognize_call(PlannerInfo *root, RangeTblEntry *rte, MrCall *call)
{
	const MrFunctionOids *fns;
	RangeTblFunction *rtfunc;
	FuncExpr   *fexpr;
	Node	   *arg;
	ListCell   *lc;

	memset(call, 0, sizeof(*call));
	call->origin.base = -1;
	if (rte->rtekind != RTE_FUNCTION || rte->functions == NIL)
		return false;
	fns = mr_functions();
	if (!OidIsValid(fns->text))
		return false;
	foreach(lc, rte->functions)
	{
		rtfunc = lfirst_node(RangeTblFunction, lc);
		if (IsA(rtfunc->funcexpr, FuncExpr) &&
			((FuncExpr *) rtfunc->funcexpr)->funcid == fns->bound_scan)
		{
			if (rte->funcordinality || list_length(rte->functions) != 1)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("match_recognize_bound() cannot be used in ROWS FROM or WITH ORDINALITY")));
			call->bound = mr_bound_call_of(root, linitial(((FuncExpr *) rtfunc->funcexpr)->args));
			if (call->bound == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid call of match_recognize_bound_scan()"),
						 errdetail("Only the planner calls it, with what match_recognize_bound() gave it.")));
			call->rtfunc = rtfunc;
			call->text = call->bound->text;
			return true;
		}
	}
	if (rte->funcordinality || list_length(rte->functions) != 1)
		return false;
	rtfunc = linitial_node(RangeTblFunction, rte->functions);
	if (!IsA(rtfunc->funcexpr, FuncExpr))
		return false;
	fexpr = (FuncExpr *) rtfunc->funcexpr;
	if (fexpr->funcid != fns->text && (fexpr->funcid != fns->text_params || fexpr->funcvariadic))
		return false;
	arg = linitial(fexpr->args);
	while (IsA(arg, RelabelType))
		arg = (Node *) ((RelabelType *) arg)->arg;
	if (!IsA(arg, Const) || ((Const *) arg)->constisnull)
		return false;
	for_each_from(lc, fexpr->args, 1)
	{
		Node	   *p = (Node *) lfirst(lc);

		if (mr_param_arg_walker(p, NULL) || contain_volatile_functions(p) ||
			expression_returns_set(p))
			return false;
		if (exprType(p) == UNKNOWNOID)
		{
			/* an unknown literal is text, as the function takes it */
			if (!IsA(p, Const))
				return false;
			p = (Node *) makeConst(TEXTOID, -1, DEFAULT_COLLATION_OID, -1,
								   ((Const *) p)->constisnull ? (Datum) 0 :
								   CStringGetTextDatum(DatumGetCString(((Const *) p)->constvalue)),
								   ((Const *) p)->constisnull, false);
		}
		call->params = lappend(call->params, p);
	}
	call->rtfunc = rtfunc;
	call->text = TextDatumGetCString(((Const *) arg)->constvalue);

	/* error positions: as the function would report them */
	{
		LOCAL_FCINFO(fcinfo, 1);
		FmgrInfo	flinfo;

		MemSet(&flinfo, 0, sizeof(flinfo));
		flinfo.fn_expr = rtfunc->funcexpr;
		InitFunctionCallInfoData(*fcinfo, &flinfo, 1, InvalidOid, NULL, NULL);
		mr_text_origin_for_arg(fcinfo, 0, &call->origin);
	}
	return true;
}

/* does the query need a whole-row or system column of this rel? */
static bool
mr_needs_whole_row(RelOptInfo *rel)
{
	Bitmapset  *attrs = NULL;
	ListCell   *lc;
	int			x = -1;

	pull_varattnos((Node *) rel->reltarget->exprs, rel->relid, &attrs);
	foreach(lc, rel->baserestrictinfo)
		pull_varattnos((Node *) lfirst_node(RestrictInfo, lc)->clause, rel->relid, &attrs);
	while ((x = bms_next_member(attrs, x)) >= 0)
		if (x + FirstLowInvalidHeapAttributeNumber <= 0)
			return true;
	return false;
}

/* what the cost model and filter pushdown need from the bound clause */
typedef struct MrScanShape
{
	Query	   *input;			/* ordered input query, to plan */
	List	   *analyses;		/* for the plan */
	bool		one_row;
	int			min_rows;
	int			nstates;		/* program instructions */
	int			ndefines;
	int			nmeasures;
	int			noutcols;
	int		   *part_input_col; /* per output column: its input column when it
								 * is a PARTITION BY column, else -1 */
	int			npartition;
	int		   *part_outcol;	/* per PARTITION BY key: its output column */
	Oid		   *part_collation; /* per PARTITION BY key: the input's collation */
	bool		input_clock;	/* mr_query_uses_input_clock() */
	MrScanParallelShape par;	/* for the parallel path */
} MrScanShape;

/*
 * Whether values of this column that the partition's equality calls equal
 * are identical: then a filter on the result's partition column (whose value
 * is the partition's first row's) may be applied to every input row instead.
 */
static bool
equality_is_identity(Form_pg_attribute a)
{
	switch (a->atttypid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case BOOLOID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case UUIDOID:
			return true;
		case TEXTOID:
		case VARCHAROID:
			return !OidIsValid(a->attcollation) ||
				get_collation_isdeterministic(a->attcollation);
		default:
			return false;
	}
}

/*
 * Bind the call's clause (text: record; bound: replay its parts), check the
 * column definition list, and keep what planning needs, in the current
 * context; the rest of the bind is thrown away (the node binds again, by
 * replay, when it starts).
 */
static void
mr_compile_shape(const MrCall *call, MrScanShape *shape)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "match_recognize planning",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	RangeTblFunction *rtfunc = call->rtfunc;
	MrBindOptions opts;
	Oid		   *types;
	MrBoundQuery *q;
	const MrClause *clause;
	TupleDesc	input_desc;
	const int  *partition_cols;
	int			npartition;
	ListCell   *lc;
	int			i = 0;

	memset(&opts, 0, sizeof(opts));
	types = palloc(sizeof(Oid) * Max(list_length(call->params), 1));
	foreach(lc, call->params)
		types[i++] = exprType((Node *) lfirst(lc));
	opts.nparams = list_length(call->params);
	opts.paramtypes = types;
	if (call->bound)
	{
		opts.replay = call->bound->parts;
		opts.replay_rewritten = true;
	}
	q = mr_query_bind(call->text, strlen(call->text), &call->origin, &opts);
	mr_check_result_desc(BuildDescFromLists(rtfunc->funccolnames, rtfunc->funccoltypes,
											rtfunc->funccoltypmods,
											rtfunc->funccolcollations),
						 mr_query_result_desc(q));

	MemoryContextSwitchTo(old);
	if (call->params != NIL)
	{
		Node	  **repl = palloc(sizeof(Node *) * list_length(call->params));

		i = 0;
		foreach(lc, call->params)
			repl[i++] = (Node *) lfirst(lc);
		shape->input = mr_query_input(q, repl);
	}
	else
		shape->input = mr_query_input(q, NULL);
	shape->analyses = copyObject(mr_query_analyses(q));
	clause = mr_query_clause(q);
	input_desc = mr_query_input_desc(q);
	npartition = mr_query_partition_cols(q, &partition_cols);
	shape->one_row = clause->rows_per_match == MR_ONE_ROW;
	shape->min_rows = mr_query_program(q)->min_rows;
	shape->nstates = mr_query_program(q)->ninsts;
	shape->ndefines = clause->ndefines;
	shape->nmeasures = clause->nmeasures;
	shape->noutcols = mr_query_result_desc(q)->natts;
	shape->part_input_col = palloc(sizeof(int) * Max(shape->noutcols, 1));
	for (i = 0; i < shape->noutcols; i++)
	{
		int			k;

		shape->part_input_col[i] = -1;
		for (k = 0; k < npartition; k++)
			if (mr_query_output_column_source(q, i) == partition_cols[k] &&
				equality_is_identity(TupleDescAttr(input_desc, partition_cols[k])))
				shape->part_input_col[i] = partition_cols[k];
	}
	shape->npartition = npartition;
	shape->input_clock = mr_query_uses_input_clock(q);
	shape->par.analyses = shape->analyses;
	shape->par.npartition = npartition;
	shape->par.partition_cols = memcpy(palloc(sizeof(int) * Max(npartition, 1)),
									   partition_cols, sizeof(int) * npartition);
	shape->par.levels = mr_query_is_levels(q);
	shape->par.input_clock = shape->input_clock;
	shape->par.has_subqueries = mr_query_has_subqueries(q);
	shape->part_outcol = palloc(sizeof(int) * Max(npartition, 1));
	shape->part_collation = palloc(sizeof(Oid) * Max(npartition, 1));
	for (i = 0; i < npartition; i++)
	{
		int			k;

		shape->part_outcol[i] = -1;
		for (k = 0; k < shape->noutcols; k++)
			if (mr_query_output_column_source(q, k) == partition_cols[i])
				shape->part_outcol[i] = k;
		shape->part_collation[i] = TupleDescAttr(input_desc, partition_cols[i])->attcollation;
	}
	MemoryContextDelete(cxt);
}

/* types used anywhere in the analyses: ALTER TYPE replans */
static bool
mr_type_deps_walker(Node *node, PlannerInfo *root)
{
	if (node == NULL)
		return false;
	check_stack_depth();
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, mr_type_deps_walker, (void *) root, 0);
	switch (nodeTag(node))
	{
		case T_Var:
		case T_Const:
		case T_Param:
		case T_Aggref:
		case T_FuncExpr:
		case T_OpExpr:
		case T_RelabelType:
		case T_CoerceViaIO:
		case T_ArrayCoerceExpr:
		case T_ConvertRowtypeExpr:
		case T_CoerceToDomain:
		case T_RowExpr:
		case T_ArrayExpr:
		case T_FieldSelect:
		case T_CaseExpr:
		case T_CoalesceExpr:
		case T_MinMaxExpr:
			record_plan_type_dependency(root, exprType(node));
			break;
		default:
			break;
	}
	return expression_tree_walker(node, mr_type_deps_walker, (void *) root);
}

/*
 * Make everything the analyses use a dependency of the plan, as the planner
 * does for the statement's own expressions (extract_query_dependencies:
 * relations, functions, operators' functions, row security), plus types.
 */
static void
mr_record_dependencies(PlannerInfo *root, List *analyses)
{
	ListCell   *lc;

	foreach(lc, analyses)
	{
		List	   *rels = NIL;
		List	   *items = NIL;
		bool		rls = false;

		extract_query_dependencies((Node *) lfirst(lc), &rels, &items, &rls);
		root->glob->relationOids = list_concat(root->glob->relationOids, rels);
		root->glob->invalItems = list_concat(root->glob->invalItems, items);
		if (rls)
			root->glob->dependsOnRole = true;
		(void) mr_type_deps_walker((Node *) lfirst(lc), root);
	}
}

/* ---------- pushing filters on PARTITION BY columns into the input ---------- */

typedef struct PushCtx
{
	Index		relid;
	const MrScanShape *shape;
	List	   *input_tlist;
	bool		ok;
} PushCtx;

/* are all Vars of the clause partition columns of our rel, with no exec Params? */
static bool
pushable_walker(Node *node, PushCtx *cx)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;

		if (v->varno != (int) cx->relid || v->varlevelsup != 0 || v->varattno <= 0 ||
			v->varattno > cx->shape->noutcols ||
			cx->shape->part_input_col[v->varattno - 1] < 0)
			cx->ok = false;
		return false;
	}
	if (IsA(node, Param) && ((Param *) node)->paramkind != PARAM_EXTERN)
	{
		cx->ok = false;
		return false;
	}
	if (IsA(node, PlaceHolderVar) || IsA(node, SubPlan) || IsA(node, AlternativeSubPlan) ||
		IsA(node, SubLink) || IsA(node, Aggref) || IsA(node, WindowFunc) ||
		IsA(node, GroupingFunc))
	{
		cx->ok = false;
		return false;
	}
	return expression_tree_walker(node, pushable_walker, (void *) cx);
}

/* the clause over the input query's columns */
static Node *
push_mutator(Node *node, PushCtx *cx)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;
		TargetEntry *tle = list_nth_node(TargetEntry, cx->input_tlist,
										 cx->shape->part_input_col[v->varattno - 1]);

		return (Node *) copyObject(tle->expr);
	}
	return expression_tree_mutator(node, push_mutator, (void *) cx);
}

/*
 * Partitions are matched independently, so a filter that reads only
 * PARTITION BY columns of the result can filter the input instead: the
 * input's planner can then use it for an index condition and the node reads
 * only the partitions asked for.  The filter also stays on the node (a cheap
 * recheck).  Returns the clauses left to estimate the node's own selectivity.
 */
static List *
mr_push_partition_filters(RelOptInfo *rel, const MrScanShape *shape, Query *inq)
{
	List	   *rest = NIL;
	ListCell   *lc;
	PushCtx		cx;

	cx.relid = rel->relid;
	cx.shape = shape;
	cx.input_tlist = inq->targetList;
	if (inq->setOperations || inq->groupClause || inq->groupingSets ||
		inq->hasAggs || inq->hasWindowFuncs || inq->hasTargetSRFs ||
		inq->distinctClause || inq->limitCount || inq->limitOffset ||
		inq->havingQual || inq->rowMarks || shape->input_clock)
		return rel->baserestrictinfo;
	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);
		Node	   *clause = (Node *) ri->clause;

		cx.ok = !ri->pseudoconstant && !contain_volatile_functions(clause);
		if (cx.ok)
			(void) pushable_walker(clause, &cx);
		if (!cx.ok)
		{
			rest = lappend(rest, ri);
			continue;
		}
		inq->jointree->quals = make_and_qual(inq->jointree->quals,
											 push_mutator(copyObject(clause), &cx));
	}
	return rest;
}

/*
 * The node's output order: partitions arrive in the input's order, which is
 * ascending (NULLS LAST) on the PARTITION BY keys under their default btree
 * opclass and the input column's collation.  Within a partition the order
 * depends on the matches, so only the partition keys are claimed, and only
 * while the result column compares like the input column (same collation).
 */
static List *
mr_output_pathkeys(PlannerInfo *root, RelOptInfo *rel, RangeTblFunction *rtfunc,
				   const MrScanShape *shape)
{
	List	   *pathkeys = NIL;
	int			i;

	if (shape->input_clock)
		return NIL;				/* decisions wait for the end of the input */
	for (i = 0; i < shape->npartition; i++)
	{
		int			col = shape->part_outcol[i];
		Oid			type;
		Oid			coll;
		TypeCacheEntry *tce;
		Var		   *v;
		List	   *pk;

		if (col < 0 || col >= list_length(rtfunc->funccoltypes))
			break;
		type = list_nth_oid(rtfunc->funccoltypes, col);
		coll = list_nth_oid(rtfunc->funccolcollations, col);
		if (coll != shape->part_collation[i])
			break;
		tce = lookup_type_cache(type, TYPECACHE_LT_OPR);
		if (!OidIsValid(tce->lt_opr))
			break;
		v = makeVar(rel->relid, col + 1, type, list_nth_int(rtfunc->funccoltypmods, col),
					coll, 0);
		pk = build_expression_pathkey(root, (Expr *) v, NULL, tce->lt_opr,
									  rel->relids, true);
		if (pk == NIL)
			break;
		pathkeys = list_concat(pathkeys, pk);
	}
	return truncate_useless_pathkeys(root, rel, pathkeys);
}

static MrScanPath *
mr_make_path(PlannerInfo *root, RelOptInfo *rel, const MrScanShape *shape,
			 const MrCall *call, PlannerInfo *subroot,
			 Path *subpath, double out_tuples, List *pathkeys)
{
	MrScanPath *p = (MrScanPath *) newNode(sizeof(MrScanPath), T_CustomPath);
	double		in_rows = subpath->rows;
	Cost		per_in_row;
	QualCost	qual;

	p->cpath.path.pathtype = T_CustomScan;
	p->cpath.path.parent = rel;
	p->cpath.path.pathtarget = rel->reltarget;
	p->cpath.path.param_info = NULL;
	p->cpath.path.parallel_aware = false;
	p->cpath.path.parallel_safe = false;
	p->cpath.path.parallel_workers = 0;
	p->cpath.path.pathkeys = pathkeys;
	p->cpath.path.rows = rel->rows;

	/*
	 * The input streams through: no startup beyond the input's.  Per input
	 * row: keeping it in the window, and evaluating each DEFINE and walking
	 * the pattern's states; per output row: MEASURES and the scan's quals.
	 */
	cost_qual_eval(&qual, rel->baserestrictinfo, root);
	per_in_row = cpu_tuple_cost + cpu_operator_cost * (shape->ndefines + shape->nstates);
	p->cpath.path.startup_cost = subpath->startup_cost + qual.startup;
	p->cpath.path.total_cost = subpath->total_cost + qual.startup +
		in_rows * per_in_row +
		out_tuples * (cpu_tuple_cost + cpu_operator_cost * shape->nmeasures + qual.per_tuple) +
		rel->rows * rel->reltarget->cost.per_tuple;

	p->cpath.flags = 0;
	p->cpath.custom_paths = NIL;
	p->cpath.custom_private = NIL;
	p->cpath.methods = &mr_scan_path_methods;
	p->text = pstrdup(call->text);
	p->origin_base = call->origin.base;
	p->subroot = subroot;
	p->subpath = subpath;
	p->analyses = shape->analyses;
	p->rewritten = call->bound != NULL;
	p->params = call->params;
	p->parallel = NIL;
	return p;
}

/* a bound call that cannot run as the node: it cannot run at all */
static void
mr_bound_cannot(const char *detail, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("match_recognize_bound() can only run as a MatchRecognize plan node"),
			 errdetail("%s", detail),
			 hint ? errhint("%s", hint) : 0));
}

static void
mr_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
					RangeTblEntry *rte)
{
	MrCall		call;
	MrScanShape shape;
	Query	   *inq;
	List	   *rewritten;
	PlannerInfo *subroot;
	RelOptInfo *final_rel;
	Path	   *total;
	Path	   *startup;
	double		in_rows;
	double		out_tuples;
	List	   *own_quals;
	List	   *pathkeys;
	bool		bound;
	Query	   *remote_inq;
	Query	   *par_input = NULL;

	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);

	if (!mr_recognize_call(root, rte, &call))
		return;
	bound = call.bound != NULL;
	if (!mr_enable_custom_scan)
	{
		if (bound)
			mr_bound_cannot("match_recognize.enable_custom_scan is off.",
							"Set match_recognize.enable_custom_scan to on to read views made by match_recognize_create_view().");
		return;
	}
	if ((rel->reloptkind != RELOPT_BASEREL && rel->reloptkind != RELOPT_OTHER_MEMBER_REL) ||
		!bms_is_empty(rel->lateral_relids))
	{
		if (bound)
			mr_bound_cannot("The call is not a plain FROM item here.", NULL);
		return;
	}
	if (mr_needs_whole_row(rel))
	{
		if (bound)
			mr_bound_cannot("The statement uses the result row as a whole (or a system column).",
							"Refer to the result's columns instead.");
		return;
	}

	mr_compile_shape(&call, &shape);

	/* the input: rewritten now, unless the rewriter already did (views) */
	inq = shape.input;
	if (!bound)
	{
		rewritten = QueryRewrite(inq);
		if (list_length(rewritten) != 1 ||
			linitial_node(Query, rewritten)->commandType != CMD_SELECT ||
			linitial_node(Query, rewritten)->utilityStmt != NULL)
			return;
		inq = linitial_node(Query, rewritten);
	}
	mr_record_dependencies(root, shape.analyses);

	/*
	 * The statement's own query does not show the input's row security
	 * policies to the plan cache: make a cached plan valid for this role only.
	 */
	if (inq->hasRowSecurity)
		root->glob->dependsOnRole = true;
	own_quals = mr_push_partition_filters(rel, &shape, inq);
	remote_inq = mr_enable_remote_append && mr_remote_candidate(inq) ? copyObject(inq) : NULL;
	/* planning scribbles on the query: the parallel path plans a copy */
	if (mr_scan_parallel_candidate(root, rel, &shape.par, inq, call.params))
		par_input = copyObject(inq);
	subroot = subquery_planner(root->glob, inq, root, false, 0.0);
	final_rel = fetch_upper_rel(subroot, UPPERREL_FINAL, NULL);
	total = final_rel->cheapest_total_path;
	startup = final_rel->cheapest_startup_path;
	if (total == NULL)
	{
		if (bound)
			mr_bound_cannot("The input query has no plan.", NULL);
		return;
	}

	/* row estimate: one row per match needs at least min_rows input rows */
	in_rows = total->rows;
	if (shape.one_row)
		out_tuples = clamp_row_est(in_rows / (Max(shape.min_rows, 1) + 1));
	else
		out_tuples = clamp_row_est(in_rows);
	rel->tuples = out_tuples;
	rel->rows = clamp_row_est(out_tuples *
							  clauselist_selectivity(root, own_quals,
													 0, JOIN_INNER, NULL));

	/* the node replaces the function scan */
	rel->pathlist = NIL;
	rel->partial_pathlist = NIL;
	pathkeys = rel->reloptkind == RELOPT_BASEREL ?
		mr_output_pathkeys(root, rel, call.rtfunc, &shape) : NIL;
	add_path(rel, (Path *) mr_make_path(root, rel, &shape, &call,
										subroot, total, out_tuples, pathkeys));
	if (startup != NULL && startup != total)
		add_path(rel, (Path *) mr_make_path(root, rel, &shape, &call,
											subroot, startup, out_tuples, pathkeys));
	if (remote_inq != NULL)		/* partitions on other servers: mr_scan_remote.c */
		mr_remote_add_path(root, rel, call.rtfunc, call.text, call.params,
						   bound ? call.bound->parts : NIL, remote_inq, subroot, total);
	if (par_input)
		mr_scan_parallel_add_path(root, rel, &shape.par,
								  mr_make_path(root, rel, &shape, &call, subroot,
											   total, out_tuples, NIL),
								  par_input);
}

void
mr_scan_init(void)
{
	RegisterCustomScanMethods(&mr_scan_plan_methods);
	mr_remote_init();
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = mr_set_rel_pathlist;
}

/*
 * match_recognize_support(internal): the planner support function of
 * match_recognize() and match_recognize_bound().  Being called while the
 * planner simplifies or estimates the call loads this library, so the
 * set_rel_pathlist hook is in place before paths are chosen even on a
 * session's first query.  For match_recognize_bound() it answers
 * SupportRequestSimplify (mr_bound_simplify).
 */
PG_FUNCTION_INFO_V1(match_recognize_support);

Datum
match_recognize_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);

	if (IsA(rawreq, SupportRequestSimplify))
	{
		SupportRequestSimplify *req = (SupportRequestSimplify *) rawreq;
		const MrFunctionOids *fns = mr_functions();

		if (OidIsValid(fns->bound) && req->fcall->funcid == fns->bound)
			PG_RETURN_POINTER(mr_bound_simplify(req));
	}
	PG_RETURN_POINTER(NULL);
}

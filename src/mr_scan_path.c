/*-------------------------------------------------------------------------
 * mr_scan_path.c
 *	  Recognise match_recognize('<constant text>') in FROM and offer the
 *	  MatchRecognize custom path for it.
 *
 * The set_rel_pathlist hook looks at function base relations whose only
 * function is our match_recognize(text) with a constant, non-null argument
 * and no WITH ORDINALITY.  It compiles the clause (raising the same errors
 * the function would), checks the column definition list against the
 * result type (a mismatch leaves the function scan, which reports it),
 * parses, analyses and rewrites the ordered input query and plans it with
 * subquery_planner in the same PlannerGlobal.  One custom path is offered
 * per distinct ordered input path worth keeping (cheapest total, and
 * cheapest startup, which LIMIT favours), and the function scan paths are
 * removed: the node produces the same rows, streaming.
 *
 * The OID of match_recognize(text) is looked up in the extension's schema
 * once per backend and forgotten on any pg_proc invalidation (the extension
 * may be dropped, recreated or not exist at all).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "optimizer/prep.h"
#include "parser/parsetree.h"
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

#include "mr_bind.h"
#include "match_recognize.h"
#include "mr_scan.h"

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

/* cached OID of match_recognize(text); valid only when mr_fn_oid_known */
static Oid	mr_fn_oid = InvalidOid;
static bool mr_fn_oid_known = false;

static void
mr_fn_oid_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	mr_fn_oid_known = false;
}

/* OID of our match_recognize(text), or InvalidOid without the extension */
static Oid
mr_function_oid(void)
{
	if (!mr_fn_oid_known)
	{
		Oid			ext = get_extension_oid("match_recognize", true);

		mr_fn_oid = InvalidOid;
		if (OidIsValid(ext))
		{
			Oid			nsp = mr_extension_schema(ext);
			Oid			argtypes[1] = {TEXTOID};

			mr_fn_oid = GetSysCacheOid3(PROCNAMEARGSNSP, Anum_pg_proc_oid,
										CStringGetDatum("match_recognize"),
										PointerGetDatum(buildoidvector(argtypes, 1)),
										ObjectIdGetDatum(nsp));
		}
		mr_fn_oid_known = true;
	}
	return mr_fn_oid;
}

/* the constant text argument when rte is a plain call of ours, else NULL */
static Const *
mr_call_argument(RangeTblEntry *rte, RangeTblFunction **rtfunc_out)
{
	RangeTblFunction *rtfunc;
	FuncExpr   *fexpr;
	Node	   *arg;
	Oid			fn;

	if (rte->rtekind != RTE_FUNCTION || rte->funcordinality ||
		list_length(rte->functions) != 1)
		return NULL;
	rtfunc = linitial_node(RangeTblFunction, rte->functions);
	if (!IsA(rtfunc->funcexpr, FuncExpr))
		return NULL;
	fexpr = (FuncExpr *) rtfunc->funcexpr;
	if (list_length(fexpr->args) != 1)
		return NULL;
	fn = mr_function_oid();
	if (!OidIsValid(fn) || fexpr->funcid != fn)
		return NULL;
	arg = linitial(fexpr->args);
	while (IsA(arg, RelabelType))
		arg = (Node *) ((RelabelType *) arg)->arg;
	if (!IsA(arg, Const) || ((Const *) arg)->constisnull)
		return NULL;
	*rtfunc_out = rtfunc;
	return (Const *) arg;
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

/* what the cost model and filter pushdown need from the compiled clause */
typedef struct MrScanShape
{
	char	   *input_sql;
	bool		one_row;
	int			min_rows;
	int			nstates;		/* program instructions */
	int			ndefines;
	int			nmeasures;
	bool		types_ok;
	int			noutcols;
	int		   *part_input_col; /* per output column: its input column when it
								 * is a PARTITION BY column, else -1 */
	int			npartition;
	int		   *part_outcol;	/* per PARTITION BY key: its output column */
	Oid		   *part_collation; /* per PARTITION BY key: the input's collation */
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

static void
mr_compile_shape(const char *text, int len, const MrTextOrigin *origin,
				 RangeTblFunction *rtfunc, MrScanShape *shape)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "match_recognize planning",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	MrQuery    *q = mr_query_compile(text, len, origin);
	TupleDesc	desc = mr_query_result_desc(q);
	ListCell   *lc;
	int			i = 0;

	MemoryContextSwitchTo(old);
	shape->types_ok = list_length(rtfunc->funccoltypes) == desc->natts;
	if (shape->types_ok)
		foreach(lc, rtfunc->funccoltypes)
		{
			if (lfirst_oid(lc) != TupleDescAttr(desc, i)->atttypid)
				shape->types_ok = false;
			i++;
		}
	shape->input_sql = pstrdup(q->input_sql);
	shape->one_row = q->clause->rows_per_match == MR_ONE_ROW;
	shape->min_rows = q->program->min_rows;
	shape->nstates = q->program->ninsts;
	shape->ndefines = q->clause->ndefines;
	shape->nmeasures = q->clause->nmeasures;
	shape->noutcols = q->noutcols;
	shape->part_input_col = palloc(sizeof(int) * Max(q->noutcols, 1));
	for (i = 0; i < q->noutcols; i++)
	{
		int			k;

		shape->part_input_col[i] = -1;
		for (k = 0; k < q->npartition; k++)
			if (q->outcols[i].input_column == q->partition_cols[k] &&
				equality_is_identity(TupleDescAttr(q->input_desc, q->partition_cols[k])))
				shape->part_input_col[i] = q->partition_cols[k];
	}
	shape->npartition = q->npartition;
	shape->part_outcol = palloc(sizeof(int) * Max(q->npartition, 1));
	shape->part_collation = palloc(sizeof(Oid) * Max(q->npartition, 1));
	for (i = 0; i < q->npartition; i++)
	{
		int			k;

		shape->part_outcol[i] = -1;
		for (k = 0; k < q->noutcols; k++)
			if (q->outcols[k].input_column == q->partition_cols[i])
				shape->part_outcol[i] = k;
		shape->part_collation[i] = TupleDescAttr(q->input_desc, q->partition_cols[i])->attcollation;
	}
	MemoryContextDelete(cxt);
}

/* the input query, parsed, analysed, rewritten; NULL when not one SELECT */
static Query *
mr_input_query(const char *sql)
{
	List	   *raw = pg_parse_query(sql);
	List	   *queries;
	Query	   *q;

	if (list_length(raw) != 1)
		return NULL;
	queries = pg_analyze_and_rewrite_fixedparams(linitial_node(RawStmt, raw), sql,
												 NULL, 0, NULL);
	if (list_length(queries) != 1)
		return NULL;
	q = linitial_node(Query, queries);
	if (q->commandType != CMD_SELECT || q->utilityStmt != NULL)
		return NULL;
	return q;
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

		if (v->varno != cx->relid || v->varlevelsup != 0 || v->varattno <= 0 ||
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
		inq->havingQual || inq->rowMarks)
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
			 const char *text, int origin_base, PlannerInfo *subroot,
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
	p->text = pstrdup(text);
	p->origin_base = origin_base;
	p->subroot = subroot;
	p->subpath = subpath;
	return p;
}

static void
mr_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
					RangeTblEntry *rte)
{
	RangeTblFunction *rtfunc = NULL;
	Const	   *arg;
	text	   *t;
	MrTextOrigin origin;
	MrScanShape shape;
	Query	   *inq;
	PlannerInfo *subroot;
	RelOptInfo *final_rel;
	Path	   *total;
	Path	   *startup;
	double		in_rows;
	double		out_tuples;
	char	   *fromtext;
	List	   *own_quals;
	List	   *pathkeys;

	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);

	if (!mr_enable_custom_scan || rel->reloptkind != RELOPT_BASEREL ||
		!bms_is_empty(rel->lateral_relids))
		return;
	arg = mr_call_argument(rte, &rtfunc);
	if (arg == NULL || mr_needs_whole_row(rel))
		return;

	t = DatumGetTextPP(arg->constvalue);
	fromtext = text_to_cstring(t);

	/* error positions: as the function would report them */
	{
		LOCAL_FCINFO(fcinfo, 1);
		FmgrInfo	flinfo;

		MemSet(&flinfo, 0, sizeof(flinfo));
		flinfo.fn_expr = rtfunc->funcexpr;
		InitFunctionCallInfoData(*fcinfo, &flinfo, 1, InvalidOid, NULL, NULL);
		mr_text_origin_for_arg(fcinfo, 0, &origin);
	}

	mr_compile_shape(fromtext, strlen(fromtext), &origin, rtfunc, &shape);
	if (!shape.types_ok)
		return;					/* the function scan reports the mismatch */

	inq = mr_input_query(shape.input_sql);
	if (inq == NULL)
		return;

	/*
	 * The statement's own query does not show the input's row security
	 * policies to the plan cache: make a cached plan valid for this role only.
	 */
	if (inq->hasRowSecurity)
		root->glob->dependsOnRole = true;
	own_quals = mr_push_partition_filters(rel, &shape, inq);
	subroot = subquery_planner(root->glob, inq, root, false, 0.0);
	final_rel = fetch_upper_rel(subroot, UPPERREL_FINAL, NULL);
	total = final_rel->cheapest_total_path;
	startup = final_rel->cheapest_startup_path;
	if (total == NULL)
		return;

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
	pathkeys = mr_output_pathkeys(root, rel, rtfunc, &shape);
	add_path(rel, (Path *) mr_make_path(root, rel, &shape, fromtext, origin.base,
										subroot, total, out_tuples, pathkeys));
	if (startup != NULL && startup != total)
		add_path(rel, (Path *) mr_make_path(root, rel, &shape, fromtext, origin.base,
											subroot, startup, out_tuples, pathkeys));
}

void
mr_scan_init(void)
{
	RegisterCustomScanMethods(&mr_scan_plan_methods);
	CacheRegisterSyscacheCallback(PROCOID, mr_fn_oid_invalidate, (Datum) 0);
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = mr_set_rel_pathlist;
}

/*
 * match_recognize_support(internal): the planner support function of
 * match_recognize(text).  It answers no request; being called while the
 * planner estimates the function's rows loads this library, so the
 * set_rel_pathlist hook is in place before paths are chosen even on a
 * session's first query.
 */
PG_FUNCTION_INFO_V1(match_recognize_support);

Datum
match_recognize_support(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(NULL);
}

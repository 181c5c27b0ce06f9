/*-------------------------------------------------------------------------
 * mr_replay.c
 *	  The record of a bind, its replay, and statement parameters.
 *
 * Every parse analysis the bind runs (the input, each fragment of DEFINE,
 * MEASURES and WITHIN) goes through the lowering (mr_lower.c) or
 * resolve_input() (mr_bind.c), which record the result here, or, in replay
 * mode, take it from the record and validate it here (shape, parameters and
 * their types: the record may be SQL a user wrote, a view's parts).  The
 * lowering's only other catalog lookup by name, whether a call is an
 * aggregate, is recorded and replayed the same way (bind_decide_aggregate),
 * as the record's last element.  So a replayed bind resolves no name.
 *
 * Statement parameters: $k of the clause is numbered after the engine's
 * own parameters in each fragment (mark_params, analyze_with_params); the
 * engine plans or evaluates a copy of each analysis (fragment_for_use)
 * with the parameters replaced by their values, when known, and with
 * subqueries locked and rewritten as a plan of the query would be.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parse_clause.h"
#include "parser/parse_oper.h"
#include "parser/parse_relation.h"
#include "parser/parser.h"
#include "parser/parse_coerce.h"
#include "parser/parse_type.h"
#include "parser/scansup.h"
#include "rewrite/rewriteHandler.h"
#include "rewrite/rewriteManip.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/formatting.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "match_recognize.h"
#include "mr_bind_int.h"
#include "mr_lexer.h"

/* the bind under way, for bind_decide_aggregate (binds may nest: see mr_bind_query) */
MrBindState *bind_current = NULL;

void
bound_mismatch(const char *what, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("the analysed parts of a bound MATCH_RECOGNIZE query do not match its text"),
			 errdetail("%s: %s.", what, detail),
			 errhint("Create views with match_recognize_create_view(); do not write the parts of match_recognize_bound() by hand.")));
}

/* record mode: keep an analysis (the caller may still complete it in place) */
void
record_analysis(MrBoundQuery *q, Query *qry)
{
	q->bs->analyses = lappend(q->bs->analyses, qry);
}

/* replay mode: the next analysis */
Query *
take_analysis(MrBoundQuery *q, const char *what)
{
	MrBindState *bs = q->bs;
	Node	   *n;

	if (bs->next >= bs->nanalyses)
		bound_mismatch(what, "there are fewer analyses than the text needs");
	n = list_nth(bs->analyses, bs->next++);
	if (n == NULL || !IsA(n, Query))
		bound_mismatch(what, "an analysis is not a query");
	return (Query *) n;
}

/* the Query closing a record: the lowering's decisions as a boolean[] */
Query *
decisions_query(List *decisions)
{
	int			n = list_length(decisions);
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	ArrayType  *arr;
	Query	   *qry = makeNode(Query);
	ListCell   *lc;
	int			i = 0;

	foreach(lc, decisions)
		d[i++] = BoolGetDatum(lfirst_int(lc) != 0);
	arr = n > 0 ? construct_array(d, n, BOOLOID, 1, true, TYPALIGN_CHAR)
		: construct_empty_array(BOOLOID);
	qry->commandType = CMD_SELECT;
	qry->querySource = QSRC_ORIGINAL;
	qry->canSetTag = true;
	qry->jointree = makeFromExpr(NIL, NULL);
	qry->targetList = list_make1(makeTargetEntry((Expr *) makeConst(BOOLARRAYOID, -1, InvalidOid, -1,
																	PointerGetDatum(arr), false, false),
												 1, pstrdup("aggregates"), false));
	return qry;
}

/* is this Query "SELECT <one expression>" without FROM? */
const char *
fragment_shape_problem(Query *qry)
{
	TargetEntry *tle;

	if (qry->commandType != CMD_SELECT || qry->utilityStmt != NULL)
		return "it is not a SELECT";
	if (qry->rtable != NIL || qry->jointree == NULL || qry->jointree->fromlist != NIL ||
		qry->jointree->quals != NULL)
		return "an expression has a FROM or WHERE clause";
	if (qry->cteList || qry->setOperations || qry->groupClause || qry->groupingSets ||
		qry->havingQual || qry->windowClause || qry->distinctClause || qry->sortClause ||
		qry->limitCount || qry->limitOffset || qry->rowMarks || qry->hasModifyingCTE ||
		qry->hasForUpdate || qry->hasRecursive)
		return "an expression has clauses other than its target list";
	if (list_length(qry->targetList) != 1)
		return "an expression has more than one target";
	tle = linitial_node(TargetEntry, qry->targetList);
	if (tle->resjunk || tle->expr == NULL)
		return "an expression has no target";
	if (qry->hasSubLinks != checkExprHasSubLink((Node *) tle->expr) ||
		qry->hasAggs != contain_aggs_of_level((Node *) tle->expr, 0) ||
		qry->hasWindowFuncs || contain_windowfuncs((Node *) tle->expr) ||
		qry->hasTargetSRFs || expression_returns_set((Node *) tle->expr))
		return "an expression's flags do not match it";
	return NULL;
}

void
load_decisions(MrBindState *bs)
{
	Query	   *qry;
	const char *problem;
	Const	   *c;
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			i;

	if (bs->analyses == NIL || !IsA(llast(bs->analyses), Query))
		bound_mismatch("the aggregate decisions", "the last analysis is not a query");
	qry = llast_node(Query, bs->analyses);
	problem = fragment_shape_problem(qry);
	if (problem)
		bound_mismatch("the aggregate decisions", problem);
	c = (Const *) linitial_node(TargetEntry, qry->targetList)->expr;
	if (!IsA(c, Const) || c->consttype != BOOLARRAYOID || c->constisnull)
		bound_mismatch("the aggregate decisions", "the last analysis is not a boolean[] constant");
	arr = DatumGetArrayTypeP(c->constvalue);
	if (ARR_NDIM(arr) > 1)
		bound_mismatch("the aggregate decisions", "the array has more than one dimension");
	deconstruct_array(arr, BOOLOID, 1, true, TYPALIGN_CHAR, &elems, &nulls, &n);
	bs->replay_decisions = palloc0(sizeof(bool) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		if (nulls[i])
			bound_mismatch("the aggregate decisions", "the array has a null");
		bs->replay_decisions[i] = DatumGetBool(elems[i]);
	}
	bs->ndecisions = n;
	bs->nanalyses = list_length(bs->analyses) - 1;
}

/* ---- statement parameters in raw trees ---- */

typedef struct MarkParamsCtx
{
	MrBoundQuery *q;
	int			prefix;			/* bytes of the fragment before the span */
	int			span_start;		/* byte offset of the span in q->text */
} MarkParamsCtx;

/*
 * Give every statement parameter $k of a raw tree the number -k, so that it
 * cannot be taken for one of the engine's own parameters; analysis numbers
 * it after them (renumber_params).  $k beyond the known parameters is an
 * error, unless their types are being deduced.
 */
static bool
mark_params_walker(Node *node, MarkParamsCtx *cx)
{
	if (node == NULL)
		return false;
	check_stack_depth();
	if (IsA(node, ParamRef))
	{
		ParamRef   *p = (ParamRef *) node;
		MrBindState *bs = cx->q->bs;
		int			k = p->number;
		int			pos = p->location < cx->prefix ? cx->span_start
			: cx->span_start + (p->location - cx->prefix);

		if (k < 1 || bs->params_refused || (k > bs->nparams && !bs->deduce))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_PARAMETER),
					 errmsg("there is no parameter $%d", k),
					 bs->params_refused ? errdetail("%s", bs->params_refused) :
					 errhint("Statement parameters are passed to match_recognize() after the query text: $1 is its second argument."),
					 mr_report_position(cx->q->text, pos, &cx->q->origin)));
		if (k > bs->nparams)
		{
			bs->paramtypes = bs->paramtypes
				? repalloc(bs->paramtypes, sizeof(Oid) * k)
				: palloc(sizeof(Oid) * k);
			for (int i = bs->nparams; i < k; i++)
				bs->paramtypes[i] = InvalidOid;
			bs->nparams = k;
		}
		p->number = -k;
		return false;
	}
	return raw_expression_tree_walker(node, mark_params_walker, (void *) cx);
}

void
mark_params(MrBoundQuery *q, Node *raw, int prefix, int span_start)
{
	MarkParamsCtx cx;

	cx.q = q;
	cx.prefix = prefix;
	cx.span_start = span_start;
	(void) mark_params_walker(raw, &cx);
}

static bool
renumber_params_walker(Node *node, int *nengine)
{
	if (node == NULL)
		return false;
	check_stack_depth();
	if (IsA(node, ParamRef))
	{
		if (((ParamRef *) node)->number < 0)
			((ParamRef *) node)->number = *nengine - ((ParamRef *) node)->number;
		return false;
	}
	return raw_expression_tree_walker(node, renumber_params_walker, (void *) nengine);
}

/*
 * Fixed parameters as parse_analyze_fixedparams() makes them, but an
 * engine parameter that stands for a column (or for an expression over
 * columns) has the column's collation, as the column itself would in a
 * query over the input: b.s = PREV(b.s) on a column of a nondeterministic
 * or "C" collation compares as that collation does, not as the database's
 * default.  The collation is implicit, as a column's is.
 */
typedef struct FixedParams
{
	const Oid  *types;
	const Oid  *colls;			/* per parameter; InvalidOid: the type's */
	int			n;
} FixedParams;

static Node *
fixed_paramref(ParseState *pstate, ParamRef *pref)
{
	FixedParams *fp = (FixedParams *) pstate->p_ref_hook_state;
	int			k = pref->number;
	Param	   *param;

	if (k <= 0 || k > fp->n || !OidIsValid(fp->types[k - 1]))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_PARAMETER),
				 errmsg("there is no parameter $%d", k),
				 parser_errposition(pstate, pref->location)));
	param = makeNode(Param);
	param->paramkind = PARAM_EXTERN;
	param->paramid = k;
	param->paramtype = fp->types[k - 1];
	param->paramtypmod = -1;
	param->paramcollid = OidIsValid(fp->colls[k - 1]) ? fp->colls[k - 1]
		: get_typcollation(param->paramtype);
	param->location = pref->location;
	return (Node *) param;
}

static void
fixed_params_setup(ParseState *pstate, void *arg)
{
	pstate->p_paramref_hook = fixed_paramref;
	pstate->p_ref_hook_state = arg;
}

/*
 * Parse analysis of a raw statement whose first nengine parameters are the
 * engine's (types given, and collations when engine_colls is not NULL) and
 * the statement's parameters follow them.  With deduction, the statement
 * parameters' types are deduced as PREPARE does (only their types are
 * used then).
 */
Query *
analyze_with_params(MrBoundQuery *q, RawStmt *rs, const char *src,
					const Oid *engine_types, const Oid *engine_colls,
					int nengine)
{
	MrBindState *bs = q->bs;
	int			n = nengine + bs->nparams;
	Oid		   *types = palloc(sizeof(Oid) * Max(n, 1));
	Query	   *qry;
	int			i;

	for (i = 0; i < nengine; i++)
		types[i] = engine_types[i];
	for (i = 0; i < bs->nparams; i++)
		types[nengine + i] = bs->paramtypes[i];
	(void) renumber_params_walker(rs->stmt, &nengine);
	if (bs->deduce)
	{
		qry = parse_analyze_varparams(rs, src, &types, &n, NULL);
		for (i = 0; i < bs->nparams && nengine + i < n; i++)
			bs->paramtypes[i] = types[nengine + i];
	}
	else
	{
		FixedParams fp;
		Oid		   *colls = palloc0(sizeof(Oid) * Max(n, 1));

		for (i = 0; engine_colls && i < nengine; i++)
			colls[i] = engine_colls[i];
		fp.types = types;
		fp.colls = colls;
		fp.n = n;
		qry = parse_analyze_withcb(rs, src, fixed_params_setup, &fp, NULL);
	}
	return qry;
}

/* ---- validation of replayed analyses ---- */

typedef struct CheckTreeCtx
{
	const char *what;
	int			depth;			/* query nesting, 0 = the analysis itself */
	const Oid  *engine_types;
	int			nengine;
	MrBindState *bs;
} CheckTreeCtx;

/*
 * Every parameter is one the fragment may have (an engine parameter of the
 * type the lowering gave it, or a statement parameter of its type) and no
 * reference leaves the analysis (it is run on its own).
 */
static bool
check_tree_walker(Node *node, CheckTreeCtx *cx)
{
	if (node == NULL)
		return false;
	check_stack_depth();
	if (IsA(node, Query))
	{
		bool		r;

		cx->depth++;
		r = query_tree_walker((Query *) node, check_tree_walker, (void *) cx,
							  QTW_EXAMINE_RTES_BEFORE);
		cx->depth--;
		return r;
	}
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_CTE && (int) rte->ctelevelsup > cx->depth)
			bound_mismatch(cx->what, "it refers to a WITH query outside it");
		return false;
	}
	if (IsA(node, Param))
	{
		Param	   *p = (Param *) node;
		Oid			want;

		if (p->paramkind == PARAM_SUBLINK)
			return false;
		if (p->paramkind != PARAM_EXTERN || p->paramid < 1 ||
			p->paramid > cx->nengine + cx->bs->nparams)
			bound_mismatch(cx->what, "it has a parameter the query does not have");
		want = p->paramid <= cx->nengine ? cx->engine_types[p->paramid - 1]
			: cx->bs->paramtypes[p->paramid - cx->nengine - 1];
		if (p->paramtype != want || p->paramtypmod != -1)
			bound_mismatch(cx->what, psprintf("parameter %d is of type %s, not %s",
											  p->paramid, format_type_be(p->paramtype),
											  format_type_be(want)));
		return false;
	}
	if ((IsA(node, Var) && (int) ((Var *) node)->varlevelsup > cx->depth) ||
		(IsA(node, Aggref) && (int) ((Aggref *) node)->agglevelsup > cx->depth) ||
		(IsA(node, GroupingFunc) && (int) ((GroupingFunc *) node)->agglevelsup > cx->depth) ||
		(IsA(node, PlaceHolderVar) && (int) ((PlaceHolderVar *) node)->phlevelsup > cx->depth))
		bound_mismatch(cx->what, "it refers to a query outside it");
	return expression_tree_walker(node, check_tree_walker, (void *) cx);
}

void
check_tree(MrBoundQuery *q, Query *qry, const char *what, const Oid *engine_types, int nengine)
{
	CheckTreeCtx cx;

	cx.what = what;
	cx.depth = -1;
	cx.engine_types = engine_types;
	cx.nengine = nengine;
	cx.bs = q->bs;
	(void) check_tree_walker((Node *) qry, &cx);
}

/* ---- statement parameter values ---- */

typedef struct SubstCtx
{
	int			base;			/* statement parameter $k is Param base + k */
	int			n;
	Node	  **repl;
} SubstCtx;

static Node *
subst_params_mutator(Node *node, SubstCtx *cx)
{
	if (node == NULL)
		return NULL;
	check_stack_depth();
	if (IsA(node, Param))
	{
		Param	   *p = (Param *) node;

		if (p->paramkind == PARAM_EXTERN && p->paramid > cx->base &&
			p->paramid <= cx->base + cx->n)
			return copyObject(cx->repl[p->paramid - cx->base - 1]);
		return (Node *) copyObject(p);
	}
	if (IsA(node, Query))
		return (Node *) query_tree_mutator((Query *) node, subst_params_mutator,
										   (void *) cx, 0);
	return expression_tree_mutator(node, subst_params_mutator, (void *) cx);
}

Query *
subst_params(Query *qry, int base, int n, Node **repl)
{
	SubstCtx	cx;

	cx.base = base;
	cx.n = n;
	cx.repl = repl;
	/* the mutator shares what it does not change (range table entries' names) */
	return (Query *) subst_params_mutator((Node *) copyObject(qry), &cx);
}

/*
 * The copy of an analysis the engine plans or evaluates: statement
 * parameters replaced by their values (when known), and, when it has
 * subqueries, locked and rewritten (views expanded, row security applied)
 * as a plan of the query would be.
 */
Query *
fragment_for_use(MrBoundQuery *q, Query *qry, int nengine)
{
	MrBindState *bs = q->bs;
	Query	   *use;

	if (bs->paramconsts && bs->nparams > 0)
		use = subst_params(qry, nengine, bs->nparams, (Node **) bs->paramconsts);
	else
		use = copyObject(qry);
	if (use->hasSubLinks)
	{
		if (bs->replay)
			AcquireRewriteLocks(use, true, false);
		if (!(bs->replay && bs->rewritten))
		{
			List	   *rw = QueryRewrite(use);

			if (list_length(rw) != 1 || linitial_node(Query, rw)->commandType != CMD_SELECT)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("a rule rewrote an expression of MATCH_RECOGNIZE into something else")));
			use = linitial_node(Query, rw);
		}
	}
	return use;
}

/*
 * Whether a call is an aggregate (then its arguments are row expressions).
 * Without aggregate syntax this is a catalog lookup by name: it is recorded,
 * and replayed from the record instead of looked up again.
 */
bool
bind_decide_aggregate(FuncCall *fc)
{
	FuncCandidateList cands;
	bool		agg = false;

	if (fc->agg_star || fc->agg_distinct || fc->agg_order != NIL ||
		fc->agg_filter != NULL || fc->agg_within_group)
		return true;
	if (bind_current && bind_current->replay)
	{
		if (bind_current->next_decision >= bind_current->ndecisions)
			bound_mismatch("the aggregate decisions", "there are fewer decisions than the text needs");
		return bind_current->replay_decisions[bind_current->next_decision++];
	}
	cands = FuncnameGetCandidates(fc->funcname, -1, NIL, false, false, false, true);
	for (; cands && !agg; cands = cands->next)
		if (get_func_prokind(cands->oid) == PROKIND_AGGREGATE)
			agg = true;
	if (bind_current)
		bind_current->decisions = lappend_int(bind_current->decisions, agg);
	return agg;
}

/* the statement parameters' values as constants, for fragment_for_use */
void
params_to_consts(MrBindState *bs, const MrBindOptions *opts)
{
	int			i;

	bs->paramconsts = palloc(sizeof(Const *) * Max(bs->nparams, 1));
	for (i = 0; i < bs->nparams; i++)
	{
		Oid			type = bs->paramtypes[i];
		bool		isnull = opts->paramnulls[i];
		int16		typlen;
		bool		byval;
		Datum		v = (Datum) 0;

		get_typlenbyval(type, &typlen, &byval);
		if (!isnull)
			v = typlen == -1 ? PointerGetDatum(PG_DETOAST_DATUM_COPY(opts->paramvalues[i]))
				: datumCopy(opts->paramvalues[i], byval, typlen);
		bs->paramconsts[i] = makeConst(type, -1, get_typcollation(type), typlen, v, isnull, byval);
	}
}

/*-------------------------------------------------------------------------
 * mr_runtime_setup.c
 *	  Making a runtime for a bound query: the part every partition shares
 *	  (mr_runtime_create()).
 *
 * What is decided here once per query, so that no row pays for it: which
 * input columns a retained row keeps, and which of them stay detoasted
 * (DEFINE and WITHIN read them over and over); the executor state of every
 * expression; how partition keys compare; which DEFINEs are inline
 * comparisons (fast conditions) and which can be cached per row; which
 * MEASURES are just a column of a variable's last row (ONE ROW PER MATCH
 * then reads them without evaluating anything); the AFTER MATCH SKIP
 * target set; whether the automaton lane could run the query.  Then the
 * runtime's own partition is made (mr_runtime.c).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "match_recognize.h"
#include "mr_levels_run.h"
#include "mr_runtime_int.h"

/* ---------- columns the query reads ---------- */

typedef struct NeededCtx
{
	bool	   *needed;
	int			natts;
} NeededCtx;

static bool
mark_params_walker(Node *node, NeededCtx *cx)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
	{
		Param	   *p = (Param *) node;

		if (p->paramkind == PARAM_EXTERN && p->paramid >= 1 && p->paramid <= cx->natts)
			cx->needed[p->paramid - 1] = true;
		return false;
	}
	return expression_tree_walker(node, mark_params_walker, (void *) cx);
}

static void
mark_row_expr(NeededCtx *cx, const MrRowExpr *r)
{
	int			i;

	if (r->column >= 0)
		cx->needed[r->column] = true;
	else if (r->plan)
		for (i = 0; i < cx->natts; i++)
			cx->needed[i] = true;
	else
		mark_params_walker((Node *) r->expr, cx);
}

static void
mark_slot(NeededCtx *cx, const MrSlot *slot)
{
	int			i;

	if (slot->kind == MR_SLOT_NAV)
		mark_row_expr(cx, &slot->row);
	else if (slot->kind == MR_SLOT_AGG)
	{
		for (i = 0; i < slot->naggargs; i++)
			mark_row_expr(cx, &slot->aggargs[i]);
		if (slot->aggfilter)
			mark_row_expr(cx, slot->aggfilter);
	}
}

/* the columns the slots of a lowered expression read */
static void
mark_lowered(NeededCtx *cx, const MrBoundQuery *q, const MrLowered *lw)
{
	int			k;

	if (lw != NULL)
		for (k = 0; k < lw->nslots; k++)
			mark_slot(cx, &q->slots[lw->slots[k]]);
}

/*
 * Which input columns a retained row must keep (col_needed): every column
 * for ALL ROWS PER MATCH (they are output), else those read by a slot's
 * row expression.  Of those, the ones DEFINE or WITHIN read are kept
 * detoasted (col_plain; see window_varlena()).
 */
static void
compute_needed_columns(MrRuntime *rt)
{
	const MrBoundQuery *q = rt->q;
	NeededCtx	cx;
	int			s,
				i;

	cx.needed = rt->col_needed;
	cx.natts = q->natts;
	for (i = 0; i < q->natts; i++)
		cx.needed[i] = q->clause->rows_per_match != MR_ONE_ROW;
	for (s = 0; s < q->nslots; s++)
		mark_slot(&cx, &q->slots[s]);
	cx.needed = rt->col_plain;
	for (i = 0; i < q->clause->nvars; i++)
		mark_lowered(&cx, q, q->defines[i]);
	mark_lowered(&cx, q, q->within);
	if (q->time)
	{
		for (i = 0; i < q->clause->nvars; i++)
			for (s = 0; s < q->time->nvar_windows[i]; s++)
				mark_lowered(&cx, q, q->time->var_windows[i][s]);
		mark_lowered(&cx, q, q->time->absence_window);
		for (s = 0; s < q->time->nexpiry_windows; s++)
			mark_lowered(&cx, q, q->time->expiry_deadline[s]);
	}
}

/* a FastCond for lw when it is "$a op $b" with a strict boolean operator */
static FastCond *
make_fast_cond(const MrLowered *lw)
{
	OpExpr	   *op;
	FastCond   *fc;
	int			i;

	if (lw == NULL || lw->plan != NULL || lw->expr == NULL || !IsA(lw->expr, OpExpr))
		return NULL;
	op = (OpExpr *) lw->expr;
	if (op->opresulttype != BOOLOID || list_length(op->args) != 2 || op->opretset)
		return NULL;
	set_opfuncid(op);
	if (!func_strict(op->opfuncid))
		return NULL;
	fc = palloc0(sizeof(FastCond));
	for (i = 0; i < 2; i++)
	{
		Param	   *p = (Param *) list_nth(op->args, i);

		if (!IsA(p, Param) || p->paramkind != PARAM_EXTERN ||
			p->paramid < 1 || p->paramid > lw->nslots)
		{
			pfree(fc);
			return NULL;
		}
		fc->slot[i] = lw->slots[p->paramid - 1];
	}
	fmgr_info(op->opfuncid, &fc->flinfo);
	fc->collation = op->inputcollid;
	fc->cmp = FAST_FMGR;
	switch (op->opfuncid)
	{
#define FAST_CASE(fn, t, c) case fn: fc->type = t; fc->cmp = c; break
			FAST_CASE(F_INT4LT, FAST_INT4, FAST_LT);
			FAST_CASE(F_INT4LE, FAST_INT4, FAST_LE);
			FAST_CASE(F_INT4GT, FAST_INT4, FAST_GT);
			FAST_CASE(F_INT4GE, FAST_INT4, FAST_GE);
			FAST_CASE(F_INT4EQ, FAST_INT4, FAST_EQ);
			FAST_CASE(F_INT4NE, FAST_INT4, FAST_NE);
			FAST_CASE(F_INT8LT, FAST_INT8, FAST_LT);
			FAST_CASE(F_INT8LE, FAST_INT8, FAST_LE);
			FAST_CASE(F_INT8GT, FAST_INT8, FAST_GT);
			FAST_CASE(F_INT8GE, FAST_INT8, FAST_GE);
			FAST_CASE(F_INT8EQ, FAST_INT8, FAST_EQ);
			FAST_CASE(F_INT8NE, FAST_INT8, FAST_NE);
			FAST_CASE(F_FLOAT8LT, FAST_FLOAT8, FAST_LT);
			FAST_CASE(F_FLOAT8LE, FAST_FLOAT8, FAST_LE);
			FAST_CASE(F_FLOAT8GT, FAST_FLOAT8, FAST_GT);
			FAST_CASE(F_FLOAT8GE, FAST_FLOAT8, FAST_GE);
			FAST_CASE(F_FLOAT8EQ, FAST_FLOAT8, FAST_EQ);
			FAST_CASE(F_FLOAT8NE, FAST_FLOAT8, FAST_NE);
			FAST_CASE(F_NUMERIC_LT, FAST_NUMERIC, FAST_LT);
			FAST_CASE(F_NUMERIC_LE, FAST_NUMERIC, FAST_LE);
			FAST_CASE(F_NUMERIC_GT, FAST_NUMERIC, FAST_GT);
			FAST_CASE(F_NUMERIC_GE, FAST_NUMERIC, FAST_GE);
			FAST_CASE(F_NUMERIC_EQ, FAST_NUMERIC, FAST_EQ);
			FAST_CASE(F_NUMERIC_NE, FAST_NUMERIC, FAST_NE);
#undef FAST_CASE
		default:
			break;
	}
	return fc;
}

/* ---------- the expressions' executor state ---------- */

static void
init_row_expr(MrRuntime *rt, const MrRowExpr *r)
{
	if (r->column < 0 && r->expr != NULL && r->plan == NULL)
		rt->exec[r->exec].state = ExecInitExpr(r->expr, NULL);
}

static void
init_lowered(MrRuntime *rt, const MrLowered *lw)
{
	MrExprExec *ex;
	int			i;

	if (lw == NULL)
		return;
	ex = &rt->exec[lw->exec];
	ex->params = makeParamList(Max(lw->nslots, 1));
	ex->params->numParams = lw->nslots;
	for (i = 0; i < lw->nslots; i++)
	{
		ex->params->params[i].ptype = rt->q->slots[lw->slots[i]].type;
		ex->params->params[i].pflags = PARAM_FLAG_CONST;
	}
	if (lw->plan == NULL)
		ex->state = ExecInitExpr(lw->expr, NULL);
}

/*
 * The executor state of every expression of the query, made as the
 * executor initialises a plan's expressions when it starts (which also
 * checks the permission to call each function): expression states, and
 * the parameter lists lowered expressions read their slots' values from.
 * Planned expressions (with subqueries) start on first use (eval_planned).
 */
static void
init_expr_exec(MrRuntime *rt)
{
	const MrBoundQuery *q = rt->q;
	int			i,
				k;

	rt->exec = palloc0(sizeof(MrExprExec) * Max(q->nexprs, 1));
	for (i = 0; i < q->nslots; i++)
	{
		const MrSlot *slot = &q->slots[i];

		if (slot->kind == MR_SLOT_NAV)
			init_row_expr(rt, &slot->row);
		else if (slot->kind == MR_SLOT_AGG)
		{
			for (k = 0; k < slot->naggargs; k++)
				init_row_expr(rt, &slot->aggargs[k]);
			if (slot->aggfilter)
				init_row_expr(rt, slot->aggfilter);
		}
	}
	for (i = 0; i < q->clause->nvars; i++)
		init_lowered(rt, q->defines[i]);
	for (i = 0; i < q->clause->nmeasures; i++)
		init_lowered(rt, q->measures[i]);
	init_lowered(rt, q->within);
	if (q->time)
	{
		for (i = 0; i < q->clause->nvars; i++)
			for (k = 0; k < q->time->nvar_windows[i]; k++)
				init_lowered(rt, q->time->var_windows[i][k]);
		init_lowered(rt, q->time->absence_window);
		init_lowered(rt, q->time->deadline);
		for (k = 0; k < q->time->nexpiry_windows; k++)
			init_lowered(rt, q->time->expiry_deadline[k]);
		init_lowered(rt, q->time->clock);
	}
}

/* ---------- the steps of mr_runtime_create() ---------- */

/* contexts, the row parameters, the expressions' executor state */
static void
setup_execution(MrRuntime *rt)
{
	const MrBoundQuery *q = rt->q;
	int			i;

	rt->cxt = CurrentMemoryContext;
	rt->rowcxt = AllocSetContextCreate(rt->cxt, "match_recognize rows", ALLOCSET_DEFAULT_SIZES);
	rt->partcxt = AllocSetContextCreate(rt->cxt, "match_recognize partition", ALLOCSET_SMALL_SIZES);
	rt->runcxt = AllocSetContextCreate(rt->cxt, "match_recognize partition runs",
									   ALLOCSET_DEFAULT_SIZES);
	rt->evalcxt = AllocSetContextCreate(rt->cxt, "match_recognize eval", ALLOCSET_DEFAULT_SIZES);
	rt->aggcxt = AllocSetContextCreate(rt->cxt, "match_recognize aggregates", ALLOCSET_DEFAULT_SIZES);
	rt->econtext = CreateStandaloneExprContext();
	rt->rowparams = makeParamList(q->nrowparams);
	rt->rowparams->numParams = q->nrowparams;
	for (i = 0; i < q->natts; i++)
	{
		rt->rowparams->params[i].ptype = TupleDescAttr(q->input_desc, i)->atttypid;
		rt->rowparams->params[i].pflags = PARAM_FLAG_CONST;
	}
	rt->rowparams->params[q->natts].ptype = TEXTOID;
	rt->rowparams->params[q->natts + 1].ptype = INT8OID;
	init_expr_exec(rt);
}

/*
 * How the own partition's key is compared with a row's: bitwise for the
 * by-value types whose equality is identity, else by the type's equality.
 */
static void
setup_partition_keys(MrRuntime *rt)
{
	const MrBoundQuery *q = rt->q;
	int			n = Max(q->npartition, 1);
	int			i;

	rt->npartition = q->npartition;
	rt->partition_cols = q->partition_cols;
	rt->part_eq = palloc0(sizeof(FmgrInfo) * n);
	rt->part_coll = palloc0(sizeof(Oid) * n);
	rt->part_bitwise = palloc0(sizeof(bool) * n);
	for (i = 0; i < q->npartition; i++)
	{
		Form_pg_attribute a = TupleDescAttr(q->input_desc, q->partition_cols[i]);
		TypeCacheEntry *tce = lookup_type_cache(a->atttypid, TYPECACHE_EQ_OPR_FINFO);

		if (!OidIsValid(tce->eq_opr_finfo.fn_oid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("could not identify an equality operator for type %s",
							format_type_be(a->atttypid))));
		fmgr_info_copy(&rt->part_eq[i], &tce->eq_opr_finfo, rt->cxt);
		rt->part_coll[i] = a->attcollation;
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
				rt->part_bitwise[i] = a->attbyval;
				break;
			default:
				break;
		}
	}
}

/* the columns a retained row keeps, and the slots and aggregates reading them */
static void
setup_columns(MrRuntime *rt)
{
	const MrBoundQuery *q = rt->q;
	int			n = Max(q->natts, 1);
	int			i;

	rt->natts = q->natts;
	rt->max_prev = q->max_prev;
	rt->col_needed = palloc0(sizeof(bool) * n);
	rt->col_byval = palloc0(sizeof(bool) * n);
	rt->col_len = palloc0(sizeof(int16) * n);
	rt->col_plain = palloc0(sizeof(bool) * n);
	for (i = 0; i < q->natts; i++)
	{
		rt->col_byval[i] = TupleDescAttr(q->input_desc, i)->attbyval;
		rt->col_len[i] = TupleDescAttr(q->input_desc, i)->attlen;
	}
	compute_needed_columns(rt);
	rt->needed = palloc(sizeof(int) * n);
	rt->needed_byval = true;
	for (i = 0; i < q->natts; i++)
		if (rt->col_needed[i])
		{
			rt->needed[rt->nneeded++] = i;
			if (!rt->col_byval[i])
				rt->needed_byval = false;
		}
	rt->slot_current_column = palloc0(sizeof(bool) * Max(q->nslots, 1));
	rt->agg_slots = palloc(sizeof(int) * Max(q->nslots, 1));
	for (i = 0; i < q->nslots; i++)
	{
		const MrSlot *slot = &q->slots[i];

		rt->slot_current_column[i] = slot->kind == MR_SLOT_NAV &&
			!slot->logical_first && slot->logical_offset == 0 &&
			slot->row.column >= 0 && !slot->row.uses_classifier;
		if (slot->kind == MR_SLOT_AGG)
			rt->agg_slots[rt->nagg_slots++] = i;
	}
	rt->has_aggs = rt->nagg_slots > 0;
}

/*
 * Is measure i a plain column at LAST(v, 0) (+ PREV/NEXT) of one variable
 * v, or of the universal set?  Then ONE ROW PER MATCH reads it from the
 * last row of v that one backward walk of the match finds (last_row_of).
 */
static int
measure_last_var(const MrBoundQuery *q, const MrSlot *slot)
{
	int			v,
				nmembers = 0,
				member = -1;

	if (slot == NULL || slot->kind != MR_SLOT_NAV || slot->logical_first ||
		slot->logical_offset != 0 || slot->row.column < 0 ||
		slot->row.uses_classifier || slot->within_match)
		return MR_MEASURE_NOT_LAST;
	if (slot->set.universal)
		return MR_MEASURE_UNIVERSAL;
	for (v = 0; v < q->clause->nvars; v++)
		if (slot->set.member[v])
		{
			nmembers++;
			member = v;
		}
	return nmembers == 1 ? member : MR_MEASURE_NOT_LAST;
}

/* what each measure and each output column is made of */
static void
setup_measures(MrRuntime *rt)
{
	const MrBoundQuery *q = rt->q;
	int			nm = q->clause->nmeasures;
	int			i;

	rt->measure_is_slot = palloc0(sizeof(bool) * Max(nm, 1));
	rt->measure_last_var = palloc(sizeof(int) * Max(nm, 1));
	rt->measure_column = palloc0(sizeof(int) * Max(nm, 1));
	rt->measure_offset = palloc0(sizeof(int64) * Max(nm, 1));
	rt->last_row_of = palloc(sizeof(int64) * Max(q->clause->nvars, 1));
	rt->all_measures_last = true;
	for (i = 0; i < nm; i++)
	{
		const MrLowered *lw = q->measures[i];
		const MrSlot *slot;

		rt->measure_is_slot[i] = lw->plan == NULL && lw->nslots == 1 &&
			lw->expr != NULL && IsA(lw->expr, Param) &&
			((Param *) lw->expr)->paramkind == PARAM_EXTERN &&
			((Param *) lw->expr)->paramid == 1 &&
			((Param *) lw->expr)->paramtype == q->slots[lw->slots[0]].type;
		slot = rt->measure_is_slot[i] ? &q->slots[lw->slots[0]] : NULL;
		rt->measure_last_var[i] = measure_last_var(q, slot);
		if (rt->measure_last_var[i] == MR_MEASURE_NOT_LAST)
		{
			rt->all_measures_last = false;
			continue;
		}
		rt->any_measure_last = true;
		rt->measure_column[i] = slot->row.column;
		rt->measure_offset[i] = slot->physical_offset;
	}
	rt->outcol_part = palloc(sizeof(int) * Max(q->noutcols, 1));
	for (i = 0; i < q->noutcols; i++)
	{
		int			p;

		rt->outcol_part[i] = -1;
		for (p = 0; p < q->npartition; p++)
			if (q->outcols[i].input_column >= 0 &&
				q->partition_cols[p] == q->outcols[i].input_column)
				rt->outcol_part[i] = p;
	}
}

/*
 * DEFINEs: which are cached per row (path-independent) and by match start,
 * which are inline comparisons (a numeric one keeps its columns
 * detoasted), the AFTER MATCH SKIP target set.
 */
static void
setup_defines(MrRuntime *rt)
{
	const MrBoundQuery *q = rt->q;
	const MrClause *c = q->clause;
	int			nv = Max(c->nvars, 1);
	int			i;

	rt->cache_row = palloc(sizeof(int64) * nv);
	rt->cache_start = palloc0(sizeof(int64) * nv);
	rt->cache_val = palloc0(sizeof(bool) * nv);
	rt->cacheable = palloc0(sizeof(bool) * nv);
	rt->cache_by_start = palloc0(sizeof(bool) * nv);
	rt->fast_define = palloc0(sizeof(FastCond *) * nv);
	for (i = 0; i < c->nvars; i++)
	{
		const MrLowered *lw = q->defines[i];
		FastCond   *fc;

		rt->cache_row[i] = -1;
		rt->cacheable[i] = (lw == NULL || !lw->path_dependent) &&
			(q->time == NULL || q->time->nvar_windows[i] == 0);
		rt->cache_by_start[i] = q->within != NULL || (lw != NULL && lw->start_dependent);
		rt->fast_define[i] = fc = make_fast_cond(lw);
		if (fc)
			fc->no_alloc = fc->cmp != FAST_FMGR &&
				rt->slot_current_column[fc->slot[0]] &&
				rt->slot_current_column[fc->slot[1]];
		if (fc && fc->no_alloc && fc->type == FAST_NUMERIC)
		{
			rt->col_plain[q->slots[fc->slot[0]].row.column] = true;
			rt->col_plain[q->slots[fc->slot[1]].row.column] = true;
		}
	}
	rt->skip_member = palloc0(sizeof(bool) * nv);
	rt->skip_vars = palloc(sizeof(int) * nv);
	if (c->skip == MR_SKIP_TO_FIRST || c->skip == MR_SKIP_TO_LAST)
	{
		if (c->skip_var >= 0)
			rt->skip_member[c->skip_var] = true;
		else
		{
			MrSubset   *sub = &c->subsets[c->skip_subset];

			for (i = 0; i < sub->nmembers; i++)
				rt->skip_member[sub->members[i]] = true;
		}
		for (i = 0; i < c->nvars; i++)
			if (rt->skip_member[i])
				rt->skip_vars[rt->nskip_vars++] = i;
	}
}

/*
 * Timeout rows: for each expiring window, the pcs whose every path must
 * still map a row it constrains (its TO variable; without TO every
 * variable but the absence) and, FROM LAST v, from which no path maps v
 * again; and the matcher's expiry callback.
 */
static void
setup_expiry(MrRuntime *rt)
{
	const MrBoundQuery *q = rt->q;
	const MrProgram *prog = q->program;
	int			nv = prog->nvars + prog->nsynth;
	bool	   *in_set = palloc(sizeof(bool) * Max(nv, 1));
	bool	   *may = palloc(sizeof(bool) * Max(prog->ninsts, 1));
	int			k,
				v,
				pc;

	rt->expiry_must = palloc(sizeof(bool *) * rt->nexpiry);
	for (k = 0; k < rt->nexpiry; k++)
	{
		int			to = q->time->expiry_to[k];

		for (v = 0; v < nv; v++)
			in_set[v] = to >= 0 ? v == to :
				v < prog->nvars && v != q->time->absence_var;
		rt->expiry_must[k] = palloc(sizeof(bool) * Max(prog->ninsts, 1));
		mr_program_must_map(prog, in_set, rt->expiry_must[k]);
		if (q->time->expiry_last[k] >= 0)
		{
			/* FROM LAST v: not where v may still move the deadline */
			for (v = 0; v < nv; v++)
				in_set[v] = v == q->time->expiry_last[k];
			mr_program_may_map(prog, in_set, may);
			for (pc = 0; pc < prog->ninsts; pc++)
				if (may[pc])
					rt->expiry_must[k][pc] = false;
		}
	}
	pfree(in_set);
	pfree(may);
	rt->matcher_opts.expiry = expiry_callback;
}

/*
 * A stream's windows expire threads by its clock (mr_runtime.h): every
 * expiring window, with no timeout candidates unless WITH TIMEOUT ROWS
 * keeps them already.  The own run's matcher was made with the options of
 * mr_runtime_create(): it has seen no row, so it is made again.
 */
bool
mr_runtime_expire_windows(MrRuntime *rt)
{
	const MrBoundQuery *q = rt->q;
	MrMatcherBox *b = rt->own->matcher;

	if (rt->levels != NULL || q->time == NULL || q->time->nexpiry_windows == 0)
		return false;
	if (rt->matcher_opts.expiry != NULL)
		return true;			/* WITH TIMEOUT ROWS */
	if (rt->own->in_partition || rt->nruns > 0)
		elog(ERROR, "match_recognize window expiry turned on in a running runtime");
	rt->nexpiry = q->time->nexpiry_windows;
	setup_expiry(rt);
	rt->matcher_opts.expiry_no_timeouts = true;
	if (b != NULL)
	{
		rt->own->matcher = NULL;
		MemoryContextDelete(b->cxt);
		pfree(b);
		part_attach_matcher(rt, rt->own);
	}
	return true;
}

/*
 * The runtime of a bound query, with its own partition for
 * mr_runtime_push(); see mr_runtime.h.  Allocates in the current memory
 * context, which must outlive the runtime.
 */
MrRuntime *
mr_runtime_create(const MrBoundQuery *q, MrEmitFn emit, void *emit_arg)
{
	MrRuntime  *rt;

	if (q->levels)
		return mr_levels_runtime_create(q, emit, emit_arg);
	rt = palloc0(sizeof(MrRuntime));
	rt->q = q;
	rt->emit = emit;
	rt->emit_arg = emit_arg;
	rt->match_deadline_null = true;
	dlist_init(&rt->states);
	setup_execution(rt);
	setup_partition_keys(rt);
	setup_columns(rt);
	setup_measures(rt);
	setup_defines(rt);
	rt->lane.ok = dfa_qualifies(rt);
	rt->aggstates = palloc0(sizeof(MrAggState *) * Max(q->nslots, 1));
	rt->out_values = palloc0(sizeof(Datum) * Max(q->noutcols, 1));
	rt->out_nulls = palloc0(sizeof(bool) * Max(q->noutcols, 1));
	rt->measure_values = palloc0(sizeof(Datum) * Max(q->clause->nmeasures, 1));
	rt->measure_nulls = palloc0(sizeof(bool) * Max(q->clause->nmeasures, 1));

	rt->matcher_opts.dedup = q->dedup;
	rt->matcher_opts.all_matches = q->clause->no_skip;
	rt->matcher_opts.max_threads = mr_max_threads;
	rt->matcher_opts.define = define_callback;
	rt->matcher_opts.define_arg = rt;
	rt->matcher_opts.absent = absent_callback;
	rt->matcher_opts.deadline = deadline_callback;
	if (q->time != NULL && q->time->nexpiry > 0)
	{
		rt->nexpiry = q->time->nexpiry;
		setup_expiry(rt);
	}
	rt->track_time = q->time != NULL && q->time->clock_max &&
		(q->time->absence_var >= 0 || q->time->nexpiry > 0);
	rt->own = part_state_create(rt, &rt->own_state, MR_OWN_RING_INITIAL);
	rt->own->part_values = MemoryContextAllocZero(rt->cxt, sizeof(Datum) * Max(q->npartition, 1));
	rt->own->part_nulls = MemoryContextAllocZero(rt->cxt, sizeof(bool) * Max(q->npartition, 1));
	part_attach_matcher(rt, rt->own);
	return rt;
}

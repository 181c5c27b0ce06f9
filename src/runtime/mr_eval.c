/*-------------------------------------------------------------------------
 * mr_eval.c
 *	  DEFINE, MEASURES and aggregate evaluation for the MATCH_RECOGNIZE
 *	  runtime (mr_runtime.c): row expressions over the retained rows, lowered
 *	  expressions (with their slots as parameters, or a planned query for a
 *	  subquery), the fast conditions, the matcher's DEFINE callback, the
 *	  measures of a match and its aggregates.
 *
 * Evaluation reads the partition being driven, rt->cur (the drivers set
 * it: the matcher calls define_callback() without it).
 *
 * Invariants:
 *  - a row expression reads the row window only: a row outside it (before
 *    the partition, or not yet known) reads as NULL, and so does a
 *    navigation outside the match or the candidate path;
 *  - values are computed in evalcxt, which the callers reset (every DEFINE
 *    evaluation that used it, every output row); aggregate states live in
 *    aggcxt and are restarted per match (restart_aggs) or per DEFINE
 *    evaluation;
 *  - the DEFINE of a variable that does not read the path (cacheable) is
 *    evaluated once for the threads that ask at one row, or at one row
 *    and match start when it (or WITHIN) reads the start (cache_by_start;
 *    threads come in order of their start): cache_row/cache_start/
 *    cache_val remember the last result for the partition cache_ps, within
 *    one match number (MATCH_NUMBER() may be read): a driver switching
 *    partitions, a partition starting and a settled match forget them
 *    (cache_forget());
 *  - a fast condition with no_alloc (an inline comparison of plain columns
 *    of the candidate row and physical PREV/NEXT) allocates nothing and
 *    gives the result the expression interpreter would;
 *  - last_row_of is read only while last_rows_known (set by emit_match()
 *    for the match being emitted).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "executor/executor.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "mr_runtime_int.h"

static Datum eval_planned(MrRuntime *rt, PlannedStmt *plan, QueryDesc **qdp,
						  ParamListInfo params, bool *isnull);

/*
 * What an error raised while evaluating a DEFINE or a measure was
 * evaluating, as a context line ("DEFINE variable b", "measure total"):
 * pushed around the evaluations that can raise (not the fast conditions
 * that allocate nothing, nor a measure read from a row), so the happy
 * path pays a few stores per evaluation.
 */
typedef struct EvalContext
{
	MrRuntime  *rt;
	bool		measure;
	int			index;			/* the variable or the measure */
} EvalContext;

static void
eval_error_context(void *arg)
{
	EvalContext *ec = arg;

	if (ec->measure)
		errcontext("MATCH_RECOGNIZE measure %s", ec->rt->q->clause->measures[ec->index].alias.name);
	else
		errcontext("MATCH_RECOGNIZE DEFINE variable %s", ec->rt->q->var_names[ec->index]);
}

#define EVAL_CONTEXT_PUSH(cb, ec, rt_, measure_, index_) \
	do { \
		(ec).rt = (rt_); \
		(ec).measure = (measure_); \
		(ec).index = (index_); \
		(cb).callback = eval_error_context; \
		(cb).arg = &(ec); \
		(cb).previous = error_context_stack; \
		error_context_stack = &(cb); \
	} while (0)
#define EVAL_CONTEXT_POP(cb) (error_context_stack = (cb).previous)

/* ---------- row expressions ---------- */

static const char *
var_name(MrRuntime *rt, int var)
{
	return rt->q->var_names[var];
}

/*
 * Evaluate a row expression at row `pos` whose label is `label` (-1 none).
 * Returns the datum in evalcxt.
 */
static Datum
eval_row_expr_general(MrRuntime *rt, MrRowExpr *r, int64 pos, int label, int64 match_number,
					  bool *isnull)
{
	MrRow	   *row;
	int			natts = rt->q->natts;
	int			i;

	if (!row_known(rt->cur, pos))
	{
		*isnull = true;
		return (Datum) 0;
	}
	row = row_at(rt->cur, pos);
	if (r->column >= 0)
	{
		*isnull = row->nulls[r->column];
		return row->values[r->column];
	}
	for (i = 0; i < natts; i++)
	{
		rt->rowparams->params[i].value = row->values[i];
		rt->rowparams->params[i].isnull = row->nulls[i];
	}
	if (label >= 0)
	{
		rt->rowparams->params[natts].value = CStringGetTextDatum(var_name(rt, label));
		rt->rowparams->params[natts].isnull = false;
	}
	else
	{
		rt->rowparams->params[natts].value = (Datum) 0;
		rt->rowparams->params[natts].isnull = true;
	}
	/* a timeout row has no match number (as the MATCH_NUMBER() slot) */
	rt->rowparams->params[natts + 1].value = Int64GetDatum(match_number);
	rt->rowparams->params[natts + 1].isnull = rt->match_timed_out;
	if (r->plan)
		return eval_planned(rt, r->plan, &rt->exec[r->exec].qdesc, rt->rowparams, isnull);
	rt->econtext->ecxt_param_list_info = rt->rowparams;
	return ExecEvalExpr(rt->exec[r->exec].state, rt->econtext, isnull);
}

/* a plain column is read from the window without the general machinery */
static inline Datum
eval_row_expr(MrRuntime *rt, MrRowExpr *r, int64 pos, int label, int64 match_number,
			  bool *isnull)
{
	if (r->column >= 0 && row_known(rt->cur, pos))
	{
		MrRow	   *row = row_at(rt->cur, pos);

		*isnull = row->nulls[r->column];
		return row->values[r->column];
	}
	return eval_row_expr_general(rt, r, pos, label, match_number, isnull);
}

/* ---------- lowered expressions ---------- */

/*
 * Expressions with (uncorrelated) subqueries run as a one-row planned query
 * whose executor is started once and rescanned per evaluation; the
 * parameters are read afresh each time, initplans are computed once.
 */
static Datum
eval_planned(MrRuntime *rt, PlannedStmt *plan, QueryDesc **qdp,
			 ParamListInfo params, bool *isnull)
{
	TupleTableSlot *slot;
	MemoryContext old;
	Datum		d;

	if (*qdp == NULL)
	{
		old = MemoryContextSwitchTo(rt->cxt);
		*qdp = CreateQueryDesc(plan, "MATCH_RECOGNIZE expression",
							   GetActiveSnapshot(), InvalidSnapshot,
							   None_Receiver, params, NULL, 0);
		ExecutorStart(*qdp, 0);
		rt->subplan_qds = lappend(rt->subplan_qds, qdp);
		MemoryContextSwitchTo(old);
	}
	else
		ExecReScan((*qdp)->planstate);
	slot = ExecProcNode((*qdp)->planstate);
	if (TupIsNull(slot))
	{
		*isnull = true;
		return (Datum) 0;
	}
	d = slot_getattr(slot, 1, isnull);
	if (!*isnull)
	{
		Form_pg_attribute a = TupleDescAttr(slot->tts_tupleDescriptor, 0);

		d = datumCopy(d, a->attbyval, a->attlen);
	}
	return d;
}

static Datum
eval_lowered(MrRuntime *rt, const MrLowered *lw, bool *isnull)
{
	MrExprExec *ex = &rt->exec[lw->exec];

	if (lw->plan == NULL)
	{
		rt->econtext->ecxt_param_list_info = ex->params;
		return ExecEvalExpr(ex->state, rt->econtext, isnull);
	}
	return eval_planned(rt, lw->plan, &ex->qdesc, ex->params, isnull);
}

static inline void
set_param(MrRuntime *rt, const MrLowered *lw, int k, Datum v, bool isnull)
{
	ParamListInfo params = rt->exec[lw->exec].params;

	params->params[k].value = v;
	params->params[k].isnull = isnull;
}

/* ---------- aggregates ---------- */

static MrAggState *
agg_state(MrRuntime *rt, int s)
{
	if (rt->aggstates[s] == NULL)
		rt->aggstates[s] = mr_agg_start(rt->q->slots[s].agg, rt->aggcxt);
	return rt->aggstates[s];
}

static void
agg_advance_row(MrRuntime *rt, int s, int64 pos, int label, int64 match_number)
{
	MrSlot	   *slot = &rt->q->slots[s];
	Datum		args[FUNC_MAX_ARGS];
	bool		nulls[FUNC_MAX_ARGS];
	int			i;
	MemoryContext old = MemoryContextSwitchTo(rt->evalcxt);

	if (slot->aggfilter)
	{
		bool		fnull;
		Datum		f = eval_row_expr(rt, slot->aggfilter, pos, label, match_number, &fnull);

		if (fnull || !DatumGetBool(f))
		{
			MemoryContextSwitchTo(old);
			return;
		}
	}
	for (i = 0; i < slot->naggargs && i < FUNC_MAX_ARGS; i++)
		args[i] = eval_row_expr(rt, &slot->aggargs[i], pos, label, match_number, &nulls[i]);
	MemoryContextSwitchTo(old);
	mr_agg_advance(slot->agg, agg_state(rt, s), args, nulls);
}

/* ---------- DEFINE ---------- */

typedef struct DefineView
{
	const MrPath *path;
	int64		row;			/* candidate */
	int			var;			/* candidate's tentative label */
} DefineView;

/* label of row pos as seen by a DEFINE evaluation, -1 if none */
static int
define_label(const DefineView *dv, int64 pos)
{
	const MrHist *h;

	if (pos == dv->row)
		return dv->var;
	if (pos < dv->path->start || pos > dv->row)
		return -1;
	for (h = dv->path->last; h; h = h->prev)
		if (h->row == pos)
			return h->var;
	return -1;
}

/* the row FIRST/LAST(set, offset) resolves to, or -1 */
static int64
define_logical_row(const DefineView *dv, const MrSlot *slot)
{
	const MrVarSet *set = &slot->set;
	int64		n = slot->logical_offset;
	const MrHist *h;

	if (set->universal)
	{
		int64		r = slot->logical_first ? dv->path->start + n : dv->row - n;

		return (r >= dv->path->start && r <= dv->row) ? r : -1;
	}
	if (!slot->logical_first)
	{
		if (in_set(set, dv->var))
		{
			if (n == 0)
				return dv->row;
			n--;
		}
		for (h = dv->path->last; h; h = h->prev)
			if (in_set(set, h->var))
			{
				if (n == 0)
					return h->row;
				n--;
			}
		return -1;
	}
	else
	{
		/* count matching rows, then walk to the (count-1-n)-th from the end */
		int64		count = 0,
					want;

		for (h = dv->path->last; h; h = h->prev)
			if (in_set(set, h->var))
				count++;
		if (in_set(set, dv->var))
		{
			if (count == n)
				return dv->row;
			count++;
		}
		if (n >= count)
			return -1;
		want = count - 1 - n;	/* index from the end */
		if (in_set(set, dv->var))
			want--;
		for (h = dv->path->last; h; h = h->prev)
			if (in_set(set, h->var))
			{
				if (want == 0)
					return h->row;
				want--;
			}
		return -1;
	}
}

/*
 * Where a slot is evaluated: in a DEFINE, over one candidate path (the row
 * being tested and the labels so far), or in MEASURES, over a decided match
 * (dv or mv is set).  MATCH_NUMBER(), CLASSIFIER() and navigation read
 * their rows and labels through it the same way in both; only aggregates
 * differ (see the callers).
 */
typedef struct SlotView
{
	const DefineView *dv;
	const MatchView *mv;
	int64		match_number;
} SlotView;

static int64 match_logical_row(const MatchView *mv, const MrSlot *slot);
static int	match_label(const MrMatch *m, int64 pos);

static inline int64
view_logical_row(const SlotView *sv, const MrSlot *slot)
{
	return sv->dv ? define_logical_row(sv->dv, slot) : match_logical_row(sv->mv, slot);
}

static inline int
view_label(const SlotView *sv, int64 pos)
{
	return sv->dv ? define_label(sv->dv, pos) : match_label(sv->mv->m, pos);
}

/* a MATCH_NUMBER(), CLASSIFIER() or navigation slot's value, seen from sv */
static void
view_slot_value(MrRuntime *rt, const SlotView *sv, MrSlot *slot, Datum *v, bool *isnull)
{
	switch (slot->kind)
	{
		case MR_SLOT_MATCH_NUMBER:
			*v = Int64GetDatum(sv->match_number);
			*isnull = rt->match_timed_out;	/* a timeout row has none */
			return;
		case MR_SLOT_MATCH_DEADLINE:
			*v = rt->match_deadline;
			*isnull = rt->match_deadline_null;
			return;
		case MR_SLOT_TIMED_OUT:
			*v = BoolGetDatum(rt->match_timed_out);
			*isnull = false;
			return;
		case MR_SLOT_CLASSIFIER:
			{
				MrSlot		tmp = *slot;
				int64		r;

				tmp.logical_first = false;
				tmp.logical_offset = 0;
				r = view_logical_row(sv, &tmp);
				if (r < 0)
				{
					*isnull = true;
					return;
				}
				if (view_label(sv, r) < 0)
				{
					/* a row skipped by -> has no variable */
					*isnull = true;
					return;
				}
				*v = CStringGetTextDatum(var_name(rt, view_label(sv, r)));
				*isnull = false;
				return;
			}
		case MR_SLOT_NAV:
			{
				int64		r = view_logical_row(sv, slot);

				if (r < 0)
				{
					*isnull = true;
					return;
				}
				r += slot->physical_offset;
				if (r < 0 || !row_known(rt->cur, r) ||
					(slot->within_match && sv->mv &&
					 (r < sv->mv->m->start || r >= sv->mv->m->end)))
				{
					*isnull = true;
					return;
				}
				*v = eval_row_expr(rt, &slot->row, r,
								   slot->row.uses_classifier ? view_label(sv, r) : -1,
								   sv->match_number, isnull);
				return;
			}
		case MR_SLOT_AGG:
			break;				/* the callers' */
	}
	*v = (Datum) 0;
	*isnull = true;
}

static void
define_slot_value(MrRuntime *rt, const DefineView *dv, int s, Datum *v, bool *isnull)
{
	MrSlot	   *slot = &rt->q->slots[s];

	/*
	 * The common case: a column of the candidate row itself, or a physical
	 * PREV/NEXT of it (DOWN.price, PREV(DOWN.price)).
	 */
	if (rt->slot_current_column[s] && in_set(&slot->set, dv->var))
	{
		int64		r = dv->row + slot->physical_offset;

		if (r >= 0 && row_known(rt->cur, r))
		{
			MrRow	   *row = row_at(rt->cur, r);

			*isnull = row->nulls[slot->row.column];
			*v = row->values[slot->row.column];
		}
		else
		{
			*isnull = true;
			*v = (Datum) 0;
		}
		return;
	}

	if (slot->kind != MR_SLOT_AGG)
	{
		SlotView	sv;

		sv.dv = dv;
		sv.mv = NULL;
		sv.match_number = rt->cur->match_number + 1;
		view_slot_value(rt, &sv, slot, v, isnull);
		return;
	}
	/* an aggregate over the candidate path: recomputed (DEFINE is rare here) */
	{
		MrAggState *st = agg_state(rt, s);
		int64		n = dv->path->len,
					i;
		int64	   *rows = palloc(sizeof(int64) * (n + 1));
		int		   *labels = palloc(sizeof(int) * (n + 1));
		const MrHist *h;

		mr_agg_restart(slot->agg, st);
		for (h = dv->path->last, i = n - 1; h && i >= 0; h = h->prev, i--)
		{
			rows[i] = h->row;
			labels[i] = h->var;
		}
		for (i = 0; i < n; i++)
			if (in_set(&slot->set, labels[i]))
				agg_advance_row(rt, s, rows[i], labels[i], rt->cur->match_number + 1);
		if (in_set(&slot->set, dv->var))
			agg_advance_row(rt, s, dv->row, dv->var, rt->cur->match_number + 1);
		*v = mr_agg_result(slot->agg, st, isnull);
	}
}

static bool
eval_condition(MrRuntime *rt, MrLowered *lw, const DefineView *dv)
{
	int			k;
	Datum		d;
	bool		isnull;

	for (k = 0; k < lw->nslots; k++)
	{
		Datum		v = (Datum) 0;
		bool		n = true;

		define_slot_value(rt, dv, lw->slots[k], &v, &n);
		set_param(rt, lw, k, v, n);
	}
	d = eval_lowered(rt, lw, &isnull);
	return !isnull && DatumGetBool(d);
}

/* define_slot_value's common case, inline; false when it does not apply */
static inline bool
fast_slot_value(MrRuntime *rt, const DefineView *dv, int s, Datum *v, bool *isnull)
{
	MrSlot	   *slot = &rt->q->slots[s];
	int64		r;

	if (!rt->slot_current_column[s] || !in_set(&slot->set, dv->var))
		return false;
	r = dv->row + slot->physical_offset;
	if (r >= 0 && row_known(rt->cur, r))
	{
		MrRow	   *row = row_at(rt->cur, r);

		*isnull = row->nulls[slot->row.column];
		*v = row->values[slot->row.column];
	}
	else
	{
		*isnull = true;
		*v = (Datum) 0;
	}
	return true;
}

static bool
eval_fast_condition(MrRuntime *rt, FastCond *fc, const DefineView *dv)
{
	Datum		a,
				b;
	bool		an = true,
				bn = true;

	if (!fast_slot_value(rt, dv, fc->slot[0], &a, &an))
		define_slot_value(rt, dv, fc->slot[0], &a, &an);
	if (an)
		return false;
	if (!fast_slot_value(rt, dv, fc->slot[1], &b, &bn))
		define_slot_value(rt, dv, fc->slot[1], &b, &bn);
	if (bn)
		return false;
	if (fc->cmp != FAST_FMGR)
	{
		int			c = fast_compare(fc->type, a, b);

		switch (fc->cmp)
		{
			case FAST_LT:
				return c < 0;
			case FAST_LE:
				return c <= 0;
			case FAST_GT:
				return c > 0;
			case FAST_GE:
				return c >= 0;
			case FAST_EQ:
				return c == 0;
			default:
				return c != 0;
		}
	}
	return DatumGetBool(FunctionCall2Coll(&fc->flinfo, fc->collation, a, b));
}

static bool define_eval(MrRuntime *rt, int var, int64_t row, const MrPath *path);
static bool eval_time_value(MrRuntime *rt, MrLowered *lw, const MatchView *mv,
							Datum *value);

/*
 * A synthetic variable of "->" / "->>" (mr_program.h): no mid-pattern
 * absence row and, for "->", no row that can start the next pattern, by
 * their DEFINEs (not their windows: a late first row of the next pattern
 * ends the skip, and the window then rejects it).
 */
static bool
synthetic_holds(MrRuntime *rt, int var, int64_t row, const MrPath *path)
{
	const MrProgram *prog = rt->q->program;
	const MrSynth *z = &prog->synth[var - prog->nvars];
	int			k;

	if (z->absent >= 0 && define_callback(rt, z->absent, row, path))
		return false;
	if (rt->q->within)
	{
		/*
		 * A row past today's WITHIN is in no match, skipped or not: the
		 * filler's path ends there (and its thread with it, which bounds
		 * AFTER MATCH NO SKIP's paths)
		 */
		DefineView	dv;
		bool		within;
		MemoryContext old;

		dv.path = path;
		dv.row = row;
		dv.var = var;
		old = MemoryContextSwitchTo(rt->evalcxt);
		within = eval_condition(rt, rt->q->within, &dv);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rt->evalcxt);
		if (!within)
			return false;
	}
	if (z->any)
		return true;
	for (k = 0; k < z->nfirst; k++)
		if (define_eval(rt, z->first[k], row, path))
			return false;
	return true;
}

/*
 * NOT v at the end of the pattern (MrAbsentFn): the row is past the
 * absence's deadline (its window's condition fails), or a v row by its
 * DEFINE, or neither.
 */
MrAbsentOutcome
absent_callback(void *arg, int var, int64_t row, const MrPath *path)
{
	MrRuntime  *rt = (MrRuntime *) arg;
	const MrTime *t = rt->q->time;

	if (t->absence_window)
	{
		DefineView	dv;
		bool		within;
		MemoryContext old;

		dv.path = path;
		dv.row = row;
		dv.var = var;
		old = MemoryContextSwitchTo(rt->evalcxt);
		within = eval_condition(rt, t->absence_window, &dv);
		MemoryContextSwitchTo(old);
		if (!within)
		{
			rt->stats.timers_fired++;
			return MR_ABSENT_PASSED;
		}
	}
	return define_eval(rt, var, row, path) ? MR_ABSENT_KILLED : MR_ABSENT_WAIT;
}

/*
 * The deadline of a thread parked at NOT v (MrDeadlineFn): the absence's
 * deadline over the thread's rows, as over a match ending there.
 */
int64_t
deadline_callback(void *arg, int var, const MrPath *path)
{
	MrRuntime  *rt = (MrRuntime *) arg;
	const MrTime *t = rt->q->time;
	MrMatch		m;
	MatchView	mv;
	const MrHist *h;
	Datum		d;
	int64		i;
	int64_t		result = PG_INT64_MAX;
	MemoryContext old;

	if (t->deadline == NULL || path->len <= 0)
		return result;
	old = MemoryContextSwitchTo(rt->evalcxt);
	m.start = path->start;
	m.end = path->start + path->len;
	m.vars = palloc(sizeof(int32) * path->len);
	m.excluded = palloc0(sizeof(bool) * path->len);
	m.number = rt->cur->match_number + 1;
	m.by_end = false;
	for (i = path->len - 1, h = path->last; i >= 0 && h; i--, h = h->prev)
		m.vars[i] = h->var;
	mv.m = &m;
	mv.current = m.end - 1;
	mv.vend = m.end;
	if (eval_time_deadline(rt, &mv, &d))
		result = time_to_int64(t->time_type, d);
	MemoryContextSwitchTo(old);
	MemoryContextReset(rt->evalcxt);
	return result;
}

/*
 * Timeout rows (MrExpiryFn): the expiry of a thread waiting at pc, the
 * earliest deadline of an open window that every path from pc must still
 * map a row under (rt->expiry_must), evaluated over the thread's rows as
 * over a match ending there.
 */
int64_t
expiry_callback(void *arg, int32_t pc, const MrPath *path)
{
	MrRuntime  *rt = (MrRuntime *) arg;
	const MrTime *t = rt->q->time;
	MrMatch		m;
	MatchView	mv;
	const MrHist *h;
	int64_t		result = PG_INT64_MAX;
	int64		i;
	int			k;
	MemoryContext old;

	for (k = 0; k < rt->nexpiry; k++)
		if (rt->expiry_must[k][pc])
			break;
	if (k == rt->nexpiry || path->len <= 0)
		return result;
	old = MemoryContextSwitchTo(rt->evalcxt);
	m.start = path->start;
	m.end = path->start + path->len;
	m.vars = palloc(sizeof(int32) * path->len);
	m.excluded = palloc0(sizeof(bool) * path->len);
	m.number = rt->cur->match_number + 1;
	m.by_end = false;
	for (i = path->len - 1, h = path->last; i >= 0 && h; i--, h = h->prev)
		m.vars[i] = h->var;
	mv.m = &m;
	mv.current = m.end - 1;
	mv.vend = m.end;
	for (; k < rt->nexpiry; k++)
	{
		Datum		d;

		if (rt->expiry_must[k][pc] &&
			eval_time_value(rt, t->expiry_deadline[k], &mv, &d))
		{
			int64		v = time_to_int64(t->time_type, d);

			if (v < result)
				result = v;
		}
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(rt->evalcxt);
	return result;
}

bool
define_callback(void *arg, int var, int64_t row, const MrPath *path)
{
	MrRuntime  *rt = (MrRuntime *) arg;
	const MrBoundQuery *q = rt->q;

	if (unlikely(q->time != NULL))
	{
		if (MR_IS_SYNTH(q->program, var))
			return synthetic_holds(rt, var, row, path);
		if (q->time->nvar_windows[var] > 0 &&
			!window_conditions_hold(rt, var, row, path))
			return false;
	}
	return define_eval(rt, var, row, path);
}

/* DEFINE var (and today's WITHIN) for the candidate row, through the cache */
static bool
define_eval(MrRuntime *rt, int var, int64_t row, const MrPath *path)
{
	const MrBoundQuery *q = rt->q;
	MrLowered  *lw = q->defines[var];
	DefineView	dv;
	bool		result = true;
	bool		cacheable = rt->cacheable[var];
	MemoryContext old;
	EvalContext ec;
	ErrorContextCallback cb;

	if (lw == NULL && q->within == NULL)
		return true;
	if (cacheable && rt->cache_row[var] == row &&
		(!rt->cache_by_start[var] || rt->cache_start[var] == path->start))
		return rt->cache_val[var];

	dv.path = path;
	dv.row = row;
	dv.var = var;

	/* the common case needs no evaluation context */
	if (q->within == NULL && rt->fast_define[var] && rt->fast_define[var]->no_alloc)
	{
		result = eval_fast_condition(rt, rt->fast_define[var], &dv);
		if (cacheable)
		{
			rt->cache_row[var] = row;
			rt->cache_start[var] = path->start;
			rt->cache_val[var] = result;
		}
		return result;
	}

	old = MemoryContextSwitchTo(rt->evalcxt);
	EVAL_CONTEXT_PUSH(cb, ec, rt, false, var);
	if (q->within && !eval_condition(rt, q->within, &dv))
		result = false;
	else if (rt->fast_define[var])
		result = eval_fast_condition(rt, rt->fast_define[var], &dv);
	else if (lw)
		result = eval_condition(rt, lw, &dv);
	EVAL_CONTEXT_POP(cb);
	MemoryContextSwitchTo(old);
	if (!rt->evalcxt->isReset)
		MemoryContextReset(rt->evalcxt);

	if (cacheable)
	{
		rt->cache_row[var] = row;
		rt->cache_start[var] = path->start;
		rt->cache_val[var] = result;
	}
	return result;
}

static void measure_slot_value(MrRuntime *rt, const MatchView *mv, int s, Datum *v,
							   bool *isnull);

/*
 * Time in patterns: the windows a row mapped to var must be within (each
 * "deadline not open yet, or the row's time is at most the deadline"),
 * evaluated over the candidate path like a DEFINE.
 */
bool
window_conditions_hold(MrRuntime *rt, int var, int64_t row, const MrPath *path)
{
	MrLowered **conds = rt->q->time->var_windows[var];
	DefineView	dv;
	bool		result = true;
	MemoryContext old;
	int			k;

	dv.path = path;
	dv.row = row;
	dv.var = var;
	old = MemoryContextSwitchTo(rt->evalcxt);
	for (k = 0; conds[k] != NULL && result; k++)
		result = eval_condition(rt, conds[k], &dv);
	MemoryContextSwitchTo(old);
	return result;
}

/*
 * The deadline of the absence that decided match mv (MATCH_DEADLINE()), as
 * a value of the event time's type in evalcxt; false when it is null.
 */
bool
eval_time_deadline(MrRuntime *rt, const MatchView *mv, Datum *value)
{
	return eval_time_value(rt, rt->q->time->deadline, mv, value);
}

/* a MEASURES-side time expression lw over match mv, in evalcxt; false: null */
static bool
eval_time_value(MrRuntime *rt, MrLowered *lw, const MatchView *mv, Datum *value)
{
	bool		isnull;
	int			k;

	for (k = 0; k < lw->nslots; k++)
	{
		Datum		v = (Datum) 0;
		bool		n = true;

		measure_slot_value(rt, mv, lw->slots[k], &v, &n);
		set_param(rt, lw, k, v, n);
	}
	*value = eval_lowered(rt, lw, &isnull);
	return !isnull;
}

/* CLOCK c: its value (in evalcxt) */
Datum
eval_time_clock(MrRuntime *rt, bool *isnull)
{
	MemoryContext old = MemoryContextSwitchTo(rt->evalcxt);
	Datum		d = eval_lowered(rt, rt->q->time->clock, isnull);

	MemoryContextSwitchTo(old);
	return d;
}

/*
 * Forget every cached DEFINE result: MATCH_NUMBER() has another value now,
 * or the cache is to serve another partition.
 */
void
cache_forget(MrRuntime *rt)
{
	int			v;

	for (v = 0; v < rt->q->clause->nvars; v++)
		rt->cache_row[v] = -1;
}

/* ---------- MEASURES ---------- */

/*
 * The row FIRST/LAST(set, offset) resolves to in a decided match, or -1.
 * RUNNING limits LAST to the rows up to the current one (vend); FIRST
 * counts forward from the match's first row through the whole match, as
 * Trino does, so that RUNNING FIRST(x, 2) is the match's third row on every
 * row of ALL ROWS PER MATCH, the first two included.  (In DEFINE the rows
 * after the candidate do not exist yet: define_logical_row.)
 */
static int64
match_logical_row(const MatchView *mv, const MrSlot *slot)
{
	const MrMatch *m = mv->m;
	int64		vend = (slot->final || slot->logical_first) ? m->end : mv->vend;
	int64		n = slot->logical_offset;
	int64		r;

	if (slot->set.universal)
	{
		r = slot->logical_first ? m->start + n : vend - 1 - n;
		return (r >= m->start && r < vend) ? r : -1;
	}
	if (slot->logical_first)
	{
		for (r = m->start; r < vend; r++)
			if (in_set(&slot->set, m->vars[r - m->start]))
			{
				if (n == 0)
					return r;
				n--;
			}
	}
	else
	{
		for (r = vend - 1; r >= m->start; r--)
			if (in_set(&slot->set, m->vars[r - m->start]))
			{
				if (n == 0)
					return r;
				n--;
			}
	}
	return -1;
}

static int
match_label(const MrMatch *m, int64 pos)
{
	if (pos < m->start || pos >= m->end)
		return -1;
	return m->vars[pos - m->start];
}

static void
measure_slot_value(MrRuntime *rt, const MatchView *mv, int s, Datum *v, bool *isnull)
{
	MrSlot	   *slot = &rt->q->slots[s];
	const MrMatch *m = mv->m;

	if (slot->kind != MR_SLOT_AGG)
	{
		SlotView	sv;

		sv.dv = NULL;
		sv.mv = mv;
		sv.match_number = m->number;
		view_slot_value(rt, &sv, slot, v, isnull);
		return;
	}
	*v = mr_agg_result(slot->agg, agg_state(rt, s), isnull);
}

static inline void
measures_at_last_rows(MrRuntime *rt, int64 start, int64 end)
{
	int			i;

	for (i = 0; i < rt->q->clause->nmeasures; i++)
		measure_at_last_row(rt, rt->cur, i, start, end, &rt->measure_values[i], &rt->measure_nulls[i]);
}

/* evaluate every measure at mv into rt->measure_values */
void
eval_measures(MrRuntime *rt, const MatchView *mv)
{
	const MrBoundQuery *q = rt->q;
	int			i,
				k;
	EvalContext ec;
	ErrorContextCallback cb;

	if (rt->last_rows_known && rt->all_measures_last)
	{
		measures_at_last_rows(rt, mv->m->start, mv->m->end);
		return;
	}
	for (i = 0; i < q->clause->nmeasures; i++)
	{
		MrLowered  *lw = q->measures[i];

		if (rt->last_rows_known && rt->measure_last_var[i] != MR_MEASURE_NOT_LAST)
		{
			const MrMatch *m = mv->m;
			int			v = rt->measure_last_var[i];
			int64		r = v == MR_MEASURE_UNIVERSAL ?
				(m->end > m->start ? m->end - 1 : -1) : rt->last_row_of[v];

			if (r >= 0)
				r += rt->measure_offset[i];
			if (r >= 0 && row_known(rt->cur, r))
			{
				MrRow	   *row = row_at(rt->cur, r);

				rt->measure_values[i] = row->values[rt->measure_column[i]];
				rt->measure_nulls[i] = row->nulls[rt->measure_column[i]];
			}
			else
			{
				rt->measure_values[i] = (Datum) 0;
				rt->measure_nulls[i] = true;
			}
			continue;
		}
		if (rt->measure_is_slot[i])
		{
			rt->measure_values[i] = (Datum) 0;
			rt->measure_nulls[i] = true;
			measure_slot_value(rt, mv, lw->slots[0], &rt->measure_values[i],
							   &rt->measure_nulls[i]);
			continue;
		}
		EVAL_CONTEXT_PUSH(cb, ec, rt, true, i);
		for (k = 0; k < lw->nslots; k++)
		{
			Datum		v = (Datum) 0;
			bool		n = true;

			measure_slot_value(rt, mv, lw->slots[k], &v, &n);
			set_param(rt, lw, k, v, n);
		}
		rt->measure_values[i] = eval_lowered(rt, lw, &rt->measure_nulls[i]);
		EVAL_CONTEXT_POP(cb);
	}
}

/* advance the aggregates of a match over row pos (running or final ones) */
void
advance_match_aggs(MrRuntime *rt, const MrMatch *m, int64 pos, bool final)
{
	const MrBoundQuery *q = rt->q;
	int			k;
	int			label;

	if (!rt->has_aggs)
		return;
	label = match_label(m, pos);
	for (k = 0; k < rt->nagg_slots; k++)
	{
		int			s = rt->agg_slots[k];
		MrSlot	   *slot = &q->slots[s];

		if (slot->final == final && in_set(&slot->set, label))
			agg_advance_row(rt, s, pos, label, m->number);
	}
}

void
restart_aggs(MrRuntime *rt)
{
	int			k;

	for (k = 0; k < rt->nagg_slots; k++)
	{
		int			s = rt->agg_slots[k];

		mr_agg_restart(rt->q->slots[s].agg, agg_state(rt, s));
	}
}

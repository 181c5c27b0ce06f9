/*-------------------------------------------------------------------------
 * mr_exec.c
 *	  The MATCH_RECOGNIZE runtime: partitions, the retained-row window, the
 *	  matcher, AFTER MATCH SKIP, and output rows.
 *
 * Input rows arrive in PARTITION BY / ORDER BY order.  Invariants:
 *  - rows are numbered from 0 within their partition; the window `buf`
 *    holds rows [buf_first, nrows) and nothing older than
 *    (first row any live thread, pending match or unreported unmatched row
 *    can still need) - max_prev, so memory follows the live matches, not
 *    the partition;
 *  - the matcher is fed row r only when rows up to r + max_next are in the
 *    window or the partition has ended (DEFINE may read NEXT);
 *  - a decided match is emitted only when the rows up to its end + max_next
 *    are known for the same reason (MEASURES may read NEXT);
 *  - rows before `unmatched_from` have been reported (in a match, as an
 *    unmatched row, or are covered); `covered_upto` is one past the last row
 *    of any match so far (WITH UNMATCHED ROWS reports a row only once).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/typcache.h"

#include "match_recognize.h"
#include "mr_exec.h"

typedef struct MrRow
{
	Datum	   *values;
	bool	   *nulls;
	MinimalTuple mt;
} MrRow;

struct MrRuntime
{
	MrQuery    *q;
	MrEmitFn	emit;
	void	   *emit_arg;

	MemoryContext cxt;			/* query lifetime */
	MemoryContext rowcxt;		/* retained rows */
	MemoryContext partcxt;		/* partition key copies */
	MemoryContext evalcxt;		/* per evaluation, reset often */
	MemoryContext aggcxt;		/* parent of aggregate states */

	ExprContext *econtext;
	ParamListInfo rowparams;	/* natts + 2 */

	/* partition */
	bool		in_partition;
	bool		partition_ended;
	Datum	   *part_values;
	bool	   *part_nulls;
	FmgrInfo   *part_eq;
	Oid		   *part_coll;

	/* row window: rows [buf_first, nrows) at ring[(head + i) % cap] */
	MrRow	  **ring;
	int64		cap;
	int64		head;
	int64		buf_first;
	int64		nrows;

	MrMatcher  *matcher;
	int64		match_number;
	int64		unmatched_from;
	int64		covered_upto;

	/* DEFINE evaluation caches for path-independent variables */
	int64	   *cache_row;
	bool	   *cache_val;

	/* aggregate states, one per AGG slot (created lazily) */
	MrAggState **aggstates;

	/* output */
	Datum	   *out_values;
	bool	   *out_nulls;
	Datum	   *measure_values;
	bool	   *measure_nulls;

	List	   *subplan_qds;	/* QueryDescs started for sublink expressions */

	bool		degrade_skip;	/* streaming: invalid skip targets degrade */

	MrRuntimeStats stats;
};

/* a match being evaluated (MEASURES) */
typedef struct MatchView
{
	MrMatch    *m;
	int64		current;		/* current row (ALL ROWS) or last row */
	int64		vend;			/* visible rows end (exclusive) for RUNNING */
} MatchView;

static void drive(MrRuntime *rt);
static Datum eval_planned(MrRuntime *rt, PlannedStmt *plan, QueryDesc **qdp,
						  ParamListInfo params, bool *isnull);

/* ---------- row window ---------- */

static inline MrRow *
row_at(MrRuntime *rt, int64 pos)
{
	Assert(pos >= rt->buf_first && pos < rt->nrows);
	return rt->ring[(rt->head + (pos - rt->buf_first)) % rt->cap];
}

static inline bool
row_known(MrRuntime *rt, int64 pos)
{
	return pos >= rt->buf_first && pos < rt->nrows;
}

static void
window_append(MrRuntime *rt, TupleTableSlot *slot)
{
	MemoryContext old = MemoryContextSwitchTo(rt->rowcxt);
	int			natts = rt->q->natts;
	MrRow	   *row;
	HeapTupleData htup;
	int64		count = rt->nrows - rt->buf_first;

	if (count >= rt->cap)
	{
		int64		ncap = rt->cap * 2;
		MrRow	  **nring;
		int64		i;

		MemoryContextSwitchTo(rt->cxt);
		nring = palloc(sizeof(MrRow *) * ncap);
		for (i = 0; i < count; i++)
			nring[i] = rt->ring[(rt->head + i) % rt->cap];
		pfree(rt->ring);
		rt->ring = nring;
		rt->cap = ncap;
		rt->head = 0;
		MemoryContextSwitchTo(rt->rowcxt);
	}
	row = palloc(sizeof(MrRow) + (sizeof(Datum) + sizeof(bool)) * natts);
	row->values = (Datum *) (row + 1);
	row->nulls = (bool *) (row->values + natts);
	row->mt = ExecCopySlotMinimalTuple(slot);
	htup.t_len = row->mt->t_len + MINIMAL_TUPLE_OFFSET;
	htup.t_data = (HeapTupleHeader) ((char *) row->mt - MINIMAL_TUPLE_OFFSET);
	heap_deform_tuple(&htup, rt->q->input_desc, row->values, row->nulls);
	rt->ring[(rt->head + count) % rt->cap] = row;
	rt->nrows++;
	if (rt->nrows - rt->buf_first > rt->stats.max_rows_retained)
		rt->stats.max_rows_retained = rt->nrows - rt->buf_first;
	MemoryContextSwitchTo(old);
}

static void
window_trim(MrRuntime *rt, int64 keep_from)
{
	if (keep_from > rt->nrows)
		keep_from = rt->nrows;
	while (rt->buf_first < keep_from)
	{
		MrRow	   *row = rt->ring[rt->head];

		pfree(row->mt);
		pfree(row);
		rt->head = (rt->head + 1) % rt->cap;
		rt->buf_first++;
	}
}

static void
window_clear(MrRuntime *rt)
{
	window_trim(rt, rt->nrows);
	MemoryContextReset(rt->rowcxt);
	rt->head = 0;
	rt->buf_first = 0;
	rt->nrows = 0;
}

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
eval_row_expr(MrRuntime *rt, MrRowExpr *r, int64 pos, int label, int64 match_number,
			  bool *isnull)
{
	MrRow	   *row;
	int			natts = rt->q->natts;
	int			i;

	if (!row_known(rt, pos))
	{
		*isnull = true;
		return (Datum) 0;
	}
	row = row_at(rt, pos);
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
	rt->rowparams->params[natts + 1].value = Int64GetDatum(match_number);
	rt->rowparams->params[natts + 1].isnull = false;
	if (r->plan)
		return eval_planned(rt, r->plan, &r->qdesc, rt->rowparams, isnull);
	rt->econtext->ecxt_param_list_info = rt->rowparams;
	return ExecEvalExpr(r->state, rt->econtext, isnull);
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
eval_lowered(MrRuntime *rt, MrLowered *lw, bool *isnull)
{
	if (lw->plan == NULL)
	{
		rt->econtext->ecxt_param_list_info = lw->params;
		return ExecEvalExpr(lw->state, rt->econtext, isnull);
	}
	return eval_planned(rt, lw->plan, &lw->qdesc, lw->params, isnull);
}

static void
set_param(MrLowered *lw, int k, Datum v, bool isnull)
{
	lw->params->params[k].value = v;
	lw->params->params[k].isnull = isnull;
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

static inline bool
in_set(const MrVarSet *set, int var)
{
	return set->universal || (var >= 0 && set->member[var]);
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

static void
define_slot_value(MrRuntime *rt, const DefineView *dv, int s, Datum *v, bool *isnull)
{
	MrSlot	   *slot = &rt->q->slots[s];

	switch (slot->kind)
	{
		case MR_SLOT_MATCH_NUMBER:
			*v = Int64GetDatum(rt->match_number + 1);
			*isnull = false;
			return;
		case MR_SLOT_CLASSIFIER:
			{
				MrSlot		tmp = *slot;
				int64		r;

				tmp.logical_first = false;
				tmp.logical_offset = 0;
				r = define_logical_row(dv, &tmp);
				if (r < 0)
				{
					*isnull = true;
					return;
				}
				*v = CStringGetTextDatum(var_name(rt, define_label(dv, r)));
				*isnull = false;
				return;
			}
		case MR_SLOT_NAV:
			{
				int64		r = define_logical_row(dv, slot);

				if (r < 0)
				{
					*isnull = true;
					return;
				}
				r += slot->physical_offset;
				if (r < 0 || !row_known(rt, r))
				{
					*isnull = true;
					return;
				}
				*v = eval_row_expr(rt, &slot->row, r,
								   slot->row.uses_classifier ? define_label(dv, r) : -1,
								   rt->match_number + 1, isnull);
				return;
			}
		case MR_SLOT_AGG:
			{
				MrAggState *st = agg_state(rt, s);
				int64		n = dv->path->len,
							i;
				int64	   *rows = palloc(sizeof(int64) * (n + 1));
				int		   *labels = palloc(sizeof(int) * (n + 1));
				const MrHist *h;
				int64		k = 0;

				mr_agg_restart(slot->agg, st);
				for (h = dv->path->last, i = n - 1; h && i >= 0; h = h->prev, i--)
				{
					rows[i] = h->row;
					labels[i] = h->var;
				}
				for (i = 0; i < n; i++)
					if (in_set(&slot->set, labels[i]))
					{
						agg_advance_row(rt, s, rows[i], labels[i], rt->match_number + 1);
						k++;
					}
				if (in_set(&slot->set, dv->var))
					agg_advance_row(rt, s, dv->row, dv->var, rt->match_number + 1);
				*v = mr_agg_result(slot->agg, st, isnull);
				return;
			}
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
		set_param(lw, k, v, n);
	}
	d = eval_lowered(rt, lw, &isnull);
	return !isnull && DatumGetBool(d);
}

static bool
define_callback(void *arg, int var, int64_t row, const MrPath *path)
{
	MrRuntime  *rt = (MrRuntime *) arg;
	MrQuery    *q = rt->q;
	MrLowered  *lw = q->defines[var];
	DefineView	dv;
	bool		result = true;
	bool		cacheable;
	MemoryContext old;

	cacheable = q->within == NULL && (lw == NULL || (!lw->path_dependent && !lw->start_dependent));
	if (cacheable && rt->cache_row[var] == row)
		return rt->cache_val[var];

	dv.path = path;
	dv.row = row;
	dv.var = var;

	old = MemoryContextSwitchTo(rt->evalcxt);
	if (q->within && !eval_condition(rt, q->within, &dv))
		result = false;
	else if (lw)
		result = eval_condition(rt, lw, &dv);
	MemoryContextSwitchTo(old);
	MemoryContextReset(rt->evalcxt);

	if (cacheable)
	{
		rt->cache_row[var] = row;
		rt->cache_val[var] = result;
	}
	return result;
}

/* ---------- MEASURES ---------- */

static int64
match_logical_row(const MatchView *mv, const MrSlot *slot)
{
	const MrMatch *m = mv->m;
	int64		vend = slot->final ? m->end : mv->vend;
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

	switch (slot->kind)
	{
		case MR_SLOT_MATCH_NUMBER:
			*v = Int64GetDatum(m->number);
			*isnull = false;
			return;
		case MR_SLOT_CLASSIFIER:
			{
				MrSlot		tmp = *slot;
				int64		r;

				tmp.logical_first = false;
				tmp.logical_offset = 0;
				r = match_logical_row(mv, &tmp);
				if (r < 0)
				{
					*isnull = true;
					return;
				}
				*v = CStringGetTextDatum(var_name(rt, match_label(m, r)));
				*isnull = false;
				return;
			}
		case MR_SLOT_NAV:
			{
				int64		r = match_logical_row(mv, slot);

				if (r < 0)
				{
					*isnull = true;
					return;
				}
				r += slot->physical_offset;
				if (r < 0 || !row_known(rt, r))
				{
					*isnull = true;
					return;
				}
				*v = eval_row_expr(rt, &slot->row, r,
								   slot->row.uses_classifier ? match_label(m, r) : -1,
								   m->number, isnull);
				return;
			}
		case MR_SLOT_AGG:
			*v = mr_agg_result(slot->agg, agg_state(rt, s), isnull);
			return;
	}
}

/* evaluate every measure at mv into rt->measure_values */
static void
eval_measures(MrRuntime *rt, const MatchView *mv)
{
	MrQuery    *q = rt->q;
	int			i,
				k;

	for (i = 0; i < q->clause->nmeasures; i++)
	{
		MrLowered  *lw = q->measures[i];

		for (k = 0; k < lw->nslots; k++)
		{
			Datum		v = (Datum) 0;
			bool		n = true;

			measure_slot_value(rt, mv, lw->slots[k], &v, &n);
			set_param(lw, k, v, n);
		}
		rt->measure_values[i] = eval_lowered(rt, lw, &rt->measure_nulls[i]);
	}
}

/* advance the aggregates of a match over row pos (running or final ones) */
static void
advance_match_aggs(MrRuntime *rt, const MrMatch *m, int64 pos, bool final)
{
	MrQuery    *q = rt->q;
	int			s;
	int			label = match_label(m, pos);

	for (s = 0; s < q->nslots; s++)
	{
		MrSlot	   *slot = &q->slots[s];

		if (slot->kind != MR_SLOT_AGG || slot->final != final)
			continue;
		if (in_set(&slot->set, label))
			agg_advance_row(rt, s, pos, label, m->number);
	}
}

static void
restart_aggs(MrRuntime *rt)
{
	int			s;

	for (s = 0; s < rt->q->nslots; s++)
		if (rt->q->slots[s].kind == MR_SLOT_AGG)
			mr_agg_restart(rt->q->slots[s].agg, agg_state(rt, s));
}

/* ---------- output rows ---------- */

static void
emit_row(MrRuntime *rt, int64 pos, bool with_measures, const MrMatch *m)
{
	MrQuery    *q = rt->q;
	MrEmitInfo	info;
	MrRow	   *row = row_known(rt, pos) ? row_at(rt, pos) : NULL;
	int			i;

	for (i = 0; i < q->noutcols; i++)
	{
		MrOutputColumn *oc = &q->outcols[i];

		if (oc->input_column >= 0)
		{
			if (row)
			{
				rt->out_values[i] = row->values[oc->input_column];
				rt->out_nulls[i] = row->nulls[oc->input_column];
			}
			else
			{
				/* ONE ROW PER MATCH: partition columns */
				int			p;

				rt->out_nulls[i] = true;
				for (p = 0; p < q->npartition; p++)
					if (q->partition_cols[p] == oc->input_column)
					{
						rt->out_values[i] = rt->part_values[p];
						rt->out_nulls[i] = rt->part_nulls[p];
					}
			}
		}
		else if (with_measures)
		{
			rt->out_values[i] = rt->measure_values[oc->measure];
			rt->out_nulls[i] = rt->measure_nulls[oc->measure];
		}
		else
		{
			rt->out_values[i] = (Datum) 0;
			rt->out_nulls[i] = true;
		}
	}
	info.match_number = m ? m->number : -1;
	info.match_start = m ? m->start : -1;
	info.match_end = m ? m->end : -1;
	info.row = pos;
	rt->emit(rt->emit_arg, rt->out_values, rt->out_nulls, &info);
	rt->stats.rows_out++;
}

static void
emit_unmatched_upto(MrRuntime *rt, int64 upto)
{
	if (rt->q->clause->rows_per_match == MR_ALL_ROWS_WITH_UNMATCHED)
	{
		int64		r;

		for (r = Max(rt->unmatched_from, rt->covered_upto); r < upto; r++)
		{
			emit_row(rt, r, false, NULL);
			MemoryContextReset(rt->evalcxt);
		}
	}
	if (upto > rt->unmatched_from)
		rt->unmatched_from = upto;
}

static void
emit_match(MrRuntime *rt, MrMatch *m)
{
	MrClause   *c = rt->q->clause;
	MatchView	mv;
	MemoryContext old;
	int64		r;

	mv.m = m;
	restart_aggs(rt);
	old = MemoryContextSwitchTo(rt->evalcxt);

	if (c->rows_per_match == MR_ONE_ROW)
	{
		for (r = m->start; r < m->end; r++)
		{
			advance_match_aggs(rt, m, r, false);
			advance_match_aggs(rt, m, r, true);
		}
		mv.current = m->end - 1;
		mv.vend = m->end;
		eval_measures(rt, &mv);
		emit_row(rt, -1, true, m);
	}
	else if (m->end == m->start)
	{
		if (c->rows_per_match != MR_ALL_ROWS_OMIT_EMPTY)
		{
			mv.current = m->start;
			mv.vend = m->start;
			eval_measures(rt, &mv);
			emit_row(rt, m->start, true, m);
		}
	}
	else
	{
		for (r = m->start; r < m->end; r++)
			advance_match_aggs(rt, m, r, true);
		for (r = m->start; r < m->end; r++)
		{
			CHECK_FOR_INTERRUPTS();
			advance_match_aggs(rt, m, r, false);
			if (m->excluded[r - m->start])
				continue;
			mv.current = r;
			mv.vend = r + 1;
			eval_measures(rt, &mv);
			emit_row(rt, r, true, m);
			MemoryContextReset(rt->evalcxt);
		}
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(rt->evalcxt);
	rt->stats.matches++;
}

/* ---------- AFTER MATCH SKIP ---------- */

static int64
skip_position(MrRuntime *rt, MrMatch *m)
{
	MrClause   *c = rt->q->clause;
	MrVarSet	set;
	int64		r,
				found = -1;

	if (m->end == m->start)
		return m->start + 1;
	switch (c->skip)
	{
		case MR_SKIP_PAST_LAST_ROW:
			return m->end;
		case MR_SKIP_TO_NEXT_ROW:
			return m->start + 1;
		case MR_SKIP_TO_FIRST:
		case MR_SKIP_TO_LAST:
			break;
	}
	memset(&set, 0, sizeof(set));
	set.member = palloc0(sizeof(bool) * Max(c->nvars, 1));
	if (c->skip_var >= 0)
		set.member[c->skip_var] = true;
	else
	{
		MrSubset   *sub = &c->subsets[c->skip_subset];
		int			i;

		for (i = 0; i < sub->nmembers; i++)
			set.member[sub->members[i]] = true;
	}
	for (r = m->start; r < m->end; r++)
		if (set.member[m->vars[r - m->start]])
		{
			found = r;
			if (c->skip == MR_SKIP_TO_FIRST)
				break;
		}
	pfree(set.member);
	if (rt->degrade_skip && (found < 0 || found == m->start))
	{
		rt->stats.skip_degraded++;
		return m->end;
	}
	if (found < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("AFTER MATCH SKIP failed: pattern variable \"%s\" is not present in match %lld",
						c->skip_target.norm, (long long) m->number),
				 errdetail("AFTER MATCH SKIP TO %s %s needs a row mapped to that variable.",
						   c->skip == MR_SKIP_TO_FIRST ? "FIRST" : "LAST", c->skip_target.norm)));
	if (found == m->start)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("AFTER MATCH SKIP failed: cannot skip to first row of match %lld",
						(long long) m->number),
				 errdetail("Resuming at the first row of the match would find the same match again.")));
	return found;
}

/* ---------- the driver ---------- */

static void
too_many_threads(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("row pattern matching exceeded match_recognize.max_threads (%d)", mr_max_threads),
			 errdetail("The DEFINE conditions read the running match (other variables' rows, FIRST/LAST with an offset, or aggregates), so candidate paths cannot be merged."),
			 errhint("Simplify nested quantifiers or alternations, add WITHIN, or raise match_recognize.max_threads.")));
}

static void
drive(MrRuntime *rt)
{
	MrQuery    *q = rt->q;
	MrMatcher  *mt = rt->matcher;
	MrMatch		m;
	MemoryContext old;

	for (;;)
	{
		int64		next;
		MrMatchStatus st;

		CHECK_FOR_INTERRUPTS();
		if (mr_matcher_decided_match(mt, &m))
		{
			int64		skip;

			/* MEASURES may look past the match end */
			if (!rt->partition_ended && rt->nrows < m.end + q->max_next)
				break;
			m.number = rt->match_number + 1;
			emit_unmatched_upto(rt, m.start);
			rt->match_number++;
			emit_match(rt, &m);
			skip = skip_position(rt, &m);
			if (m.end > rt->covered_upto)
				rt->covered_upto = m.end;
			if (m.end == m.start && m.start + 1 > rt->covered_upto)
				rt->covered_upto = m.start + 1;
			rt->unmatched_from = skip;
			old = MemoryContextSwitchTo(rt->cxt);
			mr_matcher_reset(mt, skip);
			MemoryContextSwitchTo(old);
			continue;
		}
		if (mr_matcher_done(mt))
		{
			/* finished without a match: everything left is unmatched */
			emit_unmatched_upto(rt, rt->nrows);
			break;
		}
		next = mr_matcher_next_row(mt);
		if (next < rt->nrows)
		{
			if (q->define_has_next && !rt->partition_ended &&
				next + q->max_next >= rt->nrows)
				break;
			old = MemoryContextSwitchTo(rt->cxt);
			st = mr_matcher_feed(mt, next);
			MemoryContextSwitchTo(old);
			if (st == MR_MATCH_TOO_MANY_THREADS)
				too_many_threads();
			rt->stats.rows_in = Max(rt->stats.rows_in, next + 1);
			/* rows no live thread starts at are unmatched */
			if (!mr_matcher_decided_match(mt, &m))
				emit_unmatched_upto(rt, mr_matcher_earliest_live(mt));
			window_trim(rt, Min(rt->unmatched_from, mr_matcher_earliest_live(mt)) - q->max_prev);
			continue;
		}
		if (rt->partition_ended)
		{
			old = MemoryContextSwitchTo(rt->cxt);
			mr_matcher_finish(mt);
			MemoryContextSwitchTo(old);
			continue;
		}
		break;
	}
}

static void
start_partition(MrRuntime *rt, TupleTableSlot *slot)
{
	MrQuery    *q = rt->q;
	MemoryContext old;
	int			i;

	window_clear(rt);
	MemoryContextReset(rt->partcxt);
	old = MemoryContextSwitchTo(rt->partcxt);
	for (i = 0; i < q->npartition; i++)
	{
		Form_pg_attribute a = TupleDescAttr(q->input_desc, q->partition_cols[i]);
		Datum		d = slot_getattr(slot, q->partition_cols[i] + 1, &rt->part_nulls[i]);

		rt->part_values[i] = rt->part_nulls[i] ? (Datum) 0 : datumCopy(d, a->attbyval, a->attlen);
	}
	MemoryContextSwitchTo(old);
	old = MemoryContextSwitchTo(rt->cxt);
	mr_matcher_reset(rt->matcher, 0);
	MemoryContextSwitchTo(old);
	rt->in_partition = true;
	rt->partition_ended = false;
	rt->match_number = 0;
	rt->unmatched_from = 0;
	rt->covered_upto = 0;
	for (i = 0; i < q->clause->nvars; i++)
		rt->cache_row[i] = -1;
}

static bool
same_partition(MrRuntime *rt, TupleTableSlot *slot)
{
	MrQuery    *q = rt->q;
	int			i;

	for (i = 0; i < q->npartition; i++)
	{
		bool		isnull;
		Datum		d = slot_getattr(slot, q->partition_cols[i] + 1, &isnull);

		if (isnull != rt->part_nulls[i])
			return false;
		if (isnull)
			continue;
		if (!DatumGetBool(FunctionCall2Coll(&rt->part_eq[i], rt->part_coll[i],
											rt->part_values[i], d)))
			return false;
	}
	return true;
}

void
mr_runtime_push(MrRuntime *rt, TupleTableSlot *slot)
{
	if (rt->in_partition && !same_partition(rt, slot))
	{
		rt->partition_ended = true;
		drive(rt);
		rt->in_partition = false;
	}
	if (!rt->in_partition)
		start_partition(rt, slot);
	window_append(rt, slot);
	drive(rt);
}

void
mr_runtime_finish(MrRuntime *rt)
{
	if (rt->in_partition)
	{
		rt->partition_ended = true;
		drive(rt);
		rt->in_partition = false;
	}
	window_clear(rt);
}

MrRuntime *
mr_runtime_create(MrQuery *q, MrEmitFn emit, void *emit_arg)
{
	MrRuntime  *rt = palloc0(sizeof(MrRuntime));
	MrMatcherOptions opts;
	int			i;

	rt->q = q;
	rt->emit = emit;
	rt->emit_arg = emit_arg;
	rt->cxt = CurrentMemoryContext;
	rt->rowcxt = AllocSetContextCreate(rt->cxt, "match_recognize rows", ALLOCSET_DEFAULT_SIZES);
	rt->partcxt = AllocSetContextCreate(rt->cxt, "match_recognize partition", ALLOCSET_SMALL_SIZES);
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

	rt->part_values = palloc0(sizeof(Datum) * Max(q->npartition, 1));
	rt->part_nulls = palloc0(sizeof(bool) * Max(q->npartition, 1));
	rt->part_eq = palloc0(sizeof(FmgrInfo) * Max(q->npartition, 1));
	rt->part_coll = palloc0(sizeof(Oid) * Max(q->npartition, 1));
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
	}

	rt->cap = 64;
	rt->ring = palloc(sizeof(MrRow *) * rt->cap);
	rt->cache_row = palloc(sizeof(int64) * Max(q->clause->nvars, 1));
	rt->cache_val = palloc0(sizeof(bool) * Max(q->clause->nvars, 1));
	rt->aggstates = palloc0(sizeof(MrAggState *) * Max(q->nslots, 1));
	rt->out_values = palloc0(sizeof(Datum) * Max(q->noutcols, 1));
	rt->out_nulls = palloc0(sizeof(bool) * Max(q->noutcols, 1));
	rt->measure_values = palloc0(sizeof(Datum) * Max(q->clause->nmeasures, 1));
	rt->measure_nulls = palloc0(sizeof(bool) * Max(q->clause->nmeasures, 1));

	opts.dedup = q->dedup;
	opts.max_threads = mr_max_threads;
	opts.define = define_callback;
	opts.define_arg = rt;
	rt->matcher = mr_matcher_create(q->program, &opts);
	return rt;
}

void
mr_runtime_destroy(MrRuntime *rt)
{
	ListCell   *lc;

	foreach(lc, rt->subplan_qds)
	{
		QueryDesc **qdp = lfirst(lc);

		ExecutorFinish(*qdp);
		ExecutorEnd(*qdp);
		FreeQueryDesc(*qdp);
		*qdp = NULL;
	}
	rt->subplan_qds = NIL;
	FreeExprContext(rt->econtext, true);
}

int64
mr_runtime_expire_before(MrRuntime *rt, int64 first_alive)
{
	int64		n;
	MemoryContext old = MemoryContextSwitchTo(rt->cxt);

	n = mr_matcher_expire_before(rt->matcher, first_alive);
	MemoryContextSwitchTo(old);
	if (n > 0)
		drive(rt);
	return n;
}

int64
mr_runtime_retained_from(MrRuntime *rt)
{
	int64		from = Min(rt->unmatched_from, mr_matcher_earliest_live(rt->matcher)) - rt->q->max_prev;

	return Max(from, rt->buf_first);
}

void
mr_runtime_checkpoint(MrRuntime *rt, MrRuntimeCheckpoint *cp)
{
	cp->nrows = rt->nrows;
	cp->keep_from = mr_runtime_retained_from(rt);
	cp->matcher_from = Min(rt->unmatched_from, mr_matcher_earliest_live(rt->matcher));
	cp->match_number = rt->match_number;
	cp->unmatched_from = rt->unmatched_from;
	cp->covered_upto = rt->covered_upto;
}

void
mr_runtime_restore(MrRuntime *rt, TupleTableSlot *partition_row,
				   const MrRuntimeCheckpoint *cp)
{
	MemoryContext old;

	start_partition(rt, partition_row);
	rt->buf_first = cp->keep_from;
	rt->nrows = cp->keep_from;
	rt->match_number = cp->match_number;
	rt->unmatched_from = cp->unmatched_from;
	rt->covered_upto = cp->covered_upto;
	old = MemoryContextSwitchTo(rt->cxt);
	mr_matcher_reset(rt->matcher, cp->matcher_from);
	MemoryContextSwitchTo(old);
}

void
mr_runtime_degrade_skip(MrRuntime *rt, bool degrade)
{
	rt->degrade_skip = degrade;
}

int64
mr_runtime_partition_rows(MrRuntime *rt)
{
	return rt->nrows;
}

void
mr_runtime_get_stats(MrRuntime *rt, MrRuntimeStats *stats)
{
	const MrMatcherStats *ms = mr_matcher_stats(rt->matcher);

	*stats = rt->stats;
	stats->steps = ms->steps;
	stats->define_calls = ms->define_calls;
	stats->merged = ms->merged;
	stats->peak_threads = ms->peak_threads;
}

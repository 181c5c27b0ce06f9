/*-------------------------------------------------------------------------
 * mr_runtime.c
 *	  The MATCH_RECOGNIZE runtime: partitions, the retained-row window and
 *	  the matcher.  Settling a decided match (its output rows, AFTER MATCH
 *	  SKIP) is in mr_settle.c, DEFINE and MEASURES evaluation in mr_eval.c,
 *	  the automaton lane (DFA mode) in mr_dfa_lane.c, the runtime's state
 *	  and the helpers every row inlines in mr_runtime_int.h.
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

#include "access/detoast.h"
#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "match_recognize.h"
#include "mr_runtime_int.h"

/* ---------- row window ---------- */

/*
 * A copy of a value that depends on nothing else, in the current memory
 * context: a varlena fetched, decompressed and flattened (an on-disk TOAST
 * pointer would be fetched again by every comparison, and a stream keeps
 * values across transactions, after their rows are gone), anything else
 * as datumCopy() makes it.
 */
Datum
mr_datum_copy_flat(Datum value, bool typbyval, int typlen)
{
	if (!typbyval && typlen == -1 &&
		VARATT_IS_EXTENDED((struct varlena *) DatumGetPointer(value)))
		return PointerGetDatum(detoast_attr((struct varlena *) DatumGetPointer(value)));
	return datumCopy(value, typbyval, typlen);
}

/*
 * The form a retained varlena is kept in.  A value that is valid only as
 * long as its source is (an indirect TOAST pointer, as logical decoding
 * makes, or an expanded object such as an array a subquery computed) is
 * flattened, and so is any stored value of a col_plain column (DEFINE
 * reads those over and over, fast conditions compare them without a
 * copy).  Other columns keep an on-disk TOAST pointer (it stays valid
 * under the query's snapshot; only what reads the value fetches it) and a
 * compressed value as they came.  A detoasted copy is made in evalcxt.
 */
static inline struct varlena *
window_varlena(MrRuntime *rt, int col, struct varlena *v)
{
	if (VARATT_IS_EXTERNAL(v) ?
		rt->col_plain[col] || !VARATT_IS_EXTERNAL_ONDISK(v) :
		rt->col_plain[col] && VARATT_IS_COMPRESSED(v))
	{
		MemoryContext old = MemoryContextSwitchTo(rt->evalcxt);

		v = detoast_attr(v);
		MemoryContextSwitchTo(old);
	}
	return v;
}

/*
 * The bytes a value window_varlena() returned takes in its row: an on-disk
 * TOAST pointer its own size, a short header widened to a 4-byte one.
 */
static inline Size
window_varlena_size(const struct varlena *v)
{
	if (VARATT_IS_EXTERNAL(v))
		return VARSIZE_EXTERNAL(v);
	if (VARATT_IS_SHORT(v))
		return VARSIZE_SHORT(v) - VARHDRSZ_SHORT + VARHDRSZ;
	return VARSIZE(v);
}

static MrRow *
window_append(MrRuntime *rt, TupleTableSlot *slot)
{
	MrRow	   *row;
	int64		count = rt->nrows - rt->buf_first;
	int64		idx;
	Size		byref_size = 0;
	int			i;

	if (count >= rt->cap)
	{
		int64		ncap = rt->cap * 2;
		MrRow	  **nring;
		const MrDfaTrans **ntrans;

		/* the ring is full: every slot holds a live row, the new ones none */
		nring = MemoryContextAllocZero(rt->cxt, sizeof(MrRow *) * ncap);
		ntrans = MemoryContextAllocZero(rt->cxt, sizeof(MrDfaTrans *) * ncap);
		for (i = 0; i < count; i++)
		{
			nring[i] = rt->ring[(rt->head + i) & (rt->cap - 1)];
			ntrans[i] = rt->ring_trans[(rt->head + i) & (rt->cap - 1)];
		}
		pfree(rt->ring);
		pfree(rt->ring_trans);
		rt->ring = nring;
		rt->ring_trans = ntrans;
		rt->cap = ncap;
		rt->head = 0;
	}
	/* a slot past the live rows keeps the row it held, free for reuse */
	idx = (rt->head + count) & (rt->cap - 1);
	row = rt->ring[idx];
	if (row == NULL)
	{
		row = MemoryContextAlloc(rt->rowcxt, sizeof(MrRow) + (sizeof(Datum) + sizeof(bool)) * rt->q->natts);
		row->values = (Datum *) (row + 1);
		row->nulls = (bool *) (row->values + rt->q->natts);
		/* columns nothing reads stay NULL for the row's lifetime */
		for (i = 0; i < rt->q->natts; i++)
		{
			row->values[i] = (Datum) 0;
			row->nulls[i] = true;
		}
	}
	row->byref = NULL;
	row->mask = 0;
	/* (the caller deformed every column) */
	if (rt->needed_byval)
	{
		/*
		 * The common case: copy the by-value columns read, nothing else.  A
		 * recycled row was last touched long ago: find its arrays from its
		 * address rather than from its (probably uncached) header.
		 */
		Datum	   *values = (Datum *) (row + 1);
		bool	   *nulls = (bool *) (values + rt->natts);
		const int  *needed = rt->needed;
		int			n = rt->nneeded;

		/* a NULL's value is never read */
		for (i = 0; i < n; i++)
		{
			int			c = needed[i];

			nulls[c] = slot->tts_isnull[c];
			values[c] = slot->tts_values[c];
		}
	}
	else
	{
		for (i = 0; i < rt->q->natts; i++)
		{
			if (!rt->col_needed[i] || slot->tts_isnull[i])
			{
				row->values[i] = (Datum) 0;
				row->nulls[i] = true;
				continue;
			}
			row->nulls[i] = false;
			row->values[i] = slot->tts_values[i];
			if (rt->col_len[i] == -1)
			{
				struct varlena *v = window_varlena(rt, i, (struct varlena *) DatumGetPointer(row->values[i]));

				row->values[i] = PointerGetDatum(v);
				byref_size += MAXALIGN(window_varlena_size(v));
			}
			else if (!rt->col_byval[i])
				byref_size += MAXALIGN(datumGetSize(slot->tts_values[i], false, rt->col_len[i]));
		}
	}
	if (byref_size > 0)
	{
		char	   *p = MemoryContextAlloc(rt->rowcxt, byref_size);

		row->byref = p;
		for (i = 0; i < rt->q->natts; i++)
			if (!rt->col_byval[i] && !row->nulls[i])
			{
				Pointer		v = DatumGetPointer(row->values[i]);
				Size		sz;

				if (rt->col_len[i] != -1)
				{
					sz = datumGetSize(row->values[i], false, rt->col_len[i]);
					memcpy(p, v, sz);
				}
				else if (VARATT_IS_SHORT(v) && !VARATT_IS_EXTERNAL(v))
				{
					/* widen a packed header */
					sz = window_varlena_size((struct varlena *) v);
					SET_VARSIZE(p, sz);
					memcpy(VARDATA(p), VARDATA_SHORT(v), sz - VARHDRSZ);
				}
				else
				{
					sz = window_varlena_size((struct varlena *) v);
					memcpy(p, v, sz);
				}
				if (v != DatumGetPointer(slot->tts_values[i]))
					pfree(v);	/* detoasted by window_varlena() */
				row->values[i] = PointerGetDatum(p);
				p += MAXALIGN(sz);
			}
	}
	rt->ring[idx] = row;
	rt->append_idx = idx;
	rt->nrows++;
	/* (every appended row is masked here: the statistics count them so) */
	if (rt->dfa_simple)
		row->mask = dfa_mask_simple(rt, slot, row) | DFA_MASK_KNOWN;
	else if (rt->dfa_mask_on_append)
	{
		/* the DEFINEs read this row and earlier ones only: while they are hot */
		row->mask = dfa_mask(rt, rt->nrows - 1, row) | DFA_MASK_KNOWN;
	}
	if (rt->nrows - rt->needed_from > rt->stats.max_rows_retained)
		rt->stats.max_rows_retained = rt->nrows - rt->needed_from;
	return row;
}

static void
window_clear(MrRuntime *rt)
{
	window_trim(rt, rt->nrows);
	rt->head = 0;
	rt->buf_first = 0;
	rt->nrows = 0;
	rt->needed_from = 0;
}

/*
 * The general driver: feed the matcher (mr_match.h) the rows it may take
 * and settle its decided matches, as far as the known rows allow.
 */
static void
drive_matcher(MrRuntime *rt)
{
	const MrBoundQuery *q = rt->q;
	MrMatcher  *mt = rt->matcher;
	MrMatch		m;
	MemoryContext old;
	bool		have_m = false; /* m holds the decided match already */
	bool		none_decided = false;	/* known: no decided match */

	for (;;)
	{
		int64		next;
		int64		earliest;
		MrMatchStatus st;

		CHECK_FOR_INTERRUPTS();
		if (have_m || (!none_decided && mr_matcher_decided_match(mt, &m)))
		{
			int64		skip;

			have_m = false;

			/* MEASURES may look past the match end */
			if (!rt->partition_ended && rt->nrows < m.end + q->max_next)
				break;
			skip = settle_match(rt, &m);
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
			/* rows no live thread starts at are unmatched */
			have_m = mr_matcher_decided_match(mt, &m);
			none_decided = !have_m;
			earliest = mr_matcher_earliest_live(mt);
			if (!have_m)
				emit_unmatched_upto(rt, earliest);
			window_trim(rt, Min(rt->unmatched_from, earliest) - q->max_prev);
			continue;
		}
		if (rt->partition_ended)
		{
			old = MemoryContextSwitchTo(rt->cxt);
			mr_matcher_finish(mt);
			MemoryContextSwitchTo(old);
			none_decided = false;
			continue;
		}
		break;
	}
}

/*
 * Run the runtime's driver as far as the known rows allow: the automaton
 * lane's in DFA mode (drive_dfa(), mr_dfa_lane.c), else the general one.
 * Inline, so that mr_runtime_push() enters either without a call between.
 */
static inline void
drive(MrRuntime *rt)
{
	if (rt->dfa)
	{
		drive_dfa(rt);
		return;
	}
	drive_matcher(rt);
}

/* ---------- partitions and input rows ---------- */

static void
start_partition(MrRuntime *rt, TupleTableSlot *slot)
{
	const MrBoundQuery *q = rt->q;
	MemoryContext old;
	int			i;

	window_clear(rt);
	MemoryContextReset(rt->partcxt);
	old = MemoryContextSwitchTo(rt->partcxt);
	for (i = 0; i < q->npartition; i++)
	{
		Form_pg_attribute a = TupleDescAttr(q->input_desc, q->partition_cols[i]);
		Datum		d = slot_getattr(slot, q->partition_cols[i] + 1, &rt->part_nulls[i]);

		rt->part_values[i] = rt->part_nulls[i] ? (Datum) 0 :
			mr_datum_copy_flat(d, a->attbyval, a->attlen);
	}
	MemoryContextSwitchTo(old);
	old = MemoryContextSwitchTo(rt->cxt);
	mr_matcher_reset(rt->matcher, 0);
	MemoryContextSwitchTo(old);
	if (rt->dfa)
		dfa_reset(rt, 0);
	rt->dfa_prev_row = rt->dfa_null_row;
	rt->in_partition = true;
	rt->partition_ended = false;
	rt->match_number = 0;
	rt->unmatched_from = 0;
	rt->covered_upto = 0;
	for (i = 0; i < q->clause->nvars; i++)
		rt->cache_row[i] = -1;
}

/* the partition ended (if one was running); slot's row starts the next */
static pg_noinline void
next_partition(MrRuntime *rt, TupleTableSlot *slot)
{
	if (rt->in_partition)
	{
		rt->partition_ended = true;
		drive(rt);
		rt->in_partition = false;
	}
	start_partition(rt, slot);
}

static inline bool
same_partition(MrRuntime *rt, TupleTableSlot *slot)
{
	int			i;

	/* the caller deformed every column */
	for (i = 0; i < rt->npartition; i++)
	{
		bool		isnull = slot->tts_isnull[rt->partition_cols[i]];
		Datum		d = slot->tts_values[rt->partition_cols[i]];

		if (isnull != rt->part_nulls[i])
			return false;
		if (isnull)
			continue;
		if (rt->part_bitwise[i])
		{
			if (d != rt->part_values[i])
				return false;
			continue;
		}
		if (!DatumGetBool(FunctionCall2Coll(&rt->part_eq[i], rt->part_coll[i],
											rt->part_values[i], d)))
			return false;
	}
	return true;
}

void
mr_runtime_push(MrRuntime *rt, TupleTableSlot *slot)
{
	MrRow	   *row;

	slot_getallattrs(slot);		/* once, for the partition check and the window */
	if (unlikely(!rt->in_partition) || !same_partition(rt, slot))
		next_partition(rt, slot);
	rt->stats.rows_in++;
	row = window_append(rt, slot);
	if (rt->dfa_fast && rt->dfa_search.pos == rt->nrows - 1 &&
		!mr_dfa_run_decided(&rt->dfa_search))
	{
		/* the usual row: one step, and nothing else to do unless decided */
		if (!dfa_step_appended(rt, row))
			return;
	}
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
mark_row_expr(NeededCtx *cx, MrRowExpr *r)
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
mark_slot(NeededCtx *cx, MrRuntime *rt, MrSlot *slot)
{
	int			i;

	if (slot->kind == MR_SLOT_NAV)
		mark_row_expr(cx, &slot->row);
	else if (slot->kind == MR_SLOT_AGG)
	{
		rt->has_aggs = true;
		for (i = 0; i < slot->naggargs; i++)
			mark_row_expr(cx, &slot->aggargs[i]);
		if (slot->aggfilter)
			mark_row_expr(cx, slot->aggfilter);
	}
}

/* the columns the slots of a lowered expression read */
static void
mark_lowered(NeededCtx *cx, MrRuntime *rt, MrLowered *lw)
{
	int			k;

	if (lw != NULL)
		for (k = 0; k < lw->nslots; k++)
			mark_slot(cx, rt, &rt->q->slots[lw->slots[k]]);
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
		mark_slot(&cx, rt, &q->slots[s]);
	cx.needed = rt->col_plain;
	for (i = 0; i < q->clause->nvars; i++)
		mark_lowered(&cx, rt, q->defines[i]);
	mark_lowered(&cx, rt, q->within);
}

/* a FastCond for lw when it is "$a op $b" with a strict boolean operator */
static FastCond *
make_fast_cond(MrLowered *lw)
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
}

MrRuntime *
mr_runtime_create(const MrBoundQuery *q, MrEmitFn emit, void *emit_arg)
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
	init_expr_exec(rt);

	rt->npartition = q->npartition;
	rt->natts = q->natts;
	rt->partition_cols = q->partition_cols;
	rt->max_prev = q->max_prev;
	rt->part_values = palloc0(sizeof(Datum) * Max(q->npartition, 1));
	rt->part_nulls = palloc0(sizeof(bool) * Max(q->npartition, 1));
	rt->part_eq = palloc0(sizeof(FmgrInfo) * Max(q->npartition, 1));
	rt->part_coll = palloc0(sizeof(Oid) * Max(q->npartition, 1));
	rt->part_bitwise = palloc0(sizeof(bool) * Max(q->npartition, 1));
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

	rt->cap = 64;
	rt->ring = palloc0(sizeof(MrRow *) * rt->cap);
	rt->ring_trans = palloc0(sizeof(MrDfaTrans *) * rt->cap);
	rt->col_needed = palloc0(sizeof(bool) * Max(q->natts, 1));
	rt->col_byval = palloc0(sizeof(bool) * Max(q->natts, 1));
	rt->col_len = palloc0(sizeof(int16) * Max(q->natts, 1));
	rt->col_plain = palloc0(sizeof(bool) * Max(q->natts, 1));
	for (i = 0; i < q->natts; i++)
	{
		rt->col_byval[i] = TupleDescAttr(q->input_desc, i)->attbyval;
		rt->col_len[i] = TupleDescAttr(q->input_desc, i)->attlen;
	}
	compute_needed_columns(rt);
	rt->needed = palloc(sizeof(int) * Max(q->natts, 1));
	rt->needed_byval = true;
	for (i = 0; i < q->natts; i++)
		if (rt->col_needed[i])
		{
			rt->needed[rt->nneeded++] = i;
			if (!rt->col_byval[i])
				rt->needed_byval = false;
		}
	rt->slot_current_column = palloc0(sizeof(bool) * Max(q->nslots, 1));
	for (i = 0; i < q->nslots; i++)
	{
		MrSlot	   *slot = &q->slots[i];

		rt->slot_current_column[i] = slot->kind == MR_SLOT_NAV &&
			!slot->logical_first && slot->logical_offset == 0 &&
			slot->row.column >= 0 && !slot->row.uses_classifier;
	}
	rt->measure_is_slot = palloc0(sizeof(bool) * Max(q->clause->nmeasures, 1));
	for (i = 0; i < q->clause->nmeasures; i++)
	{
		MrLowered  *lw = q->measures[i];

		rt->measure_is_slot[i] = lw->plan == NULL && lw->nslots == 1 &&
			lw->expr != NULL && IsA(lw->expr, Param) &&
			((Param *) lw->expr)->paramkind == PARAM_EXTERN &&
			((Param *) lw->expr)->paramid == 1 &&
			((Param *) lw->expr)->paramtype == q->slots[lw->slots[0]].type;
	}
	rt->measure_last_var = palloc(sizeof(int) * Max(q->clause->nmeasures, 1));
	rt->measure_column = palloc0(sizeof(int) * Max(q->clause->nmeasures, 1));
	rt->measure_offset = palloc0(sizeof(int64) * Max(q->clause->nmeasures, 1));
	rt->last_row_of = palloc(sizeof(int64) * Max(q->clause->nvars, 1));
	for (i = 0; i < q->clause->nmeasures; i++)
	{
		MrSlot	   *slot = rt->measure_is_slot[i] ? &q->slots[q->measures[i]->slots[0]] : NULL;
		int			v,
					nmembers = 0,
					member = -1;

		rt->measure_last_var[i] = MR_MEASURE_NOT_LAST;
		if (slot == NULL || slot->kind != MR_SLOT_NAV || slot->logical_first ||
			slot->logical_offset != 0 || slot->row.column < 0 ||
			slot->row.uses_classifier || slot->within_match)
			continue;
		if (slot->set.universal)
			rt->measure_last_var[i] = MR_MEASURE_UNIVERSAL;
		else
		{
			for (v = 0; v < q->clause->nvars; v++)
				if (slot->set.member[v])
				{
					nmembers++;
					member = v;
				}
			if (nmembers == 1)
				rt->measure_last_var[i] = member;
		}
		if (rt->measure_last_var[i] != MR_MEASURE_NOT_LAST)
		{
			rt->any_measure_last = true;
			rt->measure_column[i] = slot->row.column;
			rt->measure_offset[i] = slot->physical_offset;
		}
	}
	rt->all_measures_last = true;
	for (i = 0; i < q->clause->nmeasures; i++)
		if (rt->measure_last_var[i] == MR_MEASURE_NOT_LAST)
			rt->all_measures_last = false;
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
	rt->cache_row = palloc(sizeof(int64) * Max(q->clause->nvars, 1));
	rt->cache_start = palloc0(sizeof(int64) * Max(q->clause->nvars, 1));
	rt->cache_val = palloc0(sizeof(bool) * Max(q->clause->nvars, 1));
	rt->cacheable = palloc0(sizeof(bool) * Max(q->clause->nvars, 1));
	rt->cache_by_start = palloc0(sizeof(bool) * Max(q->clause->nvars, 1));
	rt->fast_define = palloc0(sizeof(FastCond *) * Max(q->clause->nvars, 1));
	for (i = 0; i < q->clause->nvars; i++)
	{
		MrLowered  *lw = q->defines[i];

		rt->cacheable[i] = lw == NULL || !lw->path_dependent;
		rt->cache_by_start[i] = q->within != NULL || (lw != NULL && lw->start_dependent);
		rt->fast_define[i] = make_fast_cond(lw);
	}
	for (i = 0; i < q->clause->nvars; i++)
	{
		FastCond   *fc = rt->fast_define[i];

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
	rt->skip_member = palloc0(sizeof(bool) * Max(q->clause->nvars, 1));
	if (q->clause->skip == MR_SKIP_TO_FIRST || q->clause->skip == MR_SKIP_TO_LAST)
	{
		MrClause   *c = q->clause;

		if (c->skip_var >= 0)
			rt->skip_member[c->skip_var] = true;
		else
		{
			MrSubset   *sub = &c->subsets[c->skip_subset];

			for (i = 0; i < sub->nmembers; i++)
				rt->skip_member[sub->members[i]] = true;
		}
	}
	rt->dfa_ok = dfa_qualifies(rt);
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
	rt->needed_from = cp->keep_from;
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
	stats->steps = ms->steps + rt->dfa_search.steps;
	stats->define_calls = ms->define_calls + rt->dfa_define_calls;
	if (rt->dfa_mask_on_append)
		stats->define_calls += (uint64) rt->stats.rows_in * rt->dfa_ndefines;
	stats->merged = ms->merged;
	stats->peak_threads = ms->peak_threads;
	if (rt->dfa_auto)
	{
		stats->peak_threads = Max(stats->peak_threads, mr_dfa_peak_threads(rt->dfa_auto));
		stats->automaton_states = mr_dfa_nstates(rt->dfa_auto);
	}
	stats->memo_hits = ms->memo_hits;
}

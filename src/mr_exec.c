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
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/typcache.h"

#include "match_recognize.h"
#include "mr_dfa.h"
#include "mr_exec.h"

/*
 * A retained row: the input columns the query reads, deformed.  A released
 * row stays in its ring slot and is reused by the next row appended there,
 * and by-reference values of one row live in one allocation, so appending
 * a row costs no allocation at all when the columns read are by value, and
 * releasing rows is O(1).
 */
typedef struct MrRow
{
	Datum	   *values;
	bool	   *nulls;
	char	   *byref;			/* copies of the by-reference values, or NULL */
	uint32		mask;			/* DFA mode: DEFINE bitmask | DFA_MASK_KNOWN, or 0 */
} MrRow;

#define DFA_MASK_KNOWN 0x80000000u
#define DFA_TRIM_BATCH 32		/* rows released at once in DFA mode */

/*
 * DFA mode (mr_dfa.h): for a query whose pattern the automaton supports,
 * under MR_DEDUP_STATE, without WITHIN, and whose DEFINEs are all inline
 * comparisons of the current row's columns (and physical PREV/NEXT), every
 * variable's DEFINE is computed once per row into a bitmask (row->mask) and
 * the search advances by one cached transition per row (remembered in
 * ring_trans, beside the row), from which a decided match's labels are read
 * back.
 */


struct MrRuntime
{
	/*
	 * What one input row touches comes first, together: between two rows
	 * the child plan (an index scan walks heap and index pages) pushes
	 * scattered state out of the L1 cache, and a row's work is bound by
	 * how many cache lines it needs, not by its instructions.
	 */
	int64		nrows;
	int64		buf_first;
	int64		head;
	int64		cap;
	int64		append_idx;		/* the ring slot of row nrows - 1 */
	int64		needed_from;	/* rows before it are no longer needed (>= buf_first) */
	int64		unmatched_from;
	MrRow	  **ring;
	const MrDfaTrans **ring_trans;	/* DFA mode: the step that consumed each row */

	const MrRow *dfa_prev_row;	/* dfa_simple: the previous row (kept: max_prev >= 1) */
	MrQuery    *q;
	bool		in_partition;
	bool		partition_ended;
	bool		dfa_fast;		/* DFA, masks on append, no NEXT, no unmatched rows:
								 * dfa_step_appended() */
	bool		dfa_lean;		/* DFA, and matches settle by settle_match_lean() */
	struct DfaCmp *dfa_cmps;	/* dfa_simple: the distinct comparisons */
	int			dfa_ncmps;
	bool		dfa_simple;		/* DFA, no DEFINE reads NEXT or before PREV(x, 1) */
	bool		dfa_mask_on_append; /* DFA, no DEFINE reads NEXT */
	bool		needed_byval;	/* the needed columns are all by value */
	int			nneeded;
	int			dfa_nconds;
	uint32		dfa_true_mask;	/* variables without DEFINE */
	int		   *needed;			/* [nneeded] the columns col_needed marks */
	struct DfaCond *dfa_conds;	/* [dfa_nconds] */
	Datum	   *part_values;
	bool	   *part_nulls;
	bool	   *part_bitwise;
	int			npartition;		/* q->npartition, at hand */
	int			max_prev;		/* q->max_prev, at hand */
	int		   *partition_cols; /* q->partition_cols, at hand */
	int			natts;			/* q->natts, at hand */
	uint64		dfa_define_calls;
	int			dfa_ndefines;
	MrDfaRun	dfa_search;		/* the current search */
	MrRuntimeStats stats;

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
	FmgrInfo   *part_eq;
	Oid		   *part_coll;

	/*
	 * row window: rows [buf_first, nrows) at ring[(head + i) % cap]; cap is
	 * a power of 2; the other slots hold released rows (or NULL)
	 */
	bool	   *col_needed;		/* [natts] columns any expression or output reads */
	bool	   *col_byval;
	int16	   *col_len;
	bool		has_aggs;		/* any AGG slot */

	MrMatcher  *matcher;
	int64		match_number;
	int64		covered_upto;

	/* DEFINE evaluation caches for path-independent variables */
	int64	   *cache_row;
	bool	   *cache_val;
	bool	   *cacheable;		/* [nvars] */
	struct FastCond **fast_define;	/* [nvars] or NULL */

	/* per slot: NAV of a plain column at LAST(set, 0) (+ physical offset) */
	bool	   *slot_current_column;
	/* per measure: the expression is just its one slot's value */
	bool	   *measure_is_slot;
	/*
	 * per measure: -1 when it is the value of a plain column at LAST(v, 0)
	 * (+ PREV/NEXT) of one variable v (>= 0) or of the universal set
	 * (MR_MEASURE_UNIVERSAL); ONE ROW PER MATCH then reads it through
	 * last_row_of, filled by one backward walk of the match
	 */
	int		   *measure_last_var;
	int64	   *last_row_of;	/* [nvars] last row of each variable, or -1 */
	int		   *measure_column; /* and its column and physical offset */
	int64	   *measure_offset;
	bool		any_measure_last;
	bool		all_measures_last;	/* every measure is a column at last_row_of */
	int		   *outcol_part;	/* [noutcols] partition key index, or -1 */
	bool		last_rows_known;	/* eval_measures may use last_row_of */
	bool		last_rows_ready;	/* last_row_of is filled for the match being settled */

	/* partition key comparison without fmgr, when bitwise equality is equality */

	/* aggregate states, one per AGG slot (created lazily) */
	MrAggState **aggstates;

	/* output */
	Datum	   *out_values;
	bool	   *out_nulls;
	Datum	   *measure_values;
	bool	   *measure_nulls;

	List	   *subplan_qds;	/* QueryDescs started for sublink expressions */

	bool		degrade_skip;	/* streaming: invalid skip targets degrade */

	/* DFA mode (see MrRow) */
	bool		dfa_ok;			/* the query qualifies */
	bool		dfa;			/* and the caller asked for it */
	MrDfa	   *dfa_auto;		/* the automaton, shared by all partitions */
	int32	   *dfa_vars;		/* labels of the decided match */
	bool	   *dfa_excl;
	int64		dfa_out_cap;
	MrRow	   *dfa_null_row;	/* ... or this all-NULL one at a partition's start */
	bool	   *skip_member;	/* [nvars] AFTER MATCH SKIP TO FIRST/LAST set */

};

/*
 * A DEFINE condition that is one strict boolean operator over two slot
 * values (DOWN.price < PREV(DOWN.price)) is called directly instead of
 * through the expression interpreter and the parameter list.
 */
typedef enum FastCmp
{
	FAST_FMGR = 0,				/* any strict operator, through fmgr */
	FAST_LT,					/* built-in comparisons done inline */
	FAST_LE,
	FAST_GT,
	FAST_GE,
	FAST_EQ,
	FAST_NE
} FastCmp;

typedef enum FastType
{
	FAST_INT4,
	FAST_INT8,
	FAST_FLOAT8
} FastType;

typedef struct FastCond
{
	FmgrInfo	flinfo;
	Oid			collation;
	int			slot[2];		/* slot index of each argument */
	FastCmp		cmp;
	FastType	type;
	bool		no_alloc;		/* inline compare of plain columns: allocates nothing */
} FastCond;

/* a DEFINE in DFA mode: column col[0] of row pos + off[0] <cmp> the same of [1] */
typedef struct DfaCond
{
	int			var;			/* its bit in the mask */
	int			col[2];
	int32		off[2];
	bool		prev[2];		/* dfa_simple: the operand is PREV(x, 1) */
	FastType	type;
	uint32		truth;			/* bit c + 1: holds when a compares c (-1, 0, 1) to b */
} DfaCond;

/*
 * dfa_simple: one comparison of two operands (a column of the row or of
 * PREV(x, 1)) that one or more DEFINEs make, each with its own operator
 * (DOWN AS price < PREV(price), UP AS price > PREV(price)): compared once,
 * bits[c + 1] are the variables whose condition holds when the first
 * operand compares c (-1, 0, 1) to the second.
 */
typedef struct DfaCmp
{
	int			col[2];
	bool		prev[2];
	FastType	type;
	uint32		bits[3];
} DfaCmp;

#define MR_MEASURE_NOT_LAST (-2)
#define MR_MEASURE_UNIVERSAL (-1)

/* a match being evaluated (MEASURES) */
typedef struct MatchView
{
	MrMatch    *m;
	int64		current;		/* current row (ALL ROWS) or last row */
	int64		vend;			/* visible rows end (exclusive) for RUNNING */
} MatchView;

static void drive(MrRuntime *rt);
static inline uint32 dfa_mask(MrRuntime *rt, int64 pos, MrRow *row);
static inline uint32 dfa_mask_simple(MrRuntime *rt, TupleTableSlot *slot, const MrRow *row);
static Datum eval_planned(MrRuntime *rt, PlannedStmt *plan, QueryDesc **qdp,
						  ParamListInfo params, bool *isnull);

/* ---------- row window ---------- */

static inline MrRow *
row_at(MrRuntime *rt, int64 pos)
{
	Assert(pos >= rt->buf_first && pos < rt->nrows);
	return rt->ring[(rt->head + (pos - rt->buf_first)) & (rt->cap - 1)];
}

/* DFA mode: where the transition that consumed row pos is remembered */
static inline const MrDfaTrans **
row_trans(MrRuntime *rt, int64 pos)
{
	Assert(pos >= rt->buf_first && pos < rt->nrows);
	return &rt->ring_trans[(rt->head + (pos - rt->buf_first)) & (rt->cap - 1)];
}

static inline bool
row_known(MrRuntime *rt, int64 pos)
{
	return pos >= rt->buf_first && pos < rt->nrows;
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
			if (!rt->col_byval[i])
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
				Size		sz = datumGetSize(row->values[i], false, rt->col_len[i]);

				memcpy(p, DatumGetPointer(row->values[i]), sz);
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
window_trim(MrRuntime *rt, int64 keep_from)
{
	if (keep_from > rt->nrows)
		keep_from = rt->nrows;
	if (keep_from > rt->needed_from)
		rt->needed_from = keep_from;
	if (keep_from <= rt->buf_first)
		return;
	/* released rows stay in their slots, for window_append() to reuse */
	if (!rt->needed_byval)
	{
		int64		r;

		for (r = rt->buf_first; r < keep_from; r++)
		{
			MrRow	   *row = row_at(rt, r);

			if (row->byref)
			{
				pfree(row->byref);
				row->byref = NULL;
			}
		}
	}
	rt->head = (rt->head + (keep_from - rt->buf_first)) & (rt->cap - 1);
	rt->buf_first = keep_from;
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

/* a plain column is read from the window without the general machinery */
static inline Datum
eval_row_expr(MrRuntime *rt, MrRowExpr *r, int64 pos, int label, int64 match_number,
			  bool *isnull)
{
	if (r->column >= 0 && row_known(rt, pos))
	{
		MrRow	   *row = row_at(rt, pos);

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

	/*
	 * The common case: a column of the candidate row itself, or a physical
	 * PREV/NEXT of it (DOWN.price, PREV(DOWN.price)).
	 */
	if (rt->slot_current_column[s] && in_set(&slot->set, dv->var))
	{
		int64		r = dv->row + slot->physical_offset;

		if (r >= 0 && row_known(rt, r))
		{
			MrRow	   *row = row_at(rt, r);

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

/* define_slot_value's common case, inline; false when it does not apply */
static inline bool
fast_slot_value(MrRuntime *rt, const DefineView *dv, int s, Datum *v, bool *isnull)
{
	MrSlot	   *slot = &rt->q->slots[s];
	int64		r;

	if (!rt->slot_current_column[s] || !in_set(&slot->set, dv->var))
		return false;
	r = dv->row + slot->physical_offset;
	if (r >= 0 && row_known(rt, r))
	{
		MrRow	   *row = row_at(rt, r);

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
		int			c;

		/* float8 comparisons follow float8_cmp_internal (NaN sorts last) */
		switch (fc->type)
		{
			case FAST_INT4:
				c = (DatumGetInt32(a) > DatumGetInt32(b)) - (DatumGetInt32(a) < DatumGetInt32(b));
				break;
			case FAST_INT8:
				c = (DatumGetInt64(a) > DatumGetInt64(b)) - (DatumGetInt64(a) < DatumGetInt64(b));
				break;
			default:
				c = float8_gt(DatumGetFloat8(a), DatumGetFloat8(b)) -
					float8_lt(DatumGetFloat8(a), DatumGetFloat8(b));
				break;
		}
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

static bool
define_callback(void *arg, int var, int64_t row, const MrPath *path)
{
	MrRuntime  *rt = (MrRuntime *) arg;
	MrQuery    *q = rt->q;
	MrLowered  *lw = q->defines[var];
	DefineView	dv;
	bool		result = true;
	bool		cacheable = rt->cacheable[var];
	MemoryContext old;

	if (lw == NULL && q->within == NULL)
		return true;
	if (cacheable && rt->cache_row[var] == row)
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
			rt->cache_val[var] = result;
		}
		return result;
	}

	old = MemoryContextSwitchTo(rt->evalcxt);
	if (q->within && !eval_condition(rt, q->within, &dv))
		result = false;
	else if (rt->fast_define[var])
		result = eval_fast_condition(rt, rt->fast_define[var], &dv);
	else if (lw)
		result = eval_condition(rt, lw, &dv);
	MemoryContextSwitchTo(old);
	if (!rt->evalcxt->isReset)
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
/*
 * The usual ONE ROW PER MATCH measures (all_measures_last): columns of the
 * last row of a variable (last_row_of, filled) or of the match, rows
 * start .. end - 1, plus a physical offset.
 */
static inline void
measure_at_last_row(MrRuntime *rt, int i, int64 start, int64 end, Datum *value, bool *isnull)
{
	int			v = rt->measure_last_var[i];
	int64		r = v == MR_MEASURE_UNIVERSAL ? end - 1 : rt->last_row_of[v];

	if (r >= 0 && end > start)
	{
		r += rt->measure_offset[i];
		if (row_known(rt, r))
		{
			MrRow	   *row = row_at(rt, r);

			*value = row->values[rt->measure_column[i]];
			*isnull = row->nulls[rt->measure_column[i]];
			return;
		}
	}
	*value = (Datum) 0;
	*isnull = true;
}

static inline void
measures_at_last_rows(MrRuntime *rt, int64 start, int64 end)
{
	int			i;

	for (i = 0; i < rt->q->clause->nmeasures; i++)
		measure_at_last_row(rt, i, start, end, &rt->measure_values[i], &rt->measure_nulls[i]);
}

static void
eval_measures(MrRuntime *rt, const MatchView *mv)
{
	MrQuery    *q = rt->q;
	int			i,
				k;

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
			if (r >= 0 && row_known(rt, r))
			{
				MrRow	   *row = row_at(rt, r);

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
	int			label;

	if (!rt->has_aggs)
		return;
	label = match_label(m, pos);
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

	if (!rt->has_aggs)
		return;
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
			else if (rt->outcol_part[i] >= 0)
			{
				/* ONE ROW PER MATCH: partition columns */
				rt->out_values[i] = rt->part_values[rt->outcol_part[i]];
				rt->out_nulls[i] = rt->part_nulls[rt->outcol_part[i]];
			}
			else
			{
				rt->out_values[i] = (Datum) 0;
				rt->out_nulls[i] = true;
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
	if (rt->has_aggs)
		restart_aggs(rt);
	old = MemoryContextSwitchTo(rt->evalcxt);

	if (c->rows_per_match == MR_ONE_ROW)
	{
		if (rt->has_aggs)
			for (r = m->start; r < m->end; r++)
			{
				advance_match_aggs(rt, m, r, false);
				advance_match_aggs(rt, m, r, true);
			}
		mv.current = m->end - 1;
		mv.vend = m->end;
		if (rt->any_measure_last && rt->last_rows_ready)
			rt->last_rows_known = true;
		else if (rt->any_measure_last)
		{
			/* one walk back over the match serves every LAST(v.col) */
			int			nvars = rt->q->clause->nvars,
						left = nvars;

			for (r = 0; r < nvars; r++)
				rt->last_row_of[r] = -1;
			for (r = m->end - 1; r >= m->start && left > 0; r--)
			{
				int			v = m->vars[r - m->start];

				if (v >= 0 && rt->last_row_of[v] < 0)
				{
					rt->last_row_of[v] = r;
					left--;
				}
			}
			rt->last_rows_known = true;
		}
		eval_measures(rt, &mv);
		rt->last_rows_known = false;
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
	if (!rt->evalcxt->isReset || rt->evalcxt->firstchild != NULL)
		MemoryContextReset(rt->evalcxt);
	rt->stats.matches++;
}

/* ---------- AFTER MATCH SKIP ---------- */

static int64
skip_position(MrRuntime *rt, MrMatch *m)
{
	MrClause   *c = rt->q->clause;
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
	if (c->skip == MR_SKIP_TO_FIRST)
	{
		for (r = m->start; r < m->end; r++)
			if (rt->skip_member[m->vars[r - m->start]])
			{
				found = r;
				break;
			}
	}
	else if (rt->last_rows_ready)
	{
		int			v;

		for (v = 0; v < c->nvars; v++)
			if (rt->skip_member[v] && rt->last_row_of[v] > found)
				found = rt->last_row_of[v];
	}
	else
	{
		for (r = m->end - 1; r >= m->start; r--)
			if (rt->skip_member[m->vars[r - m->start]])
			{
				found = r;
				break;
			}
	}
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

/*
 * Emit a decided match m (its rows up to m->end + max_next are known) and
 * the unmatched rows before it; returns where the search resumes.
 */
static int64
settle_match(MrRuntime *rt, MrMatch *m)
{
	int64		skip;

	m->number = rt->match_number + 1;
	if (rt->q->clause->rows_per_match == MR_ALL_ROWS_WITH_UNMATCHED)
		emit_unmatched_upto(rt, m->start);
	else if (m->start > rt->unmatched_from)
		rt->unmatched_from = m->start;	/* as emit_unmatched_upto() */
	rt->match_number++;
	emit_match(rt, m);
	skip = skip_position(rt, m);
	if (m->end > rt->covered_upto)
		rt->covered_upto = m->end;
	if (m->end == m->start && m->start + 1 > rt->covered_upto)
		rt->covered_upto = m->start + 1;
	rt->unmatched_from = skip;
	rt->last_rows_ready = false;
	return skip;
}

static void drive_dfa(MrRuntime *rt);

static void
drive(MrRuntime *rt)
{
	MrQuery    *q = rt->q;
	MrMatcher  *mt = rt->matcher;
	MrMatch		m;
	MemoryContext old;
	bool		have_m = false; /* m holds the decided match already */
	bool		none_decided = false;	/* known: no decided match */

	if (rt->dfa)
	{
		drive_dfa(rt);
		return;
	}
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

/* ---------- DFA mode ---------- */

/* a compared to b: -1, 0 or 1, in the order of the type's btree opclass */
static inline int
dfa_compare(FastType type, Datum a, Datum b)
{
	int			c;

	switch (type)
	{
		case FAST_INT4:
			c = (DatumGetInt32(a) > DatumGetInt32(b)) - (DatumGetInt32(a) < DatumGetInt32(b));
			break;
		case FAST_INT8:
			c = (DatumGetInt64(a) > DatumGetInt64(b)) - (DatumGetInt64(a) < DatumGetInt64(b));
			break;
		default:
			/* float8_cmp_internal's order: NaN sorts last */
			{
				float8		x = DatumGetFloat8(a),
							y = DatumGetFloat8(b);

				if (likely(!isnan(x) && !isnan(y)))
					c = (x > y) - (x < y);
				else
					c = float8_gt(x, y) - float8_lt(x, y);
			}
			break;
	}
	return c;
}

/* 1 when the condition holds for a and b, else 0, without branching on it */
static inline uint32
dfa_test(const DfaCond *dc, Datum a, Datum b)
{
	return (dc->truth >> (dfa_compare(dc->type, a, b) + 1)) & 1;
}

/*
 * Which variables' DEFINE holds at row pos (whose row is `row`), as a
 * bitmask; as eval_fast_condition(): a NULL operand or a row outside the
 * partition makes the condition false.
 */
static inline uint32
dfa_mask(MrRuntime *rt, int64 pos, MrRow *row)
{
	uint32		mask = rt->dfa_true_mask;
	int			k;

	for (k = 0; k < rt->dfa_nconds; k++)
	{
		const DfaCond *dc = &rt->dfa_conds[k];
		const MrRow *ra,
				   *rb;
		int64		p;

		if (dc->off[0] == 0)
			ra = row;
		else
		{
			p = pos + dc->off[0];
			if (p < rt->buf_first || p >= rt->nrows)
				continue;
			ra = row_at(rt, p);
		}
		if (dc->off[1] == 0)
			rb = row;
		else
		{
			p = pos + dc->off[1];
			if (p < rt->buf_first || p >= rt->nrows)
				continue;
			rb = row_at(rt, p);
		}
		if (ra->nulls[dc->col[0]] || rb->nulls[dc->col[1]])
			continue;
		mask |= dfa_test(dc, ra->values[dc->col[0]], rb->values[dc->col[1]]) << dc->var;
	}
	return mask;
}

/*
 * dfa_mask() for a row being appended when every DEFINE operand is the row
 * itself or PREV(x, 1): the previous row is still in the window (max_prev
 * >= 1 keeps it), so the masks cost a few loads and compares.  Row 0 of a
 * partition reads an all-NULL row instead: a condition reading it is
 * false, as in dfa_mask().
 */
static inline uint32
dfa_mask_simple(MrRuntime *rt, TupleTableSlot *slot, const MrRow *row)
{
	uint32		mask = rt->dfa_true_mask;
	const Datum *values[2];
	const bool *nulls[2];
	int			k;

	/*
	 * The current row's operands come from the slot, not from the copy
	 * just stored into `row`: reading back bytes that were only just
	 * written can stall on store forwarding.
	 */
	values[0] = slot->tts_values;
	nulls[0] = slot->tts_isnull;
	values[1] = rt->dfa_prev_row->values;
	nulls[1] = rt->dfa_prev_row->nulls;
	for (k = 0; k < rt->dfa_ncmps; k++)
	{
		const DfaCmp *g = &rt->dfa_cmps[k];

		if (!(nulls[g->prev[0]][g->col[0]] | nulls[g->prev[1]][g->col[1]]))
			mask |= g->bits[dfa_compare(g->type, values[g->prev[0]][g->col[0]],
										values[g->prev[1]][g->col[1]]) + 1];
	}
	rt->dfa_prev_row = row;
	return mask;
}

/* start a search at row pos */
static inline void
dfa_reset(MrRuntime *rt, int64 pos)
{
	mr_dfa_run_reset(&rt->dfa_search, mr_dfa_initial(rt->dfa_auto), pos);
}

/* the transition of the current state under mask, built on first use */
static pg_noinline const MrDfaTrans *
dfa_build(MrRuntime *rt, uint32 mask)
{
	MemoryContext old = MemoryContextSwitchTo(rt->cxt);
	const MrDfaTrans *t = mr_dfa_build(rt->dfa_auto, rt->dfa_search.cur, mask);

	MemoryContextSwitchTo(old);
	if (t == NULL)
		too_many_threads();
	return t;
}

/*
 * Feed rows from the search's position up to (not including) `limit`,
 * stopping early at a decided match; as drive()'s feeding branch row by row.
 */
static pg_attribute_always_inline void
dfa_run(MrRuntime *rt, int64 limit)
{
	MrQuery    *q = rt->q;
	MrDfaRun   *r = &rt->dfa_search;
	bool		unmatched_rows = q->clause->rows_per_match == MR_ALL_ROWS_WITH_UNMATCHED;

	while (r->pos < limit)
	{
		MrRow	   *row = row_at(rt, r->pos);
		uint32		mask = row->mask;
		const MrDfaTrans *t;
		int64		earliest,
					keep;

		CHECK_FOR_INTERRUPTS();
		if (!(mask & DFA_MASK_KNOWN))
		{
			/* once per row: a re-fed row (after a skip) keeps it */
			mask = dfa_mask(rt, r->pos, row);
			row->mask = mask | DFA_MASK_KNOWN;
			rt->dfa_define_calls += rt->dfa_ndefines;
		}
		mask &= ~DFA_MASK_KNOWN;
		t = r->cur->trans[mask];
		if (unlikely(t == NULL))
			t = dfa_build(rt, mask);
		*row_trans(rt, r->pos) = t;
		mr_dfa_run_step(r, t);

		/* rows no live thread starts at are unmatched */
		earliest = mr_dfa_run_earliest(r);
		if (!r->cur->decided)
		{
			if (unlikely(unmatched_rows))
				emit_unmatched_upto(rt, earliest);
			else if (earliest > rt->unmatched_from)
				rt->unmatched_from = earliest;
		}
		/*
		 * Rows before keep are no longer needed; they are released in
		 * batches, which keeps this branch predictable (a row kept a little
		 * longer is still the partition's row, so nothing reads it wrongly).
		 */
		keep = Min(rt->unmatched_from, earliest) - q->max_prev;
		rt->needed_from = Max(rt->needed_from, keep);
		if (keep > rt->buf_first + DFA_TRIM_BATCH)
			window_trim(rt, keep);
		if (r->cur->decided)
			break;
	}
}

/*
 * dfa_run() for the usual row: the one just appended (whose mask is known),
 * fed right away, no WITH UNMATCHED ROWS.  Returns true when a match is
 * decided (drive_dfa() then settles it).
 */
static pg_attribute_always_inline bool
dfa_step_appended(MrRuntime *rt, const MrRow *row)
{
	MrDfaRun   *r = &rt->dfa_search;
	uint32		mask = row->mask & ~DFA_MASK_KNOWN;
	const MrDfaTrans *t = r->cur->trans[mask];
	int64		earliest,
				keep;

	if (unlikely(t == NULL))
		t = dfa_build(rt, mask);
	rt->ring_trans[rt->append_idx] = t;	/* r->pos is the row just appended */
	mr_dfa_run_step(r, t);
	if (r->cur->decided)
		return true;
	earliest = mr_dfa_run_earliest(r);
	rt->unmatched_from = Max(rt->unmatched_from, earliest);
	/* as in dfa_run(): Min(unmatched_from, earliest) is earliest now */
	keep = earliest - rt->max_prev;
	rt->needed_from = Max(rt->needed_from, keep);
	if (keep > rt->buf_first + DFA_TRIM_BATCH)
		window_trim(rt, keep);
	return false;
}

/* the rows' transitions as mr_dfa_read_back() reads them */
static inline MrDfaTransRing
dfa_trans_ring(MrRuntime *rt)
{
	MrDfaTransRing tr;

	tr.ring = rt->ring_trans;
	tr.mask = (uint64) (rt->cap - 1);
	tr.offset = rt->head - rt->buf_first;
	return tr;
}

/* the decided match, its labels read back through the rows' transitions */
static void
dfa_decided_match(MrRuntime *rt, MrMatch *m)
{
	const MrDfaRun *r = &rt->dfa_search;
	int64		n = r->best_end - r->best_start;
	int			v;

	if (n > rt->dfa_out_cap)
	{
		int64		ncap = Max(n, 2 * rt->dfa_out_cap);

		if (rt->dfa_vars)
		{
			pfree(rt->dfa_vars);
			pfree(rt->dfa_excl);
		}
		rt->dfa_vars = MemoryContextAlloc(rt->cxt, sizeof(int32) * ncap);
		rt->dfa_excl = MemoryContextAlloc(rt->cxt, sizeof(bool) * ncap);
		rt->dfa_out_cap = ncap;
	}
	/* the last row of every variable comes with the walk (emit_match) */
	for (v = 0; v < rt->q->clause->nvars; v++)
		rt->last_row_of[v] = -1;
	mr_dfa_read_back(r, dfa_trans_ring(rt), rt->dfa_vars, rt->dfa_excl, rt->last_row_of);
	rt->last_rows_ready = true;
	m->start = r->best_start;
	m->end = r->best_end;
	m->vars = rt->dfa_vars;
	m->excluded = rt->dfa_excl;
}

/*
 * settle_match() for the usual ONE ROW PER MATCH query in DFA mode
 * (dfa_lean: no aggregates, every measure a column of a variable's last
 * row, no SKIP TO FIRST): the match's labels are never needed, only the
 * last row of each variable, so the read-back records just those and the
 * output row is built directly.  Same results as the general path.
 */
static int64
settle_match_lean(MrRuntime *rt)
{
	MrQuery    *q = rt->q;
	const MrDfaRun *r = &rt->dfa_search;
	MrMatch		m;
	MrEmitInfo	info;
	int64		skip;
	int			i;

	for (i = 0; i < q->clause->nvars; i++)
		rt->last_row_of[i] = -1;
	mr_dfa_read_back(r, dfa_trans_ring(rt), NULL, NULL, rt->last_row_of);
	m.start = r->best_start;
	m.end = r->best_end;
	m.vars = NULL;				/* never read on this path */
	m.excluded = NULL;
	m.number = ++rt->match_number;
	if (m.start > rt->unmatched_from)
		rt->unmatched_from = m.start;
	/* the output row (emit_row()'s ONE ROW PER MATCH case) */
	for (i = 0; i < q->noutcols; i++)
	{
		int			p = rt->outcol_part[i];
		int			k = q->outcols[i].measure;

		if (p >= 0)
		{
			rt->out_values[i] = rt->part_values[p];
			rt->out_nulls[i] = rt->part_nulls[p];
		}
		else if (k >= 0)
			measure_at_last_row(rt, k, m.start, m.end, &rt->out_values[i], &rt->out_nulls[i]);
		else
		{
			rt->out_values[i] = (Datum) 0;
			rt->out_nulls[i] = true;
		}
	}
	info.match_number = m.number;
	info.match_start = m.start;
	info.match_end = m.end;
	info.row = -1;
	rt->emit(rt->emit_arg, rt->out_values, rt->out_nulls, &info);
	rt->stats.rows_out++;
	rt->stats.matches++;
	rt->last_rows_ready = true;
	skip = skip_position(rt, &m);
	rt->last_rows_ready = false;
	if (m.end > rt->covered_upto)
		rt->covered_upto = m.end;
	if (m.end == m.start && m.start + 1 > rt->covered_upto)
		rt->covered_upto = m.start + 1;
	rt->unmatched_from = skip;
	return skip;
}

static void
drive_dfa(MrRuntime *rt)
{
	MrQuery    *q = rt->q;
	MrDfaRun   *r = &rt->dfa_search;

	for (;;)
	{
		int64		limit;

		CHECK_FOR_INTERRUPTS();
		if (mr_dfa_run_decided(r))
		{
			MrMatch		m;

			/* MEASURES may look past the match end */
			if (!rt->partition_ended && rt->nrows < r->best_end + q->max_next)
				break;
			if (rt->dfa_lean)
			{
				dfa_reset(rt, settle_match_lean(rt));
				continue;
			}
			dfa_decided_match(rt, &m);
			dfa_reset(rt, settle_match(rt, &m));
			continue;
		}
		if (mr_dfa_run_failed(r))
		{
			/* finished without a match: everything left is unmatched */
			emit_unmatched_upto(rt, rt->nrows);
			break;
		}
		/* DEFINE may read NEXT: feed a row once its successors are known */
		limit = rt->nrows;
		if (q->define_has_next && !rt->partition_ended)
			limit -= q->max_next;
		if (r->pos < limit)
		{
			dfa_run(rt, limit);
			continue;
		}
		if (rt->partition_ended)
		{
			/* no $ in the pattern: the end settles every thread */
			mr_dfa_run_finish(r, rt->dfa_auto);
			continue;
		}
		break;
	}
}

/* does the query qualify for DFA mode (see MrRow)? */
static bool
dfa_qualifies(MrRuntime *rt)
{
	MrQuery    *q = rt->q;
	int			i,
				k;

	if (q->dedup != MR_DEDUP_STATE || q->within != NULL ||
		!mr_dfa_supports(q->program, q->clause->nvars))
		return false;
	for (i = 0; i < q->clause->nvars; i++)
	{
		FastCond   *fc = rt->fast_define[i];

		if (q->defines[i] == NULL)
			continue;
		if (fc == NULL || !fc->no_alloc)
			return false;
		/* both operands read the candidate row (or PREV/NEXT of it) */
		for (k = 0; k < 2; k++)
			if (!in_set(&q->slots[fc->slot[k]].set, i) ||
				q->slots[fc->slot[k]].physical_offset < -PG_INT32_MAX / 2 ||
				q->slots[fc->slot[k]].physical_offset > PG_INT32_MAX / 2)
				return false;
	}
	return true;
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

static bool
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
	if (rt->in_partition && !same_partition(rt, slot))
	{
		rt->partition_ended = true;
		drive(rt);
		rt->in_partition = false;
	}
	if (!rt->in_partition)
		start_partition(rt, slot);
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

/*
 * Which input columns a retained row must keep: every column for ALL ROWS
 * PER MATCH (they are output), else those read by a slot's row expression.
 */
static void
compute_needed_columns(MrRuntime *rt)
{
	MrQuery    *q = rt->q;
	NeededCtx	cx;
	int			s,
				i;

	cx.needed = rt->col_needed;
	cx.natts = q->natts;
	for (i = 0; i < q->natts; i++)
		cx.needed[i] = q->clause->rows_per_match != MR_ONE_ROW;
	for (s = 0; s < q->nslots; s++)
	{
		MrSlot	   *slot = &q->slots[s];

		if (slot->kind == MR_SLOT_NAV)
			mark_row_expr(&cx, &slot->row);
		else if (slot->kind == MR_SLOT_AGG)
		{
			rt->has_aggs = true;
			for (i = 0; i < slot->naggargs; i++)
				mark_row_expr(&cx, &slot->aggargs[i]);
		}
	}
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
#undef FAST_CASE
		default:
			break;
	}
	return fc;
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
			slot->logical_offset != 0 || slot->row.column < 0 || slot->row.uses_classifier)
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
	rt->cache_val = palloc0(sizeof(bool) * Max(q->clause->nvars, 1));
	rt->cacheable = palloc0(sizeof(bool) * Max(q->clause->nvars, 1));
	rt->fast_define = palloc0(sizeof(FastCond *) * Max(q->clause->nvars, 1));
	for (i = 0; i < q->clause->nvars; i++)
	{
		MrLowered  *lw = q->defines[i];

		rt->cacheable[i] = q->within == NULL &&
			(lw == NULL || (!lw->path_dependent && !lw->start_dependent));
		rt->fast_define[i] = make_fast_cond(lw);
	}
	for (i = 0; i < q->clause->nvars; i++)
	{
		FastCond   *fc = rt->fast_define[i];

		if (fc)
			fc->no_alloc = fc->cmp != FAST_FMGR &&
				rt->slot_current_column[fc->slot[0]] &&
				rt->slot_current_column[fc->slot[1]];
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

/*
 * Run in DFA mode when the query qualifies (see MrRow); call before the
 * first row.  Only the custom scan asks, so the function path
 * (mr_srf.c) stays an independent reference for it.
 */
bool
mr_runtime_uses_dfa(MrRuntime *rt)
{
	return rt->dfa;
}

void
mr_runtime_use_dfa(MrRuntime *rt)
{
	MemoryContext old;
	int			i;

	if (!rt->dfa_ok || rt->dfa || rt->in_partition)
		return;
	old = MemoryContextSwitchTo(rt->cxt);
	rt->dfa_auto = mr_dfa_create(rt->q->program, rt->q->clause->nvars, mr_max_threads);
	MemoryContextSwitchTo(old);
	rt->dfa_conds = MemoryContextAllocZero(rt->cxt,
										   sizeof(DfaCond) * Max(rt->q->clause->nvars, 1));
	for (i = 0; i < rt->q->clause->nvars; i++)
	{
		FastCond   *fc = rt->fast_define[i];
		DfaCond    *dc;
		int			k;

		if (rt->q->defines[i] == NULL)
		{
			rt->dfa_true_mask |= (uint32) 1 << i;
			continue;
		}
		rt->dfa_ndefines++;
		dc = &rt->dfa_conds[rt->dfa_nconds++];
		dc->var = i;
		for (k = 0; k < 2; k++)
		{
			MrSlot	   *slot = &rt->q->slots[fc->slot[k]];

			dc->col[k] = slot->row.column;
			dc->off[k] = (int32) slot->physical_offset;
		}
		dc->type = fc->type;
		switch (fc->cmp)
		{
			case FAST_LT:
				dc->truth = 1;
				break;
			case FAST_LE:
				dc->truth = 1 | 2;
				break;
			case FAST_GT:
				dc->truth = 4;
				break;
			case FAST_GE:
				dc->truth = 2 | 4;
				break;
			case FAST_EQ:
				dc->truth = 2;
				break;
			default:
				dc->truth = 1 | 4;
				break;
		}
	}
	rt->dfa_mask_on_append = true;
	rt->dfa_simple = true;
	for (i = 0; i < rt->dfa_nconds; i++)
	{
		DfaCond    *dc = &rt->dfa_conds[i];

		if (dc->off[0] > 0 || dc->off[1] > 0)
			rt->dfa_mask_on_append = false;
		if (dc->off[0] < -1 || dc->off[0] > 0 || dc->off[1] < -1 || dc->off[1] > 0)
			rt->dfa_simple = false;
	}
	rt->dfa_cmps = MemoryContextAllocZero(rt->cxt, sizeof(DfaCmp) * Max(rt->dfa_nconds, 1));
	for (i = 0; i < rt->dfa_nconds; i++)
	{
		DfaCond    *dc = &rt->dfa_conds[i];
		DfaCmp	   *g = NULL;
		int			k;

		dc->prev[0] = dc->off[0] == -1;
		dc->prev[1] = dc->off[1] == -1;
		for (k = 0; k < rt->dfa_ncmps && g == NULL; k++)
			if (rt->dfa_cmps[k].col[0] == dc->col[0] && rt->dfa_cmps[k].col[1] == dc->col[1] &&
				rt->dfa_cmps[k].prev[0] == dc->prev[0] && rt->dfa_cmps[k].prev[1] == dc->prev[1] &&
				rt->dfa_cmps[k].type == dc->type)
				g = &rt->dfa_cmps[k];
		if (g == NULL)
		{
			g = &rt->dfa_cmps[rt->dfa_ncmps++];
			g->col[0] = dc->col[0];
			g->col[1] = dc->col[1];
			g->prev[0] = dc->prev[0];
			g->prev[1] = dc->prev[1];
			g->type = dc->type;
		}
		for (k = 0; k < 3; k++)
			if ((dc->truth >> k) & 1)
				g->bits[k] |= (uint32) 1 << dc->var;
	}
	/* a partition's first row has no previous row: PREV reads NULLs */
	rt->dfa_null_row = MemoryContextAllocZero(rt->cxt, sizeof(MrRow) +
											  (sizeof(Datum) + sizeof(bool)) * Max(rt->q->natts, 1));
	rt->dfa_null_row->values = (Datum *) (rt->dfa_null_row + 1);
	rt->dfa_null_row->nulls = (bool *) (rt->dfa_null_row->values + Max(rt->q->natts, 1));
	memset(rt->dfa_null_row->nulls, true, Max(rt->q->natts, 1));
	rt->dfa_prev_row = rt->dfa_null_row;
	rt->dfa = true;
	rt->dfa_fast = rt->dfa_mask_on_append && !rt->q->define_has_next &&
		rt->q->clause->rows_per_match != MR_ALL_ROWS_WITH_UNMATCHED;
	rt->dfa_lean = rt->q->clause->rows_per_match == MR_ONE_ROW &&
		!rt->has_aggs && rt->all_measures_last &&
		rt->q->clause->skip != MR_SKIP_TO_FIRST && !rt->degrade_skip;
	dfa_reset(rt, 0);
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

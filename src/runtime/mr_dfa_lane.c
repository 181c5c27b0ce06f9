/*-------------------------------------------------------------------------
 * mr_dfa_lane.c
 *	  The MATCH_RECOGNIZE runtime's automaton lane (DFA mode, mr_dfa.h):
 *	  whether a query qualifies, its DEFINEs turned into comparisons that
 *	  give a row's mask, the driver that feeds rows to the cached automaton,
 *	  and the settling of its decided matches.
 *
 * DFA mode (see MrRow in mr_runtime_int.h): for a query whose pattern the
 * automaton supports, under MR_DEDUP_STATE, without WITHIN, and whose
 * DEFINEs are all inline comparisons of the current row's columns (and
 * physical PREV/NEXT), every variable's DEFINE is computed once per row
 * into a bitmask (row->mask) and the search advances by one cached
 * transition per row (remembered in ring_trans, beside the row), from
 * which a decided match's labels are read back.  The usual row (masked on
 * append, fed right away: dfa_fast) is stepped by dfa_step_appended(),
 * inlined into a push (push_row(), mr_runtime.c); this file runs the rest:
 * rows fed again after a skip, every row when dfa_fast does not hold (a
 * DEFINE reads NEXT, or WITH UNMATCHED ROWS), the partition's end, and
 * decided matches, for the partition state it is given.
 *
 * Invariants (besides the row window's, mr_runtime.c):
 *  - a row's mask is computed once (DFA_MASK_KNOWN marks it), so a row fed
 *    again after AFTER MATCH SKIP keeps it;
 *  - ring_trans holds, beside each retained row, the transition that
 *    consumed it, and the rows of the pending match and of every live
 *    thread stay in the window (needed_from; released in batches of
 *    DFA_TRIM_BATCH rows), as mr_dfa_read_back() needs;
 *  - the results are those of the general driver (drive_matcher(),
 *    mr_runtime.c): settle_match_lean() is settle_match() for the ONE ROW PER
 *    MATCH queries that need no labels, and dfa_run() is drive_matcher()'s
 *    feeding branch; only the custom scan asks for DFA mode, so the
 *    function path (mr_srf.c) stays an independent reference for it.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "match_recognize.h"
#include "mr_runtime_int.h"

/* ---------- DFA mode ---------- */

/* the transition of the current state under mask, built on first use */
pg_noinline const MrDfaTrans *
dfa_build(MrRuntime *rt, MrPartState *ps, uint32 mask)
{
	MemoryContext old = MemoryContextSwitchTo(rt->cxt);
	const MrDfaTrans *t = mr_dfa_build(rt->lane.automaton, ps->dfa_search.cur, mask);

	MemoryContextSwitchTo(old);
	if (t == NULL)
		too_many_threads();
	return t;
}

/*
 * Feed rows from the search's position up to (not including) `limit`,
 * stopping early at a decided match; as drive_matcher()'s feeding branch row
 * by row.
 */
static pg_attribute_always_inline void
dfa_run(MrRuntime *rt, MrPartState *ps, int64 limit)
{
	const MrBoundQuery *q = rt->q;
	MrDfaRun   *r = &ps->dfa_search;
	bool		unmatched_rows = q->clause->rows_per_match == MR_ALL_ROWS_WITH_UNMATCHED;

	while (r->pos < limit)
	{
		MrRow	   *row = row_at(ps, r->pos);
		uint32		mask = row->mask;
		const MrDfaTrans *t;
		int64		earliest,
					keep;

		CHECK_FOR_INTERRUPTS();
		if (!(mask & DFA_MASK_KNOWN))
		{
			/* once per row: a re-fed row (after a skip) keeps it */
			mask = dfa_mask(rt, ps, r->pos, row);
			row->mask = mask | DFA_MASK_KNOWN;
			rt->lane.define_calls += rt->lane.ndefines;
		}
		mask &= ~DFA_MASK_KNOWN;
		t = r->cur->trans[mask];
		if (unlikely(t == NULL))
			t = dfa_build(rt, ps, mask);
		*row_trans(ps, r->pos) = t;
		mr_dfa_run_step(r, t);

		/* rows no live thread starts at are unmatched */
		earliest = mr_dfa_run_earliest(r);
		if (!r->cur->decided)
		{
			if (unlikely(unmatched_rows))
				emit_unmatched_upto(rt, ps, earliest);
			else if (earliest > ps->unmatched_from)
				ps->unmatched_from = earliest;
		}
		/*
		 * Rows before keep are no longer needed; they are released in
		 * batches, which keeps this branch predictable (a row kept a little
		 * longer is still the partition's row, so nothing reads it wrongly).
		 */
		keep = Min(ps->unmatched_from, earliest) - q->max_prev;
		ps->needed_from = Max(ps->needed_from, keep);
		if (keep > ps->buf_first + DFA_TRIM_BATCH)
			window_trim(rt, ps, keep);
		if (r->cur->decided)
			break;
	}
}

/* the rows' transitions as mr_dfa_read_back() reads them */
static inline MrDfaTransRing
dfa_trans_ring(MrPartState *ps)
{
	MrDfaTransRing tr;

	tr.ring = ps->ring_trans;
	tr.mask = (uint64) (ps->cap - 1);
	tr.offset = ps->head - ps->buf_first;
	return tr;
}

/* the decided match, its labels read back through the rows' transitions */
static void
dfa_decided_match(MrRuntime *rt, MrPartState *ps, MrMatch *m)
{
	const MrDfaRun *r = &ps->dfa_search;
	int64		n = r->best_end - r->best_start;
	int			v;

	if (n > rt->lane.out_cap)
	{
		int64		ncap = Max(n, 2 * rt->lane.out_cap);

		if (rt->lane.vars)
		{
			pfree(rt->lane.vars);
			pfree(rt->lane.excl);
		}
		rt->lane.vars = MemoryContextAlloc(rt->cxt, sizeof(int32) * ncap);
		rt->lane.excl = MemoryContextAlloc(rt->cxt, sizeof(bool) * ncap);
		rt->lane.out_cap = ncap;
	}
	/* the last row of every variable comes with the walk (emit_match) */
	for (v = 0; v < rt->q->clause->nvars; v++)
		rt->last_row_of[v] = -1;
	mr_dfa_read_back(r, dfa_trans_ring(ps), rt->lane.vars, rt->lane.excl, rt->last_row_of);
	rt->last_rows_ready = true;
	m->start = r->best_start;
	m->end = r->best_end;
	m->vars = rt->lane.vars;
	m->excluded = rt->lane.excl;
}

/*
 * settle_match() for the usual ONE ROW PER MATCH query in DFA mode
 * (dfa_lean: no aggregates, every measure a column of a variable's last
 * row, no SKIP TO FIRST): the match's labels are never needed, only the
 * last row of each variable, so the read-back records just those and the
 * output row is built directly.  Same results as the general path.
 */
static int64
settle_match_lean(MrRuntime *rt, MrPartState *ps)
{
	const MrBoundQuery *q = rt->q;
	const MrDfaRun *r = &ps->dfa_search;
	MrMatch		m;
	MrEmitInfo	info;
	int64		skip;
	int			i;

	for (i = 0; i < q->clause->nvars; i++)
		rt->last_row_of[i] = -1;
	mr_dfa_read_back(r, dfa_trans_ring(ps), NULL, NULL, rt->last_row_of);
	m.start = r->best_start;
	m.end = r->best_end;
	m.vars = NULL;				/* never read on this path */
	m.excluded = NULL;
	m.number = ++ps->match_number;
	if (m.start > ps->unmatched_from)
		ps->unmatched_from = m.start;
	/* the output row (emit_row()'s ONE ROW PER MATCH case) */
	for (i = 0; i < q->noutcols; i++)
	{
		int			p = rt->outcol_part[i];
		int			k = q->outcols[i].measure;

		if (p >= 0)
		{
			rt->out_values[i] = ps->part_values[p];
			rt->out_nulls[i] = ps->part_nulls[p];
		}
		else if (k >= 0)
			measure_at_last_row(rt, ps, k, m.start, m.end, &rt->out_values[i], &rt->out_nulls[i]);
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
	info.run_arg = ps->run_arg;
	rt->emit(rt->emit_arg, rt->out_values, rt->out_nulls, &info);
	rt->stats.rows_out++;
	rt->stats.matches++;
	rt->last_rows_ready = true;
	skip = skip_position(rt, &m);
	rt->last_rows_ready = false;
	if (m.end > ps->covered_upto)
		ps->covered_upto = m.end;
	if (m.end == m.start && m.start + 1 > ps->covered_upto)
		ps->covered_upto = m.start + 1;
	ps->unmatched_from = skip;
	return skip;
}

void
drive_dfa(MrRuntime *rt, MrPartState *ps)
{
	const MrBoundQuery *q = rt->q;
	MrDfaRun   *r = &ps->dfa_search;

	for (;;)
	{
		int64		limit;

		CHECK_FOR_INTERRUPTS();
		if (mr_dfa_run_decided(r))
		{
			MrMatch		m;

			/* MEASURES may look past the match end */
			if (!ps->partition_ended && ps->nrows < r->best_end + q->max_next)
				break;
			if (rt->lane.lean)
			{
				dfa_reset(rt, ps, settle_match_lean(rt, ps));
				continue;
			}
			dfa_decided_match(rt, ps, &m);
			dfa_reset(rt, ps, settle_match(rt, ps, &m));
			continue;
		}
		if (mr_dfa_run_failed(r))
		{
			/* finished without a match: everything left is unmatched */
			emit_unmatched_upto(rt, ps, ps->nrows);
			break;
		}
		/* DEFINE may read NEXT: feed a row once its successors are known */
		limit = ps->nrows;
		if (q->define_has_next && !ps->partition_ended)
			limit -= q->max_next;
		if (r->pos < limit)
		{
			dfa_run(rt, ps, limit);
			continue;
		}
		if (ps->partition_ended)
		{
			/* no $ in the pattern: the end settles every thread */
			mr_dfa_run_finish(r, rt->lane.automaton);
			continue;
		}
		break;
	}
}

/* does the query qualify for DFA mode (see MrRow)? */
bool
dfa_qualifies(MrRuntime *rt)
{
	const MrBoundQuery *q = rt->q;
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

/*
 * Run in DFA mode when the query qualifies (see MrRow); call before the
 * first row and before any partition run is created.  Only the custom scan
 * asks, so the function path (mr_srf.c) stays an independent reference for
 * it.
 */
bool
mr_runtime_uses_dfa(MrRuntime *rt)
{
	return rt->lane.on;
}

void
mr_runtime_use_dfa(MrRuntime *rt)
{
	MemoryContext old;
	int			i;

	if (!rt->lane.ok || rt->lane.on || rt->own->in_partition || rt->nruns > 0)
		return;
	old = MemoryContextSwitchTo(rt->cxt);
	rt->lane.automaton = mr_dfa_create(rt->q->program, rt->q->clause->nvars, mr_max_threads);
	MemoryContextSwitchTo(old);
	if (rt->lane.automaton == NULL)
		return;					/* its automaton would be too large */
	rt->lane.conds = MemoryContextAllocZero(rt->cxt,
										   sizeof(DfaCond) * Max(rt->q->clause->nvars, 1));
	for (i = 0; i < rt->q->clause->nvars; i++)
	{
		FastCond   *fc = rt->fast_define[i];
		DfaCond    *dc;
		int			k;

		if (rt->q->defines[i] == NULL)
		{
			rt->lane.true_mask |= (uint32) 1 << i;
			continue;
		}
		rt->lane.ndefines++;
		dc = &rt->lane.conds[rt->lane.nconds++];
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
	rt->lane.mask_on_append = true;
	rt->lane.simple = true;
	for (i = 0; i < rt->lane.nconds; i++)
	{
		DfaCond    *dc = &rt->lane.conds[i];

		if (dc->off[0] > 0 || dc->off[1] > 0)
			rt->lane.mask_on_append = false;
		if (dc->off[0] < -1 || dc->off[0] > 0 || dc->off[1] < -1 || dc->off[1] > 0)
			rt->lane.simple = false;
	}
	rt->lane.cmps = MemoryContextAllocZero(rt->cxt, sizeof(DfaCmp) * Max(rt->lane.nconds, 1));
	for (i = 0; i < rt->lane.nconds; i++)
	{
		DfaCond    *dc = &rt->lane.conds[i];
		DfaCmp	   *g = NULL;
		int			k;

		dc->prev[0] = dc->off[0] == -1;
		dc->prev[1] = dc->off[1] == -1;
		for (k = 0; k < rt->lane.ncmps && g == NULL; k++)
			if (rt->lane.cmps[k].col[0] == dc->col[0] && rt->lane.cmps[k].col[1] == dc->col[1] &&
				rt->lane.cmps[k].prev[0] == dc->prev[0] && rt->lane.cmps[k].prev[1] == dc->prev[1] &&
				rt->lane.cmps[k].type == dc->type)
				g = &rt->lane.cmps[k];
		if (g == NULL)
		{
			g = &rt->lane.cmps[rt->lane.ncmps++];
			g->col[0] = dc->col[0];
			g->col[1] = dc->col[1];
			g->prev[0] = dc->prev[0];
			g->prev[1] = dc->prev[1];
			g->type = dc->type;
			if (g->type == FAST_NUMERIC)
				rt->lane.cur_from_row = true;
		}
		for (k = 0; k < 3; k++)
			if ((dc->truth >> k) & 1)
				g->bits[k] |= (uint32) 1 << dc->var;
	}
	/* a partition's first row has no previous row: PREV reads NULLs */
	rt->lane.null_row = MemoryContextAllocZero(rt->cxt, sizeof(MrRow) +
											  (sizeof(Datum) + sizeof(bool)) * Max(rt->q->natts, 1));
	rt->lane.null_row->values = (Datum *) (rt->lane.null_row + 1);
	rt->lane.null_row->nulls = (bool *) (rt->lane.null_row->values + Max(rt->q->natts, 1));
	memset(rt->lane.null_row->nulls, true, Max(rt->q->natts, 1));
	rt->own->dfa_prev_row = rt->lane.null_row;
	rt->lane.on = true;
	rt->lane.fast = rt->lane.mask_on_append && !rt->q->define_has_next &&
		rt->q->clause->rows_per_match != MR_ALL_ROWS_WITH_UNMATCHED;
	rt->lane.lean = rt->q->clause->rows_per_match == MR_ONE_ROW &&
		!rt->has_aggs && rt->all_measures_last &&
		rt->q->clause->skip != MR_SKIP_TO_FIRST && !rt->degrade_skip;
	dfa_reset(rt, rt->own, 0);
}

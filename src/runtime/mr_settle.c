/*-------------------------------------------------------------------------
 * mr_settle.c
 *	  Settling a decided match: the unmatched rows before it (WITH
 *	  UNMATCHED ROWS), its output rows with their MEASURES, and where the
 *	  search resumes (AFTER MATCH SKIP).
 *
 * Both drivers settle their matches here: the general one (drive_matcher(),
 * mr_runtime.c) and the automaton lane (mr_dfa_lane.c), whose lean path for
 * the usual ONE ROW PER MATCH query builds its row itself but resumes by
 * the same skip_position().  So the lanes share what a match outputs and
 * neither calls the other.
 *
 * Time in patterns: a match that the end of its partition accepted at a
 * NOT v (by_end) is decided by the clock passing its deadline.  CLOCK c
 * decides at once (the partition's output from there on is emitted or
 * dropped); CLOCK MAX, the input's largest event time, is known only at the
 * end of the input, so that output is held (HeldRow) and emitted by
 * mr_runtime_finish() iff the clock passed it.  The clock is monotone, so
 * holding every later output row of the partition with at least the same
 * deadline is exact.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/datum.h"
#include "utils/memutils.h"

#include "mr_runtime_int.h"

/* ---------- output rows ---------- */

/*
 * An output row decided at the end of its partition by a deadline, kept
 * until the input's clock (CLOCK MAX) is known: a flat copy in the
 * runtime's context.
 */
typedef struct HeldRow
{
	int64		decided_at;
	Datum	   *values;
	bool	   *nulls;
	MrEmitInfo	info;
	bool		timed_out;		/* a timeout row */
} HeldRow;

static void
hold_row(MrRuntime *rt, MrPartState *ps, const MrEmitInfo *info)
{
	TupleDesc	desc = rt->q->result_desc;
	MemoryContext old = MemoryContextSwitchTo(rt->cxt);
	HeldRow    *h = palloc(sizeof(HeldRow));
	int			i;

	h->decided_at = ps->hold_at;
	h->values = palloc(sizeof(Datum) * Max(rt->q->noutcols, 1));
	h->nulls = palloc(sizeof(bool) * Max(rt->q->noutcols, 1));
	for (i = 0; i < rt->q->noutcols; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		h->nulls[i] = rt->out_nulls[i];
		h->values[i] = h->nulls[i] ? (Datum) 0 :
			datumCopy(rt->out_values[i], att->attbyval, att->attlen);
	}
	h->info = *info;
	h->timed_out = rt->match_timed_out;
	rt->held = lappend(rt->held, h);
	rt->stats.rows_held++;
	MemoryContextSwitchTo(old);
}

/*
 * The input ended: emit the held rows whose deadline the clock passed, and
 * count the timers the ends of partitions passed by that clock.
 */
void
emit_held_rows(MrRuntime *rt)
{
	ListCell   *lc;
	int			i;

	foreach(lc, rt->held)
	{
		HeldRow    *h = lfirst(lc);

		CHECK_FOR_INTERRUPTS();
		if (rt->have_max_time && rt->max_time > h->decided_at)
		{
			rt->emit(rt->emit_arg, h->values, h->nulls, &h->info);
			rt->stats.rows_out++;
			if (h->timed_out)
				rt->stats.timeout_rows++;
		}
	}
	rt->held = NIL;
	for (i = 0; i < rt->npending_timers; i++)
		if (rt->have_max_time && rt->max_time > rt->pending_timer_at[i])
			rt->stats.timers_fired += rt->pending_timer_n[i];
	rt->npending_timers = 0;
}

static void
emit_row(MrRuntime *rt, MrPartState *ps, int64 pos, bool with_measures, const MrMatch *m)
{
	const MrBoundQuery *q = rt->q;
	MrEmitInfo	info;
	MrRow	   *row = row_known(ps, pos) ? row_at(ps, pos) : NULL;
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
				rt->out_values[i] = ps->part_values[rt->outcol_part[i]];
				rt->out_nulls[i] = ps->part_nulls[rt->outcol_part[i]];
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
	info.run_arg = ps->run_arg;
	if (unlikely(ps->holding || ps->dropping))
	{
		if (ps->holding)
			hold_row(rt, ps, &info);
		return;
	}
	rt->emit(rt->emit_arg, rt->out_values, rt->out_nulls, &info);
	rt->stats.rows_out++;
	if (rt->match_timed_out)
		rt->stats.timeout_rows++;
}

void
emit_unmatched_upto(MrRuntime *rt, MrPartState *ps, int64 upto)
{
	if (rt->q->clause->rows_per_match == MR_ALL_ROWS_WITH_UNMATCHED)
	{
		int64		r;

		for (r = Max(ps->unmatched_from, ps->covered_upto); r < upto; r++)
		{
			emit_row(rt, ps, r, false, NULL);
			MemoryContextReset(rt->evalcxt);
		}
	}
	if (upto > ps->unmatched_from)
		ps->unmatched_from = upto;
}

static void
emit_match(MrRuntime *rt, MrPartState *ps, MrMatch *m)
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
		emit_row(rt, ps, -1, true, m);
	}
	else if (m->end == m->start)
	{
		if (c->rows_per_match != MR_ALL_ROWS_OMIT_EMPTY)
		{
			mv.current = m->start;
			mv.vend = m->start;
			eval_measures(rt, &mv);
			emit_row(rt, ps, m->start, true, m);
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
			emit_row(rt, ps, r, true, m);
			MemoryContextReset(rt->evalcxt);
		}
	}
	MemoryContextSwitchTo(old);
	if (!rt->evalcxt->isReset || rt->evalcxt->firstchild != NULL)
		MemoryContextReset(rt->evalcxt);
}

/* ---------- AFTER MATCH SKIP ---------- */

int64
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
		int			k;

		for (k = 0; k < rt->nskip_vars; k++)
			if (rt->last_row_of[rt->skip_vars[k]] > found)
				found = rt->last_row_of[rt->skip_vars[k]];
	}
	else
	{
		for (r = m->end - 1; r >= m->start; r--)
			if (m->vars[r - m->start] >= 0 && rt->skip_member[m->vars[r - m->start]])
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

/* ---------- errors of the drivers ---------- */

void
too_many_threads(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("row pattern matching exceeded match_recognize.max_threads (%d)", mr_max_threads),
			 errdetail("The DEFINE conditions read the running match (other variables' rows, FIRST/LAST with an offset, or aggregates), so candidate paths cannot be merged."),
			 errhint("Simplify nested quantifiers or alternations, add WITHIN, or raise match_recognize.max_threads.")));
}

/* the matcher's budget ran out: say why its paths could not be merged */
void
matcher_over_budget(const MrBoundQuery *q)
{
	if (q->clause->no_skip)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row pattern matching exceeded match_recognize.max_threads (%d)", mr_max_threads),
				 errdetail("AFTER MATCH NO SKIP keeps every candidate path of every start row alive, unmerged."),
				 errhint("Add WITHIN to bound the paths, or raise match_recognize.max_threads.")));
	if (q->dedup == MR_DEDUP_NONE)
		too_many_threads();
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("row pattern matching exceeded match_recognize.max_threads (%d)", mr_max_threads),
			 q->dedup == MR_DEDUP_STATE_START ?
			 errdetail("WITHIN or the DEFINE conditions depend on where a match starts, so candidate paths of different start rows cannot be merged.") :
			 errdetail("Candidate paths of many start rows were alive at once in different states, as under a large bounded quantifier followed by more of the pattern."),
			 errhint("Add WITHIN, use a smaller quantifier bound, or raise match_recognize.max_threads.")));
}

/* the batch clock CLOCK c, evaluated once */
static int64
clock_value(MrRuntime *rt)
{
	if (!rt->have_clock)
	{
		bool		isnull;
		Datum		d = eval_time_clock(rt, &isnull);

		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("CLOCK must not be null")));
		rt->clock = time_to_int64(rt->q->time->time_type, d);
		rt->have_clock = true;
	}
	return rt->clock;
}

/*
 * EXPLAIN ANALYZE: the end of a partition passed `deadline`, deciding n
 * threads (expired, or an absence accepted), if the clock passes it too:
 * CLOCK c tells now; CLOCK MAX once the input ends, unless the largest
 * time so far passed it already (the clock is monotone).
 */
void
count_end_timers(MrRuntime *rt, int64 deadline, int64 n)
{
	if (n <= 0)
		return;
	if (!rt->q->time->clock_max)
	{
		if (clock_value(rt) > deadline)
			rt->stats.timers_fired += n;
		return;
	}
	if (rt->have_max_time && rt->max_time > deadline)
	{
		rt->stats.timers_fired += n;
		return;
	}
	if (rt->npending_timers == rt->pending_timers_cap)
	{
		int			cap = Max(16, rt->pending_timers_cap * 2);

		if (rt->pending_timer_at == NULL)
		{
			rt->pending_timer_at = MemoryContextAlloc(rt->cxt, sizeof(int64) * cap);
			rt->pending_timer_n = MemoryContextAlloc(rt->cxt, sizeof(int64) * cap);
		}
		else
		{
			rt->pending_timer_at = repalloc(rt->pending_timer_at, sizeof(int64) * cap);
			rt->pending_timer_n = repalloc(rt->pending_timer_n, sizeof(int64) * cap);
		}
		rt->pending_timers_cap = cap;
	}
	rt->pending_timer_at[rt->npending_timers] = deadline;
	rt->pending_timer_n[rt->npending_timers] = n;
	rt->npending_timers++;
}

/*
 * What decided match m (time in patterns): its absence's deadline
 * (MATCH_DEADLINE()); and, when the end of the partition accepted it at
 * that deadline, whether the clock passed it: CLOCK c decides now (the
 * partition's output from here on is emitted or dropped), CLOCK MAX when
 * the input ends (it is held).  The clock is monotone, so every later
 * output of the partition waits for at least the same deadline.
 */
static void
time_decision(MrRuntime *rt, MrPartState *ps, MrMatch *m)
{
	const MrTime *t = rt->q->time;
	MatchView	mv;
	MemoryContext old;

	rt->match_deadline_null = true;
	rt->match_timed_out = false;
	if (t->deadline == NULL)
		return;
	mv.m = m;
	mv.current = m->end - 1;
	mv.vend = m->end;
	old = MemoryContextSwitchTo(rt->cxt);
	rt->match_deadline_null = !eval_time_deadline(rt, &mv, &rt->match_deadline);
	if (!rt->match_deadline_null)
		rt->match_deadline = datumCopy(rt->match_deadline, t->time_byval, t->time_len);
	MemoryContextSwitchTo(old);
	if (m->by_end && !rt->match_deadline_null)
		count_end_timers(rt, time_to_int64(t->time_type, rt->match_deadline), 1);
	if (m->by_end && !rt->match_deadline_null && !ps->dropping)
	{
		int64		d = time_to_int64(t->time_type, rt->match_deadline);

		if (t->clock_max)
		{
			ps->holding = true;
			if (d > ps->hold_at)
				ps->hold_at = d;
		}
		else if (!(clock_value(rt) > d))
			ps->dropping = true;
	}
}

/*
 * Emit a decided match m of partition ps (its rows up to m->end + max_next
 * are known) and the unmatched rows before it; returns where the search
 * resumes.  The caller made ps the partition being driven (rt->cur), which
 * the MEASURES are evaluated over.
 */
int64
settle_match(MrRuntime *rt, MrPartState *ps, MrMatch *m)
{
	int64		skip;

	m->number = ps->match_number + 1;
	if (rt->q->time)
		time_decision(rt, ps, m);
	if (rt->q->clause->rows_per_match == MR_ALL_ROWS_WITH_UNMATCHED)
		emit_unmatched_upto(rt, ps, m->start);
	else if (m->start > ps->unmatched_from)
		ps->unmatched_from = m->start;	/* as emit_unmatched_upto() */
	ps->match_number++;
	cache_forget(rt);
	emit_match(rt, ps, m);
	rt->stats.matches++;
	/* NO SKIP: no skip; later matches start at or after this one */
	skip = rt->q->clause->no_skip ? ps->unmatched_from : skip_position(rt, m);
	if (m->end > ps->covered_upto)
		ps->covered_upto = m->end;
	if (m->end == m->start && m->start + 1 > ps->covered_upto)
		ps->covered_upto = m->start + 1;
	ps->unmatched_from = skip;
	rt->last_rows_ready = false;
	return skip;
}

/* an int64 event time (time_to_int64()) as a value of the event time's type */
static Datum
int64_to_time(Oid type, int64 v)
{
	switch (type)
	{
		case INT2OID:
			return Int16GetDatum((int16) v);
		case INT4OID:
			return Int32GetDatum((int32) v);
		case DATEOID:
			return DateADTGetDatum((DateADT) v);
		default:
			return Int64GetDatum(v);	/* int8, timestamp, timestamptz */
	}
}

/*
 * Emit a final timeout candidate m of partition ps (WITH TIMEOUT ROWS,
 * mr_match.c): the rows of its partial match with the MEASURES over them,
 * TIMED_OUT() true, MATCH_DEADLINE() the deadline that passed, no match
 * number.  It is no match: no skip, no unmatched rows, no coverage (its
 * rows may be in a later match and are unmatched rows otherwise).
 * decided_at > PG_INT64_MIN: the end of the partition decided it, by a
 * clock past decided_at, which the batch clock must then pass too (as for
 * an absence decided at the end, time_decision()).
 */
void
settle_timeout(MrRuntime *rt, MrPartState *ps, MrMatch *m, int64 deadline, int64 decided_at)
{
	const MrTime *t = rt->q->time;

	if (decided_at > PG_INT64_MIN && !ps->dropping)
	{
		if (t->clock_max)
		{
			ps->holding = true;
			if (decided_at > ps->hold_at)
				ps->hold_at = decided_at;
		}
		else if (!(clock_value(rt) > decided_at))
			ps->dropping = true;
	}
	m->number = -1;				/* the row parameters read it null */
	rt->match_timed_out = true;
	rt->match_deadline = int64_to_time(t->time_type, deadline);
	rt->match_deadline_null = false;
	cache_forget(rt);
	emit_match(rt, ps, m);
	rt->match_timed_out = false;
	rt->match_deadline_null = true;
	rt->last_rows_ready = false;
}

/*-------------------------------------------------------------------------
 * mr_memo_lane.c
 *	  The MATCH_RECOGNIZE runtime's memo lane (core/mr_memo.h): whether a
 *	  query qualifies, the driver that feeds the runtime's own partition to
 *	  the online memo, and the settling of its decided matches, the lean
 *	  way (ONE ROW PER MATCH measures from the memo's summaries) or through
 *	  settle_match() with the labels the memo walks.
 *
 * When.  mr_runtime_use_memo() turns it on for a query whose program the
 * memo supports (mr_memo_supports(): MR_DEDUP_STATE, no counted loop, no
 * ABSENT, no AFTER MATCH NO SKIP), without time in the pattern or WITHIN,
 * and whose AFTER MATCH SKIP can resume inside a match: TO NEXT ROW and
 * TO FIRST/LAST v.  There the matcher runs the search again from every
 * resumption, re-reading the rows of the overlap (A+ B+ over n rows that
 * all qualify: n (n - 1) / 2 row steps), and the memo shares what each
 * (state, row) leads to among all starts.  SKIP PAST LAST ROW keeps the
 * current lanes: the search resumes after the match, so every row is fed
 * to the matcher or the automaton once in any case, and the memo would
 * only add its nodes and summaries per row.  Only the SRF and the custom
 * scan ask for it, and it runs only the runtime's own partition
 * (mr_runtime_push()): streams, partition runs and checkpoints keep the
 * general lane (a stream's partition may stay open for days, and its
 * checkpoints restart a matcher), so the memo is batch only.  Under TO
 * NEXT ROW it is chosen before the automaton lane, which re-feeds the
 * whole overlap too; under TO FIRST/LAST v the custom scan keeps the
 * automaton where it qualifies (the overlap there is from the skip
 * target to the match's end, typically a few rows, and an automaton step
 * is cheaper than the memo's nodes), and the memo takes the rest, and
 * every such query of the SRF.
 *
 * Results.  The memo decides a match exactly when the matcher's gate
 * would (mr_memo.h, section 3), and the host resumes from
 * skip_position() as today, so the output is the matcher's.  ONE ROW PER
 * MATCH queries whose every measure is FIRST(v.col), LAST(v.col) (also of
 * a union or of the whole match, with PREV/NEXT) or count(v.*)/count(*),
 * under any skip but TO FIRST v, are settled by settle_memo_lean() from
 * the summary (count, first and last row of each variable), in O(nvars)
 * per match, never walking it; everything else (ALL ROWS PER MATCH, other
 * aggregates, CLASSIFIER, MATCH_NUMBER, expressions over measures, SKIP TO
 * FIRST v) gets the match's labels walked from the memo's next pointers,
 * O(match length) as with the matcher, and settle_match().
 *
 * Memory.  The memo holds one node per VAR pc and one start per row from
 * the search position on (rows before it are freed at each reset).  Its
 * budget is ten times match_recognize.max_threads nodes; a row that would
 * pass it drops the memo for the rest of the partition, and the general
 * matcher goes on from the memo's earliest live start (every earlier start
 * failed), with the rows the window still holds: same results, the old
 * cost, no new error.  The window keeps rows from that start (less
 * max_prev), as the matcher's driver does.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"

#include "match_recognize.h"
#include "mr_runtime_int.h"

/* the memo's DEFINE: path independent, so the path is the row alone */
static bool
memo_define(void *arg, int var, int64_t row)
{
	MrRuntime  *rt = (MrRuntime *) arg;
	MrPath		path;

	path.start = row;
	path.len = 0;
	path.last = NULL;
	return define_callback(rt, var, row, &path);
}

/* what measure i is read from in the lean path, or MEMO_M_NONE */
#define MEMO_M_NONE 0
#define MEMO_M_FIRST 1
#define MEMO_M_LAST 2
#define MEMO_M_COUNT 3

static int
memo_measure_kind(MrRuntime *rt, int i)
{
	const MrBoundQuery *q = rt->q;
	const MrSlot *slot;

	if (!rt->measure_is_slot[i])
		return MEMO_M_NONE;
	slot = &q->slots[q->measures[i]->slots[0]];
	if (slot->kind == MR_SLOT_NAV)
	{
		if (slot->logical_offset != 0 || slot->row.column < 0 ||
			slot->row.uses_classifier || slot->within_match)
			return MEMO_M_NONE;
		return slot->logical_first ? MEMO_M_FIRST : MEMO_M_LAST;
	}
	if (slot->kind == MR_SLOT_AGG && slot->aggref != NULL && slot->aggref->aggstar &&
		slot->aggref->aggfnoid == F_COUNT_ && slot->aggfilter == NULL &&
		slot->aggref->aggdistinct == NIL && slot->aggref->aggorder == NIL &&
		slot->type == INT8OID)
		return MEMO_M_COUNT;
	return MEMO_M_NONE;
}

/* does a row expression read MATCH_NUMBER() (row parameter natts + 2)? */
static bool
reads_match_number_walker(Node *node, void *arg)
{
	const MrBoundQuery *q = (const MrBoundQuery *) arg;

	if (node == NULL)
		return false;
	if (IsA(node, Param))
		return ((Param *) node)->paramkind == PARAM_EXTERN &&
			((Param *) node)->paramid == q->natts + 2;
	return expression_tree_walker(node, reads_match_number_walker, arg);
}

/*
 * Can a DEFINE's truth at a row differ between the starts the memo shares
 * it with?  The binder counts MATCH_NUMBER() as the candidate row's (the
 * matcher evaluates it once per search, the number the match would get),
 * but it changes with every match settled, so the memo cannot share such a
 * DEFINE; nor one with a sublink, which might read it.
 */
static bool
define_varies_by_match(const MrBoundQuery *q, const MrLowered *lw)
{
	int			k;

	if (lw == NULL)
		return false;
	if (lw->plan != NULL)
		return true;
	for (k = 0; k < lw->nslots; k++)
	{
		const MrSlot *slot = &q->slots[lw->slots[k]];

		if (slot->kind == MR_SLOT_MATCH_NUMBER)
			return true;
		if (slot->kind == MR_SLOT_NAV &&
			(slot->row.plan != NULL ||
			 reads_match_number_walker((Node *) slot->row.expr, (void *) q)))
			return true;
	}
	return false;
}

/* does the query qualify for the memo lane (see the file's comment)? */
bool
memo_qualifies(MrRuntime *rt)
{
	const MrBoundQuery *q = rt->q;
	int			i;

	if (q->time != NULL || q->within != NULL || q->clause->no_skip)
		return false;
	for (i = 0; i < q->clause->nvars; i++)
		if (define_varies_by_match(q, q->defines[i]))
			return false;
	if (q->clause->skip == MR_SKIP_PAST_LAST_ROW)
		return false;
	return mr_memo_supports(q->program, &rt->matcher_opts);
}

/*
 * Run the own partition through the memo when the query qualifies; call
 * before the first row (the SRF and the custom scan do).
 */
void
mr_runtime_use_memo(MrRuntime *rt, bool automaton_next)
{
	const MrBoundQuery *q = rt->q;
	MemoryContext old;
	int			i;

	if (rt->levels != NULL || !memo_qualifies(rt) || rt->memo.on || rt->lane.on ||
		rt->own->in_partition || rt->nruns > 0)
		return;
	/* TO FIRST/LAST v: the automaton's, when it will run the query */
	if (automaton_next && rt->lane.ok && q->clause->skip != MR_SKIP_TO_NEXT_ROW)
		return;
	rt->memo.cxt = AllocSetContextCreate(rt->cxt, "match_recognize memo",
										 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(rt->memo.cxt);
	rt->memo.m = mr_memo_create(q->program, memo_define, rt,
								(int64) mr_max_threads * 10);
	MemoryContextSwitchTo(old);
	rt->memo.kind = MemoryContextAllocZero(rt->cxt, sizeof(int) * Max(q->clause->nmeasures, 1));
	rt->memo.lean = q->clause->rows_per_match == MR_ONE_ROW &&
		q->clause->skip != MR_SKIP_TO_FIRST;
	for (i = 0; i < q->clause->nmeasures; i++)
	{
		rt->memo.kind[i] = memo_measure_kind(rt, i);
		if (rt->memo.kind[i] == MEMO_M_NONE)
			rt->memo.lean = false;
	}
	rt->memo.on = true;
	rt->own->memo_off = false;
}

bool
mr_runtime_uses_memo(MrRuntime *rt)
{
	return rt->memo.on;
}

/* a new own partition from row pos */
void
memo_begin(MrRuntime *rt, int64 pos)
{
	mr_memo_begin(rt->memo.m, pos);
}

/* measure i of the match from its summary (the lean path) */
static void
memo_measure(MrRuntime *rt, MrPartState *ps, int i, const MrMatch *m,
			 const MrMemoSummary *sum, Datum *value, bool *isnull)
{
	const MrBoundQuery *q = rt->q;
	const MrSlot *slot = &q->slots[q->measures[i]->slots[0]];
	int			kind = rt->memo.kind[i];
	int64		r = -1;
	int			v;

	*value = (Datum) 0;
	*isnull = true;
	if (kind == MEMO_M_COUNT)
	{
		int64		n = 0;

		if (slot->set.universal)
			n = m->end - m->start;
		else
			for (v = 0; v < q->clause->nvars; v++)
				if (slot->set.member[v])
					n += sum[v].count;
		*value = Int64GetDatum(n);
		*isnull = false;
		return;
	}
	if (m->end == m->start)
		return;
	if (slot->set.universal)
		r = kind == MEMO_M_FIRST ? m->start : m->end - 1;
	else
		for (v = 0; v < q->clause->nvars; v++)
		{
			int64		x = kind == MEMO_M_FIRST ? sum[v].first : sum[v].last;

			if (!slot->set.member[v] || x < 0)
				continue;
			if (r < 0 || (kind == MEMO_M_FIRST ? x < r : x > r))
				r = x;
		}
	if (r < 0)
		return;
	r += slot->physical_offset;
	if (row_known(ps, r))
	{
		MrRow	   *row = row_at(ps, r);

		*value = row->values[slot->row.column];
		*isnull = row->nulls[slot->row.column];
	}
}

/*
 * settle_match() for a lean ONE ROW PER MATCH query (see the file's
 * comment): the output row from the summary, the skip by skip_position()
 * with the last row of each variable known (TO LAST v reads only those).
 */
static int64
settle_memo_lean(MrRuntime *rt, MrPartState *ps, MrMatch *m, const MrMemoSummary *sum)
{
	const MrBoundQuery *q = rt->q;
	MrEmitInfo	info;
	int64		skip;
	int			i;

	m->number = ++ps->match_number;
	if (m->start > ps->unmatched_from)
		ps->unmatched_from = m->start;
	for (i = 0; i < q->clause->nmeasures; i++)
		memo_measure(rt, ps, i, m, sum, &rt->measure_values[i], &rt->measure_nulls[i]);
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
		{
			rt->out_values[i] = rt->measure_values[k];
			rt->out_nulls[i] = rt->measure_nulls[k];
		}
		else
		{
			rt->out_values[i] = (Datum) 0;
			rt->out_nulls[i] = true;
		}
	}
	info.match_number = m->number;
	info.match_start = m->start;
	info.match_end = m->end;
	info.row = -1;
	info.run_arg = ps->run_arg;
	rt->emit(rt->emit_arg, rt->out_values, rt->out_nulls, &info);
	rt->stats.rows_out++;
	rt->stats.matches++;
	for (i = 0; i < q->clause->nvars; i++)
		rt->last_row_of[i] = sum[i].last;
	rt->last_rows_ready = true;
	skip = skip_position(rt, m);
	rt->last_rows_ready = false;
	if (m->end > ps->covered_upto)
		ps->covered_upto = m->end;
	if (m->end == m->start && m->start + 1 > ps->covered_upto)
		ps->covered_upto = m->start + 1;
	ps->unmatched_from = skip;
	return skip;
}

/*
 * The memo lane's driver for the own partition: feed the memo the rows it
 * may take and settle its decided matches, as far as the known rows allow
 * (drive_matcher()'s loop, without timeouts or NO SKIP).  False when the
 * memo went over its budget: the caller goes on with the general driver,
 * whose matcher starts at ps->match_from.
 */
bool
drive_memo(MrRuntime *rt, MrPartState *ps)
{
	const MrBoundQuery *q = rt->q;
	MrMemo	   *mm = rt->memo.m;
	MemoryContext old;
	MrMatch		m;
	const MrMemoSummary *sum;

	for (;;)
	{
		int64		next;
		int64		earliest;
		bool		decided;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(rt->memo.cxt);
		decided = mr_memo_decided(mm, !rt->memo.lean, &m, &sum);
		MemoryContextSwitchTo(old);
		if (decided)
		{
			int64		skip;

			/* MEASURES may look past the match end */
			if (!ps->partition_ended && ps->nrows < m.end + q->max_next)
				break;
			if (rt->memo.lean)
				skip = settle_memo_lean(rt, ps, &m, sum);
			else
				skip = settle_match(rt, ps, &m);
			mr_memo_reset(mm, skip);
			continue;
		}
		if (mr_memo_done(mm))
		{
			/* finished without a match: everything left is unmatched */
			emit_unmatched_upto(rt, ps, ps->nrows);
			break;
		}
		next = mr_memo_next_row(mm);
		if (next < ps->nrows)
		{
			MrMatchStatus st;

			if (q->define_has_next && !ps->partition_ended &&
				next + q->max_next >= ps->nrows)
				break;
			old = MemoryContextSwitchTo(rt->memo.cxt);
			st = mr_memo_feed(mm, next);
			MemoryContextSwitchTo(old);
			if (st == MR_MATCH_TOO_MANY_THREADS)
			{
				/* over budget: the matcher goes on where the memo stood */
				ps->memo_off = true;
				ps->match_from = mr_memo_earliest_live(mm);
				rt->stats.memo_fallbacks++;
				return false;
			}
			/* rows no live start can match from are unmatched */
			earliest = mr_memo_earliest_live(mm);
			emit_unmatched_upto(rt, ps, earliest);
			window_trim(rt, ps, Min(ps->unmatched_from, earliest) - q->max_prev);
			continue;
		}
		if (ps->partition_ended)
		{
			old = MemoryContextSwitchTo(rt->memo.cxt);
			mr_memo_finish(mm);
			MemoryContextSwitchTo(old);
			continue;
		}
		break;
	}
	return true;
}

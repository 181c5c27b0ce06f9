/*-------------------------------------------------------------------------
 * mr_runtime.c
 *	  The MATCH_RECOGNIZE runtime: partitions, the retained-row window and
 *	  the general driver (the matcher of mr_match.h), for the runtime's own
 *	  partition and for partition runs.  Making a runtime is in
 *	  mr_runtime_setup.c, settling a decided match (its output rows, AFTER
 *	  MATCH SKIP) in mr_settle.c, DEFINE and MEASURES evaluation in
 *	  mr_eval.c, the automaton lane (DFA mode) in mr_dfa_lane.c, the memo
 *	  lane (the own partition's overlapping matches) in mr_memo_lane.c, the
 *	  runtime's state and the helpers every row inlines in
 *	  mr_runtime_int.h.
 *
 * Two lifetimes.  A runtime (MrRuntime) is made once per execution of a
 * bound query and holds what every partition shares: expression states,
 * the decisions of mr_runtime_setup.c, the automaton, scratch for settling
 * a match, output buffers.  A partition's own state (MrPartState) holds
 * only its rows, its matcher state and its position.  The runtime has one
 * partition of its own, which mr_runtime_push() feeds and restarts at
 * each new key (rows come ordered by partition: the scan, the function);
 * a caller that interleaves partitions (a stream) keeps a partition run
 * (MrPartRun) per key instead, and suspends it while it has nothing live,
 * when it keeps only its key and its position (its checkpoint).
 *
 * Input rows arrive in PARTITION BY / ORDER BY order.  Invariants, per
 * partition:
 *  - rows are numbered from 0 within their partition; the window holds
 *    rows [buf_first, nrows) and nothing older than
 *    (first row any live thread, pending match or unreported unmatched row
 *    can still need) - max_prev, so memory follows the live matches, not
 *    the partition;
 *  - the matcher is fed row r only when rows up to r + max_next are in the
 *    window or the partition has ended (DEFINE may read NEXT);
 *  - a decided match is emitted only when the rows up to its end + max_next
 *    are known for the same reason (MEASURES may read NEXT);
 *  - rows before `unmatched_from` have been reported (in a match, as an
 *    unmatched row, or are covered); `covered_upto` is one past the last row
 *    of any match so far (WITH UNMATCHED ROWS reports a row only once);
 *  - a suspended partition run had no live thread, no pending match and no
 *    row it could still need: its checkpoint restarts it exactly where it
 *    stood, with a fresh matcher at the row it would have fed next.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/datum.h"
#include "utils/memutils.h"

#include "match_recognize.h"
#include "mr_levels_run.h"
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

/* the ring is full: every slot holds a live row, the new ones none */
static pg_noinline void
window_grow(MrPartState *ps)
{
	int64		count = ps->nrows - ps->buf_first;
	int64		ncap = ps->cap * 2;
	MemoryContext cxt = GetMemoryChunkContext(ps->ring);
	MrRow	  **nring;
	const MrDfaTrans **ntrans;
	int64		i;

	nring = MemoryContextAllocZero(cxt, sizeof(MrRow *) * ncap);
	ntrans = MemoryContextAllocZero(cxt, sizeof(MrDfaTrans *) * ncap);
	for (i = 0; i < count; i++)
	{
		nring[i] = ps->ring[(ps->head + i) & (ps->cap - 1)];
		ntrans[i] = ps->ring_trans[(ps->head + i) & (ps->cap - 1)];
	}
	pfree(ps->ring);
	pfree(ps->ring_trans);
	ps->ring = nring;
	ps->ring_trans = ntrans;
	ps->cap = ncap;
	ps->head = 0;
}

/* a new row for a ring slot: columns nothing reads stay NULL for its lifetime */
static MrRow *
window_new_row(MrRuntime *rt)
{
	MrRow	   *row;
	int			i;

	row = MemoryContextAlloc(rt->rowcxt, sizeof(MrRow) + (sizeof(Datum) + sizeof(bool)) * rt->natts);
	row->values = (Datum *) (row + 1);
	row->nulls = (bool *) (row->values + rt->natts);
	for (i = 0; i < rt->natts; i++)
	{
		row->values[i] = (Datum) 0;
		row->nulls[i] = true;
	}
	return row;
}

/*
 * Keep the by-reference values of a row (the slot's, or detoasted by
 * window_varlena()) in one allocation of byref_size bytes.
 */
static void
window_copy_byref(MrRuntime *rt, MrRow *row, TupleTableSlot *slot, Size byref_size)
{
	char	   *p = MemoryContextAlloc(rt->rowcxt, byref_size);
	int			i;

	row->byref = p;
	for (i = 0; i < rt->natts; i++)
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
				pfree(v);		/* detoasted by window_varlena() */
			row->values[i] = PointerGetDatum(p);
			p += MAXALIGN(sz);
		}
}

/* the columns of a row that has a by-reference column to keep */
static void
window_store_columns(MrRuntime *rt, MrRow *row, TupleTableSlot *slot)
{
	Size		byref_size = 0;
	int			i;

	for (i = 0; i < rt->natts; i++)
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
	if (byref_size > 0)
		window_copy_byref(rt, row, slot, byref_size);
}

/* keep the slot's row (every column deformed) as row nrows of partition ps */
static pg_attribute_always_inline MrRow *
window_append(MrRuntime *rt, MrPartState *ps, TupleTableSlot *slot)
{
	MrRow	   *row;
	int64		idx;

	if (unlikely(ps->nrows - ps->buf_first >= ps->cap))
		window_grow(ps);
	/* a slot past the live rows keeps the row it held, free for reuse */
	idx = (ps->head + (ps->nrows - ps->buf_first)) & (ps->cap - 1);
	row = ps->ring[idx];
	if (unlikely(row == NULL))
		row = window_new_row(rt);
	row->byref = NULL;
	row->mask = 0;
	if (rt->needed_byval)
	{
		/*
		 * The common case: copy the by-value columns read, nothing else.  A
		 * recycled row was last touched long ago: find its arrays from its
		 * address rather than from its (probably uncached) header.  A
		 * NULL's value is never read.
		 */
		Datum	   *values = (Datum *) (row + 1);
		bool	   *nulls = (bool *) (values + rt->natts);
		const int  *needed = rt->needed;
		int			n = rt->nneeded;
		int			i;

		for (i = 0; i < n; i++)
		{
			int			c = needed[i];

			nulls[c] = slot->tts_isnull[c];
			values[c] = slot->tts_values[c];
		}
	}
	else
		window_store_columns(rt, row, slot);
	ps->ring[idx] = row;
	ps->append_idx = idx;
	ps->nrows++;
	/* (every appended row is masked here: the statistics count them so) */
	if (rt->lane.simple)
		row->mask = dfa_mask_simple(rt, ps, slot, row) | DFA_MASK_KNOWN;
	else if (rt->lane.mask_on_append)
	{
		/* the DEFINEs read this row and earlier ones only: while they are hot */
		row->mask = dfa_mask(rt, ps, ps->nrows - 1, row) | DFA_MASK_KNOWN;
	}
	if (ps->nrows - ps->needed_from > rt->stats.max_rows_retained)
		rt->stats.max_rows_retained = ps->nrows - ps->needed_from;
	return row;
}

/* forget every row; the ring keeps the released ones for reuse */
static void
window_clear(MrRuntime *rt, MrPartState *ps)
{
	window_trim(rt, ps, ps->nrows);
	ps->head = 0;
	ps->buf_first = 0;
	ps->nrows = 0;
	ps->needed_from = 0;
}

/* ---------- partition states ---------- */

/*
 * A partition's state, with a ring of cap slots: in `in` (the runtime's
 * own, zeroed) or allocated.  Only a runtime in DFA mode reads the
 * automaton's search at the end of the struct, so the states of partition
 * runs are allocated without it otherwise (DFA mode is decided before the
 * first partition run exists).
 */
MrPartState *
part_state_create(MrRuntime *rt, MrPartState *in, int64 cap)
{
	MrPartState *ps = in;

	if (ps == NULL)
		ps = MemoryContextAllocZero(rt->rowcxt, rt->lane.on ? sizeof(MrPartState) :
									offsetof(MrPartState, dfa_search));
	ps->cap = cap;
	ps->ring = MemoryContextAllocZero(rt->rowcxt, sizeof(MrRow *) * cap);
	ps->ring_trans = MemoryContextAllocZero(rt->rowcxt, sizeof(MrDfaTrans *) * cap);
	ps->dfa_prev_row = rt->lane.null_row;
	dlist_push_tail(&rt->states, &ps->node);
	return ps;
}

/* a matcher for a partition: a spare one, or a new one in a context of its own */
void
part_attach_matcher(MrRuntime *rt, MrPartState *ps)
{
	MrMatcherBox *b = rt->spare_matchers;
	MemoryContext old;

	Assert(ps->matcher == NULL);
	if (b != NULL)
	{
		rt->spare_matchers = b->next;
		rt->nspare_matchers--;
	}
	else
	{
		/* the scratch of one step, shared by every matcher of the runtime */
		if (rt->match_scratch == NULL)
		{
			old = MemoryContextSwitchTo(rt->cxt);
			rt->match_scratch = mr_match_scratch_create(rt->q->program);
			MemoryContextSwitchTo(old);
		}
		b = MemoryContextAllocZero(rt->cxt, sizeof(MrMatcherBox));
		/*
		 * A matcher holds only its threads and their history: a small first
		 * block, growing with them
		 */
		b->cxt = AllocSetContextCreate(rt->cxt, "match_recognize matcher",
									   MR_MATCHER_BLOCK, MR_MATCHER_BLOCK,
									   ALLOCSET_DEFAULT_MAXSIZE);
		old = MemoryContextSwitchTo(b->cxt);
		b->m = mr_matcher_create_shared(rt->q->program, &rt->matcher_opts,
										rt->match_scratch);
		MemoryContextSwitchTo(old);
		if (b->m == NULL)
			elog(ERROR, "match_recognize matcher scratch of another program");
		b->counted = *mr_matcher_stats(b->m);
	}
	old = MemoryContextSwitchTo(b->cxt);
	mr_matcher_reset(b->m, ps->match_from);
	MemoryContextSwitchTo(old);
	ps->matcher = b;
}

/* add what a matcher did since it was last counted to the runtime's totals */
static void
matcher_count(const MrMatcherBox *b, MrMatcherStats *into)
{
	const MrMatcherStats *ms = mr_matcher_stats(b->m);

	into->steps += ms->steps - b->counted.steps;
	into->define_calls += ms->define_calls - b->counted.define_calls;
	into->merged += ms->merged - b->counted.merged;
	into->memo_hits += ms->memo_hits - b->counted.memo_hits;
	into->peak_threads = Max(into->peak_threads, ms->peak_threads);
}

/*
 * A partition with no live thread gives its matcher back: kept as a spare
 * (its closure recordings stay valid for the query), or dropped whole.
 */
static void
part_detach_matcher(MrRuntime *rt, MrPartState *ps)
{
	MrMatcherBox *b = ps->matcher;

	ps->match_from = mr_matcher_next_row(b->m);
	ps->matcher = NULL;
	matcher_count(b, &rt->gone_matcher_stats);
	b->counted = *mr_matcher_stats(b->m);
	if (rt->nspare_matchers < MR_SPARE_MATCHERS)
	{
		b->next = rt->spare_matchers;
		rt->spare_matchers = b;
		rt->nspare_matchers++;
		return;
	}
	MemoryContextDelete(b->cxt);
	pfree(b);
}

static void
part_state_free(MrRuntime *rt, MrPartState *ps)
{
	int64		i;

	if (ps->matcher)
		part_detach_matcher(rt, ps);
	if (rt->lane.on)
		rt->gone_dfa_steps += ps->dfa_search.steps;
	window_trim(rt, ps, ps->nrows);
	for (i = 0; i < ps->cap; i++)
		if (ps->ring[i])
			pfree(ps->ring[i]);
	pfree(ps->ring);
	pfree(ps->ring_trans);
	dlist_delete(&ps->node);
	if (rt->cur == ps)
		rt->cur = NULL;
	if (rt->cache_ps == ps)
		rt->cache_ps = NULL;
	Assert(ps != rt->own);
	pfree(ps);
}

/*
 * Begin a partition in ps, at a checkpoint (rows cp->keep_from ..
 * cp->nrows - 1 are then pushed again) or at its start; the key is already
 * in ps->part_values.
 */
static void
part_begin(MrRuntime *rt, MrPartState *ps, const MrRuntimeCheckpoint *cp)
{
	MemoryContext old;

	window_clear(rt, ps);
	ps->in_partition = true;
	ps->partition_ended = false;
	ps->dfa_prev_row = rt->lane.null_row;
	ps->buf_first = ps->nrows = ps->needed_from = cp ? cp->keep_from : 0;
	ps->match_number = cp ? cp->match_number : 0;
	ps->unmatched_from = cp ? cp->unmatched_from : 0;
	ps->covered_upto = cp ? cp->covered_upto : 0;
	ps->match_from = cp ? cp->matcher_from : 0;
	ps->noskip_start = ps->match_from;
	ps->noskip_count = 0;
	ps->holding = ps->dropping = false;
	ps->hold_at = PG_INT64_MIN;
	if (ps->matcher)
	{
		old = MemoryContextSwitchTo(ps->matcher->cxt);
		mr_matcher_reset(ps->matcher->m, ps->match_from);
		MemoryContextSwitchTo(old);
	}
	if (rt->lane.on)
		dfa_reset(rt, ps, ps->match_from);
	ps->memo_off = false;
	if (rt->memo.on && ps == rt->own)
		memo_begin(rt, ps->match_from);
	/* the DEFINE caches may hold another partition's rows of these numbers */
	if (rt->cache_ps == ps)
		rt->cache_ps = NULL;
}

/* the smallest row a live thread or the pending match starts at */
static int64
part_earliest_live(MrRuntime *rt, const MrPartState *ps)
{
	if (rt->memo.on && ps == rt->own && !ps->memo_off)
		return mr_memo_earliest_live(rt->memo.m);
	if (rt->lane.on)
		return mr_dfa_run_earliest(&ps->dfa_search);
	if (ps->matcher)
		return mr_matcher_earliest_live(ps->matcher->m);
	return ps->match_from;
}

/* no thread is alive and no match is pending */
static bool
part_nothing_live(MrRuntime *rt, const MrPartState *ps)
{
	if (rt->lane.on)
		return ps->dfa_search.cur == mr_dfa_initial(rt->lane.automaton) &&
			!ps->dfa_search.finished;
	if (ps->matcher == NULL)
		return true;
	return !mr_matcher_done(ps->matcher->m) &&
		mr_matcher_earliest_live(ps->matcher->m) >= mr_matcher_next_row(ps->matcher->m);
}

/* the first row the partition may still need */
static int64
part_retained_from(MrRuntime *rt, const MrPartState *ps)
{
	int64		from = Min(ps->unmatched_from, part_earliest_live(rt, ps)) - rt->max_prev;

	return Max(from, ps->buf_first);
}

static void
part_checkpoint(MrRuntime *rt, const MrPartState *ps, MrRuntimeCheckpoint *cp)
{
	cp->nrows = ps->nrows;
	cp->keep_from = part_retained_from(rt, ps);
	cp->matcher_from = Min(ps->unmatched_from, part_earliest_live(rt, ps));
	cp->match_number = ps->match_number;

	/*
	 * NO SKIP: a fresh matcher at matcher_from finds again the matches of
	 * that start already settled (a match is output once no earlier start
	 * is live, so no other settled match starts at or after matcher_from),
	 * and numbers them as they were
	 */
	if (rt->q->clause->no_skip && ps->noskip_start == cp->matcher_from)
		cp->match_number -= ps->noskip_count;
	cp->unmatched_from = ps->unmatched_from;
	cp->covered_upto = ps->covered_upto;
}

/* ---------- the driver ---------- */

/*
 * Timeout rows (mr_match.c): settle the matcher's leftmost final timeout
 * candidate, once the rows its MEASURES may read are known; true when one
 * was settled.  end_clock > PG_INT64_MIN: the end of the partition decided
 * it, by the clock passing end_clock.
 */
static bool
drive_timeout(MrRuntime *rt, MrPartState *ps, int64 end_clock)
{
	MrMatcherBox *b = ps->matcher;
	MrMatch		tm;
	int64_t		deadline;
	MemoryContext old;

	if (!mr_matcher_decided_timeout(b->m, &tm, &deadline))
		return false;
	if (!ps->partition_ended && ps->nrows < tm.end + rt->q->max_next)
		return false;
	settle_timeout(rt, ps, &tm, deadline, end_clock);
	old = MemoryContextSwitchTo(b->cxt);
	mr_matcher_pop_timeout(b->m);
	MemoryContextSwitchTo(old);
	return true;
}

/*
 * Timeout rows: before row `next` is fed, expire the threads whose
 * deadline its time passed (deadlines are inclusive, their passage
 * strict); true when some expired.  A row without a time (NULL) passes
 * none.  Called in the matcher's context.
 */
static bool
row_expires(MrRuntime *rt, MrPartState *ps, MrMatcher *mt, int64 next)
{
	MrRow	   *row = row_at(ps, next);
	int			col = rt->q->order_cols[0];
	int64		noted = mr_matcher_timeouts_noted(mt);
	bool		expired;

	if (row->nulls[col])
		return false;
	expired = mr_matcher_expire(mt, time_to_int64(rt->q->time->time_type,
												  row->values[col])) > 0;
	/* EXPLAIN ANALYZE: the attempts the row's time expired */
	rt->stats.timers_fired += mr_matcher_timeouts_noted(mt) - noted;
	return expired;
}

/*
 * Timeout rows at the end of a partition: the clock passes the live
 * threads' deadlines one by one (the smallest first, as a stream's clock
 * would); returns the deadline passed, or PG_INT64_MAX when none is left.
 */
static int64
partition_end_expiry(MrRuntime *rt, MrMatcher *mt, MemoryContext mcxt)
{
	MemoryContext old = MemoryContextSwitchTo(mcxt);
	int64		d = mr_matcher_next_expiry(mt);
	int64		noted = mr_matcher_timeouts_noted(mt);

	if (d < PG_INT64_MAX)
		mr_matcher_expire(mt, d + 1);
	MemoryContextSwitchTo(old);
	/* EXPLAIN ANALYZE: the attempts expired, if the clock passes d */
	count_end_timers(rt, d, mr_matcher_timeouts_noted(mt) - noted);
	return d;
}

/*
 * The general driver: feed the matcher (mr_match.h) the rows it may take
 * and settle its decided matches, as far as the known rows allow.
 */
static void
drive_matcher(MrRuntime *rt, MrPartState *ps)
{
	const MrBoundQuery *q = rt->q;
	MrMatcher  *mt;
	MemoryContext mcxt;
	MrMatch		m;
	MemoryContext old;
	bool		have_m = false; /* m holds the decided match already */
	bool		none_decided = false;	/* known: no decided match */
	bool		timeouts = rt->matcher_opts.expiry != NULL;
	int64		end_clock = PG_INT64_MIN;	/* the end's clock has passed it */

	if (ps->matcher == NULL)
		part_attach_matcher(rt, ps);
	mt = ps->matcher->m;
	mcxt = ps->matcher->cxt;
	for (;;)
	{
		int64		next;
		int64		earliest;
		MrMatchStatus st;

		CHECK_FOR_INTERRUPTS();
		if (timeouts && drive_timeout(rt, ps, end_clock))
			continue;
		if (have_m || (!none_decided && mr_matcher_decided_match(mt, &m)))
		{
			int64		skip;

			have_m = false;

			/* MEASURES may look past the match end */
			if (!ps->partition_ended && ps->nrows < m.end + q->max_next)
				break;
			skip = settle_match(rt, ps, &m);
			if (q->clause->no_skip)
			{
				/* counted for part_checkpoint */
				if (m.start != ps->noskip_start)
					ps->noskip_count = 0;
				ps->noskip_start = m.start;
				ps->noskip_count++;
			}
			old = MemoryContextSwitchTo(mcxt);
			if (q->clause->no_skip)
				mr_matcher_pop_match(mt);	/* NO SKIP: the search goes on */
			else
				mr_matcher_reset(mt, skip);
			MemoryContextSwitchTo(old);
			continue;
		}
		if (mr_matcher_done(mt))
		{
			/* finished without a match: everything left is unmatched */
			emit_unmatched_upto(rt, ps, ps->nrows);
			break;
		}
		next = mr_matcher_next_row(mt);
		if (next < ps->nrows)
		{
			if (q->define_has_next && !ps->partition_ended &&
				next + q->max_next >= ps->nrows)
				break;
			old = MemoryContextSwitchTo(mcxt);
			if (timeouts && row_expires(rt, ps, mt, next))
			{
				/* the row's time passed deadlines: settle those first */
				MemoryContextSwitchTo(old);
				none_decided = false;
				continue;
			}
			st = mr_matcher_feed(mt, next);
			MemoryContextSwitchTo(old);
			if (st == MR_MATCH_TOO_MANY_THREADS)
				matcher_over_budget(q);
			/* rows no live thread starts at are unmatched */
			have_m = mr_matcher_decided_match(mt, &m);
			none_decided = !have_m;
			earliest = mr_matcher_earliest_live(mt);
			if (!have_m)
				emit_unmatched_upto(rt, ps, earliest);
			window_trim(rt, ps, Min(ps->unmatched_from, earliest) - q->max_prev);
			continue;
		}
		if (ps->partition_ended)
		{
			int64		d = timeouts ? partition_end_expiry(rt, mt, mcxt) : PG_INT64_MAX;

			if (d < PG_INT64_MAX)
			{
				/* the clock passes the next deadline: what expires there */
				end_clock = d;
				none_decided = false;
				continue;
			}
			old = MemoryContextSwitchTo(mcxt);
			st = mr_matcher_finish(mt);
			MemoryContextSwitchTo(old);
			if (st == MR_MATCH_TOO_MANY_THREADS)
				matcher_over_budget(q);
			none_decided = false;
			continue;
		}
		break;
	}
}

/* the DEFINE caches now serve partition ps */
static pg_noinline void
switch_cache(MrRuntime *rt, MrPartState *ps)
{
	cache_forget(rt);
	rt->cache_ps = ps;
}

/*
 * Run partition ps as far as its known rows allow: the automaton lane's
 * driver in DFA mode (drive_dfa(), mr_dfa_lane.c), else the general one.
 * Inline, so that a push enters either without a call between.
 */
static inline void
drive(MrRuntime *rt, MrPartState *ps)
{
	rt->cur = ps;
	if (unlikely(rt->cache_ps != ps))
		switch_cache(rt, ps);
	if (unlikely(rt->memo.on) && ps == rt->own && !ps->memo_off)
	{
		MemoryContext old;

		if (drive_memo(rt, ps))
			return;
		/* over the memo's budget: the matcher from where the memo stood */
		if (ps->matcher == NULL)
			part_attach_matcher(rt, ps);
		else
		{
			old = MemoryContextSwitchTo(ps->matcher->cxt);
			mr_matcher_reset(ps->matcher->m, ps->match_from);
			MemoryContextSwitchTo(old);
		}
	}
	if (rt->lane.on)
	{
		drive_dfa(rt, ps);
		return;
	}
	drive_matcher(rt, ps);
}

/* one input row of partition ps: keep it, then match */
static pg_attribute_always_inline void
push_row(MrRuntime *rt, MrPartState *ps, TupleTableSlot *slot)
{
	MrRow	   *row;

	rt->stats.rows_in++;
	row = window_append(rt, ps, slot);
	if (rt->lane.fast && ps->dfa_search.pos == ps->nrows - 1 &&
		!mr_dfa_run_decided(&ps->dfa_search))
	{
		/* the usual row: one step, and nothing else to do unless decided */
		if (!dfa_step_appended(rt, ps, row))
			return;
	}
	drive(rt, ps);
}

/* the partition ended: settle it */
static void
part_end(MrRuntime *rt, MrPartState *ps)
{
	if (ps->in_partition)
	{
		ps->partition_ended = true;
		drive(rt, ps);
		ps->in_partition = false;
	}
}

static int64
part_expire_before(MrRuntime *rt, MrPartState *ps, int64 first_alive)
{
	int64		n;
	MemoryContext old;

	if (ps->matcher == NULL)
		return 0;				/* no thread (and DFA mode has no WITHIN) */
	old = MemoryContextSwitchTo(ps->matcher->cxt);
	n = mr_matcher_expire_before(ps->matcher->m, first_alive);
	MemoryContextSwitchTo(old);
	if (n > 0)
		drive(rt, ps);
	return n;
}

/* ---------- the runtime's own partition ---------- */

/* the row in slot starts the own partition: keep a copy of its key */
static void
start_partition(MrRuntime *rt, TupleTableSlot *slot)
{
	const MrBoundQuery *q = rt->q;
	MrPartState *ps = rt->own;
	MemoryContext old;
	int			i;

	MemoryContextReset(rt->partcxt);
	old = MemoryContextSwitchTo(rt->partcxt);
	for (i = 0; i < q->npartition; i++)
	{
		Form_pg_attribute a = TupleDescAttr(q->input_desc, q->partition_cols[i]);
		Datum		d = slot_getattr(slot, q->partition_cols[i] + 1, &ps->part_nulls[i]);

		ps->part_values[i] = ps->part_nulls[i] ? (Datum) 0 :
			mr_datum_copy_flat(d, a->attbyval, a->attlen);
	}
	MemoryContextSwitchTo(old);
	part_begin(rt, ps, NULL);
}

/* the partition ended (if one was running); slot's row starts the next */
static pg_noinline void
next_partition(MrRuntime *rt, TupleTableSlot *slot)
{
	part_end(rt, rt->own);
	start_partition(rt, slot);
}

static inline bool
same_partition(MrRuntime *rt, const MrPartState *ps, TupleTableSlot *slot)
{
	int			i;

	/* the caller deformed every column */
	for (i = 0; i < rt->npartition; i++)
	{
		bool		isnull = slot->tts_isnull[rt->partition_cols[i]];
		Datum		d = slot->tts_values[rt->partition_cols[i]];

		if (isnull != ps->part_nulls[i])
			return false;
		if (isnull)
			continue;
		if (rt->part_bitwise[i])
		{
			if (d != ps->part_values[i])
				return false;
			continue;
		}
		if (!DatumGetBool(FunctionCall2Coll(&rt->part_eq[i], rt->part_coll[i],
											ps->part_values[i], d)))
			return false;
	}
	return true;
}

void
mr_runtime_push(MrRuntime *rt, TupleTableSlot *slot)
{
	MrPartState *ps = &rt->own_state;

	if (unlikely(rt->levels != NULL))
	{
		mr_levels_push(rt, slot);
		return;
	}
	slot_getallattrs(slot);		/* once, for the partition check and the window */
	if (unlikely(!ps->in_partition) || !same_partition(rt, ps, slot))
		next_partition(rt, slot);
	if (unlikely(rt->track_time))
	{
		int			col = rt->q->order_cols[0];

		if (!slot->tts_isnull[col])
		{
			int64		t = time_to_int64(rt->q->time->time_type, slot->tts_values[col]);

			if (!rt->have_max_time || t > rt->max_time)
				rt->max_time = t;
			rt->have_max_time = true;
		}
	}
	push_row(rt, ps, slot);
}

void
mr_runtime_finish(MrRuntime *rt)
{
	if (rt->levels)
	{
		mr_levels_finish(rt);
		return;
	}
	part_end(rt, rt->own);
	window_clear(rt, rt->own);
	if (rt->held != NIL || rt->npending_timers > 0)
		emit_held_rows(rt);
}

int64
mr_runtime_expire_before(MrRuntime *rt, int64 first_alive)
{
	return part_expire_before(rt, rt->own, first_alive);
}

/*
 * The clock entry points of mr_runtime.h, for partition ps: the earliest
 * deadline the clock can decide (a NOT v parked, or, WITH TIMEOUT ROWS, a
 * thread's expiry), and advancing the clock to `now` as a row at `now`
 * would: first expire (and settle what that decides), then let the parked
 * absences whose deadline passed accept, until neither changes anything
 * (a decided match resumes the search, which may park again).
 */
static bool
part_has_clock(MrRuntime *rt, MrPartState *ps)
{
	return ps->matcher != NULL && rt->q->time != NULL &&
		(rt->q->time->absence_var >= 0 || rt->matcher_opts.expiry != NULL);
}

static int64
part_next_deadline(MrRuntime *rt, MrPartState *ps)
{
	int64		d = PG_INT64_MAX;
	MemoryContext old;

	if (!part_has_clock(rt, ps))
		return PG_INT64_MAX;
	rt->cur = ps;
	old = MemoryContextSwitchTo(ps->matcher->cxt);
	if (rt->q->time->absence_var >= 0)
		d = mr_matcher_next_deadline(ps->matcher->m);
	if (rt->matcher_opts.expiry != NULL)
		d = Min(d, mr_matcher_next_expiry(ps->matcher->m));
	MemoryContextSwitchTo(old);
	return d;
}

static void
part_advance_clock(MrRuntime *rt, MrPartState *ps, int64 now)
{
	int64		n;
	bool		changed = true;
	MemoryContext old;

	while (changed && part_has_clock(rt, ps))
	{
		CHECK_FOR_INTERRUPTS();
		changed = false;
		rt->cur = ps;
		if (rt->matcher_opts.expiry != NULL)
		{
			old = MemoryContextSwitchTo(ps->matcher->cxt);
			n = mr_matcher_expire(ps->matcher->m, now);
			MemoryContextSwitchTo(old);
			if (n > 0)
			{
				drive(rt, ps);
				/*
				 * As the next row's feed would: rows before the earliest
				 * live start are in no future match or timeout, so a
				 * checkpoint restarts the search after the settled
				 * timeouts (re-pushing its rows decides nothing again).
				 */
				if (ps->matcher != NULL)
					emit_unmatched_upto(rt, ps, mr_matcher_earliest_live(ps->matcher->m));
				changed = true;
			}
		}
		if (rt->q->time->absence_var >= 0 && ps->matcher != NULL)
		{
			rt->cur = ps;
			old = MemoryContextSwitchTo(ps->matcher->cxt);
			n = mr_matcher_advance_clock(ps->matcher->m, now);
			MemoryContextSwitchTo(old);
			rt->stats.timers_fired += n;
			if (n > 0)
			{
				drive(rt, ps);
				changed = true;
			}
		}
	}
}

bool
mr_runtime_event_time(MrRuntime *rt, TupleTableSlot *slot, int64 *t)
{
	int			col;

	if (rt->q->time == NULL || rt->q->norder < 1)
		return false;
	col = rt->q->order_cols[0];
	slot_getallattrs(slot);
	if (slot->tts_isnull[col])
		return false;
	*t = time_to_int64(rt->q->time->time_type, slot->tts_values[col]);
	return true;
}

int64
mr_runtime_next_deadline(MrRuntime *rt)
{
	return part_next_deadline(rt, rt->own);
}

void
mr_runtime_advance_clock(MrRuntime *rt, int64 now)
{
	part_advance_clock(rt, rt->own, now);
}

int64
mr_partrun_next_deadline(MrPartRun *run)
{
	if (run->ps == NULL)
		return PG_INT64_MAX;	/* a suspended run has no live thread */
	return part_next_deadline(run->rt, run->ps);
}

void
mr_partrun_advance_clock(MrPartRun *run, int64 now)
{
	if (run->ps != NULL)
		part_advance_clock(run->rt, run->ps, now);
}

int64
mr_runtime_retained_from(MrRuntime *rt)
{
	return part_retained_from(rt, rt->own);
}

void
mr_runtime_checkpoint(MrRuntime *rt, MrRuntimeCheckpoint *cp)
{
	part_checkpoint(rt, rt->own, cp);
}

void
mr_runtime_restore(MrRuntime *rt, TupleTableSlot *partition_row,
				   const MrRuntimeCheckpoint *cp)
{
	start_partition(rt, partition_row);
	part_begin(rt, rt->own, cp);
}

int64
mr_runtime_partition_rows(MrRuntime *rt)
{
	return rt->own->nrows;
}

/* ---------- partition runs ---------- */

/* a partition run's key, from the PARTITION BY columns of key_row */
static MrPartRun *
partrun_alloc(MrRuntime *rt, TupleTableSlot *key_row, void *arg)
{
	const MrBoundQuery *q = rt->q;
	int			np = q->npartition;
	MrPartRun  *run;
	MemoryContext old = MemoryContextSwitchTo(rt->runcxt);
	int			i;

	run = palloc0(MAXALIGN(sizeof(MrPartRun)) + (sizeof(Datum) + sizeof(bool)) * Max(np, 1));
	run->rt = rt;
	run->arg = arg;
	run->key_values = (Datum *) ((char *) run + MAXALIGN(sizeof(MrPartRun)));
	run->key_nulls = (bool *) (run->key_values + Max(np, 1));
	for (i = 0; i < np; i++)
	{
		Form_pg_attribute a = TupleDescAttr(q->input_desc, q->partition_cols[i]);
		Datum		d = slot_getattr(key_row, q->partition_cols[i] + 1, &run->key_nulls[i]);

		run->key_values[i] = run->key_nulls[i] ? (Datum) 0 :
			mr_datum_copy_flat(d, a->attbyval, a->attlen);
	}
	MemoryContextSwitchTo(old);
	rt->nruns++;
	return run;
}

MrPartRun *
mr_partrun_create(MrRuntime *rt, TupleTableSlot *key_row, void *arg)
{
	MrPartRun  *run;

	if (rt->levels)
		mr_levels_no_partrun();
	run = partrun_alloc(rt, key_row, arg);

	/* nothing pushed yet: suspended at the partition's start */
	memset(&run->cp, 0, sizeof(run->cp));
	return run;
}

MrPartRun *
mr_partrun_restore(MrRuntime *rt, TupleTableSlot *key_row,
				   const MrRuntimeCheckpoint *cp, void *arg)
{
	MrPartRun  *run;

	if (rt->levels)
		mr_levels_no_partrun();
	run = partrun_alloc(rt, key_row, arg);

	run->cp = *cp;
	if (cp->keep_from < cp->nrows)
		mr_partrun_resume(run); /* the caller pushes the rows it kept */
	return run;
}

void
mr_partrun_resume(MrPartRun *run)
{
	MrRuntime  *rt = run->rt;
	MrPartState *ps;

	if (run->ps != NULL)
		return;
	ps = part_state_create(rt, NULL, MR_RUN_RING_INITIAL);
	ps->part_values = run->key_values;
	ps->part_nulls = run->key_nulls;
	ps->run_arg = run->arg;
	part_begin(rt, ps, &run->cp);
	run->ps = ps;
}

bool
mr_partrun_suspend(MrPartRun *run)
{
	MrRuntime  *rt = run->rt;
	MrPartState *ps = run->ps;

	if (ps == NULL)
		return true;
	if (!ps->in_partition || !part_nothing_live(rt, ps))
		return false;
	if (ps->matcher)
		part_detach_matcher(rt, ps);
	if (part_retained_from(rt, ps) < ps->nrows)
		return false;			/* rows PREV or an unreported row still need */
	part_checkpoint(rt, ps, &run->cp);
	part_state_free(rt, ps);
	run->ps = NULL;
	return true;
}

bool
mr_partrun_is_suspended(const MrPartRun *run)
{
	return run->ps == NULL;
}

void
mr_partrun_push(MrPartRun *run, TupleTableSlot *slot)
{
	if (unlikely(run->ps == NULL))
		mr_partrun_resume(run);
	slot_getallattrs(slot);
	push_row(run->rt, run->ps, slot);
}

void
mr_partrun_finish(MrPartRun *run)
{
	mr_partrun_resume(run);
	part_end(run->rt, run->ps);
}

void
mr_partrun_free(MrPartRun *run)
{
	MrRuntime  *rt = run->rt;
	int			i;

	if (run->ps)
		part_state_free(rt, run->ps);
	for (i = 0; i < rt->q->npartition; i++)
	{
		Form_pg_attribute a = TupleDescAttr(rt->q->input_desc, rt->q->partition_cols[i]);

		if (!run->key_nulls[i] && !a->attbyval)
			pfree(DatumGetPointer(run->key_values[i]));
	}
	pfree(run);
	rt->nruns--;
}

int64
mr_partrun_expire_before(MrPartRun *run, int64 first_alive)
{
	if (run->ps == NULL)
		return 0;
	return part_expire_before(run->rt, run->ps, first_alive);
}

int64
mr_partrun_retained_from(MrPartRun *run)
{
	if (run->ps == NULL)
		return run->cp.keep_from;
	return part_retained_from(run->rt, run->ps);
}

int64
mr_partrun_rows(MrPartRun *run)
{
	return run->ps ? run->ps->nrows : run->cp.nrows;
}

void
mr_partrun_checkpoint(MrPartRun *run, MrRuntimeCheckpoint *cp)
{
	if (run->ps == NULL)
		*cp = run->cp;
	else
		part_checkpoint(run->rt, run->ps, cp);
}

/* ---------- the runtime ---------- */

void
mr_runtime_destroy(MrRuntime *rt)
{
	ListCell   *lc;

	if (rt->levels)
	{
		mr_levels_destroy(rt);
		return;
	}
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

void
mr_runtime_degrade_skip(MrRuntime *rt, bool degrade)
{
	rt->degrade_skip = degrade;
}

void
mr_runtime_get_stats(MrRuntime *rt, MrRuntimeStats *stats)
{
	MrMatcherStats ms = rt->gone_matcher_stats;
	uint64		dfa_steps = rt->gone_dfa_steps;
	dlist_iter	iter;

	dlist_foreach(iter, &rt->states)
	{
		MrPartState *ps = dlist_container(MrPartState, node, iter.cur);

		if (ps->matcher)
			matcher_count(ps->matcher, &ms);
		if (rt->lane.on)
			dfa_steps += ps->dfa_search.steps;
	}
	*stats = rt->stats;
	stats->steps = ms.steps + dfa_steps;
	stats->define_calls = ms.define_calls + rt->lane.define_calls;
	if (rt->lane.mask_on_append)
		stats->define_calls += (uint64) rt->stats.rows_in * rt->lane.ndefines;
	stats->merged = ms.merged;
	stats->peak_threads = ms.peak_threads;
	if (rt->lane.automaton)
	{
		stats->peak_threads = Max(stats->peak_threads, mr_dfa_peak_threads(rt->lane.automaton));
		stats->automaton_states = mr_dfa_nstates(rt->lane.automaton);
	}
	stats->memo_hits = ms.memo_hits;
	if (rt->memo.on)
	{
		const MrMemoStats *mst = mr_memo_stats(rt->memo.m);

		/* the memo's steps are the children it looked at */
		stats->steps += mst->edges;
		stats->define_calls += mst->define_calls;
		stats->memo_nodes = (int64) mst->nodes;
		stats->memo_peak_nodes = mst->peak_nodes;
	}
}

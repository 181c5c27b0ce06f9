/*-------------------------------------------------------------------------
 * mr_stream_part.c
 *	  The stream worker's partitions: the table of PARTITION BY keys, their
 *	  runs on the one runtime (MrRuntime, mr_runtime.h) they share, the
 *	  release of pending rows below the watermark, WITHIN expiry, the
 *	  timers of time in patterns, and the emit callback that hands the
 *	  matches a run decides to the output.
 *
 * A partition is small: its key, its number, its checkpoint
 * (MrRuntimeCheckpoint, as of its last settle) and the rows its run may
 * still need (retained rows, a ring of row pointers).  While it has a live
 * match it also has a partition run (MrPartRun: its matcher and row
 * window); a run that can be suspended is let go at once (the checkpoint
 * says where it stands), and at most MRS_LIVE_RUNS runs are kept, the
 * least recently used one letting go first.  A partition without a run
 * gets one back from its checkpoint and its retained rows (part_run),
 * which rebuilds exactly the state the run had (the runtime is
 * deterministic, and a match is emitted as soon as it is decided, so the
 * re-pushed rows decide nothing new).  Release hands rows over grouped by
 * partition, so a partition is visited once per cycle however many rows it
 * gets.
 *
 * Invariants:
 *	- a partition is numbered once, in arrival order (next_part), and keeps
 *	  its number for the stream's life;
 *	- p->rows holds the partition's rows first .. first + n - 1, in push
 *	  order, which is the order of the full ORDER BY, then seq; first is the
 *	  run's keep_from after every settle, so the ring holds exactly the
 *	  rows a checkpoint must give back, and p->cp is the run's checkpoint;
 *	- a partition has a run exactly when it is on MyStream->live; while a
 *	  run is rebuilt (repushing), an emitted row is an error (it cannot
 *	  happen);
 *	- rows are released strictly below the watermark, all of them, in
 *	  (partition, ORDER BY, seq) order; release order within a partition
 *	  therefore never depends on how changes were cut into cycles;
 *	- with WITHIN, the deadline heap holds every partition with a retained
 *	  row not yet expired, by the event time of its oldest such row: a
 *	  partition is visited only when that row's window has closed;
 *	- with a pattern that waits for the clock (a trailing `-> NOT v`, WITH
 *	  TIMEOUT ROWS, a window other than plain WITHIN, whose expiry ends the
 *	  threads only it ends), the timer queue (mr_stream_timers.c) holds every
 *	  partition whose run has a deadline, as of its last settle; after each
 *	  release every timer before the watermark fires, in idle and let-go
 *	  partitions too, and timer_clock is that watermark: a run rebuilt from
 *	  its checkpoint is re-pushed its rows and advanced to timer_clock,
 *	  which gives back exactly the state it had (the clock decides by the
 *	  rows' times and the watermark only, and every row below timer_clock
 *	  had been pushed when it fired);
 *	- an output row's _match_id is deterministic (partition number, first
 *	  row number[, row number]; a timeout row's first row number is
 *	  prefixed with t); AFTER MATCH NO SKIP, where one start has several
 *	  matches, puts the match number (m<n>, checkpointed) after the first
 *	  row.  A rebuilt NO SKIP run finds again the matches already written
 *	  of the start its matcher restarts at (the checkpoint's match number
 *	  counts them out, mr_runtime.c part_checkpoint): they are the only
 *	  output a rebuild may decide, and it is dropped.
 *
 * Time in patterns, the rule (README "Time in patterns"): a deadline d is
 * passed when the clock is past it, and a stream's clock is its watermark
 * W: every row with an event time at or below d of every partition is
 * released before W > d, so a decision by W is final, and the batch query
 * with CLOCK W decides the same.  Firing marks the partition dirty like a
 * row does: its output, its checkpoint and the position commit in the
 * cycle's transaction.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

/*
 * Partitions with a live run, at most.  The matchers of one stream share
 * their per-step scratch, so a live run costs about 1.5-3.5 kB plus its
 * rows: 32768 of them stay near 100 MB, and a stream whose 100 000 keys
 * all hold a partial match rebuilds a run only for the least recently used
 * two thirds (bench/stream_core.sh "parts": CPU per row 1.95x the
 * 100-partition case, RssAnon 257 MB; 1024 gave 3.6x and 255 MB, 131072
 * gave 1.39x and 463 MB).
 */
#define MRS_LIVE_RUNS	32768

#include "match_recognize.h"
#include "mr_stream_worker_int.h"

/* the partitions by key hash (a chain per hash value), open addressing */
typedef struct PartBucket
{
	uint32		hash;
	char		status;
	MrsPart    *first;
} PartBucket;

#define SH_PREFIX partmap
#define SH_ELEMENT_TYPE PartBucket
#define SH_KEY_TYPE uint32
#define SH_KEY hash
#define SH_HASH_KEY(tb, key) (key)
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

static partmap_hash *partmap = NULL;

static void emit_row(void *arg, Datum *values, bool *nulls, const MrEmitInfo *info);
static void part_apply(const MrsLaneResult *r);

/* workers > 1: is p matched by another process (mr_stream_lanes.c)? */
static inline bool
part_remote(MrsPart *p)
{
	return MyStream->nlanes > 0 && mrs_lane_of(p) > 0;
}

/* last emitted match or timeout, to count them (not rows) */
static MrsPart *last_emit_part = NULL;
static int64 last_emit_start = -1;
static int64 last_emit_number = -1;
static bool last_emit_timeout = false;

/* AFTER MATCH NO SKIP: several matches of one start (their ids differ) */
static bool no_skip = false;

/* ---------- heaps ---------- */

/* the oldest retained row of p that WITHIN has not expired yet */
static MrsRow *
deadline_row(MrsPart *p)
{
	int64		i = Max(p->expire_from - p->first, 0);

	Assert(i < p->n);
	return mrs_part_row(p, (int32) i);
}

static int
deadline_cmp(const void *a, const void *b)
{
	return mrs_key_cmp(deadline_row((MrsPart *) a)->key, deadline_row((MrsPart *) b)->key);
}

static void
deadline_moved(void *item, int64 pos)
{
	((MrsPart *) item)->dl_pos = pos;
}

void
mrs_parts_init(void)
{
	MrsStream  *s = MyStream;
	MemoryContext old;

	partmap = partmap_create(s->cxt, 1024, NULL);
	s->by_id_cap = 1024;
	s->by_id = MemoryContextAllocZero(s->cxt, sizeof(MrsPart *) * s->by_id_cap);
	mrs_pending_init();
	mrs_heap_init(&s->deadlines, deadline_cmp, deadline_moved, s->cxt);
	mrs_timers_init();
	mrs_lanes_on_settle(part_apply);	/* workers > 1 */
	dlist_init(&s->live);
	s->nlive = 0;

	s->rtcxt = AllocSetContextCreate(s->cxt, "match_recognize stream runtime",
									 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(s->rtcxt);
	s->rt = mr_runtime_create(s->q, emit_row, NULL);
	no_skip = mr_query_clause(s->q)->no_skip;
	mr_runtime_degrade_skip(s->rt, true);

	/*
	 * A stream's clock is CLOCK MAX (mr_stream_bind refuses any other); it
	 * decides absences, timeout rows and every window's expiry (a thread
	 * only a window ends, in a partition that gets no more rows)
	 */
	s->has_timers = mr_runtime_expire_windows(s->rt) || mr_query_uses_input_clock(s->q);
	MemoryContextSwitchTo(old);
}

/* ---------- the table of partitions ---------- */

static uint32
part_hash(Datum *values, bool *nulls)
{
	MrsStream  *s = MyStream;
	uint32		h = 0;
	int			i;

	for (i = 0; i < s->npart; i++)
	{
		int			c = s->partcols[i];
		uint32		k = 0;

		if (!nulls[c])
			k = DatumGetUInt32(FunctionCall1Coll(&s->parthash[i], s->partcoll[i], values[c]));
		h = hash_combine(h, k);
	}
	return h;
}

static bool
part_matches(MrsPart *p, Datum *values, bool *nulls)
{
	MrsStream  *s = MyStream;
	int			i;

	for (i = 0; i < s->npart; i++)
	{
		int			c = s->partcols[i];

		if (p->keynull[i] != nulls[c])
			return false;
		if (!nulls[c] &&
			!DatumGetBool(FunctionCall2Coll(&s->parteq[i], s->partcoll[i], p->key[i], values[c])))
			return false;
	}
	return true;
}

static void
part_insert(MrsPart *p)
{
	MrsStream  *s = MyStream;
	PartBucket *b;
	bool		found;

	b = partmap_insert(partmap, p->hash, &found);
	if (!found)
		b->first = NULL;
	p->hnext = b->first;
	b->first = p;
	while (p->id >= s->by_id_cap)
	{
		int64		ncap = s->by_id_cap * 2;

		s->by_id = repalloc_huge(s->by_id, sizeof(MrsPart *) * ncap);
		memset(s->by_id + s->by_id_cap, 0, sizeof(MrsPart *) * (ncap - s->by_id_cap));
		s->by_id_cap = ncap;
	}
	if (s->by_id[p->id] != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("partition " INT64_FORMAT " of stream %d exists twice", p->id, s->id)));
	s->by_id[p->id] = p;
}

/* a partition with this key (one value per PARTITION BY column) */
MrsPart *
mrs_part_add(int64 id, Datum *keyvals, bool *keynulls)
{
	MrsStream  *s = MyStream;
	MrsPart    *p;
	Datum	   *rowvals = s->scratch_values;
	bool	   *rownulls = s->scratch_nulls;
	int			i;

	p = MemoryContextAllocZero(s->cxt, MAXALIGN(sizeof(MrsPart)) +
							   (sizeof(Datum) + sizeof(bool)) * Max(s->npart, 1));
	p->key = (Datum *) ((char *) p + MAXALIGN(sizeof(MrsPart)));
	p->keynull = (bool *) (p->key + Max(s->npart, 1));
	p->id = id;
	p->dl_pos = -1;
	p->tm_pos = -1;
	p->tm_deadline = PG_INT64_MAX;
	ItemPointerSetInvalid(&p->tid);
	for (i = 0; i < s->npart; i++)
	{
		Form_pg_attribute a = TupleDescAttr(s->indesc, s->partcols[i]);
		MemoryContext old = MemoryContextSwitchTo(s->cxt);

		p->keynull[i] = keynulls[i];
		p->key[i] = keynulls[i] ? (Datum) 0 :
			mr_datum_copy_flat(keyvals[i], a->attbyval, a->attlen);
		MemoryContextSwitchTo(old);
	}
	/* the hash is over input-column positions: lay the key out as a row */
	for (i = 0; i < s->natts; i++)
		rownulls[i] = true;
	for (i = 0; i < s->npart; i++)
	{
		rowvals[s->partcols[i]] = p->key[i];
		rownulls[s->partcols[i]] = p->keynull[i];
	}
	p->hash = part_hash(rowvals, rownulls);
	part_insert(p);
	return p;
}

/* the partition of a row (input columns); a new one numbered if create */
MrsPart *
mrs_part_lookup(Datum *values, bool *nulls, bool create)
{
	MrsStream  *s = MyStream;
	uint32		h = part_hash(values, nulls);
	PartBucket *b = partmap_lookup(partmap, h);
	MrsPart    *p;
	Datum	   *kv;
	bool	   *kn;
	int			i;

	if (b)
		for (p = b->first; p; p = p->hnext)
			if (part_matches(p, values, nulls))
				return p;
	if (!create)
		return NULL;
	kv = palloc(sizeof(Datum) * Max(s->npart, 1));
	kn = palloc(sizeof(bool) * Max(s->npart, 1));
	for (i = 0; i < s->npart; i++)
	{
		kv[i] = values[s->partcols[i]];
		kn[i] = nulls[s->partcols[i]];
	}
	/* (copies values and nulls first: mrs_part_add uses the scratch arrays) */
	p = mrs_part_add(s->next_part++, kv, kn);
	pfree(kv);
	pfree(kn);
	mrs_part_dirty(p);
	return p;
}

void
mrs_part_dirty(MrsPart *p)
{
	if (p->dirty)
		return;
	p->dirty = true;
	p->dnext = MyStream->dirty_parts;
	MyStream->dirty_parts = p;
}

/* ---------- retained rows ---------- */

/* append row to p's ring, as its row first + n */
void
mrs_part_append(MrsPart *p, MrsRow *row)
{
	if (p->n == p->cap)
	{
		int32		ncap = Max(4, p->cap * 2);
		MrsRow	  **nrows = MemoryContextAlloc(MyStream->cxt, sizeof(MrsRow *) * ncap);
		int32		i;

		for (i = 0; i < p->n; i++)
			nrows[i] = mrs_part_row(p, i);
		if (p->rows)
			pfree(p->rows);
		p->rows = nrows;
		p->cap = ncap;
		p->head = 0;
	}
	p->rows[(p->head + p->n) & (p->cap - 1)] = row;
	p->n++;
	row->part = p;
}

/* drop the rows before keep_from from the ring */
static void
part_trim(MrsPart *p, int64 keep_from)
{
	MrsStream  *s = MyStream;

	if (keep_from < p->first)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("partition " INT64_FORMAT " of stream %d needs row " INT64_FORMAT " again, which it had released",
						p->id, s->id, keep_from)));
	while (p->first < keep_from && p->n > 0)
	{
		MrsRow	   *row = mrs_part_row(p, 0);

		p->head = (p->head + 1) & (p->cap - 1);
		p->n--;
		p->first++;
		s->rows_retained--;
		mrs_row_unkeep(row);
	}
	if (p->n == 0)
		p->first = keep_from;
	if (p->n == 0 && p->rows != NULL)
	{
		/* an idle partition keeps no ring */
		pfree(p->rows);
		p->rows = NULL;
		p->cap = 0;
		p->head = 0;
	}
}

/* after a settle: where p stands in the WITHIN deadline heap */
static void
deadline_heap_update(MrsPart *p)
{
	MrsStream  *s = MyStream;
	bool		open = p->n > 0 && p->expire_from < p->first + p->n;

	if (!s->has_within)
		return;
	if (!open)
	{
		if (p->dl_pos >= 0)
			mrs_heap_remove(&s->deadlines, p->dl_pos);
		return;
	}
	if (p->dl_pos >= 0)
		mrs_heap_changed(&s->deadlines, p->dl_pos);
	else
		mrs_heap_add(&s->deadlines, p);
}

static MrPartRun *part_run(MrsPart *p);

/*
 * For every partition at the end of a rebuild: its place in the WITHIN
 * deadline heap and, with timers, in the timer queue: the run of a
 * partition that keeps rows is rebuilt (re-pushed, then advanced to the
 * checkpoint's watermark, which decides nothing new) and asked for its
 * next deadline, so that an idle partition's absence or timeout is decided
 * although no row of it ever comes again.
 */
void
mrs_deadline_update(MrsPart *p)
{
	MrsStream  *s = MyStream;

	if (s->has_timers)
	{
		if (!s->have_timer_clock && s->have_max)
		{
			/* the watermark of the checkpoint, where its timers fired */
			s->timer_clock = mrs_time_value(s->watermark);
			s->have_timer_clock = true;
		}
		if (p->n > 0 && part_remote(p))
		{
			mrs_lanes_op(p, 'T', 0);	/* the caller ends the round */
			return;
		}
		if (p->n > 0)
		{
			(void) part_run(p);
			mrs_part_settle(p);
			return;
		}
	}
	deadline_heap_update(p);
}

/* ---------- the partitions' runs ---------- */

/*
 * An error while a partition's run takes a row (a DEFINE or MEASURES
 * expression that fails on it) or drops expired matches says which
 * stream, partition and row: deleting the row from the source does not
 * help (it is in the WAL), so the message must be enough to understand it.
 */
typedef struct RunContext
{
	MrsPart    *part;
	MrsRow	   *row;			/* NULL: WITHIN expiry */
} RunContext;

static void
run_error_context(void *arg)
{
	RunContext *c = arg;
	MrsStream  *s = MyStream;
	StringInfoData key;
	int			i;

	/* on_error 'skip': the row an error was raised on (not while rebuilding) */
	if (c->row != NULL && !s->repushing)
		s->err_row = c->row;
	initStringInfo(&key);
	for (i = 0; i < s->npart; i++)
	{
		Form_pg_attribute a = TupleDescAttr(s->indesc, s->partcols[i]);

		appendStringInfo(&key, "%s%s = %s", i ? ", " : "", NameStr(a->attname),
						 c->part->keynull[i] ? "NULL" : mrs_datum_text(a->atttypid, c->part->key[i]));
	}
	if (c->row != NULL)
		errcontext("match_recognize stream %s, partition " INT64_FORMAT " (%s), source row " INT64_FORMAT " with event time %s",
				   get_rel_name(s->output), c->part->id, s->npart > 0 ? key.data : "no PARTITION BY",
				   c->row->seq, mrs_datum_text(s->keytype, c->row->key));
	else
		errcontext("match_recognize stream %s, partition " INT64_FORMAT " (%s), deciding by the watermark",
				   get_rel_name(s->output), c->part->id, s->npart > 0 ? key.data : "no PARTITION BY");
}

static void
push_row(MrsPart *p, MrPartRun *run, MrsRow *row)
{
	MrsStream  *s = MyStream;
	MemoryContext old;
	RunContext	c;
	ErrorContextCallback cb;

	CHECK_FOR_INTERRUPTS();
	c.part = p;
	c.row = row;
	cb.callback = run_error_context;
	cb.arg = &c;
	cb.previous = error_context_stack;
	error_context_stack = &cb;
	ExecStoreMinimalTuple(row->tup, s->inslot, false);
	old = MemoryContextSwitchTo(s->rtcxt);
	mr_partrun_push(run, s->inslot);
	MemoryContextSwitchTo(old);
	ExecClearTuple(s->inslot);
	error_context_stack = cb.previous;
	s->err_row = NULL;			/* a WARNING's context callback may have set it */
}

/* the clock of p's run passes to now (every row of p below now pushed) */
static void
advance_clock(MrsPart *p, MrPartRun *run, int64 now)
{
	MemoryContext old;
	RunContext	c;
	ErrorContextCallback cb;

	c.part = p;
	c.row = NULL;
	cb.callback = run_error_context;
	cb.arg = &c;
	cb.previous = error_context_stack;
	error_context_stack = &cb;
	old = MemoryContextSwitchTo(MyStream->rtcxt);
	mr_partrun_advance_clock(run, now);
	MemoryContextSwitchTo(old);
	error_context_stack = cb.previous;
}

/* p's run is let go: its state stays in p->cp (taken at its last settle) */
static void
part_drop_run(MrsPart *p)
{
	MrsStream  *s = MyStream;

	if (p->run == NULL)
		return;
	if (p->cp.nrows != p->first + p->n || p->cp.keep_from != p->first)
		elog(ERROR, "partition " INT64_FORMAT " of stream %d keeps rows " INT64_FORMAT " .. " INT64_FORMAT ", its checkpoint " INT64_FORMAT " .. " INT64_FORMAT,
			 p->id, s->id, p->first, p->first + p->n, p->cp.keep_from, p->cp.nrows);
	mr_partrun_free(p->run);
	p->run = NULL;
	dlist_delete(&p->live);
	s->nlive--;
}

/*
 * p's live run: the one it has, or one rebuilt from p's checkpoint and its
 * retained rows (the runtime is deterministic and emits a match as soon as
 * it is decided, so the re-pushed rows decide nothing new).  At most
 * MRS_LIVE_RUNS partitions keep a run that cannot be suspended (each holds
 * a matcher); past that, the least recently used one lets its run go.
 */
static MrPartRun *
part_run(MrsPart *p)
{
	MrsStream  *s = MyStream;
	TupleTableSlot *slot = s->keyslot;
	MemoryContext old;
	int32		i;

	if (p->run != NULL)
	{
		dlist_move_tail(&s->live, &p->live);
		return p->run;
	}
	if (s->nlive >= MRS_LIVE_RUNS)
		part_drop_run(dlist_head_element(MrsPart, live, &s->live));
	if (p->cp.keep_from != p->first || p->cp.nrows != p->first + p->n)
		elog(ERROR, "partition " INT64_FORMAT " of stream %d keeps rows from " INT64_FORMAT ", its checkpoint from " INT64_FORMAT,
			 p->id, s->id, p->first, p->cp.keep_from);
	ExecClearTuple(slot);
	for (i = 0; i < s->natts; i++)
	{
		slot->tts_values[i] = (Datum) 0;
		slot->tts_isnull[i] = true;
	}
	for (i = 0; i < s->npart; i++)
	{
		slot->tts_values[s->partcols[i]] = p->key[i];
		slot->tts_isnull[s->partcols[i]] = p->keynull[i];
	}
	ExecStoreVirtualTuple(slot);
	old = MemoryContextSwitchTo(s->rtcxt);
	p->run = mr_partrun_restore(s->rt, slot, &p->cp, p);
	MemoryContextSwitchTo(old);
	dlist_push_tail(&s->live, &p->live);
	s->nlive++;
	s->repushing = true;
	for (i = 0; i < p->n; i++)
		push_row(p, p->run, mrs_part_row(p, i));
	if (s->has_timers && s->have_timer_clock)
		advance_clock(p, p->run, s->timer_clock);
	s->repushing = false;
	return p->run;
}

/* push row (released, or re-read) into p as its next row */
void
mrs_part_push(MrsPart *p, MrsRow *row)
{
	MrPartRun  *run;

	if (part_remote(p))
	{
		/* workers > 1: p's lane pushes it (mr_stream_lanes.c) */
		mrs_lanes_op_push(p, row);
		mrs_part_append(p, row);
		MyStream->rows_retained++;
		return;
	}
	run = part_run(p);

	if (mr_partrun_rows(run) != p->first + p->n)
		elog(ERROR, "partition " INT64_FORMAT " of stream %d is out of step with its run",
			 p->id, MyStream->id);
	mrs_part_append(p, row);
	MyStream->rows_retained++;
	push_row(p, run, row);
}

/*
 * After pushes into (or expiry of) p: forget the rows its run no longer
 * needs, take its checkpoint, and let the run go when it can be suspended
 * (no live match, no row still needed): such a partition keeps only its
 * key and its checkpoint.
 */
void
mrs_part_settle(MrsPart *p)
{
	MemoryContext old;
	bool		idle;

	if (part_remote(p))
	{
		/* workers > 1: p's lane settles it, part_apply applies that */
		mrs_lanes_op(p, 'S', 0);
		if (mrs_lanes_full())
			mrs_lanes_send();
		return;
	}
	Assert(p->run != NULL);
	part_trim(p, mr_partrun_retained_from(p->run));
	old = MemoryContextSwitchTo(MyStream->rtcxt);
	if (MyStream->has_timers)
		mrs_timer_set(p, mr_partrun_next_deadline(p->run));
	idle = mr_partrun_suspend(p->run);
	MemoryContextSwitchTo(old);
	mr_partrun_checkpoint(p->run, &p->cp);
	if (idle)
		part_drop_run(p);
	mrs_part_dirty(p);
	deadline_heap_update(p);
}

void
mrs_refresh_skips(void)
{
	MrRuntimeStats st;

	mr_runtime_get_stats(MyStream->rt, &st);
	MyStream->skip_degraded = MyStream->skip_base + st.skip_degraded +
		(MyStream->nlanes > 0 ? mrs_lanes_skips() : 0);
}

/*
 * workers > 1: send the lanes every op queued and apply the results of all
 * of them (mr_stream_lanes.c).  Nothing reads a partition's checkpoint,
 * first row, deadline or timer between an op and this.
 */
void
mrs_parts_sync(void)
{
	if (MyStream->nlanes == 0)
		return;
	mrs_lanes_drain(false);
}

/*
 * workers > 1: a lane's settle of p, applied to the worker's copy of p as
 * mrs_part_settle does with its run's.  The worker may have appended rows
 * of later rounds to p's ring meanwhile: they come after r->first (a run
 * keeps from a row it was pushed), so trimming to it keeps them.
 */
static void
part_apply(const MrsLaneResult *r)
{
	MrsStream  *s = MyStream;
	MrsPart    *p;

	if (r->id < 1 || r->id >= s->by_id_cap || s->by_id[r->id] == NULL)
		elog(ERROR, "a lane of stream %d settled unknown partition " INT64_FORMAT, s->id, r->id);
	p = s->by_id[r->id];
	part_trim(p, r->first);
	if (s->has_timers)
		mrs_timer_set(p, r->tm_deadline);
	p->cp = r->cp;
	mrs_part_dirty(p);
	deadline_heap_update(p);
}

/* in a lane: the ops that end with a settle (mr_stream_lane.c) */
static void part_expire(MrsPart *p, int64 open_from);

void
mrs_part_lane_expire(MrsPart *p, int64 open_from)
{
	part_expire(p, open_from);
	mrs_part_settle(p);
}

void
mrs_part_lane_clock(MrsPart *p, int64 now)
{
	(void) part_run(p);
	advance_clock(p, p->run, now);
	mrs_part_settle(p);
}

void
mrs_part_lane_touch(MrsPart *p)
{
	(void) part_run(p);
	mrs_part_settle(p);
}

/* ---------- release ---------- */

/*
 * Rows leave the pending rows in (event time, seq) order: the queue's
 * prefix below the watermark, merged with the heap's rows below it.  That
 * is the push order within a partition when ORDER BY has one column; a
 * counting pass over the partitions they touch groups them keeping it.
 * With more ORDER BY columns the rows of each partition are then sorted by
 * all of them (then seq), as the batch query sorts them.
 */
static uint64 release_no = 0;

typedef struct OrdRow
{
	MrsRow	   *row;
	Datum	   *ord;
	bool	   *ordnull;
} OrdRow;

static int
ordrow_cmp(const void *a, const void *b)
{
	const OrdRow *x = a,
			   *y = b;
	MrsStream  *s = MyStream;
	int			i,
				c;

	for (i = 0; i < s->norder; i++)
	{
		c = ApplySortComparator(x->ord[i], x->ordnull[i], y->ord[i], y->ordnull[i],
								&s->ordsort[i]);
		if (c != 0)
			return c;
	}
	return x->row->seq < y->row->seq ? -1 : x->row->seq > y->row->seq;
}

/* rows[0 .. n - 1] of one partition, by the full ORDER BY, then seq */
static void
sort_full_order(MrsRow **rows, int64 n)
{
	MrsStream  *s = MyStream;
	OrdRow	   *o = palloc(sizeof(OrdRow) * n);
	Datum	   *v = palloc(sizeof(Datum) * s->natts);
	bool	   *nl = palloc(sizeof(bool) * s->natts);
	int64		i;
	int			k;

	for (i = 0; i < n; i++)
	{
		mrs_row_deform(rows[i], v, nl);
		o[i].row = rows[i];
		o[i].ord = palloc(sizeof(Datum) * s->norder);
		o[i].ordnull = palloc(sizeof(bool) * s->norder);
		for (k = 0; k < s->norder; k++)
		{
			o[i].ord[k] = v[s->ordcols[k]];
			o[i].ordnull[k] = nl[s->ordcols[k]];
		}
	}
	qsort(o, n, sizeof(OrdRow), ordrow_cmp);
	for (i = 0; i < n; i++)
		rows[i] = o[i].row;
}

/* the pending rows below the watermark, in (event time, seq) order */
static MrsRow **
take_released(int64 *np)
{
	MrsStream  *s = MyStream;
	MrsPending *pd = &s->pending;
	MrsRow	  **rel;
	MrsRow	   *row;
	int64		n = 0,
				cap;

	if (pd->heap.n == 0)
	{
		/* the usual case: a prefix of the queue, found by bisection */
		int64		lo = 0,
					hi = pd->n;

		while (lo < hi)
		{
			int64		mid = lo + (hi - lo) / 2;

			if (mrs_key_cmp(pd->fifo[(pd->head + mid) & (pd->cap - 1)]->key, s->watermark) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		rel = palloc(sizeof(MrsRow *) * Max(lo, 1));
		for (n = 0; n < lo; n++)
			rel[n] = pd->fifo[(pd->head + n) & (pd->cap - 1)];
		pd->head = (pd->head + lo) & (pd->cap - 1);
		pd->n -= lo;
		s->rows_pending -= lo;
		*np = lo;
		return rel;
	}
	cap = 1024;
	rel = palloc(sizeof(MrsRow *) * cap);
	while ((row = mrs_pending_first()) != NULL &&
		   mrs_key_cmp(row->key, s->watermark) < 0)
	{
		(void) mrs_pending_pop();
		if (n == cap)
		{
			cap *= 2;
			rel = repalloc_huge(rel, sizeof(MrsRow *) * cap);
		}
		rel[n++] = row;
	}
	*np = n;
	return rel;
}

/*
 * workers > 1, while the worker decodes: release what is below the
 * watermark now and leave the lanes' results to come back while it
 * decodes on (mr_stream_lanes.c).  Releasing early changes nothing: the watermark only
 * grows, a row that arrives below it is late, so every row released later
 * comes after these in its partition's order; and the settles in between
 * decide nothing (see the backfill, which settles at any point).
 */
static bool release_early = false;

void
mrs_release_early(void)
{
	release_early = true;
	PG_TRY();
	{
		mrs_release();
	}
	PG_FINALLY();
	{
		release_early = false;
	}
	PG_END_TRY();
}

static void release_pending(void);

/*
 * Hand every pending row below the watermark to its partition; workers >
 * 1, except early: with the results of every op applied.
 */
void
mrs_release(void)
{
	release_pending();

	/*
	 * workers > 1, the cycle's last release: the output rows are written as
	 * they come back, while the lanes match what is still in flight, rather
	 * than after it with the lanes idle (process() writes the rest; one
	 * transaction either way)
	 */
	if (!release_early && MyStream->nlanes > 0)
		mrs_lanes_drain(true);
}

static void
release_pending(void)
{
	MrsStream  *s = MyStream;
	MemoryContext old;
	MrsRow	  **rel,
			  **grouped;
	MrsPart   **parts;
	int64		n,
				nparts = 0,
				off = 0,
				i,
				k;
	int			pass;

	if (!s->have_max || mrs_pending_count() == 0)
		return;
	old = MemoryContextSwitchTo(s->cyclecxt);
	rel = take_released(&n);
	if (n == 0)
	{
		MemoryContextSwitchTo(old);
		return;
	}
	release_no++;
	parts = palloc(sizeof(MrsPart *) * n);
	for (i = 0; i < n; i++)
	{
		MrsPart    *p = rel[i]->part;

		if (p->rel_no != release_no)
		{
			p->rel_no = release_no;
			p->rel_count = 0;
			parts[nparts++] = p;
		}
		p->rel_count++;
	}
	for (k = 0; k < nparts; k++)
	{
		parts[k]->rel_start = off;
		off += parts[k]->rel_count;
		parts[k]->rel_count = 0;
	}
	grouped = palloc(sizeof(MrsRow *) * n);
	for (i = 0; i < n; i++)
	{
		MrsPart    *p = rel[i]->part;

		grouped[p->rel_start + p->rel_count++] = rel[i];
	}
	for (k = 0; k < nparts; k++)
	{
		MrsPart    *p = parts[k];

		if (s->norder > 1 && p->rel_count > 1)
			sort_full_order(grouped + p->rel_start, p->rel_count);
	}
	MemoryContextSwitchTo(old);

	/*
	 * workers > 1: the lanes' partitions, whose ops go to them at once (all
	 * of them: the worker matches none), then this process's own
	 */
	for (pass = 0; pass < 2; pass++)
	{
		if (pass == 1 && s->nlanes == 0)
			break;
		for (k = 0; k < nparts; k++)
		{
			MrsPart    *p = parts[k];
			int64		pushed = 0;

			if (s->nlanes > 0 && part_remote(p) != (pass == 0))
				continue;
			for (i = 0; i < p->rel_count; i++)
			{
				MrsRow	   *row = grouped[p->rel_start + i];

				/* listed in the dead-letter table (on_error 'skip'): dropped */
				if (s->dl_n > 0 && mrs_deadletter_listed(row->seq))
				{
					mrs_row_unkeep(row);
					continue;
				}
				mrs_part_push(p, row);
				pushed++;
			}
			if (pushed > 0)
				mrs_part_settle(p);
		}
		if (pass == 0 && s->nlanes > 0)
			mrs_lanes_send();
	}
	s->catalog_dirty = true;
}

/* ---------- WITHIN ---------- */

/* the first row of p, from row number from on, whose window is still open */
static int64
first_open_row(MrsPart *p, int64 from)
{
	MrsStream  *s = MyStream;
	int64		lo = Max(from - p->first, 0),
				hi = p->n;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		Datum		deadline = FunctionCall2(&s->plus, mrs_part_row(p, (int32) mid)->key, s->bound);

		if (mrs_key_cmp(deadline, s->watermark) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return p->first + lo;
}

/*
 * Time in patterns: fire every timer before the watermark W, the earliest
 * first: the partition's run (rebuilt if it was let go) decides what the
 * clock at W decides (absences whose deadline passed, timeout rows), as a
 * row at W would; then it settles like after a release.  Cost: the due
 * timers, O(log partitions) each.
 */
static void
fire_timers(void)
{
	MrsStream  *s = MyStream;
	int64		now = mrs_time_value(s->watermark);
	MrsPart    *p;
	int64		queued = 0;

	while ((p = mrs_timer_due(now)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		if (part_remote(p))
		{
			/* its lane fires it; the result sets its next timer */
			mrs_timer_set(p, PG_INT64_MAX);
			mrs_lanes_op(p, 'C', now);
			queued++;
			s->catalog_dirty = true;
			continue;
		}
		/* rebuilt at the clock its timers last fired at, then moved on */
		(void) part_run(p);
		advance_clock(p, p->run, now);
		mrs_part_settle(p);
		if (p->tm_deadline < now)
			elog(ERROR, "partition " INT64_FORMAT " of stream %d still waits for deadline " INT64_FORMAT " after the clock passed it",
				 p->id, s->id, p->tm_deadline);
		s->catalog_dirty = true;
	}
	if (queued > 0)
	{
		mrs_parts_sync();
		if ((p = mrs_timer_due(now)) != NULL)
			elog(ERROR, "partition " INT64_FORMAT " of stream %d still waits for deadline " INT64_FORMAT " after the clock passed it",
				 p->id, s->id, p->tm_deadline);
	}
	s->timer_clock = now;
	s->have_timer_clock = true;
}

/*
 * With WITHIN, drop in every partition the partial matches whose window
 * closed (first row's event time + bound < watermark), which decides the
 * matches they held back; also in partitions that receive no more rows.
 * The timers of time in patterns fire before (a window that expires
 * threads must make its timeout rows before WITHIN drops them) and again
 * after (what WITHIN decided may resume a search that waits again).
 */
static void
part_expire(MrsPart *p, int64 open_from)
{
	MrsStream  *s = MyStream;
	RunContext	c;
	ErrorContextCallback cb;
	MemoryContext old;

	(void) part_run(p);
	c.part = p;
	c.row = NULL;
	cb.callback = run_error_context;
	cb.arg = &c;
	cb.previous = error_context_stack;
	error_context_stack = &cb;
	old = MemoryContextSwitchTo(s->rtcxt);
	(void) mr_partrun_expire_before(p->run, open_from);
	MemoryContextSwitchTo(old);
	error_context_stack = cb.previous;
	p->expire_from = open_from;
}

void
mrs_expire(void)
{
	MrsStream  *s = MyStream;
	MrsPart    *p;
	int64		queued = 0;

	if (!s->have_max)
		return;
	/* first the timers: a window that expires threads makes timeout rows */
	if (s->has_timers)
		fire_timers();
	while (s->has_within && (p = mrs_heap_first(&s->deadlines)) != NULL)
	{
		MrsRow	   *oldest = deadline_row(p);
		int64		open_from;

		CHECK_FOR_INTERRUPTS();
		if (mrs_key_cmp(FunctionCall2(&s->plus, oldest->key, s->bound), s->watermark) >= 0)
		{
			if (queued == 0)
				break;
			/* workers > 1: the round's results put them back in the heap */
			mrs_parts_sync();
			queued = 0;
			continue;
		}
		open_from = first_open_row(p, p->expire_from);
		if (part_remote(p))
		{
			/* its lane expires it; out of the heap until the result */
			mrs_heap_remove(&s->deadlines, p->dl_pos);
			p->expire_from = open_from;
			mrs_lanes_op(p, 'E', open_from);
			queued++;
			s->catalog_dirty = true;
			continue;
		}
		part_expire(p, open_from);
		mrs_part_settle(p);
		s->catalog_dirty = true;
	}
	if (queued > 0)
		mrs_parts_sync();
	if (s->has_timers)
		fire_timers();
}

/* ---------- output ---------- */

static void
emit_row(void *arg, Datum *values, bool *nulls, const MrEmitInfo *info)
{
	MrsStream  *s = MyStream;
	MrsPart    *p = info->run_arg;
	int			n = s->out.ncols - 1;
	char		idbuf[96];
	bool		timeout;

	if (p != NULL && s->repushing && no_skip && info->match_number > 0 &&
		info->match_start == p->cp.matcher_from)
		return;					/* written before the checkpoint */
	if (p == NULL || s->repushing)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("stream %d decided a match while rebuilding partition " INT64_FORMAT,
						s->id, p ? p->id : -1)));
	/* a timeout row (WITH TIMEOUT ROWS) has a first row and no number */
	timeout = info->match_start >= 0 && info->match_number < 0;
	s->rows_out++;
	if (info->match_start >= 0 &&
		(p != last_emit_part || info->match_start != last_emit_start ||
		 info->match_number != last_emit_number || timeout != last_emit_timeout))
	{
		if (timeout)
			s->timeouts_out++;
		else
			s->matches_out++;
		last_emit_part = p;
		last_emit_start = info->match_start;
		last_emit_number = info->match_number;
		last_emit_timeout = timeout;
	}
	s->catalog_dirty = true;
	if (s->mode == MRS_REDO)
		return;					/* committed before the restart */
	if (info->match_start < 0)
		snprintf(idbuf, sizeof(idbuf), INT64_FORMAT ":u" INT64_FORMAT, p->id, info->row);
	else if (no_skip && !timeout && info->row < 0)
		snprintf(idbuf, sizeof(idbuf), INT64_FORMAT ":" INT64_FORMAT ":m" INT64_FORMAT,
				 p->id, info->match_start, info->match_number);
	else if (no_skip && !timeout)
		snprintf(idbuf, sizeof(idbuf), INT64_FORMAT ":" INT64_FORMAT ":m" INT64_FORMAT ":" INT64_FORMAT,
				 p->id, info->match_start, info->match_number, info->row);
	else if (info->row < 0)
		snprintf(idbuf, sizeof(idbuf), INT64_FORMAT ":%s" INT64_FORMAT, p->id,
				 timeout ? "t" : "", info->match_start);
	else
		snprintf(idbuf, sizeof(idbuf), INT64_FORMAT ":%s" INT64_FORMAT ":" INT64_FORMAT,
				 p->id, timeout ? "t" : "", info->match_start, info->row);
	if (s->is_lane)
	{
		/* to the worker, which writes it (mr_stream_lanes.c) */
		mrs_lanes_emit(values, nulls, n, idbuf);
		return;
	}
	memcpy(s->outvals, values, sizeof(Datum) * n);
	memcpy(s->outnulls, nulls, sizeof(bool) * n);
	s->outvals[n] = CStringGetTextDatum(idbuf);
	s->outnulls[n] = false;
	mrs_outbuf_add(&s->out, s->outvals, s->outnulls);
	pfree(DatumGetPointer(s->outvals[n]));
}

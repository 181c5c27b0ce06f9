/*-------------------------------------------------------------------------
 * mr_selftest.c
 *	  Test-only SQL functions over the runtime's partition runs
 *	  (mr_runtime.h), which no SQL path of the extension drives yet (the
 *	  streaming worker will).  They are not part of the extension's install
 *	  scripts: a test declares them itself,
 *
 *		CREATE FUNCTION pg_temp.partrun_check(text, text, boolean)
 *		  RETURNS SETOF record
 *		  AS '$libdir/match_recognize', 'match_recognize_partrun_check'
 *		  LANGUAGE C STRICT;
 *
 *	  (declaring a C function needs superuser, as for any).
 *
 * match_recognize_partrun_check(item text, mode text, dfa boolean): what
 * match_recognize(item) returns, computed through one partition run per
 * partition key with the partitions' rows interleaved (round robin: each
 * partition's first row, then each one's second, ...), so the runs are
 * driven the way a stream drives them.  mode 'interleave' only
 * interleaves; 'suspend' suspends every run after each of its rows;
 * 'restore' checkpoints every run after each of its rows, frees it and
 * rebuilds it from the checkpoint, pushing the rows it kept again, as a
 * stream recovers after a restart; 'clock' pushes the rows of all
 * partitions in event-time order and, before each row, advances the clock
 * of every run whose next deadline it passes (mr_partrun_advance_clock),
 * as a stream's watermark would (time in patterns: the result is the
 * batch one, CLOCK MAX).  dfa runs the runtime in DFA mode when
 * the query qualifies.  The rows come in another order than the
 * function's; the set must be the same.
 *
 * match_recognize_partrun_memory(item text) RETURNS TABLE (phase text,
 * runs bigint, suspended bigint, bytes bigint, bytes_allocated bigint,
 * bytes_per_run bigint, allocated_per_run bigint): the memory the runtime
 * holds for the item's partitions beyond an empty runtime's, in use
 * (allocated and not free) and allocated (the memory contexts' blocks):
 *	  'one by one'	  each partition's rows pushed into its run, which is then
 *					  suspended, one partition after the other;
 *	  'all live'	  every partition's rows pushed, no run suspended;
 *	  'all suspended' the same runs, then suspended;
 *	  'runtime per partition'  for comparison, a runtime of its own per key
 *					  (over the first 1000 partitions).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "executor/executor.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "rewrite/rewriteHandler.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/typcache.h"

#include "mr_runtime.h"

PG_FUNCTION_INFO_V1(match_recognize_partrun_check);
PG_FUNCTION_INFO_V1(match_recognize_partrun_memory);

/* the input, read whole: its rows grouped by partition, in input order */
typedef struct TestInput
{
	TupleDesc	desc;
	int			nparts;
	int			cap;
	List	  **rows;			/* [nparts] HeapTuples of each partition */
	int			maxrows;		/* the longest partition's rows */
} TestInput;

typedef struct TestReceiver
{
	DestReceiver pub;
	TestInput  *in;
	const int  *keycols;
	int			nkeys;
	FmgrInfo   *eq;
	Oid		   *coll;
	HeapTuple	last;
	MemoryContext cxt;
} TestReceiver;

static bool
same_key(TestReceiver *r, HeapTuple a, HeapTuple b)
{
	int			i;

	for (i = 0; i < r->nkeys; i++)
	{
		bool		an,
					bn;
		Datum		av = heap_getattr(a, r->keycols[i] + 1, r->in->desc, &an);
		Datum		bv = heap_getattr(b, r->keycols[i] + 1, r->in->desc, &bn);

		if (an != bn)
			return false;
		if (!an && !DatumGetBool(FunctionCall2Coll(&r->eq[i], r->coll[i], av, bv)))
			return false;
	}
	return true;
}

static bool
test_receive(TupleTableSlot *slot, DestReceiver *self)
{
	TestReceiver *r = (TestReceiver *) self;
	TestInput  *in = r->in;
	MemoryContext old = MemoryContextSwitchTo(r->cxt);
	HeapTuple	tup = ExecCopySlotHeapTuple(slot);

	CHECK_FOR_INTERRUPTS();
	if (r->last == NULL || !same_key(r, r->last, tup))
	{
		if (in->nparts == in->cap)
		{
			in->cap = Max(16, in->cap * 2);
			in->rows = in->rows ? repalloc(in->rows, sizeof(List *) * in->cap)
				: palloc(sizeof(List *) * in->cap);
		}
		in->rows[in->nparts++] = NIL;
	}
	in->rows[in->nparts - 1] = lappend(in->rows[in->nparts - 1], tup);
	in->maxrows = Max(in->maxrows, list_length(in->rows[in->nparts - 1]));
	r->last = tup;
	MemoryContextSwitchTo(old);
	return true;
}

static void
test_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
test_noop(DestReceiver *self)
{
}

/* run the bound query's ordered input and keep its rows, by partition */
static TestInput *
read_input(const MrBoundQuery *q)
{
	TestInput  *in = palloc0(sizeof(TestInput));
	TestReceiver r;
	List	   *rewritten;
	PlannedStmt *plan;
	QueryDesc  *qd;
	int			i;

	in->desc = mr_query_input_desc(q);
	memset(&r, 0, sizeof(r));
	r.pub.receiveSlot = test_receive;
	r.pub.rStartup = test_startup;
	r.pub.rShutdown = test_noop;
	r.pub.rDestroy = test_noop;
	r.pub.mydest = DestNone;
	r.in = in;
	r.cxt = CurrentMemoryContext;
	r.nkeys = mr_query_partition_cols(q, &r.keycols);
	r.eq = palloc0(sizeof(FmgrInfo) * Max(r.nkeys, 1));
	r.coll = palloc0(sizeof(Oid) * Max(r.nkeys, 1));
	for (i = 0; i < r.nkeys; i++)
	{
		Form_pg_attribute a = TupleDescAttr(in->desc, r.keycols[i]);
		TypeCacheEntry *tce = lookup_type_cache(a->atttypid, TYPECACHE_EQ_OPR_FINFO);

		if (!OidIsValid(tce->eq_opr_finfo.fn_oid))
			elog(ERROR, "no equality operator for type %u", a->atttypid);
		fmgr_info_copy(&r.eq[i], &tce->eq_opr_finfo, CurrentMemoryContext);
		r.coll[i] = a->attcollation;
	}
	rewritten = QueryRewrite(mr_query_input(q, NULL));
	if (list_length(rewritten) != 1)
		elog(ERROR, "the input of MATCH_RECOGNIZE was rewritten into %d queries",
			 list_length(rewritten));
	plan = pg_plan_query(linitial_node(Query, rewritten), mr_query_text(q), 0, NULL);
	qd = CreateQueryDesc(plan, mr_query_text(q), GetActiveSnapshot(), InvalidSnapshot,
						 &r.pub, NULL, NULL, 0);
	ExecutorStart(qd, 0);
	ExecutorRun(qd, ForwardScanDirection, 0, true);
	ExecutorFinish(qd);
	ExecutorEnd(qd);
	FreeQueryDesc(qd);
	return in;
}

static MrBoundQuery *
bind_item(text *item)
{
	MrTextOrigin origin;
	MrBindOptions opts;

	origin.base = -1;
	memset(&opts, 0, sizeof(opts));
	opts.params_refused = "The partition run tests take no parameters.";
	return mr_query_bind(VARDATA_ANY(item), VARSIZE_ANY_EXHDR(item), &origin, &opts);
}

static TupleTableSlot *
row_slot(TupleTableSlot *slot, HeapTuple tup)
{
	return ExecStoreHeapTuple(tup, slot, false);
}

/* ---------- match_recognize_partrun_check ---------- */

typedef struct CheckSink
{
	Tuplestorestate *store;
	TupleDesc	desc;
} CheckSink;

static void
check_emit(void *arg, Datum *values, bool *nulls, const MrEmitInfo *info)
{
	CheckSink  *sink = (CheckSink *) arg;

	tuplestore_putvalues(sink->store, sink->desc, values, nulls);
}

/* mode 'restore': the run rebuilt from its checkpoint, its kept rows again */
static MrPartRun *
check_restore(MrRuntime *rt, MrPartRun *run, List *rows, TupleTableSlot *slot)
{
	MrRuntimeCheckpoint cp;
	int64		r;

	mr_partrun_checkpoint(run, &cp);
	mr_partrun_free(run);
	run = mr_partrun_restore(rt, row_slot(slot, linitial(rows)), &cp, NULL);
	for (r = cp.keep_from; r < cp.nrows; r++)
		mr_partrun_push(run, row_slot(slot, list_nth(rows, (int) r)));
	if (mr_partrun_rows(run) != cp.nrows)
		elog(ERROR, "a restored partition run has " INT64_FORMAT " rows, not " INT64_FORMAT,
			 mr_partrun_rows(run), cp.nrows);
	return run;
}

/* mode 'clock': one row of the input, and its event time */
typedef struct ClockRow
{
	int64		t;
	int			part;
	int			row;
} ClockRow;

static int
clock_row_cmp(const void *a, const void *b)
{
	const ClockRow *x = a,
			   *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	return (x->row > y->row) - (x->row < y->row);
}

/*
 * Every row in event-time order (a partition's rows keep their order);
 * before each, the clock of every run passes to the row's time, as a
 * watermark: every row before it is pushed already.
 */
static void
push_by_clock(MrRuntime *rt, MrPartRun **runs, TestInput *in, TupleTableSlot *slot)
{
	int64		n = 0,
				k;
	ClockRow   *all;
	int			i,
				r;

	for (i = 0; i < in->nparts; i++)
		n += list_length(in->rows[i]);
	all = palloc(sizeof(ClockRow) * Max(n, 1));
	n = 0;
	for (i = 0; i < in->nparts; i++)
		for (r = 0; r < list_length(in->rows[i]); r++)
		{
			CHECK_FOR_INTERRUPTS();
			all[n].part = i;
			all[n].row = r;
			if (!mr_runtime_event_time(rt, row_slot(slot, list_nth(in->rows[i], r)), &all[n].t))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("mode clock needs time in patterns and event times that are not null")));
			n++;
		}
	qsort(all, n, sizeof(ClockRow), clock_row_cmp);
	for (k = 0; k < n; k++)
	{
		CHECK_FOR_INTERRUPTS();
		for (i = 0; i < in->nparts; i++)
			if (mr_partrun_next_deadline(runs[i]) < all[k].t)
				mr_partrun_advance_clock(runs[i], all[k].t);
		mr_partrun_push(runs[all[k].part],
						row_slot(slot, list_nth(in->rows[all[k].part], all[k].row)));
	}
}

Datum
match_recognize_partrun_check(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *mode = text_to_cstring(PG_GETARG_TEXT_PP(1));
	bool		dfa = PG_GETARG_BOOL(2);
	bool		suspend = strcmp(mode, "suspend") == 0;
	bool		restore = strcmp(mode, "restore") == 0;
	bool		clock = strcmp(mode, "clock") == 0;
	MemoryContext cxt;
	MemoryContext old;
	MrBoundQuery *q;
	TestInput  *in;
	MrRuntime  *rt;
	MrPartRun **runs;
	TupleTableSlot *slot;
	CheckSink	sink;
	int			i,
				r;

	if (!suspend && !restore && !clock && strcmp(mode, "interleave") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown mode \"%s\"", mode),
				 errhint("The modes are interleave, suspend, restore and clock.")));
	/* a copy of expectedDesc, which the executor frees (see mr_srf.c) */
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	cxt = AllocSetContextCreate(CurrentMemoryContext, "match_recognize partition run check",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	q = bind_item(PG_GETARG_TEXT_PP(0));
	mr_check_result_desc(rsinfo->setDesc, mr_query_result_desc(q));
	in = read_input(q);
	sink.store = rsinfo->setResult;
	sink.desc = rsinfo->setDesc;
	rt = mr_runtime_create(q, check_emit, &sink);
	if (dfa)
		mr_runtime_use_dfa(rt);
	slot = MakeSingleTupleTableSlot(in->desc, &TTSOpsHeapTuple);
	runs = palloc(sizeof(MrPartRun *) * Max(in->nparts, 1));
	for (i = 0; i < in->nparts; i++)
		runs[i] = mr_partrun_create(rt, row_slot(slot, linitial(in->rows[i])), NULL);
	if (clock)
		push_by_clock(rt, runs, in, slot);
	for (r = 0; r < in->maxrows && !clock; r++)
		for (i = 0; i < in->nparts; i++)
		{
			if (r >= list_length(in->rows[i]))
				continue;
			CHECK_FOR_INTERRUPTS();
			mr_partrun_push(runs[i], row_slot(slot, list_nth(in->rows[i], r)));
			if (suspend)
				(void) mr_partrun_suspend(runs[i]);
			else if (restore)
				runs[i] = check_restore(rt, runs[i], in->rows[i], slot);
		}
	for (i = 0; i < in->nparts; i++)
	{
		mr_partrun_finish(runs[i]);
		mr_partrun_free(runs[i]);
	}
	ExecDropSingleTupleTableSlot(slot);
	mr_runtime_destroy(rt);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return (Datum) 0;
}

/* ---------- match_recognize_partrun_memory ---------- */

/* bytes in use (allocated and not free) in cxt and its children */
static int64
context_in_use(MemoryContext cxt)
{
	MemoryContextCounters c;
	MemoryContext child;
	int64		used;

	memset(&c, 0, sizeof(c));
	cxt->methods->stats(cxt, NULL, NULL, &c, false);
	used = (int64) (c.totalspace - c.freespace);
	for (child = cxt->firstchild; child != NULL; child = child->nextchild)
		used += context_in_use(child);
	return used;
}

static void
ignore_emit(void *arg, Datum *values, bool *nulls, const MrEmitInfo *info)
{
}

/* what the runtime holds beyond an empty one, and for how many runs */
typedef struct MemoryBase
{
	int64		in_use;
	int64		allocated;
} MemoryBase;

static void
memory_row(ReturnSetInfo *rsinfo, const char *phase, int nruns, MrPartRun **runs,
		   MemoryContext cxt, const MemoryBase *base)
{
	Datum		values[7];
	bool		nulls[7] = {false, false, false, false, false, false, false};
	int64		suspended = 0;
	int64		in_use = context_in_use(cxt) - base->in_use;
	int64		allocated = (int64) MemoryContextMemAllocated(cxt, true) - base->allocated;
	int			i;

	for (i = 0; runs && i < nruns; i++)
		if (mr_partrun_is_suspended(runs[i]))
			suspended++;
	values[0] = CStringGetTextDatum(phase);
	values[1] = Int64GetDatum(nruns);
	values[2] = Int64GetDatum(suspended);
	values[3] = Int64GetDatum(in_use);
	values[4] = Int64GetDatum(allocated);
	values[5] = Int64GetDatum(nruns > 0 ? in_use / nruns : 0);
	values[6] = Int64GetDatum(nruns > 0 ? allocated / nruns : 0);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* a runtime in a context of its own, and what it holds with no run */
static MrRuntime *
memory_runtime(const MrBoundQuery *q, MemoryContext *cxt, MemoryBase *base)
{
	MemoryContext old;
	MrRuntime  *rt;

	*cxt = AllocSetContextCreate(CurrentMemoryContext, "match_recognize partition run memory",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(*cxt);
	rt = mr_runtime_create(q, ignore_emit, NULL);
	MemoryContextSwitchTo(old);
	base->in_use = context_in_use(*cxt);
	base->allocated = (int64) MemoryContextMemAllocated(*cxt, true);
	return rt;
}

static void
push_partition(MrPartRun *run, List *rows, TupleTableSlot *slot)
{
	ListCell   *lc;

	foreach(lc, rows)
	{
		CHECK_FOR_INTERRUPTS();
		mr_partrun_push(run, row_slot(slot, lfirst(lc)));
	}
}

/*
 * For comparison, a whole runtime per partition (mr_runtime_push on a
 * runtime of its own for each key), as a stream kept partitions before
 * partition runs existed; over the first MEMORY_COMPARE_PARTS partitions.
 */
#define MEMORY_COMPARE_PARTS 1000

static void
runtime_per_partition(ReturnSetInfo *rsinfo, const MrBoundQuery *q, TestInput *in,
					  TupleTableSlot *slot)
{
	int			n = Min(in->nparts, MEMORY_COMPARE_PARTS);
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "match_recognize runtime per partition",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	MrRuntime **rts = palloc(sizeof(MrRuntime *) * Max(n, 1));
	MemoryBase	base;
	ListCell   *lc;
	int			i;

	MemoryContextSwitchTo(old);
	base.in_use = context_in_use(cxt);
	base.allocated = (int64) MemoryContextMemAllocated(cxt, true);
	MemoryContextSwitchTo(cxt);
	for (i = 0; i < n; i++)
	{
		rts[i] = mr_runtime_create(q, ignore_emit, NULL);
		foreach(lc, in->rows[i])
		{
			CHECK_FOR_INTERRUPTS();
			mr_runtime_push(rts[i], row_slot(slot, lfirst(lc)));
		}
	}
	MemoryContextSwitchTo(old);
	memory_row(rsinfo, "runtime per partition", n, NULL, cxt, &base);
	for (i = 0; i < n; i++)
		mr_runtime_destroy(rts[i]);
	MemoryContextDelete(cxt);
}

Datum
match_recognize_partrun_memory(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext work = CurrentMemoryContext;
	MemoryContext cxt;
	MemoryContext old;
	MrBoundQuery *q;
	TestInput  *in;
	MrRuntime  *rt;
	MrPartRun **runs;
	TupleTableSlot *slot;
	MemoryBase	base;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	q = bind_item(PG_GETARG_TEXT_PP(0));
	in = read_input(q);
	slot = MakeSingleTupleTableSlot(in->desc, &TTSOpsHeapTuple);
	runs = palloc(sizeof(MrPartRun *) * Max(in->nparts, 1));

	/* one partition after the other, each suspended after its rows */
	rt = memory_runtime(q, &cxt, &base);
	old = MemoryContextSwitchTo(cxt);
	for (i = 0; i < in->nparts; i++)
	{
		runs[i] = mr_partrun_create(rt, row_slot(slot, linitial(in->rows[i])), NULL);
		push_partition(runs[i], in->rows[i], slot);
		(void) mr_partrun_suspend(runs[i]);
	}
	MemoryContextSwitchTo(work);
	memory_row(rsinfo, "one by one", in->nparts, runs, cxt, &base);
	mr_runtime_destroy(rt);
	MemoryContextDelete(cxt);

	/* every partition live, then every one suspended */
	rt = memory_runtime(q, &cxt, &base);
	MemoryContextSwitchTo(cxt);
	for (i = 0; i < in->nparts; i++)
	{
		runs[i] = mr_partrun_create(rt, row_slot(slot, linitial(in->rows[i])), NULL);
		push_partition(runs[i], in->rows[i], slot);
	}
	MemoryContextSwitchTo(work);
	memory_row(rsinfo, "all live", in->nparts, runs, cxt, &base);
	MemoryContextSwitchTo(cxt);
	for (i = 0; i < in->nparts; i++)
		(void) mr_partrun_suspend(runs[i]);
	MemoryContextSwitchTo(old);
	memory_row(rsinfo, "all suspended", in->nparts, runs, cxt, &base);
	mr_runtime_destroy(rt);
	MemoryContextDelete(cxt);
	runtime_per_partition(rsinfo, q, in, slot);
	ExecDropSingleTupleTableSlot(slot);
	return (Datum) 0;
}

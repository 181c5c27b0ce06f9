/*-------------------------------------------------------------------------
 * mr_scan_exec.c
 *	  Executing the MatchRecognize custom scan, and its EXPLAIN output.
 *
 * The node pulls rows from its input (the subplan named by plan_id, whose
 * PlanState the executor created with the other subplans), pushes each into
 * the runtime (mr_runtime.c) and returns the rows the runtime emits, one at a
 * time, from a small queue.  Nothing is materialized beyond the runtime's
 * retained-row window and the rows emitted for one input row, so LIMIT
 * stops reading input as soon as it has its rows.
 *
 * Starting (mr_scan_begin) replays the analyses the planner bound the clause
 * with (custom_private): the lowering runs again, but no name is resolved;
 * the statement parameters' arguments (custom_exprs) are evaluated first and
 * their values become constants of the expressions.  The replayed result
 * row is checked against the scan tuple (and the input's row against the
 * input plan's), so a plan that no longer fits is an error, never a crash.
 *
 * Under Gather (a parallel-aware plan: custom_private has a parallel
 * entry), the rows come from mr_par_next() instead of the input plan: the
 * sorted rows of the buckets or shares this participant claims
 * (mr_scan_parallel*.c); the DSM callbacks hand the node its shared state
 * and ShutdownCustomScan lets go of it before Gather destroys the DSM.  The
 * input's own parallel-aware nodes (a Parallel Seq Scan) get theirs from
 * the executor, which walks custom_ps, where the node lists its input.
 *
 * Memory:
 *  - qcxt: the bound clause, replayed for this executor run;
 *  - rtcxt: the runtime (with the expressions' executor state); reset and
 *    rebuilt on rescan;
 *  - outcxt: the queued output rows; reset before the next input row is
 *    pushed, i.e. once every queued row has been returned (the row last
 *    returned stays valid until the next call, as the executor requires).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/memutils.h"

#include "match_recognize.h"
#include "mr_runtime.h"
#include "mr_scan.h"

typedef struct MrQueuedRow
{
	Datum	   *values;
	bool	   *nulls;
} MrQueuedRow;

typedef struct MrScanState
{
	CustomScanState css;

	/* from the plan */
	char	   *text;
	MrTextOrigin origin;
	int			plan_id;
	List	   *analyses;
	bool		rewritten;
	List	   *params;			/* the parameters' argument expressions */
	List	   *parallel;		/* NIL, or the parallel entry (mr_scan_parallel.c) */

	PlanState  *input;			/* borrowed from es_subplanstates, or owned */
	bool		owns_input;		/* the input is custom_plans[0] (plan_id 0) */
	MrParState *par;			/* under Gather: the rows of a bucket or share */

	MemoryContext qcxt;
	MemoryContext rtcxt;
	MemoryContext outcxt;
	MrBoundQuery *q;
	MrRuntime  *rt;
	bool		input_done;

	/*
	 * output queue; each entry's arrays are allocated once (in qcxt) and
	 * reused, only by-reference values are copied into outcxt
	 */
	MrQueuedRow *queue;
	int			nqueue;
	int			qpos;
	int			qcap;
	bool		in_slot;		/* the first row emitted is in the scan slot */
	bool		out_used;		/* outcxt holds copies */
	int16	   *typlen;
	bool	   *typbyval;
	bool		all_byval;		/* every output column is by value */
	int			natts;

	/* counters of earlier runs (rescans) */
	MrRuntimeStats done_stats;
} MrScanState;

static void mr_scan_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *mr_scan_exec(CustomScanState *node);
static void mr_scan_end(CustomScanState *node);
static void mr_scan_rescan(CustomScanState *node);
static void mr_scan_explain(CustomScanState *node, List *ancestors, ExplainState *es);
static void mr_scan_shutdown(CustomScanState *node);
static Size mr_scan_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void mr_scan_initialize_dsm(CustomScanState *node, ParallelContext *pcxt,
								   void *coordinate);
static void mr_scan_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt,
									 void *coordinate);
static void mr_scan_initialize_worker(CustomScanState *node, shm_toc *toc,
									  void *coordinate);

static const CustomExecMethods mr_scan_exec_methods = {
	.CustomName = MR_SCAN_NAME,
	.BeginCustomScan = mr_scan_begin,
	.ExecCustomScan = mr_scan_exec,
	.EndCustomScan = mr_scan_end,
	.ReScanCustomScan = mr_scan_rescan,
	.ExplainCustomScan = mr_scan_explain,
	.EstimateDSMCustomScan = mr_scan_estimate_dsm,
	.InitializeDSMCustomScan = mr_scan_initialize_dsm,
	.ReInitializeDSMCustomScan = mr_scan_reinitialize_dsm,
	.InitializeWorkerCustomScan = mr_scan_initialize_worker,
	.ShutdownCustomScan = mr_scan_shutdown,
};

Node *
mr_scan_create_state(CustomScan *cscan)
{
	MrScanState *st = (MrScanState *) newNode(sizeof(MrScanState), T_CustomScanState);

	st->css.methods = &mr_scan_exec_methods;
	st->text = strVal(list_nth(cscan->custom_private, MR_SCAN_PRIVATE_TEXT));
	st->origin.base = intVal(list_nth(cscan->custom_private, MR_SCAN_PRIVATE_ORIGIN));
	st->plan_id = intVal(list_nth(cscan->custom_private, MR_SCAN_PRIVATE_PLAN_ID));
	st->analyses = (List *) list_nth(cscan->custom_private, MR_SCAN_PRIVATE_ANALYSES);
	st->rewritten = intVal(list_nth(cscan->custom_private, MR_SCAN_PRIVATE_REWRITTEN)) != 0;
	st->params = cscan->custom_exprs;
	st->parallel = (List *) list_nth(cscan->custom_private, MR_SCAN_PRIVATE_PARALLEL);
	return (Node *) st;
}

/* MrEmitFn: copy the row into the queue */
static void
mr_scan_emit(void *arg, Datum *values, bool *nulls, const MrEmitInfo *info)
{
	MrScanState *st = (MrScanState *) arg;
	MrQueuedRow *row;
	int			i;

	if (st->nqueue == 0 && st->all_byval)
	{
		/*
		 * The usual case, one row from one input row: straight into the
		 * scan slot, which mr_scan_next() cleared before feeding the input.
		 */
		TupleTableSlot *slot = st->css.ss.ss_ScanTupleSlot;

		for (i = 0; i < st->natts; i++)
		{
			slot->tts_values[i] = values[i];
			slot->tts_isnull[i] = nulls[i];
		}
		st->nqueue = 1;			/* queue[0] stays unused */
		st->in_slot = true;
		return;
	}
	if (st->nqueue >= st->qcap)
	{
		st->queue = repalloc_huge(st->queue, sizeof(MrQueuedRow) * st->qcap * 2);
		memset(&st->queue[st->qcap], 0, sizeof(MrQueuedRow) * st->qcap);
		st->qcap *= 2;
	}
	row = &st->queue[st->nqueue];
	if (row->values == NULL)
	{
		row->values = MemoryContextAlloc(st->qcxt, sizeof(Datum) * Max(st->natts, 1));
		row->nulls = MemoryContextAlloc(st->qcxt, sizeof(bool) * Max(st->natts, 1));
	}
	st->nqueue++;
	if (st->all_byval)
	{
		/*
		 * A NULL's value is never read.  Element by element, not memcpy:
		 * the arrays were only just written, and wide loads of narrow
		 * stores stall.
		 */
		for (i = 0; i < st->natts; i++)
		{
			row->values[i] = values[i];
			row->nulls[i] = nulls[i];
		}
		return;
	}
	for (i = 0; i < st->natts; i++)
	{
		row->nulls[i] = nulls[i];
		if (nulls[i])
			row->values[i] = (Datum) 0;
		else if (st->typbyval[i])
			row->values[i] = values[i];
		else
		{
			MemoryContext old = MemoryContextSwitchTo(st->outcxt);

			row->values[i] = datumCopy(values[i], false, st->typlen[i]);
			MemoryContextSwitchTo(old);
			st->out_used = true;
		}
	}
}

static void
mr_scan_start_runtime(MrScanState *st)
{
	MemoryContext old = MemoryContextSwitchTo(st->rtcxt);

	st->rt = mr_runtime_create(st->q, mr_scan_emit, st);
	if (mr_enable_memo)
		mr_runtime_use_memo(st->rt, mr_enable_dfa);
	if (mr_enable_dfa && !mr_runtime_uses_memo(st->rt))
		mr_runtime_use_dfa(st->rt);
	MemoryContextSwitchTo(old);
	st->input_done = false;
	st->nqueue = st->qpos = 0;
	st->in_slot = false;
	st->out_used = false;
}

/*
 * Bind the clause again by replaying the plan's analyses, with the values of
 * the statement parameters (evaluated here: the planner only admits
 * arguments that can be).
 */
static MrBoundQuery *
mr_scan_replay(MrScanState *st, EState *estate)
{
	int			n = list_length(st->params);
	Oid		   *types = palloc(sizeof(Oid) * Max(n, 1));
	Datum	   *values = palloc(sizeof(Datum) * Max(n, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(n, 1));
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	MrBindOptions opts;
	ListCell   *lc;
	int			i = 0;

	foreach(lc, st->params)
	{
		Expr	   *e = (Expr *) lfirst(lc);
		ExprState  *es = ExecInitExpr(e, &st->css.ss.ps);

		types[i] = exprType((Node *) e);
		values[i] = ExecEvalExprSwitchContext(es, econtext, &nulls[i]);
		i++;
	}
	memset(&opts, 0, sizeof(opts));
	opts.nparams = n;
	opts.paramtypes = types;
	opts.paramvalues = values;
	opts.paramnulls = nulls;
	opts.replay = st->analyses;
	opts.replay_rewritten = st->rewritten;
	return mr_query_bind(st->text, strlen(st->text), &st->origin, &opts);
}

/* the input plan must produce the row the replayed clause reads */
static void
mr_check_input_desc(const MrBoundQuery *q, TupleDesc input)
{
	TupleDesc	reads = mr_query_input_desc(q);
	int			i;

	if (input->natts != reads->natts)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the input plan of MATCH_RECOGNIZE returns %d columns, but the query reads %d",
						input->natts, reads->natts)));
	for (i = 0; i < reads->natts; i++)
		if (TupleDescAttr(input, i)->atttypid != TupleDescAttr(reads, i)->atttypid)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("the input plan of MATCH_RECOGNIZE returns column %d as type %s, but the query reads type %s",
							i + 1, format_type_be(TupleDescAttr(input, i)->atttypid),
							format_type_be(TupleDescAttr(reads, i)->atttypid))));
}

static void
mr_scan_begin(CustomScanState *node, EState *estate, int eflags)
{
	MrScanState *st = (MrScanState *) node;
	TupleDesc	desc = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	MemoryContext old;
	int			i;

	if (st->plan_id == 0)
	{
		/* a partial input, the node's own child (mr_scan_plan.c) */
		CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

		st->input = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
		st->owns_input = true;
	}
	else
		st->input = (PlanState *) list_nth(estate->es_subplanstates, st->plan_id - 1);
	node->custom_ps = list_make1(st->input);

	st->qcxt = AllocSetContextCreate(estate->es_query_cxt, "match_recognize query",
									 ALLOCSET_DEFAULT_SIZES);
	st->rtcxt = AllocSetContextCreate(estate->es_query_cxt, "match_recognize runtime",
									  ALLOCSET_DEFAULT_SIZES);
	st->outcxt = AllocSetContextCreate(estate->es_query_cxt, "match_recognize output",
									   ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(st->qcxt);
	st->q = mr_scan_replay(st, estate);
	mr_check_result_desc(desc, mr_query_result_desc(st->q));
	mr_check_input_desc(st->q, ExecGetResultType(st->input));
	st->natts = desc->natts;
	st->typlen = palloc(sizeof(int16) * Max(st->natts, 1));
	st->typbyval = palloc(sizeof(bool) * Max(st->natts, 1));
	st->all_byval = true;
	for (i = 0; i < st->natts; i++)
	{
		st->typlen[i] = TupleDescAttr(desc, i)->attlen;
		st->typbyval[i] = TupleDescAttr(desc, i)->attbyval;
		if (!st->typbyval[i])
			st->all_byval = false;
	}
	st->qcap = 16;
	st->queue = palloc0(sizeof(MrQueuedRow) * st->qcap);
	MemoryContextSwitchTo(old);
	if (st->parallel != NIL)
		st->par = mr_par_begin(st->parallel, st->input, estate);

	/* also under plain EXPLAIN, which says which matcher would run */
	mr_scan_start_runtime(st);
}

/* the next output row in the scan slot, or an empty slot */
static TupleTableSlot *
mr_scan_next(ScanState *ss)
{
	MrScanState *st = (MrScanState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	MrQueuedRow *row;
	int			i;

	if (st->qpos >= st->nqueue)
	{
		MemoryContext old;

		ExecClearTuple(slot);	/* before outcxt, which may hold its values, is reset */
		if (st->input_done)
			return slot;
		if (st->out_used)
		{
			MemoryContextReset(st->outcxt);
			st->out_used = false;
		}
		st->nqueue = st->qpos = 0;

		/*
		 * Feed input rows until one is emitted or the input ends.  The
		 * input runs in the caller's context (an index scan allocates its
		 * scan there on the first call), the runtime in its own.
		 */
		do
		{
			TupleTableSlot *in;

			CHECK_FOR_INTERRUPTS();
			in = st->par ? mr_par_next(st->par) : ExecProcNode(st->input);
			old = MemoryContextSwitchTo(st->rtcxt);
			if (TupIsNull(in))
			{
				mr_runtime_finish(st->rt);
				st->input_done = true;
				MemoryContextSwitchTo(old);
				break;
			}
			mr_runtime_push(st->rt, in);
			MemoryContextSwitchTo(old);
		} while (st->nqueue == 0);
		if (st->nqueue == 0)
			return slot;
		if (st->in_slot)
		{
			st->in_slot = false;
			st->qpos = 1;
			return ExecStoreVirtualTuple(slot);
		}
	}
	row = &st->queue[st->qpos++];
	ExecClearTuple(slot);
	/* element by element: the row was usually queued just now (see emit) */
	for (i = 0; i < st->natts; i++)
	{
		slot->tts_values[i] = row->values[i];
		slot->tts_isnull[i] = row->nulls[i];
	}
	return ExecStoreVirtualTuple(slot);
}

static bool
mr_scan_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
mr_scan_exec(CustomScanState *node)
{
	/* ExecScan() would only return the row: spare it the indirections */
	if (node->ss.ps.qual == NULL && node->ss.ps.state->es_epq_active == NULL)
	{
		if (node->ss.ps.ps_ProjInfo == NULL)
		{
			ResetExprContext(node->ss.ps.ps_ExprContext);
			return mr_scan_next(&node->ss);
		}
		if (node->ss.ps.plan->targetlist == NIL)
		{
			/*
			 * No column is wanted (SELECT count(*) FROM ...): the projection
			 * would evaluate nothing, so its per-row context reset and
			 * interpreter call are spared too.
			 */
			TupleTableSlot *result = node->ss.ps.ps_ResultTupleSlot;
			TupleTableSlot *row;

			ExecClearTuple(result);
			row = mr_scan_next(&node->ss);
			if (TupIsNull(row))
				return result;
			return ExecStoreVirtualTuple(result);
		}
	}
	return ExecScan(&node->ss, mr_scan_next, mr_scan_recheck);
}

static void
mr_scan_stop_runtime(MrScanState *st)
{
	MrRuntimeStats s;
	MemoryContext old;

	if (st->rt == NULL)
		return;
	mr_runtime_get_stats(st->rt, &s);
	st->done_stats.rows_in += s.rows_in;
	st->done_stats.matches += s.matches;
	st->done_stats.rows_out += s.rows_out;
	st->done_stats.max_rows_retained = Max(st->done_stats.max_rows_retained, s.max_rows_retained);
	st->done_stats.steps += s.steps;
	st->done_stats.define_calls += s.define_calls;
	st->done_stats.merged += s.merged;
	st->done_stats.peak_threads = Max(st->done_stats.peak_threads, s.peak_threads);
	st->done_stats.memo_hits += s.memo_hits;
	st->done_stats.memo_fallbacks += s.memo_fallbacks;
	st->done_stats.memo_peak_nodes = Max(st->done_stats.memo_peak_nodes, s.memo_peak_nodes);
	st->done_stats.automaton_states = Max(st->done_stats.automaton_states, s.automaton_states);
	st->done_stats.timers_fired += s.timers_fired;
	st->done_stats.timeout_rows += s.timeout_rows;
	st->done_stats.rows_held += s.rows_held;
	old = MemoryContextSwitchTo(st->rtcxt);
	mr_runtime_destroy(st->rt);
	MemoryContextSwitchTo(old);
	st->rt = NULL;
	MemoryContextReset(st->rtcxt);
}

static void
mr_scan_end(CustomScanState *node)
{
	MrScanState *st = (MrScanState *) node;

	/* a subplan input is ended by ExecEndPlan, a child by the node */
	if (st->par)
		mr_par_end(st->par);
	if (st->owns_input)
		ExecEndNode(st->input);
	if (st->rt)
	{
		MemoryContext old = MemoryContextSwitchTo(st->rtcxt);

		mr_runtime_destroy(st->rt);
		MemoryContextSwitchTo(old);
		st->rt = NULL;
	}
	MemoryContextDelete(st->outcxt);
	MemoryContextDelete(st->rtcxt);
	MemoryContextDelete(st->qcxt);
}

static void
mr_scan_rescan(CustomScanState *node)
{
	MrScanState *st = (MrScanState *) node;

	mr_scan_stop_runtime(st);
	MemoryContextReset(st->outcxt);
	if (st->par)
		mr_par_rescan(st->par);
	if (st->owns_input && node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(st->input, node->ss.ps.chgParam);
	ExecReScan(st->input);
	mr_scan_start_runtime(st);
}

/* ---------- parallel query: the share counter in the DSM ---------- */

static Size
mr_scan_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	MrScanState *st = (MrScanState *) node;

	return st->par ? mr_par_estimate_dsm(st->par, pcxt) : 0;
}

static void
mr_scan_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	MrScanState *st = (MrScanState *) node;

	if (st->par)
		mr_par_initialize_dsm(st->par, pcxt, coordinate);
}

static void
mr_scan_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	MrScanState *st = (MrScanState *) node;

	if (st->par)
		mr_par_reinitialize_dsm(st->par, pcxt, coordinate);
}

static void
mr_scan_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	MrScanState *st = (MrScanState *) node;

	if (st->par)
		mr_par_initialize_worker(st->par, coordinate);
}

/* before Gather destroys the DSM */
static void
mr_scan_shutdown(CustomScanState *node)
{
	MrScanState *st = (MrScanState *) node;

	if (st->par)
		mr_par_shutdown(st->par);
}

/* ---------- EXPLAIN ---------- */

static char *
span_text(const MrBoundQuery *q, MrSpan span)
{
	return pnstrdup(mr_query_text(q) + span.start, span.end - span.start);
}

static const char *
rows_per_match_text(MrRowsPerMatch r)
{
	switch (r)
	{
		case MR_ONE_ROW:
			return "ONE ROW PER MATCH";
		case MR_ALL_ROWS_SHOW_EMPTY:
			return "ALL ROWS PER MATCH SHOW EMPTY MATCHES";
		case MR_ALL_ROWS_OMIT_EMPTY:
			return "ALL ROWS PER MATCH OMIT EMPTY MATCHES";
		case MR_ALL_ROWS_WITH_UNMATCHED:
			return "ALL ROWS PER MATCH WITH UNMATCHED ROWS";
	}
	return "?";
}

static char *
skip_text(const MrClause *c)
{
	if (c->no_skip)
		return "NO SKIP";
	switch (c->skip)
	{
		case MR_SKIP_PAST_LAST_ROW:
			return "PAST LAST ROW";
		case MR_SKIP_TO_NEXT_ROW:
			return "TO NEXT ROW";
		case MR_SKIP_TO_FIRST:
			return psprintf("TO FIRST %s", c->skip_target.norm);
		case MR_SKIP_TO_LAST:
			return psprintf("TO LAST %s", c->skip_target.norm);
	}
	return "?";
}

/* EXPLAIN's Matcher: which lane of the runtime runs the query */
static const char *
scan_matcher_name(MrRuntime *rt)
{
	if (mr_runtime_uses_memo(rt))
		return "memo";
	return mr_runtime_uses_dfa(rt) ? "automaton" : "general";
}

/* EXPLAIN ANALYZE of the memo lane: its live nodes at most, and fallbacks */
static void
explain_memo(MrRuntime *rt, const MrRuntimeStats *s, const MrRuntimeStats *d, ExplainState *es)
{
	if (!mr_runtime_uses_memo(rt))
		return;
	ExplainPropertyInteger("Memo Peak Nodes", NULL,
						   Max(s->memo_peak_nodes, d->memo_peak_nodes), es);
	/* partitions that passed the memo's budget: the matcher went on */
	ExplainPropertyInteger("Memo Fallbacks", NULL, s->memo_fallbacks + d->memo_fallbacks, es);
}

/* EXPLAIN VERBOSE: the DEFINE and MEASURES expressions, as written */
static void
explain_expressions(MrBoundQuery *q, const MrClause *c, ExplainState *es)
{
	List	   *items = NIL;
	int			i;

	for (i = 0; i < c->ndefines; i++)
		items = lappend(items, psprintf("%s AS %s", c->vars[c->defines[i].var].name,
										span_text(q, c->defines[i].expr)));
	if (items)
		ExplainPropertyList("Define", items, es);
	items = NIL;
	for (i = 0; i < c->nmeasures; i++)
		items = lappend(items, psprintf("%s AS %s", span_text(q, c->measures[i].expr),
										c->measures[i].alias.name));
	if (items)
		ExplainPropertyList("Measures", items, es);
}

static void
mr_scan_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	MrScanState *st = (MrScanState *) node;
	MrBoundQuery *q = st->q;
	const MrClause *c = mr_query_clause(q);
	List	   *items;
	int			i;

	if (mr_query_is_levels(q))
	{
		ExplainPropertyText("Matcher", "level index", es);
		if (es->analyze && st->rt)
		{
			MrRuntimeStats s;

			mr_runtime_get_stats(st->rt, &s);
			ExplainPropertyInteger("Rows Read", NULL, s.rows_in + st->done_stats.rows_in, es);
			ExplainPropertyInteger("Fires", NULL, s.matches + st->done_stats.matches, es);
		}
		return;
	}
	ExplainPropertyText("Pattern", mr_pattern_to_string(c, c->pattern), es);
	if (c->npartition > 0)
	{
		items = NIL;
		for (i = 0; i < c->npartition; i++)
			items = lappend(items, span_text(q, c->partition[i]));
		ExplainPropertyList("Partition By", items, es);
	}
	if (c->norder > 0)
	{
		items = NIL;
		for (i = 0; i < c->norder; i++)
		{
			MrOrderItem *o = &c->order[i];

			items = lappend(items, psprintf("%s%s%s", span_text(q, o->expr),
											o->desc ? " DESC" : "",
											o->nulls == MR_NULLS_FIRST ? " NULLS FIRST" :
											o->nulls == MR_NULLS_LAST ? " NULLS LAST" : ""));
		}
		ExplainPropertyList("Order By", items, es);
	}
	ExplainPropertyText("Rows Per Match", rows_per_match_text(c->rows_per_match), es);
	ExplainPropertyText("After Match Skip", skip_text(c), es);
	if (c->has_within && c->nwindows == 1)
		ExplainPropertyText("Within", span_text(q, c->within), es);
	else if (c->nwindows > 0)
	{
		/* time in patterns: every window, as written */
		items = NIL;
		for (i = 0; i < c->nwindows; i++)
		{
			MrWindow   *w = &c->windows[i];

			items = lappend(items, psprintf("%s%s%s%s%s", span_text(q, w->bound),
											w->from_var >= 0 ? (w->from_last ? " FROM LAST " : " FROM ") : "",
											w->from_var >= 0 ? c->vars[w->from_var].norm : "",
											w->to_var >= 0 ? " TO " : "",
											w->to_var >= 0 ? c->vars[w->to_var].norm : ""));
		}
		ExplainPropertyList("Windows", items, es);
	}
	if (c->has_clock || (c->absent_var >= 0 && c->nwindows > 0))
		ExplainPropertyText("Clock", c->clock_max ? "MAX (the input's largest event time)" :
							span_text(q, c->clock), es);
	if (st->rt)
		ExplainPropertyText("Matcher", scan_matcher_name(st->rt), es);
	if (st->par)
		mr_par_explain(st->par, es);

	if (es->verbose)
		explain_expressions(q, c, es);

	if (es->analyze && st->rt)
	{
		MrRuntimeStats s;
		MrRuntimeStats *d = &st->done_stats;

		mr_runtime_get_stats(st->rt, &s);
		ExplainPropertyInteger("Rows Read", NULL, s.rows_in + d->rows_in, es);
		ExplainPropertyInteger("Matches", NULL, s.matches + d->matches, es);
		ExplainPropertyInteger("Max Rows Retained", NULL,
							   Max(s.max_rows_retained, d->max_rows_retained), es);
		ExplainPropertyInteger("Matcher Steps", NULL, (int64) (s.steps + d->steps), es);
		ExplainPropertyInteger("Memo Hits", NULL, (int64) (s.memo_hits + d->memo_hits), es);
		ExplainPropertyInteger("Define Evaluations", NULL,
							   (int64) (s.define_calls + d->define_calls), es);
		ExplainPropertyInteger("Merged Threads", NULL, (int64) (s.merged + d->merged), es);
		ExplainPropertyInteger("Peak Threads", NULL,
							   Max(s.peak_threads, d->peak_threads), es);
		/* reaching it stops the query with an error (54000): the headroom */
		ExplainPropertyInteger("Thread Budget", NULL, mr_max_threads, es);
		if (mr_runtime_uses_dfa(st->rt))
			ExplainPropertyInteger("Automaton States", NULL,
								   Max(s.automaton_states, d->automaton_states), es);
		explain_memo(st->rt, &s, d, es);
		if (c->nwindows > 0 || c->absent_var >= 0 || c->timeout_rows)
		{
			/*
			 * time in patterns: deadlines passed (threads expired, absences
			 * accepted), timeout rows output, rows held for CLOCK MAX
			 */
			ExplainPropertyInteger("Timers Fired", NULL, s.timers_fired + d->timers_fired, es);
			ExplainPropertyInteger("Timeout Rows", NULL, s.timeout_rows + d->timeout_rows, es);
			ExplainPropertyInteger("Rows Held", NULL, s.rows_held + d->rows_held, es);
		}
	}
}

/*-------------------------------------------------------------------------
 * mr_scan_parallel.c
 *	  The MatchRecognize node under Gather: each participant matches whole
 *	  partitions, a hash share of the PARTITION BY keys at a time.
 *
 * Partitions are matched independently, so the work splits by partition:
 * the keys of every input row are hashed (each key type's default hash
 * function under the column's collation, or the Datum's bits for by-value
 * types whose equality is identity, combined with hash_combine over the
 * columns as hash partitioning does; a NULL key hashes to 0) into K
 * shares, K = the planned workers (2 for one worker with the leader
 * participating).  A participant claims a share from
 * an atomic counter in the node's DSM, reads the whole input, keeps the rows
 * of its share, sorts them by the PARTITION BY and ORDER BY keys and feeds
 * them to its runtime; then claims the next share, until none is left.
 * Every partition is therefore matched wholly by exactly one participant,
 * whatever number of workers actually launched (the leader takes the shares
 * nobody claimed; with no DSM at all, e.g. when the executor runs the plan
 * without parallel mode, one pass with no filter does everything).  The
 * runtime sees the shares one after the other; a share's first row always
 * starts a new partition (shares have no keys in common), and MATCH_NUMBER
 * etc. are per partition, so the rows are those of the serial plan.  Their
 * order is not: the path claims no pathkeys, and the planner sorts above
 * Gather when the query asks for an order.
 *
 * Why the node sorts its share itself instead of a Sort in the input plan
 * with a filter "hash(keys) % K = $share" below it (the obvious design):
 * the filter would need an executor parameter set by the node, and a
 * PARAM_EXEC in the input makes the planner mark the input parallel
 * restricted, so the input would not be sent to the workers; it would also
 * need a SQL-callable hash function in the catalog.  Here the input is
 * planned a second time without its ORDER BY (so the planner picks its best
 * unordered plan, which must be parallel safe), the filter is a few lines
 * of C, and the sort is PostgreSQL's tuplesort with the ORDER BY's
 * operators, collations and NULLS order (what the planner's Sort would do,
 * within work_mem and spilling beyond it).  The cost: each claimed share
 * reads the whole input once, so the input is read K times in all (it is
 * rescanned for every further share a participant claims); the sort, which
 * dominates for large inputs, and the matching are split K ways.
 *
 * Rows that already arrive in the sort's order, or in a few ascending runs,
 * are not sorted (mr_par_load_share): a table loaded in key order is common
 * (a time series appended to), and a synchronized seq scan of it starts in
 * the middle and wraps around, giving two runs.  Each run of the share goes
 * to a tuplestore as it comes (one comparison with the last row kept), and
 * the runs are merged as they are read back; the row that would start a
 * fifth run moves what was stored into a tuplesort, which takes the rest.
 * The planner still costs a sort (it cannot know the rows' order).
 *
 * Why K = workers and not workers + 1 (the leader is a participant too):
 * every share costs a read of the whole input, and the leader's first job
 * under Gather is to collect the workers' rows.  The leader claims like any
 * participant (it usually starts first and takes a share, leaving one worker
 * without), so a share never waits for a worker that did not launch.  On
 * this project's 2-core machine (shared, so single timings move a lot) the
 * V-shape benchmark over 10M rows took 2.2 to 3.0 s with 2 shares against
 * 3.1 to 3.5 s with 3 shares, whose third read of the input competes for
 * the same 2 cores.  The leader may not simply stay out when workers launched:
 * under a Parallel Append or a join a worker need not run this node at all,
 * and then only the participants that do run it claim the shares.
 *
 * Planner side (mr_scan_parallel_candidate, mr_scan_parallel_add_path):
 * offered next to the serial path when the statement may use parallel mode,
 * max_parallel_workers_per_gather > 0, there is a PARTITION BY whose key
 * types hash consistently with their equality, the clause does not read the
 * input's clock (CLOCK MAX) or run subqueries, the input gives the same rows
 * whenever it runs (mr_input_varies_walker), every analysis (input,
 * DEFINE, MEASURES) is parallel safe (max_parallel_hazard: a parallel
 * restricted or unsafe function keeps the plan serial), the call's
 * arguments, quals and target are, the unordered input plan is, and the
 * input is large enough for compute_parallel_worker (by its estimated size,
 * under min_parallel_table_scan_size).  The functions match_recognize()
 * are PARALLEL RESTRICTED (the set-returning path runs in the leader only);
 * the rel is marked consider_parallel here because the node, not the
 * function, runs.  The partial path is parallel aware (so that the
 * executor gives it its DSM); Gather is added on top by the planner
 * (generate_useful_gather_paths).  Costs: the unordered input in full, a
 * hash per input row, a sort of 1/K of the rows, 1/K of the serial node's
 * own matching cost; parallel_setup_cost and parallel_tuple_cost are
 * Gather's, so the plan wins only for large inputs.
 *
 * Plan: CustomScan.custom_private[MR_SCAN_PRIVATE_PARALLEL] is NIL for the
 * serial node, else the List built by mr_scan_parallel_info (positions in
 * MrParInfoIndex): the number of shares, the sort keys (input columns,
 * operators, collations, NULLS FIRST) and the hashed columns with their
 * collations.  The partial path's input is the unordered plan.
 *
 * Executor side (MrParState): mr_par_next() replaces ExecProcNode() of the
 * input for the node; the DSM holds only the share counter, reset when
 * Gather rescans (ReInitializeDSM).  A rescan of the node itself (the
 * leader's, under a rescanned Gather) starts over without claiming: shares
 * are claimed lazily, on the first row asked for.  Memory: the share's sort
 * or runs in parcxt (reset per share), the key hashing in a per-row context
 * (a toasted key is detoasted there), the last kept row's by-reference sort
 * keys in prevcxt.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/hash.h"
#include "access/parallel.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "optimizer/tlist.h"
#include "port/atomics.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/sortsupport.h"
#include "utils/tuplesort.h"
#include "utils/tuplestore.h"
#include "utils/typcache.h"

#include "mr_scan.h"

/* positions in the List at custom_private[MR_SCAN_PRIVATE_PARALLEL] */
typedef enum MrParInfoIndex
{
	MR_PAR_NSHARES = 0,			/* Integer */
	MR_PAR_SORT_COLS,			/* IntList: 1-based input columns */
	MR_PAR_SORT_OPS,			/* OidList */
	MR_PAR_SORT_COLLS,			/* OidList */
	MR_PAR_SORT_NULLS_FIRST,	/* IntList of 0/1 */
	MR_PAR_HASH_COLS,			/* IntList: 0-based input columns */
	MR_PAR_HASH_COLLS,			/* OidList */
	MR_PAR_COUNT
} MrParInfoIndex;

/*
 * Rows that arrive in at most this many ascending runs are stored and merged
 * instead of sorted (see mr_par_load_share).
 */
#define MR_PAR_MAX_RUNS 4

typedef struct MrParShared
{
	pg_atomic_uint32 next_share;
} MrParShared;

struct MrParState
{
	PlanState  *input;
	int			nshares;

	/* the share's sort */
	int			nsort;
	AttrNumber *sort_cols;
	Oid		   *sort_ops;
	Oid		   *sort_colls;
	bool	   *nulls_first;
	TupleDesc	input_desc;
	TupleTableSlot *sorted;
	MemoryContext parcxt;		/* the sort of the current share */
	Tuplesortstate *sort;

	/* rows kept while they arrive in a few ordered runs: stores, not a sort */
	int			nruns;			/* 0: the sort (or nothing) holds the share */
	Tuplestorestate *runs[MR_PAR_MAX_RUNS];
	TupleTableSlot *heads[MR_PAR_MAX_RUNS]; /* each run's next row */
	bool		head_valid[MR_PAR_MAX_RUNS];
	int			last_run;		/* the run whose head was returned, or -1 */
	SortSupport ssup;			/* the sort's comparators, for the check */
	bool	   *sort_byval;
	int16	   *sort_typlen;
	bool		sort_byref;		/* some sort key is passed by reference */
	Datum	   *prev_vals;		/* the sort keys of the last row kept */
	bool	   *prev_nulls;
	Datum	   *cur_vals;		/* the sort keys of the row at hand */
	bool	   *cur_nulls;
	bool		have_prev;
	MemoryContext prevcxt;		/* by-reference keys of the last row kept */

	/* the key hash */
	int			nhash;
	int		   *hash_cols;
	Oid		   *hash_colls;
	FmgrInfo   *hash_fns;
	bool	   *hash_bits;		/* equal values are equal Datums: hash those */
	bool		hash_calls;		/* some key calls its hash function */
	MemoryContext hashcxt;		/* per row */

	MrParShared *shared;		/* NULL: not under a parallel Gather */
	bool		local_done;		/* no DSM: the one pass was made */
	bool		input_fresh;	/* the input has not been read since (re)start */
	bool		done;
	int			claimed;		/* shares this participant matched */
};

/* ---------- planner ---------- */

/* does this type have a hash function that agrees with its equality? */
static bool
mr_key_hashable(Oid type)
{
	TypeCacheEntry *tce = lookup_type_cache(type, TYPECACHE_EQ_OPR |
											TYPECACHE_HASH_PROC |
											TYPECACHE_HASH_OPFAMILY);

	if (!OidIsValid(tce->eq_opr) || !OidIsValid(tce->hash_proc) ||
		!OidIsValid(tce->hash_opf))
		return false;
	return get_opfamily_member(tce->hash_opf, type, type,
							   HTEqualStrategyNumber) == tce->eq_opr;
}

/*
 * Every participant runs the input for itself, and each keeps the rows of
 * its shares: the union is the serial plan's input only if every run gives
 * the same rows.  Rows can differ between runs (with the same snapshot)
 * where a row set depends on the order the rows are read in (LIMIT,
 * OFFSET, DISTINCT ON, window functions; an aggregate such as string_agg or
 * a float sum, whose value may be a key), on a sample (TABLESAMPLE) or on a
 * volatile function: then a share could miss a row or see it twice, so any
 * of these anywhere in the input keeps the plan serial.
 */
static bool
mr_input_varies_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	check_stack_depth();
	if (IsA(node, Query))
	{
		Query	   *q = (Query *) node;

		if (q->limitCount || q->limitOffset || q->hasDistinctOn ||
			q->hasWindowFuncs || q->hasAggs || q->groupingSets ||
			q->hasTargetSRFs || q->rowMarks || q->hasForUpdate)
			return true;
		return query_tree_walker(q, mr_input_varies_walker, context,
								 QTW_EXAMINE_RTES_BEFORE);
	}
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		return rte->tablesample != NULL;
	}
	if (IsA(node, Aggref) || IsA(node, WindowFunc))
		return true;
	return expression_tree_walker(node, mr_input_varies_walker, context);
}

/*
 * The checks that need no planning of the input: may a parallel path be
 * offered for this call?  "input" is the ordered input query (not planned
 * yet), whose target list gives the key types.
 */
bool
mr_scan_parallel_candidate(PlannerInfo *root, RelOptInfo *rel,
						   const MrScanParallelShape *shape, Query *input,
						   List *params)
{
	ListCell   *lc;
	int			i;

	if (!root->glob->parallelModeOK || max_parallel_workers_per_gather <= 0 ||
		rel->reloptkind != RELOPT_BASEREL || shape->npartition == 0 ||
		shape->levels || shape->input_clock || shape->has_subqueries ||
		input->sortClause == NIL ||
		mr_input_varies_walker((Node *) input, NULL) ||
		contain_volatile_functions((Node *) input))
		return false;
	for (i = 0; i < shape->npartition; i++)
	{
		TargetEntry *tle = list_nth_node(TargetEntry, input->targetList,
										 shape->partition_cols[i]);

		if (!mr_key_hashable(exprType((Node *) tle->expr)))
			return false;
	}
	foreach(lc, shape->analyses)
		if (max_parallel_hazard(lfirst_node(Query, lc)) != PROPARALLEL_SAFE)
			return false;
	if (!is_parallel_safe(root, (Node *) params) ||
		!is_parallel_safe(root, (Node *) rel->reltarget->exprs))
		return false;
	foreach(lc, rel->baserestrictinfo)
		if (!is_parallel_safe(root, (Node *) lfirst_node(RestrictInfo, lc)->clause))
			return false;
	return true;
}

/* the plan's parallel entry: shares, sort keys, hashed keys */
static List *
mr_scan_parallel_info(Query *input, const MrScanParallelShape *shape, int nshares)
{
	List	   *cols = NIL,
			   *ops = NIL,
			   *colls = NIL,
			   *nf = NIL,
			   *hcols = NIL,
			   *hcolls = NIL;
	ListCell   *lc;
	int			i;

	foreach(lc, input->sortClause)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		TargetEntry *tle = get_sortgroupclause_tle(sgc, input->targetList);

		cols = lappend_int(cols, tle->resno);
		ops = lappend_oid(ops, sgc->sortop);
		colls = lappend_oid(colls, exprCollation((Node *) tle->expr));
		nf = lappend_int(nf, sgc->nulls_first ? 1 : 0);
	}
	for (i = 0; i < shape->npartition; i++)
	{
		TargetEntry *tle = list_nth_node(TargetEntry, input->targetList,
										 shape->partition_cols[i]);

		hcols = lappend_int(hcols, shape->partition_cols[i]);
		hcolls = lappend_oid(hcolls, exprCollation((Node *) tle->expr));
	}
	return list_concat(list_make4(makeInteger(nshares), cols, ops, colls),
					   list_make3(nf, hcols, hcolls));
}

/*
 * Plan the input without its ORDER BY and add the partial path (see the
 * file comment).  "serial" is the serial node's path over the ordered
 * input, whose fields the partial path copies; "input" a copy of the
 * ordered input query, not planned yet (planning scribbles on it).
 */
void
mr_scan_parallel_add_path(PlannerInfo *root, RelOptInfo *rel,
						  const MrScanParallelShape *shape,
						  MrScanPath *serial, Query *input)
{
	List	   *info;
	PlannerInfo *subroot;
	RelOptInfo *final_rel;
	Path	   *upath;
	ListCell   *lc;
	MrScanPath *p;
	double		in_rows = serial->subpath->rows;
	int			width = serial->subpath->pathtarget->width;
	double		pages;
	int			workers;
	int			nshares;
	int			saved_workers;
	double		divisor;
	Cost		own_cost;
	Path		sort;

	/* as many workers as a table of the input's size would get */
	pages = ceil(in_rows * (width + MAXALIGN(SizeofHeapTupleHeader)) / BLCKSZ);
	workers = compute_parallel_worker(rel, pages, -1, max_parallel_workers_per_gather);
	nshares = workers;
	if (nshares == 1 && parallel_leader_participation)
		nshares = 2;			/* the leader and its one worker */
	if (workers <= 0 || nshares < 2)
		return;

	info = mr_scan_parallel_info(input, shape, nshares);
	input->sortClause = NIL;

	/*
	 * A participant runs the input whole, so the input must not gather
	 * workers of its own: planned with no workers per Gather, its paths are
	 * still marked parallel safe where they are, but no cheaper Gather path
	 * pushes them out of the path list.
	 */
	saved_workers = max_parallel_workers_per_gather;
	max_parallel_workers_per_gather = 0;
	PG_TRY();
	{
		subroot = subquery_planner(root->glob, input, root, false, 0.0);
	}
	PG_FINALLY();
	{
		max_parallel_workers_per_gather = saved_workers;
	}
	PG_END_TRY();
	final_rel = fetch_upper_rel(subroot, UPPERREL_FINAL, NULL);
	/* the cheapest that can run in a worker */
	upath = NULL;
	foreach(lc, final_rel->pathlist)
	{
		Path	   *cand = (Path *) lfirst(lc);

		if (cand->parallel_safe && cand->param_info == NULL &&
			(upath == NULL || cand->total_cost < upath->total_cost))
			upath = cand;
	}
	if (upath == NULL)
		return;

	p = (MrScanPath *) newNode(sizeof(MrScanPath), T_CustomPath);
	memcpy(p, serial, sizeof(MrScanPath));
	p->subroot = subroot;
	p->subpath = upath;
	p->parallel = info;
	p->cpath.path.pathkeys = NIL;
	p->cpath.path.parallel_aware = true;
	p->cpath.path.parallel_safe = true;
	p->cpath.path.parallel_workers = workers;

	/* rows per participant, as for any partial path */
	divisor = workers;
	if (parallel_leader_participation && 1.0 - 0.3 * workers > 0)
		divisor += 1.0 - 0.3 * workers;
	p->cpath.path.rows = clamp_row_est(rel->rows / divisor);

	/*
	 * The whole unordered input, a hash per row, a sort of one share, and a
	 * share of the serial node's own work (its cost above its input).
	 */
	own_cost = serial->cpath.path.total_cost - serial->subpath->total_cost;
	cost_sort(&sort, root, NIL, 0.0, clamp_row_est(in_rows / nshares), width,
			  0.0, work_mem, -1.0);
	p->cpath.path.startup_cost = upath->total_cost +
		in_rows * cpu_operator_cost * shape->npartition + sort.startup_cost;
	p->cpath.path.total_cost = p->cpath.path.startup_cost +
		(sort.total_cost - sort.startup_cost) + own_cost / nshares;

	/* the node runs, not the (parallel restricted) function */
	rel->consider_parallel = true;
	add_partial_path(rel, (Path *) p);
}

/* ---------- executor ---------- */

/*
 * Types whose equal values are identical Datums (by value, equality is
 * identity): their keys are hashed as bits, sparing a function call per
 * row; the hash only has to agree with the partition's equality.
 */
static bool
mr_par_equal_is_identical(Oid type)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case BOOLOID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return true;
		default:
			return false;
	}
}

MrParState *
mr_par_begin(List *info, PlanState *input, EState *estate)
{
	MrParState *ps = palloc0(sizeof(MrParState));
	List	   *cols = list_nth(info, MR_PAR_SORT_COLS);
	List	   *ops = list_nth(info, MR_PAR_SORT_OPS);
	List	   *colls = list_nth(info, MR_PAR_SORT_COLLS);
	List	   *nf = list_nth(info, MR_PAR_SORT_NULLS_FIRST);
	List	   *hcols = list_nth(info, MR_PAR_HASH_COLS);
	List	   *hcolls = list_nth(info, MR_PAR_HASH_COLLS);
	int			i;

	Assert(list_length(info) == MR_PAR_COUNT);
	ps->input = input;
	ps->nshares = intVal(list_nth(info, MR_PAR_NSHARES));
	ps->input_desc = ExecGetResultType(input);
	ps->nsort = list_length(cols);
	ps->sort_cols = palloc(sizeof(AttrNumber) * Max(ps->nsort, 1));
	ps->sort_ops = palloc(sizeof(Oid) * Max(ps->nsort, 1));
	ps->sort_colls = palloc(sizeof(Oid) * Max(ps->nsort, 1));
	ps->nulls_first = palloc(sizeof(bool) * Max(ps->nsort, 1));
	for (i = 0; i < ps->nsort; i++)
	{
		ps->sort_cols[i] = (AttrNumber) list_nth_int(cols, i);
		ps->sort_ops[i] = list_nth_oid(ops, i);
		ps->sort_colls[i] = list_nth_oid(colls, i);
		ps->nulls_first[i] = list_nth_int(nf, i) != 0;
	}
	ps->ssup = palloc0(sizeof(SortSupportData) * Max(ps->nsort, 1));
	ps->sort_byval = palloc(sizeof(bool) * Max(ps->nsort, 1));
	ps->sort_typlen = palloc(sizeof(int16) * Max(ps->nsort, 1));
	ps->prev_vals = palloc0(sizeof(Datum) * Max(ps->nsort, 1));
	ps->prev_nulls = palloc0(sizeof(bool) * Max(ps->nsort, 1));
	ps->cur_vals = palloc0(sizeof(Datum) * Max(ps->nsort, 1));
	ps->cur_nulls = palloc0(sizeof(bool) * Max(ps->nsort, 1));
	for (i = 0; i < ps->nsort; i++)
	{
		SortSupport ssup = &ps->ssup[i];
		Form_pg_attribute att;

		if (ps->sort_cols[i] < 1 || ps->sort_cols[i] > ps->input_desc->natts)
			elog(ERROR, "match_recognize: sort column %d out of range",
				 (int) ps->sort_cols[i]);
		att = TupleDescAttr(ps->input_desc, ps->sort_cols[i] - 1);
		ssup->ssup_cxt = CurrentMemoryContext;
		ssup->ssup_collation = ps->sort_colls[i];
		ssup->ssup_nulls_first = ps->nulls_first[i];
		ssup->ssup_attno = ps->sort_cols[i];
		ssup->abbreviate = false;
		PrepareSortSupportFromOrderingOp(ps->sort_ops[i], ssup);
		ps->sort_byval[i] = att->attbyval;
		ps->sort_typlen[i] = att->attlen;
		if (!att->attbyval)
			ps->sort_byref = true;
	}
	ps->nhash = list_length(hcols);
	ps->hash_cols = palloc(sizeof(int) * Max(ps->nhash, 1));
	ps->hash_colls = palloc(sizeof(Oid) * Max(ps->nhash, 1));
	ps->hash_fns = palloc0(sizeof(FmgrInfo) * Max(ps->nhash, 1));
	ps->hash_bits = palloc0(sizeof(bool) * Max(ps->nhash, 1));
	for (i = 0; i < ps->nhash; i++)
	{
		int			col = list_nth_int(hcols, i);
		Oid			type;
		TypeCacheEntry *tce;

		if (col < 0 || col >= ps->input_desc->natts)
			elog(ERROR, "match_recognize: hashed column %d out of range", col);
		type = TupleDescAttr(ps->input_desc, col)->atttypid;
		tce = lookup_type_cache(type, TYPECACHE_HASH_PROC_FINFO);
		if (!OidIsValid(tce->hash_proc_finfo.fn_oid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("could not identify a hash function for type %s",
							format_type_be(type))));
		ps->hash_cols[i] = col;
		ps->hash_colls[i] = list_nth_oid(hcolls, i);
		fmgr_info_copy(&ps->hash_fns[i], &tce->hash_proc_finfo, CurrentMemoryContext);
		ps->hash_bits[i] = mr_par_equal_is_identical(type);
		if (!ps->hash_bits[i])
			ps->hash_calls = true;
	}
	ps->sorted = MakeSingleTupleTableSlot(ps->input_desc, &TTSOpsMinimalTuple);
	for (i = 0; i < MR_PAR_MAX_RUNS; i++)
		ps->heads[i] = MakeSingleTupleTableSlot(ps->input_desc, &TTSOpsMinimalTuple);
	ps->last_run = -1;
	ps->parcxt = AllocSetContextCreate(estate->es_query_cxt, "match_recognize share",
									   ALLOCSET_DEFAULT_SIZES);
	ps->hashcxt = AllocSetContextCreate(estate->es_query_cxt, "match_recognize share hash",
										ALLOCSET_SMALL_SIZES);
	ps->prevcxt = AllocSetContextCreate(estate->es_query_cxt, "match_recognize share order",
										ALLOCSET_SMALL_SIZES);
	ps->input_fresh = true;
	return ps;
}

/* the share of the row's PARTITION BY keys */
static inline uint32
mr_par_share_of(MrParState *ps, TupleTableSlot *slot)
{
	uint32		h = 0;
	int			i;
	MemoryContext old = CurrentMemoryContext;

	if (ps->hash_calls)
		MemoryContextSwitchTo(ps->hashcxt);
	for (i = 0; i < ps->nhash; i++)
	{
		bool		isnull;
		Datum		d = slot_getattr(slot, ps->hash_cols[i] + 1, &isnull);
		uint32		k = 0;

		if (isnull)
			k = 0;
		else if (ps->hash_bits[i])
			k = murmurhash32((uint32) d ^ (uint32) ((uint64) d >> 32));
		else
			k = DatumGetUInt32(FunctionCall1Coll(&ps->hash_fns[i], ps->hash_colls[i], d));
		h = hash_combine(h, k);
	}
	if (ps->hash_calls)
	{
		MemoryContextSwitchTo(old);
		MemoryContextReset(ps->hashcxt);
	}
	/* h * K / 2^32: the share without a division per row */
	return (uint32) (((uint64) h * (uint32) ps->nshares) >> 32);
}

/* the next share to match: its number, -1 for all rows, or -2: none left */
static int
mr_par_claim(MrParState *ps)
{
	uint32		s;

	if (ps->shared == NULL)
	{
		if (ps->local_done)
			return -2;
		ps->local_done = true;
		return -1;
	}
	s = pg_atomic_fetch_add_u32(&ps->shared->next_share, 1);
	if (s >= (uint32) ps->nshares)
		return -2;
	return (int) s;
}

/*
 * Does the row come before the last row kept, in the sort's order?  Equal
 * keys do not (the sort need not keep ties in any order either).  Either
 * way the row's keys become the last row kept's (the caller keeps it):
 * each key is fetched once.
 */
static inline bool
mr_par_check_order(MrParState *ps, TupleTableSlot *slot)
{
	bool		before = false;
	bool		decided = !ps->have_prev;
	int			i;

	for (i = 0; i < ps->nsort; i++)
	{
		ps->cur_vals[i] = slot_getattr(slot, ps->sort_cols[i], &ps->cur_nulls[i]);
		if (!decided)
		{
			int			c = ApplySortComparator(ps->prev_vals[i], ps->prev_nulls[i],
												ps->cur_vals[i], ps->cur_nulls[i],
												&ps->ssup[i]);

			if (c != 0)
			{
				before = c > 0;
				decided = true;
			}
		}
	}
	if (ps->sort_byref)
	{
		MemoryContext old;

		MemoryContextReset(ps->prevcxt);
		old = MemoryContextSwitchTo(ps->prevcxt);
		for (i = 0; i < ps->nsort; i++)
		{
			ps->prev_nulls[i] = ps->cur_nulls[i];
			ps->prev_vals[i] = ps->sort_byval[i] || ps->cur_nulls[i] ? ps->cur_vals[i] :
				datumCopy(ps->cur_vals[i], false, ps->sort_typlen[i]);
		}
		MemoryContextSwitchTo(old);
	}
	else
	{
		memcpy(ps->prev_vals, ps->cur_vals, sizeof(Datum) * ps->nsort);
		memcpy(ps->prev_nulls, ps->cur_nulls, sizeof(bool) * ps->nsort);
	}
	ps->have_prev = true;
	return before;
}

/* the sort's order of the rows in two slots */
static int
mr_par_compare_slots(MrParState *ps, TupleTableSlot *a, TupleTableSlot *b)
{
	int			i;

	for (i = 0; i < ps->nsort; i++)
	{
		bool		anull,
					bnull;
		Datum		ad = slot_getattr(a, ps->sort_cols[i], &anull);
		Datum		bd = slot_getattr(b, ps->sort_cols[i], &bnull);
		int			c = ApplySortComparator(ad, anull, bd, bnull, &ps->ssup[i]);

		if (c != 0)
			return c;
	}
	return 0;
}

/* a new ordered run, its store in parcxt */
static void
mr_par_new_run(MrParState *ps)
{
	MemoryContext old = MemoryContextSwitchTo(ps->parcxt);

	/* the runs together stay within work_mem (at least 64kB: 16kB each) */
	ps->runs[ps->nruns++] = tuplestore_begin_heap(false, false,
												  work_mem / MR_PAR_MAX_RUNS);
	MemoryContextSwitchTo(old);
}

static void
mr_par_end_runs(MrParState *ps)
{
	int			i;

	for (i = 0; i < ps->nruns; i++)
	{
		ExecClearTuple(ps->heads[i]);
		tuplestore_end(ps->runs[i]);
		ps->runs[i] = NULL;
		ps->head_valid[i] = false;
	}
	ps->nruns = 0;
	ps->last_run = -1;
}

/*
 * Too many runs: the rows stored so far go to a sort, and so will the rest
 * of the share.
 */
static void
mr_par_runs_to_sort(MrParState *ps)
{
	MemoryContext old = MemoryContextSwitchTo(ps->parcxt);
	int			i;

	ps->sort = tuplesort_begin_heap(ps->input_desc, ps->nsort, ps->sort_cols,
									ps->sort_ops, ps->sort_colls, ps->nulls_first,
									work_mem, NULL, TUPLESORT_NONE);
	MemoryContextSwitchTo(old);
	for (i = 0; i < ps->nruns; i++)
	{
		for (;;)
		{
			CHECK_FOR_INTERRUPTS();
			if (!tuplestore_gettupleslot(ps->runs[i], true, false, ps->sorted))
				break;
			tuplesort_puttupleslot(ps->sort, ps->sorted);
		}
		ExecClearTuple(ps->sorted);
	}
	mr_par_end_runs(ps);
}

/*
 * Read the whole input, keeping the rows of the share (-1: all rows) for
 * reading back in the sort's order.  Rows often arrive in that order
 * already (a table loaded in it, an index scan), or in a few ascending runs
 * (a synchronized seq scan starts in the middle of the table and wraps
 * around): each run is only stored, in a tuplestore (the runs within
 * work_mem together, spilling beyond it), and the runs are merged as they
 * are read back.  That spares the sort (its comparisons, its check for
 * sorted input, and beyond work_mem the merge of its runs) at the cost of a
 * comparison with the last row kept, and one per row to merge the runs.
 * The row that would start run MR_PAR_MAX_RUNS + 1 moves the rows stored so
 * far into a tuplesort, which takes the rest.
 */
static void
mr_par_load_share(MrParState *ps, int share)
{
	MemoryContext old;
	int			i;

	if (!ps->input_fresh)
		ExecReScan(ps->input);
	ps->input_fresh = false;
	MemoryContextReset(ps->parcxt);
	MemoryContextReset(ps->prevcxt);
	ps->have_prev = false;
	mr_par_new_run(ps);
	for (;;)
	{
		TupleTableSlot *in;

		CHECK_FOR_INTERRUPTS();
		/* the input runs in the caller's context, as without a share */
		in = ExecProcNode(ps->input);
		if (TupIsNull(in))
			break;
		if (share >= 0 && mr_par_share_of(ps, in) != (uint32) share)
			continue;
		if (ps->nruns > 0)
		{
			if (mr_par_check_order(ps, in))
			{
				if (ps->nruns < MR_PAR_MAX_RUNS)
					mr_par_new_run(ps);
				else
					mr_par_runs_to_sort(ps);
			}
			if (ps->nruns > 0)
			{
				tuplestore_puttupleslot(ps->runs[ps->nruns - 1], in);
				continue;
			}
		}
		tuplesort_puttupleslot(ps->sort, in);
	}
	if (ps->sort)
	{
		old = MemoryContextSwitchTo(ps->parcxt);
		tuplesort_performsort(ps->sort);
		MemoryContextSwitchTo(old);
	}
	for (i = 0; i < ps->nruns; i++)
		ps->head_valid[i] = tuplestore_gettupleslot(ps->runs[i], true, false,
													ps->heads[i]);
	ps->last_run = -1;
	ps->claimed++;
}

/* the next row of the merged runs, or NULL */
static TupleTableSlot *
mr_par_next_of_runs(MrParState *ps)
{
	int			best = -1;
	int			i;

	if (ps->last_run >= 0)
		ps->head_valid[ps->last_run] =
			tuplestore_gettupleslot(ps->runs[ps->last_run], true, false,
									ps->heads[ps->last_run]);
	for (i = 0; i < ps->nruns; i++)
	{
		if (!ps->head_valid[i])
			continue;
		/* the earlier run on a tie */
		if (best < 0 || mr_par_compare_slots(ps, ps->heads[best], ps->heads[i]) > 0)
			best = i;
	}
	ps->last_run = best;
	return best < 0 ? NULL : ps->heads[best];
}

static void
mr_par_end_sort(MrParState *ps)
{
	ExecClearTuple(ps->sorted);
	if (ps->sort)
	{
		tuplesort_end(ps->sort);
		ps->sort = NULL;
	}
	mr_par_end_runs(ps);
}

/* the next input row for the node: the next sorted row of a claimed share */
TupleTableSlot *
mr_par_next(MrParState *ps)
{
	for (;;)
	{
		int			share;

		if (ps->nruns > 0)
		{
			TupleTableSlot *row = mr_par_next_of_runs(ps);

			if (row)
				return row;
			mr_par_end_sort(ps);
		}
		else if (ps->sort)
		{
			if (tuplesort_gettupleslot(ps->sort, true, false, ps->sorted, NULL))
				return ps->sorted;
			mr_par_end_sort(ps);
		}
		if (ps->done)
			return NULL;
		share = mr_par_claim(ps);
		if (share == -2)
		{
			ps->done = true;
			return NULL;
		}
		mr_par_load_share(ps, share);
	}
}

/* the node is rescanned (the caller rescans the input) */
void
mr_par_rescan(MrParState *ps)
{
	mr_par_end_sort(ps);
	MemoryContextReset(ps->parcxt);
	ps->local_done = false;
	ps->done = false;
	ps->input_fresh = true;
}

void
mr_par_end(MrParState *ps)
{
	int			i;

	mr_par_end_sort(ps);
	ExecDropSingleTupleTableSlot(ps->sorted);
	for (i = 0; i < MR_PAR_MAX_RUNS; i++)
		ExecDropSingleTupleTableSlot(ps->heads[i]);
	MemoryContextDelete(ps->parcxt);
	MemoryContextDelete(ps->hashcxt);
	MemoryContextDelete(ps->prevcxt);
}

Size
mr_par_estimate_dsm(MrParState *ps)
{
	return sizeof(MrParShared);
}

void
mr_par_initialize_dsm(MrParState *ps, void *coordinate)
{
	ps->shared = (MrParShared *) coordinate;
	pg_atomic_init_u32(&ps->shared->next_share, 0);
}

void
mr_par_reinitialize_dsm(MrParState *ps, void *coordinate)
{
	pg_atomic_write_u32(&((MrParShared *) coordinate)->next_share, 0);
}

void
mr_par_initialize_worker(MrParState *ps, void *coordinate)
{
	ps->shared = (MrParShared *) coordinate;
}

int
mr_par_nshares(const MrParState *ps)
{
	return ps->nshares;
}

int
mr_par_claimed(const MrParState *ps)
{
	return ps->claimed;
}

/*-------------------------------------------------------------------------
 * mr_scan_parallel.c
 *	  The MatchRecognize node under Gather: each participant matches whole
 *	  partitions.  This file: the planner side, the hash share executor
 *	  (the fallback) and the entry points that dispatch to the bucket
 *	  executor (mr_scan_parallel_bucket.c) or to the share executor.
 *
 * Partitions are matched independently, so the work splits by partition:
 * the PARTITION BY keys of every input row are hashed
 * (mr_scan_parallel_keys.c: each key type's hash function under the
 * column's collation, NULL keys alike), and every row of a partition goes
 * to the same participant.  Two executors:
 *
 *	- buckets (mr_scan_parallel_bucket.c; chosen when the input query has a
 *	  partial plan, e.g. a Parallel Seq Scan): the participants read the
 *	  input once, together, writing each row to one of B buckets
 *	  (SharedTuplestores) by its hash; a Barrier separates that from the
 *	  match phase, where they claim buckets from an atomic counter, sort each
 *	  in memory and match it.  B is a power of 2 chosen here from the
 *	  planner's row and width estimate so that a bucket fits work_mem a few
 *	  times over (mr_par_nbuckets).  Each row is read once and every sort is
 *	  small: the reason for this executor, since external sorts of half the
 *	  rows cost far more than half of the serial sort.
 *	- hash shares (below; when the input has no partial plan, e.g. a table
 *	  with parallel_workers = 0, a VALUES list): K shares, K = the planned
 *	  workers (2 for one worker with the leader participating).  A
 *	  participant claims a share from an atomic counter in the node's DSM,
 *	  reads the whole input, keeps the rows of its share, sorts them and
 *	  feeds them to its runtime; then claims the next share, until none is
 *	  left.
 *
 * Either way every partition is matched wholly by exactly one participant,
 * whatever number of workers actually launched (the leader takes the
 * buckets or shares nobody claimed; with no DSM at all, e.g. when the
 * executor runs the plan without parallel mode, one pass with no filter and
 * one sort do everything, the partial input plan then running whole).  The
 * runtime sees the buckets or shares one after the other; the first row of
 * one always starts a new partition (they have no keys in common), and
 * MATCH_NUMBER etc. are per partition, so the rows are those of the serial
 * plan.  Their order is not: the path claims no pathkeys, and the planner
 * sorts above Gather when the query asks for an order.
 *
 * Why the node sorts its rows itself instead of a Sort in the input plan
 * with a filter "hash(keys) % K = $share" below it (the obvious design):
 * the filter would need an executor parameter set by the node, and a
 * PARAM_EXEC in the input makes the planner mark the input parallel
 * restricted, so the input would not be sent to the workers; it would also
 * need a SQL-callable hash function in the catalog.  Here the input is
 * planned a second time without its ORDER BY (so the planner picks its best
 * unordered plan, which must be parallel safe), the filter is a few lines
 * of C, and the sort is PostgreSQL's tuplesort with the ORDER BY's
 * operators, collations and NULLS order (what the planner's Sort would do,
 * within work_mem and spilling beyond it).  The cost of hash shares: each
 * claimed share reads the whole input once, so the input is read K times in
 * all (it is rescanned for every further share a participant claims); the
 * sort, which dominates for large inputs, and the matching are split K
 * ways.  The buckets avoid both the repeated reads and the big sorts.
 *
 * Hash shares only: rows that already arrive in the sort's order, or in a few ascending runs,
 * are not sorted (mr_par_load_share): a table loaded in key order is common
 * (a time series appended to), and a synchronized seq scan of it starts in
 * the middle and wraps around, giving two runs.  Each run of the share goes
 * to a tuplestore as it comes (one comparison with the last row kept), and
 * the runs are merged as they are read back; the row that would start a
 * fifth run moves what was stored into a tuplesort, which takes the rest.
 * The planner still costs a sort (it cannot know the rows' order).
 *
 * Hash shares: why K = workers and not workers + 1 (the leader is a participant too):
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
 * (generate_useful_gather_paths).  The input is planned once more without
 * its ORDER BY and with the session's max_parallel_workers_per_gather: its
 * final rel keeps partial paths (the planner does at query level > 1), and
 * the cheapest becomes the bucket path's input (the participants' workers
 * are its workers).  Without one the input is planned again with no
 * workers (so that no Gather path pushes the parallel safe paths out of
 * the list) for the share path.  Costs, bucket path: the partial input, a
 * hash, a write and a read back per row of a participant, the bucket sorts
 * and the serial node's own matching cost, the last two divided among the
 * participants.  Share path: the unordered input in full, a hash per input
 * row, a sort of 1/K of the rows, 1/K of the serial node's own matching
 * cost.  parallel_setup_cost and parallel_tuple_cost are Gather's, so the
 * plan wins only for large inputs.
 *
 * Plan: CustomScan.custom_private[MR_SCAN_PRIVATE_PARALLEL] is NIL for the
 * serial node, else the List built by mr_scan_parallel_info (positions in
 * MrParInfoIndex): the number of shares, the sort keys (input columns,
 * operators, collations, NULLS FIRST), the hashed columns with their
 * collations, and the number of buckets (0: hash shares).  The share path's
 * input is the unordered plan, a subplan like the serial node's; the bucket
 * path's is the partial plan, a child of the node (mr_scan_plan.c).
 *
 * Executor side (MrParState): mr_par_next() replaces ExecProcNode() of the
 * input for the node; with buckets it hands over to the bucket executor
 * once a DSM exists.  For hash shares the DSM holds only the share
 * counter, reset when Gather rescans (ReInitializeDSM).  A rescan of the node itself (the
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
#include "mr_scan_parallel_int.h"


/*
 * Rows that arrive in at most this many ascending runs are stored and merged
 * instead of sorted (see mr_par_load_share).
 */
#define MR_PAR_MAX_RUNS 4

/* at most this many buckets (see mr_par_nbuckets) */
#define MR_PAR_MAX_BUCKETS 256

typedef struct MrParShared
{
	pg_atomic_uint32 next_share;
} MrParShared;

struct MrParState
{
	PlanState  *input;
	int			nshares;
	MrParKeys	keys;			/* the sort and the key hash */
	MrBucketState *bk;			/* the bucket executor, or NULL: shares */
	bool		bk_shut;		/* its DSM was released (ShutdownCustomScan) */

	/* the share's sort */
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
mr_scan_parallel_info(Query *input, const MrScanParallelShape *shape, int nshares,
					  int nbuckets)
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
					   list_make4(nf, hcols, hcolls, makeInteger(nbuckets)));
}

/*
 * Plan the unordered input query; its own Gathers get at most max_workers
 * workers (0: none, so that no Gather path pushes the parallel safe paths
 * out of the path list).
 */
static PlannerInfo *
mr_plan_unordered(PlannerInfo *root, Query *input, int max_workers)
{
	PlannerInfo *subroot;
	int			saved_workers = max_parallel_workers_per_gather;

	input->sortClause = NIL;
	max_parallel_workers_per_gather = max_workers;
	PG_TRY();
	{
		subroot = subquery_planner(root->glob, input, root, false, 0.0);
	}
	PG_FINALLY();
	{
		max_parallel_workers_per_gather = saved_workers;
	}
	PG_END_TRY();
	return subroot;
}

/* rows per participant of a partial path with this many workers */
static double
mr_par_divisor(int workers)
{
	double		divisor = workers;

	if (parallel_leader_participation && 1.0 - 0.3 * workers > 0)
		divisor += 1.0 - 0.3 * workers;
	return divisor;
}

/* the partial path, from the serial one (see the file comment) */
static MrScanPath *
mr_par_make_path(RelOptInfo *rel, MrScanPath *serial, PlannerInfo *subroot,
				 Path *input, List *info, int workers)
{
	MrScanPath *p = (MrScanPath *) newNode(sizeof(MrScanPath), T_CustomPath);

	memcpy(p, serial, sizeof(MrScanPath));
	p->subroot = subroot;
	p->subpath = input;
	p->parallel = info;
	p->cpath.path.pathkeys = NIL;
	p->cpath.path.parallel_aware = true;
	p->cpath.path.parallel_safe = true;
	p->cpath.path.parallel_workers = workers;
	p->cpath.path.rows = clamp_row_est(rel->rows / mr_par_divisor(workers));
	return p;
}

/*
 * The number of buckets: a power of 2 such that the estimated rows of one
 * bucket, as a tuplesort holds them (the tuple, its SortTuple and
 * allocation overhead), take at most a quarter of work_mem, and at least 4
 * per participant (so that a participant that ends late is not left with a
 * big last bucket).  At most MR_PAR_MAX_BUCKETS: each participant holds a
 * file and about 40 kB of buffers per bucket while it writes; beyond that
 * a bucket's sort spills, which still works.
 */
static int
mr_par_nbuckets(double rows, int width, int participants)
{
	double		per_row = MAXALIGN(width) + MAXALIGN(SizeofMinimalTupleHeader) + 32;
	double		want = Max(rows * per_row / (work_mem * 1024.0 / 4), participants * 4.0);
	int			b = 1;

	while (b < want && b < MR_PAR_MAX_BUCKETS)
		b <<= 1;
	return b;
}

/*
 * The bucket path over a partial input path: the input in parts, a hash
 * and a write and read back per row, the sorts of the buckets and the
 * matching, the last two shared among the participants.
 */
static void
mr_par_add_bucket_path(PlannerInfo *root, RelOptInfo *rel,
					   const MrScanParallelShape *shape, MrScanPath *serial,
					   Query *ordered, PlannerInfo *subroot, Path *ppath)
{
	double		in_rows = serial->subpath->rows;
	int			width = ppath->pathtarget->width;
	int			workers = ppath->parallel_workers;
	double		divisor = mr_par_divisor(workers);
	double		my_rows = in_rows / divisor;
	int			nbuckets = mr_par_nbuckets(in_rows, width, workers + 1);
	double		pages = ceil(my_rows * (width + MAXALIGN(SizeofMinimalTupleHeader)) / BLCKSZ);
	Cost		own_cost = serial->cpath.path.total_cost - serial->subpath->total_cost;
	Path		sort;
	MrScanPath *p;

	p = mr_par_make_path(rel, serial, subroot, ppath,
						 mr_scan_parallel_info(ordered, shape, 0, nbuckets), workers);
	p->input_in_tree = true;
	cost_sort(&sort, root, NIL, 0.0, clamp_row_est(in_rows / nbuckets), width,
			  0.0, work_mem, -1.0);
	p->cpath.path.startup_cost = ppath->total_cost +
		my_rows * (cpu_operator_cost * shape->npartition + cpu_tuple_cost) +
		2 * pages * seq_page_cost + sort.startup_cost;
	p->cpath.path.total_cost = p->cpath.path.startup_cost +
		sort.total_cost * nbuckets / divisor - sort.startup_cost + own_cost / divisor;
	add_partial_path(rel, (Path *) p);
}

/*
 * The hash share path (the fallback, see the file comment): every share
 * reads the whole unordered input, planned without workers of its own.
 */
static void
mr_par_add_share_path(PlannerInfo *root, RelOptInfo *rel,
					  const MrScanParallelShape *shape, MrScanPath *serial,
					  Query *input)
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

	info = mr_scan_parallel_info(input, shape, nshares, 0);
	subroot = mr_plan_unordered(root, input, 0);
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

	p = mr_par_make_path(rel, serial, subroot, upath, info, workers);

	/*
	 * The whole unordered input, a hash per input row, a sort of one share, and a
	 * share of the serial node's own work (its cost above its input).
	 */
	own_cost = serial->cpath.path.total_cost - serial->subpath->total_cost;
	cost_sort(&sort, root, NIL, 0.0, clamp_row_est(in_rows / nshares), width,
			  0.0, work_mem, -1.0);
	p->cpath.path.startup_cost = upath->total_cost +
		in_rows * cpu_operator_cost * shape->npartition + sort.startup_cost;
	p->cpath.path.total_cost = p->cpath.path.startup_cost +
		(sort.total_cost - sort.startup_cost) + own_cost / nshares;
	add_partial_path(rel, (Path *) p);
}

/*
 * Add the partial path (see the file comment): over the input's cheapest
 * partial path, with buckets, where the planner has one, else with hash
 * shares.  "serial" is the serial node's path over the ordered input, whose
 * fields the partial path copies; "input" a copy of the ordered input
 * query, not planned yet (planning scribbles on it).
 */
void
mr_scan_parallel_add_path(PlannerInfo *root, RelOptInfo *rel,
						  const MrScanParallelShape *shape,
						  MrScanPath *serial, Query *input)
{
	Query	   *ordered = copyObject(input);
	PlannerInfo *subroot;
	RelOptInfo *final_rel;
	Path	   *ppath = NULL;
	ListCell   *lc;

	/* the node runs, not the (parallel restricted) function */
	rel->consider_parallel = true;

	/* partial paths of the final rel: the planner keeps them at level > 1 */
	subroot = mr_plan_unordered(root, input, max_parallel_workers_per_gather);
	final_rel = fetch_upper_rel(subroot, UPPERREL_FINAL, NULL);
	foreach(lc, final_rel->partial_pathlist)
	{
		Path	   *cand = (Path *) lfirst(lc);

		if (cand->parallel_safe && cand->param_info == NULL &&
			cand->parallel_workers > 0 &&
			(ppath == NULL || cand->total_cost < ppath->total_cost))
			ppath = cand;
	}
	if (ppath != NULL)
		mr_par_add_bucket_path(root, rel, shape, serial, ordered, subroot, ppath);
	else
		mr_par_add_share_path(root, rel, shape, serial, ordered);
}

/* ---------- executor ---------- */

MrParState *
mr_par_begin(List *info, PlanState *input, EState *estate)
{
	MrParState *ps = palloc0(sizeof(MrParState));
	int			nbuckets = intVal(list_nth(info, MR_PAR_NBUCKETS));
	int			i;

	ps->input = input;
	ps->nshares = intVal(list_nth(info, MR_PAR_NSHARES));
	mr_par_keys_init(&ps->keys, info, ExecGetResultType(input), estate->es_query_cxt);
	if (nbuckets > 0)
		ps->bk = mr_bk_begin(&ps->keys, input, nbuckets, estate);
	ps->ssup = palloc0(sizeof(SortSupportData) * Max(ps->keys.nsort, 1));
	ps->sort_byval = palloc(sizeof(bool) * Max(ps->keys.nsort, 1));
	ps->sort_typlen = palloc(sizeof(int16) * Max(ps->keys.nsort, 1));
	ps->prev_vals = palloc0(sizeof(Datum) * Max(ps->keys.nsort, 1));
	ps->prev_nulls = palloc0(sizeof(bool) * Max(ps->keys.nsort, 1));
	ps->cur_vals = palloc0(sizeof(Datum) * Max(ps->keys.nsort, 1));
	ps->cur_nulls = palloc0(sizeof(bool) * Max(ps->keys.nsort, 1));
	for (i = 0; i < ps->keys.nsort; i++)
	{
		SortSupport ssup = &ps->ssup[i];
		Form_pg_attribute att;

		att = TupleDescAttr(ps->keys.input_desc, ps->keys.sort_cols[i] - 1);
		ssup->ssup_cxt = CurrentMemoryContext;
		ssup->ssup_collation = ps->keys.sort_colls[i];
		ssup->ssup_nulls_first = ps->keys.nulls_first[i];
		ssup->ssup_attno = ps->keys.sort_cols[i];
		ssup->abbreviate = false;
		PrepareSortSupportFromOrderingOp(ps->keys.sort_ops[i], ssup);
		ps->sort_byval[i] = att->attbyval;
		ps->sort_typlen[i] = att->attlen;
		if (!att->attbyval)
			ps->sort_byref = true;
	}
	ps->sorted = MakeSingleTupleTableSlot(ps->keys.input_desc, &TTSOpsMinimalTuple);
	for (i = 0; i < MR_PAR_MAX_RUNS; i++)
		ps->heads[i] = MakeSingleTupleTableSlot(ps->keys.input_desc, &TTSOpsMinimalTuple);
	ps->last_run = -1;
	ps->parcxt = AllocSetContextCreate(estate->es_query_cxt, "match_recognize share",
									   ALLOCSET_DEFAULT_SIZES);
	ps->prevcxt = AllocSetContextCreate(estate->es_query_cxt, "match_recognize share order",
										ALLOCSET_SMALL_SIZES);
	ps->input_fresh = true;
	return ps;
}

/* the share of the row's PARTITION BY keys */
static inline uint32
mr_par_share_of(MrParState *ps, TupleTableSlot *slot)
{
	return mr_par_part_of(mr_par_keys_hash(&ps->keys, slot), (uint32) ps->nshares);
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

	for (i = 0; i < ps->keys.nsort; i++)
	{
		ps->cur_vals[i] = slot_getattr(slot, ps->keys.sort_cols[i], &ps->cur_nulls[i]);
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
		for (i = 0; i < ps->keys.nsort; i++)
		{
			ps->prev_nulls[i] = ps->cur_nulls[i];
			ps->prev_vals[i] = ps->sort_byval[i] || ps->cur_nulls[i] ? ps->cur_vals[i] :
				datumCopy(ps->cur_vals[i], false, ps->sort_typlen[i]);
		}
		MemoryContextSwitchTo(old);
	}
	else
	{
		memcpy(ps->prev_vals, ps->cur_vals, sizeof(Datum) * ps->keys.nsort);
		memcpy(ps->prev_nulls, ps->cur_nulls, sizeof(bool) * ps->keys.nsort);
	}
	ps->have_prev = true;
	return before;
}

/* the sort's order of the rows in two slots */
static int
mr_par_compare_slots(MrParState *ps, TupleTableSlot *a, TupleTableSlot *b)
{
	int			i;

	for (i = 0; i < ps->keys.nsort; i++)
	{
		bool		anull,
					bnull;
		Datum		ad = slot_getattr(a, ps->keys.sort_cols[i], &anull);
		Datum		bd = slot_getattr(b, ps->keys.sort_cols[i], &bnull);
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

	ps->sort = tuplesort_begin_heap(ps->keys.input_desc, ps->keys.nsort, ps->keys.sort_cols,
									ps->keys.sort_ops, ps->keys.sort_colls, ps->keys.nulls_first,
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

/*
 * The next input row for the node: the next sorted row of a claimed bucket
 * (mr_scan_parallel_bucket.c) or share.  Without a DSM, one pass over the
 * whole input, sorted, whichever executor the plan asked for.
 */
TupleTableSlot *
mr_par_next(MrParState *ps)
{
	if (ps->bk && mr_bk_has_dsm(ps->bk))
		return mr_bk_next(ps->bk);
	if (ps->bk_shut)
		return NULL;			/* the DSM is gone: nothing more, until a rescan */
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
	if (ps->bk)
		mr_bk_rescan(ps->bk);
	ps->bk_shut = false;
	mr_par_end_sort(ps);
	MemoryContextReset(ps->parcxt);
	ps->local_done = false;
	ps->done = false;
	ps->input_fresh = true;
}

/* Gather is about to destroy the DSM */
void
mr_par_shutdown(MrParState *ps)
{
	if (ps->bk && mr_bk_has_dsm(ps->bk))
	{
		mr_bk_shutdown(ps->bk);
		ps->bk_shut = true;
	}
}

void
mr_par_end(MrParState *ps)
{
	int			i;

	if (ps->bk)
		mr_bk_end(ps->bk);
	mr_par_end_sort(ps);
	ExecDropSingleTupleTableSlot(ps->sorted);
	for (i = 0; i < MR_PAR_MAX_RUNS; i++)
		ExecDropSingleTupleTableSlot(ps->heads[i]);
	MemoryContextDelete(ps->parcxt);
	MemoryContextDelete(ps->prevcxt);
	mr_par_keys_end(&ps->keys);
}

Size
mr_par_estimate_dsm(MrParState *ps, ParallelContext *pcxt)
{
	if (ps->bk)
		return mr_bk_estimate_dsm(ps->bk, pcxt);
	return sizeof(MrParShared);
}

void
mr_par_initialize_dsm(MrParState *ps, ParallelContext *pcxt, void *coordinate)
{
	if (ps->bk)
	{
		mr_bk_initialize_dsm(ps->bk, pcxt, coordinate);
		ps->bk_shut = false;
		return;
	}
	ps->shared = (MrParShared *) coordinate;
	pg_atomic_init_u32(&ps->shared->next_share, 0);
}

void
mr_par_reinitialize_dsm(MrParState *ps, ParallelContext *pcxt, void *coordinate)
{
	if (ps->bk)
	{
		mr_bk_reinitialize_dsm(ps->bk, pcxt, coordinate);
		return;
	}
	pg_atomic_write_u32(&((MrParShared *) coordinate)->next_share, 0);
}

void
mr_par_initialize_worker(MrParState *ps, void *coordinate)
{
	if (ps->bk)
	{
		mr_bk_initialize_worker(ps->bk, coordinate);
		return;
	}
	ps->shared = (MrParShared *) coordinate;
}

/*
 * EXPLAIN: how the partitions are shared out and, with ANALYZE, who did
 * what (the node's other counters are this process's only)
 */
void
mr_par_explain(MrParState *ps, ExplainState *es)
{
	if (ps->bk)
	{
		ExplainPropertyText("Parallel", "buckets by hash of PARTITION BY keys", es);
		mr_bk_explain(ps->bk, es);
		return;
	}
	ExplainPropertyText("Parallel",
						psprintf("hash share of PARTITION BY keys (%d shares)",
								 ps->nshares), es);
	if (es->analyze)
		ExplainPropertyInteger("Shares Matched Here", NULL, ps->claimed, es);
}

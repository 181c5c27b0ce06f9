/*-------------------------------------------------------------------------
 * mr_scan.h
 *	  Custom scan node "MatchRecognize": runs a match_recognize('<constant
 *	  text>') call in FROM as a plan node whose child is the planned,
 *	  ordered input query, instead of the set-returning function (which reads
 *	  its input through SPI and materializes all of its output).
 *
 * The node is split like TimescaleDB's chunk_append:
 *  - mr_scan_path.c  the set_rel_pathlist hook that recognises the call,
 *                    plans the input and adds the CustomPath;
 *  - mr_scan_plan.c  CustomPath -> CustomScan (the input plan becomes a
 *                    subplan of the same PlannedStmt);
 *  - mr_scan_exec.c  execution and EXPLAIN;
 *  - mr_scan_parallel*.c  the partial path and its executor side: whole
 *                    partitions per participant under Gather, by buckets
 *                    (or shares) of the PARTITION BY keys' hash.
 *
 * Two calls become the node:
 *  - match_recognize('<constant text>' [, params ...]): the clause is bound
 *    (its names resolved) when the statement is planned;
 *  - match_recognize_bound(text, VARIADIC parts) of a view made by
 *    match_recognize_create_view: the parts are the analysed input and
 *    fragments, stored in the view's rule.  The function's planner support
 *    function takes them out of the call (SupportRequestSimplify, before the
 *    planner turns the EXISTS sublinks into subplans) and leaves an internal
 *    call in their place that only this node can run.
 * Either way the planner records the analyses in the plan, and the node
 * *replays* them when the executor starts it: no name is resolved again.
 *
 * Plan invariants (what survives copyObject, the plan cache and
 * nodeToString):
 *  - scanrelid = 0; custom_scan_tlist holds one Var of the function RTE per
 *    result column, so setrefs rewrites the plan's tlist and quals into
 *    INDEX_VAR references to the scan tuple;
 *  - custom_private is a List indexed by MrScanPrivateIndex holding plain
 *    value nodes (the clause text, its origin, the input's plan_id, whether
 *    the analyses went through the rewriter) and the List of analyses
 *    (Query nodes, see mr_api.h), which setrefs does not touch;
 *  - custom_exprs are the statement parameters' argument expressions
 *    (constants, PARAM_EXTERN parameters and stable expressions of them,
 *    so that they can be evaluated when the node starts);
 *  - every relation, function and type the analyses use is a plan
 *    dependency (PlannerGlobal relationOids/invalItems), so that changing
 *    one replans; the replayed result row is checked against the scan
 *    tuple at executor start all the same;
 *  - the input plan is PlannedStmt.subplans[plan_id - 1], planned by
 *    subquery_planner in the same PlannerGlobal, so set_plan_references
 *    flattened its range table; the executor initialises (and ends) it
 *    with the other subplans and the node only borrows its PlanState;
 *    except a partial input (plan_id 0), which is custom_plans[0], and
 *    which the node initialises and ends itself (mr_scan_plan.c).
 *-------------------------------------------------------------------------
 */
#ifndef MR_SCAN_H
#define MR_SCAN_H

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"

#include "match_recognize.h"

#define MR_SCAN_NAME "MatchRecognize"

/* positions in CustomScan.custom_private */
typedef enum MrScanPrivateIndex
{
	MR_SCAN_PRIVATE_TEXT = 0,	/* String: the FROM item text */
	MR_SCAN_PRIVATE_ORIGIN,		/* Integer: MrTextOrigin.base of the text */
	MR_SCAN_PRIVATE_PLAN_ID,	/* Integer: 1-based index in PlannedStmt.subplans */
	MR_SCAN_PRIVATE_ANALYSES,	/* List of Query: what the clause was bound with */
	MR_SCAN_PRIVATE_REWRITTEN,	/* Integer: 1 when the analyses were rewritten */
	MR_SCAN_PRIVATE_PARALLEL,	/* NIL, or List: the hash share (mr_scan_parallel.c) */
	MR_SCAN_PRIVATE_COUNT
} MrScanPrivateIndex;

/* the planner's view of one candidate node (never copied: paths are not) */
typedef struct MrScanPath
{
	CustomPath	cpath;
	char	   *text;			/* the FROM item text */
	int			origin_base;
	PlannerInfo *subroot;		/* the planned input query */
	Path	   *subpath;		/* the chosen ordered input path */
	List	   *analyses;		/* what the clause was bound with */
	bool		rewritten;		/* the analyses went through the rewriter */
	List	   *params;			/* statement parameters' argument expressions */
	List	   *parallel;		/* partial path: MR_SCAN_PRIVATE_PARALLEL */
	bool		input_in_tree;	/* subpath is partial: custom_plans, not a subplan */
} MrScanPath;

/* what the parallel path needs to know of the bound clause */
typedef struct MrScanParallelShape
{
	List	   *analyses;
	int			npartition;
	const int  *partition_cols; /* 0-based input columns */
	bool		levels;			/* mr_query_is_levels() */
	bool		input_clock;	/* mr_query_uses_input_clock() */
	bool		has_subqueries; /* mr_query_has_subqueries() */
} MrScanParallelShape;

typedef struct MrParState MrParState;

/* mr_scan_path.c */
extern void mr_scan_init(void);

/* mr_scan_plan.c */
extern const CustomPathMethods mr_scan_path_methods;
extern const CustomScanMethods mr_scan_plan_methods;
extern List *mr_scan_private(const char *text, int origin_base, int plan_id,
							 List *analyses, bool rewritten, List *parallel);

/* mr_scan_exec.c */
extern Node *mr_scan_create_state(CustomScan *cscan);

/* mr_scan_parallel.c: planner */
extern bool mr_scan_parallel_candidate(PlannerInfo *root, RelOptInfo *rel,
									   const MrScanParallelShape *shape,
									   Query *input, List *params);
extern void mr_scan_parallel_add_path(PlannerInfo *root, RelOptInfo *rel,
									  const MrScanParallelShape *shape,
									  MrScanPath *serial, Query *input);

/* mr_scan_parallel.c: executor */
extern MrParState *mr_par_begin(List *info, PlanState *input, EState *estate);
extern TupleTableSlot *mr_par_next(MrParState *ps);
extern void mr_par_rescan(MrParState *ps);
extern void mr_par_end(MrParState *ps);
extern void mr_par_shutdown(MrParState *ps);
extern Size mr_par_estimate_dsm(MrParState *ps, ParallelContext *pcxt);
extern void mr_par_initialize_dsm(MrParState *ps, ParallelContext *pcxt,
								  void *coordinate);
extern void mr_par_reinitialize_dsm(MrParState *ps, ParallelContext *pcxt,
									void *coordinate);
extern void mr_par_initialize_worker(MrParState *ps, void *coordinate);
extern void mr_par_explain(MrParState *ps, ExplainState *es);

#endif							/* MR_SCAN_H */

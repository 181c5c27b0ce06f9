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
 *  - mr_scan_exec.c  execution and EXPLAIN.
 *
 * Plan invariants (what survives copyObject, the plan cache and
 * nodeToString):
 *  - scanrelid = 0; custom_scan_tlist holds one Var of the function RTE per
 *    result column, so setrefs rewrites the plan's tlist and quals into
 *    INDEX_VAR references to the scan tuple;
 *  - custom_private is a List indexed by MrScanPrivateIndex holding only
 *    plain value nodes (the clause text, its origin, the input's plan_id);
 *  - the input plan is PlannedStmt.subplans[plan_id - 1], planned by
 *    subquery_planner in the same PlannerGlobal, so set_plan_references
 *    flattened its range table; the executor initialises (and ends) it
 *    with the other subplans and the node only borrows its PlanState.
 *-------------------------------------------------------------------------
 */
#ifndef MR_SCAN_H
#define MR_SCAN_H

#include "postgres.h"

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"

#define MR_SCAN_NAME "MatchRecognize"

/* positions in CustomScan.custom_private */
typedef enum MrScanPrivateIndex
{
	MR_SCAN_PRIVATE_TEXT = 0,	/* String: the FROM item text */
	MR_SCAN_PRIVATE_ORIGIN,		/* Integer: MrTextOrigin.base of the text */
	MR_SCAN_PRIVATE_PLAN_ID,	/* Integer: 1-based index in PlannedStmt.subplans */
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
} MrScanPath;

/* GUC match_recognize.enable_custom_scan (mr_scan_path.c) */
extern bool mr_enable_custom_scan;
extern bool mr_enable_dfa;

/* mr_scan_path.c */
extern void mr_scan_init(void);

/* mr_scan_plan.c */
extern const CustomPathMethods mr_scan_path_methods;
extern const CustomScanMethods mr_scan_plan_methods;

/* mr_scan_exec.c */
extern Node *mr_scan_create_state(CustomScan *cscan);

#endif							/* MR_SCAN_H */

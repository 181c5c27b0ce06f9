/*-------------------------------------------------------------------------
 * mr_scan_remote.h
 *	  The MatchRecognizeAppend node: a match_recognize() over a partitioned
 *	  table whose partitions are postgres_fdw foreign tables runs the clause
 *	  on each partition's own server (see mr_scan_remote.c).
 *-------------------------------------------------------------------------
 */
#ifndef MR_SCAN_REMOTE_H
#define MR_SCAN_REMOTE_H

#include "nodes/pathnodes.h"
#include "nodes/parsenodes.h"

#define MR_REMOTE_NAME "MatchRecognizeAppend"

/* register the node's plan methods (from mr_scan_init) */
extern void mr_remote_init(void);

/*
 * Is the ordered input query one the node may split by partition (a plain
 * read of one partitioned table)?  Cheap: decides whether the caller keeps
 * an unplanned copy of the input for mr_remote_add_path().
 */
extern bool mr_remote_candidate(const Query *inq);

/*
 * Offer the node's path for a call whose input is a partitioned table,
 * after the ordinary MatchRecognize paths: replay is a bound call's parts
 * (a view's; NIL for a text call), inq an unplanned copy of the ordered
 * input query (rewritten, with the pushed filters), subroot the ordinary
 * plan's input, planned (its partition pruning is reused).
 */
extern void mr_remote_add_path(PlannerInfo *root, RelOptInfo *rel,
							   RangeTblFunction *rtfunc, const char *text,
							   List *params, List *replay, Query *inq,
							   PlannerInfo *subroot, Path *ordinary);

/*
 * May the clause be sent to that foreign server (mr_scan_remote_ship.c)?
 * Only when all it evaluates is what postgres_fdw itself would push down.
 */
struct MrBoundQuery;
extern bool mr_remote_clause_shippable(const struct MrBoundQuery *q, Oid serverid);

#endif							/* MR_SCAN_REMOTE_H */

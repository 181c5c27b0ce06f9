/*-------------------------------------------------------------------------
 * mr_scan_parallel_int.h
 *	  Internals shared by the parallel MatchRecognize files (not for the
 *	  rest of the extension, which sees mr_scan.h):
 *	   - mr_scan_parallel_keys.c: the keys of a plan's parallel entry, how a
 *	     row's PARTITION BY keys hash, and the sort by PARTITION BY, ORDER BY;
 *	   - mr_scan_parallel_bucket.c: the bucket executor (read the input once,
 *	     write each row to its key hash's bucket, then match bucket by bucket);
 *	   - mr_scan_parallel.c: the planner side, the hash share executor (the
 *	     fallback) and the entry points mr_scan.h declares, which dispatch.
 *	  The files depend on each other in that order only (check-layers).
 *-------------------------------------------------------------------------
 */
#ifndef MR_SCAN_PARALLEL_INT_H
#define MR_SCAN_PARALLEL_INT_H

#include "access/parallel.h"
#include "commands/explain.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
#include "utils/tuplesort.h"

/* positions in the List at custom_private[MR_SCAN_PRIVATE_PARALLEL] */
typedef enum MrParInfoIndex
{
	MR_PAR_NSHARES = 0,			/* Integer: hash shares (fallback) */
	MR_PAR_SORT_COLS,			/* IntList: 1-based input columns */
	MR_PAR_SORT_OPS,			/* OidList */
	MR_PAR_SORT_COLLS,			/* OidList */
	MR_PAR_SORT_NULLS_FIRST,	/* IntList of 0/1 */
	MR_PAR_HASH_COLS,			/* IntList: 0-based input columns */
	MR_PAR_HASH_COLLS,			/* OidList */
	MR_PAR_NBUCKETS,			/* Integer: 0 for hash shares, else buckets */
	MR_PAR_COUNT
} MrParInfoIndex;

/* the sort and the key hash of a parallel node's input rows */
typedef struct MrParKeys
{
	TupleDesc	input_desc;

	/* the sort: PARTITION BY keys, then ORDER BY keys */
	int			nsort;
	AttrNumber *sort_cols;
	Oid		   *sort_ops;
	Oid		   *sort_colls;
	bool	   *nulls_first;

	/* the hash of the PARTITION BY keys */
	int			nhash;
	int		   *hash_cols;
	Oid		   *hash_colls;
	FmgrInfo   *hash_fns;
	bool	   *hash_bits;		/* equal values are equal Datums: hash those */
	bool		hash_calls;		/* some key calls its hash function */
	MemoryContext hashcxt;		/* per row */
} MrParKeys;

/* mr_scan_parallel_keys.c */
extern void mr_par_keys_init(MrParKeys *keys, List *info, TupleDesc input_desc,
							 MemoryContext parent);
extern uint32 mr_par_keys_hash(MrParKeys *keys, TupleTableSlot *slot);
extern Tuplesortstate *mr_par_keys_sort_begin(MrParKeys *keys);
extern void mr_par_keys_end(MrParKeys *keys);

/* h's part of n equal parts of the hash space: h * n / 2^32 */
static inline uint32
mr_par_part_of(uint32 h, uint32 n)
{
	return (uint32) (((uint64) h * n) >> 32);
}

/* mr_scan_parallel_bucket.c */
typedef struct MrBucketState MrBucketState;

extern MrBucketState *mr_bk_begin(MrParKeys *keys, PlanState *input, int nbuckets,
								  EState *estate);
extern TupleTableSlot *mr_bk_next(MrBucketState *bk);
extern void mr_bk_rescan(MrBucketState *bk);
extern void mr_bk_end(MrBucketState *bk);
extern void mr_bk_shutdown(MrBucketState *bk);
extern bool mr_bk_has_dsm(const MrBucketState *bk);
extern Size mr_bk_estimate_dsm(MrBucketState *bk, ParallelContext *pcxt);
extern void mr_bk_initialize_dsm(MrBucketState *bk, ParallelContext *pcxt,
								 void *coordinate);
extern void mr_bk_reinitialize_dsm(MrBucketState *bk, ParallelContext *pcxt,
								   void *coordinate);
extern void mr_bk_initialize_worker(MrBucketState *bk, void *coordinate);
extern void mr_bk_explain(MrBucketState *bk, ExplainState *es);

#endif							/* MR_SCAN_PARALLEL_INT_H */

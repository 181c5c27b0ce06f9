/*-------------------------------------------------------------------------
 * mr_ijoin_run.h
 *	  Run a bound interval join (mr_ijoin_bind.h) over heap tuples of its
 *	  two inputs, from any source: the host side of the engine
 *	  (mr_ijoin.h) with PostgreSQL values, expressions and output rows.
 *
 * Each pushed tuple is copied with its keys' values; the keys are hashed
 * with the equality's hash functions and compared with its operators, the
 * residual and the target list are evaluated over (left, right) with the
 * missing side of a padded row all NULL.  A row whose key or time is NULL
 * matches nothing.  Output rows go to the MrIjOutFn with their identity
 * (the ids given at push; has_left/has_right false for the padded side).
 * Everything is allocated in a memory context of the run's own, a child
 * of the context current at creation.
 *-------------------------------------------------------------------------
 */
#ifndef MR_IJOIN_RUN_H
#define MR_IJOIN_RUN_H

#include "access/htup.h"
#include "access/tupdesc.h"
#include "executor/tuptable.h"

#include "mr_ijoin_bind.h"

typedef struct MrIjRun MrIjRun;

/* what the out callback learns about the rows of an output row */
typedef struct MrIjOutInfo
{
	bool		has[2];			/* false: the side is padded with NULLs */
	uint64		id[2];
	int64		time[2];
	bool		time_null[2];
} MrIjOutInfo;

typedef void (*MrIjOutFn) (void *arg, TupleTableSlot *out, const MrIjOutInfo *info);

extern MrIjRun *mr_ijrun_create(MrIjBound *b, TupleDesc desc[2], MrIjOutFn out, void *arg);
extern TupleDesc mr_ijrun_output_desc(MrIjRun *r);
extern void mr_ijrun_push(MrIjRun *r, int side, HeapTuple tuple, uint64 id);
/* a processing-time join: the time of the rows pushed or restored next */
extern void mr_ijrun_set_time(MrIjRun *r, int64 time);
extern void mr_ijrun_advance(MrIjRun *r, int64 watermark);
extern void mr_ijrun_finish(MrIjRun *r);
extern MrIjoin *mr_ijrun_engine(MrIjRun *r);
extern void mr_ijrun_checkpoint_restore(MrIjRun *r);

/* a retained row of a checkpoint: the tuple pushed, its id, time, matched flag */
typedef void (*MrIjRunVisitFn) (void *arg, int side, HeapTuple tuple, uint64 id,
								int64 time, bool matched);
extern void mr_ijrun_checkpoint(MrIjRun *r, MrIjRunVisitFn fn, void *arg);
extern void mr_ijrun_restore_watermark(MrIjRun *r, int64 watermark);
extern void mr_ijrun_restore_row(MrIjRun *r, int side, HeapTuple tuple, uint64 id,
								 bool matched);
extern void mr_ijrun_free(MrIjRun *r);

#endif							/* MR_IJOIN_RUN_H */

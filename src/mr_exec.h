/*-------------------------------------------------------------------------
 * mr_exec.h
 *	  Run a compiled MATCH_RECOGNIZE query over input rows that arrive in
 *	  PARTITION BY / ORDER BY order, one at a time, from any source (SPI
 *	  cursor, a plan child, a logical decoding stream).
 *-------------------------------------------------------------------------
 */
#ifndef MR_EXEC_H
#define MR_EXEC_H

#include "postgres.h"

#include "executor/tuptable.h"

#include "mr_bind.h"

typedef void (*MrEmitFn) (void *arg, Datum *values, bool *nulls);

typedef struct MrRuntime MrRuntime;

typedef struct MrRuntimeStats
{
	int64		rows_in;
	int64		matches;
	int64		rows_out;
	int64		max_rows_retained;
	uint64		steps;
	uint64		define_calls;
	uint64		merged;
	int64		peak_threads;
} MrRuntimeStats;

/* create in the current memory context, which must outlive the run */
extern MrRuntime *mr_runtime_create(MrQuery *q, MrEmitFn emit, void *emit_arg);

/* the next input row; emits every output row that becomes final */
extern void mr_runtime_push(MrRuntime *rt, TupleTableSlot *slot);

/* end of input: settle the last partition */
extern void mr_runtime_finish(MrRuntime *rt);

/* release executor resources (sub-plans) */
extern void mr_runtime_destroy(MrRuntime *rt);

extern void mr_runtime_get_stats(MrRuntime *rt, MrRuntimeStats *stats);

#endif							/* MR_EXEC_H */

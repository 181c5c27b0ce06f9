/*-------------------------------------------------------------------------
 * mr_runtime.h
 *	  Run a compiled MATCH_RECOGNIZE query over input rows that arrive in
 *	  PARTITION BY / ORDER BY order, one at a time, from any source (SPI
 *	  cursor, a plan child, a logical decoding stream).
 *-------------------------------------------------------------------------
 */
#ifndef MR_RUNTIME_H
#define MR_RUNTIME_H

#include "executor/tuptable.h"

#include "match_recognize.h"
#include "mr_api.h"

/*
 * Where an output row came from: its match (number within the partition,
 * first row, one past the last row; all -1 for an unmatched row) and the
 * input row it was produced for (-1 for ONE ROW PER MATCH).  Row numbers
 * count from 0 within the partition, so (partition, match_start) is a
 * deterministic identity of a match.
 */
typedef struct MrEmitInfo
{
	int64		match_number;
	int64		match_start;
	int64		match_end;
	int64		row;
} MrEmitInfo;

typedef void (*MrEmitFn) (void *arg, Datum *values, bool *nulls,
						  const MrEmitInfo *info);

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
	int64		skip_degraded;	/* invalid AFTER MATCH SKIP targets degraded */
	uint64		memo_hits;		/* matcher closures replayed, not walked */
	int64		automaton_states;	/* DFA mode: states built */
} MrRuntimeStats;

/*
 * Streaming: what a caller that persists rows must keep to rebuild the
 * runtime of one partition later (mr_runtime_restore).  Rows keep_from ..
 * nrows - 1 must be re-pushed after the restore.
 */
typedef struct MrRuntimeCheckpoint
{
	int64		nrows;			/* rows pushed into the partition so far */
	int64		keep_from;		/* first row still needed (retained_from) */
	int64		matcher_from;	/* where a fresh matcher restarts */
	int64		match_number;	/* matches emitted so far */
	int64		unmatched_from;
	int64		covered_upto;
} MrRuntimeCheckpoint;

/* create in the current memory context, which must outlive the run */
extern MrRuntime *mr_runtime_create(const MrBoundQuery *q, MrEmitFn emit, void *emit_arg);

/* the next input row; emits every output row that becomes final */
extern void mr_runtime_push(MrRuntime *rt, TupleTableSlot *slot);

/* end of input: settle the last partition */
extern void mr_runtime_finish(MrRuntime *rt);

/*
 * Streaming: drop every live partial match that started before row `first_alive`, because
 * its WITHIN window has closed; a pending match then becomes decided and is
 * emitted.  Returns the number of partial matches dropped.
 */
extern int64 mr_runtime_expire_before(MrRuntime *rt, int64 first_alive);

/*
 * The first row (partition row number) that the runtime may still need;
 * rows before it can be forgotten by a caller that persists rows.
 */
extern int64 mr_runtime_retained_from(MrRuntime *rt);

/* rows pushed into the current partition so far */
extern int64 mr_runtime_partition_rows(MrRuntime *rt);

/* Streaming: the state of the current partition (see MrRuntimeCheckpoint) */
extern void mr_runtime_checkpoint(MrRuntime *rt, MrRuntimeCheckpoint *cp);

/*
 * Streaming recovery: begin the partition of `partition_row` as it was at a
 * checkpoint; the caller then pushes rows cp->keep_from .. cp->nrows - 1
 * again.  Matches those rows complete were not emitted before the
 * checkpoint, so re-pushing emits nothing twice.
 */
extern void mr_runtime_restore(MrRuntime *rt, TupleTableSlot *partition_row,
							   const MrRuntimeCheckpoint *cp);

/*
 * Streaming: an AFTER MATCH SKIP TO FIRST|LAST target that is invalid for a
 * match (no row mapped to it, or the match's first row) resumes past the
 * match's last row instead of raising an error; counted in skip_degraded.
 */
extern void mr_runtime_degrade_skip(MrRuntime *rt, bool degrade);

/*
 * Run path-independent patterns as a cached DFA when the query qualifies
 * (a no-op otherwise); call right after mr_runtime_create().
 */
extern void mr_runtime_use_dfa(MrRuntime *rt);

/* does the runtime run as a cached DFA (after mr_runtime_use_dfa)? */
extern bool mr_runtime_uses_dfa(MrRuntime *rt);

/* release executor resources (sub-plans) */
extern void mr_runtime_destroy(MrRuntime *rt);

extern void mr_runtime_get_stats(MrRuntime *rt, MrRuntimeStats *stats);

/*
 * A copy of a value that depends on nothing else, in the current memory
 * context: a varlena fetched from TOAST, decompressed and flattened.
 */
extern Datum mr_datum_copy_flat(Datum value, bool typbyval, int typlen);

#endif							/* MR_RUNTIME_H */

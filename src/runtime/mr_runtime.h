/*-------------------------------------------------------------------------
 * mr_runtime.h
 *	  Run a bound MATCH_RECOGNIZE query (mr_api.h) over input rows that
 *	  arrive in PARTITION BY / ORDER BY order, one at a time, from any
 *	  source (a plan child, an executor run of the input, a logical
 *	  decoding stream).
 *
 * Two lifetimes, two objects:
 *
 *  - MrRuntime, one per execution of a bound query: everything the
 *    partitions share (the expressions' executor state, what the runtime
 *    decided about the query once, the automaton of DFA mode, scratch for
 *    settling a match, output buffers, the statistics).  It does not
 *    change the bound query, which may serve any number of runtimes.
 *
 *  - a partition's run: its retained rows, its matcher state (threads, a
 *    pending match) and its position (rows seen, matches emitted, what is
 *    reported).  Two ways to drive them:
 *
 *	  mr_runtime_push(rt, row)	the runtime's own partition run, for a
 *								source that delivers the partitions one
 *								after another (the custom scan, the
 *								function): a new key ends the partition and
 *								starts the next in the same run, whose
 *								buffers are reused.
 *
 *	  mr_partrun_*(run, ...)	one MrPartRun per key, for a source that
 *								interleaves partitions (a stream).  The
 *								caller routes each row to its key's run and
 *								may suspend a run between rows: a run with
 *								no live thread, no pending match and no row
 *								it still needs then keeps only its key and
 *								its checkpoint (about a hundred bytes), and
 *								resumes, exactly where it stood, when its
 *								next row is pushed.
 *
 * Output rows go to the runtime's MrEmitFn, with the MrEmitInfo of the run
 * that produced them (run_arg tells partition runs apart).  Row numbers
 * count from 0 within each partition.  Every function allocates in the
 * memory context that was current when the runtime was created (and in
 * contexts of its own below it); the caller must not reset that context
 * while the runtime is in use, and mr_runtime_destroy() releases what
 * memory contexts do not (executor state of subqueries).
 *
 * A stream persists partitions with checkpoints: mr_partrun_checkpoint()
 * (or mr_runtime_checkpoint() for the own run) says which rows the
 * partition still needs (keep_from .. nrows - 1) and where its matcher
 * restarts; after a restart, mr_partrun_restore() (mr_runtime_restore())
 * rebuilds the run and the caller pushes those rows again.  Matches that
 * the re-pushed rows complete were not emitted before the checkpoint, so
 * nothing is emitted twice.  A stream's worker, say:
 *
 *	  rt = mr_runtime_create(q, emit, worker);	one runtime, for the worker's
 *	  mr_runtime_degrade_skip(rt, true);		life
 *	  run = mr_partrun_create(rt, row, part);	a key seen for the first time
 *	  mr_partrun_push(run, row);				each released row of the key
 *	  mr_partrun_expire_before(run, first);		a WITHIN deadline passed
 *	  mr_partrun_checkpoint(run, &cp);			at commit: keep rows from
 *	  mr_partrun_suspend(run);					cp.keep_from, then let it go
 *	  run = mr_partrun_restore(rt, key, &cp, part);	 after a restart, then push
 *												rows cp.keep_from .. again
 *
 * and the emit callback tells the partitions apart by info->run_arg.
 *-------------------------------------------------------------------------
 */
#ifndef MR_RUNTIME_H
#define MR_RUNTIME_H

#include "executor/tuptable.h"

#include "match_recognize.h"
#include "mr_api.h"

/*
 * Where an output row came from: its match (number within the partition,
 * first row, one past the last row; all -1 for an unmatched row), the
 * input row it was produced for (-1 for ONE ROW PER MATCH), and the run:
 * the arg given to mr_partrun_create() / mr_partrun_restore(), NULL for the
 * runtime's own run.  Row numbers count from 0 within the partition, so
 * (partition, match_start) is a deterministic identity of a match.
 */
typedef struct MrEmitInfo
{
	int64		match_number;
	int64		match_start;
	int64		match_end;
	int64		row;
	void	   *run_arg;
} MrEmitInfo;

typedef void (*MrEmitFn) (void *arg, Datum *values, bool *nulls,
						  const MrEmitInfo *info);

typedef struct MrRuntime MrRuntime;
typedef struct MrPartRun MrPartRun;

/* totals over every partition of the runtime */
typedef struct MrRuntimeStats
{
	int64		rows_in;
	int64		matches;
	int64		rows_out;
	int64		max_rows_retained;	/* the most one partition kept at once */
	uint64		steps;
	uint64		define_calls;
	uint64		merged;
	int64		peak_threads;
	int64		skip_degraded;	/* invalid AFTER MATCH SKIP targets degraded */
	uint64		memo_hits;		/* matcher closures replayed, not walked */
	int64		automaton_states;	/* DFA mode: states built */
	int64		memo_nodes;		/* memo lane: nodes made */
	int64		memo_peak_nodes;	/* ... live at once */
	int64		memo_fallbacks; /* partitions the memo's budget gave to the matcher */
	/* time in patterns (DESIGN 6.3) */
	int64		timers_fired;	/* deadlines passed that expired an attempt
								 * (a start's waiting threads) or accepted a
								 * parked absence */
	int64		timeout_rows;	/* timeout rows output */
	int64		rows_held;		/* output rows held for CLOCK MAX */
} MrRuntimeStats;

/*
 * Streaming: what a caller that persists rows must keep to rebuild one
 * partition's run later (mr_partrun_restore, mr_runtime_restore).  Rows
 * keep_from .. nrows - 1 must be re-pushed after the restore.
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

/* ---------- the runtime ---------- */

/*
 * Create in the current memory context, which must outlive the runtime.
 * Initialises the executor state of the query's expressions (checking the
 * permission to call their functions) and the runtime's own run.
 */
extern MrRuntime *mr_runtime_create(const MrBoundQuery *q, MrEmitFn emit, void *emit_arg);

/*
 * Run path-independent patterns as a cached DFA when the query qualifies
 * (a no-op otherwise); call right after mr_runtime_create(), before any
 * row and any partition run.
 */
extern void mr_runtime_use_dfa(MrRuntime *rt);

/*
 * Run the own partition through the memo of (state, row) results
 * (core/mr_memo.h, runtime/mr_memo_lane.c) when the query qualifies: a
 * path-independent pattern under AFTER MATCH SKIP TO NEXT ROW or TO
 * FIRST/LAST v (a no-op otherwise); call right after mr_runtime_create(),
 * before mr_runtime_use_dfa(), any row and any partition run.
 * automaton_next: the caller will ask for the automaton next, which then
 * keeps TO FIRST/LAST v where it qualifies.  Batch only: the SRF and the
 * custom scan ask for it, streams do not.
 */
extern void mr_runtime_use_memo(MrRuntime *rt, bool automaton_next);

/* does the runtime run the memo lane (after mr_runtime_use_memo)? */
extern bool mr_runtime_uses_memo(MrRuntime *rt);

/*
 * Streaming: the windows of time in patterns expire threads by the clock
 * (mr_partrun_advance_clock), also without WITH TIMEOUT ROWS, so that a
 * thread only a window ends (`A B+` WITHIN .. FROM A TO B holding back the
 * match A B..B) ends in a partition that gets no more rows.  Batch needs
 * no clock for that: the end of the partition ends it.  True when the
 * query has such windows (the runtime then has deadlines); call right
 * after mr_runtime_create(), before any row and any partition run.
 */
extern bool mr_runtime_expire_windows(MrRuntime *rt);

/* does the runtime run as a cached DFA (after mr_runtime_use_dfa)? */
extern bool mr_runtime_uses_dfa(MrRuntime *rt);

/*
 * Streaming: an AFTER MATCH SKIP TO FIRST|LAST target that is invalid for a
 * match (no row mapped to it, or the match's first row) resumes past the
 * match's last row instead of raising an error; counted in skip_degraded.
 * For every run of the runtime; call before the first row.
 */
extern void mr_runtime_degrade_skip(MrRuntime *rt, bool degrade);

extern void mr_runtime_get_stats(MrRuntime *rt, MrRuntimeStats *stats);

/* release executor resources (sub-plans); the memory goes with its context */
extern void mr_runtime_destroy(MrRuntime *rt);

/* ---------- the runtime's own run: partitions one after another ---------- */

/* the next input row; emits every output row that becomes final */
extern void mr_runtime_push(MrRuntime *rt, TupleTableSlot *slot);

/* end of input: settle the last partition */
extern void mr_runtime_finish(MrRuntime *rt);

/*
 * Streaming: drop every live partial match that started before row
 * `first_alive`, because its WITHIN window has closed; a pending match then
 * becomes decided and is emitted.  Returns the number of partial matches
 * dropped.
 */
extern int64 mr_runtime_expire_before(MrRuntime *rt, int64 first_alive);

/*
 * Time in patterns, for a source whose clock moves without rows (a
 * stream's watermark): the earliest deadline a NOT v of the partition waits
 * for, as an int64 of the event time (INT64_MAX: none; timestamps in
 * microseconds, dates in days, integers as they are), and advancing the
 * clock to `now` (every row before `now` pushed): what passed its deadline
 * is decided and emitted as a row at `now` would have decided it.
 */
extern int64 mr_runtime_next_deadline(MrRuntime *rt);
/* a row's event time as those deadlines count it; false: null, or no time */
extern bool mr_runtime_event_time(MrRuntime *rt, TupleTableSlot *slot, int64 *t);
extern void mr_runtime_advance_clock(MrRuntime *rt, int64 now);

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
 * again.
 */
extern void mr_runtime_restore(MrRuntime *rt, TupleTableSlot *partition_row,
							   const MrRuntimeCheckpoint *cp);

/* ---------- partition runs: interleaved partitions ---------- */

/*
 * A run for the partition whose key is in the PARTITION BY columns of
 * key_row (the other columns are not read); the run keeps a copy of the
 * key.  It starts suspended, at the partition's first row.  arg is passed
 * to the emit callback as MrEmitInfo.run_arg.
 */
extern MrPartRun *mr_partrun_create(MrRuntime *rt, TupleTableSlot *key_row, void *arg);

/*
 * Streaming recovery: a run for key_row's partition as it was at a
 * checkpoint.  When the checkpoint keeps rows (cp->keep_from < cp->nrows)
 * the run is live and the caller pushes rows cp->keep_from .. cp->nrows - 1
 * again; otherwise it starts suspended.
 */
extern MrPartRun *mr_partrun_restore(MrRuntime *rt, TupleTableSlot *key_row,
									 const MrRuntimeCheckpoint *cp, void *arg);

/*
 * The partition's next input row (the caller has routed it by its key,
 * which is not checked again); resumes a suspended run first.  Emits every
 * output row that becomes final.
 */
extern void mr_partrun_push(MrPartRun *run, TupleTableSlot *slot);

/* the partition ended: settle it; push no more rows into the run */
extern void mr_partrun_finish(MrPartRun *run);

/*
 * Give back what the run does not need until its next row.  With no live
 * thread and no pending match, its matcher goes back to the runtime; when,
 * in addition, it needs none of its rows (a query reading PREV always
 * needs the last ones), it drops them and its window too and keeps only
 * its key and its checkpoint.  Returns true when the run is now suspended
 * (that small), false when it keeps state (it may still have given back
 * its matcher).  Nothing observable changes: the next push resumes it.
 */
extern bool mr_partrun_suspend(MrPartRun *run);

/* make a suspended run live again (mr_partrun_push does it itself) */
extern void mr_partrun_resume(MrPartRun *run);

extern bool mr_partrun_is_suspended(const MrPartRun *run);

/* free the run and its key; its partition's state is forgotten */
extern void mr_partrun_free(MrPartRun *run);

/* as mr_runtime_expire_before / _retained_from / _partition_rows /
 * _checkpoint, for one run (a suspended run answers from its checkpoint) */
extern int64 mr_partrun_expire_before(MrPartRun *run, int64 first_alive);
extern int64 mr_partrun_next_deadline(MrPartRun *run);
extern void mr_partrun_advance_clock(MrPartRun *run, int64 now);
extern int64 mr_partrun_retained_from(MrPartRun *run);
extern int64 mr_partrun_rows(MrPartRun *run);
extern void mr_partrun_checkpoint(MrPartRun *run, MrRuntimeCheckpoint *cp);

/*
 * A copy of a value that depends on nothing else, in the current memory
 * context: a varlena fetched from TOAST, decompressed and flattened.
 */
extern Datum mr_datum_copy_flat(Datum value, bool typbyval, int typlen);

#endif							/* MR_RUNTIME_H */

/*-------------------------------------------------------------------------
 * mr_stream_worker.c
 *	  The worker of one stream: logical decoding in, final matches out,
 *	  exactly once.  This file is the process: its cycle loop, the catalog
 *	  row it writes, the recording of an error, and main; the work of each
 *	  step is in the files mr_stream_worker_int.h lists.
 *
 * Design
 * ------
 * The worker holds its replication slot and one decoding context for its
 * whole life (mr_stream_decoder.c): WAL is read once, as it is flushed.
 * Its state is in memory: the rows waiting for the watermark (pending), the
 * rows each partition's live matches still need (retained), one runtime
 * switched between partitions (mr_stream_part.c), the counters.  It loops
 * over cycles; a cycle is one transaction that
 *
 *	1. decodes what WAL holds (at most batch_size rows or a few hundred
 *	   milliseconds): each new transaction of the source is filed at its
 *	   commit (mr_stream_ingest.c): a NULL event time is counted and
 *	   dropped, a row below the watermark (max event time seen - lateness)
 *	   is late (counted, copied to the late table), any other row pending;
 *	   the worker's own writes are of other tables and never reach it;
 *	2. when something was decoded (or the wall clock of idle_advance, or a
 *	   periodic check, asks for it), takes the stream's lock (ExclusiveLock,
 *	   conditionally: drop_stream takes AccessExclusiveLock and waits for
 *	   the slot) and re-reads the catalog row (gone: drop the slot, exit);
 *	3. releases every pending row strictly below the watermark into its
 *	   partition, in the batch query's full PARTITION BY / ORDER BY order
 *	   (then arrival); the runtime emits a match as soon as the matcher
 *	   decides it;
 *	4. with WITHIN, drops the partial matches whose window closed (first
 *	   row's event time + bound < watermark), also in idle partitions;
 *	5. writes the emitted rows to the output table (batched, with a
 *	   deterministic _match_id) and the late rows;
 *	6. when due, writes a checkpoint (mr_stream_checkpoint.c), and writes
 *	   the catalog row: counters, last_lsn (the end of the last transaction
 *	   processed) and the checkpoint's columns;
 *	7. commits (synchronous_commit = on), then confirms the slot up to what
 *	   the durable checkpoint can be rebuilt from, and publishes how far
 *	   everything is done (match_recognize_wait_stream).
 *
 * Exactly once: the output of every transaction up to last_lsn is
 * committed together with last_lsn.  After any crash the worker loads the
 * last checkpoint, decodes from its restart position again to get back the
 * rows it kept, processes the transactions up to last_lsn once more without
 * writing (their output is committed), and goes on (mr_stream_checkpoint.c
 * for the details, and for the checks that turn a state that does not add
 * up into an error).  The unique index on _match_id remains as a second
 * line of defence: writing a match twice would fail, not duplicate it.
 *
 * An error ends the worker (the state in memory may be ahead of what was
 * committed) after recording it, with the context of where it happened;
 * the launcher starts it again (see "starts, retries and failure").  With
 * on_error 'skip', an error a source row's DEFINE or MEASURES raised first
 * lists that row in the dead-letter table, which every later worker drops
 * it by (skip_row, mr_stream_deadletter.c).
 *
 * Ties on the full ORDER BY are broken by arrival (seq), which is stable
 * across replays; release order does not depend on cycle boundaries, so
 * the output does not either.  Idle, the worker sleeps on its latch
 * (waking every MRS_IDLE_MS to look for WAL), writes nothing and logs
 * nothing.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/pmsignal.h"
#include "replication/slot.h"
#include "storage/ipc.h"
#include "storage/spin.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/syscache.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "mr_stream_join.h"
#include "mr_stream_watermark.h"
#include "mr_stream_levels.h"
#include "match_recognize.h"
#include "mr_stream_worker_int.h"

typedef enum CycleResult
{
	CYCLE_MORE,					/* run the next cycle at once */
	CYCLE_IDLE,					/* caught up: wait for WAL */
	CYCLE_BUSY,					/* the stream is locked: try again soon */
	CYCLE_STOPPED,				/* the stream failed: wait for a drop */
	CYCLE_EXIT					/* the stream is gone */
} CycleResult;

#define MRS_IDLE_MS			50	/* look for new WAL this often when idle */
#define MRS_BUSY_MS			100
#define MRS_STOPPED_MS		2000
#define MRS_CHECK_MS		1000	/* an idle stream re-reads its catalog row */
#define MRS_CATALOG_MS		1000	/* the counters in the catalog lag at most */

static MrsStream stream_state;
static TimestampTz last_check = 0;

/* ---------- the catalog row ---------- */

/*
 * Write the catalog row: state, counters, position, and the checkpoint's
 * columns when one was written in this cycle.  Before the replay after a
 * restart is done, the counters in memory are older than the committed
 * ones: only the state and the pid are written then.
 */
void
mrs_save(Relation catrel, HeapTuple tup, const char *error)
{
	MrsStream  *s = MyStream;
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	bool		repl[Natts_mrs - 1];

	memset(nulls, false, sizeof(nulls));
	memset(repl, false, sizeof(repl));
#define SETV(anum, v) (values[(anum) - 1] = (v), repl[(anum) - 1] = true)
	SETV(Anum_mrs_state, CStringGetTextDatum(s->state));
	if (error)
		SETV(Anum_mrs_last_error, CStringGetTextDatum(error));
	SETV(Anum_mrs_worker_pid, Int32GetDatum(MyProcPid));
	SETV(Anum_mrs_updated_at, TimestampTzGetDatum(GetCurrentTimestamp()));
	if (s->mode == MRS_NORMAL)
	{
		if (s->snapshot_text)
			SETV(Anum_mrs_snapshot, CStringGetTextDatum(s->snapshot_text));
		SETV(Anum_mrs_backfilled, BoolGetDatum(s->backfilled));
		SETV(Anum_mrs_rows_in, Int64GetDatum(s->rows_in));
		SETV(Anum_mrs_late_rows, Int64GetDatum(s->late_rows));
		SETV(Anum_mrs_null_rows, Int64GetDatum(s->null_rows));
		SETV(Anum_mrs_matches_out, Int64GetDatum(s->matches_out));
		SETV(Anum_mrs_rows_out, Int64GetDatum(s->rows_out));
		SETV(Anum_mrs_skip_degraded, Int64GetDatum(s->skip_degraded));
		SETV(Anum_mrs_rows_pending, Int64GetDatum(s->rows_pending));
		SETV(Anum_mrs_rows_retained, Int64GetDatum(s->rows_retained));
		SETV(Anum_mrs_rows_stored, Int64GetDatum(s->rows_stored));
		SETV(Anum_mrs_timers_pending, Int64GetDatum(mrs_timers_pending()));
		SETV(Anum_mrs_timeouts_out, Int64GetDatum(s->timeouts_out));
		if (s->have_max)
		{
			SETV(Anum_mrs_max_seen, CStringGetTextDatum(mrs_datum_text(s->keytype, s->max_seen)));
			SETV(Anum_mrs_watermark, CStringGetTextDatum(mrs_datum_text(s->keytype, s->watermark)));
		}
		SETV(Anum_mrs_next_seq, Int64GetDatum(s->next_seq));
		SETV(Anum_mrs_next_part, Int64GetDatum(s->next_part));
		if (s->last_lsn != InvalidXLogRecPtr)
			SETV(Anum_mrs_last_lsn, LSNGetDatum(s->last_lsn));
		if (s->last_commit_time != 0)
			SETV(Anum_mrs_last_commit_time, TimestampTzGetDatum(s->last_commit_time));
		if (mrs_checkpoint_columns(values, nulls, repl))
			SETV(Anum_mrs_checkpoint_lateness, CStringGetTextDatum(mrs_lateness_text()));
		/* how far after_commit may confirm the slot (mrs_confirm) */
		s->confirm_pending = Max(s->confirm_limit, mrs_confirmable());
		if (!XLogRecPtrIsInvalid(s->confirm_pending))
			SETV(Anum_mrs_confirmed_lsn, LSNGetDatum(s->confirm_pending));
	}
#undef SETV
	mr_stream_row_update(catrel, tup, values, nulls, repl);
	s->catalog_dirty = false;
	s->catalog_at = GetCurrentTimestamp();
}

static uint64 held_wal(void);
static void warn_held_wal(uint64 held, int64 bound, const char *state);

static void
record_error(const char *msg)
{
	MrsStream  *s = MyStream;
	Relation	catrel;
	HeapTuple	tup;
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	bool		repl[Natts_mrs - 1];

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	s->catalog = mr_stream_catalog_oid(true);
	if (OidIsValid(s->catalog))
	{
		catrel = table_open(s->catalog, RowExclusiveLock);
		tup = mr_stream_row_by_id(catrel, s->id);
		if (tup)
		{
			memset(nulls, false, sizeof(nulls));
			memset(repl, false, sizeof(repl));
			values[Anum_mrs_last_error - 1] = CStringGetTextDatum(msg);
			repl[Anum_mrs_last_error - 1] = true;
			values[Anum_mrs_state - 1] = CStringGetTextDatum("error");
			repl[Anum_mrs_state - 1] = true;
			values[Anum_mrs_updated_at - 1] = TimestampTzGetDatum(GetCurrentTimestamp());
			repl[Anum_mrs_updated_at - 1] = true;
			mr_stream_row_update(catrel, tup, values, nulls, repl);
		}
		table_close(catrel, NoLock);
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	warn_held_wal(held_wal(), s->max_held_wal, "error");
}

/* ---------- on_error 'skip' ---------- */

static HeapTuple open_stream(Relation *catrel, bool *busy);
static CycleResult stream_gone(void);
static void set_columns(Relation catrel, HeapTuple tup, int n, const int *attnums,
						const Datum *vals);

/*
 * After an error on source row seq, with on_error 'skip' (the transaction
 * aborted): list the row and its error in the dead-letter table, count it
 * and set the start count to zero, in one transaction
 * (mr_stream_deadletter.c).  Returns NULL when the row was listed (the
 * next worker drops it), else the last_error to stop with: the row was
 * listed before (it failed again), the table refused it, or the stream is
 * locked (the next worker tries again).
 */
static char *
skip_row(const ErrorData *edata, const char *message, const char *where,
		 char *msg, int64 seq)
{
	MrsStream  *s = MyStream;
	MemoryContext cxt = CurrentMemoryContext;
	Relation	catrel;
	HeapTuple	tup;
	bool		busy;
	bool		listed = false;
	char	   *volatile result = NULL;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PG_TRY();
	{
		tup = open_stream(&catrel, &busy);
		if (tup == NULL && !busy)
		{
			(void) stream_gone();	/* commits */
			proc_exit(0);
		}
		if (busy)
			result = msg;
		else
		{
			int			attnums[3] = {Anum_mrs_error_rows, Anum_mrs_start_failures, Anum_mrs_last_error};
			Datum		vals[3];

			if (SPI_connect() != SPI_OK_CONNECT)
				elog(ERROR, "SPI_connect failed");
			listed = mrs_deadletter_insert(edata, message, where);
			if (listed)
			{
				MemoryContextSwitchTo(cxt);
				vals[0] = Int64GetDatum(mr_stream_row_int8(catrel, tup, Anum_mrs_error_rows) + 1);
				vals[1] = Int32GetDatum(0);
				vals[2] = CStringGetTextDatum(psprintf("source row " INT64_FORMAT " skipped (on_error 'skip', listed in %s): %s",
													   seq, mrs_qualified(s->error_table), msg));
				set_columns(catrel, tup, 3, attnums, vals);
				ereport(LOG,
						(errmsg("match_recognize stream %d skipped source row " INT64_FORMAT ", listed in its dead-letter table %s",
								s->id, seq, mrs_qualified(s->error_table))));
			}
			else
				result = psprintf("%s; source row " INT64_FORMAT " failed again after it was listed in the dead-letter table %s, so the stream stops on it",
								  msg, seq, mrs_qualified(s->error_table));
			if (SPI_finish() != SPI_OK_FINISH)
				elog(ERROR, "SPI_finish failed");
			table_close(catrel, NoLock);
			PopActiveSnapshot();
		}
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		EmitErrorReport();
		FlushErrorState();
		AbortCurrentTransaction();
		result = psprintf("%s; source row " INT64_FORMAT " could not be listed in the dead-letter table: %s",
						  msg, seq, e->message);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	return result;
}

/* ---------- starts, retries and failure ---------- */

/*
 * A worker that stops before it made progress (an error, a crash, a kill)
 * is started again by the launcher; each start counts in the catalog row's
 * start_failures, written and committed before anything that could fail,
 * so that a crash counts too.  The n-th start in a row waits
 * min(2^(n-2) s, match_recognize.stream_retry_max_delay) first; at
 * match_recognize.stream_start_retries the stream is marked failed with the
 * last error instead of being started again: nothing the stream's owner
 * can write to its state makes the worker loop.  Progress (a committed
 * transaction of the source processed, or catching up with the WAL) sets
 * the count back to zero.
 */
static void
set_columns(Relation catrel, HeapTuple tup, int n, const int *attnums, const Datum *vals)
{
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	bool		repl[Natts_mrs - 1];
	int			i;

	memset(nulls, false, sizeof(nulls));
	memset(repl, false, sizeof(repl));
	for (i = 0; i < n; i++)
	{
		values[attnums[i] - 1] = vals[i];
		repl[attnums[i] - 1] = true;
	}
	values[Anum_mrs_updated_at - 1] = TimestampTzGetDatum(GetCurrentTimestamp());
	repl[Anum_mrs_updated_at - 1] = true;
	mr_stream_row_update(catrel, tup, values, nulls, repl);
}

/* wait ms, or less when the stream is being dropped or the server stops */
static void
retry_wait(long ms)
{
	TimestampTz until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), ms);

	while (!mr_stream_stop_requested())
	{
		long		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), until);

		if (left <= 0)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 left, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Before the first cycle: count this start, or give up.  Returns
 * CYCLE_MORE to go on with init_cycle, CYCLE_STOPPED when the stream is
 * (now) failed, CYCLE_EXIT when it is gone, CYCLE_BUSY to try again.
 */
static CycleResult
start_attempt(void)
{
	MrsStream  *s = MyStream;
	Relation	catrel;
	HeapTuple	tup;
	bool		busy;
	int32		failures;
	bool		isnull;
	Datum		d;
	char	   *state;
	int			attnums[3];
	Datum		vals[3];

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	tup = open_stream(&catrel, &busy);
	if (busy)
	{
		CommitTransactionCommand();
		return CYCLE_BUSY;
	}
	if (tup == NULL)
		return stream_gone();
	state = mr_stream_row_text(catrel, tup, Anum_mrs_state);
	d = mr_stream_row_get(catrel, tup, Anum_mrs_start_failures, &isnull);
	failures = isnull ? 0 : Max(DatumGetInt32(d), 0);
	if (strcmp(state, "failed") == 0)
	{
		table_close(catrel, NoLock);
		PopActiveSnapshot();
		CommitTransactionCommand();
		return CYCLE_MORE;		/* init_cycle waits for the drop */
	}
	if (failures >= mr_stream_start_retries)
	{
		char	   *last = mr_stream_row_text(catrel, tup, Anum_mrs_last_error);
		char	   *why = psprintf("the worker stopped %d times in a row before it made progress, "
								   "so it is not started again; the last error: %s",
								   failures, last ? last : "none recorded (the worker crashed or was killed)");

		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("match_recognize stream %d failed: %s", s->id, why)));
		attnums[0] = Anum_mrs_state;
		vals[0] = CStringGetTextDatum("failed");
		attnums[1] = Anum_mrs_last_error;
		vals[1] = CStringGetTextDatum(why);
		set_columns(catrel, tup, 2, attnums, vals);
		table_close(catrel, NoLock);
		PopActiveSnapshot();
		CommitTransactionCommand();
		s->stopped = true;
		s->initialized = true;
		s->attempted = true;
		return CYCLE_STOPPED;
	}
	table_close(catrel, NoLock);
	PopActiveSnapshot();
	CommitTransactionCommand();
	if (failures > 0)
	{
		long		delay = 1000L << Min(failures - 1, 20);

		retry_wait(Min(delay, (long) mr_stream_retry_max_delay * 1000L));
		if (mr_stream_stop_requested())
			proc_exit(0);
	}

	/* this start counts until the worker makes progress */
	StartTransactionCommand();
	tup = open_stream(&catrel, &busy);
	if (busy)
	{
		CommitTransactionCommand();
		return CYCLE_BUSY;
	}
	if (tup == NULL)
		return stream_gone();
	attnums[0] = Anum_mrs_start_failures;
	vals[0] = Int32GetDatum(failures + 1);
	set_columns(catrel, tup, 1, attnums, vals);
	s->start_failures = failures + 1;
	table_close(catrel, NoLock);
	PopActiveSnapshot();
	CommitTransactionCommand();
	return CYCLE_MORE;
}

/* the worker made progress: its start counts no more */
static void
progress_made(void)
{
	MrsStream  *s = MyStream;
	Relation	catrel;
	HeapTuple	tup;
	bool		busy;
	int			attnum = Anum_mrs_start_failures;
	Datum		zero = Int32GetDatum(0);

	s->made_progress = true;
	if (s->start_failures == 0)
		return;
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	tup = open_stream(&catrel, &busy);
	if (tup != NULL)
	{
		set_columns(catrel, tup, 1, &attnum, &zero);
		s->start_failures = 0;
		table_close(catrel, NoLock);
	}
	if (ActiveSnapshotSet())
		PopActiveSnapshot();
	CommitTransactionCommand();
}

/* ---------- helpers of a cycle ---------- */

/* the owner may still read the source, as create_stream checked */
static void
check_source_access(void)
{
	MrsStream  *s = MyStream;

	if (pg_class_aclcheck(s->source, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(s->source))));
	if (check_enable_rls(s->source, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("table \"%s\" has row-level security enabled for the stream's owner",
						get_rel_name(s->source))));
}

/* the stream is gone (dropped, or the extension was): remove the slot */
static CycleResult
stream_gone(void)
{
	MrsStream  *s = MyStream;

	if (MyReplicationSlot != NULL)
		ReplicationSlotRelease();
	if (SearchNamedReplicationSlot(s->slot_name, true) != NULL)
	{
		mr_stream_mark_dropped(s->slot_name);
		ereport(WARNING,
				(errmsg("match_recognize stream %d is gone; dropping replication slot \"%s\"",
						s->id, s->slot_name)));
		mr_stream_drop_slot(s->slot_name);
	}
	if (ActiveSnapshotSet())
		PopActiveSnapshot();
	CommitTransactionCommand();
	return CYCLE_EXIT;
}

/*
 * Take the stream's lock and its catalog row, under a snapshot taken after
 * the lock (so that it sees what drop_stream committed).  Returns the row,
 * NULL when the stream is gone; *busy when the lock is taken.
 */
static HeapTuple
open_stream(Relation *catrel, bool *busy)
{
	MrsStream  *s = MyStream;
	HeapTuple	tup;
	bool		isnull;

	*busy = false;
	*catrel = NULL;
	PushActiveSnapshot(GetTransactionSnapshot());
	s->catalog = mr_stream_catalog_oid(true);
	PopActiveSnapshot();
	if (!OidIsValid(s->catalog))
		return NULL;
	if (!mr_stream_lock_conditional(s->catalog, s->id, ExclusiveLock))
	{
		*busy = true;
		return NULL;
	}
	PushActiveSnapshot(GetTransactionSnapshot());
	*catrel = table_open(s->catalog, RowExclusiveLock);
	tup = mr_stream_row_by_id(*catrel, s->id);
	/* the id was re-used by a stream created after ours was dropped */
	if (tup != NULL &&
		strcmp(NameStr(*DatumGetName(mr_stream_row_get(*catrel, tup, Anum_mrs_slot_name, &isnull))),
			   s->slot_name) != 0)
		tup = NULL;
	if (tup == NULL)
	{
		table_close(*catrel, NoLock);
		*catrel = NULL;
	}
	return tup;
}

static void
close_stream(Relation catrel)
{
	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");
	table_close(catrel, NoLock);
	PopActiveSnapshot();
	CommitTransactionCommand();
}

/*
 * Is the position the slot may be confirmed to (mrs_confirmable) far
 * enough past confirmed_lsn to write the catalog row for it?  An idle
 * stream in a busy cluster then writes its row every MRS_CONFIRM_MS at
 * most, or at once past MRS_CONFIRM_BYTES of WAL its slot holds for
 * nothing.
 */
#define MRS_CONFIRM_MS		10000
#define MRS_CONFIRM_BYTES	(16 * 1024 * 1024)
static bool
confirm_behind(void)
{
	MrsStream  *s = MyStream;
	XLogRecPtr	target = mrs_confirmable();

	if (XLogRecPtrIsInvalid(target) || target <= s->confirm_limit)
		return false;
	return target - s->confirm_limit >= MRS_CONFIRM_BYTES ||
		TimestampDifferenceExceeds(s->catalog_at, GetCurrentTimestamp(), MRS_CONFIRM_MS);
}

/* steps 3-6 of a cycle (see the file's comment) */
static void
process(Relation catrel, HeapTuple tup)
{
	MrsStream  *s = MyStream;
	const char *error = NULL;

	mrs_advance_clock();
	mrs_outbuf_flush(&s->late);
	mrs_release();
	mrs_expire();
	mrs_refresh_skips();
	mrs_outbuf_flush(&s->out);
	mrs_watermark_publish();	/* after the output rows, before the commit */
	if (s->mode == MRS_REDO && s->last_lsn >= s->redo_upto)
		mrs_redo_done();
	else if (s->mode == MRS_REDO && !mrs_wal_available())
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("stream %d did not find the transaction ending at %X/%X again",
						s->id, LSN_FORMAT_ARGS(s->redo_upto)),
				 errdetail("Decoding reached the end of WAL at %X/%X.", LSN_FORMAT_ARGS(s->decoded_upto))));
	if (s->mode != MRS_NORMAL)
		return;
	if (s->failing)
	{
		s->state = "failed";
		error = s->fail_msg;
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("match_recognize stream %d stopped: %s", s->id, s->fail_msg)));
	}
	if (mrs_checkpoint_due())
		mrs_checkpoint();
	/* the slot may go further than confirmed_lsn says: say so, now and then */
	if (confirm_behind())
		s->catalog_dirty = true;
	if (s->wrote || s->cp_wanted || s->failing ||
		(s->catalog_dirty &&
		 TimestampDifferenceExceeds(s->catalog_at, GetCurrentTimestamp(), MRS_CATALOG_MS)))
		mrs_save(catrel, tup, error);
	s->cycle_relevant = false;
	if (s->failing)
		s->stopped = true;
}

/* after a cycle's commit: confirm the slot, publish progress */
static void
after_commit(bool processed)
{
	MrsStream  *s = MyStream;

	s->wrote = false;
	if (s->mode != MRS_NORMAL)
		return;
	if (s->confirm_pending > s->confirm_limit)
		s->confirm_limit = s->confirm_pending;
	mrs_confirm();
	if (processed || !s->cycle_relevant)
	{
		mr_stream_report_progress(s->decoded_upto);
		if (s->caught_up_at != 0)
			mr_stream_report_caught_up(s->caught_up_at);
	}
	pgstat_report_stat(false);
}

/* ---------- cycles ---------- */

/* ---------- the WAL a stream's slot holds ---------- */

#define MRS_WAL_WARN_MS		60000	/* warn about held WAL this often at most */
static TimestampTz last_wal_warning = 0;

static char *
size_text(uint64 bytes)
{
	return TextDatumGetCString(DirectFunctionCall1(pg_size_pretty, Int64GetDatum((int64) bytes)));
}

/* the WAL the stream's slot holds, in bytes (0: no slot) */
static uint64
held_wal(void)
{
	ReplicationSlot *slot = MyReplicationSlot;
	XLogRecPtr	restart = InvalidXLogRecPtr;
	XLogRecPtr	end = GetXLogWriteRecPtr();

	if (slot == NULL)
	{
		LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
		slot = SearchNamedReplicationSlot(MyStream->slot_name, false);
		if (slot != NULL)
		{
			SpinLockAcquire(&slot->mutex);
			restart = slot->data.restart_lsn;
			SpinLockRelease(&slot->mutex);
		}
		LWLockRelease(ReplicationSlotControlLock);
	}
	else
		restart = slot->data.restart_lsn;
	return XLogRecPtrIsInvalid(restart) || end <= restart ? 0 : end - restart;
}

/*
 * Past the stream's max_held_wal, the WAL its slot holds is logged (once a
 * minute at most): a running stream stores rows at half of it, so more
 * means that it is far behind, or that it cannot go on (error, failed).
 */
static void
warn_held_wal(uint64 held, int64 bound, const char *state)
{
	if (bound <= 0 || held <= (uint64) bound ||
		!TimestampDifferenceExceeds(last_wal_warning, GetCurrentTimestamp(), MRS_WAL_WARN_MS))
		return;
	last_wal_warning = GetCurrentTimestamp();
	ereport(WARNING,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("match_recognize stream %d (%s) holds %s of WAL in its replication slot \"%s\", more than its max_held_wal (%s)",
					MyStream->id, state, size_text(held), MyStream->slot_name, size_text(bound)),
			 strcmp(state, "failed") == 0
			 ? errhint("A failed stream gives up its slot past its max_held_wal; drop the stream.")
			 : errhint("See the state and last_error of the stream in match_recognize_streams.")));
}

/*
 * A failed stream keeps its slot (and the WAL from its last position on)
 * until the WAL held exceeds its max_held_wal (0: forever); then it gives
 * the slot up, says so in last_error, and its worker ends.  A failed stream
 * cannot be resumed, so the slot only kept the changes for inspection.
 */
static bool
failed_gives_up_slot(Relation catrel, HeapTuple tup)
{
	MrsStream  *s = MyStream;
	bool		isnull;
	Datum		d = mr_stream_row_get(catrel, tup, Anum_mrs_max_held_wal, &isnull);
	int64		bound = isnull ? 0 : DatumGetInt64(d);
	uint64		held = held_wal();
	char	   *last;
	int			attnums[1] = {Anum_mrs_last_error};
	Datum		vals[1];

	if (bound <= 0 || held <= (uint64) bound)
		return false;
	last = mr_stream_row_text(catrel, tup, Anum_mrs_last_error);
	vals[0] = CStringGetTextDatum(psprintf("%s; its replication slot was dropped when it held %s of WAL, "
										   "more than its max_held_wal (%s)",
										   last ? last : "failed", size_text(held), size_text(bound)));
	set_columns(catrel, tup, 1, attnums, vals);
	ereport(WARNING,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("match_recognize stream %d is failed and its replication slot \"%s\" held %s of WAL, more than its max_held_wal (%s): dropping the slot",
					s->id, s->slot_name, size_text(held), size_text(bound))));
	return true;				/* the caller drops the slot after the commit */
}

/* a failed stream's worker waits for the stream to be dropped */
static CycleResult
stopped_cycle(void)
{
	Relation	catrel;
	bool		busy;
	HeapTuple	tup = open_stream(&catrel, &busy);
	bool		gave_up;

	if (busy)
	{
		CommitTransactionCommand();
		return CYCLE_BUSY;
	}
	if (tup == NULL)
		return stream_gone();
	gave_up = failed_gives_up_slot(catrel, tup);
	table_close(catrel, NoLock);
	PopActiveSnapshot();
	CommitTransactionCommand();
	if (!gave_up)
		return CYCLE_STOPPED;
	/* last_error says so (committed): now the slot goes */
	if (MyReplicationSlot != NULL)
		ReplicationSlotRelease();
	/* the launcher is not to start a worker to find out where it went */
	mr_stream_mark_dropped(MyStream->slot_name);
	mr_stream_drop_slot(MyStream->slot_name);
	return CYCLE_EXIT;
}

/*
 * The slot was dropped behind the stream's back: changes may be missed.
 * Only the state and the error are written (the rest was not loaded).
 */
static CycleResult fail_at_start(Relation catrel, HeapTuple tup, const char *error);

static CycleResult
slot_lost(Relation catrel, HeapTuple tup)
{
	return fail_at_start(catrel, tup,
						 psprintf("the replication slot \"%s\" of the stream was dropped, so changes may have been missed; "
								  "drop the stream and create it again", MyStream->slot_name));
}

/* the stream cannot go on: state failed, with why (the rest was not loaded) */
static CycleResult
fail_at_start(Relation catrel, HeapTuple tup, const char *error)
{
	MrsStream  *s = MyStream;
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	bool		repl[Natts_mrs - 1];

	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("match_recognize stream %d stopped: %s", s->id, error)));
	memset(nulls, false, sizeof(nulls));
	memset(repl, false, sizeof(repl));
	values[Anum_mrs_state - 1] = CStringGetTextDatum("failed");
	repl[Anum_mrs_state - 1] = true;
	values[Anum_mrs_last_error - 1] = CStringGetTextDatum(error);
	repl[Anum_mrs_last_error - 1] = true;
	values[Anum_mrs_updated_at - 1] = TimestampTzGetDatum(GetCurrentTimestamp());
	repl[Anum_mrs_updated_at - 1] = true;
	mr_stream_row_update(catrel, tup, values, nulls, repl);
	s->stopped = true;
	s->initialized = true;
	(void) SPI_finish();		/* if init_cycle connected */
	table_close(catrel, NoLock);
	PopActiveSnapshot();
	CommitTransactionCommand();
	return CYCLE_STOPPED;
}

/* the first cycle: the definition, the slot, then backfill or restore */
static CycleResult
init_cycle(void)
{
	MrsStream  *s = MyStream;
	Relation	catrel;
	bool		busy;
	HeapTuple	tup = open_stream(&catrel, &busy);
	const char *tampered;
	bool		isnull;
	Datum		d;

	if (busy)
	{
		CommitTransactionCommand();
		return CYCLE_BUSY;
	}
	if (tup == NULL)
		return stream_gone();
	if (!mr_stream_catalog_is_current(catrel))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"match_recognize\" must be updated to run streams"),
				 errhint("Run ALTER EXTENSION match_recognize UPDATE.")));
	s->state = MemoryContextStrdup(s->cxt, mr_stream_row_text(catrel, tup, Anum_mrs_state));
	if (strcmp(s->state, "failed") != 0 && SearchNamedReplicationSlot(s->slot_name, true) == NULL)
		return slot_lost(catrel, tup);
	if (strcmp(s->state, "failed") == 0)
	{
		s->stopped = true;
		table_close(catrel, NoLock);
		PopActiveSnapshot();
		CommitTransactionCommand();
		return CYCLE_STOPPED;
	}
	if (strcmp(s->state, "paused") == 0)
	{
		/*
		 * Paused (match_recognize_pause_stream), and the server restarted:
		 * set the stop mark again, so that the launcher leaves the slot
		 * alone until match_recognize_resume_stream clears it.
		 */
		mr_stream_request_stop(s->slot_name);
		table_close(catrel, NoLock);
		PopActiveSnapshot();
		CommitTransactionCommand();
		return CYCLE_EXIT;
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	mrs_setup(catrel, tup);
	mrs_deadletter_setup(catrel, tup);
	mrs_lanes_setup(catrel, tup);	/* workers > 1 (mr_stream_lanes.c) */
	s->late_type = DatumGetObjectId(mr_stream_row_get(catrel, tup, Anum_mrs_lateness_type, &isnull));
	mrs_load_state(catrel, tup);
	mrs_watermark_setup(catrel, tup);
	s->start_lsn = s->last_lsn;
	d = mr_stream_row_get(catrel, tup, Anum_mrs_confirmed_lsn, &isnull);
	s->confirm_limit = isnull ? InvalidXLogRecPtr : DatumGetLSN(d);
	check_source_access();
	tampered = mrs_decoder_start();
	if (tampered != NULL)
		return fail_at_start(catrel, tup, tampered);
	s->mode = MRS_NORMAL;
	if (!s->backfilled)
	{
		s->cp_at = GetCurrentTimestamp();
		mrs_backfill();
		s->state = "running";
		process(catrel, tup);	/* writes the first checkpoint */
		s->backfill_done = true;
	}
	else
	{
		mrs_restore(catrel, tup);
		s->state = "running";
		mrs_save(catrel, tup, NULL);
	}
	close_stream(catrel);
	s->initialized = true;
	after_commit(true);
	return CYCLE_MORE;
}

/* is a processing step due without new rows? */
static bool
step_due(void)
{
	MrsStream  *s = MyStream;
	TimestampTz now = GetCurrentTimestamp();

	if (s->cycle_relevant || s->failing)
		return true;
	if (s->mode == MRS_REDO && !mrs_wal_available())
		return true;
	if (s->mode != MRS_NORMAL)
		return false;
	if ((s->idle_advance && s->rows_pending + s->rows_retained > 0) ||
		TimestampDifferenceExceeds(last_check, now, MRS_CHECK_MS) ||
		mrs_checkpoint_due())
	{
		last_check = now;
		return true;
	}
	return false;
}

/*
 * Step 1 of a cycle.  With workers > 1, the cycle's rows are released
 * every MRS_EARLY_ROWS rows as they are decoded, so that the lanes match
 * while the worker decodes (mr_stream_lanes.c); release order, and so the
 * output, does not depend on where a release falls (mr_stream_part.c).
 */
#define MRS_EARLY_ROWS	10000
#define MRS_EARLY_FIRST	2000	/* the first time: the lanes wait for it */
#define MRS_DECODE_CYCLE_MS	500
static void
decode_and_release(void)
{
	MrsStream  *s = MyStream;
	TimestampTz start = GetCurrentTimestamp();

	for (;;)
	{
		bool		early = s->nlanes > 0 && s->mode == MRS_NORMAL && !s->failing;

		s->decode_upto_rows = !early ? 0 :
			s->cycle_rows + (s->cycle_rows == 0 ? MRS_EARLY_FIRST : MRS_EARLY_ROWS);
		mrs_decode();
		s->decode_upto_rows = 0;
		if (!early || s->failing || s->cycle_rows >= s->batch_size ||
			!mrs_wal_available() || mr_stream_stop_requested() ||
			TimestampDifferenceExceeds(start, GetCurrentTimestamp(), MRS_DECODE_CYCLE_MS))
			return;
		PushActiveSnapshot(GetTransactionSnapshot());
		mrs_release_early();
		mrs_lanes_write_early();	/* what the lanes sent back meanwhile */
		PopActiveSnapshot();
	}
}

static CycleResult
cycle(void)
{
	MrsStream  *s = MyStream;
	Relation	catrel;
	bool		busy;
	HeapTuple	tup;
	TimestampTz now;

	MemoryContextReset(s->cyclecxt);
	if (!s->attempted)
	{
		CycleResult r = start_attempt();

		if (r != CYCLE_MORE)
			return r;
		s->attempted = true;
	}
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (!s->initialized)
		return init_cycle();
	if (s->stopped)
		return stopped_cycle();
	s->cycle_rows = 0;
	mrs_lanes_check();			/* a lane that exited stops the stream */
	now = GetCurrentTimestamp();
	if (mrs_wal_available())
		decode_and_release();
	else
		s->caught_up_at = now;	/* nothing flushed then is unread */
	/* every transaction up to the checkpoint is in the WAL: all are back */
	if (s->mode == MRS_REBUILD && !mrs_wal_available())
		mrs_rebuild_done();
	if (!step_due())
	{
		CommitTransactionCommand();
		after_commit(false);
		return mrs_wal_available() ? CYCLE_MORE : CYCLE_IDLE;
	}
	tup = open_stream(&catrel, &busy);
	if (busy)
	{
		CommitTransactionCommand();
		return CYCLE_BUSY;
	}
	if (tup == NULL)
		return stream_gone();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	check_source_access();
	mrs_check_source();
	process(catrel, tup);
	warn_held_wal(held_wal(), s->max_held_wal, s->state);
	close_stream(catrel);
	after_commit(true);
	if (s->stopped)
		return CYCLE_STOPPED;
	return mrs_wal_available() ? CYCLE_MORE : CYCLE_IDLE;
}

/* ---------- the process ---------- */

/*
 * A worker logs in as the stream's owner; when the owner was dropped or
 * cannot log in (NOLOGIN), that ends the process before it can say why.
 * After MRS_LOGIN_TRIES such workers in a row, the next one logs in as the
 * bootstrap superuser instead, runs nothing of the stream (no user code:
 * only the catalogs), marks the stream failed with the reason, and waits:
 * for the owner to be able to log in again (the stream is then started
 * again) or for the stream to be dropped.
 */
#define MRS_LOGIN_TRIES		3
#define MRS_LOGIN_CHECK_MS	2000

/* why the owner cannot log in, or NULL when it can now */
static char *
owner_problem(void)
{
	MrsStream  *s = MyStream;
	HeapTuple	rtup = SearchSysCache1(AUTHOID, ObjectIdGetDatum(s->owner));
	char	   *why = NULL;

	if (!HeapTupleIsValid(rtup))
		return psprintf("the stream's owner (role %u) was dropped, so its worker cannot log in; "
						"drop the stream", s->owner);
	if (!((Form_pg_authid) GETSTRUCT(rtup))->rolcanlogin)
		why = psprintf("the stream's owner \"%s\" cannot log in (NOLOGIN), so its worker cannot run; "
					   "ALTER ROLE %s LOGIN starts the stream again",
					   NameStr(((Form_pg_authid) GETSTRUCT(rtup))->rolname),
					   quote_identifier(NameStr(((Form_pg_authid) GETSTRUCT(rtup))->rolname)));
	ReleaseSysCache(rtup);
	return why;
}

/*
 * Under the stream's row: set state and error (when state is not NULL, and
 * the stream is not failed already; *wrote says whether it was written),
 * or find the stream gone (false: its slot is dropped then).
 */
static bool
login_mark(const char *state, const char *error, bool *wrote)
{
	Relation	catrel;
	HeapTuple	tup;
	bool		busy;
	int			attnums[2] = {Anum_mrs_state, Anum_mrs_last_error};
	Datum		vals[2];

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	tup = open_stream(&catrel, &busy);
	if (tup == NULL && !busy)
	{
		(void) stream_gone();	/* commits */
		return false;
	}
	if (tup != NULL)
	{
		if (state != NULL && strcmp(mr_stream_row_text(catrel, tup, Anum_mrs_state), "failed") != 0)
		{
			vals[0] = CStringGetTextDatum(state);
			vals[1] = CStringGetTextDatum(error);
			set_columns(catrel, tup, 2, attnums, vals);
			*wrote = true;
		}
		table_close(catrel, NoLock);
		PopActiveSnapshot();
	}
	CommitTransactionCommand();
	return true;
}

static void
login_report(void)
{
	MrsStream  *s = MyStream;
	char	   *why;
	bool		marked = false;
	bool		warned = false;
	int			attnums[2] = {Anum_mrs_state, Anum_mrs_last_error};
	Datum		vals[2];

	BackgroundWorkerInitializeConnectionByOid(s->dboid, InvalidOid, 0);
	pgstat_report_appname(psprintf("match_recognize stream %d (cannot log in)", s->id));
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION);
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (mr_stream_stop_requested())
			proc_exit(0);
		StartTransactionCommand();
		why = owner_problem();
		if (why != NULL)
			why = MemoryContextStrdup(TopMemoryContext, why);
		if (why == NULL && marked)
		{
			/* the owner can log in again: a normal worker takes over */
			Relation	catrel;
			bool		busy;
			HeapTuple	tup = open_stream(&catrel, &busy);

			if (tup != NULL)
			{
				vals[0] = CStringGetTextDatum("starting");
				vals[1] = CStringGetTextDatum("the stream's owner could log in again");
				set_columns(catrel, tup, 2, attnums, vals);
				table_close(catrel, NoLock);
				marked = false;
			}
			if (ActiveSnapshotSet())
				PopActiveSnapshot();
		}
		CommitTransactionCommand();
		if (why == NULL && !marked)
		{
			mr_stream_login_done();
			proc_exit(1);
		}
		if (why != NULL && !login_mark(marked ? NULL : "failed", why, &marked))
			proc_exit(0);		/* the stream is gone, its slot too */
		if (marked && !warned)
		{
			ereport(WARNING,
					(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
					 errmsg("match_recognize stream %d failed: %s", s->id, why)));
			warned = true;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 MRS_LOGIN_CHECK_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

static void
worker_init(void)
{
	MrsStream  *s;

	memset(&stream_state, 0, sizeof(stream_state));
	MyStream = s = &stream_state;
	if (!mr_stream_parse_slot_name(MyBgworkerEntry->bgw_extra, &s->dboid, &s->id, &s->owner))
		elog(ERROR, "invalid slot name \"%s\"", MyBgworkerEntry->bgw_extra);
	strlcpy(s->slot_name, MyBgworkerEntry->bgw_extra, NAMEDATALEN);
	s->state = "starting";

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	/* drop_stream is stopping this stream: leave its slot alone */
	if (!mr_stream_attach(s->slot_name))
		proc_exit(0);
	if (mr_stream_login_begin() >= MRS_LOGIN_TRIES)
		login_report();			/* does not return */
	BackgroundWorkerInitializeConnectionByOid(s->dboid, s->owner, 0);
	mr_stream_login_done();
	pgstat_report_appname(psprintf("match_recognize stream %d", s->id));

	s->cxt = AllocSetContextCreate(TopMemoryContext, "match_recognize stream",
								   ALLOCSET_DEFAULT_SIZES);
	/* rows are freed in any order: an allocation set reuses their chunks */
	s->rowcxt = AllocSetContextCreate(s->cxt, "match_recognize stream rows",
									  ALLOCSET_DEFAULT_SIZES);
	s->cyclecxt = AllocSetContextCreate(s->cxt, "match_recognize stream cycle",
										ALLOCSET_DEFAULT_SIZES);

	/*
	 * Internal statements qualify every name; the query itself is replayed
	 * as create_stream bound it (mrs_setup).
	 */
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("synchronous_commit", "on", PGC_USERSET, PGC_S_SESSION);
}

void
mr_stream_worker_main(Datum arg)
{
	worker_init();
	/* an interval join stream runs in mr_stream_join.c */
	if (mr_stream_join_worker(MyStream->id, MyStream->slot_name))
		proc_exit(0);
	/* a levels stream runs in mr_stream_levels.c */
	if (mr_stream_levels_worker(MyStream->id, MyStream->slot_name))
		proc_exit(0);

	for (;;)
	{
		CycleResult r = CYCLE_IDLE;
		MemoryContext old;
		long		wait_ms;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (mr_stream_stop_requested())
			proc_exit(0);		/* the slot is released at exit */
		old = MemoryContextSwitchTo(MyStream->cyclecxt);
		PG_TRY();
		{
			r = cycle();
		}
		PG_CATCH();
		{
			ErrorData  *edata;
			char	   *msg;
			char	   *message;
			char	   *where = NULL;
			int64		seq;

			MemoryContextSwitchTo(MyStream->cxt);
			edata = CopyErrorData();
			message = msg = edata->detail
				? psprintf("%s (%s)", edata->message, edata->detail)
				: pstrdup(edata->message);
			/* where it happened (a partition, a row: mr_stream_part.c) */
			if (edata->context != NULL)
			{
				StringInfoData buf;
				char	   *c;

				/* one line: the context lines, innermost first, by "; " */
				initStringInfo(&buf);
				for (c = edata->context; *c; c++)
				{
					if (*c == '\n')
						appendStringInfoString(&buf, "; ");
					else
						appendStringInfoChar(&buf, *c);
				}
				where = buf.data;
				msg = psprintf("%s, in %s", msg, where);
			}
			EmitErrorReport();
			FlushErrorState();
			AbortCurrentTransaction();
			/* on_error 'skip': list the row and go on without it */
			if (mrs_deadletter_wanted(edata, &seq))
				msg = skip_row(edata, message, where, msg, seq);
			else if (mrs_deadletter_refusal(edata) != NULL)
				msg = psprintf("%s; %s", msg, mrs_deadletter_refusal(edata));
			if (msg != NULL)
				record_error(msg);
			/* the state in memory may be ahead of what was committed */
			proc_exit(1);
		}
		PG_END_TRY();
		MemoryContextSwitchTo(old);
		if (r == CYCLE_EXIT)
			proc_exit(0);
		if (!MyStream->made_progress && MyStream->initialized && !MyStream->stopped &&
			MyStream->mode == MRS_NORMAL &&
			(r == CYCLE_IDLE || MyStream->backfill_done || MyStream->last_lsn > MyStream->start_lsn))
			progress_made();
		if (r == CYCLE_MORE)
		{
			/*
			 * No wait between busy cycles, so no WL_EXIT_ON_PM_DEATH: a
			 * catch-up must not outlive a postmaster killed with -9 (its
			 * shared memory would keep the server from starting again).
			 */
			if (!PostmasterIsAlive())
				proc_exit(1);
			continue;
		}
		wait_ms = r == CYCLE_STOPPED ? MRS_STOPPED_MS : r == CYCLE_BUSY ? MRS_BUSY_MS : MRS_IDLE_MS;
		pgstat_report_activity(STATE_IDLE, NULL);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 wait_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
